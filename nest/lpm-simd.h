/*
 *	bloombird -- The simd LPM engine (state-jump table): lookup layout
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_LPM_SIMD_H_
#define _BIRD_LPM_SIMD_H_

#include "nest/lpm.h"

/*
 * Lookup memory of the simd engine (nest/lpm-simd.c explains why it looks
 * like this). It is one lpm_region: a page with &simd_header, then an array
 * of 4-byte elements. Element 0 starts the root table (2^stride[0]
 * elements); rows of 2^stride[k] elements for the deeper levels follow
 * anywhere after it. Nothing in it is a pointer, so it can be mapped at any
 * address, by another process too.
 *
 * An element is either a row link or a leaf:
 *   < 0x80000000	link: the index of the row's first element
 *   >= 0x80000000	leaf: the answer is the element - 0x80000001 (mod 2^32),
 *			so 0x80000000 answers %LPM_NONE
 *
 * A lookup of address A: e = mem[A's first stride[0] bits]; while e is a
 * link: e = mem[e + A's next stride[k] bits]. The loop ends at a leaf at the
 * latest at the last level (and stops there in any case: see below). No
 * level crosses a 32-bit word of the address.
 *
 * The lookup code takes a &simd_view, never the engine: a view is built
 * from the header alone (simd_view_init()), so the same code serves a region
 * mapped read-only elsewhere.
 */

#define SIMD_MAX_LEVELS	24
#define SIMD_MAX_STRIDE	8		/* Rows below the root */
#define SIMD_MAX_ROOT	20		/* Root table: at most 2^20 elements */

#define SIMD_LEAF	0x80000000U	/* Leaf flag; also the leaf answering LPM_NONE */

#define SIMD_MAGIC	0x534a5431	/* "SIMD1" */
#define SIMD_VERSION	1
#define SIMD_HEADER_SIZE	4096		/* Elements start this far into the region */

static inline u32 simd_leaf(u32 value) { return value + 0x80000001U; }
static inline u32 simd_value(u32 e) { return e - 0x80000001U; }
static inline int simd_is_link(u32 e) { return e < SIMD_LEAF; }

/* At the start of the region; written once at creation */
struct simd_header {
  u32 magic;				/* SIMD_MAGIC */
  u32 version;				/* SIMD_VERSION */
  u32 family;				/* 4 or 6 */
  u32 levels;				/* Entries of @stride in use */
  u32 elements_offset;			/* Bytes from the region start to element 0 */
  u32 reserved;
  u64 elements_max;			/* Elements the region can hold */
  u8 stride[SIMD_MAX_LEVELS];		/* Bits per level; [0] is the root */
};

/* What the lookup code needs: built from a header by simd_view_init() */
struct simd_view {
  const u32 *mem;			/* Element 0 */
  u32 last;				/* Highest element index: every link is clamped to it */
  u32 levels;
  u8 word[SIMD_MAX_LEVELS];		/* Level k's bits are in 32-bit word word[k] of the address */
  u8 shift[SIMD_MAX_LEVELS];		/*   at (word >> shift[k]) & mask[k] */
  u32 mask[SIMD_MAX_LEVELS];
};

int simd_view_init(struct simd_view *v, const void *region);

/*
 * One address (inline, so callers with a view need no call). A walk stops
 * at the last level even on a link: a reader in another process may follow
 * a link into a row that was retired and reused for a shallower level
 * meanwhile; its answer is then discarded by the reuse check, but the walk
 * itself must end and index only the view's levels. Likewise, an index a
 * link leads to is clamped to the view's last element: a reader maps a
 * region whose contents it cannot trust (a forged or corrupted object), and
 * a clamped index reads some element of the region, never beyond it. The
 * batches do the same.
 */
static inline u32
simd_view_lookup4(const struct simd_view *v, u32 a)
{
  const u32 *m = v->mem;
  u32 e = m[a >> v->shift[0]];

  for (uint k = 1; (k < v->levels) && simd_is_link(e); k++)
    e = m[MIN(e + ((a >> v->shift[k]) & v->mask[k]), v->last)];

  return simd_value(e);
}

static inline u32
simd_view_lookup6(const struct simd_view *v, const ip6_addr *a)
{
  const u32 *m = v->mem;
  u32 e = m[a->addr[0] >> v->shift[0]];

  for (uint k = 1; (k < v->levels) && simd_is_link(e); k++)
    e = m[MIN(e + ((a->addr[v->word[k]] >> v->shift[k]) & v->mask[k]), v->last)];

  return simd_value(e);
}

/* Batch lookups of a view: nest/lpm-simd.c (scalar), sysdep/x86 (vector) */
void simd_bulk4_scalar(const struct simd_view *v, const ip4_addr *a, u32 *val, uint n);
void simd_bulk6_scalar(const struct simd_view *v, const ip6_addr *a, u32 *val, uint n);
void simd_bulk4_avx2(const struct simd_view *v, const ip4_addr *a, u32 *val, uint n);
void simd_bulk6_avx2(const struct simd_view *v, const ip6_addr *a, u32 *val, uint n);
void simd_bulk4_avx512(const struct simd_view *v, const ip4_addr *a, u32 *val, uint n);
void simd_bulk6_avx512(const struct simd_view *v, const ip6_addr *a, u32 *val, uint n);

/*
 * Engine specifics beyond struct lpm_class (tools, tests, the exporter):
 *
 * simd_new_plan() creates an engine with a given stride plan (root first;
 * the plan must cover 32 or 128 bits, rows 1..8 bits, the root 8..20 bits,
 * no level crossing a 32-bit word); NULL if the plan or variant is invalid.
 * simd_view() gives the engine's view, simd_region_base() the region.
 * simd_set_limit() caps the lookup memory (bytes, for tests of allocation
 * failure); simd_set_poison() makes reclaimed rows be overwritten with
 * leaves answering @value, so a reader that still used one would notice.
 */
struct simd_info {
  u32 levels;
  u8 stride[SIMD_MAX_LEVELS];
  u64 rows[SIMD_MAX_LEVELS];		/* Rows in use per level ([0]: the root) */
  u64 nodes[SIMD_MAX_LEVELS];		/* Control nodes per level */
  u64 aggregated[SIMD_MAX_LEVELS];	/* Nodes without a row (all elements equal) */
  u64 free_rows;			/* Reusable */
  u64 limbo_rows;			/* Retired, waiting for readers */
  u64 reclaimed;			/* Rows moved from limbo to reuse, ever */
  u64 elements_top;			/* High-water mark of elements */
  u64 writes;				/* Element stores into live lookup memory */
  u64 hash_slots;			/* Prefix hash: slots, */
  u64 hash_count;			/* prefixes, */
  u64 hash_run;				/* and its longest run of occupied slots */
};

struct lpm_engine *simd_new_plan(pool *p, uint net_type, uint variant, const u8 *stride, uint levels);
const struct simd_view *simd_view(const struct lpm_engine *e);
const void *simd_region_base(const struct lpm_engine *e);
void simd_set_limit(struct lpm_engine *e, size_t bytes);
void simd_set_poison(struct lpm_engine *e, int on, u32 value);
void simd_get_info(const struct lpm_engine *e, struct simd_info *i);
int simd_plan_parse(const char *s, u8 *stride, uint max);
int simd_plan_format(char *buf, uint size, const u8 *stride, uint levels);

extern const struct lpm_class lpm_simd_class;

#endif
