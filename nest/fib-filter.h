/*
 *	bloombird -- A blocked counting Bloom filter of a FIB's keys
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_FILTER_H_
#define _BIRD_FIB_FILTER_H_

#include "nest/bird.h"
#include "lib/resource.h"

#define FIB_FILTER_BLOCK_SLOTS	128	/* 4-bit counters in one 64-byte block */
#define FIB_FILTER_CMAX		15	/* Saturated (sticky) counter value */
#define FIB_FILTER_DEF_HASHES	5	/* Slots per key, the default shape */
#define FIB_FILTER_DEF_COUNTERS	10	/* Counters per key when the filter is full */
#define FIB_FILTER_BATCH	32	/* Keys per prefetch batch when building */

/*
 * Slots of a key inside its block: successive 6-bit slices of an
 * odd-multiplier product of the hash (whose top bits depend on all of @h),
 * slot i in the block's half i mod 2 (counters 0-63 or 64-127, query-plane
 * word 0 or 1), so at most 9 slots per key (FIB_FILTER_MAX_HASHES).
 * Independent slots: double hashing inside a 128-slot block made keys whose
 * slot sequences are shifts of each other, and had a far higher
 * false-positive rate than independent ones. Fixed halves: a test builds one
 * mask per query-plane word (three instructions a slot) and compares each
 * word once, where a slot free to land in either word needed eight to pick
 * its word and bit; the uneven split (3 and 2 slots of the default 5)
 * costs a few percent of false positives (fib_filter_fpr_predicted() models
 * it), the test cost halved.
 */
#define FIB_FILTER_MAX_HASHES	9
#define FIB_FILTER_SLOTS(h)	((h) * 0x9e3779b97f4a7c15ULL)
#define FIB_FILTER_SLOT_BIT(x, i)	((uint) ((x) >> (58 - 6 * (i))) & 63)
#define FIB_FILTER_SLOT(x, i)	((((i) & 1) << 6) | FIB_FILTER_SLOT_BIT(x, i))

struct fib_filter {
  u64 *blocks;				/* 64-byte blocks of 128 4-bit counters; NULL: no filter */
  u64 *bits;				/* Query plane: 128 bits per block, set iff the counter is non-zero */
  u32 nblocks;				/* Number of blocks */
  u8 hashes;				/* Slots per key */
  u8 batch_n;				/* Keys in @batch */
  u64 queries;				/* Tests, counted by the callers of fib_filter_test() */
  u64 negatives;			/* Tests answered "absent" */
  u64 false_pos;			/* Tests answered "maybe" where the FIB had nothing */
  u32 capacity;				/* Keys the filter was sized for */
  u32 items;				/* Keys counted */
  u32 saturated;			/* Counters stuck at FIB_FILTER_CMAX */
  void *mem;				/* Allocation behind @blocks and @bits */
  u64 batch[FIB_FILTER_BATCH];		/* Keys waiting for their blocks */
};

void fib_filter_alloc(struct fib_filter *fl, pool *p, u64 capacity, uint counters, uint hashes);
void fib_filter_free(struct fib_filter *fl);
void fib_filter_add(struct fib_filter *fl, u64 h);
void fib_filter_remove(struct fib_filter *fl, u64 h);
void fib_filter_add_batched(struct fib_filter *fl, u64 h);
void fib_filter_flush(struct fib_filter *fl);

uint fib_filter_size(const struct fib_filter *fl);
double fib_filter_fill(const struct fib_filter *fl);
double fib_filter_fpr_predicted(const struct fib_filter *fl);
int fib_filter_bits_exact(const struct fib_filter *fl);

static inline int fib_filter_present(const struct fib_filter *fl)
{ return fl->blocks != NULL; }

/* Above its capacity by a margin: time to build it larger */
static inline int fib_filter_overfull(const struct fib_filter *fl)
{ return fl->items > fl->capacity + fl->capacity / 4; }

static inline u32 fib_filter_index(const struct fib_filter *fl, u64 h)
{ return ((h >> 32) * (u64) fl->nblocks) >> 32; }

/* The counters of a key's block (updates) */
static inline const u64 *fib_filter_block(const struct fib_filter *fl, u64 h)
{ return fl->blocks + 8 * fib_filter_index(fl, h); }

/* The query-plane bits of a key's block (tests): a quarter of a line */
static inline const u64 *fib_filter_qblock(const struct fib_filter *fl, u64 h)
{ return fl->bits + 2 * fib_filter_index(fl, h); }

static inline uint
fib_filter_counter(const u64 *blk, uint pos)
{ return (blk[pos >> 4] >> ((pos & 15) * 4)) & 15; }

static inline uint
fib_filter_bit(const u64 *qblk, uint pos)
{ return (qblk[pos >> 6] >> (pos & 63)) & 1; }

/* Whether @k bits of @qblk from slots @x are all set; @k is a constant at
 * the call for the default shape, so the loop unrolls */
static inline __attribute__((always_inline)) int
fib_filter_test_slots(const u64 *qblk, u64 x, uint k)
{
  u64 m0 = 0, m1 = 0;

#pragma GCC unroll 5
  for (uint i = 0; i < k; i += 2)
  {
    m0 |= 1ULL << FIB_FILTER_SLOT_BIT(x, i);
    if (i + 1 < k)
      m1 |= 1ULL << FIB_FILTER_SLOT_BIT(x, i + 1);
  }

  return ((qblk[0] & m0) == m0) & ((qblk[1] & m1) == m1);
}

/**
 * fib_filter_test - whether a key may be in the filter
 * @fl: a present filter
 * @h: the key (fib_key_hash())
 *
 * 0 means the key is certainly absent. It reads the query plane, not the
 * counters: a quarter of their memory, so a full table's filter stays in
 * L2 and L3 where its counters would not (see the DOC section). No early
 * exit: the slots share one cache line, and a branch-free test keeps the
 * hit path short enough for consecutive lookups to overlap their misses.
 */
static inline int
fib_filter_test(const struct fib_filter *fl, u64 h)
{
  const u64 *qblk = fib_filter_qblock(fl, h);
  u64 x = FIB_FILTER_SLOTS(h);

  if (fl->hashes == FIB_FILTER_DEF_HASHES)
    return fib_filter_test_slots(qblk, x, FIB_FILTER_DEF_HASHES);

  return fib_filter_test_slots(qblk, x, fl->hashes);
}

#endif
