/*
 *	bloombird -- How much of the long randomized unit tests to run
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_TEST_SCALE_H_
#define _BIRD_TEST_SCALE_H_

#include <stdlib.h>

/*
 * $BLOOMBIRD_TEST_SCALE divides the operation counts of our long randomized
 * unit tests (default 1: all of them). An emulated CPU (the cross build's
 * tests under qemu-user) is several times slower than the host; with the
 * counts divided the same assertions run on fewer random operations, and
 * every test still runs every case.
 */
static inline uint
bt_scaled(uint n)
{
  static int d;
  if (!d)
  {
    const char *e = getenv("BLOOMBIRD_TEST_SCALE");
    d = (e && (atoi(e) > 1)) ? atoi(e) : 1;
  }
  return ((d > 1) && (n / d)) ? n / d : n;
}

#endif
