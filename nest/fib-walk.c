/*
 *	bloombird -- The longest-prefix walk over a FIB's filter and guards
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Longest-prefix match with FIB Bloom filters
 *
 * Stock BIRD finds the longest matching prefix by one fib_find() per prefix
 * length, from the longest down; an IPv6 lookup may walk 100 hash chains.
 * Here the candidate lengths are first restricted to those that hold any
 * prefix at all (&fib_lengths), then to those at which the query's
 * own region holds prefixes (the guards: a head counter, and a mask of
 * lengths per region for each band of eight lengths; IPv4 lengths below 16
 * come exactly from the cover table and need no filter test; see
 * fib-guard.h), then all remaining lengths are hashed and their filter
 * blocks prefetched at once, so the cache misses overlap; then, longest
 * first, each is tested and its chain walked only if the filter admits it,
 * stopping at the first match. Each of these steps costs little and removes most of what is left
 * for the next: a mask read rules out up to eight lengths, a filter test
 * one chain walk. The answers are those of the stock code: fib_route(),
 * net_route() and net_roa_check(), with or without the table's trie.
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "nest/fib-walk.h"
#include "filter/filter.h"
#include "filter/data.h"

/*
 * Untested candidates whose buckets fib_walk_init() prefetches with their
 * filter blocks: the first one or two are usually admitted, so their
 * buckets are worth fetching early; the rest are mostly false, and
 * fetching their buckets too (as ROA checks once did for all candidates)
 * costs more than it saves.
 */
#define FIB_WALK_PRE	2

/* Lengths of band @j present in the FIB, at most @top and at least @lo */
static inline uint
band_lengths(const struct fib_lengths *l, int j, int top, uint lo)
{
  uint m = fib_lengths_octet(l, j);
  if (j == (top >> FIB_BAND_SHIFT))
    m &= (2U << (top & 7)) - 1;
  if (j == (int) (lo >> FIB_BAND_SHIFT))
    m &= ~((1U << (lo & 7)) - 1);
  return m;
}

/* Chain hash of @u trimmed to @len (net_hash()); fib_slot() gives its bucket */
static inline u32
walk_chain_hash(const net_addr_union *u, int v6, uint len)
{
  switch (u->n.type)
  {
  case NET_VPN4:
  case NET_VPN6:
    {
      net_addr_union x;
      net_copy(&x.n, &u->n);
      if (!v6)
	x.vpn4.prefix = ip4_and(x.vpn4.prefix, fib_key_mask4(len));
      else
	x.vpn6.prefix = fib_key_ip6_trim(x.vpn6.prefix, len);
      x.n.pxlen = len;
      return net_hash(&x.n);
    }

  default:
    if (!v6)
      return px4_hash(ip4_and(u->ip4.prefix, fib_key_mask4(len)), len);
    return px6_hash(fib_key_ip6_trim(u->ip6.prefix, len), len);
  }
}

/**
 * fib_walk_supported - can the accelerated LPM walk answer for @n?
 * @f: FIB
 * @n: network asked about
 *
 * Only with the filter machinery enabled, for IP-like nets (IP, VPN, ROA,
 * flow) within their type's length range and without host bits. Anything
 * else is answered by stock's own loops, so that even an out-of-range
 * length or a net with host bits gets stock's answer.
 */
int
fib_walk_supported(const struct fib *f, const net_addr *n)
{
  return (f->bloom->state != FIB_BLOOM_OFF) &&
    net_val_match(n->type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4 | NB_IP6 | NB_VPN6 | NB_ROA6 | NB_FLOW6) &&
    (n->pxlen <= net_max_prefix_length[n->type]) && fib_key_canonical(n);
}

/**
 * fib_walk_init - start a longest-prefix match walk
 * @f: FIB (of @n's type, or the ROA type matching an IP @n)
 * @n: network whose covering prefixes are looked for (fib_walk_supported())
 * @s: walk state
 * @ahead: admitted candidates to test and prefetch now
 * @lo: shortest length to consider
 *
 * Candidates are the lengths not longer than @n at which @f holds any
 * prefix, longest first, none if the head guard says so, and within each
 * band of lengths only those its mask for @n's region admits (all masks
 * read at once), then the cover table's lengths, which are admitted
 * without a test (@s->exact on). With a filter, the others' keys are
 * hashed and their blocks prefetched, and so are the buckets of the
 * candidates among the first MIN(@ahead, %FIB_WALK_PRE), and of the exact
 * ones among the first @ahead; then candidates are tested until @ahead are
 * admitted (without a filter: the first @ahead), and the buckets of those
 * are prefetched, then their first nodes. Each stage's cache
 * misses overlap; a caller that stops at the first answer asks for one or
 * two, a caller that needs every covering prefix (ROA) for all.
 */
