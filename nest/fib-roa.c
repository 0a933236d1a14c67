/*
 *	bloombird -- The ROA index of a table's ROA FIB
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: ROA index
 *
 * RFC 6483 validation (net_roa_check()) asks for every ROA whose prefix
 * covers the route's prefix: stock BIRD walks the FIB chain of each length
 * from the route's down to 0 and reads each ROA node and its route. The
 * filter and guards (fib-guard.c) cut the lengths to a few candidates, but
 * each one that holds ROAs still costs a chain walk: the bucket, the nodes
 * before and after the ROAs of that prefix, each ROA's route, one cache
 * miss after another; measured, those walks were most of a check's time.
 *
 * So a ROA FIB of a table keeps an index of its
 * distinct ROA prefixes (&fib_roa): one slot per prefix and length with at
 * least one ROA whose net has a valid route, holding the origin and max
 * length of each such ROA (inline for one, in an array for more). The slots
 * are open-addressed with linear probing, at most three quarters full
 * (a lower load means more slots, read at random through a last-level
 * cache shared with the rest of bird, and measured slower on real ROAs),
 * their home slot taken from the prefix's filter key. A check then looks up the slots of all its
 * candidate lengths at once, their lines prefetched together, and decides
 * from them alone: valid if a ROA of a covering prefix has the route's
 * origin and allows its length, else invalid if any covering prefix has a
 * ROA, else unknown; the same verdict as stock's loop, whose order of
 * lengths never changes it.
 *
 * The index follows validity, not FIB nodes: rte_announce() calls
 * rt_lpm_net_changed(), and so fib_roa_update(), whenever a net's valid
 * best route appears or goes, which is exactly when stock's
 * rte_is_valid(net->routes) changes. A node without a valid route (withdrawn
 * and not yet pruned, or holding only filtered routes) is not in the index,
 * as stock's loop skips it. A ROA whose prefix has host bits set is left
 * out, as no trimmed route prefix can equal it in stock's loop either.
 *
 * Which lengths to look up: the index keeps candidates of its own, block
 * masks. IPv4: one 32-bit mask per /16 of the address space (256 KiB), the
 * lengths of the prefixes with slots that cover the block (exact) or lie
 * inside it (kept loosely: a bit of a slot that went stays until a quarter
 * of the slots' worth has gone, then all are recomputed). Real route
 * prefixes have one or two candidates there, where the filter's machinery
 * took far more instructions to find them.
 * IPv6: the same mask per /16 for lengths 1-16; for lengths 17-80 a
 * 64-bit word per /32, hashed into 2^16 words (512 KiB), set by prefixes
 * of 17-32 bits in every /32 they cover (a /19 in 8192 of them) and by
 * longer ones in the /32 they lie in; lengths 81-128 in one word for the
 * table. Real ROA6 prefixes are /19-/48, nearly all inside one /32 or
 * covering a few, where the filter's candidates cost a check as much as
 * stock's trie walk (a small trie that stays in the cache). A hash
 * collision or a stale bit only adds a candidate whose slot is not there.
 *
 * So the index is built by the first check, filter or not (the upkeep
 * policy never sees those checks, and a ROA table builds no filter for
 * them), and kept until `bloom off'. Built at a check, not where the filter
 * is: the upkeep policy may build the filter inside fib_get(), whose new
 * node is linked before its net is cleared, and a walk of the nets then
 * would read that net's stale routes. Only tables attach their ROA FIBs
 * (fib_bloom_roa_attach(), from rt_lpm_configure()); the accelerator
 * (fib-bloom.c) keeps the index: other users of ROA-typed
 * FIBs (tests) have no nets behind their nodes.
 *
 * A slot counts up to %FIB_ROA_MAX_SHARED ROAs of its prefix. A table that
 * gets more for one prefix drops its index for good (logged) and its
 * checks walk the filter and the chains again: exact, only slower.
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/cli.h"
#include "nest/fib-key.h"
#include "nest/fib-roa.h"
#include "lib/resource.h"
#include "lib/string.h"

#define FIB_ROA_MIN_ORDER	10

static inline uint
roa_slot_size(const struct fib_roa *r)
{ return r->v6 ? 32 : 16; }

/* Key hash of a prefix: the filter's (the check has it per candidate) */
static inline u64
roa_key(const struct fib_roa *r, const struct fib_roa_slot *s)
{ return r->v6 ? fib_key_ip6(&s->px6[0], s->pxlen) : fib_key_ip4(ip4_from_u32(s->px4), s->pxlen); }

