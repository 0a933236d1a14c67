/*
 *	bloombird -- The dpcpe LPM engine: private interface
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_LPM_DPCPE_H_
#define _BIRD_LPM_DPCPE_H_

#include "nest/lpm.h"

/*
 * Shared by the engine files (nest/lpm-dpcpe*.c), the vector lookups
 * (sysdep/x86/lpm-dpcpe-*.c), the tests and the benchmark. Consumers of
 * the engine use nest/lpm.h only.
 *
 * Layout. The engine expands every prefix to a level: a direct array
 * indexed by the first @dbits address bits holds prefixes up to /dbits,
 * and each hash level of length L holds the prefixes of lengths (L', L]
 * (L' the next shorter level), expanded to L bits. A lookup tries the
 * levels longest first and ends in the array. Each level is a hash table
 * of 64-byte buckets with a one-word-per-key Bloom filter in front.
 *
 * Hints. A hint byte for each value of an address's first @hbits bits
 * (16, or @dbits if fewer): bit (i mod 8) is set while the level of index
 * i (shortest first) holds an entry whose key begins with those bits. The
 * bytes (64 KiB) stay in the cache, so reading them costs no memory
 * round trip of its own. A lookup reads its hint
 * first and hashes, tests and probes only the levels whose bit is set:
 * an address under no longer prefix (most random addresses, and most
 * IPv6 space) is answered by the array and its hint alone, and one under
 * a few lengths tests only those. A set bit may be stale (levels share
 * bits beyond 8, counts saturate); a clear bit never is: the bit is set
 * before an entry is stored and cleared after the last one is gone.
 *
 * Fine hints (IPv6). Most IPv6 prefixes sit under a few /16s, whose hint
 * bytes name nearly every level, so IPv6 also keeps a byte per hashed /32
 * (2^@fbits of them) for the levels of length 32 or more (@fmask): an
 * address's hint is its /16 byte with those levels' bits kept only if its
 * /32 byte has them too (dpcpe_hint_get()). Hashed /32s may share a byte:
 * that sets more bits, never fewer.
 *
 * Lookup memory lives in one &lpm_region and is addressed by offsets: a
 * header (&dpcpe_hdr) at offset 0 names the current directory
 * (&dpcpe_dir), which names the array and, per level, the table and
 * filter. A directory is never changed once published; structural changes
 * publish a new one.
 */

/* Levels (struct lpm_params.levels, for the dynamic-programming choice) */
#define DPCPE_MIN_LEVELS	2
#define DPCPE_MAX_LEVELS	16
#define DPCPE_DEF_LEVELS6	8	/* IPv6 default: see the DOC of lpm-dpcpe-levels.c */
#define DPCPE_DIR_LEVELS	129	/* Most levels a directory holds (per-length ablation) */

#define DPCPE_DBITS4		20	/* IPv4 direct array: /20, 2^20 entries */
#define DPCPE_DBITS6		16	/* IPv6 direct array: /16 */
#define DPCPE_HBITS		16	/* Hint bytes: by the first 16 bits at most */
#define DPCPE_FBITS		16	/* Fine hint bytes (IPv6): 2^16, by a hash of the first 32 bits */
#define DPCPE_FLEN		32	/* Levels of this length or more have fine hints */

#define DPCPE_NOMEM		(~(u64) 0)	/* Failed arena allocation */

/* Slot kinds: how a level's table stores its keys */
enum dpcpe_kind {
  DPCPE_K8 = 0,				/* Key up to 32 bits: one u64 per slot (key << 32 | ~value), 7 slots + meta */
  DPCPE_K16,				/* Key up to 64 bits: &dpcpe_s16, 4 slots */
  DPCPE_K32,				/* Key up to 128 bits: &dpcpe_s32, 2 slots */
};

struct dpcpe_s16 {
  u64 key;				/* Masked address, first 64 bits */
  u32 nval;				/* ~value, 0 = empty */
  u32 aux;				/* Slot 0: the bucket's overflow count */
};

struct dpcpe_s32 {
  u64 khi, klo;
  u32 nval;
  u32 aux;
  u64 pad;
};

#define DPCPE_BUCKET		64	/* Bytes per bucket: one cache line */

/* One level as the lookups see it (part of a directory) */
struct dpcpe_ldesc {
  u64 tab;				/* Offset of the table (nb buckets) */
  u64 flt;				/* Offset of the filter (nw u64 words) */
  u32 nb;				/* Buckets */
  u32 nw;				/* Filter words */
  u32 sa, sb;				/* Hash seeds */
  u32 mask[4];				/* Address mask of the level, by 32-bit word */
  u8 len;				/* Expanded length */
  u8 kind;				/* enum dpcpe_kind */
  u8 k;					/* Filter bits per key */
  u8 words;				/* Address words hashed: ceil(len / 32) */
  u8 filter;				/* Lookups test the filter before the table */
  u8 hbit;				/* The level's bit in the hint bytes (never 0) */
  u8 pad[2];
};