void
fib_walk_init(struct fib *f, const net_addr *n, struct fib_walk *s, uint ahead, uint lo)
{
  struct fib_bloom *b = f->bloom;
  const net_addr_union *u = (const void *) n;
  int v6;
  u64 rdh;

  fib_bloom_tick(b);

  s->n = s->i = s->tested = s->exact = 0;
  s->active = fib_bloom_active(b);

  if (!fib_key_family(n, &v6, &rdh))
    return;

  /* A zero head counter rules out every length from its own up; a shorter
   * prefix added since the guard was built is not counted by it */
  int top = n->pxlen;
  struct fib_guard *g = &b->guards.head;
  if (g->cnt && (top >= (int) g->len) && !g->cnt[fib_guard_index(g, u, v6, rdh)])
    top = (int) g->len - 1;

  if (top < (int) lo)
    return;

  /* IPv4 lengths below 16 from the cover table, if there is one */
  const u16 *cv = NULL;
  int jlo = lo >> FIB_BAND_SHIFT;
  if (b->guards.cover && fib_cover_type(n->type))
  {
    cv = &b->guards.cover[ip4_to_u32(u->ip4.prefix) >> FIB_COVER_LENGTHS];
    __builtin_prefetch(cv);
    jlo = MAX(jlo, FIB_COVER_LENGTHS >> FIB_BAND_SHIFT);
  }

  /* Buckets prefetched before the filter tests: at most %FIB_WALK_PRE untested */
  uint pre = MIN(ahead, FIB_WALK_PRE);

  /* Bands with lengths to consider, longest first; their masks' slots prefetched */
  const u16 *slot[FIB_BANDS];
  u8 band[FIB_BANDS], mask[FIB_BANDS], nb = 0;
  for (int j = top >> FIB_BAND_SHIFT; j >= jlo; j--)
  {
    uint m = band_lengths(&b->lengths, j, top, lo);
    if (!m)
      continue;

    const struct fib_band *bd = &b->guards.band[j];
    slot[nb] = bd->slot ? &bd->slot[fib_band_index(bd, j, u, v6, rdh)] : NULL;
    if (slot[nb])
      __builtin_prefetch(slot[nb]);
    band[nb] = j;
    mask[nb++] = m;
  }

  /* The lengths their masks admit: hashed, their filter blocks prefetched */
  for (uint i = 0; i < nb; i++)
  {
    uint m = mask[i];
    if (slot[i])
      m &= *slot[i];

    while (m)
    {
      uint bit = 31 - __builtin_clz(m);
      uint len = (band[i] << FIB_BAND_SHIFT) + bit;
      m &= ~(1U << bit);

      if (s->active)
      {
	s->hash[s->n] = fib_key_trimmed(u, v6, rdh, len);
	__builtin_prefetch(fib_filter_qblock(&b->filter, s->hash[s->n]));
      }

      /* The first candidates' buckets at once too: not after the test */
      if (s->n < pre)
      {
	s->chash[s->n] = walk_chain_hash(u, v6, len);
	__builtin_prefetch(fib_slot(f, s->chash[s->n]));
      }
      s->len[s->n++] = len;
    }
  }

  /* The cover table's lengths exist: no filter key, no test */
  s->exact = s->n;
  if (cv && (lo < FIB_COVER_LENGTHS))
  {
    uint m = *cv & ((2U << MIN(top, FIB_COVER_LENGTHS - 1)) - 1) & ~((1U << lo) - 1);
    while (m)
    {
      uint len = 31 - __builtin_clz(m);
      m &= ~(1U << len);

      if (s->n < ahead)
      {
	s->chash[s->n] = walk_chain_hash(u, v6, len);
	__builtin_prefetch(fib_slot(f, s->chash[s->n]));
      }
      s->len[s->n++] = len;
    }
  }

  /* Test ahead (buckets of admitted candidates past the first @ahead too),
   * then prefetch the admitted candidates' first nodes */
  uint adm = 0, k;
  for (k = 0; (k < s->n) && (adm < ahead); k++)
  {
    s->adm[k] = (k >= s->exact) || !s->active || fib_bloom_test(b, s->hash[k]);
    if (s->adm[k])
    {
      if (k >= ((k < s->exact) ? pre : ahead))
      {
	s->chash[k] = walk_chain_hash(u, v6, s->len[k]);
	__builtin_prefetch(fib_slot(f, s->chash[k]));
      }
      adm++;
    }
  }
  s->tested = k;

  for (k = 0; k < s->tested; k++)
    if (s->adm[k])
      __builtin_prefetch(*fib_slot(f, s->chash[k]));
}

