/*
 *	bloombird -- The dpcpe LPM engine
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe engine
 *
 * Controlled prefix expansion with Bloom filters, after Bloomfwd (Lucchesi,
 * Drummond, Teodoro). Every prefix is expanded to one of a few lengths, so
 * a lookup asks a few exact-match tables, longest first, each behind a
 * Bloom filter that answers most misses without touching the table.
 *
 * IPv4 keeps the paper's groups: prefixes up to /20 in a direct array of
 * 2^20 values, /21-/24 expanded to /24 and /25-/32 to /32. A lookup tests
 * the /32 filter, the /24 filter, and reads the array. IPv6 has a direct
 * array for prefixes up to /16 and n hash levels chosen by dynamic
 * programming over the prefixes so that the expanded entries are fewest,
 * capture counted exactly (lpm-dpcpe-levels.c); struct lpm_params.levels
 * sets n (%DPCPE_MIN_LEVELS to %DPCPE_MAX_LEVELS, 0 for the default; other
 * values make create fail). The engine chooses again when its prefixes
 * have doubled or halved since the last choice, when a prefix is longer
 * than the last level, and when one prefix would expand to more than
 * max(4096, entries / 4) entries; a choice is applied (a whole rebuild)
 * only if it saves a fifth of the entries or is needed.
 *
 * Expansion bookkeeping. Each expanded entry records the length of the
 * prefix whose value it carries (its owner). Adding a prefix of length l
 * writes each of its expansions that is absent or owned by a shorter
 * prefix (capture) and leaves those owned by longer ones; deleting it
 * hands each entry it owns to the longest remaining prefix of its level
 * that covers it (found in the map of original prefixes), or deletes the
 * entry if there is none; replacing a value rewrites the entries it owns.
 * So an update writes exactly the entries it owns, and a table built from
 * scratch equals one reached by any sequence of updates.
 *
 * Readers in other threads. Each changed entry is one store (see
 * lpm-dpcpe-table.c for the order of filter bits, counts and slots), and
 * one update changes, for a given address, the entry of one level only;
 * so a lookup that overlaps one update sees the old or the new answer. A
 * lookup that overlaps two could combine them (the first update's level
 * read before it, the second's after), so every update runs in a phase
 * bracketed by a sequence count in the region header (odd while writing),
 * and a lookup that saw the count advance by more than one phase is
 * repeated; lookups never wait for the writer otherwise. Growing a table
 * or rebuilding writes new memory and publishes it in a new directory
 * with one release store; memory readers may still use (old tables and
 * directories, cleared wide slots) is tagged with lpm_epoch_retire() at the
 * end of the phase and reused only when lpm_epoch_safe() allows.
 *
 * Memory exhaustion: an update first reserves what it may need (map room,
 * table growth) and fails with -1 before changing anything if that fails;
 * a whole build is made aside and swapped in only when complete.
 */

#include "nest/bird.h"
#include "nest/cli.h"
#include "nest/lpm-dpcpe.h"
#include "lib/string.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#define DPCPE_RELEVEL_MIN	4096	/* An expansion above max(this, entries / 4) asks for new levels */
#define DPCPE_DRIFT_MIN		1024	/* Prefixes before the first choice from real data */

static inline btime
dpcpe_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (btime) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void
dpcpe_opts_default(struct dpcpe_opts *o)
{
  memset(o, 0, sizeof(*o));
  o->filter_bits = 12;
  o->filter_k = 4;
  o->filter_min = 0;
  o->cmax = 15;
  o->lookup_limit = 8ULL << 30;
  o->control_limit = 8ULL << 30;
}

static void
net_key(struct dpcpe *x, const net_addr *n, struct dpcpe_key *k, uint *len)
{
  if (x->bits == 32)
  {
    const net_addr_ip4 *a = (const void *) n;
    *k = (struct dpcpe_key) { .hi = (u64) _I(a->prefix) << 32 };
    *len = a->pxlen;
  }
  else
  {
    const net_addr_ip6 *a = (const void *) n;
    *k = (struct dpcpe_key) {
      .hi = ((u64) _I0(a->prefix) << 32) | _I1(a->prefix),
      .lo = ((u64) _I2(a->prefix) << 32) | _I3(a->prefix),
    };
    *len = a->pxlen;
  }
  *k = dpcpe_key_mask(*k, *len);
}

static inline u64
arr_index(const struct dpcpe_layout *s, struct dpcpe_key k)
{
  return s->dbits ? (k.hi >> (64 - s->dbits)) : 0;
}

/*
 *	Phases, directories, retirement
 */

void
dpcpe_pending_block(struct dpcpe *x, u64 off, u64 size)
{
  if (!off)
    return;

  if (x->npend == x->pend_max)
  {
    uint n = x->pend_max ? 2 * x->pend_max : 16;
    struct dpcpe_extent *p = mb_alloc(x->e.pool, n * sizeof(struct dpcpe_extent));
    if (x->pend)
    {
      memcpy(p, x->pend, x->npend * sizeof(struct dpcpe_extent));
      mb_free(x->pend);
    }
    x->pend = p;
    x->pend_max = n;
  }
  x->pend[x->npend++] = (struct dpcpe_extent) { .off = off, .size = size };
}

static void reclaim(struct dpcpe *x);

