/*
 *	bloombird -- The dpcpe LPM engine: level tables and filters
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe levels
 *
 * A level holds the expanded entries of one length: a hash table for the
 * lookups and a Bloom filter in front of it, both in lookup memory, plus
 * an owner byte per table slot (the length of the prefix whose value the
 * entry carries) and a counter per filter bit in control memory.
 *
 * Table. Buckets are one cache line: seven 8-byte slots and a meta word for
 * keys up to 32 bits (the key and the complemented value in one word, so a
 * slot changes with a single store), four 16-byte slots for keys up to 64
 * bits and two 32-byte ones beyond. A key lives in its home bucket or, if
 * that was full, in the next one with room; each bucket counts the keys
 * that passed it, and a lookup goes on to the next bucket only while that
 * count is non-zero. Entries never move, so a reader never misses an entry
 * that is in the table while it looks: the counts are raised before an
 * entry is written and lowered after it is cleared. Keys of wider slots
 * are written before their value (the value word publishes the slot), and a
 * cleared wide slot is reused only after readers have left (epochs), so a
 * reader that saw a value sees the key that belongs to it.
 *
 * Filter. One 64-bit word per key (picked by the hash's low half) with k
 * bits in it at g_i = p + i * s (mod 64), p and s from the high half: a
 * filter test is one load that the vector variants gather for 8 or 16
 * addresses at once. The counters are 4 bits wide, so the bit filter the
 * lookups read is just "counter non-zero". A counter that reaches its
 * maximum stays there, so no delete can ever clear a bit another key still
 * needs: no false negative under any sequence. When many counters have
 * saturated the counters are recounted from the table and the filter words
 * rewritten in place; the new words have a subset of the old bits and
 * every live key's bits, so readers see no false negative meanwhile either.
 *
 * Size. A table is sized for its entries at a sizing load (0.88 for seven
 * slots a bucket, lower for fewer), grows to twice its entries when it
 * would pass its maximum load, and shrinks when it falls below a fifth of
 * it; the filter has @filter_bits per planned entry. Growing builds a new
 * table and filter and swaps them in through a new directory.
 */

#include "nest/bird.h"
#include "nest/lpm-dpcpe.h"

static const u8 kind_spb[] = { [DPCPE_K8] = 7, [DPCPE_K16] = 4, [DPCPE_K32] = 2 };
static const double kind_load[] = { [DPCPE_K8] = 0.88, [DPCPE_K16] = 0.70, [DPCPE_K32] = 0.60 };
static const double kind_max[] = { [DPCPE_K8] = 0.95, [DPCPE_K16] = 0.90, [DPCPE_K32] = 0.85 };

static inline byte *lv_tab(struct dpcpe *x, struct dpcpe_level *l) { return x->base + l->d.tab; }
static inline u64 *lv_flt(struct dpcpe *x, struct dpcpe_level *l) { return (u64 *) (x->base + l->d.flt); }
static inline u64 *lv_ctr(struct dpcpe *x, struct dpcpe_level *l) { return dpcpe_ptr(&x->ca, l->ctr); }

/**
 * dpcpe_level_lookup_bytes - lookup memory of a level
 * @l: level
 *
 * Returns the bytes that lookups read: the buckets and the filter words.
 */
u64
dpcpe_level_lookup_bytes(const struct dpcpe_level *l)
{
  return (u64) l->d.nb * DPCPE_BUCKET + (u64) l->d.nw * 8;
}

/**
 * dpcpe_level_control_bytes - control memory of a level
 * @l: level
 *
 * Returns the bytes only the writer keeps for the level: an owner length
 * per slot and the 4-bit counters behind the filter words.
 */
u64
dpcpe_level_control_bytes(const struct dpcpe_level *l)
{
  return (u64) l->d.nb * l->spb + (u64) l->d.nw * 32;
}

/*
 *	Overflow counts
 */

static inline u32
lv_over(struct dpcpe *x, struct dpcpe_level *l, u32 b)
{
  byte *t = lv_tab(x, l) + (size_t) b * DPCPE_BUCKET;
  switch (l->d.kind)
  {
  case DPCPE_K8:	return ((u64 *) t)[7] >> 32;
  case DPCPE_K16:	return ((struct dpcpe_s16 *) t)->aux;
  default:		return ((struct dpcpe_s32 *) t)->aux;
  }
}