/* What the lookups read: immutable once published */
struct dpcpe_dir {
  u64 arr;				/* Offset of the direct array: 2^dbits of ~value */
  u64 hint;				/* Offset of the hint bytes: 2^hbits, by the first hbits bits */
  u32 dbits;
  u32 nlevels;
  u32 hbits;
  u32 fbits;				/* Fine hint bytes: 2^fbits, by a hash of the first 32 bits; 0: none */
  u64 fine;				/* Offset of the fine hint bytes */
  u8 fmask;				/* Bits of the levels with fine hints */
  u8 cmask;				/* Bits of the levels without */
  u8 pad[6];
  struct dpcpe_ldesc lv[];		/* Longest first */
};

/* Offset 0 of the lookup region */
struct dpcpe_hdr {
  u32 magic;
  u32 version;
  _Atomic u64 seq;			/* Update phases: odd while the writer changes lookup memory */
  _Atomic u64 dir;			/* Offset of the current &dpcpe_dir */
};

#define DPCPE_MAGIC		0x64706365	/* "dpce" */
#define DPCPE_VERSION		3	/* 2: hint bytes, 3: fine hint bytes */

/*
 *	Hashing: one 64-bit hash per key, as two 32-bit halves (a, b) so that
 *	the vector variants compute it in 32-bit lanes. a picks the filter word,
 *	b the bits in it (double hashing) and the table bucket.
 */

static inline u32
dpcpe_fmix(u32 x)
{
  x ^= x >> 16;
  x *= 0x85ebca6bU;
  x ^= x >> 13;
  x *= 0xc2b2ae35U;
  x ^= x >> 16;
  return x;
}

static inline u32 dpcpe_seed_a(uint len) { return 0x9e3779b9U * (len + 1); }
static inline u32 dpcpe_seed_b(uint len) { return 0x7f4a7c15U ^ (0x2545f491U * (len + 1)); }

/* Hash of the masked address words @w[0..n) */
static inline u64
dpcpe_hash(const u32 *w, uint n, u32 sa, u32 sb)
{
  u32 a = sa, b = sb;
  for (uint i = 0; i < n; i++)
  {
    a = dpcpe_fmix(a ^ w[i]);
    b = dpcpe_fmix(b ^ w[i]);
  }
  return ((u64) b << 32) | a;
}

static inline u32 dpcpe_ha(u64 h) { return (u32) h; }
static inline u32 dpcpe_hb(u64 h) { return (u32) (h >> 32); }

/* Multiply-shift range reduction: x in [0, 2^32) -> [0, n) */
static inline u32 dpcpe_range(u32 x, u32 n) { return (u32) (((u64) x * n) >> 32); }

/* Filter bits of a key: k bits at g_i = p + i * s (mod 64), s odd */
static inline u64
dpcpe_fmask(u32 b, uint k)
{
  uint p = b & 63, s = ((b >> 6) & 63) | 1;
  u64 m = 0;
  for (uint i = 0; i < k; i++)
    m |= 1ULL << ((p + i * s) & 63);
  return m;
}

static inline int
dpcpe_filter_test(const byte *base, const struct dpcpe_ldesc *l, u64 h)
{
  u64 w = __atomic_load_n((const u64 *) (base + l->flt) + dpcpe_range(dpcpe_ha(h), l->nw), __ATOMIC_RELAXED);
  u64 m = dpcpe_fmask(dpcpe_hb(h), l->k);
  return (w & m) == m;
}

static inline u32 dpcpe_bucket(u64 h, u32 nb) { return dpcpe_range(dpcpe_hb(h), nb); }

/*
 *	Probes. Each returns the stored ~value of the key, 0 if absent. A bucket
 *	is followed by the next one only while its overflow count is non-zero,
 *	and at most once around the table: in a small table every bucket can
 *	have a non-zero count at once (keys of each spilled into the next), and
 *	a key that is in none of them must still end the walk.
 */

static inline u32
dpcpe_probe8(const byte *base, const struct dpcpe_ldesc *l, u64 h, u32 key)
{
  const u64 *t = (const u64 *) (base + l->tab);
  u32 b = dpcpe_bucket(h, l->nb);

  for (u32 n = l->nb; n; n--)
  {
    const u64 *s = t + 8 * (size_t) b;
    for (uint j = 0; j < 7; j++)
    {
      u64 w = __atomic_load_n(&s[j], __ATOMIC_ACQUIRE);
      if (((u32) (w >> 32) == key) && (u32) w)
	return (u32) w;
    }
    if (!(__atomic_load_n(&s[7], __ATOMIC_ACQUIRE) >> 32))
      return 0;
    b = (b + 1 == l->nb) ? 0 : b + 1;
  }

  return 0;
}

