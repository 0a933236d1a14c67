/*
 *	bloombird -- Longest-prefix match over a FIB with its Bloom filter
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
 * prefix at all (&fib_bloom.len_map), then all remaining lengths are hashed
 * and their filter blocks prefetched at once, so the cache misses overlap;
 * then, longest first, each is tested and its chain walked only if the
 * filter admits it, stopping at the first match. The answers are those of the stock loops:
 * fib_route(), net_route() (of a table without a trie) and net_roa_check().
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "filter/filter.h"
#include "filter/data.h"

/* ip6_and(a, ip6_mkmask(len)), inline: it runs once per candidate length */
static inline ip6_addr
lpm_ip6_trim(ip6_addr a, uint len)
{
  for (int i = 0; i < 4; i++)
  {
    int l = (int) len - 32 * i;
    a.addr[i] &= (l >= 32) ? ~0u : (l <= 0) ? 0 : ~0u << (32 - l);
  }
  return a;
}

/* Key of @n trimmed to @len, for IP-like nets (@rdh: the VPN RD's hash) */
static inline u64
lpm_key(const net_addr_union *u, int v6, u64 rdh, uint len)
{
  if (!v6)
    return fib_bloom_key_ip4(ip4_and(u->ip4.prefix, ip4_mkmask(len)), len) ^ rdh;

  ip6_addr px = lpm_ip6_trim(u->ip6.prefix, len);
  return fib_bloom_key_ip6(&px, len) ^ rdh;
}

static inline int
lpm_family(const net_addr *n, int *v6, u64 *rdh)
{
  const net_addr_union *u = (const void *) n;
  *rdh = 0;

  switch (n->type)
  {
  case NET_VPN4:
    *rdh = fib_bloom_key_rd(u->vpn4.rd);
    /* fall through */
  case NET_IP4:
  case NET_ROA4:
  case NET_FLOW4:
    *v6 = 0;
    return 1;

  case NET_VPN6:
    *rdh = fib_bloom_key_rd(u->vpn6.rd);
    /* fall through */
  case NET_IP6:
  case NET_ROA6:
  case NET_FLOW6:
    *v6 = 1;
    return 1;

  default:
    return 0;
  }
}

/*
 *	Guards
 */

static inline u32
guard_index(const struct fib_guard *g, const net_addr_union *u, int v6, u64 rdh)
{ return lpm_key(u, v6, rdh, g->len) >> (64 - g->bits); }

static void
guard_init(struct fib *f, struct fib_guard *g, uint len, u32 keys)
{
  uint bits = 8;
  while ((bits < 16) && ((1U << bits) < 4 * keys))
    bits++;

  g->len = len;
  g->bits = bits;
  g->cnt = mb_allocz(f->fib_pool, sizeof(u16) << bits);
}

void
fib_lpm_guards_free(struct fib_bloom *b)
{
  for (uint i = 0; i < FIB_GUARDS; i++)
  {
    if (b->guard[i].cnt)
      mb_free(b->guard[i].cnt);
    b->guard[i] = (struct fib_guard) {};
  }
}

void
fib_lpm_guards_account(struct fib_bloom *b, const net_addr *a, int add)
{
  const net_addr_union *u = (const void *) a;
  int v6;
  u64 rdh;

  if (!lpm_family(a, &v6, &rdh))
    return;

  for (uint i = 0; i < FIB_GUARDS; i++)
  {
    struct fib_guard *g = &b->guard[i];
    if (!g->cnt || (a->pxlen < g->len))
      continue;

    u16 *c = &g->cnt[guard_index(g, u, v6, rdh)];
    if (*c == 0xffff)
      continue;			/* Sticky: may undercount, never drops to 0 */

    if (add)
      (*c)++;
    else
    {
      ASSERT_DIE(*c > 0);
      (*c)--;
    }
  }
}

/**
 * fib_lpm_guards_init - choose guard lengths for a filter being rebuilt
 * @f: FIB
 *
 * The head guard sits at the shortest used length (if it is at least
 * %FIB_GUARD_MIN_HEAD), the split guard at %FIB_LPM_SPLIT4 or
 * %FIB_LPM_SPLIT6 (between the two others), the tail guard at the shortest
 * length above which at most 1/32 of the entries lie. Their counters start empty; the rebuild walk
 * accounts every node.
 */
