/*
 *	bloombird -- The dpcpe LPM engine: memory arenas
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe arenas
 *
 * The engine keeps its memory in two &lpm_region mappings: lookup memory
 * (what readers touch, addressed by offsets so that the whole region could
 * be mapped by another process) and control memory (owner bytes, counters,
 * the original prefixes). An arena hands out blocks of either by offset.
 *
 * Why not mb_alloc()? A region never moves, so offsets and pointers into it
 * stay valid while tables grow elsewhere in it; and an arena can refuse an
 * allocation (its reservation is its limit) where mb_alloc() would end the
 * daemon, so an update that runs out of memory fails cleanly and leaves the
 * engine as it was.
 *
 * Blocks are rounded to 64 bytes; freed ones are kept in a sorted list of
 * coalesced extents (an engine has a few dozen blocks, so first fit over a
 * small array is enough) and a free extent at the top lowers the bump
 * pointer and gives its pages back to the kernel. The regions ask for
 * transparent huge pages where the system has them (lookups read tables
 * of many megabytes at random; with 4 kB pages most of them would also
 * miss the TLB). Lookup blocks that
 * readers may still see are retired with an epoch and freed once
 * lpm_epoch_safe() says so. Memory handed out is always zero.
 */

#include "nest/bird.h"
#include "nest/lpm-dpcpe.h"
#include "lib/resource.h"

#include <sys/mman.h>

#define ARENA_ALIGN	64
#define ARENA_PAGE	4096

/**
 * dpcpe_arena_init - set up an arena in a region of its own
 * @a: arena to initialize
 * @p: pool for the region and the arena's lists
 * @size: bytes to reserve: the arena's limit
 *
 * Reserves the region and asks for transparent huge pages on it. Offset 0
 * is never handed out, so it can mean no block. Returns 0, or -1 if the
 * region cannot be reserved.
 */
int
dpcpe_arena_init(struct dpcpe_arena *a, pool *p, u64 size)
{
  memset(a, 0, sizeof(*a));
  a->rg = lpm_region_new(p, size);
  if (!a->rg)
    return -1;

  a->base = a->rg->base;
  a->pool = p;

  /* Tables of many MB are read at random: huge pages spare a TLB miss per lookup */
  madvise(a->base, a->rg->size, MADV_HUGEPAGE);

  a->top = ARENA_ALIGN;			/* Offset 0 is never a block */
  return 0;
}

static void
arena_grow(void **arr, uint *max, uint esize, pool *p)
{
  uint n = *max ? 2 * *max : 16;
  void *x = mb_alloc(p, n * esize);
  if (*arr)
  {
    memcpy(x, *arr, *max * esize);
    mb_free(*arr);
  }
  *arr = x;
  *max = n;
}

static void
arena_zero(struct dpcpe_arena *a, u64 off, u64 size)
{
  /* Below @clean, memory may hold old data */
  if (off < a->clean)
    memset(a->base + off, 0, MIN(size, a->clean - off));
}

/**
 * dpcpe_arena_alloc - allocate a zeroed block
 * @a: arena
 * @size: bytes
 *
 * Returns the block's offset, or %DPCPE_NOMEM if the reservation is
 * exhausted.
 */
u64
dpcpe_arena_alloc(struct dpcpe_arena *a, u64 size)
{
  size = (size + ARENA_ALIGN - 1) & ~(u64) (ARENA_ALIGN - 1);
  if (!size)
    size = ARENA_ALIGN;

  for (uint i = 0; i < a->nfree; i++)
    if (a->free[i].size >= size)
    {
      u64 off = a->free[i].off;
      a->free[i].off += size;
      a->free[i].size -= size;
      if (!a->free[i].size)
      {
	memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof(struct dpcpe_extent));
	a->nfree--;
      }
      memset(a->base + off, 0, size);
      a->live += size;
      return off;
    }

  if (size > a->rg->size - a->top)
    return DPCPE_NOMEM;

  u64 off = a->top;
  a->top += size;
  arena_zero(a, off, size);
  a->live += size;
  a->peak = MAX(a->peak, a->top);
  a->rg->used = MAX(a->rg->used, a->top);
  return off;
}

/**
 * dpcpe_arena_free - free a block now
 * @a: arena
 * @off: its offset
 * @size: its size as allocated
 */
void
dpcpe_arena_free(struct dpcpe_arena *a, u64 off, u64 size)
{
  if (!off)
    return;

  size = (size + ARENA_ALIGN - 1) & ~(u64) (ARENA_ALIGN - 1);
  if (!size)
    size = ARENA_ALIGN;
  a->live -= size;

  /* Insert sorted, coalescing with neighbours */
  uint i = 0;
  while ((i < a->nfree) && (a->free[i].off < off))
    i++;

  if (i && (a->free[i - 1].off + a->free[i - 1].size == off))
  {
    i--;
    a->free[i].size += size;
  }
  else
  {
    if (a->nfree == a->free_max)
      arena_grow((void **) &a->free, &a->free_max, sizeof(struct dpcpe_extent), a->pool);
    memmove(&a->free[i + 1], &a->free[i], (a->nfree - i) * sizeof(struct dpcpe_extent));
    a->free[i] = (struct dpcpe_extent) { .off = off, .size = size };
    a->nfree++;
  }

  if ((i + 1 < a->nfree) && (a->free[i].off + a->free[i].size == a->free[i + 1].off))
  {
    a->free[i].size += a->free[i + 1].size;
    memmove(&a->free[i + 1], &a->free[i + 2], (a->nfree - i - 2) * sizeof(struct dpcpe_extent));
    a->nfree--;
  }

  /* The last extent reaches the top: lower it, give the pages back */
  struct dpcpe_extent *last = &a->free[a->nfree - 1];
  if (last->off + last->size == a->top)
  {
    a->top = last->off;
    a->nfree--;
    lpm_region_discard(a->rg, a->top);
    a->clean = (a->top + ARENA_PAGE - 1) & ~(u64) (ARENA_PAGE - 1);
    a->rg->used = a->top;
  }
}

/**
 * dpcpe_arena_retire - free a block once readers cannot see it
 * @a: arena
 * @off: its offset
 * @size: its size
 * @epoch: from lpm_epoch_retire(), taken after the block was unlinked
 */
void
dpcpe_arena_retire(struct dpcpe_arena *a, u64 off, u64 size, u64 epoch)
{
  if (!off)
    return;

  if (a->nret == a->ret_max)
    arena_grow((void **) &a->ret, &a->ret_max, sizeof(struct dpcpe_retired), a->pool);
  a->ret[a->nret++] = (struct dpcpe_retired) { .off = off, .size = size, .epoch = epoch };
}

/**
 * dpcpe_arena_reclaim - free the retired blocks readers have left
 * @a: arena
 * @e: engine whose readers count
 */
void
dpcpe_arena_reclaim(struct dpcpe_arena *a, struct lpm_engine *e)
{
  uint i = 0;
  while ((i < a->nret) && lpm_epoch_safe(e, a->ret[i].epoch))
  {
    dpcpe_arena_free(a, a->ret[i].off, a->ret[i].size);
    i++;
  }

  if (i)
  {
    memmove(a->ret, a->ret + i, (a->nret - i) * sizeof(struct dpcpe_retired));
    a->nret -= i;
  }
}
