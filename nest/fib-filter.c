/*
 *	bloombird -- A blocked counting Bloom filter of a FIB's keys
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: The counting Bloom filter
 *
 * Shape. The filter is blocked: each key hashes to one 64-byte block (one
 * cache line) of 128 4-bit counters and sets @hashes counters in it, taken
 * from independent 6-bit slices of the hash, alternately in the block's
 * two halves (FIB_FILTER_SLOTS). One line per key
 * means one cache miss per test, which matters more than the slightly
 * higher false-positive rate of blocked filters: in BIRD 2 the hash chains
 * are short (order up to 24), so a test that costs more than one miss would
 * eat the whole gain. Four-bit counters overflow with negligible
 * probability; a counter that reaches 15 stays there (never decremented),
 * so a delete can never produce a false negative, and the next build
 * makes it exact again.
 *
 * Query plane. Tests only need to know which counters are non-zero, so
 * beside the counters each block has 128 bits (16 bytes, four blocks to a
 * line), set when a counter leaves zero and cleared when it returns to it;
 * every test reads these, never the counters. A full IPv4 table's
 * counters (some 5-10 MB) fall out of a shared L3 as soon as the
 * neighbours on the host get busy, its query plane (a quarter of that)
 * mostly stays: with the counters alone, the gain of misses through the
 * filter shrank to little once the host was busy; reading the query plane
 * kept it. An update with the filter present touches one more line, and
 * only while a counter crosses zero.
 *
 * Keys are those of fib-key.h. A counting filter cannot be resized in
 * place: its owner (fib-bloom.c) builds a new one when the FIB outgrows it.
 * With @counters counters per key of its capacity (half a byte each, and a
 * bit of query plane) and 5 hashes, a filter between half full and full
 * has a false-positive rate of 0.13% up to 1.4% (blocked-filter estimate,
 * fib_filter_fpr_predicted(); `show fib' prints the measured rate).
 */

#include "nest/bird.h"
#include "nest/fib-filter.h"

/**
 * fib_filter_alloc - allocate an empty filter
 * @fl: filter, without memory (fib_filter_free())
 * @p: pool to allocate from
 * @capacity: keys to size it for
 * @counters: counters per key of @capacity
 * @hashes: slots per key, 1 to %FIB_FILTER_MAX_HASHES
 *
 * The statistics of tests (@queries, @negatives, @false_pos) are kept.
 */
void
fib_filter_alloc(struct fib_filter *fl, pool *p, u64 capacity, uint counters, uint hashes)
{
  u64 nb = (capacity * counters + FIB_FILTER_BLOCK_SLOTS - 1) / FIB_FILTER_BLOCK_SLOTS;

  fl->mem = mb_allocz(p, nb * (64 + 16) + 64);
  fl->blocks = (u64 *) BIRD_ALIGN((uintptr_t) fl->mem, 64);
  fl->bits = fl->blocks + 8 * nb;
  fl->nblocks = nb;
  fl->capacity = capacity;
  fl->hashes = hashes;
  fl->items = fl->saturated = 0;
  fl->batch_n = 0;
}

/**
 * fib_filter_free - free a filter's memory
 * @fl: filter
 *
 * Leaves no filter (fib_filter_present() says 0); does nothing without one.
 */
void
fib_filter_free(struct fib_filter *fl)
{
  if (fl->mem)
    mb_free(fl->mem);

  fl->mem = NULL;
  fl->blocks = fl->bits = NULL;
  fl->nblocks = fl->capacity = fl->items = fl->saturated = 0;
  fl->batch_n = 0;
}

/**
 * fib_filter_add - count a key in
 * @fl: a present filter
 * @h: the key
 */
void
fib_filter_add(struct fib_filter *fl, u64 h)
{
  u64 *blk = (u64 *) fib_filter_block(fl, h);
  u64 *qblk = (u64 *) fib_filter_qblock(fl, h);
  u64 x = FIB_FILTER_SLOTS(h);

  for (uint i = 0; i < fl->hashes; i++)
  {
    uint pos = FIB_FILTER_SLOT(x, i);
    uint c = fib_filter_counter(blk, pos);
    if (c == FIB_FILTER_CMAX)
      continue;

    if (!c)
      qblk[pos >> 6] |= 1ULL << (pos & 63);

    blk[pos >> 4] += 1ULL << ((pos & 15) * 4);
    if (c + 1 == FIB_FILTER_CMAX)
      fl->saturated++;
  }
  fl->items++;
}

/**
 * fib_filter_remove - count a key out
 * @fl: a present filter
 * @h: a key counted in before
 */
void
fib_filter_remove(struct fib_filter *fl, u64 h)
{
  u64 *blk = (u64 *) fib_filter_block(fl, h);
  u64 *qblk = (u64 *) fib_filter_qblock(fl, h);
  u64 x = FIB_FILTER_SLOTS(h);

  for (uint i = 0; i < fl->hashes; i++)
  {
    uint pos = FIB_FILTER_SLOT(x, i);
    uint c = fib_filter_counter(blk, pos);

    /* A saturated counter may undercount its keys: keep it (no false negative) */
    if (c == FIB_FILTER_CMAX)
      continue;

    ASSERT_DIE(c > 0);
    blk[pos >> 4] -= 1ULL << ((pos & 15) * 4);
    if (c == 1)
      qblk[pos >> 6] &= ~(1ULL << (pos & 63));
  }
  fl->items--;
}