void
fib_lpm_guards_init(struct fib *f)
{
  struct fib_bloom *b = f->bloom;
  fib_lpm_guards_free(b);

  if (!net_val_match(f->addr_type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4 | NB_IP6 | NB_VPN6 | NB_ROA6 | NB_FLOW6))
    return;

  int head = -1, tail = -1;
  u32 above = 0;
  for (int l = FIB_BLOOM_MAX_PXLEN; l >= 0; l--)
  {
    if (!b->len_count[l])
      continue;

    if ((above + b->len_count[l]) * 32ULL <= f->entries)
      tail = l;
    above += b->len_count[l];
    head = l;
  }

  if (head < 0)
    return;

  /* At a short head (IPv4 /8) nearly every root is routed: not worth a guard */
  if (head >= FIB_GUARD_MIN_HEAD)
    guard_init(f, &b->guard[FIB_GUARD_HEAD], head, f->entries);

  int split = net_val_match(f->addr_type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4) ? FIB_LPM_SPLIT4 : FIB_LPM_SPLIT6;
  if ((split > head) && ((tail < 0) || (split < tail)))
  {
    u32 keys = 0;
    for (uint l = split; l <= FIB_BLOOM_MAX_PXLEN; l++)
      keys += b->len_count[l];
    if (keys)
      guard_init(f, &b->guard[FIB_GUARD_SPLIT], split, keys);
  }

  if (tail > head)
  {
    u32 keys = 0;
    for (uint l = tail; l <= FIB_BLOOM_MAX_PXLEN; l++)
      keys += b->len_count[l];
    guard_init(f, &b->guard[FIB_GUARD_TAIL], tail, keys);
  }
}

/* Chain hash of @u trimmed to @len (net_hash()); fib_slot() gives its bucket */
static inline u32
lpm_chain_hash(const net_addr_union *u, int v6, uint len)
{
  switch (u->n.type)
  {
  case NET_VPN4:
  case NET_VPN6:
    {
      net_addr_union x;
      net_copy(&x.n, &u->n);
      if (!v6)
	x.vpn4.prefix = ip4_and(x.vpn4.prefix, ip4_mkmask(len));
      else
	x.vpn6.prefix = lpm_ip6_trim(x.vpn6.prefix, len);
      x.n.pxlen = len;
      return net_hash(&x.n);
    }

  default:
    if (!v6)
      return px4_hash(ip4_and(u->ip4.prefix, ip4_mkmask(len)), len);
    return px6_hash(lpm_ip6_trim(u->ip6.prefix, len), len);
  }
}

/**
 * fib_lpm_supported - can the accelerated LPM walk answer for @n?
 * @f: FIB
 * @n: network asked about
 *
 * Only with the filter machinery enabled, for IP-like nets (IP, VPN, ROA,
 * flow) within their type's length range. Anything else is answered by
 * stock's own loops, so that even an out-of-range length gets stock's answer.
 */
int
fib_lpm_supported(const struct fib *f, const net_addr *n)
{
  return (f->bloom->state != FIB_BLOOM_OFF) &&
    net_val_match(n->type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4 | NB_IP6 | NB_VPN6 | NB_ROA6 | NB_FLOW6) &&
    (n->pxlen <= net_max_prefix_length[n->type]);
}

static inline int
lpm_test(struct fib_bloom *b, struct fib_lpm *s, uint k)
{
  b->queries++;
  if (fib_bloom_test_hash(b, s->hash[k]))
    return 1;

  b->negatives++;
  b->pol_miss++;
  return 0;
}

/**
 * fib_lpm_init - start a longest-prefix match walk
 * @f: FIB (of @n's type, or the ROA type matching an IP @n)
 * @n: network whose covering prefixes are looked for (fib_lpm_supported())
 * @s: walk state
 * @ahead: admitted candidates to test and prefetch now
 * @lo: shortest length to consider
 *
 * Candidates are the lengths not longer than @n at which @f holds any
 * prefix, longest first, cut by the guards. With a filter, their keys are
 * hashed and their blocks prefetched; then candidates are tested until
 * @ahead are admitted (without a filter: the first @ahead), and the buckets
 * of those are prefetched, then their first nodes. Each stage's cache
 * misses overlap; a caller that stops at the first answer asks for one or
 * two, a caller that needs every covering prefix (ROA) for all.
 */