static void
phase_begin(struct dpcpe *x)
{
  u64 s = atomic_load_explicit(&x->hdr->seq, memory_order_relaxed);
  atomic_store_explicit(&x->hdr->seq, s + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
}

#define DIR_SIZE (sizeof(struct dpcpe_dir) + DPCPE_DIR_LEVELS * sizeof(struct dpcpe_ldesc))

/*
 * A spare directory block is allocated before an update changes anything,
 * so that publishing at the end of the phase cannot fail.
 */
static int
dir_reserve(struct dpcpe *x)
{
  if (!x->dir_spare)
  {
    u64 off = dpcpe_arena_alloc(&x->la, DIR_SIZE);
    if (off == DPCPE_NOMEM)
      return -1;
    x->dir_spare = off;
  }
  return 0;
}

/* A new directory for the current layout, in the spare block */
static void
dir_publish(struct dpcpe *x)
{
  struct dpcpe_layout *s = &x->s;
  u64 off = x->dir_spare;
  ASSERT_DIE(off);
  x->dir_spare = 0;

  struct dpcpe_dir *d = dpcpe_ptr(&x->la, off);
  memset(d, 0, DIR_SIZE);
  d->arr = s->arr;
  d->hint = s->h.bytes;
  d->hbits = s->h.bits;
  d->fine = s->h.fine;
  d->fbits = s->h.fbits;
  dpcpe_hint_masks(s, &d->fmask, &d->cmask);
  d->dbits = s->dbits;
  d->nlevels = s->nlev;
  for (uint i = 0; i < s->nlev; i++)
    d->lv[i] = s->lv[s->nlev - 1 - i].d;

  atomic_store_explicit(&x->hdr->dir, off, memory_order_release);
  dpcpe_pending_block(x, x->dir_off, DIR_SIZE);
  x->dir_off = off;
  x->dir_dirty = 0;
  dir_reserve(x);			/* For the next update; may fail, then it is asked again */
}

static void
phase_end(struct dpcpe *x)
{
  if (x->dir_dirty)
    dir_publish(x);

  u64 s = atomic_load_explicit(&x->hdr->seq, memory_order_relaxed);
  atomic_store_explicit(&x->hdr->seq, s + 1, memory_order_release);

  int slots = x->nrs && !x->rs[x->nrs - 1].epoch;
  if (!x->npend && !slots)
    return;

  u64 ep = lpm_epoch_retire(&x->e);
  for (uint i = x->nrs; i && !x->rs[i - 1].epoch; i--)
    x->rs[i - 1].epoch = ep;
  for (uint i = 0; i < x->npend; i++)
    dpcpe_arena_retire(&x->la, x->pend[i].off, x->pend[i].size, ep);
  x->npend = 0;

  /* Without readers in old sections, this frees it all at once */
  reclaim(x);
}

static void
reclaim(struct dpcpe *x)
{
  dpcpe_level_reclaim(x);
  dpcpe_arena_reclaim(&x->la, &x->e);
}

static int
fail(struct dpcpe *x)
{
  x->alloc_failures++;
  return -1;
}

/*
 *	Layouts: build one aside, install it
 */

static void
layout_release(struct dpcpe *x, struct dpcpe_layout *s, int published)
{
  u64 n = 1ULL << s->dbits;

  for (uint i = 0; i < s->nlev; i++)
    dpcpe_level_release(x, &s->lv[i], published);
  if (s->lv)
    mb_free(s->lv);
  s->lv = NULL;
  s->nlev = 0;

  if (published)
    dpcpe_pending_block(x, s->arr, n * 4);
  else
    dpcpe_arena_free(&x->la, s->arr, n * 4);
  dpcpe_arena_free(&x->ca, s->arr_own, n);
  s->arr = s->arr_own = 0;
  dpcpe_hint_release(x, s, published);
}

/* Expand one prefix into a layout being built (longer prefixes come first) */
static int
construct_one(struct dpcpe *x, struct dpcpe_layout *s, const struct dpcpe_pfx *p)
{
  struct dpcpe_key k = { p->hi, p->lo };
  uint li = s->level_of[p->len];
  if (li == DPCPE_NOLEVEL)
    return -1;

  if (li == DPCPE_ARRAY)
  {
    u32 *arr = (u32 *) (x->base + s->arr);
    byte *own = dpcpe_ptr(&x->ca, s->arr_own);
    u64 first = arr_index(s, k), n = 1ULL << (s->dbits - p->len);
    for (u64 i = first; i < first + n; i++)
      if (own[i] == DPCPE_FREE)
      {
	arr[i] = ~p->val;
	own[i] = p->len;
      }
    return 0;
  }

  struct dpcpe_level *l = &s->lv[li];
  uint L = l->d.len;
  u64 n = 1ULL << (L - p->len);
  if (dpcpe_level_reserve(x, l, n) < 0)
    return -1;

  for (u64 i = 0; i < n; i++)
  {
    struct dpcpe_key ek = dpcpe_key_nth(k, L, i);
    u64 h = dpcpe_level_hash(l, ek);
    if (dpcpe_level_find(x, l, ek, h) < 0)
      dpcpe_level_insert(x, l, ek, h, p->val, p->len);
  }
  l->prefixes++;
  return 0;
}

/*
 * Build a layout from the map: direct array of @dbits, levels @levels
 * (ascending), tables sized from the histogram. Returns -1 if memory ran
 * out (nothing left allocated).
 */
static int
construct(struct dpcpe *x, struct dpcpe_layout *s, const struct dpcpe_hist *h,
	  uint dbits, const u8 *levels, uint nlev)
{
  memset(s, 0, sizeof(*s));
  s->dbits = dbits;
  u64 n = 1ULL << dbits;
  s->arr = dpcpe_arena_alloc(&x->la, n * 4);
  s->arr_own = dpcpe_arena_alloc(&x->ca, n);
  if ((s->arr == DPCPE_NOMEM) || (s->arr_own == DPCPE_NOMEM))
  {
    if (s->arr != DPCPE_NOMEM) dpcpe_arena_free(&x->la, s->arr, n * 4);
    if (s->arr_own != DPCPE_NOMEM) dpcpe_arena_free(&x->ca, s->arr_own, n);
    s->arr = s->arr_own = 0;
    return -1;
  }
  memset(dpcpe_ptr(&x->ca, s->arr_own), DPCPE_FREE, n);

  s->lv = mb_allocz(x->e.pool, MAX(nlev, 1) * sizeof(struct dpcpe_level));
  memset(s->level_of, DPCPE_NOLEVEL, sizeof(s->level_of));
  for (uint l = 0; l <= dbits; l++)
    s->level_of[l] = DPCPE_ARRAY;

  uint lo = dbits;
  for (uint i = 0; i < nlev; i++)
  {
    u64 cap = dpcpe_cost(h, lo, levels[i]);
    if ((cap >= (1ULL << 31)) || (dpcpe_level_setup(x, &s->lv[i], levels[i], lo, cap) < 0))
      goto nomem;
    s->nlev++;
    for (uint l = x->o.per_length ? levels[i] : lo + 1; l <= levels[i]; l++)
      s->level_of[l] = i;
    lo = levels[i];
  }

  if (dpcpe_hint_setup(x, s) < 0)
    goto nomem;

  /* Longest prefixes first: each expanded entry is written once, by its owner */
  struct dpcpe_map *m = &x->map;
  u64 toff = 0, tsize = (u64) MAX(m->count, 1) * sizeof(u32);
  toff = dpcpe_arena_alloc(&x->ca, tsize);
  if (toff == DPCPE_NOMEM)
    goto nomem;

  u32 *order = dpcpe_ptr(&x->ca, toff);
  u32 start[130] = {};
  struct dpcpe_pfx *ps = dpcpe_map_slots(m);
  for (u32 i = 0; i < m->size; i++)
    if (ps[i].used)
      start[128 - ps[i].len + 1]++;
  for (uint i = 1; i < 130; i++)
    start[i] += start[i - 1];
  for (u32 i = 0; i < m->size; i++)
    if (ps[i].used)
      order[start[128 - ps[i].len]++] = i;

  for (u32 i = 0; i < m->count; i++)
    if (construct_one(x, s, &ps[order[i]]) < 0)
    {
      dpcpe_arena_free(&x->ca, toff, tsize);
      goto nomem;
    }

  dpcpe_arena_free(&x->ca, toff, tsize);
  return 0;

nomem:
  layout_release(x, s, 0);
  return -1;
}

/* Replace the current layout (inside a phase) */
static void
install(struct dpcpe *x, struct dpcpe_layout *s)
{
  layout_release(x, &x->s, 1);
  x->s = *s;
  x->dir_dirty = 1;
}

/* The levels for the current map: fixed, per length, or by DP */
static void
levels_for(struct dpcpe *x, const struct dpcpe_hist *h, uint *dbits, u8 *levels, uint *nlev, u64 *cost)
{
  if (x->o.per_length)
  {
    *dbits = 0;
    *nlev = 0;
    for (uint l = 1; l <= x->bits; l++)
      if (x->len_count[l])
	levels[(*nlev)++] = l;
  }
  else if (x->o.nfixed)
  {
    *dbits = (x->bits == 32) ? DPCPE_DBITS4 : DPCPE_DBITS6;
    memcpy(levels, x->o.fixed, x->o.nfixed);
    *nlev = x->o.nfixed;
  }
  else if (!x->dp)
  {
    *dbits = DPCPE_DBITS4;
    levels[0] = 24;
    levels[1] = 32;
    *nlev = 2;
  }
  else
  {
    *dbits = (x->bits == 32) ? DPCPE_DBITS4 : DPCPE_DBITS6;
    if (x->map.count)
      dpcpe_choose(h, *dbits, x->o.levels, levels, nlev);
    else
    {
      struct dpcpe_hist *pr = xmalloc(sizeof(struct dpcpe_hist));
      dpcpe_hist_prior(pr, x->bits);
      dpcpe_choose(pr, *dbits, x->o.levels, levels, nlev);
      xfree(pr);
    }
  }

  *cost = dpcpe_cost_levels(h, *dbits, levels, *nlev);
}

static u64
total_entries(struct dpcpe *x)
{
  u64 t = 0;
  for (uint i = 0; i < x->s.nlev; i++)
    t += x->s.lv[i].count;
  return t;
}

/*
 * Choose levels anew for the current map and rebuild if that pays (or if
 * @need). Returns 0 if rebuilt, 1 if not worth it, -1 if memory ran out.
 */
static int
relevel(struct dpcpe *x, int need)
{
  struct dpcpe_hist *h = xmalloc(sizeof(struct dpcpe_hist));
  u8 levels[DPCPE_DIR_LEVELS];
  uint dbits, nlev;
  u64 cost;
  int r = -1;

  if (dpcpe_hist_build(x, h) < 0)
    goto done;

  levels_for(x, h, &dbits, levels, &nlev, &cost);
  x->choice_prefixes = x->map.count;

  if (!need)
  {
    /* Entries with the present levels, the new prefix expanded */
    u8 cur[DPCPE_DIR_LEVELS] = {};
    for (uint i = 0; i < x->s.nlev; i++)
      cur[i] = x->s.lv[i].d.len;
    u64 now = dpcpe_cost_levels(h, x->s.dbits, cur, x->s.nlev);
    if ((nlev == x->s.nlev) && !memcmp(cur, levels, nlev))
      now = cost;
    if ((double) cost > 0.8 * (double) now)
    {
      r = 1;
      goto done;
    }
  }

  struct dpcpe_layout s;
  if ((dir_reserve(x) < 0) || (construct(x, &s, h, dbits, levels, nlev) < 0))
    goto done;

  phase_begin(x);
  install(x, &s);
  x->choice_cost = cost;
  phase_end(x);
  x->relevels++;
  r = 0;

done:
  xfree(h);
  return r;
}

/*
 *	Updates
 */

/* Entries of prefix @k/@len in its level: fn(entry) for each */
static void
expand_add(struct dpcpe *x, struct dpcpe_key k, uint len, u32 val)
{
  struct dpcpe_layout *s = &x->s;
  uint li = s->level_of[len];

  if (li == DPCPE_ARRAY)
  {
    u32 *arr = (u32 *) (x->base + s->arr);
    byte *own = dpcpe_ptr(&x->ca, s->arr_own);
    u64 first = arr_index(s, k), n = 1ULL << (s->dbits - len);
    for (u64 i = first; i < first + n; i++)
      if ((own[i] == DPCPE_FREE) || (own[i] < len))
      {
	__atomic_store_n(&arr[i], ~val, __ATOMIC_RELEASE);
	own[i] = len;
      }
    return;
  }

  struct dpcpe_level *l = &s->lv[li];
  uint L = l->d.len;
  byte *own = dpcpe_level_owner(x, l);
  u64 n = 1ULL << (L - len);

  for (u64 i = 0; i < n; i++)
  {
    struct dpcpe_key ek = dpcpe_key_nth(k, L, i);
    u64 h = dpcpe_level_hash(l, ek);
    s64 slot = dpcpe_level_find(x, l, ek, h);
    if (slot < 0)
      dpcpe_level_insert(x, l, ek, h, val, len);
    else if (own[slot] < len)
      dpcpe_level_set(x, l, slot, val, len);		/* Capture */
  }
  l->prefixes++;
}

/* The entries @k/@len owns get @val (replace) */
static void
expand_rewrite(struct dpcpe *x, struct dpcpe_key k, uint len, u32 val)
{
  struct dpcpe_layout *s = &x->s;
  uint li = s->level_of[len];

  if (li == DPCPE_ARRAY)
  {
    u32 *arr = (u32 *) (x->base + s->arr);
    byte *own = dpcpe_ptr(&x->ca, s->arr_own);
    u64 first = arr_index(s, k), n = 1ULL << (s->dbits - len);
    for (u64 i = first; i < first + n; i++)
      if (own[i] == len)
	__atomic_store_n(&arr[i], ~val, __ATOMIC_RELEASE);
    return;
  }

  struct dpcpe_level *l = &s->lv[li];
  uint L = l->d.len;
  byte *own = dpcpe_level_owner(x, l);
  u64 n = 1ULL << (L - len);

  for (u64 i = 0; i < n; i++)
  {
    struct dpcpe_key ek = dpcpe_key_nth(k, L, i);
    s64 slot = dpcpe_level_find(x, l, ek, dpcpe_level_hash(l, ek));
    if ((slot >= 0) && (own[slot] == len))
      dpcpe_level_set(x, l, slot, val, len);
  }
}

/* The entries @k/@len owns go to @q (the next covering prefix) or away */
static void
expand_remove(struct dpcpe *x, struct dpcpe_key k, uint len, const struct dpcpe_pfx *q)
{
  struct dpcpe_layout *s = &x->s;
  uint li = s->level_of[len];

  if (li == DPCPE_ARRAY)
  {
    u32 *arr = (u32 *) (x->base + s->arr);
    byte *own = dpcpe_ptr(&x->ca, s->arr_own);
    u64 first = arr_index(s, k), n = 1ULL << (s->dbits - len);
    for (u64 i = first; i < first + n; i++)
      if (own[i] == len)
      {
	__atomic_store_n(&arr[i], q ? ~q->val : 0, __ATOMIC_RELEASE);
	own[i] = q ? q->len : DPCPE_FREE;
      }
    return;
  }

  struct dpcpe_level *l = &s->lv[li];
  uint L = l->d.len;
  byte *own = dpcpe_level_owner(x, l);
  u64 n = 1ULL << (L - len);

  for (u64 i = 0; i < n; i++)
  {
    struct dpcpe_key ek = dpcpe_key_nth(k, L, i);
    u64 h = dpcpe_level_hash(l, ek);
    s64 slot = dpcpe_level_find(x, l, ek, h);
    if ((slot < 0) || (own[slot] != len))
      continue;

    if (q)
      dpcpe_level_set(x, l, slot, q->val, q->len);	/* Release to the covering prefix */
    else
      dpcpe_level_delete(x, l, slot, h);
  }
  l->prefixes--;
}

/* Does adding a prefix of @len ask for new levels? 2: needs them, 1: worth asking */
static int
relevel_wanted(struct dpcpe *x, uint len)
{
  uint li = x->s.level_of[len];
  if (li == DPCPE_NOLEVEL)
    return 2;

  if (!x->dp)
    return 0;

  u64 n = x->map.count + 1;
  if ((n >= DPCPE_DRIFT_MIN) && ((n >= 2 * x->choice_prefixes) || (4 * n <= x->choice_prefixes)))
    return 1;

  if (li != DPCPE_ARRAY)
  {
    uint gap = x->s.lv[li].d.len - len;
    if ((gap >= 40) || ((1ULL << gap) > MAX(DPCPE_RELEVEL_MIN, total_entries(x) / 4)))
      return 1;
  }

  return 0;
}

static int
dpcpe_update(struct lpm_engine *e, const net_addr *n, u32 val, u32 *old)
{
  struct dpcpe *x = (void *) e;
  struct dpcpe_key k;
  uint len;
  u32 dummy;

  ASSERT(val <= LPM_VALUE_MAX);
  old = old ?: &dummy;
  net_key(x, n, &k, &len);
  reclaim(x);

  struct dpcpe_pfx *p = dpcpe_map_find(&x->map, k, len);
  if (p)
  {
    *old = p->val;
    if (p->val != val)
    {
      phase_begin(x);
      expand_rewrite(x, k, len, val);
      p->val = val;
      phase_end(x);
    }
    x->updates++;
    return 0;
  }

  *old = LPM_NONE;
  if ((dir_reserve(x) < 0) || (dpcpe_map_reserve(&x->map, 1) < 0))
    return fail(x);

  int want = relevel_wanted(x, len);
  if (want)
  {
    dpcpe_map_add(&x->map, k, len, val);
    x->len_count[len]++;

    int r = relevel(x, want == 2);
    if (!r)
    {
      x->updates++;
      return 0;
    }

    dpcpe_map_del(&x->map, dpcpe_map_find(&x->map, k, len));
    x->len_count[len]--;
    if (want == 2)
      return fail(x);
    if (r < 0)
      x->alloc_failures++;		/* Carries on with the present levels */
  }

  uint li = x->s.level_of[len];
  if (li != DPCPE_ARRAY)
  {
    struct dpcpe_level *l = &x->s.lv[li];
    uint gap = l->d.len - len;
    if ((gap >= 31) || (dpcpe_level_reserve(x, l, 1ULL << gap) < 0))
      return fail(x);
  }

  phase_begin(x);
  dpcpe_map_add(&x->map, k, len, val);
  x->len_count[len]++;
  expand_add(x, k, len, val);
  phase_end(x);
  x->updates++;
  return 0;
}

static u32
dpcpe_get(const struct lpm_engine *e, const net_addr *n)
{
  struct dpcpe *x = (void *) e;
  struct dpcpe_key k;
  uint len;

  net_key(x, n, &k, &len);
  struct dpcpe_pfx *p = dpcpe_map_find(&x->map, k, len);
  return p ? p->val : LPM_NONE;
}

static uint
dpcpe_dump(const struct lpm_engine *e, struct lpm_route *r, uint max, u64 *pos)
{
  struct dpcpe *x = (void *) e;
  struct dpcpe_pfx *sl = x->map.count ? dpcpe_map_slots(&x->map) : NULL;
  uint cnt = 0;
  u64 i;

  for (i = *pos; sl && (i < x->map.size) && (cnt < max); i++)
  {
    if (!sl[i].used)
      continue;

    if (x->bits == 32)
      net_fill_ip4(&r[cnt].n.n, ip4_from_u32(sl[i].hi >> 32), sl[i].len);
    else
      net_fill_ip6(&r[cnt].n.n, ip6_build(sl[i].hi >> 32, (u32) sl[i].hi, sl[i].lo >> 32, (u32) sl[i].lo), sl[i].len);
    r[cnt++].value = sl[i].val;
  }

  *pos = i;
  return cnt;
}

static int
dpcpe_remove(struct lpm_engine *e, const net_addr *n, u32 *old)
{
  struct dpcpe *x = (void *) e;
  struct dpcpe_key k;
  uint len;
  u32 dummy;

  old = old ?: &dummy;
  net_key(x, n, &k, &len);
  struct dpcpe_pfx *p = dpcpe_map_find(&x->map, k, len);
  if (!p)
  {
    *old = LPM_NONE;
    return 0;
  }

  *old = p->val;
  reclaim(x);

  /* The next covering prefix inside the same level (or array) */
  uint li = x->s.level_of[len];
  int lo = (li == DPCPE_ARRAY) ? -1 : x->s.lv[li].lo;
  struct dpcpe_pfx q = {}, *qp = NULL;
  for (int j = len - 1; j > lo; j--)
    if (x->len_count[j] && (qp = dpcpe_map_find(&x->map, dpcpe_key_mask(k, j), j)))
    {
      q = *qp;
      break;
    }

  if (dir_reserve(x) < 0)
    return fail(x);

  phase_begin(x);
  expand_remove(x, k, len, qp ? &q : NULL);
  dpcpe_map_del(&x->map, p);
  x->len_count[len]--;
  if (li != DPCPE_ARRAY)
    dpcpe_level_shrink(x, &x->s.lv[li]);
  phase_end(x);
  x->updates++;
  return 0;
}

static int
dpcpe_build(struct lpm_engine *e, const struct lpm_route *r, uint count)
{
  struct dpcpe *x = (void *) e;
  btime t0 = dpcpe_now();

  reclaim(x);

  /* A new map aside; the old one is kept until the new layout is complete */
  struct dpcpe_map old = x->map;
  u32 old_count[129];
  memcpy(old_count, x->len_count, sizeof(old_count));

  if (dpcpe_map_init(&x->map, &x->ca, count) < 0)
  {
    x->map = old;
    return fail(x);
  }
  memset(x->len_count, 0, sizeof(x->len_count));

  for (uint i = 0; i < count; i++)
  {
    struct dpcpe_key k;
    uint len;
    ASSERT(r[i].value <= LPM_VALUE_MAX);
    net_key(x, &r[i].n.n, &k, &len);
    struct dpcpe_pfx *p = dpcpe_map_find(&x->map, k, len);
    if (p)
      p->val = r[i].value;
    else
    {
      dpcpe_map_add(&x->map, k, len, r[i].value);
      x->len_count[len]++;
    }
  }

  struct dpcpe_hist *h = xmalloc(sizeof(struct dpcpe_hist));
  u8 levels[DPCPE_DIR_LEVELS];
  uint dbits, nlev;
  u64 cost;
  struct dpcpe_layout s;

  if ((dpcpe_hist_build(x, h) < 0) ||
      (levels_for(x, h, &dbits, levels, &nlev, &cost), dir_reserve(x) < 0) ||
      (construct(x, &s, h, dbits, levels, nlev) < 0))
  {
    xfree(h);
    dpcpe_map_fini(&x->map);
    x->map = old;
    memcpy(x->len_count, old_count, sizeof(old_count));
    return fail(x);
  }
  xfree(h);

  phase_begin(x);
  install(x, &s);
  phase_end(x);
  dpcpe_map_fini(&old);

  x->choice_prefixes = x->map.count;
  x->choice_cost = cost;
  x->builds++;
  x->last_build = dpcpe_now();
  x->last_build_time = x->last_build - t0;
  return 0;
}

/*
 *	Lookups (scalar)
 */

static u32
dpcpe_lookup4(const struct lpm_engine *e, ip4_addr a)
{
  const byte *base = ((const struct dpcpe *) e)->base;

  for (;;)
  {
    u64 s = dpcpe_read_start(base);
    u32 v = dpcpe_find4(base, dpcpe_dir_get(base), _I(a));
    if (dpcpe_read_ok(base, s))
      return ~v;
  }
}

static u32
dpcpe_lookup6(const struct lpm_engine *e, ip6_addr a)
{
  const byte *base = ((const struct dpcpe *) e)->base;

  for (;;)
  {
    u64 s = dpcpe_read_start(base);
    u32 v = dpcpe_find6(base, dpcpe_dir_get(base), a.addr);
    if (dpcpe_read_ok(base, s))
      return ~v;
  }
}

/* Stages A and B of a group, scalar (see the batch comment in lpm-dpcpe.h) */
static void
group_scalar(const byte *base, const struct dpcpe_dir *d, struct dpcpe_group *g)
{
  for (uint w0 = 0; (w0 < d->nlevels) && g->active; w0 += DPCPE_WIN)
  {
    uint nw = MIN(DPCPE_WIN, d->nlevels - w0);

    for (uint i = 0; i < nw; i++)
    {
      const struct dpcpe_ldesc *l = &d->lv[w0 + i];
      g->lm[i] = g->active & dpcpe_group_lanes(g, l->hbit);
      for (u64 m = g->lm[i]; m; m &= m - 1)
      {
	uint j = __builtin_ctzll(m);
	u32 k[4] = { g->w[0][j] & l->mask[0], g->w[1][j] & l->mask[1], g->w[2][j] & l->mask[2], g->w[3][j] & l->mask[3] };
	u64 h = dpcpe_hash(k, l->words, l->sa, l->sb);
	g->ha[i][j] = dpcpe_ha(h);
	g->hb[i][j] = dpcpe_hb(h);
      }
      dpcpe_group_prefetch(base, l, g, i);
    }

    for (uint i = 0; i < nw; i++)
    {
      const struct dpcpe_ldesc *l = &d->lv[w0 + i];
      if (!l->filter)
      {
	g->pos[i] = g->lm[i];
	continue;
      }

      g->pos[i] = 0;
      for (u64 m = g->lm[i]; m; m &= m - 1)
      {
	uint j = __builtin_ctzll(m);
	if (dpcpe_filter_test(base, l, ((u64) g->hb[i][j] << 32) | g->ha[i][j]))
	  g->pos[i] |= 1ULL << j;
      }
    }

    dpcpe_group_probe(base, d, g, w0, nw);
  }
}

/**
 * dpcpe_bulk_run - batch lookups, group by group
 * @e: engine
 * @a: addresses, @words 32-bit words each (1: IPv4, 4: IPv6)
 * @val: answers
 * @n: number of addresses
 * @words: words per address
 * @group: the variant's filter tests and probes of one loaded group
 *
 * The one batch driver of all variants: each group of %DPCPE_GROUP
 * addresses is loaded, its hints read, handed to @group and finished under
 * the reader's sequence check, and done again if a writer moved the
 * directory meanwhile. The array entries and hints of the next group are
 * prefetched before this one is worked on, so that its hints are in the
 * cache when it is loaded.
 */
void
dpcpe_bulk_run(const struct lpm_engine *e, const u32 *a, u32 *val, uint n, uint words, dpcpe_group_fn *group)
{
  const byte *base = ((const struct dpcpe *) e)->base;
  struct dpcpe_group g __attribute__((aligned(64)));
  memset(g.w[1], 0, 3 * sizeof(g.w[1]));	/* IPv4 groups load w[0] only */

  dpcpe_prefetch_slots(base, dpcpe_dir_get(base), a, MIN(DPCPE_GROUP, n), words);
  for (uint i = 0; i < n; i += DPCPE_GROUP)
  {
    uint m = MIN(DPCPE_GROUP, n - i);
    u64 s;
    do {
      s = dpcpe_read_start(base);
      const struct dpcpe_dir *d = dpcpe_dir_get(base);
      if (i + DPCPE_GROUP < n)
	dpcpe_prefetch_slots(base, d, a + (size_t) (i + DPCPE_GROUP) * words, MIN(DPCPE_GROUP, n - i - DPCPE_GROUP), words);
      dpcpe_group_load(&g, a + (size_t) i * words, m, words);
      dpcpe_group_hints(base, d, &g);
      group(base, d, &g);
      dpcpe_group_finish(base, d, &g, val + i);
    } while (!dpcpe_read_ok(base, s));
  }
}

void
dpcpe_bulk4_scalar(const struct lpm_engine *e, const ip4_addr *a, u32 *val, uint n)
{
  dpcpe_bulk_run(e, (const u32 *) a, val, n, 1, group_scalar);
}

void
dpcpe_bulk6_scalar(const struct lpm_engine *e, const ip6_addr *a, u32 *val, uint n)
{
  dpcpe_bulk_run(e, (const u32 *) a, val, n, 4, group_scalar);
}

/*
 *	Life cycle
 */

/**
 * dpcpe_create_ex - create a dpcpe engine with explicit options
 * @p: parent pool
 * @net_type: %NET_IP4 or %NET_IP6
 * @variant: batch lookup variant (already selected)
 * @o: options
 *
 * Returns NULL if the options are out of range or memory cannot be
 * reserved.
 */
struct lpm_engine *
dpcpe_create_ex(pool *p, uint net_type, uint variant, const struct dpcpe_opts *o)
{
  if ((net_type != NET_IP4) && (net_type != NET_IP6))
    return NULL;
  if (o->levels && ((o->levels < DPCPE_MIN_LEVELS) || (o->levels > DPCPE_MAX_LEVELS)))
    return NULL;
  if ((o->cmax < 1) || (o->cmax > 15) || (o->filter_k < 1) || (o->filter_k > 16) || !o->filter_bits)
    return NULL;

  uint bits = (net_type == NET_IP4) ? 32 : 128;
  for (uint i = 0; i < o->nfixed; i++)
    if ((o->fixed[i] > bits) || (o->fixed[i] <= ((bits == 32) ? DPCPE_DBITS4 : DPCPE_DBITS6)) ||
	(i && (o->fixed[i] <= o->fixed[i - 1])))
      return NULL;

  pool *ep = rp_new(p, "LPM dpcpe");
  struct dpcpe *x = mb_allocz(ep, sizeof(struct dpcpe));
  lpm_engine_init(&x->e, o->per_length ? &lpm_perlength_class : &lpm_dpcpe_class, ep, net_type, variant);
  x->o = *o;
  x->bits = bits;
  x->dp = !o->per_length && !o->nfixed && ((bits == 128) || o->levels);
  if (x->dp && !x->o.levels)
    x->o.levels = DPCPE_DEF_LEVELS6;

  if ((dpcpe_arena_init(&x->la, ep, o->lookup_limit) < 0) ||
      (dpcpe_arena_init(&x->ca, ep, o->control_limit) < 0))
    goto err;

  /* The header takes the first line of the lookup region */
  x->base = x->la.base;
  x->hdr = (struct dpcpe_hdr *) x->base;
  x->la.top = MAX(x->la.top, 64);
  x->hdr->magic = DPCPE_MAGIC;
  x->hdr->version = DPCPE_VERSION;

  if (dpcpe_map_init(&x->map, &x->ca, 0) < 0)
    goto err;

  struct dpcpe_hist *h = xmalloc(sizeof(struct dpcpe_hist));
  memset(h, 0, sizeof(*h));
  u8 levels[DPCPE_DIR_LEVELS];
  uint dbits, nlev;
  u64 cost;
  levels_for(x, h, &dbits, levels, &nlev, &cost);
  int r = (dir_reserve(x) < 0) ? -1 : construct(x, &x->s, h, dbits, levels, nlev);
  xfree(h);
  if (r < 0)
    goto err;
  dir_publish(x);

  return &x->e;

err:
  lpm_engine_fini(&x->e);
  rfree(ep);
  return NULL;
}

static struct lpm_engine *
dpcpe_create(pool *p, uint net_type, const struct lpm_params *par)
{
  struct dpcpe_opts o;
  dpcpe_opts_default(&o);
  o.levels = par->levels;

  /* No reader of other processes knows this layout (proto/lpm refuses it too) */
  if (par->shm_name)
  {
    errno = EOPNOTSUPP;
    return NULL;
  }

  int v = lpm_variant_select(par->variant, lpm_dpcpe_class.variants);
  if (v < 0)
    return NULL;

  return dpcpe_create_ex(p, net_type, v, &o);
}

/* The ablation: a filter and table per prefix length, nothing expanded */
static struct lpm_engine *
perlength_create(pool *p, uint net_type, const struct lpm_params *par)
{
  struct dpcpe_opts o;
  dpcpe_opts_default(&o);
  o.per_length = 1;

  if (par->shm_name)
  {
    errno = EOPNOTSUPP;
    return NULL;
  }

  int v = lpm_variant_select(par->variant, lpm_perlength_class.variants);
  if (v < 0)
    return NULL;

  return dpcpe_create_ex(p, net_type, v, &o);
}

static void
dpcpe_free(struct lpm_engine *e)
{
  pool *p = e->pool;
  lpm_engine_fini(e);
  rfree(p);
}

/*
 *	Statistics
 */

static void
dpcpe_stats(const struct lpm_engine *e, struct lpm_stats *s)
{
  const struct dpcpe *x = (const void *) e;

  memset(s, 0, sizeof(*s));
  s->prefixes = x->map.count;
  s->updates = x->updates;
  s->builds = x->builds;
  s->last_build = x->last_build;
  s->last_build_time = x->last_build_time;
  s->mem_lookup = x->la.live;
  s->mem_control = x->ca.live + sizeof(struct dpcpe) + x->s.nlev * sizeof(struct dpcpe_level);
  for (uint i = 0; i < x->s.nlev; i++)
    s->units += x->s.lv[i].count;
  s->retired = x->nrs + x->la.nret;
  s->alloc_failures = x->alloc_failures;
}

static void
fmt_bytes(char *buf, u64 b)
{
  if (b >= (10ULL << 20))
    bsprintf(buf, "%lu MB", (ulong) (b >> 20));
  else if (b >= (10ULL << 10))
    bsprintf(buf, "%lu kB", (ulong) (b >> 10));
  else
    bsprintf(buf, "%lu B", (ulong) b);
}

/* BIRD's printf has no floating point: v with @d decimals (1, 2 or 4) */
static char *
fmt_frac(char *buf, double v, uint d)
{
  uint sc = (d == 1) ? 10 : (d == 2) ? 100 : 10000;
  u64 n = (u64) (v * sc + 0.5);
  if (d == 1)
    bsprintf(buf, "%lu.%01u", (ulong) (n / sc), (uint) (n % sc));
  else if (d == 2)
    bsprintf(buf, "%lu.%02u", (ulong) (n / sc), (uint) (n % sc));
  else
    bsprintf(buf, "%lu.%04u", (ulong) (n / sc), (uint) (n % sc));
  return buf;
}

static void
dpcpe_show(const struct lpm_engine *e, struct cli *c, int code)
{
  struct dpcpe *x = (void *) e;
  const struct dpcpe_layout *s = &x->s;
  char b1[32], b2[32], f1[32], f2[32], f3[32];
  u32 arr_used = 0;
  byte *own = dpcpe_ptr(&x->ca, s->arr_own);

  for (u64 i = 0; i < (1ULL << s->dbits); i++)
    arr_used += (own[i] != DPCPE_FREE);

  cli_printf(c, code, "  Levels:         %s, direct /%u + %u hash level%s (%s), %u re-chosen",
	     (x->bits == 32) ? "IPv4" : "IPv6", s->dbits, s->nlev, (s->nlev == 1) ? "" : "s",
	     x->o.per_length ? "one per length, no expansion" : x->o.nfixed ? "fixed" :
	     x->dp ? "chosen by DP" : "fixed groups /24, /32", (uint) x->relevels);

  fmt_bytes(b1, (4ULL << s->dbits));
  u32 dpfx = 0;
  for (uint l = 0; l <= s->dbits; l++)
    dpfx += x->len_count[l];
  cli_printf(c, code, "  Direct /%-2u:     %u prefixes /0-/%u, %u of %lu entries set, %s",
	     s->dbits, dpfx, s->dbits, arr_used, (ulong) (1ULL << s->dbits), b1);
  fmt_bytes(b1, (1ULL << s->h.bits));
  cli_printf(c, code, "  Hints /%-2u:      %lu of %lu name levels, %s, %u bit%s",
	     s->h.bits, (ulong) dpcpe_hint_slots_used(x, 0), (ulong) (1ULL << s->h.bits), b1, s->h.n, (s->h.n == 1) ? "" : "s");
  if (s->h.fbits)
  {
    fmt_bytes(b1, (1ULL << s->h.fbits));
    cli_printf(c, code, "  Hints /32:      %lu of %lu hashed bytes name levels of /%u or longer, %s",
	       (ulong) dpcpe_hint_slots_used(x, 1), (ulong) (1ULL << s->h.fbits), DPCPE_FLEN, b1);
  }

  for (int i = s->nlev - 1; i >= 0; i--)
  {
    struct dpcpe_level *l = &s->lv[i];
    fmt_bytes(b1, (u64) l->d.nb * DPCPE_BUCKET);
    fmt_bytes(b2, (u64) l->d.nw * 8);
    cli_printf(c, code, "  Level /%-3u:     %u prefixes /%u-/%u, %u entries, table %s (%u buckets, load %s), "
	       "filter %s (%s bits/entry, %u bits/key%s), false positives %s measured, %u saturated",
	       l->d.len, l->prefixes, l->lo + 1, l->d.len, l->count, b1, l->d.nb,
	       fmt_frac(f1, (double) l->used / dpcpe_level_slots(l), 2), b2,
	       fmt_frac(f2, l->count ? 64.0 * l->d.nw / l->count : 0.0, 1), l->d.k,
	       l->d.filter ? "" : ", not tested",
	       fmt_frac(f3, dpcpe_level_fp_sample(x, l, 4096), 4), l->saturated);
  }

  fmt_bytes(b1, x->la.live);
  fmt_bytes(b2, x->ca.live);
  cli_printf(c, code, "  Memory:         lookup %s, control %s; %lu table resizes, %lu expanded entries predicted",
	     b1, b2, (ulong) x->resizes, (ulong) x->choice_cost);
}

/**
 * dpcpe_check - verify the whole engine against its map (tests)
 * @x: engine
 *
 * Every level's invariants hold, every entry's owner is a prefix in the
 * map that produces it, and the entries are exactly the expansions that
 * no longer prefix of the level captures. Returns 1 if so.
 */
int
dpcpe_check(struct dpcpe *x)
{
  struct dpcpe_layout *s = &x->s;
  int ok = 1;

  for (uint i = 0; i < s->nlev; i++)
  {
    struct dpcpe_level *l = &s->lv[i];
    if (!dpcpe_level_check(x, l))
      ok = 0;

    byte *own = dpcpe_level_owner(x, l);
    u32 slots = dpcpe_level_slots(l);
    for (u32 sl = 0; sl < slots; sl++)
    {
      if (own[sl] >= DPCPE_RETIRED)
	continue;

      /* The owner exists, and no longer prefix of the level covers the entry */
      struct dpcpe_key k = dpcpe_level_key(x, l, sl);
      struct dpcpe_pfx *o = dpcpe_map_find(&x->map, dpcpe_key_mask(k, own[sl]), own[sl]);
      if (!o)
	ok = 0;
      for (uint j = own[sl] + 1; ok && (j <= l->d.len); j++)
	if (x->len_count[j] && dpcpe_map_find(&x->map, dpcpe_key_mask(k, j), j))
	  ok = 0;
    }
  }

  /* Every prefix's expansions are present */
  struct dpcpe_pfx *ps = dpcpe_map_slots(&x->map);
  for (u32 i = 0; ok && (i < x->map.size); i++)
  {
    if (!ps[i].used)
      continue;

    uint li = s->level_of[ps[i].len];
    if (li == DPCPE_ARRAY)
    {
      byte *own = dpcpe_ptr(&x->ca, s->arr_own);
      u64 first = arr_index(s, (struct dpcpe_key) { ps[i].hi, ps[i].lo });
      for (u64 j = first; j < first + (1ULL << (s->dbits - ps[i].len)); j++)
	if ((own[j] == DPCPE_FREE) || (own[j] < ps[i].len))
	  ok = 0;
      continue;
    }
    if (li >= s->nlev)
    {
      ok = 0;
      break;
    }

    struct dpcpe_level *l = &s->lv[li];
    uint gap = l->d.len - ps[i].len;
    if (gap > 16)
      continue;
    for (u64 j = 0; j < (1ULL << gap); j++)
    {
      struct dpcpe_key ek = dpcpe_key_nth((struct dpcpe_key) { ps[i].hi, ps[i].lo }, l->d.len, j);
      s64 sl = dpcpe_level_find(x, l, ek, dpcpe_level_hash(l, ek));
      if ((sl < 0) || (dpcpe_level_owner(x, l)[sl] < ps[i].len))
	ok = 0;
    }
  }

  return ok && dpcpe_hint_check(x);
}

const struct lpm_class lpm_dpcpe_class = {
  .name = "dpcpe",
  .variants = LPM_VARIANTS_BUILT,
  .levels = 1,
  .create = dpcpe_create,
  .free = dpcpe_free,
  .update = dpcpe_update,
  .remove = dpcpe_remove,
  .build = dpcpe_build,
  .find = dpcpe_get,
  .dump = dpcpe_dump,
  .lookup4 = dpcpe_lookup4,
  .lookup6 = dpcpe_lookup6,
  .bulk4 = {
    [LPM_VAR_SCALAR] = dpcpe_bulk4_scalar,
    [LPM_VAR_AVX2] = LPM_IF_AVX2(dpcpe_bulk4_avx2),
    [LPM_VAR_AVX512] = LPM_IF_AVX512(dpcpe_bulk4_avx512),
  },
  .bulk6 = {
    [LPM_VAR_SCALAR] = dpcpe_bulk6_scalar,
    [LPM_VAR_AVX2] = LPM_IF_AVX2(dpcpe_bulk6_avx2),
    [LPM_VAR_AVX512] = LPM_IF_AVX512(dpcpe_bulk6_avx512),
  },
  .stats = dpcpe_stats,
  .show = dpcpe_show,
};

LPM_CLASS_REGISTER(lpm_dpcpe_class);

/*
 * `perlength': the same engine with one filter and table per prefix length
 * and no expansion (the scheme DPCPE improves on), so that benchmarks
 * measure what the expansion gains. An ablation, not an engine to run: it
 * is not registered, so configurations do not know it; the benchmark tools
 * and the unit test take it by its class.
 */
const struct lpm_class lpm_perlength_class = {
  .name = "perlength",
  .variants = LPM_VARIANTS_BUILT,
  .create = perlength_create,
  .free = dpcpe_free,
  .update = dpcpe_update,
  .remove = dpcpe_remove,
  .build = dpcpe_build,
  .find = dpcpe_get,
  .dump = dpcpe_dump,
  .lookup4 = dpcpe_lookup4,
  .lookup6 = dpcpe_lookup6,
  .bulk4 = {
    [LPM_VAR_SCALAR] = dpcpe_bulk4_scalar,
    [LPM_VAR_AVX2] = LPM_IF_AVX2(dpcpe_bulk4_avx2),
    [LPM_VAR_AVX512] = LPM_IF_AVX512(dpcpe_bulk4_avx512),
  },
  .bulk6 = {
    [LPM_VAR_SCALAR] = dpcpe_bulk6_scalar,
    [LPM_VAR_AVX2] = LPM_IF_AVX2(dpcpe_bulk6_avx2),
    [LPM_VAR_AVX512] = LPM_IF_AVX512(dpcpe_bulk6_avx512),
  },
  .stats = dpcpe_stats,
  .show = dpcpe_show,
};

