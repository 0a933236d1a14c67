/*
 *	bloombird -- The dpcpe LPM engine: choosing the expansion levels
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe level choice
 *
 * A lookup costs about one filter test per level, so fewer levels are
 * faster, but every prefix of length l held by a level of length L becomes
 * up to 2^(L-l) entries. DPCPE picks n levels by dynamic programming so
 * that the number of entries after expansion is smallest.
 *
 * Capture. Counting 2^(L-l) per prefix overestimates: an expanded entry
 * that a longer prefix of the same level also produces exists once (the
 * longer prefix captures it), and everything a prefix nested inside
 * another one of the same level expands to lies inside the outer one's
 * expansion. The exact count of a level (a, b] (prefixes of lengths a+1..b
 * expanded to b) is therefore the sum of 2^(b-l) over the prefixes that
 * have no ancestor of their own level, i.e. whose nearest ancestor in the
 * whole table is at most a long (or absent). So the histogram we keep is
 * two-dimensional, prefixes by length and by the length of their nearest
 * ancestor, computed once by sorting the prefixes; with it the cost of any
 * level is exact, the DP over the lengths in use (a level at a length no
 * prefix has is never better than at the longest used length below it) is
 * exact, and the tables can be sized before they are filled. The tests
 * check the count against brute force and against the built tables.
 *
 * Default. With the direct array taking prefixes up to /16, more levels
 * mean far fewer expanded entries of an IPv6 table but more filter tests
 * per lookup; the lookup rate measured by tests/tools/lpm/dpcpe-bench.c for 4 to
 * 12 levels decided %DPCPE_DEF_LEVELS6.
 *
 * Before an engine has seen prefixes it has a prior: the shape of a public
 * table, so that the first levels are sensible; the engine chooses again
 * from its own prefixes as it grows (lpm-dpcpe.c).
 */

#include "nest/bird.h"
#include "nest/lpm-dpcpe.h"

#include <stdlib.h>

static inline u64
sat_add(u64 a, u64 b)
{
  return (a + b > DPCPE_COST_MAX) ? DPCPE_COST_MAX : a + b;
}

static inline u64
sat_shl(u64 n, uint s)
{
  if (!n)
    return 0;
  if ((s >= 62) || (n > (DPCPE_COST_MAX >> s)))
    return DPCPE_COST_MAX;
  return n << s;
}

static int
pfx_cmp(const void *A, const void *B)
{
  const struct dpcpe_pfx *a = A, *b = B;
  if (a->hi != b->hi)
    return (a->hi < b->hi) ? -1 : 1;
  if (a->lo != b->lo)
    return (a->lo < b->lo) ? -1 : 1;
  return (int) a->len - (int) b->len;
}

static inline int
pfx_covers(const struct dpcpe_pfx *a, const struct dpcpe_pfx *p)
{
  if (a->len >= p->len)
    return 0;
  struct dpcpe_key k = dpcpe_key_mask((struct dpcpe_key) { p->hi, p->lo }, a->len);
  return (k.hi == a->hi) && (k.lo == a->lo);
}

/**
 * dpcpe_hist_build - prefixes by length and nearest-ancestor length
 * @x: engine (its prefix map)
 * @h: histogram to fill
 *
 * Sorts a copy of the prefixes by address and length, so that every
 * prefix follows its ancestors, and walks them with a stack of the open
 * ancestors. Returns -1 if the control arena has no room for the copy.
 */
int
dpcpe_hist_build(struct dpcpe *x, struct dpcpe_hist *h)
{
  struct dpcpe_map *m = &x->map;
  u64 sz = (u64) MAX(m->count, 1) * sizeof(struct dpcpe_pfx);
  u64 off = dpcpe_arena_alloc(&x->ca, sz);
  if (off == DPCPE_NOMEM)
    return -1;

  struct dpcpe_pfx *a = dpcpe_ptr(&x->ca, off), *s = dpcpe_map_slots(m);
  u32 n = 0;
  for (u32 i = 0; i < m->size; i++)
    if (s[i].used)
      a[n++] = s[i];

  qsort(a, n, sizeof(struct dpcpe_pfx), pfx_cmp);

  memset(h, 0, sizeof(*h));
  struct dpcpe_pfx *stack[130];
  uint sp = 0;

  for (u32 i = 0; i < n; i++)
  {
    while (sp && !pfx_covers(stack[sp - 1], &a[i]))
      sp--;

    h->n[a[i].len][sp ? stack[sp - 1]->len + 1 : 0]++;
    stack[sp++] = &a[i];
  }

  dpcpe_arena_free(&x->ca, off, sz);
  return 0;
}

/**
 * dpcpe_cost - entries of one level after expansion, capture counted
 * @h: histogram
 * @lo: the level holds lengths above this (the previous level, or the array's)
 * @len: the level's length
 *
 * Saturates at %DPCPE_COST_MAX.
 */
u64
dpcpe_cost(const struct dpcpe_hist *h, int lo, uint len)
{
  u64 c = 0;

  for (uint l = lo + 1; l <= len; l++)
  {
    /* Prefixes of length l with no ancestor in (lo, l) */
    u64 top = 0;
    for (int j = 0; j <= lo + 1; j++)
      top += h->n[l][j];
    c = sat_add(c, sat_shl(top, len - l));
  }

  return c;
}