void
fib_lpm_init(struct fib *f, const net_addr *n, struct fib_lpm *s, uint ahead, uint lo)
{
  struct fib_bloom *b = f->bloom;
  const net_addr_union *u = (const void *) n;
  int v6;
  u64 rdh;

  fib_bloom_tick(b);

  s->n = s->i = s->tested = 0;
  s->active = fib_bloom_active(b);

  if (!lpm_family(n, &v6, &rdh))
    return;

  /* A zero guard counter rules out every length from the guard's up */
  int top = n->pxlen;
  for (uint i = 0; i < FIB_GUARDS; i++)
  {
    struct fib_guard *g = &b->guard[i];
    if (g->cnt && (top >= (int) g->len) && !g->cnt[guard_index(g, u, v6, rdh)])
      top = (int) g->len - 1;
  }

  if (top < (int) lo)
    return;

  for (int w = top >> 6; w >= (int) (lo >> 6); w--)
  {
    u64 m = b->len_map[w];
    if (w == (top >> 6))
      m &= (2ULL << (top & 63)) - 1;
    if (w == (int) (lo >> 6))
      m &= ~((1ULL << (lo & 63)) - 1);

    while (m)
    {
      uint bit = 63 - __builtin_clzll(m);
      uint len = w * 64 + bit;
      m &= ~(1ULL << bit);

      if (s->active)
      {
	s->hash[s->n] = lpm_key(u, v6, rdh, len);
	__builtin_prefetch(fib_bloom_qblock(b, s->hash[s->n]));
      }
      s->len[s->n++] = len;
    }
  }

  /* Test ahead; prefetch the admitted candidates' buckets, then their nodes */
  uint adm = 0, k;
  for (k = 0; (k < s->n) && (adm < ahead); k++)
  {
    s->adm[k] = !s->active || lpm_test(b, s, k);
    if (s->adm[k])
    {
      s->chash[k] = lpm_chain_hash(u, v6, s->len[k]);
      __builtin_prefetch(fib_slot(f, s->chash[k]));
      adm++;
    }
  }
  s->tested = k;

  for (k = 0; k < s->tested; k++)
    if (s->adm[k])
      __builtin_prefetch(*fib_slot(f, s->chash[k]));
}

/**
 * fib_lpm_next - next candidate length of a walk
 * @f: FIB
 * @n: the network of fib_lpm_init()
 * @s: walk state
 *
 * Returns the next length the filter admits (every candidate without a
 * filter), longest first, or -1 when there is none. fib_lpm_chain() then
 * gives the first node of its bucket.
 */
int
fib_lpm_next(struct fib *f, const net_addr *n, struct fib_lpm *s)
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

    if (s->active && !lpm_test(f->bloom, s, k))
      continue;

    int v6 = 0;
    u64 rdh;
    lpm_family(n, &v6, &rdh);
    s->chash[k] = lpm_chain_hash((const void *) n, v6, s->len[k]);
    return s->len[k];
  }

  return -1;
}

/* First node of the bucket of the length fib_lpm_next() returned last */
static inline struct fib_node *
fib_lpm_chain(struct fib *f, const struct fib_lpm *s)
{ return *fib_slot(f, s->chash[s->i - 1]); }

/* @x := @n trimmed to @len (host bits cleared, as the stock loops do) */
static inline void
lpm_trim(net_addr_union *x, const net_addr *n, uint len)
{
  net_copy(&x->n, n);
  if (net_val_match(n->type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4))
    x->ip4.prefix = ip4_and(x->ip4.prefix, ip4_mkmask(len));
  else
    x->ip6.prefix = lpm_ip6_trim(x->ip6.prefix, len);
  x->n.pxlen = len;
}

/* The node for @x in the chain of the current candidate; counts misses */
static inline struct fib_node *
lpm_find(struct fib *f, struct fib_lpm *s, const net_addr *x)
{
  for (struct fib_node *e = fib_lpm_chain(f, s); e; e = e->next)
    if (net_equal(e->addr, x))
      return e;

  struct fib_bloom *b = f->bloom;
  if (s->active)
    b->false_pos++;
  else
    fib_bloom_probe_missed(b);

  return NULL;
}

/* fib_route() for fib_lpm_supported() nets */
void *
fib_bloom_route(struct fib *f, const net_addr *n)
{
  struct fib_lpm s;
  net_addr_union x;
  int len;

  fib_lpm_init(f, n, &s, 1, 0);
  while ((len = fib_lpm_next(f, n, &s)) >= 0)
  {
    lpm_trim(&x, n, len);

    struct fib_node *e = lpm_find(f, &s, &x.n);
    if (e)
      return fib_node_to_user(f, e);
  }

  return NULL;
}

