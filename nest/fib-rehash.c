/*
 *	bloombird -- Incremental FIB rehash
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Incremental FIB rehash
 *
 * Stock BIRD rehashes a FIB in one go inside the fib_get() or fib_delete()
 * that moves its entry count out of range: every node is visited, one cache
 * miss each. At a full BGP table that is one call of tens of milliseconds
 * or more, and the whole daemon (CLI, BGP keepalives, kernel sync) waits
 * for it.
 *
 * Here a large FIB keeps both tables while its buckets move over, a batch of
 * %FIB_REHASH_BATCH old buckets per run of an event, between main loop
 * cycles. That works because of how BIRD's FIB hashes: the bucket is the
 * top @hash_order bits of a 32-bit hash and each chain is sorted by that
 * hash, so the buckets in order are one sequence sorted by hash. Growing by
 * one order splits old bucket j into new buckets 2j and 2j+1; shrinking by
 * two merges old buckets 4j to 4j+3 into new bucket j. Old buckets are moved
 * in ascending order (whole groups when shrinking), so at any time the FIB
 * is the new table's complete buckets below @rehash_done followed by the old
 * table's buckets from @rehash_pos up, still one sequence sorted by hash.
 * fib_slot() finds the table and bucket of a hash, fib_chain() the chain at
 * a position in that sequence: lookups, inserts and deletes go to the right
 * table (fib_find() takes that way while the FIB's %FIB_FIND_REHASH bit is
 * set, from fib_rehash_begin() until the old table is dropped), and FIB_WALK(), the iterators and their readers see every node once
 * and in the same order as without a rehash. Parked iterators hang on nodes,
 * which keep their place in the order as they move.
 *
 * Buckets move only in the event, never inside fib_get() or fib_delete():
 * BIRD code inserts into a FIB while it walks it (OSPF's route calculation
 * does), and moving buckets shifts chain positions under such a walk, while
 * an insert or delete does not (stock's walk tolerates them the same way).
 * Starting a rehash does not move anything either. Should a rehash become
 * due while one is in progress (its event starved, or no main loop, as in
 * unit tests and tools), the one in progress is finished at once first.
 *
 * Two cases keep stock's one-shot rehash: tables below
 * @fib_rehash_min_order (%FIB_REHASH_MIN_ORDER, 16k buckets; their one-shot
 * rehash is too short to hold the loop up), and FIBs whose Bloom filter is active, where
 * the one-shot walk also rebuilds the filter for the new size (fib-bloom.c).
 * A filter activated while buckets move is built by a walk over fib_chain(),
 * which sees every node wherever it is.
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "nest/fib-rehash.h"
#include "lib/event.h"

uint fib_rehash_min_order = FIB_REHASH_MIN_ORDER;

/* Drop the old table: all moved, or the FIB goes */
static void
fib_rehash_drop_old(struct fib *f)
{
  mb_free(f->rehash_old);
  f->rehash_old = NULL;
  f->rehash_old_size = f->rehash_pos = 0;
  fib_find_gate(f, 0, FIB_FIND_REHASH);
}

/* A node's 32-bit FIB hash, inlined for the types of big tables */
static inline __attribute__((always_inline)) u32
fib_rehash_hash(const net_addr *a, uint type)
{
  switch (type)
  {
  case NET_IP4: return net_hash_ip4((const net_addr_ip4 *) a);
  case NET_IP6: return net_hash_ip6((const net_addr_ip6 *) a);
  default: return net_hash(a);
  }
}

/*
 * Old buckets [@from, @end) into new buckets from @ni up to @new_end, in
 * order, each chain kept sorted by hash. @type is a constant where this is
 * inlined, so the loop hashes without a call; everything it reads from the
 * FIB is in locals (BIRD builds with -fno-strict-aliasing: the stores into
 * the chains would make the compiler reload fields of @f per node).
 */
static inline __attribute__((always_inline)) void
fib_rehash_move_range(struct fib_node **old, struct fib_node **new, uint from, uint end,
		      uint ni, uint new_end, uint shift, uint type)
{
  struct fib_node **t = &new[ni];

  for (uint j = from; j < end; j++)
  {
    /* The nodes are scattered in memory: fetch chain heads ahead */
    if (j + FIB_REHASH_AHEAD < end)
      __builtin_prefetch(old[j + FIB_REHASH_AHEAD]);

    struct fib_node *e = old[j], *x;
    old[j] = NULL;

    for (; e; e = x)
    {
      x = e->next;
      uint nh = fib_rehash_hash(e->addr, type) >> shift;
      while (nh > ni)
      {
	*t = NULL;
	t = &new[++ni];
      }
      *t = e;
      t = &e->next;
    }
  }

  while (ni < new_end)
  {
    *t = NULL;
    t = &new[++ni];
  }
}