/**
 * fib_filter_flush - count in the keys fib_filter_add_batched() holds
 * @fl: a present filter
 *
 * Their blocks are prefetched first, so that the cache misses overlap.
 */
void
fib_filter_flush(struct fib_filter *fl)
{
  for (uint i = 0; i < fl->batch_n; i++)
  {
    __builtin_prefetch(fib_filter_block(fl, fl->batch[i]), 1);
    __builtin_prefetch(fib_filter_qblock(fl, fl->batch[i]), 1);
  }

  for (uint i = 0; i < fl->batch_n; i++)
    fib_filter_add(fl, fl->batch[i]);

  fl->batch_n = 0;
}

/**
 * fib_filter_add_batched - count a key in, in a batch
 * @fl: a present filter
 * @h: the key
 *
 * For building a filter from many keys: they are counted in batches of
 * %FIB_FILTER_BATCH; fib_filter_flush() counts the last ones.
 */
void
fib_filter_add_batched(struct fib_filter *fl, u64 h)
{
  fl->batch[fl->batch_n++] = h;
  if (fl->batch_n == FIB_FILTER_BATCH)
    fib_filter_flush(fl);
}


/*
 *	Statistics
 */

/**
 * fib_filter_size - memory of the filter in bytes
 * @fl: filter
 *
 * Counts each block's line of counters and its query-plane bits.
 */
uint
fib_filter_size(const struct fib_filter *fl)
{ return fl->nblocks * (64 + 16); }

/**
 * fib_filter_fill - share of the filter's counters that are non-zero
 * @fl: filter
 *
 * Counts the query plane's set bits; 0 without a filter. For the
 * statistics of `show fib'.
 */
double
fib_filter_fill(const struct fib_filter *fl)
{
  if (!fib_filter_present(fl))
    return 0;

  u64 nz = 0;
  for (uint i = 0; i < fl->nblocks * 2; i++)
    nz += __builtin_popcountll(fl->bits[i]);

  return (double) nz / ((double) fl->nblocks * FIB_FILTER_BLOCK_SLOTS);
}

/**
 * fib_filter_bits_exact - check the query plane against the counters
 * @fl: filter
 *
 * For tests: whether every bit of the query plane is set exactly when its
 * counter is non-zero (1 also without a filter).
 */
int
fib_filter_bits_exact(const struct fib_filter *fl)
{
  for (uint i = 0; fib_filter_present(fl) && (i < fl->nblocks); i++)
    for (uint pos = 0; pos < FIB_FILTER_BLOCK_SLOTS; pos++)
      if (!fib_filter_counter(fl->blocks + 8 * i, pos) != !fib_filter_bit(fl->bits + 2 * i, pos))
	return 0;

  return 1;
}

/* e^-x as (1 - x/2^20)^(2^20): good to 1e-5 here, and no libm in bird */
static double
filter_exp_neg(double x)
{
  double e = 1 - x / (1 << 20);
  for (int i = 0; i < 20; i++)
    e *= e;
  return e;
}

static double
filter_pow(double x, uint n)
{
  double p = 1;
  while (n--)
    p *= x;
  return p;
}

/**
 * fib_filter_fpr_predicted - expected false-positive rate of the filter
 * @fl: filter
 *
 * Models a blocked filter: a query lands in a block holding L keys, L
 * Poisson-distributed with mean items / blocks, and finds its k0 slots of
 * half 0 non-zero with probability (1 - (1 - 1/64)^(k0 L))^k0, its k1 slots
 * of half 1 likewise. Returns 0 without a filter. For `show fib' and the
 * tests, which compare it with the measured rate.
 */
double
fib_filter_fpr_predicted(const struct fib_filter *fl)
{
  if (!fib_filter_present(fl))
    return 0;

  /* Half 0 takes the even slots, half 1 the odd ones (FIB_FILTER_SLOT()) */
  uint k0 = (fl->hashes + 1) / 2, k1 = fl->hashes / 2;
  double lambda = (double) fl->items / fl->nblocks;
  double pl = filter_exp_neg(lambda);		/* P(L = 0) */
  double empty0 = 1, empty1 = 1, fpr = 0;

  /* One key leaves a given slot of half 0 (half 1) zero */
  double keep0 = filter_pow(1 - 2.0 / FIB_FILTER_BLOCK_SLOTS, k0);
  double keep1 = filter_pow(1 - 2.0 / FIB_FILTER_BLOCK_SLOTS, k1);

  for (uint L = 0; L < 4 * lambda + 64; L++)
  {
    fpr += pl * filter_pow(1 - empty0, k0) * filter_pow(1 - empty1, k1);
    pl *= lambda / (L + 1);
    empty0 *= keep0;
    empty1 *= keep1;
  }

  return fpr;
}
