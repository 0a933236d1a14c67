/*
 *	bloombird -- Route import cork
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Route import cork
 *
 * BIRD 2 runs one loop: when a consumer of route changes cannot keep up, the
 * only way to slow the producer down is to make the loop wait inside the
 * producer, and then the CLI, timers and every other protocol wait too. The
 * kernel protocol's batched writes (sysdep/linux/nl-queue.c) bound their
 * queue: beyond a hard limit, a route change had to wait in BGP's receive
 * hook until the kernel had taken a batch, for hundreds of milliseconds when
 * the kernel is slow.
 *
 * The cork moves that wait out of the loop, as BIRD 3 does for its tables: the
 * lagging consumer holds the cork, and BGP checks it before it processes an
 * UPDATE. When corked, BGP leaves the rest of its receive buffer unread,
 * stops reading the session's socket and registers an event; TCP's flow
 * control then slows the peer down. When the last holder releases the cork,
 * the waiting events are scheduled and the sessions read on. Keepalives and
 * other messages queued behind a corked UPDATE wait with it; a cork is held
 * for the time the kernel takes for a batch or two, far below any hold time.
 *
 * Only producers that can stop without losing anything take part (a session's
 * TCP socket can); feeds, static routes and others still meet the consumer's
 * own back-pressure.
 *
 * The same stop serves a second purpose: a receive buffer full of UPDATEs
 * held BGP's receive hook far longer than a loop round should take, in one
 * call, during a full-table install with kernel sync (each route reaches
 * every consumer, the kernel protocol's queue among them). BGP now stops after %RT_IMPORT_SLICE and goes on from
 * the same event in the next round of BIRD's loop; the CLI's sockets are read
 * in every round (they are "fast" sockets), and a due timer instead of the
 * event would make the loop sleep in poll() for a millisecond per slice.
 */

#include "nest/bird.h"
#include "nest/cli.h"
#include "lib/event.h"
#include "nest/rt-cork.h"

static uint rt_cork_count;		/* Holders */
static event_list rt_cork_waiting;	/* Producers to resume when uncorked */
static u64 rt_cork_times, rt_cork_stops;

static inline void
rt_cork_init_list(void)
{
  /* A zeroed list is not a valid one: set it up before its first use */
  if (!rt_cork_waiting.head)
    init_list(&rt_cork_waiting);
}

/**
 * rt_cork_acquire - cork route import
 *
 * Called by a consumer that has fallen behind; each call needs its
 * rt_cork_release().
 */
void
rt_cork_acquire(void)
{
  rt_cork_init_list();
  if (!rt_cork_count++)
    rt_cork_times++;
}

/**
 * rt_cork_release - release one hold of the cork
 *
 * When the last holder releases it, the producers that stopped are scheduled.
 */
void
rt_cork_release(void)
{
  ASSERT(rt_cork_count);
  if (--rt_cork_count)
    return;

  while (!EMPTY_LIST(rt_cork_waiting))
    ev_schedule(SKIP_BACK(event, n, HEAD(rt_cork_waiting)));
}

/**
 * rt_cork_check - may a producer go on?
 * @uncork: event of the producer, scheduled when the cork is released
 *
 * Returns 0 when route import is not corked. Otherwise returns 1 and queues
 * @uncork: the producer stops and goes on from the event.
 */
int
rt_cork_check(event *uncork)
{
  if (!rt_cork_count)
    return 0;

  /* The list was set up by the first rt_cork_acquire() */
  ev_enqueue(&rt_cork_waiting, uncork);
  rt_cork_stops++;
  return 1;
}

/**
 * rt_corked - is route import corked now?
 */
int
rt_corked(void)
{
  return rt_cork_count > 0;
}

/**
 * rt_cork_show - the cork's line in `show protocols all` of a kernel protocol
 */
void
rt_cork_show(void)
{
  cli_msg(-1006, "  Import cork:      %s, corked %lu times, %lu producer stops",
	  rt_cork_count ? "held" : "free", rt_cork_times, rt_cork_stops);
}