/* Mask bit of length @len (1-32) in a block mask */
static inline u32
blk_bit(uint len)
{ return 1U << (len - 1); }

/* Top 32 bits of a slot's prefix: the IPv4 prefix, an IPv6 one's first word */
static inline u32
slot_top(const struct fib_roa *r, const struct fib_roa_slot *s)
{ return r->v6 ? s->px6[0].addr[0] : s->px4; }

/* IPv6 masks: prefix @a/@len (17-128; @a: its top 32 bits) got a slot */
static void
blk6_add(struct fib_roa *r, u32 a, uint len)
{
  if (len > FIB_ROA_NEAR6)
  {
    r->far |= 1ULL << (len - FIB_ROA_NEAR6 - 1);
    return;
  }

  /* A prefix of up to 32 bits marks every /32 it covers (2^15 at most) */
  u64 bit = 1ULL << (len - 17);
  u32 n = (len < 32) ? (1U << (32 - len)) : 1;
  for (u32 i = 0; i < n; i++)
    r->blk6[fib_roa_blk6(a + i)] |= bit;
}

/* Block masks: prefix @a/@len (@a: its top 32 bits) got a slot (@on) or lost it */
static void
blk_update(struct fib_roa *r, u32 a, uint len, int on)
{
  if (!len)
  {
    r->len0 = on;
    return;
  }

  if (len > FIB_ROA_BLOCK_BITS)
  {
    if (!on)
      r->stale++;
    else if (r->v6)
      blk6_add(r, a, len);
    else
      r->blk[a >> FIB_ROA_BLOCK_BITS] |= blk_bit(len);
    return;
  }

  /* The blocks the prefix covers: it is the only prefix of its length there */
  u32 first = a >> FIB_ROA_BLOCK_BITS, n = 1U << (FIB_ROA_BLOCK_BITS - len);
  for (u32 i = first; i < first + n; i++)
    if (on)
      r->blk[i] |= blk_bit(len);
    else
      r->blk[i] &= ~blk_bit(len);
}

/* Block masks of the slots in use, recomputed */
static void
blk_compute(struct fib_roa *r)
{
  r->len0 = 0;
  r->far = 0;
  memset(r->blk, 0, FIB_ROA_BLOCKS * sizeof(u32));
  if (r->v6)
    memset(r->blk6, 0, FIB_ROA_BLOCKS6 * sizeof(u64));

  for (u32 i = 0; i <= r->mask; i++)
  {
    const struct fib_roa_slot *s = fib_roa_slot(r, i);
    if (s->n)
      blk_update(r, slot_top(r, s), s->pxlen, 1);
  }
}

/*
 * Bits of lengths 17 and longer stay set when their slots go (clearing one
 * would need to know that no other prefix of that length in the block has
 * one): recomputed from the slots once they are more than a quarter of the
 * slots in use, so the extra candidates they cause stay few.
 */
static inline void
blk_tidy(struct fib_roa *r)
{
  if (r->stale > r->groups / 4 + 64)
  {
    blk_compute(r);
    r->stale = 0;
  }
}

static void
roa_alloc(struct fib *f, struct fib_roa *r, uint order)
{
  r->order = order;
  r->shift = 64 - order;
  r->mask = (1U << order) - 1;
  r->slots = mb_allocz(f->fib_pool, (size_t) roa_slot_size(r) << order);
}

/* The free slot for a key hashing to @h (never full: at most 3/4) */
static inline struct fib_roa_slot *
roa_free_slot(const struct fib_roa *r, u64 h)
{
  u32 i = h >> r->shift;
  while (fib_roa_slot(r, i)->n)
    i = (i + 1) & r->mask;
  return fib_roa_slot(r, i);
}

/* Move every slot in use to a table of 2^@order slots */
static void
roa_resize(struct fib *f, struct fib_roa *r, uint order)
{
  byte *old = r->slots;
  u32 size = r->mask + 1;
  uint sz = roa_slot_size(r);

  roa_alloc(f, r, order);
  for (u32 i = 0; i < size; i++)
  {
    struct fib_roa_slot *s = (void *) (old + (uintptr_t) i * sz);
    if (s->n)
      memcpy(roa_free_slot(r, roa_key(r, s)), s, sz);
  }

  mb_free(old);
}