/**
 * fib_walk_next - next candidate length of a walk
 * @f: FIB
 * @n: the network of fib_walk_init()
 * @s: walk state
 *
 * Returns the next length the filter admits (a cover table's length
 * without a test; every candidate without a filter), longest first, or -1
 * when there is none. fib_walk_chain() then
 * gives the first node of its bucket.
 */
int
fib_walk_next(struct fib *f, const net_addr *n, struct fib_walk *s)
{
  while (s->i < s->n)
  {
    uint k = s->i++;
    if (k < s->tested)
    {
      if (s->adm[k])
	return s->len[k];
      continue;
    }

    if (s->active && (k < s->exact) && !fib_bloom_test(f->bloom, s->hash[k]))
      continue;

    int v6 = 0;
    u64 rdh;
    fib_key_family(n, &v6, &rdh);
    s->chash[k] = walk_chain_hash((const void *) n, v6, s->len[k]);
    return s->len[k];
  }

  return -1;
}

/* First node of the bucket of the length fib_walk_next() returned last */
static inline struct fib_node *
fib_walk_chain(struct fib *f, const struct fib_walk *s)
{ return *fib_slot(f, s->chash[s->i - 1]); }

/* @x := @n trimmed to @len (host bits cleared, as the stock loops do) */
static inline void
walk_trim(net_addr_union *x, const net_addr *n, uint len)
{
  net_copy(&x->n, n);
  if (net_val_match(n->type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4))
    x->ip4.prefix = ip4_and(x->ip4.prefix, fib_key_mask4(len));
  else
    x->ip6.prefix = fib_key_ip6_trim(x->ip6.prefix, len);
  x->n.pxlen = len;
}

/* The node for @x in the chain of the current candidate; counts misses */
static inline struct fib_node *
walk_find(struct fib *f, struct fib_walk *s, const net_addr *x)
{
  for (struct fib_node *e = fib_walk_chain(f, s); e; e = e->next)
    if (net_equal(e->addr, x))
      return e;

  struct fib_bloom *b = f->bloom;
  if (s->active)
    b->filter.false_pos++;
  else
    fib_bloom_probe_missed(b);

  return NULL;
}

/**
 * fib_walk_route - fib_route() through the filter
 * @f: FIB
 * @n: net of a type fib_walk_supported() accepts
 *
 * Returns the longest-prefix node covering @n, or NULL: the same answer
 * as stock's fib_route(), found by testing only the candidate lengths that
 * the per-length counts, the guards and the filter leave. Called through
 * fib_accel_route() (fib-accel.c).
 */
void *
fib_walk_route(struct fib *f, const net_addr *n)
{
  struct fib_walk s;
  net_addr_union x;
  int len;

  fib_walk_init(f, n, &s, 1, 0);
  while ((len = fib_walk_next(f, n, &s)) >= 0)
  {
    walk_trim(&x, n, len);

    struct fib_node *e = walk_find(f, &s, &x.n);
    if (e)
      return fib_node_to_user(f, e);
  }

  return NULL;
}

/* The filter walk over lengths @lo and up: the longest net with a valid route */
static net *
walk_route_valid(rtable *tab, const net_addr *n, uint lo)
{
  struct fib_walk s;
  net_addr_union x;
  int len;

  fib_walk_init(&tab->fib, n, &s, 2, lo);
  while ((len = fib_walk_next(&tab->fib, n, &s)) >= 0)
  {
    walk_trim(&x, n, len);

    struct fib_node *e = walk_find(&tab->fib, &s, &x.n);
    if (!e)
      continue;

    net *r = fib_node_to_user(&tab->fib, e);
    if (rte_is_valid(r->routes))
      return r;
  }

  return NULL;
}