static inline void
lv_over_set(struct dpcpe *x, struct dpcpe_level *l, u32 b, u32 v)
{
  byte *t = lv_tab(x, l) + (size_t) b * DPCPE_BUCKET;
  switch (l->d.kind)
  {
  case DPCPE_K8:	__atomic_store_n(&((u64 *) t)[7], (u64) v << 32, __ATOMIC_RELEASE); break;
  case DPCPE_K16:	__atomic_store_n(&((struct dpcpe_s16 *) t)->aux, v, __ATOMIC_RELEASE); break;
  default:		__atomic_store_n(&((struct dpcpe_s32 *) t)->aux, v, __ATOMIC_RELEASE); break;
  }
}

static inline u32 lv_next(struct dpcpe_level *l, u32 b) { return (b + 1 == l->d.nb) ? 0 : b + 1; }

/*
 *	Filter counters
 */

static inline uint
ctr_get(u64 *c, u32 w, uint pos)
{
  return (c[w * 4 + (pos >> 4)] >> ((pos & 15) * 4)) & 15;
}

static inline void
ctr_set(u64 *c, u32 w, uint pos, uint v)
{
  u64 *p = &c[w * 4 + (pos >> 4)];
  uint sh = (pos & 15) * 4;
  *p = (*p & ~(15ULL << sh)) | ((u64) v << sh);
}

static void
filter_add(struct dpcpe *x, struct dpcpe_level *l, u64 h)
{
  u64 *f = lv_flt(x, l), *c = lv_ctr(x, l);
  u32 w = dpcpe_range(dpcpe_ha(h), l->d.nw);
  u64 m = dpcpe_fmask(dpcpe_hb(h), l->d.k);
  uint cmax = x->o.cmax;

  for (u64 mm = m; mm; mm &= mm - 1)
  {
    uint pos = __builtin_ctzll(mm);
    uint v = ctr_get(c, w, pos);
    if (v < cmax)
    {
      ctr_set(c, w, pos, v + 1);
      if (v + 1 == cmax)
	l->saturated++;
    }
  }

  if ((f[w] & m) != m)
    __atomic_store_n(&f[w], f[w] | m, __ATOMIC_RELEASE);
}

static void
filter_del(struct dpcpe *x, struct dpcpe_level *l, u64 h)
{
  u64 *f = lv_flt(x, l), *c = lv_ctr(x, l);
  u32 w = dpcpe_range(dpcpe_ha(h), l->d.nw);
  u64 m = dpcpe_fmask(dpcpe_hb(h), l->d.k);
  uint cmax = x->o.cmax;
  u64 clear = 0;

  for (u64 mm = m; mm; mm &= mm - 1)
  {
    uint pos = __builtin_ctzll(mm);
    uint v = ctr_get(c, w, pos);
    if (v == cmax)
      continue;				/* Saturated: may undercount, stays */

    ASSERT_DIE(v > 0);
    ctr_set(c, w, pos, v - 1);
    if (v == 1)
      clear |= 1ULL << pos;
  }

  if (clear)
    __atomic_store_n(&f[w], f[w] & ~clear, __ATOMIC_RELEASE);
}

/* Recount the counters from the table; rewrite the filter words in place */
static void
filter_recount(struct dpcpe *x, struct dpcpe_level *l)
{
  u64 *f = lv_flt(x, l), *c = lv_ctr(x, l);
  byte *own = dpcpe_level_owner(x, l);
  u32 slots = dpcpe_level_slots(l);
  uint cmax = x->o.cmax;

  memset(c, 0, (size_t) l->d.nw * 32);
  l->saturated = 0;

  for (u32 s = 0; s < slots; s++)
    if (own[s] < DPCPE_RETIRED)
    {
      u64 h = dpcpe_level_hash(l, dpcpe_level_key(x, l, s));
      u32 w = dpcpe_range(dpcpe_ha(h), l->d.nw);
      for (u64 mm = dpcpe_fmask(dpcpe_hb(h), l->d.k); mm; mm &= mm - 1)
      {
	uint pos = __builtin_ctzll(mm);
	uint v = ctr_get(c, w, pos);
	if (v < cmax)
	{
	  ctr_set(c, w, pos, v + 1);
	  if (v + 1 == cmax)
	    l->saturated++;
	}
      }
    }

  for (u32 w = 0; w < l->d.nw; w++)
  {
    u64 bits = 0;
    for (uint q = 0; q < 4; q++)
      for (uint i = 0; i < 16; i++)
	if ((c[w * 4 + q] >> (i * 4)) & 15)
	  bits |= 1ULL << (q * 16 + i);

    ASSERT_DIE(!(bits & ~f[w]));
    if (bits != f[w])
      __atomic_store_n(&f[w], bits, __ATOMIC_RELEASE);
  }

  l->sat_rebuilt = l->saturated;
  l->filter_rebuilds++;
}

