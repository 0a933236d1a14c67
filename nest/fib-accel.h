/*
 *	bloombird -- What BIRD's FIB code calls of the accelerator
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_ACCEL_H_
#define _BIRD_FIB_ACCEL_H_

#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "nest/fib-rehash.h"
#include "nest/fib-walk.h"

void *fib_accel_find(struct fib *f, const net_addr *a);
void *fib_accel_find_missed(struct fib *f);
void *fib_accel_route(struct fib *f, const net_addr *n, int *done);

#endif
