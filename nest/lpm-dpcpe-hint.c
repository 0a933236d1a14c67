/*
 *	bloombird -- The dpcpe LPM engine: hint bytes
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe hints
 *
 * A lookup of the paper's scheme hashes and filter-tests every level, longest
 * first: at full size that is a cache line per level per address (8 filter
 * words for IPv6), most of them for levels that hold nothing near the
 * address, and on a core that keeps only so many misses in flight the lines,
 * not the instructions, set the rate. So for each /16 (or each array entry,
 * if the array is shorter) we keep one hint byte saying which levels hold
 * entries in it: bit (i mod 8) for the level of index i, shortest first.
 * 64 KiB of hints stay in the cache: reading them costs no round trip, and a
 * lookup then touches only the lines of the levels its region has. A random
 * IPv6 address falls in a /16 that holds nothing and is answered by the
 * array alone; on the tier-1 table a random IPv4 address tests the /24 level
 * in 31% of the cases and the /32 level in 0.4%, an address inside a prefix
 * in 96% and 3%.
 *
 * The writer keeps, per hint byte and bit, a count of the live expanded
 * entries behind it (u16, control memory). A count that reaches its maximum
 * stays there, so the bit stays set: a set bit may be stale, a clear one
 * never is. The bit is set before an entry is stored (dpcpe_level_insert())
 * and cleared after the last entry is gone (dpcpe_level_delete()); capture
 * and release only change values and leave the counts alone; a table resize
 * copies its entries into a level without hints (so they are not counted
 * again) and then hands it the old level's. Each layout has its own hints,
 * built with its levels and retired with them.
 */

#include "nest/bird.h"
#include "nest/lpm-dpcpe.h"

#define HINT_MAX	0xffff		/* Saturated: the bit stays */

static inline u64 hint_bytes(const struct dpcpe_hints *h) { return 1ULL << h->bits; }
static inline u64 hint_cnt_bytes(const struct dpcpe_hints *h) { return hint_bytes(h) * h->n * sizeof(u16); }

static inline u64
hint_index(const struct dpcpe_hints *h, struct dpcpe_key k)
{
  return h->bits ? (k.hi >> (64 - h->bits)) : 0;
}

/* The level's bit index, from its bit */
static inline uint hint_bit_index(const struct dpcpe_level *l) { return __builtin_ctz(l->d.hbit); }

/**
 * dpcpe_hint_setup - hint bytes and counts of a layout being built
 * @x: engine
 * @s: layout with its direct array and levels set up, no entries yet
 *
 * Returns -1 if memory ran out (nothing allocated, the levels keep no hints).
 */
int
dpcpe_hint_setup(struct dpcpe *x, struct dpcpe_layout *s)
{
  struct dpcpe_hints *h = &s->h;
  h->bits = MIN(s->dbits, DPCPE_HBITS);
  h->n = MIN(MAX(s->nlev, 1), 8);
  h->bytes = dpcpe_arena_alloc(&x->la, hint_bytes(h));
  h->cnt = dpcpe_arena_alloc(&x->ca, hint_cnt_bytes(h));
  if ((h->bytes == DPCPE_NOMEM) || (h->cnt == DPCPE_NOMEM))
  {
    if (h->bytes != DPCPE_NOMEM) dpcpe_arena_free(&x->la, h->bytes, hint_bytes(h));
    if (h->cnt != DPCPE_NOMEM) dpcpe_arena_free(&x->ca, h->cnt, hint_cnt_bytes(h));
    h->bytes = h->cnt = 0;
    return -1;
  }

  memset(x->base + h->bytes, 0, hint_bytes(h));
  memset(dpcpe_ptr(&x->ca, h->cnt), 0, hint_cnt_bytes(h));

  for (uint i = 0; i < s->nlev; i++)
  {
    s->lv[i].h = *h;
    s->lv[i].d.hbit = 1 << (i % 8);
  }
  return 0;
}

/**
 * dpcpe_hint_release - free a layout's hints
 * @x: engine
 * @s: layout
 * @published: readers may see them: the bytes are retired, not freed
 */