/* The slot of the ROA prefix @a (its key hash @h), NULL if none */
static struct fib_roa_slot *
roa_find(const struct fib_roa *r, const net_addr *a, u64 h)
{
  const net_addr_union *u = (const void *) a;
  return (struct fib_roa_slot *) (r->v6 ?
    fib_roa_find6(r, h, u->roa6.prefix, a->pxlen) :
    fib_roa_find4(r, h, u->roa4.prefix, a->pxlen));
}

/* Add ROA @e of prefix @a (key hash @h); -1 if its slot is full, unchanged */
static int
roa_add(struct fib *f, struct fib_roa *r, const net_addr *a, u64 h, u64 e)
{
  const net_addr_union *u = (const void *) a;
  struct fib_roa_slot *s = roa_find(r, a, h);
  if (s && (s->n == FIB_ROA_MAX_SHARED))
    return -1;

  r->roas++;
  if (!s)
  {
    s = roa_free_slot(r, h);
    s->n = 1;
    s->pxlen = a->pxlen;
    s->one = e;
    if (r->v6)
      s->px6[0] = u->roa6.prefix;
    else
      s->px4 = ip4_to_u32(u->roa4.prefix);
    blk_update(r, slot_top(r, s), s->pxlen, 1);

    if (4 * ++r->groups > 3 * (r->mask + 1))
      roa_resize(f, r, r->order + 1);
    return 0;
  }

  if (s->n == 1)
  {
    u64 *m = mb_alloc(f->fib_pool, 5 * sizeof(u64));
    m[0] = 4;
    m[1] = s->one;
    s->many = m;
    r->shared++;
  }
  else if (s->n == s->many[0])
  {
    u64 cap = 2 * s->many[0];
    u64 *m = mb_alloc(f->fib_pool, (cap + 1) * sizeof(u64));
    memcpy(m + 1, s->many + 1, s->n * sizeof(u64));
    m[0] = cap;
    mb_free(s->many);
    s->many = m;
  }

  s->many[++s->n] = e;
  return 0;
}

/* Free slot @s and move later slots of its run back where they belong */
static void
roa_clear(struct fib_roa *r, struct fib_roa_slot *s)
{
  uint sz = roa_slot_size(r);
  u32 i = ((byte *) s - r->slots) / sz;

  for (u32 j = (i + 1) & r->mask; fib_roa_slot(r, j)->n; j = (j + 1) & r->mask)
  {
    /* Slot j may fill the hole at i unless its home lies cyclically in (i, j] */
    u32 home = roa_key(r, fib_roa_slot(r, j)) >> r->shift;
    if (((j - home) & r->mask) >= ((j - i) & r->mask))
    {
      memcpy(fib_roa_slot(r, i), fib_roa_slot(r, j), sz);
      i = j;
    }
  }

  memset(fib_roa_slot(r, i), 0, sz);
}

static void
roa_del(struct fib *f, struct fib_roa *r, const net_addr *a, u64 h, u64 e)
{
  struct fib_roa_slot *s = roa_find(r, a, h);
  if (!s)
    return;

  u64 *m = (s->n > 1) ? s->many + 1 : &s->one;
  uint i = 0;
  while ((i < s->n) && (m[i] != e))
    i++;
  if (i == s->n)
    return;

  r->roas--;
  m[i] = m[s->n - 1];

  if (s->n == 1)
  {
    blk_update(r, slot_top(r, s), s->pxlen, 0);
    roa_clear(r, s);
    r->groups--;
    blk_tidy(r);
    if ((r->order > FIB_ROA_MIN_ORDER) && (8 * r->groups < r->mask + 1))
      roa_resize(f, r, r->order - 1);
    return;
  }

  if (--s->n == 1)
  {
    u64 *old = s->many;
    s->one = old[1];
    mb_free(old);
    r->shared--;
  }
}