static inline u32
dpcpe_probe16(const byte *base, const struct dpcpe_ldesc *l, u64 h, u64 key)
{
  const struct dpcpe_s16 *t = (const struct dpcpe_s16 *) (base + l->tab);
  u32 b = dpcpe_bucket(h, l->nb);

  for (u32 n = l->nb; n; n--)
  {
    const struct dpcpe_s16 *s = t + 4 * (size_t) b;
    for (uint j = 0; j < 4; j++)
    {
      /* Value first, then the key: a published value's key is stable */
      u32 v = __atomic_load_n(&s[j].nval, __ATOMIC_ACQUIRE);
      if (v && (__atomic_load_n(&s[j].key, __ATOMIC_ACQUIRE) == key))
	return v;
    }
    if (!__atomic_load_n(&s[0].aux, __ATOMIC_ACQUIRE))
      return 0;
    b = (b + 1 == l->nb) ? 0 : b + 1;
  }

  return 0;
}

static inline u32
dpcpe_probe32(const byte *base, const struct dpcpe_ldesc *l, u64 h, u64 khi, u64 klo)
{
  const struct dpcpe_s32 *t = (const struct dpcpe_s32 *) (base + l->tab);
  u32 b = dpcpe_bucket(h, l->nb);

  for (u32 n = l->nb; n; n--)
  {
    const struct dpcpe_s32 *s = t + 2 * (size_t) b;
    for (uint j = 0; j < 2; j++)
    {
      u32 v = __atomic_load_n(&s[j].nval, __ATOMIC_ACQUIRE);
      if (v && (__atomic_load_n(&s[j].khi, __ATOMIC_ACQUIRE) == khi) &&
	  (__atomic_load_n(&s[j].klo, __ATOMIC_ACQUIRE) == klo))
	return v;
    }
    if (!__atomic_load_n(&s[0].aux, __ATOMIC_ACQUIRE))
      return 0;
    b = (b + 1 == l->nb) ? 0 : b + 1;
  }

  return 0;
}

/*
 *	Reader side of the update protocol (see the DOC of lpm-dpcpe.c): a lookup
 *	is good if it overlapped at most one update phase, else it is repeated.
 */

static inline const struct dpcpe_hdr *dpcpe_hdr_of(const byte *base) { return (const struct dpcpe_hdr *) base; }

static inline u64
dpcpe_read_start(const byte *base)
{
  return atomic_load_explicit(&((struct dpcpe_hdr *) base)->seq, memory_order_acquire);
}

static inline const struct dpcpe_dir *
dpcpe_dir_get(const byte *base)
{
  return (const struct dpcpe_dir *) (base + atomic_load_explicit(&((struct dpcpe_hdr *) base)->dir, memory_order_acquire));
}

static inline int
dpcpe_read_ok(const byte *base, u64 s1)
{
  atomic_thread_fence(memory_order_acquire);
  u64 s2 = atomic_load_explicit(&((struct dpcpe_hdr *) base)->seq, memory_order_relaxed);
  return ((s2 + 1) / 2 - s1 / 2) <= 1;
}

/* Where a key's filter word and home bucket are: prefetched before they are read */
static inline void
dpcpe_prefetch_level(const byte *base, const struct dpcpe_ldesc *l, u64 h)
{
  if (l->filter)
    __builtin_prefetch(base + l->flt + 8 * (size_t) dpcpe_range(dpcpe_ha(h), l->nw));
  __builtin_prefetch(base + l->tab + (size_t) dpcpe_bucket(h, l->nb) * DPCPE_BUCKET);
}

/* Probe of one level for the masked key words @k */
static inline u32
dpcpe_probe_level(const byte *base, const struct dpcpe_ldesc *l, u64 h, const u32 *k)
{
  if (l->kind == DPCPE_K8)
    return dpcpe_probe8(base, l, h, k[0]);
  if (l->kind == DPCPE_K16)
    return dpcpe_probe16(base, l, h, ((u64) k[0] << 32) | k[1]);
  return dpcpe_probe32(base, l, h, ((u64) k[0] << 32) | k[1], ((u64) k[2] << 32) | k[3]);
}

/* The levels a single lookup prefetches at once: one memory round trip, not one per level */
#define DPCPE_PF_LEVELS		16

