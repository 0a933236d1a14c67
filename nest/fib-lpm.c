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
 * prefix at all (&fib_bloom.len_map), then to those at which the query's
 * own region holds prefixes (the guards: a head counter, and a mask of
 * lengths per region for each band of eight lengths; IPv4 lengths below 16
 * come exactly from the cover table and need no filter test; see
 * fib-bloom.h), then all remaining lengths are hashed and their filter
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
#include "nest/fib-roa.h"
#include "filter/filter.h"
#include "filter/data.h"

/* ip4_mkmask(len) without its branch (u32_mkmask() is out of line): per candidate */
static inline ip4_addr
lpm_mask4(uint len)
{ return ip4_from_u32((u32) (~0ULL << (32 - len))); }

/* ip6_and(a, ip6_mkmask(len)) as two masks, no loop: it runs per candidate */
static inline ip6_addr
lpm_ip6_trim(ip6_addr a, uint len)
{
  u64 hi = (((u64) a.addr[0] << 32) | a.addr[1]) & fib_lpm_mask6_hi(len);
  u64 lo = (((u64) a.addr[2] << 32) | a.addr[3]) & fib_lpm_mask6_lo(len);
  return ip6_build(hi >> 32, (u32) hi, lo >> 32, (u32) lo);
}

/* Key of @n trimmed to @len, for IP-like nets (@rdh: the VPN RD's hash) */
static inline u64
lpm_key(const net_addr_union *u, int v6, u64 rdh, uint len)
{
  if (!v6)
    return fib_bloom_key_ip4(ip4_and(u->ip4.prefix, lpm_mask4(len)), len) ^ rdh;

  /* fib_bloom_key_ip6() of the trimmed address: its halves as loaded, masked */
  u64 hi, lo;
  memcpy(&hi, &u->ip6.prefix.addr[0], sizeof(hi));
  memcpy(&lo, &u->ip6.prefix.addr[2], sizeof(lo));
  return fib_bloom_key_ip6_halves(hi & fib_bloom_ip6_order(fib_lpm_mask6_hi(len)),
				  lo & fib_bloom_ip6_order(fib_lpm_mask6_lo(len)), len) ^ rdh;
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

/* Slot of @u's region in band @j (its first 8j bits, j > 0) */
static inline u32
band_index(const struct fib_band *bd, uint j, const net_addr_union *u, int v6, u64 rdh)
{
  uint base = j << FIB_BAND_SHIFT;
  if (bd->direct)
    return (v6 ? u->ip6.prefix.addr[0] : ip4_to_u32(u->ip4.prefix)) >> (32 - base);

  return (u32) lpm_key(u, v6, rdh, base) & ((1U << bd->bits) - 1);
}

/* The slot of @a's own region in its band, NULL if the band has no masks */
static inline u16 *
band_slot(struct fib_bloom *b, const net_addr *a, int v6, u64 rdh)
{
  uint j = a->pxlen >> FIB_BAND_SHIFT;
  struct fib_band *bd = &b->band[j];
  return bd->slot ? &bd->slot[band_index(bd, j, (const void *) a, v6, rdh)] : NULL;
}

/* Lengths of band @j present in the FIB (len_map), at most @top and at least @lo */
static inline uint
band_lengths(const struct fib_bloom *b, int j, int top, uint lo)
{
  uint m = (b->len_map[j >> 3] >> ((j & 7) << FIB_BAND_SHIFT)) & 0xff;
  if (j == (top >> FIB_BAND_SHIFT))
    m &= (2U << (top & 7)) - 1;
  if (j == (int) (lo >> FIB_BAND_SHIFT))
    m &= ~((1U << (lo & 7)) - 1);
  return m;
}

/*
 *	Cover table (IPv4 lengths below 16, see fib-bloom.h)
 */

static inline int
cover_type(uint type)
{ return (type == NET_IP4) || (type == NET_ROA4); }

/* Set or clear @a's length in the entries of all the /16s it covers (for
 * nets without host bits: tables hold no others, rte_validate() rejects
 * them, but a FIB takes any) */
static void
cover_mark(u16 *cv, const net_addr *a, int on)
{
  uint len = a->pxlen;
  u32 n = 1U << (FIB_COVER_LENGTHS - len);
  u32 first = (ip4_to_u32(((const net_addr_ip4 *) a)->prefix) >> FIB_COVER_LENGTHS) & ~(n - 1);
  u16 bit = 1U << len;

  if (on)
    for (u32 i = 0; i < n; i++)
      cv[first + i] |= bit;
  else
    for (u32 i = 0; i < n; i++)
      cv[first + i] &= ~bit;
}

/* Does another node of @f have @a's prefix? (ROA tables: one node per ROA) */
static int
cover_shared(struct fib *f, const net_addr *a)
{
  if (f->addr_type != NET_ROA4)
    return 0;

  for (struct fib_node *e = *fib_slot(f, net_hash(a)); e; e = e->next)
    if ((e->addr != a) && net_equal_prefix_roa4((const void *) e->addr, (const void *) a))
      return 1;

  return 0;
}

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

/*
 * Band @j gets masks if it holds prefixes: one slot per region for up to
 * 16-bit regions when there are at least as many keys as regions (IPv4 /8
 * and /16: exact, and no hash to compute), else hashed slots, half again as
 * many as keys, so that most slots hold one region, but at most 64K of
 * them (128 KB, a guard's size): a mask read that misses the L2 cache costs
 * more than the filter tests it saves, even though a capped band's slots
 * then share several regions each.
 */
static void
band_init(struct fib *f, struct fib_band *bd, uint j, u32 keys, int vpn)
{
  uint base = j << FIB_BAND_SHIFT;
  uint bits = 6;
  while ((bits < FIB_BAND_MAX_BITS) && ((1ULL << bits) < keys + keys / 2))
    bits++;

  bd->direct = !vpn && (base <= FIB_BAND_DIRECT) && (base <= bits);
  bd->bits = bd->direct ? base : bits;
  bd->slot = mb_allocz(f->fib_pool, sizeof(u16) << bd->bits);
}

/**
 * fib_lpm_guards_free - free a filter's guards
 * @b: filter state
 *
 * Frees the head guard, the cover table and every band's length masks,
 * and clears their descriptors, so that lookups find no guards until
 * fib_lpm_guards_init() builds them again with the next filter.
 */
void
fib_lpm_guards_free(struct fib_bloom *b)
{
  if (b->head.cnt)
    mb_free(b->head.cnt);
  b->head = (struct fib_guard) {};

  if (b->cover)
    mb_free(b->cover);
  b->cover = NULL;

  for (uint j = 0; j < FIB_BANDS; j++)
  {
    if (b->band[j].slot)
      mb_free(b->band[j].slot);
    b->band[j] = (struct fib_band) {};
  }
}

/**
 * fib_lpm_guards_account - count a net in or out of the guards
 * @b: filter state
 * @a: the net
 * @add: 1 for an insert, 0 for a delete
 *
 * Updates the head guard's counter, the cover table bit (for IPv4 lengths
 * below 16) or the length mask and count of the net's band slot. Counters
 * that saturate stay put, so a guard may claim too much but never too
 * little; nets of types without longest-prefix walks are ignored. Called
 * with every key the filter adds or removes.
 */
void
fib_lpm_guards_account(struct fib_bloom *b, const net_addr *a, int add)
{
  const net_addr_union *u = (const void *) a;
  int v6;
  u64 rdh;

  if (!lpm_family(a, &v6, &rdh))
    return;

  struct fib_guard *g = &b->head;
  if (g->cnt && (a->pxlen >= g->len))
  {
    u16 *c = &g->cnt[guard_index(g, u, v6, rdh)];
    if (*c != 0xffff)		/* Sticky: may undercount, never drops to 0 */
    {
      ASSERT_DIE(add || (*c > 0));
      *c += add ? 1 : -1;
    }
  }

  /* A delete clears the cover bit only with the prefix's last node. A net
   * with host bits is left out: no walk's trimmed query can equal it, and
   * its delete must not clear the bit of the same prefix without them */
  if (b->cover && (a->pxlen < FIB_COVER_LENGTHS))
  {
    if (fib_lpm_canonical(a) && (add || !cover_shared(b->fib, a)))
      cover_mark(b->cover, a, add);
    return;
  }

  u16 *sl = band_slot(b, a, v6, rdh);
  if (!sl)
    return;

  uint cnt = *sl >> 8;
  if (add)
  {
    *sl |= 1U << (a->pxlen & 7);
    if (cnt < FIB_BAND_CMAX)
      *sl += 0x100;
  }
  else if (cnt < FIB_BAND_CMAX)
  {
    ASSERT_DIE(cnt > 0);
    *sl = (cnt == 1) ? 0 : *sl - 0x100;	/* The last one out clears the mask */
  }
}

/**
 * fib_lpm_guards_init - size the guards and masks of a filter being rebuilt
 * @f: FIB
 *
 * The head guard sits at the shortest used length (if it is at least
 * %FIB_GUARD_MIN_HEAD); every band of lengths holding prefixes gets its
 * length masks, except that an IPv4 FIB holding prefixes shorter than 16
 * gets the cover table for those instead of band 1's masks. All start
 * empty; the rebuild walk accounts every node. (A prefix shorter than 16
 * added after a rebuild that found none has neither a cover table nor
 * band 1 masks: the lengths len_map holds there are then all candidates,
 * until the next rebuild.)
 */
void
fib_lpm_guards_init(struct fib *f)
{
  struct fib_bloom *b = f->bloom;
  fib_lpm_guards_free(b);

  if (!net_val_match(f->addr_type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4 | NB_IP6 | NB_VPN6 | NB_ROA6 | NB_FLOW6))
    return;

  int head = -1;
  for (int l = FIB_BLOOM_MAX_PXLEN; l >= 0; l--)
    if (b->len_count[l])
      head = l;

  if (head < 0)
    return;

  /* At a short head (IPv4 /8) nearly every root is routed: not worth a guard */
  if (head >= FIB_GUARD_MIN_HEAD)
    guard_init(f, &b->head, head, f->entries);

  if (cover_type(f->addr_type) && (b->len_map[0] & ((1U << FIB_COVER_LENGTHS) - 1)))
    b->cover = mb_allocz(f->fib_pool, sizeof(u16) << FIB_COVER_LENGTHS);

  /* Band 0 has a single region: len_map says all there is */
  int vpn = net_val_match(f->addr_type, NB_VPN4 | NB_VPN6);
  for (uint j = b->cover ? (FIB_COVER_LENGTHS >> FIB_BAND_SHIFT) : 1; j < FIB_BANDS; j++)
  {
    u32 keys = 0;
    for (uint l = j << FIB_BAND_SHIFT; l < MIN((j + 1) << FIB_BAND_SHIFT, FIB_BLOOM_MAX_PXLEN + 1); l++)
      keys += b->len_count[l];

    /* fib_get() may rebuild with its new node linked but not yet counted */
    if (keys)
      band_init(f, &b->band[j], j, keys + 1, vpn);
  }
}

/**
 * fib_lpm_guards_cover - check that the guards admit every node
 * @f: FIB
 *
 * For tests: every node's first bits have a non-zero head guard counter
 * (when its length is guarded) and its band's slot has its length set and
 * a non-zero count, and the cover table is exactly the one its nodes make
 * (no bit missing, none left over). Returns 1 if so (or without guards).
 */
int
fib_lpm_guards_cover(struct fib *f)
{
  struct fib_bloom *b = f->bloom;
  u16 *cv = b->cover ? mb_allocz(f->fib_pool, sizeof(u16) << FIB_COVER_LENGTHS) : NULL;
  int ok = 1;

  FIB_WALK(f, void, z)
  {
    const net_addr *a = fib_user_to_node(f, z)->addr;
    const net_addr_union *u = (const void *) a;
    int v6;
    u64 rdh;

    if (!lpm_family(a, &v6, &rdh))
      continue;

    if (b->head.cnt && (a->pxlen >= b->head.len) && !b->head.cnt[guard_index(&b->head, u, v6, rdh)])
      ok = 0;

    if (cv && (a->pxlen < FIB_COVER_LENGTHS))
    {
      if (fib_lpm_canonical(a))
	cover_mark(cv, a, 1);
      continue;
    }

    const u16 *sl = band_slot(b, a, v6, rdh);
    if (sl && (!(*sl & (1U << (a->pxlen & 7))) || !(*sl >> 8)))
      ok = 0;
  }
  FIB_WALK_END;

  if (cv)
  {
    ok &= !memcmp(cv, b->cover, sizeof(u16) << FIB_COVER_LENGTHS);
    mb_free(cv);
  }

  return ok;
}

/**
 * fib_lpm_bands - number of bands with length masks
 * @b: filter state
 *
 * For statistics and the tests.
 */
uint
fib_lpm_bands(const struct fib_bloom *b)
{
  uint n = 0;
  for (uint j = 0; j < FIB_BANDS; j++)
    n += !!b->band[j].slot;
  return n;
}

/**
 * fib_lpm_guards_size - memory of the guards in bytes
 * @b: filter state
 *
 * Counts the head guard, the length masks and the cover table; the
 * filter itself is counted by fib_bloom_size().
 */
uint
fib_lpm_guards_size(const struct fib_bloom *b)
{
  uint sz = b->head.cnt ? (sizeof(u16) << b->head.bits) : 0;
  sz += b->cover ? (sizeof(u16) << FIB_COVER_LENGTHS) : 0;
  for (uint j = 0; j < FIB_BANDS; j++)
    if (b->band[j].slot)
      sz += sizeof(u16) << b->band[j].bits;
  return sz;
}

/*
 * Untested candidates whose buckets fib_lpm_init() prefetches with their
 * filter blocks: the first one or two are usually admitted, so their
 * buckets are worth fetching early; the rest are mostly false, and
 * fetching their buckets too (as ROA checks once did for all candidates)
 * costs more than it saves.
 */
#define FIB_LPM_PRE	2

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
	x.vpn4.prefix = ip4_and(x.vpn4.prefix, lpm_mask4(len));
      else
	x.vpn6.prefix = lpm_ip6_trim(x.vpn6.prefix, len);
      x.n.pxlen = len;
      return net_hash(&x.n);
    }

  default:
    if (!v6)
      return px4_hash(ip4_and(u->ip4.prefix, lpm_mask4(len)), len);
    return px6_hash(lpm_ip6_trim(u->ip6.prefix, len), len);
  }
}

