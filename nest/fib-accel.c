/*
 *	bloombird -- How fib_find() and fib_route() are answered
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: FIB lookups through the accelerator
 *
 * fib_find() keeps stock's chain walk inline for the one case that must
 * stay as cheap as stock's: an IPv4 or IPv6 FIB whose find gate is clear
 * (no filter asked, no rehash in progress). Everything else leaves it for
 * fib_accel_find(): the filter while it is asked, the walk through
 * fib_slot() while a rehash moves buckets, and the other address types.
 * Both are out of line and take the FIB alone, so the inline walk holds
 * nothing across a call and needs no stack frame of its own.
 *
 * fib_route() asks fib_accel_route() first: the filter's length-skipping
 * walk (fib-walk.c) answers the nets it supports (fib_walk_supported()), stock's loop
 * over every shorter length the rest.
 */

#include "nest/bird.h"
#include "nest/fib-accel.h"

/**
 * fib_accel_find - fib_find() off its inline walk
 * @f: FIB
 * @a: net to find
 *
 * The filter answers while the FIB's %FIB_FIND_FILTER bit is set and @a
 * is of the FIB's type; otherwise stock's walk (its assertion included)
 * does, and a miss counts for the filter's upkeep policy.
 */
__attribute__((noinline)) void *
fib_accel_find(struct fib *f, const net_addr *a)
{
  if ((f->find_gate & FIB_FIND_FILTER) && (a->type == f->addr_type))
    return fib_bloom_find(f, a);

  void *r = fib_find_chain(f, a);
  if (!r)
    fib_bloom_find_missed(f);

  return r;
}

/**
 * fib_accel_find_missed - a miss of fib_find()'s inline walk
 * @f: FIB
 *
 * Counts the miss for the filter's upkeep policy and returns %NULL, the
 * answer fib_find() passes on.
 */
__attribute__((noinline)) void *
fib_accel_find_missed(struct fib *f)
{
  fib_bloom_find_missed(f);
  return NULL;
}

/**
 * fib_accel_route - fib_route() through the filter's walk
 * @f: FIB
 * @n: net whose longest covering net is looked for
 * @done: set when the answer is final, cleared for stock's loop
 */
void *
fib_accel_route(struct fib *f, const net_addr *n, int *done)
{
  *done = fib_walk_supported(f, n);
  return *done ? fib_walk_route(f, n) : NULL;
}