/**
 * dpcpe_cost_levels - entries of a given level set
 * @h: histogram
 * @dbits: the direct array's length
 * @levels: lengths, ascending
 * @nlev: how many
 *
 * Prefixes longer than the last level make the cost %DPCPE_COST_MAX.
 */
u64
dpcpe_cost_levels(const struct dpcpe_hist *h, uint dbits, const u8 *levels, uint nlev)
{
  u64 c = 0;
  int lo = dbits;

  for (uint i = 0; i < nlev; i++)
  {
    c = sat_add(c, dpcpe_cost(h, lo, levels[i]));
    lo = levels[i];
  }

  for (uint l = lo + 1; l <= 128; l++)
    for (uint j = 0; j < 130; j++)
      if (h->n[l][j])
	return DPCPE_COST_MAX;

  return c;
}

/**
 * dpcpe_choose - the levels with the fewest entries
 * @h: histogram
 * @dbits: the direct array's length (prefixes up to it are not levelled)
 * @nmax: most levels
 * @levels: chosen lengths, ascending (room for @nmax)
 * @nlev: how many were chosen
 *
 * Dynamic programming over the lengths in use above @dbits: best[j][i] is
 * the fewest entries for the lengths up to P[i] with j levels, the last at
 * P[i]. The last level is the longest length in use. Returns the cost.
 */
u64
dpcpe_choose(const struct dpcpe_hist *h, uint dbits, uint nmax, u8 *levels, uint *nlev)
{
  u8 P[129];
  uint m = 0;

  for (uint l = dbits + 1; l <= 128; l++)
    for (uint j = 0; j < 130; j++)
      if (h->n[l][j])
      {
	P[m++] = l;
	break;
      }

  if (!m)
  {
    *nlev = 0;
    return 0;
  }

  if (m <= nmax)
  {
    memcpy(levels, P, m);
    *nlev = m;
    return dpcpe_cost_levels(h, dbits, levels, m);
  }

  /* cost[i'][i]: level at P[i] right after P[i'] (i' = m: after the array) */
  u64 (*cost)[129] = xmalloc(sizeof(u64[130][129]));
  for (uint i = 0; i < m; i++)
  {
    cost[m][i] = dpcpe_cost(h, dbits, P[i]);
    for (uint p = 0; p < i; p++)
      cost[p][i] = dpcpe_cost(h, P[p], P[i]);
  }

  u64 (*best)[129] = xmalloc(sizeof(u64[DPCPE_MAX_LEVELS + 1][129]));
  u8 (*from)[129] = xmalloc(sizeof(u8[DPCPE_MAX_LEVELS + 1][129]));

  for (uint i = 0; i < m; i++)
  {
    best[1][i] = cost[m][i];
    from[1][i] = 255;
  }

  for (uint j = 2; j <= nmax; j++)
    for (uint i = 0; i < m; i++)
    {
      best[j][i] = DPCPE_COST_MAX;
      from[j][i] = 255;
      for (uint p = j - 2; p < i; p++)
      {
	u64 c = sat_add(best[j - 1][p], cost[p][i]);
	if (c < best[j][i])
	{
	  best[j][i] = c;
	  from[j][i] = p;
	}
      }
    }

  /* Fewest levels that reach the best cost */
  uint bj = 1;
  for (uint j = 2; j <= nmax; j++)
    if (best[j][m - 1] < best[bj][m - 1])
      bj = j;

  u64 c = best[bj][m - 1];
  uint i = m - 1;
  for (uint j = bj; j >= 1; j--)
  {
    levels[j - 1] = P[i];
    i = from[j][i];
  }
  *nlev = bj;

  xfree(cost);
  xfree(best);
  xfree(from);
  return c;
}

/*
 * Priors, per mille of a public table (tier-1 2023) by length; no nesting.
 * The longest length is always present so that any prefix has a level.
 */
static const u16 prior4[33] = {
  [8] = 1, [12] = 1, [13] = 1, [14] = 1, [15] = 2, [16] = 15, [17] = 9, [18] = 15,
  [19] = 28, [20] = 47, [21] = 56, [22] = 120, [23] = 107, [24] = 596, [25] = 1,
  [28] = 1, [32] = 1,
};

static const u16 prior6[129] = {
  [20] = 1, [24] = 1, [28] = 1, [29] = 27, [30] = 4, [31] = 2, [32] = 141, [33] = 18,
  [34] = 16, [35] = 7, [36] = 37, [37] = 6, [38] = 10, [39] = 9, [40] = 84, [41] = 6,
  [42] = 14, [43] = 6, [44] = 90, [45] = 10, [46] = 19, [47] = 20, [48] = 471,
  [56] = 1, [64] = 1, [128] = 1,
};

/**
 * dpcpe_hist_prior - a histogram to choose levels before there are prefixes
 * @h: histogram to fill
 * @bits: 32 or 128
 */
void
dpcpe_hist_prior(struct dpcpe_hist *h, uint bits)
{
  memset(h, 0, sizeof(*h));
  for (uint l = 0; l <= bits; l++)
    h->n[l][0] = (bits == 32) ? prior4[l] : prior6[l];
}