/* Index of an address's array entry and of its hint byte */
static inline u32 dpcpe_arr_slot(const struct dpcpe_dir *d, u32 a0) { return d->dbits ? (a0 >> (32 - d->dbits)) : 0; }
static inline u32 dpcpe_hint_slot(const struct dpcpe_dir *d, u32 a0) { return d->hbits ? (a0 >> (32 - d->hbits)) : 0; }

/* Index of the fine hint byte of a /32 (@fbits > 0); the writer uses it too */
static inline u32 dpcpe_fine_index(u32 a0, uint fbits) { return (a0 * 0x9e3779b1U) >> (32 - fbits); }

/* The hint of an address: its /16 byte, the levels with fine hints kept if its /32 byte has them */
static inline uint
dpcpe_hint_get(const byte *base, const struct dpcpe_dir *d, u32 a0)
{
  uint h = __atomic_load_n(base + d->hint + dpcpe_hint_slot(d, a0), __ATOMIC_ACQUIRE);
  if (h & d->fmask)
    h &= d->cmask | __atomic_load_n(base + d->fine + dpcpe_fine_index(a0, d->fbits), __ATOMIC_ACQUIRE);
  return h;
}

/*
 * One lookup in a directory, address words @a (IPv4: one word); returns
 * ~value, or 0. Reads the hint, hashes the levels it names and prefetches
 * their filter words, home buckets and the array entry, so that the misses
 * overlap; then walks those levels longest first.
 */
static inline u32
dpcpe_find(const byte *base, const struct dpcpe_dir *d, const u32 *a)
{
  u64 hs[DPCPE_PF_LEVELS];
  uint np = MIN(d->nlevels, DPCPE_PF_LEVELS);
  const u32 *arr = (const u32 *) (base + d->arr) + dpcpe_arr_slot(d, a[0]);
  __builtin_prefetch(arr);
  uint hint = dpcpe_hint_get(base, d, a[0]);

  for (uint i = 0; i < np; i++)
  {
    const struct dpcpe_ldesc *l = &d->lv[i];
    if (!(hint & l->hbit))
      continue;
    u32 k[4] = { a[0] & l->mask[0], a[1] & l->mask[1], a[2] & l->mask[2], a[3] & l->mask[3] };
    hs[i] = dpcpe_hash(k, l->words, l->sa, l->sb);
    dpcpe_prefetch_level(base, l, hs[i]);
  }

  for (uint i = 0; i < d->nlevels; i++)
  {
    const struct dpcpe_ldesc *l = &d->lv[i];
    if (!(hint & l->hbit))
      continue;
    u32 k[4] = { a[0] & l->mask[0], a[1] & l->mask[1], a[2] & l->mask[2], a[3] & l->mask[3] };
    u64 h = (i < np) ? hs[i] : dpcpe_hash(k, l->words, l->sa, l->sb);
    if (l->filter && !dpcpe_filter_test(base, l, h))
      continue;
    u32 v = dpcpe_probe_level(base, l, h, k);
    if (v)
      return v;
  }

  return __atomic_load_n(arr, __ATOMIC_RELAXED);
}

static inline u32
dpcpe_find4(const byte *base, const struct dpcpe_dir *d, u32 a)
{
  u32 w[4] = { a, 0, 0, 0 };
  return dpcpe_find(base, d, w);
}

static inline u32
dpcpe_find6(const byte *base, const struct dpcpe_dir *d, const u32 *a)
{
  return dpcpe_find(base, d, a);
}

/* Probe of one lane by the vector variants: the level's key from the address */
static inline u32
dpcpe_probe_lane6(const byte *base, const struct dpcpe_ldesc *l, u64 h, const u32 *a)
{
  u32 k[4] = { a[0] & l->mask[0], a[1] & l->mask[1], a[2] & l->mask[2], a[3] & l->mask[3] };
  return dpcpe_probe_level(base, l, h, k);
}

/*
 *	Batches. A group of up to %DPCPE_GROUP addresses goes through the levels
 *	in windows of %DPCPE_WIN levels, in three stages, so that one memory
 *	round trip serves the whole group at each stage:
 *
 *	0. (shared) read the hint bytes (prefetched with the array entries,
 *	   for the next group while this one runs) into a lane mask per level;
 *	A. (variant) hash the addresses of the window's levels, store the
 *	   halves, prefetch the filter words (or home buckets for levels probed
 *	   without a filter) of the lanes whose hint names the level;
 *	B. (variant) test the filters of those lanes; then (shared) prefetch the home bucket
 *	   of each lane's longest positive level;
 *	C. (shared) probe, longest positive level first, for each lane.
 *
 *	Lanes answered by a level leave the group; after the last window the
 *	rest read the array. The variants differ only in how A and B compute
 *	(vector hashes, gathers); the probes and the order are the scalar ones.
 */

