/*
 *	bloombird -- The dpcpe LPM engine: the original prefixes
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe prefix map
 *
 * Expansion forgets which prefixes were given: an expanded entry knows only
 * the length of the prefix that owns it. The control side therefore keeps
 * the original prefixes (key, length, value) in a hash map of its own. The
 * engine asks it whether a prefix exists, which prefix covers a deleted
 * one (one probe per shorter length in use inside the level), and walks it
 * to rebuild. Only the writer touches it, so it is a plain open-addressing
 * table with linear probing and backward-shift deletion, kept at most 3/4
 * full, in the control arena so that growing it can fail cleanly.
 */

#include "nest/bird.h"
#include "nest/lpm-dpcpe.h"

static inline u64
map_mix(u64 x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/*
 * Seeded per slot array: with one fixed function, prefixes walked in the
 * slot order of another map (a dump fed to a new engine) arrive clustered
 * and pile up in long probe runs while the new map is smaller.
 */
static inline u32
map_hash(u64 seed, struct dpcpe_key k, uint len)
{
  return (u32) map_mix(k.hi ^ map_mix(k.lo ^ seed ^ (len + 1)));
}

static inline u64
map_seed(void)
{
  u64 s;
  random_bytes(&s, sizeof(s));
  return s;
}

static u32
map_size_for(u32 count)
{
  u32 s = 16;
  while ((u64) s * 3 / 4 < count)
    s *= 2;
  return s;
}

/**
 * dpcpe_map_init - create an empty map
 * @m: map
 * @ar: control arena
 * @count: prefixes to have room for
 */
int
dpcpe_map_init(struct dpcpe_map *m, struct dpcpe_arena *ar, u32 count)
{
  m->ar = ar;
  m->size = map_size_for(count);
  m->count = 0;
  m->seed = map_seed();
  m->off = dpcpe_arena_alloc(ar, (u64) m->size * sizeof(struct dpcpe_pfx));
  return (m->off == DPCPE_NOMEM) ? -1 : 0;
}

/**
 * dpcpe_map_fini - free a prefix map
 * @m: map
 *
 * Returns the map's slots to the control arena, if it has any, and leaves
 * it empty.
 */
void
dpcpe_map_fini(struct dpcpe_map *m)
{
  if (m->off && (m->off != DPCPE_NOMEM))
    dpcpe_arena_free(m->ar, m->off, (u64) m->size * sizeof(struct dpcpe_pfx));
  m->off = 0;
  m->size = m->count = 0;
}

static void
map_put(struct dpcpe_pfx *s, u32 size, u64 seed, const struct dpcpe_pfx *p)
{
  u32 i = map_hash(seed, (struct dpcpe_key) { p->hi, p->lo }, p->len) & (size - 1);
  while (s[i].used)
    i = (i + 1) & (size - 1);
  s[i] = *p;
}

/**
 * dpcpe_map_reserve - make room for more prefixes
 * @m: map
 * @more: prefixes about to be added
 *
 * Returns -1 (the map unchanged) if the control arena is exhausted.
 */
int
dpcpe_map_reserve(struct dpcpe_map *m, u32 more)
{
  u64 want = (u64) m->count + more;
  if (want <= (u64) m->size * 3 / 4)
    return 0;
  if (want > 0x40000000)
    return -1;

  u32 size = map_size_for(want);
  u64 off = dpcpe_arena_alloc(m->ar, (u64) size * sizeof(struct dpcpe_pfx));
  if (off == DPCPE_NOMEM)
    return -1;

  struct dpcpe_pfx *old = dpcpe_map_slots(m), *s = dpcpe_ptr(m->ar, off);
  u64 seed = map_seed();
  for (u32 i = 0; i < m->size; i++)
    if (old[i].used)
      map_put(s, size, seed, &old[i]);

  dpcpe_arena_free(m->ar, m->off, (u64) m->size * sizeof(struct dpcpe_pfx));
  m->off = off;
  m->size = size;
  m->seed = seed;
  return 0;
}

/**
 * dpcpe_map_find - look up an original prefix
 * @m: map
 * @k: the prefix's key
 * @len: its length
 *
 * Returns the map's entry for the prefix of @k and @len, or NULL if the
 * prefix is not in the map.
 */
struct dpcpe_pfx *
dpcpe_map_find(struct dpcpe_map *m, struct dpcpe_key k, uint len)
{
  struct dpcpe_pfx *s = dpcpe_map_slots(m);
  u32 i = map_hash(m->seed, k, len) & (m->size - 1);

  for (; s[i].used; i = (i + 1) & (m->size - 1))
    if ((s[i].len == len) && (s[i].hi == k.hi) && (s[i].lo == k.lo))
      return &s[i];

  return NULL;
}

/**
 * dpcpe_map_add - add a prefix known to be absent
 * @m: map, with room reserved by dpcpe_map_reserve()
 * @k: masked key
 * @len: length
 * @val: value
 */
struct dpcpe_pfx *
dpcpe_map_add(struct dpcpe_map *m, struct dpcpe_key k, uint len, u32 val)
{
  ASSERT_DIE((u64) m->count + 1 <= (u64) m->size * 3 / 4);

  struct dpcpe_pfx *s = dpcpe_map_slots(m);
  u32 i = map_hash(m->seed, k, len) & (m->size - 1);
  while (s[i].used)
    i = (i + 1) & (m->size - 1);

  s[i] = (struct dpcpe_pfx) { .hi = k.hi, .lo = k.lo, .val = val, .len = len, .used = 1 };
  m->count++;
  return &s[i];
}

/**
 * dpcpe_map_del - remove an entry from the prefix map
 * @m: map
 * @p: the entry, as dpcpe_map_find() returned it
 *
 * Deletes by backward shift: each later entry of the probe run whose home
 * slot does not lie between the hole and the entry moves into the hole,
 * so lookups need no tombstones.
 */
void
dpcpe_map_del(struct dpcpe_map *m, struct dpcpe_pfx *p)
{
  struct dpcpe_pfx *s = dpcpe_map_slots(m);
  u32 mask = m->size - 1;
  u32 i = p - s, j = i;

  /* Backward shift: move up every later entry whose home is not in (i, j] */
  for (;;)
  {
    j = (j + 1) & mask;
    if (!s[j].used)
      break;

    u32 home = map_hash(m->seed, (struct dpcpe_key) { s[j].hi, s[j].lo }, s[j].len) & mask;
    if (((j > i) && ((home <= i) || (home > j))) ||
	((j < i) && ((home <= i) && (home > j))))
    {
      s[i] = s[j];
      i = j;
    }
  }

  s[i].used = 0;
  m->count--;
}

/**
 * dpcpe_map_longest_run - the longest run of occupied slots
 * @m: map
 *
 * What one probe may have to walk: for the tests, a whole scan.
 */
u32
dpcpe_map_longest_run(struct dpcpe_map *m)
{
  struct dpcpe_pfx *s = dpcpe_map_slots(m);
  u32 run = 0, best = 0;
  for (u32 i = 0; i < m->size; i++)
    best = MAX(best, run = s[i].used ? run + 1 : 0);
  return best;
}
