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
 * array alone, and a random IPv4 address tests the /24 level only where its
 * /16 holds /24s, the /32 level rarely.
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
 *
 * IPv6 prefixes crowd under a few /16s (2001::/16 and 2a0x::/16 hold most
 * of the tier-1 table), whose bytes name nearly every level: an address
 * inside a prefix there still tested nearly all levels. So an IPv6 layout also
 * keeps fine hint bytes, one per hashed /32 (2^%DPCPE_FBITS, 64 KiB), with
 * their own counts, for the levels of length %DPCPE_FLEN or more, whose
 * entries each lie in one /32 (a shorter level's entry would cover many).
 * A lookup keeps those levels' bits of its /16 byte only where its /32 byte
 * has them too; /32s that share a byte only set more bits. An address inside
 * a prefix then tests far fewer levels.
 */

#include "nest/bird.h"
#include "nest/lpm-dpcpe.h"

#define HINT_MAX	0xffff		/* Saturated: the bit stays */

static inline u64 hint_bytes(const struct dpcpe_hints *h) { return 1ULL << h->bits; }
static inline u64 hint_cnt_bytes(const struct dpcpe_hints *h) { return hint_bytes(h) * h->n * sizeof(u16); }
static inline u64 fine_bytes(const struct dpcpe_hints *h) { return h->fbits ? (1ULL << h->fbits) : 0; }
static inline u64 fine_cnt_bytes(const struct dpcpe_hints *h) { return fine_bytes(h) * h->n * sizeof(u16); }

/* Does a level of length @len have fine hints? */
static inline int hint_fine(const struct dpcpe_hints *h, uint len) { return h->fbits && (len >= DPCPE_FLEN); }

static inline u64
fine_index(const struct dpcpe_hints *h, struct dpcpe_key k)
{
  return dpcpe_fine_index(k.hi >> 32, h->fbits);
}

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
  h->fbits = (x->bits == 128) ? DPCPE_FBITS : 0;
  h->bytes = dpcpe_arena_alloc(&x->la, hint_bytes(h));
  h->cnt = dpcpe_arena_alloc(&x->ca, hint_cnt_bytes(h));
  h->fine = h->fbits ? dpcpe_arena_alloc(&x->la, fine_bytes(h)) : 0;
  h->fcnt = h->fbits ? dpcpe_arena_alloc(&x->ca, fine_cnt_bytes(h)) : 0;
  if ((h->bytes == DPCPE_NOMEM) || (h->cnt == DPCPE_NOMEM) ||
      (h->fine == DPCPE_NOMEM) || (h->fcnt == DPCPE_NOMEM))
  {
    if (h->bytes != DPCPE_NOMEM) dpcpe_arena_free(&x->la, h->bytes, hint_bytes(h));
    if (h->cnt != DPCPE_NOMEM) dpcpe_arena_free(&x->ca, h->cnt, hint_cnt_bytes(h));
    if (h->fine && (h->fine != DPCPE_NOMEM)) dpcpe_arena_free(&x->la, h->fine, fine_bytes(h));
    if (h->fcnt && (h->fcnt != DPCPE_NOMEM)) dpcpe_arena_free(&x->ca, h->fcnt, fine_cnt_bytes(h));
    h->bytes = h->cnt = h->fine = h->fcnt = 0;
    h->fbits = 0;
    return -1;
  }

  memset(x->base + h->bytes, 0, hint_bytes(h));
  memset(dpcpe_ptr(&x->ca, h->cnt), 0, hint_cnt_bytes(h));
  if (h->fbits)
  {
    memset(x->base + h->fine, 0, fine_bytes(h));
    memset(dpcpe_ptr(&x->ca, h->fcnt), 0, fine_cnt_bytes(h));
  }

  for (uint i = 0; i < s->nlev; i++)
  {
    s->lv[i].h = *h;
    s->lv[i].d.hbit = 1 << (i % 8);
  }
  return 0;
}

/**
 * dpcpe_hint_masks - the hint bits of a layout's levels with fine hints and without
 * @s: layout
 * @fmask: bits of the levels with fine hints
 * @cmask: bits of the others (a bit of both kinds is in both)
 */
void
dpcpe_hint_masks(const struct dpcpe_layout *s, u8 *fmask, u8 *cmask)
{
  *fmask = *cmask = 0;
  for (uint i = 0; i < s->nlev; i++)
    if (hint_fine(&s->h, s->lv[i].d.len))
      *fmask |= s->lv[i].d.hbit;
    else
      *cmask |= s->lv[i].d.hbit;
}

/* Hint bytes and their counts freed; published bytes retired (readers may see them) */
static void
hint_free(struct dpcpe *x, u64 bytes, u64 size, u64 cnt, u64 cnt_size, int published)
{
  if (published)
    dpcpe_pending_block(x, bytes, size);
  else
    dpcpe_arena_free(&x->la, bytes, size);
  dpcpe_arena_free(&x->ca, cnt, cnt_size);
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

  hint_free(x, h->bytes, hint_bytes(h), h->cnt, hint_cnt_bytes(h), published);
  if (h->fbits)
    hint_free(x, h->fine, fine_bytes(h), h->fcnt, fine_cnt_bytes(h), published);

  h->bytes = h->cnt = h->fine = h->fcnt = 0;
  h->fbits = 0;
}