#define DPCPE_GROUP		64
#define DPCPE_WIN		16

struct dpcpe_group {
  u32 w[4][DPCPE_GROUP];		/* Address words, by word (IPv4: w[0] only) */
  u32 ha[DPCPE_WIN][DPCPE_GROUP];	/* Hash halves per level of the window */
  u32 hb[DPCPE_WIN][DPCPE_GROUP];
  u64 pos[DPCPE_WIN];			/* Lanes whose filter passed (or that have none) */
  u64 lm[DPCPE_WIN];			/* Active lanes whose hint names the level */
  u8 hint[DPCPE_GROUP];			/* Hint bytes of the lanes */
  u64 open;				/* Lanes not answered yet */
  u64 active;				/* Of those, the lanes whose hint names a level still to ask */
  u32 res[DPCPE_GROUP];			/* ~value found, 0 = none yet */
  uint n;				/* Lanes in the group */
} __attribute__((aligned(64)));

/* Stage A, shared part: prefetch what lanes of level @l need first */
static inline void
dpcpe_group_prefetch(const byte *base, const struct dpcpe_ldesc *l, const struct dpcpe_group *g, uint li)
{
  for (u64 m = g->lm[li]; m; m &= m - 1)
  {
    uint j = __builtin_ctzll(m);
    u64 h = ((u64) g->hb[li][j] << 32) | g->ha[li][j];
    if (l->filter)
      __builtin_prefetch(base + l->flt + 8 * (size_t) dpcpe_range(g->ha[li][j], l->nw));
    else
      __builtin_prefetch(base + l->tab + (size_t) dpcpe_bucket(h, l->nb) * DPCPE_BUCKET);
  }
}

/* Stage 0: prefetch the array entries of @n addresses @a (@words each) */
static inline void
dpcpe_prefetch_slots(const byte *base, const struct dpcpe_dir *d, const u32 *a, uint n, uint words)
{
  for (uint j = 0; j < n; j++)
    __builtin_prefetch((const u32 *) (base + d->arr) + dpcpe_arr_slot(d, a[(size_t) j * words]));
}

/* Stage 0: the lanes' hint bytes; the variant turns them into g->lm (with g->active) */
static inline void
dpcpe_group_hints(const byte *base, const struct dpcpe_dir *d, struct dpcpe_group *g)
{
  u64 named = 0;
  for (uint j = 0; j < g->n; j++)
  {
    g->hint[j] = dpcpe_hint_get(base, d, g->w[0][j]);
    named |= (u64) !!g->hint[j] << j;
  }
  for (uint j = g->n; j < DPCPE_GROUP; j++)
    g->hint[j] = 0;

  /* Lanes whose hint names no level are the array's */
  g->active &= named;
}

/* Lanes whose hint has any bit of @bit (scalar) */
static inline u64
dpcpe_group_lanes(const struct dpcpe_group *g, uint bit)
{
  u64 m = 0;
  for (uint j = 0; j < DPCPE_GROUP; j++)
    m |= (u64) !!(g->hint[j] & bit) << j;
  return m;
}

/* Stage B, shared part, and stage C for the window of levels @w0 .. @w0 + @nw - 1 */
static inline void
dpcpe_group_probe(const byte *base, const struct dpcpe_dir *d, struct dpcpe_group *g, uint w0, uint nw)
{
  /* Prefetch the candidate buckets (false positives make a few lanes have two) */
  for (uint i = 0; i < nw; i++)
  {
    const struct dpcpe_ldesc *l = &d->lv[w0 + i];
    for (u64 m = g->pos[i] & g->active; m; m &= m - 1)
    {
      uint j = __builtin_ctzll(m);
      __builtin_prefetch(base + l->tab + (size_t) dpcpe_range(g->hb[i][j], l->nb) * DPCPE_BUCKET);
    }
  }

  for (u64 m = g->active; m; m &= m - 1)
  {
    uint j = __builtin_ctzll(m);
    u32 a[4] = { g->w[0][j], g->w[1][j], g->w[2][j], g->w[3][j] };
    for (uint i = 0; i < nw; i++)
      if (g->pos[i] & (1ULL << j))
      {
	const struct dpcpe_ldesc *l = &d->lv[w0 + i];
	u32 v = dpcpe_probe_lane6(base, l, ((u64) g->hb[i][j] << 32) | g->ha[i][j], a);
	if (v)
	{
	  g->res[j] = v;
	  g->active &= ~(1ULL << j);
	  g->open &= ~(1ULL << j);
	  break;
	}
      }
  }
}