static void
filter_maybe_recount(struct dpcpe *x, struct dpcpe_level *l)
{
  /* Many saturated counters, and twice as many as after the last recount */
  if ((l->saturated >= 16) && ((u64) l->saturated * 32 > (u64) l->d.nw * 64) &&
      (l->saturated >= 2 * l->sat_rebuilt))
    filter_recount(x, l);
}

/*
 *	Keys
 */

/**
 * dpcpe_level_hash - hash of a key in a level
 * @l: level
 * @k: key, expanded to the level's length
 *
 * Hashes the key's words with the level's own seeds; the hash picks the
 * key's bucket and filter bits in @l.
 */
u64
dpcpe_level_hash(const struct dpcpe_level *l, struct dpcpe_key k)
{
  u32 w[4];
  dpcpe_key_words(k, w);
  return dpcpe_hash(w, l->d.words, l->d.sa, l->d.sb);
}

/**
 * dpcpe_level_key - key stored in a slot
 * @x: engine
 * @l: level
 * @slot: slot index in the level's table
 *
 * Reads the key back from the slot's bucket in the layout of the level's
 * kind (8-, 16- or 32-byte slots), for walks over a level's entries.
 */
struct dpcpe_key
dpcpe_level_key(struct dpcpe *x, struct dpcpe_level *l, u32 slot)
{
  u32 b = slot / l->spb, j = slot % l->spb;
  byte *t = lv_tab(x, l) + (size_t) b * DPCPE_BUCKET;

  switch (l->d.kind)
  {
  case DPCPE_K8:	return (struct dpcpe_key) { .hi = (((u64 *) t)[j] >> 32) << 32 };
  case DPCPE_K16:	return (struct dpcpe_key) { .hi = ((struct dpcpe_s16 *) t)[j].key };
  default:		return (struct dpcpe_key) { .hi = ((struct dpcpe_s32 *) t)[j].khi, .lo = ((struct dpcpe_s32 *) t)[j].klo };
  }
}

static inline int
slot_is(struct dpcpe *x, struct dpcpe_level *l, u32 b, u32 j, struct dpcpe_key k)
{
  byte *t = lv_tab(x, l) + (size_t) b * DPCPE_BUCKET;

  switch (l->d.kind)
  {
  case DPCPE_K8:	return (((u64 *) t)[j] >> 32) == (k.hi >> 32);
  case DPCPE_K16:	return ((struct dpcpe_s16 *) t)[j].key == k.hi;
  default:		return (((struct dpcpe_s32 *) t)[j].khi == k.hi) && (((struct dpcpe_s32 *) t)[j].klo == k.lo);
  }
}

static inline u32
slot_val(struct dpcpe *x, struct dpcpe_level *l, u32 slot)
{
  u32 b = slot / l->spb, j = slot % l->spb;
  byte *t = lv_tab(x, l) + (size_t) b * DPCPE_BUCKET;

  switch (l->d.kind)
  {
  case DPCPE_K8:	return ~(u32) ((u64 *) t)[j];
  case DPCPE_K16:	return ~((struct dpcpe_s16 *) t)[j].nval;
  default:		return ~((struct dpcpe_s32 *) t)[j].nval;
  }
}

/*
 *	Life cycle
 */