/* One more entry behind bit @bit of hint byte @hb (count @c): the bit set before the entry is stored */
static inline void
hint_up(byte *hb, u16 *c, uint bit)
{
  if (*c < HINT_MAX)
    (*c)++;
  if (!(*hb & bit))
    __atomic_store_n(hb, *hb | bit, __ATOMIC_RELEASE);
}

/* One entry less: the bit cleared after the last one is gone */
static inline void
hint_down(byte *hb, u16 *c, uint bit)
{
  ASSERT_DIE(*c);
  if ((*c < HINT_MAX) && !--*c)
    __atomic_store_n(hb, *hb & ~bit, __ATOMIC_RELEASE);
}

/* Entry @k of level @l counted (@change hint_up) or uncounted (hint_down) in its /16 byte and fine byte */
static inline void
hint_change(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k, void (*change)(byte *, u16 *, uint))
{
  struct dpcpe_hints *h = &l->h;
  if (!h->bytes)
    return;

  u64 i = hint_index(h, k);
  change(x->base + h->bytes + i, (u16 *) dpcpe_ptr(&x->ca, h->cnt) + i * h->n + hint_bit_index(l), l->d.hbit);

  if (hint_fine(h, l->d.len))
  {
    u64 f = fine_index(h, k);
    change(x->base + h->fine + f, (u16 *) dpcpe_ptr(&x->ca, h->fcnt) + f * h->n + hint_bit_index(l), l->d.hbit);
  }
}

/**
 * dpcpe_hint_add - count an entry in its hint bytes
 * @x: engine
 * @l: level the entry appears in
 * @k: the entry's key
 *
 * Counts entry @k of level @l in its /16 hint byte and, for levels long
 * enough, in its fine hint byte, setting their bits; called before the
 * entry is stored, so that no reader misses it. Does nothing for a level
 * whose entries are not counted.
 */
void
dpcpe_hint_add(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k)
{
  hint_change(x, l, k, hint_up);
}

/**
 * dpcpe_hint_del - uncount an entry from its hint bytes
 * @x: engine
 * @l: level the entry has left
 * @k: the entry's key
 *
 * The reverse of dpcpe_hint_add(), called after the entry is gone: a bit
 * is cleared when its last entry has left, unless its count has saturated.
 */
void
dpcpe_hint_del(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k)
{
  hint_change(x, l, k, hint_down);
}

/* Counts of @n hint bytes @h with their u16 counts @c (@bits per byte) against a recount @want */
static int
hint_recheck(const byte *h, const u16 *c, const u32 *want, u64 n, uint bits)
{
  for (u64 i = 0; i < n; i++)
  {
    uint have_bits = 0;
    for (uint b = 0; b < bits; b++)
    {
      u32 w = want[i * bits + b], have = c[i * bits + b];
      if ((have != w) && (have != HINT_MAX))
	return 0;
      if (have)
	have_bits |= 1 << b;
    }
    if (h[i] != have_bits)
      return 0;
  }
  return 1;
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
  u64 n = hint_bytes(hs), nf = fine_bytes(hs);
  u32 *cnt = mb_allocz(x->e.pool, n * hs->n * sizeof(u32));
  u32 *fcnt = nf ? mb_allocz(x->e.pool, nf * hs->n * sizeof(u32)) : NULL;
  int ok = 1;

  for (uint li = 0; li < s->nlev; li++)
  {
    struct dpcpe_level *l = &s->lv[li];
    byte *own = dpcpe_level_owner(x, l);
    if ((l->h.bytes != hs->bytes) || (l->h.cnt != hs->cnt) || (l->h.fine != hs->fine) ||
	(l->h.fcnt != hs->fcnt) || (l->h.fbits != hs->fbits) || (l->d.hbit != (1 << (li % 8))))
      ok = 0;
    for (u32 sl = 0; ok && (sl < dpcpe_level_slots(l)); sl++)
      if (own[sl] < DPCPE_RETIRED)
      {
	struct dpcpe_key k = dpcpe_level_key(x, l, sl);
	cnt[hint_index(hs, k) * hs->n + li % 8]++;
	if (hint_fine(hs, l->d.len))
	  fcnt[fine_index(hs, k) * hs->n + li % 8]++;
      }
  }

  ok = ok && hint_recheck(x->base + hs->bytes, dpcpe_ptr(&x->ca, hs->cnt), cnt, n, hs->n);
  ok = ok && (!nf || hint_recheck(x->base + hs->fine, dpcpe_ptr(&x->ca, hs->fcnt), fcnt, nf, hs->n));

  mb_free(cnt);
  if (fcnt)
    mb_free(fcnt);
  return ok;
}

/**
 * dpcpe_hint_slots_used - hint bytes that name some level
 * @x: engine
 * @fine: 1 for the fine hint bytes, 0 for the /16 ones
 *
 * Counts the non-zero hint bytes of the current layout, for `show lpm'.
 */
u64
dpcpe_hint_slots_used(struct dpcpe *x, int fine)
{
  const struct dpcpe_hints *hs = &x->s.h;
  const byte *h = x->base + (fine ? hs->fine : hs->bytes);
  u64 n = fine ? fine_bytes(hs) : hint_bytes(hs), used = 0;

  for (u64 i = 0; i < n; i++)
    used += !!h[i];
  return used;
}