/* Key, ROA entry and key hash of a ROA net; 0 for a prefix with host bits */
static inline int
roa_of_net(const net_addr *a, u64 *e, u64 *h)
{
  const net_addr_union *u = (const void *) a;
  if (!fib_key_canonical(a))
    return 0;

  if (a->type == NET_ROA4)
  {
    *e = FIB_ROA(u->roa4.asn, u->roa4.max_pxlen);
    *h = fib_key_ip4(u->roa4.prefix, a->pxlen);
  }
  else
  {
    *e = FIB_ROA(u->roa6.asn, u->roa6.max_pxlen);
    *h = fib_key_ip6(&u->roa6.prefix, a->pxlen);
  }
  return 1;
}

/**
 * fib_roa_update - a ROA net's valid route appeared or went
 * @r: the index
 * @f: its ROA FIB
 * @roa: the ROA net
 * @valid: it has a valid best route now (and had none), or the reverse
 *
 * Returns 0 if the index cannot hold the change (a prefix with more ROAs
 * than a slot counts): the caller must then drop it, as it would miss a
 * ROA. A ROA net with host bits is not indexed (no check can match it).
 */
int
fib_roa_update(struct fib_roa *r, struct fib *f, const net_addr *roa, int valid)
{
  u64 e, h;

  if (!roa_of_net(roa, &e, &h))
    return 1;

  if (!valid)
    roa_del(f, r, roa, h, e);
  else if (roa_add(f, r, roa, h, e) < 0)
    return 0;

  return 1;
}

/**
 * fib_roa_new - build the index of a ROA FIB
 * @f: the FIB of a roa4 or roa6 table
 * @over: set to the offending ROA when the index cannot be built, or NULL
 *
 * Indexes the ROA nets that have a valid route. Returns NULL, and the ROA
 * in @over, if a prefix has more ROAs than a slot counts.
 */
struct fib_roa *
fib_roa_new(struct fib *f, const net_addr **over)
{
  struct fib_roa *r = mb_allocz(f->fib_pool, sizeof(struct fib_roa));
  uint order = FIB_ROA_MIN_ORDER;
  while (3 * (1ULL << order) < 4ULL * f->entries + 4)
    order++;

  r->v6 = (f->addr_type == NET_ROA6);
  r->blk = mb_allocz(f->fib_pool, FIB_ROA_BLOCKS * sizeof(u32));
  if (r->v6)
    r->blk6 = mb_allocz(f->fib_pool, FIB_ROA_BLOCKS6 * sizeof(u64));
  roa_alloc(f, r, order);

  uint chains = fib_chains(f);
  for (uint i = 0; i < chains; i++)
  {
    if (i + 16 < chains)
      __builtin_prefetch(fib_chain(f, i + 16));

    for (struct fib_node *fn = fib_chain(f, i); fn; fn = fn->next)
    {
      net *n = fib_node_to_user(f, fn);
      u64 e, h;
      if (rte_is_valid(n->routes) && roa_of_net(fn->addr, &e, &h) &&
	  (roa_add(f, r, fn->addr, h, e) < 0))
      {
	if (over)
	  *over = fn->addr;
	fib_roa_free(r);
	return NULL;
      }
    }
  }

  return r;
}

/**
 * fib_roa_free - free an index
 * @r: the index
 */
void
fib_roa_free(struct fib_roa *r)
{
  for (u32 i = 0; i <= r->mask; i++)
  {
    struct fib_roa_slot *s = fib_roa_slot(r, i);
    if (s->n > 1)
      mb_free(s->many);
  }

  mb_free(r->slots);
  mb_free(r->blk);
  if (r->blk6)
    mb_free(r->blk6);
  mb_free(r);
}

/*
 * A candidate's slot @s (NULL: none) seen by a check: 1 if one of its ROAs
 * makes the route valid; @anything set if it has any (then at least invalid)
 */
static inline int
roa_seen(struct fib_roa *r, const struct fib_roa_slot *s, u32 asn, uint pxlen, int *anything)
{
  if (!s)
    return 0;

  r->found++;
  *anything = 1;
  return fib_roa_slot_valid(s, asn, pxlen);
}