/* After the last window: the array for the lanes left; results out */
static inline void
dpcpe_group_finish(const byte *base, const struct dpcpe_dir *d, struct dpcpe_group *g, u32 *val)
{
  const u32 *arr = (const u32 *) (base + d->arr);
  for (u64 m = g->open; m; m &= m - 1)
  {
    uint j = __builtin_ctzll(m);
    g->res[j] = __atomic_load_n(arr + dpcpe_arr_slot(d, g->w[0][j]), __ATOMIC_RELAXED);
  }

  for (uint j = 0; j < g->n; j++)
    val[j] = ~g->res[j];
}

static inline void
dpcpe_group_load(struct dpcpe_group *g, const u32 *a, uint n, uint words)
{
  /* A whole IPv4 group: w[1..3] stay zero from dpcpe_bulk_run() */
  if ((words == 1) && (n == DPCPE_GROUP))
  {
    g->n = n;
    g->open = g->active = ~0ULL;
    memset(g->res, 0, sizeof(g->res));
    memcpy(g->w[0], a, sizeof(g->w[0]));
    return;
  }

  g->n = n;
  g->open = g->active = (n == 64) ? ~0ULL : ((1ULL << n) - 1);
  memset(g->res, 0, sizeof(g->res));
  for (uint j = 0; j < n; j++)
    for (uint k = 0; k < 4; k++)
      g->w[k][j] = (k < words) ? a[words * j + k] : 0;
  for (uint j = n; j < DPCPE_GROUP; j++)
    for (uint k = 0; k < 4; k++)
      g->w[k][j] = 0;
}

/* A variant's work on one loaded group: filter tests and probes, window by window */
typedef void dpcpe_group_fn(const byte *base, const struct dpcpe_dir *d, struct dpcpe_group *g);
void dpcpe_bulk_run(const struct lpm_engine *e, const u32 *a, u32 *val, uint n, uint words, dpcpe_group_fn *group);

/*
 *	Writer side (control memory, engine state)
 */

/* Arena over an lpm_region: blocks by offset, retired ones freed after readers quiesce */
struct dpcpe_extent { u64 off, size; };
struct dpcpe_retired { u64 off, size, epoch; };

struct dpcpe_arena {
  struct lpm_region *rg;
  byte *base;
  u64 top;				/* Bump pointer */
  u64 clean;				/* Memory from here up is known to be zero */
  u64 live;				/* Bytes in allocated blocks */
  u64 peak;
  struct dpcpe_extent *free;		/* Free extents below @top, sorted, coalesced */
  uint nfree, free_max;
  struct dpcpe_retired *ret;		/* Retired blocks, oldest first */
  uint nret, ret_max;
  pool *pool;
};

int dpcpe_arena_init(struct dpcpe_arena *a, pool *p, u64 size);
u64 dpcpe_arena_alloc(struct dpcpe_arena *a, u64 size);
void dpcpe_arena_free(struct dpcpe_arena *a, u64 off, u64 size);
void dpcpe_arena_retire(struct dpcpe_arena *a, u64 off, u64 size, u64 epoch);
void dpcpe_arena_reclaim(struct dpcpe_arena *a, struct lpm_engine *e);
static inline void *dpcpe_ptr(struct dpcpe_arena *a, u64 off) { return a->base + off; }

/* Prefix keys: address left-aligned in 128 bits (IPv4 in the top 32) */
struct dpcpe_key { u64 hi, lo; };

static inline struct dpcpe_key
dpcpe_key_mask(struct dpcpe_key k, uint len)
{
  if (len <= 64)
  {
    k.hi = len ? (k.hi & (~0ULL << (64 - len))) : 0;
    k.lo = 0;
  }
  else
    k.lo &= ~0ULL << (128 - len);
  return k;
}

/* The @i-th expansion of @k (masked to fewer bits) to @len bits */
static inline struct dpcpe_key
dpcpe_key_nth(struct dpcpe_key k, uint len, u64 i)
{
  unsigned __int128 v = ((unsigned __int128) k.hi << 64) | k.lo;
  v += (unsigned __int128) i << (128 - len);
  return (struct dpcpe_key) { .hi = (u64) (v >> 64), .lo = (u64) v };
}

static inline void
dpcpe_key_words(struct dpcpe_key k, u32 *w)
{
  w[0] = k.hi >> 32; w[1] = (u32) k.hi; w[2] = k.lo >> 32; w[3] = (u32) k.lo;
}

/* Original prefixes (control side): open addressing, linear probing */
struct dpcpe_pfx {
  u64 hi, lo;
  u32 val;
  u8 len;
  u8 used;
  u16 pad;
};

struct dpcpe_map {
  struct dpcpe_arena *ar;
  u64 off;				/* Offset of the slot array */
  u32 size;				/* Slots, power of two */
  u32 count;
  u64 seed;				/* Random, per slot array (see map_hash()) */
};