/**
 * fib_lpm_supported - can the accelerated LPM walk answer for @n?
 * @f: FIB
 * @n: network asked about
 *
 * Only with the filter machinery enabled, for IP-like nets (IP, VPN, ROA,
 * flow) within their type's length range and without host bits. Anything
 * else is answered by stock's own loops, so that even an out-of-range
 * length or a net with host bits gets stock's answer.
 */
int
fib_lpm_supported(const struct fib *f, const net_addr *n)
{
  return (f->bloom->state != FIB_BLOOM_OFF) &&
    net_val_match(n->type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4 | NB_IP6 | NB_VPN6 | NB_ROA6 | NB_FLOW6) &&
    (n->pxlen <= net_max_prefix_length[n->type]) && fib_lpm_canonical(n);
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
 * prefix, longest first, none if the head guard says so, and within each
 * band of lengths only those its mask for @n's region admits (all masks
 * read at once), then the cover table's lengths, which are admitted
 * without a test (@s->exact on). With a filter, the others' keys are
 * hashed and their blocks prefetched, and so are the buckets of the
 * candidates among the first MIN(@ahead, %FIB_LPM_PRE), and of the exact
 * ones among the first @ahead; then candidates are tested until @ahead are
 * admitted (without a filter: the first @ahead), and the buckets of those
 * are prefetched, then their first nodes. Each stage's cache
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

  s->n = s->i = s->tested = s->exact = 0;
  s->active = fib_bloom_active(b);

  if (!lpm_family(n, &v6, &rdh))
    return;

  /* A zero head counter rules out every length from its own up; a shorter
   * prefix added since the guard was built is not counted by it */
  int top = n->pxlen;
  struct fib_guard *g = &b->head;
  if (g->cnt && (top >= (int) g->len) && !g->cnt[guard_index(g, u, v6, rdh)])
    top = (int) g->len - 1;

  if (top < (int) lo)
    return;

  /* IPv4 lengths below 16 from the cover table, if there is one */
  const u16 *cv = NULL;
  int jlo = lo >> FIB_BAND_SHIFT;
  if (b->cover && cover_type(n->type))
  {
    cv = &b->cover[ip4_to_u32(u->ip4.prefix) >> FIB_COVER_LENGTHS];
    __builtin_prefetch(cv);
    jlo = MAX(jlo, FIB_COVER_LENGTHS >> FIB_BAND_SHIFT);
  }

  /* Buckets prefetched before the filter tests: at most %FIB_LPM_PRE untested */
  uint pre = MIN(ahead, FIB_LPM_PRE);

  /* Bands with lengths to consider, longest first; their masks' slots prefetched */
  const u16 *slot[FIB_BANDS];
  u8 band[FIB_BANDS], mask[FIB_BANDS], nb = 0;
  for (int j = top >> FIB_BAND_SHIFT; j >= jlo; j--)
  {
    uint m = band_lengths(b, j, top, lo);
    if (!m)
      continue;

    const struct fib_band *bd = &b->band[j];
    slot[nb] = bd->slot ? &bd->slot[band_index(bd, j, u, v6, rdh)] : NULL;
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
	s->hash[s->n] = lpm_key(u, v6, rdh, len);
	__builtin_prefetch(fib_bloom_qblock(b, s->hash[s->n]));
      }

      /* The first candidates' buckets at once too: not after the test */
      if (s->n < pre)
      {
	s->chash[s->n] = lpm_chain_hash(u, v6, len);
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
	s->chash[s->n] = lpm_chain_hash(u, v6, len);
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
    s->adm[k] = (k >= s->exact) || !s->active || lpm_test(b, s, k);
    if (s->adm[k])
    {
      if (k >= ((k < s->exact) ? pre : ahead))
      {
	s->chash[k] = lpm_chain_hash(u, v6, s->len[k]);
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
 * fib_lpm_next - next candidate length of a walk
 * @f: FIB
 * @n: the network of fib_lpm_init()
 * @s: walk state
 *
 * Returns the next length the filter admits (a cover table's length
 * without a test; every candidate without a filter), longest first, or -1
 * when there is none. fib_lpm_chain() then
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

    if (s->active && (k < s->exact) && !lpm_test(f->bloom, s, k))
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
    x->ip4.prefix = ip4_and(x->ip4.prefix, lpm_mask4(len));
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

/**
 * fib_bloom_route - fib_route() through the filter
 * @f: FIB
 * @n: net of a type fib_lpm_supported() accepts
 *
 * Returns the longest-prefix node covering @n, or NULL: the same answer
 * as stock's fib_route(), found by testing only the candidate lengths that
 * the per-length counts, the guards and the filter leave. Called through
 * fib_accel_route() (fib-accel.c).
 */
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
net_route_bloom(rtable *tab, const net_addr *n, int *done)
{
  struct fib *f = &tab->fib;

  if (!fib_lpm_supported(f, n) || !net_val_match(n->type, NB_IP | NB_VPN) ||
      (tab->trie && net_val_match(n->type, NB_IP) && !fib_bloom_active(f->bloom)))
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
 * its length range or has host bits set, the table has a trie and no
 * filter, or with `bloom off'
 *
 * RFC 6483 validation with the same answers as stock net_roa_check(): the
 * ROA FIB's filter is keyed by prefix and length alone, so it can rule out
 * lengths without knowing the ROAs' ASN or max length. Every covering length
 * may hold a candidate ROA, so all admitted ones are prefetched at once.
 * A table's ROA FIB has a ROA index instead (fib-roa.c), with candidate
 * lengths of its own (fib_roa_check4(), fib_roa_check6()): it answers from
 * the first check, filter or not, and no chain is walked. The filter walk
 * serves ROA FIBs without one (`bloom off' drops both; a table whose index
 * was given up; other users of ROA-typed FIBs).
 */
int
net_roa_check_bloom(rtable *tab, const net_addr *n, u32 asn, int *done)
{
  int v4 = (tab->addr_type == NET_ROA4) && (n->type == NET_IP4);
  int v6 = (tab->addr_type == NET_ROA6) && (n->type == NET_IP6);
  const net_addr_union *u = (const void *) n;

  /* A ROA table's index answers from the first check, filter or not */
  if (v4 && fib_bloom_roa_own(tab->fib.bloom) && (n->pxlen <= IP4_MAX_PREFIX_LENGTH) &&
      ip4_zero(ip4_and(u->ip4.prefix, ip4_not(lpm_mask4(n->pxlen)))))
  {
    struct fib_roa *r = tab->fib.bloom->roa ?: fib_roa_build(&tab->fib);
    if (r)
    {
      *done = 1;
      return fib_roa_check4(r, u->ip4.prefix, n->pxlen, asn);
    }
  }

  if (v6 && fib_bloom_roa_own(tab->fib.bloom) && (n->pxlen <= IP6_MAX_PREFIX_LENGTH) && fib_lpm_canonical(n))
  {
    struct fib_roa *r = tab->fib.bloom->roa ?: fib_roa_build(&tab->fib);
    if (r)
    {
      *done = 1;
      return fib_roa_check6(r, &u->ip6.prefix, n->pxlen, asn);
    }
  }

  /* A ROA table with a trie and no filter: stock's trie walk (fib_bloom_trie_leads()) */
  if ((!v4 && !v6) || (tab->trie && !fib_bloom_active(tab->fib.bloom)) || !fib_lpm_supported(&tab->fib, n))
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
      roa0.roa4 = NET_ADDR_ROA4(ip4_and(u->ip4.prefix, lpm_mask4(len)), len, 0, 0);
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
