/*
 *	bloombird -- Prefixes per length of a FIB
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_LENGTHS_H_
#define _BIRD_FIB_LENGTHS_H_

#include "nest/fib-key.h"

/*
 * Every FIB counts its prefixes per length, filter or not (one increment
 * per update): a longest-prefix walk skips the lengths that hold none, and
 * the guards are sized from the counts when they are built.
 */
struct fib_lengths {
  u64 map[3];				/* Bit L set iff count[L] > 0 */
  u32 count[FIB_MAX_PXLEN + 1];		/* Prefixes per length */
};

static inline void
fib_lengths_inc(struct fib_lengths *l, uint len)
{
  if (!l->count[len]++)
    l->map[len >> 6] |= 1ULL << (len & 63);
}

/* One test covers both rare cases: the last prefix of a length, and a bug */
static inline void
fib_lengths_dec(struct fib_lengths *l, uint len)
{
  u32 *c = &l->count[len];
  if (*c <= 1)
  {
    ASSERT_DIE(*c);
    l->map[len >> 6] &= ~(1ULL << (len & 63));
  }
  (*c)--;
}

/* Lengths 8j..8j+7 in use, as bits 0..7 */
static inline uint
fib_lengths_octet(const struct fib_lengths *l, uint j)
{ return (l->map[j >> 3] >> ((j & 7) << 3)) & 0xff; }

/* The shortest length in use, -1 if none */
static inline int
fib_lengths_shortest(const struct fib_lengths *l)
{
  for (uint i = 0; i < 3; i++)
    if (l->map[i])
      return 64 * i + __builtin_ctzll(l->map[i]);
  return -1;
}

#endif
