/*
 *	bloombird -- Incremental FIB rehash
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_REHASH_H_
#define _BIRD_FIB_REHASH_H_

struct fib;

/*
 * fib_get() and fib_delete() call fib_rehash_begin() when the FIB's entry
 * count leaves its range; the FIB's hash order then changes by @step, at
 * once or bucket by bucket from an event (see the DOC in fib-rehash.c).
 * fib_rehash_finish() completes a rehash in progress at once (no-op without
 * one); fib_rehash_free() drops the rehash state of a FIB being freed.
 * Below order %FIB_REHASH_MIN_ORDER the rehash is always done at once;
 * tests lower @fib_rehash_min_order to move small tables too.
 *
 * fib_ht_alloc() and fib_rehash() are rt-fib.c's: allocate the hash table
 * for the FIB's current order, and stock's one-shot rehash.
 */
#define FIB_REHASH_MIN_ORDER	14	/* Smaller tables rehash at once: too quick to matter */
#define FIB_REHASH_BATCH	4096	/* Old buckets moved per event run */
#define FIB_REHASH_AHEAD	8	/* Old buckets prefetched ahead (both rehashes) */

extern uint fib_rehash_min_order;

void fib_rehash_begin(struct fib *f, int step);
void fib_rehash_finish(struct fib *f);
void fib_rehash_free(struct fib *f);
uint fib_rehash_move(struct fib *f, uint n);

void fib_ht_alloc(struct fib *f);
void fib_rehash(struct fib *f, int step);

#endif