static void
level_shape(struct dpcpe *x, struct dpcpe_level *l, uint len, uint lo)
{
  memset(l, 0, sizeof(*l));
  l->d.len = len;
  l->d.kind = (len <= 32) ? DPCPE_K8 : (len <= 64) ? DPCPE_K16 : DPCPE_K32;
  l->d.k = x->o.filter_k;
  l->d.words = MAX(1, (len + 31) / 32);
  l->d.sa = dpcpe_seed_a(len);
  l->d.sb = dpcpe_seed_b(len);
  for (uint i = 0; i < 4; i++)
  {
    uint b = (len > 32 * i) ? MIN(32, len - 32 * i) : 0;
    l->d.mask[i] = b ? (u32) (~0ULL << (32 - b)) : 0;
  }
  l->lo = lo;
  l->spb = kind_spb[l->d.kind];
}

static int
level_alloc(struct dpcpe *x, struct dpcpe_level *l, u64 cap)
{
  double load = kind_load[l->d.kind];
  u64 nb = (u64) ((double) MAX(cap, 1) / (load * l->spb)) + 1;
  u64 nw = ((u64) ((double) nb * l->spb * load) * x->o.filter_bits + 63) / 64;
  if ((nb > 0x7fffffff / 8) || (nw > 0x7fffffff))
    return -1;
  nw = MAX(nw, 1);

  l->d.nb = nb;
  l->d.nw = nw;
  l->d.tab = dpcpe_arena_alloc(&x->la, nb * DPCPE_BUCKET);
  l->d.flt = dpcpe_arena_alloc(&x->la, nw * 8);
  l->own = dpcpe_arena_alloc(&x->ca, nb * l->spb);
  l->ctr = dpcpe_arena_alloc(&x->ca, nw * 32);

  if ((l->d.tab == DPCPE_NOMEM) || (l->d.flt == DPCPE_NOMEM) ||
      (l->own == DPCPE_NOMEM) || (l->ctr == DPCPE_NOMEM))
  {
    if (l->d.tab != DPCPE_NOMEM) dpcpe_arena_free(&x->la, l->d.tab, nb * DPCPE_BUCKET);
    if (l->d.flt != DPCPE_NOMEM) dpcpe_arena_free(&x->la, l->d.flt, nw * 8);
    if (l->own != DPCPE_NOMEM) dpcpe_arena_free(&x->ca, l->own, nb * l->spb);
    if (l->ctr != DPCPE_NOMEM) dpcpe_arena_free(&x->ca, l->ctr, nw * 32);
    l->d.tab = l->d.flt = l->own = l->ctr = 0;
    return -1;
  }

  memset(dpcpe_ptr(&x->ca, l->own), DPCPE_FREE, nb * l->spb);
  l->d.filter = (nb * DPCPE_BUCKET > x->o.filter_min);
  l->gen = ++x->gen_next;
  return 0;
}

/**
 * dpcpe_level_setup - create an empty level
 * @x: engine
 * @l: level to fill
 * @len: expanded length
 * @lo: the level holds prefixes of lengths (@lo, @len]
 * @cap: entries to size it for
 *
 * Returns -1 if memory ran out (nothing allocated).
 */
int
dpcpe_level_setup(struct dpcpe *x, struct dpcpe_level *l, uint len, uint lo, u32 cap)
{
  level_shape(x, l, len, lo);
  return level_alloc(x, l, cap);
}

/**
 * dpcpe_level_release - free a level's memory
 * @x: engine
 * @l: level
 * @published: readers may see it: its lookup blocks are retired, not freed
 */
void
dpcpe_level_release(struct dpcpe *x, struct dpcpe_level *l, int published)
{
  if (!l->d.tab)
    return;

  if (published)
  {
    dpcpe_pending_block(x, l->d.tab, (u64) l->d.nb * DPCPE_BUCKET);
    dpcpe_pending_block(x, l->d.flt, (u64) l->d.nw * 8);
  }
  else
  {
    dpcpe_arena_free(&x->la, l->d.tab, (u64) l->d.nb * DPCPE_BUCKET);
    dpcpe_arena_free(&x->la, l->d.flt, (u64) l->d.nw * 8);
  }
  dpcpe_arena_free(&x->ca, l->own, (u64) l->d.nb * l->spb);
  dpcpe_arena_free(&x->ca, l->ctr, (u64) l->d.nw * 32);
  l->d.tab = l->d.flt = l->own = l->ctr = 0;
}