void
dpcpe_hint_release(struct dpcpe *x, struct dpcpe_layout *s, int published)
{
  struct dpcpe_hints *h = &s->h;
  if (!h->bytes)
    return;

  if (published)
    dpcpe_pending_block(x, h->bytes, hint_bytes(h));
  else
    dpcpe_arena_free(&x->la, h->bytes, hint_bytes(h));
  dpcpe_arena_free(&x->ca, h->cnt, hint_cnt_bytes(h));
  h->bytes = h->cnt = 0;
}

/* The count of entry @k's bit in level @l, and its hint byte in @hb */
static inline u16 *
hint_count(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k, byte **hb)
{
  u64 i = hint_index(&l->h, k);
  *hb = x->base + l->h.bytes + i;
  return (u16 *) dpcpe_ptr(&x->ca, l->h.cnt) + i * l->h.n + hint_bit_index(l);
}

/* Entry @k appears in level @l: count it, and set its bit before it is stored */
void
dpcpe_hint_add(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k)
{
  if (!l->h.bytes)
    return;

  byte *h;
  u16 *c = hint_count(x, l, k, &h);
  if (*c < HINT_MAX)
    (*c)++;
  if (!(*h & l->d.hbit))
    __atomic_store_n(h, *h | l->d.hbit, __ATOMIC_RELEASE);
}

/* Entry @k has left level @l: clear its bit after the last one */
void
dpcpe_hint_del(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k)
{
  if (!l->h.bytes)
    return;

  byte *h;
  u16 *c = hint_count(x, l, k, &h);
  ASSERT_DIE(*c);
  if ((*c < HINT_MAX) && !--*c)
    __atomic_store_n(h, *h & ~l->d.hbit, __ATOMIC_RELEASE);
}

/**
 * dpcpe_hint_check - recount the hints of the current layout (tests)
 * @x: engine
 *
 * Every level has its bit and the layout's hints, every count equals the
 * live entries behind it or is saturated, and every hint byte has exactly the
 * bits of its non-zero counts. Returns 1 if so.
 */
int
dpcpe_hint_check(struct dpcpe *x)
{
  struct dpcpe_layout *s = &x->s;
  struct dpcpe_hints *hs = &s->h;
  u64 n = hint_bytes(hs);
  u32 *cnt = mb_allocz(x->e.pool, n * hs->n * sizeof(u32));
  int ok = 1;

  for (uint li = 0; li < s->nlev; li++)
  {
    struct dpcpe_level *l = &s->lv[li];
    byte *own = dpcpe_level_owner(x, l);
    if ((l->h.bytes != hs->bytes) || (l->h.cnt != hs->cnt) || (l->d.hbit != (1 << (li % 8))))
      ok = 0;
    for (u32 sl = 0; ok && (sl < dpcpe_level_slots(l)); sl++)
      if (own[sl] < DPCPE_RETIRED)
	cnt[hint_index(hs, dpcpe_level_key(x, l, sl)) * hs->n + li % 8]++;
  }

  const u16 *c = dpcpe_ptr(&x->ca, hs->cnt);
  const byte *h = x->base + hs->bytes;
  for (u64 i = 0; ok && (i < n); i++)
  {
    uint bits = 0;
    for (uint b = 0; b < hs->n; b++)
    {
      u32 want = cnt[i * hs->n + b], have = c[i * hs->n + b];
      if ((have != want) && (have != HINT_MAX))
	ok = 0;
      if (have)
	bits |= 1 << b;
    }
    if (h[i] != bits)
      ok = 0;
  }

  mb_free(cnt);
  return ok;
}

/* Hint bytes that name some level (show lpm) */
u64
dpcpe_hint_slots_used(struct dpcpe *x)
{
  const struct dpcpe_hints *hs = &x->s.h;
  const byte *h = x->base + hs->bytes;
  u64 used = 0;

  for (u64 i = 0; i < hint_bytes(hs); i++)
    used += !!h[i];
  return used;
}