/**
 * fib_rehash_move - move buckets of a rehash in progress
 * @f: FIB
 * @n: old buckets to move (rounded up to whole groups when shrinking)
 *
 * Moves the next @n old buckets, in ascending order, into their new
 * buckets, keeping each chain sorted by hash. Ends the rehash when the last
 * one has moved. Returns the number of old buckets left.
 */
uint
fib_rehash_move(struct fib *f, uint n)
{
  struct fib_node **old = f->rehash_old, **new = f->hash_table;
  if (!old)
    return 0;

  int step = f->rehash_step;
  uint group = (step < 0) ? (1U << -step) : 1;
  uint end = MIN((u64) f->rehash_pos + n + group - 1, (u64) f->rehash_old_size);
  end &= ~(group - 1);
  uint new_end = (step > 0) ? (end << step) : (end >> -step);

#define MOVE(type) fib_rehash_move_range(old, new, f->rehash_pos, end, f->rehash_done, new_end, f->hash_shift, type)
  switch (f->addr_type)
  {
  case NET_IP4: MOVE(NET_IP4); break;
  case NET_IP6: MOVE(NET_IP6); break;
  default: MOVE(0); break;
  }
#undef MOVE

  f->rehash_pos = end;
  f->rehash_done = new_end;

  if (end < f->rehash_old_size)
    return f->rehash_old_size - end;

  /* All moved: the new table is the FIB */
  fib_rehash_drop_old(f);
  ASSERT(f->rehash_done == f->hash_size);
  return 0;
}

static void
fib_rehash_event(void *data)
{
  struct fib *f = data;

  if (fib_rehash_move(f, FIB_REHASH_BATCH))
    ev_schedule(f->rehash_event);
}

/**
 * fib_rehash_begin - change the hash order of a FIB
 * @f: FIB
 * @step: order change (%HASH_HI_STEP up, -%HASH_LO_STEP down)
 *
 * Called by fib_get() and fib_delete() when the entry count leaves its
 * range. Allocates the new table (its buckets are written as they fill, so
 * nothing is cleared up front) and schedules the event that moves the old
 * buckets; small FIBs and FIBs with an active filter rehash at once.
 */
void
fib_rehash_begin(struct fib *f, int step)
{
  fib_rehash_finish(f);

  if ((f->hash_order < fib_rehash_min_order) || (f->bloom->state == FIB_BLOOM_ACTIVE))
  {
    fib_rehash(f, step);
    return;
  }

  f->rehash_old = f->hash_table;
  f->rehash_old_size = f->hash_size;
  f->rehash_old_shift = f->hash_shift;
  f->rehash_step = step;
  f->hash_order += step;
  fib_ht_alloc(f);
  f->rehash_pos = 0;
  f->rehash_done = 0;
  fib_find_gate(f, FIB_FIND_REHASH, 0);

  if (!f->rehash_event)
    f->rehash_event = ev_new_init(f->fib_pool, fib_rehash_event, f);
  ev_schedule(f->rehash_event);
}

/**
 * fib_rehash_finish - complete a rehash in progress at once
 * @f: FIB
 *
 * Moves all the old buckets that are left and cancels the rehash event;
 * does nothing without a rehash in progress. Used where the old table must
 * be gone before going on, such as a new rehash becoming due while one is
 * in progress.
 */
void
fib_rehash_finish(struct fib *f)
{
  if (!f->rehash_old)
    return;

  fib_rehash_move(f, f->rehash_old_size);
  ev_postpone(f->rehash_event);
}

/**
 * fib_rehash_free - drop the rehash state of a FIB being freed
 * @f: FIB
 *
 * Frees the old table of a rehash in progress, without moving its
 * buckets, and the rehash event.
 */
void
fib_rehash_free(struct fib *f)
{
  if (f->rehash_old)
    fib_rehash_drop_old(f);

  if (f->rehash_event)
    rfree(f->rehash_event);
  f->rehash_event = NULL;
}