/*
 *	Entries
 */

/**
 * dpcpe_level_find - find an entry (writer)
 * @x: engine
 * @l: level
 * @k: key, masked to the level's length
 * @h: its hash
 *
 * Returns the slot, or -1.
 */
s64
dpcpe_level_find(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k, u64 h)
{
  byte *own = dpcpe_level_owner(x, l);
  u32 b = dpcpe_bucket(h, l->d.nb);

  for (u32 n = 0; n < l->d.nb; n++, b = lv_next(l, b))
  {
    for (uint j = 0; j < l->spb; j++)
      if ((own[b * l->spb + j] < DPCPE_RETIRED) && slot_is(x, l, b, j, k))
	return b * l->spb + j;

    if (!lv_over(x, l, b))
      break;
  }

  return -1;
}

/**
 * dpcpe_level_insert - add an entry
 * @x: engine
 * @l: level with room (dpcpe_level_reserve())
 * @k: key, masked
 * @h: its hash
 * @val: value
 * @owner: length of the prefix it belongs to
 *
 * The filter bits, the hint bit and the overflow counts on its path are
 * set before the slot is written. Returns the slot.
 */
u32
dpcpe_level_insert(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k, u64 h, u32 val, uint owner)
{
  byte *own = dpcpe_level_owner(x, l);
  u32 home = dpcpe_bucket(h, l->d.nb), b = home;
  uint j = 0;

  for (u32 n = 0; ; n++, b = lv_next(l, b))
  {
    ASSERT_DIE(n < l->d.nb);
    for (j = 0; j < l->spb; j++)
      if (own[b * l->spb + j] == DPCPE_FREE)
	goto found;
  }

found:
  filter_add(x, l, h);
  dpcpe_hint_add(x, l, k);
  for (u32 c = home; c != b; c = lv_next(l, c))
    lv_over_set(x, l, c, lv_over(x, l, c) + 1);

  byte *t = lv_tab(x, l) + (size_t) b * DPCPE_BUCKET;
  switch (l->d.kind)
  {
  case DPCPE_K8:
    __atomic_store_n(&((u64 *) t)[j], ((k.hi >> 32) << 32) | (u32) ~val, __ATOMIC_RELEASE);
    break;
  case DPCPE_K16:
    __atomic_store_n(&((struct dpcpe_s16 *) t)[j].key, k.hi, __ATOMIC_RELAXED);
    __atomic_store_n(&((struct dpcpe_s16 *) t)[j].nval, ~val, __ATOMIC_RELEASE);
    break;
  default:
    __atomic_store_n(&((struct dpcpe_s32 *) t)[j].khi, k.hi, __ATOMIC_RELAXED);
    __atomic_store_n(&((struct dpcpe_s32 *) t)[j].klo, k.lo, __ATOMIC_RELAXED);
    __atomic_store_n(&((struct dpcpe_s32 *) t)[j].nval, ~val, __ATOMIC_RELEASE);
    break;
  }

  own[b * l->spb + j] = owner;
  l->count++;
  l->used++;
  return b * l->spb + j;
}

/**
 * dpcpe_level_set - give an entry another value and owner (one store)
 */
void
dpcpe_level_set(struct dpcpe *x, struct dpcpe_level *l, u32 slot, u32 val, uint owner)
{
  u32 b = slot / l->spb, j = slot % l->spb;
  byte *t = lv_tab(x, l) + (size_t) b * DPCPE_BUCKET;

  switch (l->d.kind)
  {
  case DPCPE_K8:
  {
    u64 *s = &((u64 *) t)[j];
    __atomic_store_n(s, ((*s >> 32) << 32) | (u32) ~val, __ATOMIC_RELEASE);
    break;
  }
  case DPCPE_K16:
    __atomic_store_n(&((struct dpcpe_s16 *) t)[j].nval, ~val, __ATOMIC_RELEASE);
    break;
  default:
    __atomic_store_n(&((struct dpcpe_s32 *) t)[j].nval, ~val, __ATOMIC_RELEASE);
    break;
  }

  dpcpe_level_owner(x, l)[slot] = owner;
}