int dpcpe_map_init(struct dpcpe_map *m, struct dpcpe_arena *ar, u32 count);
void dpcpe_map_fini(struct dpcpe_map *m);
int dpcpe_map_reserve(struct dpcpe_map *m, u32 more);
struct dpcpe_pfx *dpcpe_map_find(struct dpcpe_map *m, struct dpcpe_key k, uint len);
u32 dpcpe_map_longest_run(struct dpcpe_map *m);
struct dpcpe_pfx *dpcpe_map_add(struct dpcpe_map *m, struct dpcpe_key k, uint len, u32 val);
void dpcpe_map_del(struct dpcpe_map *m, struct dpcpe_pfx *p);
static inline struct dpcpe_pfx *dpcpe_map_slots(struct dpcpe_map *m) { return dpcpe_ptr(m->ar, m->off); }

/* Owner bytes of table slots and array entries */
#define DPCPE_FREE		0xff	/* Slot empty and reusable */
#define DPCPE_RETIRED		0xfe	/* Slot empty, readers may still see its key */

/* A layout's hint bytes and their counts (lpm-dpcpe-hint.c); each level keeps a copy */
struct dpcpe_hints {
  u64 bytes;				/* Lookup offset: 2^bits hint bytes */
  u64 cnt;				/* Control offset: per hint byte, a u16 count per bit */
  uint bits;				/* Address bits that pick the byte: min(dbits, DPCPE_HBITS) */
  uint n;				/* Bits in use: min(levels, 8) */
  u64 fine;				/* Lookup offset: 2^fbits fine hint bytes (IPv6), or 0 */
  u64 fcnt;				/* Control offset: per fine byte, a u16 count per bit */
  uint fbits;				/* 0: no fine hints */
};

/* One hash level, writer's view */
struct dpcpe_level {
  struct dpcpe_ldesc d;			/* What the directory publishes */
  u8 lo;				/* Holds prefixes of lengths (lo, d.len]; lo = dbits for the first */
  u8 spb;				/* Slots per bucket */
  u64 own;				/* Control offset: owner length per slot */
  u64 ctr;				/* Control offset: 4-bit counters, 64 per filter word */
  u32 count;				/* Live entries */
  u32 used;				/* Occupied slots: live and retired */
  u32 prefixes;				/* Original prefixes expanded here */
  u32 saturated;			/* Counters at their maximum */
  u32 sat_rebuilt;			/* Saturated counters right after the last filter rebuild */
  u32 filter_rebuilds;
  u64 gen;				/* Table generation: retired slots of an older one are void */
  struct dpcpe_hints h;			/* The layout's hints (h.bytes 0: entries not counted) */
};

/* A whole structure: direct array and levels; swapped as one by builds */
struct dpcpe_layout {
  u32 dbits;
  u64 arr;				/* Lookup offset: 2^dbits of ~value */
  u64 arr_own;				/* Control offset: owner length per entry */
  struct dpcpe_hints h;
  uint nlev;
  struct dpcpe_level *lv;		/* Levels, shortest first (mb_alloc) */
  u8 level_of[129];			/* Prefix length -> level, DPCPE_ARRAY or DPCPE_NOLEVEL */
};

/* Options beyond lpm_params: tests, the benchmark, the ablation */
struct dpcpe_opts {
  uint levels;				/* IPv6 (or IPv4 if set): hash levels chosen by DP; 0 = default */
  uint per_length;			/* Ablation: a level per prefix length, no expansion */
  uint nfixed;				/* Tests: these levels, never re-chosen */
  u8 fixed[DPCPE_MAX_LEVELS];
  uint filter_bits;			/* Filter bits per entry at the sizing load */
  uint filter_k;			/* Bits set per key */
  uint filter_min;			/* Tables of at most this many bytes are probed without the filter */
  uint cmax;				/* Counter saturation value, 1..15 */
  u64 lookup_limit;			/* Arena reservations (bytes) */
  u64 control_limit;
};

void dpcpe_opts_default(struct dpcpe_opts *o);
struct lpm_engine *dpcpe_create_ex(pool *p, uint net_type, uint variant, const struct dpcpe_opts *o);

/* Engine */
struct dpcpe {
  struct lpm_engine e;
  struct dpcpe_opts o;
  uint bits;				/* 32 or 128 */
  byte *base;				/* Lookup region */
  struct dpcpe_hdr *hdr;
  struct dpcpe_arena la, ca;		/* Lookup and control arenas */

  struct dpcpe_layout s;			/* Current structure */
  u64 dir_off;				/* Published directory */
  u64 dir_spare;			/* Block for the next one */
  int dir_dirty;			/* The structure changed since it was published */
  int dp;				/* Levels chosen by DP (else fixed) */

