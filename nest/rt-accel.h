/*
 *	bloombird -- What BIRD's table code calls of the accelerator
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_RT_ACCEL_H_
#define _BIRD_RT_ACCEL_H_

#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "nest/fib-roa.h"
#include "nest/fib-walk.h"
#include "nest/rt-lpm.h"

struct network *rt_accel_route(struct rtable *tab, const net_addr *n, int *done);
int rt_accel_roa_check(struct rtable *tab, const net_addr *n, u32 asn, int *done);

/**
 * rt_accel_net_changed - rte_announce() changed a net's best route
 * @tab: table
 * @n: the net
 * @new_best: its new best route, or %NULL
 * @old_best: its old best route, or %NULL
 *
 * A table's LPM engine and its ROA index hold the nets that have a valid
 * best route: they hear of a net whose route appeared or went, nothing of
 * a route replaced by another.
 */
static inline void
rt_accel_net_changed(struct rtable *tab, struct network *n, struct rte *new_best, struct rte *old_best)
{
  if (RT_LPM_TRACKING(tab) && (!new_best != !old_best))
    rt_lpm_net_changed(tab, n, !!new_best);
}

#endif
