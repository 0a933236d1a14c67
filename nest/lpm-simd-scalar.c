/*
 *	bloombird -- The simd LPM engine: views and scalar batch lookups
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: simd LPM engine, scalar lookups
 *
 * A view is what the lookup code knows of a state-jump table: where its
 * elements start and, per level, which bits of the address index it. It is
 * built from the region's header alone, so a reader in another process
 * that maps the region builds the same view and runs this same code.
 *
 * The scalar batch lookup walks a group of addresses level by level
 * instead of one address to the end: the loads of a group do not depend on
 * each other, so the CPU keeps a group's cache misses in flight together,
 * which is what the gathers of the vector variants do explicitly. Each
 * step is branch-free: a finished lane loads element 0 (always valid, in
 * cache) and keeps its leaf, by masks rather than a branch per lane.
 */

#include "nest/bird.h"
#include "nest/lpm-simd.h"

#define SIMD_GROUP	16
#define SIMD_UNROLL	_Pragma("GCC unroll 16")

/* All ones if @e links to a row; a mask, so that no branch is taken per lane */
static inline u32 simd_link_mask(u32 e) { return ~(u32) ((s32) e >> 31); }

/**
 * simd_view_init - view of a state-jump table
 * @v: view to fill
 * @region: start of the region (its &simd_header)
 *
 * Returns 0, or -1 if the header is not one this code can read.
 */
int
simd_view_init(struct simd_view *v, const void *region)
{
  const struct simd_header *h = region;

  if ((h->magic != SIMD_MAGIC) || (h->version != SIMD_VERSION) ||
      !h->levels || (h->levels > SIMD_MAX_LEVELS))
    return -1;

  /* The root row and every element a link may reach lie within @elements_max;
   * elements are aligned words */
  if ((h->elements_max > (1ULL << 31)) || (h->stride[0] > 31) ||
      (h->elements_max < (1ULL << h->stride[0])) || (h->elements_offset % sizeof(u32)))
    return -1;

  memset(v, 0, sizeof(*v));
  v->mem = (const u32 *) ((const byte *) region + h->elements_offset);
  v->last = h->elements_max - 1;
  v->levels = h->levels;

  /* Each level's bits within one 32-bit word of the address, all within it */
  uint bits = (h->family == 4) ? 32 : (h->family == 6) ? 128 : 0, d = 0;
  for (uint k = 0; k < h->levels; k++)
  {
    uint s = h->stride[k];
    if (!s || (s > 32 - (d % 32)) || (d + s > bits))
      return -1;

    v->word[k] = d / 32;
    v->shift[k] = 32 - (d % 32) - s;
    v->mask[k] = (s < 32) ? (1U << s) - 1 : ~0U;
    d += s;
  }

  return 0;
}

/**
 * simd_bulk4_scalar - batch lookup of IPv4 addresses in a view (scalar)
 * @v: the view
 * @a: addresses
 * @val: answers, one per address
 * @n: number of addresses
 *
 * Stores in @val[i] the value of the longest prefix covering @a[i], or
 * %LPM_NONE. Takes groups of %SIMD_GROUP addresses level by level, so that
 * their loads overlap, and the rest one at a time; the variant every
 * architecture has.
 */
void
simd_bulk4_scalar(const struct simd_view *v, const ip4_addr *a, u32 *val, uint n)
{
  const u32 *m = v->mem;
  uint i = 0;

  for (; i + SIMD_GROUP <= n; i += SIMD_GROUP)
  {
    u32 x[SIMD_GROUP], e[SIMD_GROUP];

    SIMD_UNROLL
    for (uint j = 0; j < SIMD_GROUP; j++)
    {
      x[j] = ip4_to_u32(a[i + j]);
      e[j] = m[x[j] >> v->shift[0]];
    }

    for (uint k = 1; k < v->levels; k++)
    {
      u32 links = 0;
      for (uint j = 0; j < SIMD_GROUP; j++)
	links |= ~e[j];
      if (!(links & SIMD_LEAF))
	break;

      uint sh = v->shift[k], mk = v->mask[k];
      SIMD_UNROLL
      for (uint j = 0; j < SIMD_GROUP; j++)
      {
	u32 l = simd_link_mask(e[j]);
	u32 y = m[MIN((e[j] + ((x[j] >> sh) & mk)) & l, v->last)];
	e[j] = (y & l) | (e[j] & ~l);
      }
    }

    for (uint j = 0; j < SIMD_GROUP; j++)
      val[i + j] = simd_value(e[j]);
  }

  for (; i < n; i++)
    val[i] = simd_view_lookup4(v, ip4_to_u32(a[i]));
}

/**
 * simd_bulk6_scalar - batch lookup of IPv6 addresses in a view (scalar)
 * @v: the view
 * @a: addresses
 * @val: answers, one per address
 * @n: number of addresses
 *
 * Stores in @val[i] the value of the longest prefix covering @a[i], or
 * %LPM_NONE. Takes groups of %SIMD_GROUP addresses level by level, so that
 * their loads overlap, and the rest one at a time; the variant every
 * architecture has.
 */
void
simd_bulk6_scalar(const struct simd_view *v, const ip6_addr *a, u32 *val, uint n)
{
  const u32 *m = v->mem;
  uint i = 0;

  for (; i + SIMD_GROUP <= n; i += SIMD_GROUP)
  {
    u32 e[SIMD_GROUP];
    const ip6_addr *g = a + i;

    SIMD_UNROLL
    for (uint j = 0; j < SIMD_GROUP; j++)
      e[j] = m[g[j].addr[0] >> v->shift[0]];

    for (uint k = 1; k < v->levels; k++)
    {
      u32 links = 0;
      for (uint j = 0; j < SIMD_GROUP; j++)
	links |= ~e[j];
      if (!(links & SIMD_LEAF))
	break;

      uint w = v->word[k], sh = v->shift[k], mk = v->mask[k];
      SIMD_UNROLL
      for (uint j = 0; j < SIMD_GROUP; j++)
      {
	u32 l = simd_link_mask(e[j]);
	u32 y = m[MIN((e[j] + ((g[j].addr[w] >> sh) & mk)) & l, v->last)];
	e[j] = (y & l) | (e[j] & ~l);
      }
    }

    for (uint j = 0; j < SIMD_GROUP; j++)
      val[i + j] = simd_value(e[j]);
  }

  for (; i < n; i++)
    val[i] = simd_view_lookup6(v, &a[i]);
}
