/*
 *	bloombird -- Batched asynchronous Netlink route writes
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_NL_QUEUE_H_
#define _BIRD_NL_QUEUE_H_

/*
 * The kernel protocol's Netlink options (struct krt_params, sysdep/linux/krt-sys.h;
 * grammar in nl-queue.Y).
 */
struct nlq_params {
  u8 async;			/* Batched writes and sliced scans; 0: stock's synchronous paths */
  uint batch;			/* Route changes per sendmsg() at most (fewer while the kernel is slow) */
  uint queue;			/* Route changes pending at most; beyond, the caller sends a batch */
  btime slice;			/* Time budget of one scan, prune, flush or write slice */
  u8 thread;			/* Writes in the writer thread (nl-writer.c); 0: in BIRD's loop */
  u8 objects;			/* Routes name kernel next-hop objects (nl-nhobj.c) */
};

#define NLQ_DEFAULT_BATCH	1024
#define NLQ_DEFAULT_QUEUE	8192
#define NLQ_DEFAULT_SLICE	(5 MS_)
#define NLQ_BATCH_MIN		16	/* nlq_adapt() goes no lower */
#define NLQ_BATCH_MAX		16384
#define NLQ_QUEUE_MAX		1048576
#define NLQ_SLICE_MIN		(100 US_)
#define NLQ_SLICE_MAX		(1 S_)

struct nlq;			/* Per kernel protocol write queue, nl-queue.c */
struct nl_dump;			/* Per kernel protocol sliced dump, nl-dump.c */

struct krt_proto;
struct krt_config;
struct rte;
struct network;
struct linpool;
struct nlmsghdr;

/*
 * nl-queue.c: the write queue
 *
 * nlq_start() and nlq_stop() are called by krt_sys_start() and
 * krt_sys_shutdown(); nlq_replace_rte() by krt_replace_rte(), returning 1 when
 * it has taken the change (queued) and 0 when stock's synchronous write must
 * do it (option off, MPLS, or the write socket failed). nlq_mark_seen() makes
 * every route written from now on count as seen by the running scan.
 * nlq_drop() forgets what is pending (a flush deletes everything anyway),
 * nlq_delete_net() queues the deletion of one network, nlq_idle() says whether
 * nothing is pending, nlq_send() sends batches until the queue is empty or
 * @deadline (0: no deadline) has passed and says whether it is empty.
 * nlq_kick() schedules the sending of what is pending. A route queued for the
 * kernel counts as in sync (its bit in sync_map is set) until its answer says
 * that the write failed.
 *
 * Called by stock's parser (netlink.c): nlq_route_net() for the network of a
 * route, nlq_table_left() for the protocol found for a route's table (1: the
 * protocol flushes in slices, the route is skipped as stock skips routes of
 * tables nobody syncs).
 */
void nlq_init_config(struct nlq_params *c);
int nlq_reconfigure(struct krt_proto *p, struct krt_config *n, struct krt_config *o);
void nlq_start(struct krt_proto *p, int async_fd);
void nlq_stop(struct krt_proto *p);
int nlq_active(struct krt_proto *p);
int nlq_replace_rte(struct krt_proto *p, struct rte *new, struct rte *old);
void nlq_mark_seen(struct krt_proto *p, int on);
void nlq_drop(struct krt_proto *p);
void nlq_delete_net(struct krt_proto *p, const net_addr *n);
int nlq_idle(struct krt_proto *p);
int nlq_send(struct krt_proto *p, btime deadline);
int nlq_kicks_later(struct krt_proto *p);
int nlq_full(struct krt_proto *p);
int nlq_held_full(struct krt_proto *p);
int nlq_drained(struct krt_proto *p);
int nlq_writing(struct krt_proto *p);
struct network *nlq_route_net(struct krt_proto *p, const net_addr *n, int src, struct linpool *lp);
int nlq_table_left(struct krt_proto *p);
void nlq_async_overflow(void);
void nlq_kick(struct krt_proto *p);
void nlq_show(struct krt_proto *p);
void nlq_parsed_route(struct nlmsghdr *h);
int krt_sys_route_current(struct krt_proto *p, struct rte *e);
void nlq_nexthop_changed(u32 nhid);
void nlq_async_msg(struct nlmsghdr *h);

/*
 * nl-dump.c: nl_dump_holds_writes() says whether the protocol's running dump
 * holds its writes back (IPv6, see there); they are sent when it ends.
 */
int nl_dump_holds_writes(struct krt_proto *p);

/* netlink.c (bird-patches/krt-netlink-hooks.patch): stock's message builder and parser */
uint nl_route_size(struct rte *e);
struct nlmsghdr *nl_build_route(struct krt_proto *p, struct rte *e, int op, void *buf, uint size);
void nl_parse_route_scan(struct nlmsghdr *h);
void nl_scan_nexthops(void);

#endif