/**
 * dpcpe_level_delete - remove an entry
 * @x: engine
 * @l: level
 * @slot: its slot
 * @h: its key's hash
 *
 * The slot is cleared before the hint, the overflow counts and the filter
 * bits are lowered. A wide slot is retired: reused once readers have left.
 */
void
dpcpe_level_delete(struct dpcpe *x, struct dpcpe_level *l, u32 slot, u64 h)
{
  u32 b = slot / l->spb, j = slot % l->spb;
  byte *t = lv_tab(x, l) + (size_t) b * DPCPE_BUCKET;
  byte *own = dpcpe_level_owner(x, l);
  struct dpcpe_key k = dpcpe_level_key(x, l, slot);

  switch (l->d.kind)
  {
  case DPCPE_K8:
    __atomic_store_n(&((u64 *) t)[j], 0, __ATOMIC_RELEASE);
    own[slot] = DPCPE_FREE;
    l->used--;
    break;
  case DPCPE_K16:
    __atomic_store_n(&((struct dpcpe_s16 *) t)[j].nval, 0, __ATOMIC_RELEASE);
    own[slot] = DPCPE_RETIRED;
    break;
  default:
    __atomic_store_n(&((struct dpcpe_s32 *) t)[j].nval, 0, __ATOMIC_RELEASE);
    own[slot] = DPCPE_RETIRED;
    break;
  }

  if (own[slot] == DPCPE_RETIRED)
  {
    if (x->nrs == x->rs_max)
    {
      uint n = x->rs_max ? 2 * x->rs_max : 64;
      struct dpcpe_rslot *r = mb_alloc(x->e.pool, n * sizeof(struct dpcpe_rslot));
      if (x->rs)
      {
	memcpy(r, x->rs, x->nrs * sizeof(struct dpcpe_rslot));
	mb_free(x->rs);
      }
      x->rs = r;
      x->rs_max = n;
    }
    x->rs[x->nrs++] = (struct dpcpe_rslot) { .level = l - x->s.lv, .slot = slot, .gen = l->gen, .epoch = 0 };
  }

  for (u32 c = dpcpe_bucket(h, l->d.nb); c != b; c = lv_next(l, c))
    lv_over_set(x, l, c, lv_over(x, l, c) - 1);

  dpcpe_hint_del(x, l, k);
  filter_del(x, l, h);
  l->count--;
  filter_maybe_recount(x, l);
}

/**
 * dpcpe_level_reclaim - make retired wide slots reusable
 * @x: engine
 *
 * Slots tagged with an epoch that every reader has left become free. Slots
 * of a table that has since been replaced are dropped.
 */
void
dpcpe_level_reclaim(struct dpcpe *x)
{
  uint i = 0;
  u64 safe_ep = 0;

  for (; i < x->nrs; i++)
  {
    struct dpcpe_rslot *r = &x->rs[i];
    if (!r->epoch)
      break;				/* Not tagged yet: this update's own */

    if (r->epoch > safe_ep)
    {
      if (!lpm_epoch_safe(&x->e, r->epoch))
	break;
      safe_ep = r->epoch;
    }

    if ((r->level < x->s.nlev) && (x->s.lv[r->level].gen == r->gen))
    {
      struct dpcpe_level *l = &x->s.lv[r->level];
      byte *own = dpcpe_level_owner(x, l);
      ASSERT_DIE(own[r->slot] == DPCPE_RETIRED);
      own[r->slot] = DPCPE_FREE;
      l->used--;
    }
  }

  if (i)
  {
    memmove(x->rs, x->rs + i, (x->nrs - i) * sizeof(struct dpcpe_rslot));
    x->nrs -= i;
  }
}

/*
 *	Size
 */

static int
level_resize(struct dpcpe *x, struct dpcpe_level *l, u64 cap)
{
  struct dpcpe_level n;
  level_shape(x, &n, l->d.len, l->lo);
  if (level_alloc(x, &n, cap) < 0)
    return -1;

  byte *own = dpcpe_level_owner(x, l);
  u32 slots = dpcpe_level_slots(l);
  for (u32 s = 0; s < slots; s++)
    if (own[s] < DPCPE_RETIRED)
    {
      struct dpcpe_key k = dpcpe_level_key(x, l, s);
      dpcpe_level_insert(x, &n, k, dpcpe_level_hash(&n, k), slot_val(x, l, s), own[s]);
    }

  n.prefixes = l->prefixes;
  n.filter_rebuilds = l->filter_rebuilds;
  n.h = l->h;				/* Entries copied uncounted: the counts stay */
  n.d.hbit = l->d.hbit;
  x->resizes++;
  dpcpe_level_release(x, l, 1);
  *l = n;
  x->dir_dirty = 1;
  return 0;
}