/**
 * net_route_walk - net_route() through the FIB's filter
 * @tab: table
 * @n: network (IP or VPN)
 * @done: set to 0 when the stock code must answer: @n of a type this does
 * not handle (SADR), out of its length range or with host bits set,
 * `bloom off', or an IP
 * query on a table with a trie and no filter
 *
 * Returns the longest-prefix net covering @n that has a valid route, the
 * same as stock net_route() with or without the table's trie.
 *
 * A table with a trie takes this walk only while its FIB has a filter
 * (fib_bloom_trie_leads()): with the guards' length masks it measured
 * faster than stock's trie walk for addresses inside prefixes and random
 * ones, both families; without the masks it was not.
 * Never inlined: its walk state (some 2 KB) would give net_route()'s trie
 * walk a frame ten times stock's.
 */
__attribute__((noinline)) net *
net_route_walk(rtable *tab, const net_addr *n, int *done)
{
  struct fib *f = &tab->fib;

  if (!fib_walk_supported(f, n) || !net_val_match(n->type, NB_IP | NB_VPN) ||
      (tab->trie && net_val_match(n->type, NB_IP) && !fib_bloom_active(f->bloom)))
  {
    *done = 0;
    return NULL;
  }

  *done = 1;
  return walk_route_valid(tab, n, 0);
}

/**
 * net_roa_check_walk - net_roa_check() through the FIB's filter
 * @tab: ROA table
 * @n: IP network to check
 * @asn: origin AS, 0 if unknown
 * @done: set to 0 when table and network types do not pair, @n is out of
 * its length range or has host bits set, the table has a trie and no
 * filter, or with `bloom off'
 *
 * RFC 6483 validation with the same answers as stock net_roa_check(): the
 * ROA FIB's filter is keyed by prefix and length alone, so it can rule out
 * lengths without knowing the ROAs' ASN or max length. Every covering length
 * may hold a candidate ROA, so all admitted ones are prefetched at once.
 * A table's ROA FIB has a ROA index instead (fib-roa.c), asked first by
 * rt_accel_roa_check(): this walk serves ROA FIBs without one (a table
 * whose index was given up; other users of ROA-typed FIBs).
 */
int
net_roa_check_walk(rtable *tab, const net_addr *n, u32 asn, int *done)
{
  int v4 = (tab->addr_type == NET_ROA4) && (n->type == NET_IP4);
  int v6 = (tab->addr_type == NET_ROA6) && (n->type == NET_IP6);
  const net_addr_union *u = (const void *) n;

  /* A ROA table with a trie and no filter: stock's trie walk (fib_bloom_trie_leads()) */
  if ((!v4 && !v6) || (tab->trie && !fib_bloom_active(tab->fib.bloom)) || !fib_walk_supported(&tab->fib, n))
  {
    *done = 0;
    return ROA_UNKNOWN;
  }

  *done = 1;

  struct fib_walk s;
  int anything = 0, len;

  fib_walk_init(&tab->fib, n, &s, FIB_MAX_PXLEN + 1, 0);
  while ((len = fib_walk_next(&tab->fib, n, &s)) >= 0)
  {
    net_addr_union roa0 = {};
    int found = 0;

    if (v4)
      roa0.roa4 = NET_ADDR_ROA4(ip4_and(u->ip4.prefix, fib_key_mask4(len)), len, 0, 0);
    else
      roa0.roa6 = NET_ADDR_ROA6(fib_key_ip6_trim(u->ip6.prefix, len), len, 0, 0);

    for (struct fib_node *fn = fib_walk_chain(&tab->fib, &s); fn; fn = fn->next)
    {
      net *r = fib_node_to_user(&tab->fib, fn);
      const net_addr_union *roa = (const void *) fn->addr;

      if (v4 ? !net_equal_prefix_roa4(&roa->roa4, &roa0.roa4)
	     : !net_equal_prefix_roa6(&roa->roa6, &roa0.roa6))
	continue;

      found = 1;
      if (!rte_is_valid(r->routes))
	continue;

      anything = 1;
      u32 roa_asn = v4 ? roa->roa4.asn : roa->roa6.asn;
      u32 roa_max = v4 ? roa->roa4.max_pxlen : roa->roa6.max_pxlen;
      if (asn && (roa_asn == asn) && (roa_max >= n->pxlen))
	return ROA_VALID;
    }

    if (!found)
    {
      if (s.active)
	tab->fib.bloom->filter.false_pos++;
      else
	fib_bloom_probe_missed(tab->fib.bloom);
    }
  }

  return anything ? ROA_INVALID : ROA_UNKNOWN;
}