/**
 * fib_roa_check4 - RFC 6483 validation of an IPv4 network by the index
 * @r: index of a ROA4 FIB
 * @px: prefix of the network (no host bits)
 * @pxlen: its length
 * @asn: origin AS, 0 if unknown
 *
 * The candidates are the lengths up to @pxlen that the block mask of @px's
 * /16 has, and the /0; the slots of all of them are prefetched at once,
 * then looked up longest first. Stock's verdict: valid if a ROA of a
 * covering prefix has origin @asn and allows @pxlen, else invalid if a
 * covering prefix has any ROA, else unknown.
 */
int
fib_roa_check4(struct fib_roa *r, ip4_addr px, uint pxlen, u32 asn)
{
  u32 a = ip4_to_u32(px);
  u32 m = r->blk[a >> FIB_ROA_BLOCK_BITS] & (pxlen ? (0xffffffffU >> (32 - pxlen)) : 0);
  u32 key[33];
  u64 h[33];
  u8 len[33];
  uint n = 0;

  while (m)
  {
    uint bit = 31 - __builtin_clz(m);
    m &= ~(1U << bit);
    len[n] = bit + 1;
    key[n] = a & (0xffffffffU << (31 - bit));
    h[n] = fib_key_ip4(ip4_from_u32(key[n]), len[n]);
    __builtin_prefetch(fib_roa_slot(r, h[n] >> r->shift));
    n++;
  }

  if (r->len0)
  {
    len[n] = key[n] = 0;
    h[n] = fib_key_ip4(IP4_NONE, 0);
    n++;
  }

  int anything = 0;
  r->checks++;
  r->probes += n;
  for (uint k = 0; k < n; k++)
    if (roa_seen(r, fib_roa_find4(r, h[k], ip4_from_u32(key[k]), len[k]), asn, pxlen, &anything))
      return ROA_VALID;

  return anything ? ROA_INVALID : ROA_UNKNOWN;
}

/**
 * fib_roa_check6 - RFC 6483 validation of an IPv6 network by the index
 * @r: index of a ROA6 FIB
 * @px: prefix of the network (no host bits)
 * @pxlen: its length (0-128)
 * @asn: origin AS, 0 if unknown
 *
 * As fib_roa_check4(), with the candidates from @far (lengths 81-128), the
 * word of @blk6 for @px's /32 (17-80), the block mask of its /16 (1-16),
 * and the /0. The slot keys are the filter's (fib_key_ip6()),
 * computed from the trimmed halves.
 */
int
fib_roa_check6(struct fib_roa *r, const ip6_addr *px, uint pxlen, u32 asn)
{
  u64 hi = ((u64) px->addr[0] << 32) | px->addr[1];
  u64 lo = ((u64) px->addr[2] << 32) | px->addr[3];
  u32 top = px->addr[0];
  u64 h[FIB_MAX_PXLEN + 2];
  u8 len[FIB_MAX_PXLEN + 2];
  uint n = 0;

  /* Candidate lengths, longest first */
  u64 far = (pxlen > FIB_ROA_NEAR6) ? (r->far & ((1ULL << (pxlen - FIB_ROA_NEAR6)) - 1)) : 0;
  for (; far; far &= ~(1ULL << (63 - __builtin_clzll(far))))
    len[n++] = FIB_ROA_NEAR6 + 1 + (63 - __builtin_clzll(far));

  uint near = MIN(pxlen, FIB_ROA_NEAR6);
  u64 m6 = (near > 16) ? (r->blk6[fib_roa_blk6(top)] & (~0ULL >> (64 - (near - 16)))) : 0;
  for (; m6; m6 &= ~(1ULL << (63 - __builtin_clzll(m6))))
    len[n++] = 17 + (63 - __builtin_clzll(m6));

  u32 m = r->blk[top >> FIB_ROA_BLOCK_BITS] & (pxlen ? (0xffffU >> (16 - MIN(pxlen, 16))) : 0);
  for (; m; m &= ~(1U << (31 - __builtin_clz(m))))
    len[n++] = 32 - __builtin_clz(m);

  if (r->len0)
    len[n++] = 0;

  for (uint k = 0; k < n; k++)
  {
    h[k] = fib_key_ip6_halves(fib_key_ip6_order(hi & fib_key_mask6_hi(len[k])),
				    fib_key_ip6_order(lo & fib_key_mask6_lo(len[k])), len[k]);
    __builtin_prefetch(fib_roa_slot(r, h[k] >> r->shift));
  }

  int anything = 0;
  r->checks++;
  r->probes += n;
  for (uint k = 0; k < n; k++)
  {
    u64 th = hi & fib_key_mask6_hi(len[k]), tl = lo & fib_key_mask6_lo(len[k]);
    ip6_addr key = ip6_build(th >> 32, th, tl >> 32, tl);
    if (roa_seen(r, fib_roa_find6(r, h[k], key, len[k]), asn, pxlen, &anything))
      return ROA_VALID;
  }

  return anything ? ROA_INVALID : ROA_UNKNOWN;
}

