/*
 *	bloombird -- Route import cork
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_RT_CORK_H_
#define _BIRD_RT_CORK_H_

#include "lib/event.h"
#include "lib/timer.h"

/*
 * A consumer of route changes that has fallen too far behind (a kernel
 * protocol's write queue at its hard limit) holds the cork with
 * rt_cork_acquire() until it has caught up, rt_cork_release(); acquisitions
 * count. A bulk producer (BGP, before each UPDATE) asks rt_cork_check(): 1
 * means corked, stop reading, and @uncork is scheduled when the last holder
 * releases the cork (an event that is already waiting stays queued once).
 * Freeing or postponing the event takes it off the waiting list.
 */
/*
 * RT_IMPORT_SLICE bounds the time a bulk producer spends in one go: BGP
 * processes a receive buffer of UPDATEs (up to 64 KiB, hundreds of them, each
 * reaching every consumer of the table) in slices of this length and goes on
 * from an event, so the CLI and other protocols are served in between.
 */
#define RT_IMPORT_SLICE		(5 MS)

void rt_cork_acquire(void);
void rt_cork_release(void);
int rt_cork_check(event *uncork);
int rt_corked(void);
void rt_cork_show(void);

#endif
