/*
 *	bloombird -- The longest-prefix walk over a FIB's filter and guards
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_WALK_H_
#define _BIRD_FIB_WALK_H_

#include "nest/route.h"
#include "nest/fib-key.h"

/*
 * A walk (fib-walk.c): fib_walk_init() lists the lengths not longer than
 * @n and not shorter than @lo that hold prefixes and that the guards admit
 * (longest first), hashes them and prefetches their filter blocks and the
 * first candidates' hash buckets (those of the cover table, which exist,
 * need neither), so the cache misses overlap; then it tests candidates
 * until @ahead of them are admitted and prefetches those admitted
 * candidates' first nodes. fib_walk_next() returns the next admitted
 * length (testing the rest lazily), or -1, and leaves its chain hash in
 * @chash (fib_slot() finds the bucket, in either table during a rehash).
 * Callers stop at their first answer, so the lines of shorter lengths are
 * rarely waited for.
 */
struct fib_walk {
  uint n, i, tested;			/* Candidates, next one, candidates tested in init */
  uint exact;				/* Candidates from here on exist (cover table): not tested */
  u8 active;				/* Filter present */
  u8 len[FIB_MAX_PXLEN + 1];		/* Candidate lengths, longest first */
  u8 adm[FIB_MAX_PXLEN + 1];		/* Tested in init: admitted */
  u32 chash[FIB_MAX_PXLEN + 1];		/* Chain hash (net_hash()), for admitted candidates */
  u64 hash[FIB_MAX_PXLEN + 1];		/* Filter key */
};

void fib_walk_init(struct fib *f, const net_addr *n, struct fib_walk *s, uint ahead, uint lo);
int fib_walk_next(struct fib *f, const net_addr *n, struct fib_walk *s);
int fib_walk_supported(const struct fib *f, const net_addr *n);

/* Lookups through the walk (fib-accel.c and rt-accel.c choose them) */
void *fib_walk_route(struct fib *f, const net_addr *n);
struct network *net_route_walk(struct rtable *tab, const net_addr *n, int *done);
int net_roa_check_walk(struct rtable *tab, const net_addr *n, u32 asn, int *done);

#endif