/* Whether slot @s holds the same ROAs as slot @t (both in use) */
static int
roa_same(const struct fib_roa_slot *s, const struct fib_roa_slot *t)
{
  if (s->n != t->n)
    return 0;

  const u64 *a = fib_roa_entries(s), *b = fib_roa_entries(t);
  for (uint i = 0; i < s->n; i++)
  {
    uint j = 0;
    while ((j < t->n) && (b[j] != a[i]))
      j++;
    if (j == t->n)
      return 0;
  }
  return 1;
}

/**
 * fib_roa_exact - check an index against the nodes
 * @r: the index, or NULL
 * @f: its ROA FIB
 *
 * For tests: the index, if any, holds exactly the ROAs of the nodes with a
 * valid route, each prefix findable from its home slot, with the counts
 * right and at most 3/4 of the slots in use. 1 if so (or without an index).
 */
int
fib_roa_exact(const struct fib_roa *r, struct fib *f)
{
  if (!r)
    return 1;

  struct fib_roa *t = fib_roa_new(f, NULL);
  if (!t)
    return 0;

  int ok = (r->groups == t->groups) && (r->roas == t->roas) && (r->shared == t->shared) &&
    (4 * r->groups <= 3 * (r->mask + 1)) && (r->v6 == t->v6);

  u32 used = 0;
  for (u32 i = 0; ok && (i <= r->mask); i++)
  {
    struct fib_roa_slot *s = fib_roa_slot(r, i);
    if (!s->n)
      continue;

    u64 h = roa_key(r, s);
    net_addr_union k;
    if (r->v6)
      net_fill_roa6(&k.n, s->px6[0], s->pxlen, 0, 0);
    else
      net_fill_roa4(&k.n, ip4_from_u32(s->px4), s->pxlen, 0, 0);

    const struct fib_roa_slot *fs = roa_find(r, &k.n, h), *ts = roa_find(t, &k.n, h);
    ok = (fs == s) && ts && roa_same(s, ts) && ((s->n == 1) || (s->many[0] >= s->n));
    used++;
  }

  ok = ok && (used == r->groups);

  /* Block masks: exact for lengths 1-16, at least the slots' for the others */
  if (ok)
  {
    u32 exact = blk_bit(FIB_ROA_BLOCK_BITS + 1) - 1;
    for (u32 i = 0; ok && (i < FIB_ROA_BLOCKS); i++)
      ok = ((r->blk[i] & exact) == (t->blk[i] & exact)) && ((r->blk[i] & t->blk[i]) == t->blk[i]);
    for (u32 i = 0; ok && r->v6 && (i < FIB_ROA_BLOCKS6); i++)
      ok = ((r->blk6[i] & t->blk6[i]) == t->blk6[i]);
    ok = ok && (r->len0 == t->len0) && ((r->far & t->far) == t->far);
  }

  fib_roa_free(t);
  return ok;
}

/**
 * fib_roa_size - memory of a ROA index in bytes
 * @r: the index, or NULL
 *
 * Counts the index itself, its slots, the IPv4 and (if present) IPv6
 * block masks, and the arrays of slots holding more than one ROA. Returns 0
 * for NULL.
 */
uint
fib_roa_size(const struct fib_roa *r)
{
  if (!r)
    return 0;

  uint size = sizeof(struct fib_roa) + (roa_slot_size(r) << r->order) + FIB_ROA_BLOCKS * sizeof(u32) +
    (r->blk6 ? FIB_ROA_BLOCKS6 * sizeof(u64) : 0);
  for (u32 i = 0; i <= r->mask; i++)
  {
    const struct fib_roa_slot *s = fib_roa_slot(r, i);
    if (s->n > 1)
      size += (s->many[0] + 1) * sizeof(u64);
  }
  return size;
}
