/*
 *	bloombird -- Route import cork
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_RT_CORK_H_
#define _BIRD_RT_CORK_H_

#include "lib/event.h"

/*
 * A consumer of route changes that has fallen too far behind (a kernel
 * protocol's write queue at its hard limit) holds the cork with
 * rt_cork_acquire() until it has caught up, rt_cork_release(); acquisitions
 * count. A bulk producer (BGP, before each UPDATE) asks rt_cork_check(): 1
 * means corked, stop reading, and @uncork is scheduled when the last holder
 * releases the cork (an event that is already waiting stays queued once).
 * Freeing or postponing the event takes it off the waiting list.
 */
void rt_cork_acquire(void);
void rt_cork_release(void);
int rt_cork_check(event *uncork);
int rt_corked(void);
void rt_cork_show(void);

#endif