  struct dpcpe_map map;
  u32 len_count[129];
  u64 choice_prefixes;			/* Prefixes when the levels were last chosen */
  u64 choice_cost;			/* Entries the choice predicted */

  /* Retired table slots of K16/K32 levels */
  struct dpcpe_rslot { u32 level, slot; u64 gen, epoch; } *rs;
  uint nrs, rs_max;

  /* Pending retirements of lookup blocks, tagged at the end of the update */
  struct dpcpe_extent *pend;
  uint npend, pend_max;

  /* Counters */
  u64 updates, builds, relevels, resizes, alloc_failures;
  u64 gen_next;				/* Table generations */
  btime last_build, last_build_time;
};

#define DPCPE_ARRAY		0xff
#define DPCPE_NOLEVEL		0xfe

/* Levels (lpm-dpcpe-table.c) */
int dpcpe_level_setup(struct dpcpe *x, struct dpcpe_level *l, uint len, uint lo, u32 cap);
void dpcpe_level_release(struct dpcpe *x, struct dpcpe_level *l, int published);
int dpcpe_level_reserve(struct dpcpe *x, struct dpcpe_level *l, u64 more);
void dpcpe_level_shrink(struct dpcpe *x, struct dpcpe_level *l);
s64 dpcpe_level_find(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k, u64 h);
u32 dpcpe_level_insert(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k, u64 h, u32 val, uint owner);
void dpcpe_level_set(struct dpcpe *x, struct dpcpe_level *l, u32 slot, u32 val, uint owner);
void dpcpe_level_delete(struct dpcpe *x, struct dpcpe_level *l, u32 slot, u64 h);
u64 dpcpe_level_hash(const struct dpcpe_level *l, struct dpcpe_key k);
struct dpcpe_key dpcpe_level_key(struct dpcpe *x, struct dpcpe_level *l, u32 slot);
static inline byte *dpcpe_level_owner(struct dpcpe *x, struct dpcpe_level *l) { return dpcpe_ptr(&x->ca, l->own); }
static inline u32 dpcpe_level_slots(const struct dpcpe_level *l) { return l->d.nb * l->spb; }
void dpcpe_level_reclaim(struct dpcpe *x);
double dpcpe_level_fp_sample(struct dpcpe *x, struct dpcpe_level *l, uint samples);
u64 dpcpe_level_lookup_bytes(const struct dpcpe_level *l);
u64 dpcpe_level_control_bytes(const struct dpcpe_level *l);
int dpcpe_level_check(struct dpcpe *x, struct dpcpe_level *l);

/* Hints (lpm-dpcpe-hint.c) */
int dpcpe_hint_setup(struct dpcpe *x, struct dpcpe_layout *s);
void dpcpe_hint_release(struct dpcpe *x, struct dpcpe_layout *s, int published);
void dpcpe_hint_add(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k);
void dpcpe_hint_del(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k);
int dpcpe_hint_check(struct dpcpe *x);
u64 dpcpe_hint_slots_used(struct dpcpe *x, int fine);
void dpcpe_hint_masks(const struct dpcpe_layout *s, u8 *fmask, u8 *cmask);

/* Level choice (lpm-dpcpe-levels.c) */
#define DPCPE_COST_MAX		(1ULL << 62)	/* Saturated cost: more entries than memory */

struct dpcpe_hist {
  u32 n[129][130];			/* Prefixes by length and nearest-ancestor length + 1 (0: none) */
};

int dpcpe_hist_build(struct dpcpe *x, struct dpcpe_hist *h);
u64 dpcpe_cost(const struct dpcpe_hist *h, int lo, uint len);
u64 dpcpe_choose(const struct dpcpe_hist *h, uint dbits, uint nmax, u8 *levels, uint *nlev);
u64 dpcpe_cost_levels(const struct dpcpe_hist *h, uint dbits, const u8 *levels, uint nlev);
void dpcpe_hist_prior(struct dpcpe_hist *h, uint bits);

/* Engine internals (lpm-dpcpe.c) shared with tests and the benchmark */
int dpcpe_check(struct dpcpe *x);
void dpcpe_pending_block(struct dpcpe *x, u64 off, u64 size);

/* Vector variants (sysdep) */
lpm_bulk4_fn dpcpe_bulk4_scalar, dpcpe_bulk4_avx2, dpcpe_bulk4_avx512;
lpm_bulk6_fn dpcpe_bulk6_scalar, dpcpe_bulk6_avx2, dpcpe_bulk6_avx512;

extern const struct lpm_class lpm_dpcpe_class, lpm_perlength_class;

#endif