/**
 * dpcpe_level_reserve - make room for more entries
 * @x: engine
 * @l: level
 * @more: entries about to be added (at most)
 *
 * Grows the table (to twice the entries it will hold) if they would pass
 * its maximum load. Returns -1 if memory ran out (the level unchanged).
 */
int
dpcpe_level_reserve(struct dpcpe *x, struct dpcpe_level *l, u64 more)
{
  u64 slots = dpcpe_level_slots(l);
  if ((double) (l->used + more) <= kind_max[l->d.kind] * slots)
    return 0;

  return level_resize(x, l, 2 * (l->count + more));
}

/**
 * dpcpe_level_shrink - give memory back after many deletions
 */
void
dpcpe_level_shrink(struct dpcpe *x, struct dpcpe_level *l)
{
  u64 slots = dpcpe_level_slots(l);
  if ((slots > 256) && ((double) l->count < 0.2 * kind_load[l->d.kind] * slots))
    level_resize(x, l, 2 * (u64) l->count);	/* Failure is harmless */
}

/*
 *	Statistics and checks
 */

/**
 * dpcpe_level_fp_sample - measure the false-positive rate
 * @x: engine
 * @l: level
 * @samples: random keys to try
 *
 * Uniformly random keys of the level's length that are not in it are
 * tested against its filter; returns the fraction that passed.
 */
double
dpcpe_level_fp_sample(struct dpcpe *x, struct dpcpe_level *l, uint samples)
{
  u64 r = 0x9e3779b97f4a7c15ULL ^ l->d.len;
  uint neg = 0, pos = 0;

  for (uint i = 0; i < samples; i++)
  {
    struct dpcpe_key k;
    r ^= r >> 12; r ^= r << 25; r ^= r >> 27; k.hi = r * 0x2545f4914f6cdd1dULL;
    r ^= r >> 12; r ^= r << 25; r ^= r >> 27; k.lo = r * 0x2545f4914f6cdd1dULL;
    k = dpcpe_key_mask(k, l->d.len);

    u64 h = dpcpe_level_hash(l, k);
    if (dpcpe_level_find(x, l, k, h) >= 0)
      continue;

    neg++;
    if (dpcpe_filter_test(x->base, &l->d, h))
      pos++;
  }

  return neg ? (double) pos / neg : 0;
}

/**
 * dpcpe_level_check - verify a level's invariants (tests)
 *
 * Every live entry passes the filter and is found from its home bucket;
 * the overflow counts equal the keys that passed each bucket; the entry
 * counts add up. Returns 1 if all hold.
 */
int
dpcpe_level_check(struct dpcpe *x, struct dpcpe_level *l)
{
  byte *own = dpcpe_level_owner(x, l);
  u32 slots = dpcpe_level_slots(l), live = 0, used = 0;
  u32 *over = mb_allocz(x->e.pool, l->d.nb * sizeof(u32));
  int ok = 1;

  for (u32 s = 0; s < slots; s++)
  {
    if (own[s] != DPCPE_FREE)
      used++;
    if (own[s] >= DPCPE_RETIRED)
      continue;

    live++;
    struct dpcpe_key k = dpcpe_level_key(x, l, s);
    u64 h = dpcpe_level_hash(l, k);
    if (!dpcpe_filter_test(x->base, &l->d, h))
      ok = 0;
    if (dpcpe_level_find(x, l, k, h) != s)
      ok = 0;
    if ((own[s] <= l->lo) || (own[s] > l->d.len))
      ok = 0;

    for (u32 c = dpcpe_bucket(h, l->d.nb); c != s / l->spb; c = lv_next(l, c))
      over[c]++;
  }

  for (u32 b = 0; b < l->d.nb; b++)
    if (over[b] != lv_over(x, l, b))
      ok = 0;

  mb_free(over);
  return ok && (live == l->count) && (used == l->used);
}