/* The filter walk over lengths @lo and up: the longest net with a valid route */
static net *
lpm_route_valid(rtable *tab, const net_addr *n, uint lo)
{
  struct fib_lpm s;
  net_addr_union x;
  int len;

  fib_lpm_init(&tab->fib, n, &s, 2, lo);
  while ((len = fib_lpm_next(&tab->fib, n, &s)) >= 0)
  {
    lpm_trim(&x, n, len);

    struct fib_node *e = lpm_find(&tab->fib, &s, &x.n);
    if (!e)
      continue;

    net *r = fib_node_to_user(&tab->fib, e);
    if (rte_is_valid(r->routes))
      return r;
  }

  return NULL;
}

/**
 * net_route_bloom - net_route() through the FIB's filter
 * @tab: table
 * @n: network (IP or VPN)
 * @done: set to 0 when the stock code must answer: @n of a type this does
 * not handle (SADR) or out of its length range, `bloom off', or an IP
 * query on a table with a trie
 *
 * Returns the longest-prefix net covering @n that has a valid route, the
 * same as stock net_route() without the table's trie.
 *
 * With a trie, the trie leads, for both families: stock's trie walk is
 * the path. Counted by callgrind on the tier-1 tables (tests/bench/count),
 * a filter walk below an IPv6 trie's top cost four times the trie walk's
 * instructions and twice its L1 misses for addresses inside prefixes, and
 * an IPv4 trie (at most eight 4-bit nodes to a /32) measured cheaper than
 * any filter walk in wall time too; so a trie table's net_route() is
 * stock's code, not merely no slower. Never inlined: its walk state (some
 * 2 KB) would give net_route()'s trie walk a frame ten times stock's.
 */
__attribute__((noinline)) net *
net_route_bloom(rtable *tab, const net_addr *n, int *done)
{
  struct fib *f = &tab->fib;

  if (!fib_lpm_supported(f, n) || !net_val_match(n->type, NB_IP | NB_VPN) ||
      (tab->trie && net_val_match(n->type, NB_IP)))
  {
    *done = 0;
    return NULL;
  }

  *done = 1;
  return lpm_route_valid(tab, n, 0);
}

/**
 * net_roa_check_bloom - net_roa_check() through the FIB's filter
 * @tab: ROA table
 * @n: IP network to check
 * @asn: origin AS, 0 if unknown
 * @done: set to 0 when table and network types do not pair, @n is out of
 * its length range, the table has a trie, or with `bloom off'
 *
 * RFC 6483 validation with the same answers as stock net_roa_check(): the
 * ROA FIB's filter is keyed by prefix and length alone, so it can rule out
 * lengths without knowing the ROAs' ASN or max length. Every covering length
 * may hold a candidate ROA, so all admitted ones are prefetched at once.
 */
int
net_roa_check_bloom(rtable *tab, const net_addr *n, u32 asn, int *done)
{
  int v4 = (tab->addr_type == NET_ROA4) && (n->type == NET_IP4);
  int v6 = (tab->addr_type == NET_ROA6) && (n->type == NET_IP6);
  const net_addr_union *u = (const void *) n;

  /*
   * A ROA table with a trie keeps stock's trie walk: with a real VRP set
   * most queries have no covering ROA and the walk ends in the hot top of
   * the trie, which the rig measured cheaper than testing every length.
   */
  if ((!v4 && !v6) || tab->trie || !fib_lpm_supported(&tab->fib, n))
  {
    *done = 0;
    return ROA_UNKNOWN;
  }

  *done = 1;

  struct fib_lpm s;
  int anything = 0, len;

  fib_lpm_init(&tab->fib, n, &s, FIB_BLOOM_MAX_PXLEN + 1, 0);
  while ((len = fib_lpm_next(&tab->fib, n, &s)) >= 0)
  {
    net_addr_union roa0 = {};
    int found = 0;

    if (v4)
      roa0.roa4 = NET_ADDR_ROA4(ip4_and(u->ip4.prefix, ip4_mkmask(len)), len, 0, 0);
    else
      roa0.roa6 = NET_ADDR_ROA6(lpm_ip6_trim(u->ip6.prefix, len), len, 0, 0);

    for (struct fib_node *fn = fib_lpm_chain(&tab->fib, &s); fn; fn = fn->next)
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
	tab->fib.bloom->false_pos++;
      else
	fib_bloom_probe_missed(tab->fib.bloom);
    }
  }

  return anything ? ROA_INVALID : ROA_UNKNOWN;
}
