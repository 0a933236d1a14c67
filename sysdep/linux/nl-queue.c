/*
 *	bloombird -- Batched asynchronous Netlink route writes
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Batched Netlink writes
 *
 * Stock BIRD writes every kernel route change as its own RTM_NEWROUTE or
 * RTM_DELROUTE and waits for the kernel's answer before it goes on: two
 * system calls and a full wait per route, inside BGP's receive path. Here
 * krt_replace_rte() only queues the change; the kernel sees it a moment
 * later, packed with up to `netlink batch` others into one sendmsg() (fewer
 * while the kernel takes longer than a slice for a batch, nlq_adapt()).
 *
 * The queue belongs to one kernel protocol and is keyed by network. A change
 * to a network that is still waiting replaces the waiting one (the last change
 * wins) while the first "old" route keeps the kernel's side: whether there is
 * something to delete, and the metric that decides whether a REPLACE is
 * allowed. So what is sent is what stock would have sent for the net effect
 * of the changes, built by stock's own builder (nl_build_route()). The queue
 * holds about `netlink queue` networks: a change that finds it full hands the
 * writer a batch and holds route import and the protocol's feed back until
 * the kernel has caught up (back-pressure, nlq_back_pressure(): memory stays
 * bounded, nothing waits in BIRD's loop); otherwise an event sends it at the end of the loop iteration, in batches,
 * for at most `scan slice` at a time. While a sliced scan reads an IPv6
 * table, that protocol's writes wait (nl_dump_holds_writes(), nl-dump.c).
 *
 * The kernel processes Netlink requests inside sendmsg() itself, so when
 * sendmsg() returns, the answers to the whole batch are already queued on the
 * socket: they are read without blocking and matched by sequence number. Only
 * the last message of a batch asks for an acknowledgement (NETLINK_CAP_ACK
 * keeps answers small), failures are answered anyway, with the kernel's
 * reason (NETLINK_EXT_ACK). A failed write is logged as stock logs it, with
 * the network and the reason added, and its route's bit in sync_map cleared,
 * so the next scan retries it as in stock. Answers lost to a full receive
 * buffer count as failures and schedule a resync.
 *
 * The bit itself is set when the change is queued. Stock's write has set it
 * before anything else can look at the route, and `show route` marks a route
 * whose bit is clear as a sync error (`!`, krt_get_sync_error()): set only by
 * the answer, every route waiting in the queue or with the kernel would be
 * shown as one. The scan (krt_got_route()) reads the bit too: set, a kernel
 * route of the same destination needs no rewrite. For a pending write that
 * holds, the write itself brings the kernel's route up to date; a kernel
 * route of another destination is rewritten as with a clear bit (the rewrite
 * joins the pending change), and the prune's decisions rest on seen_map, not
 * on the bit. A pending write that fails clears the bit: the route turns `!`
 * and the next scan retries it, as in stock. `show protocols all` counts the
 * routes pending and being written.
 *
 * The kernel copies the port id of the socket that caused a route change into
 * the notification it multicasts, so a classic BPF filter on BIRD's
 * asynchronous socket drops route notifications carrying our write socket's
 * port id: a full-table install no longer floods that socket (stock parses
 * each echo only to skip it). When the asynchronous socket overflows anyway
 * (ENOBUFS), every kernel protocol is rescanned within %NLQ_RESYNC_DELAY, at
 * most once per %NLQ_RESYNC_INTERVAL, instead of at its next periodic scan.
 *
 * If the write socket cannot be opened or fails outright, BIRD falls back to
 * stock's synchronous code with an error in the log, and a scan repairs what
 * was pending.
 */

#include <errno.h>
#include <unistd.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include <linux/filter.h>

#undef LOCAL_DEBUG

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/protocol.h"
#include "nest/iface.h"
#include "nest/cli.h"
#include "nest/rt-cork.h"
#include "lib/alloca.h"
#include "lib/hash.h"
#include "lib/timer.h"
#include "lib/event.h"
#include "lib/string.h"
#include "conf/conf.h"
#include "sysdep/unix/krt.h"
#include "sysdep/unix/krt-slice.h"
#include "sysdep/linux/nl-writer.h"
#include "sysdep/linux/nl-nhobj.h"

#include CONFIG_INCLUDE_NLSYS_H

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK		10
#endif
#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK		11
#endif

#define NLQ_TX_SIZE		(128 * 1024)	/* Bytes per sendmsg(), under the default send buffer */
#define NLQ_RCVBUF		(4 * 1024 * 1024)
#define NLQ_RESYNC_DELAY	(2 S_)
#define NLQ_RESYNC_INTERVAL	(10 S_)
#define NLQ_PRESSURE_LAST	16		/* This many times `netlink queue`: producers the cork does not stop wait */

/* Stock's operations (netlink.c) */
#define NL_OP_DELETE		0
#define NL_OP_ADD		(NLM_F_CREATE|NLM_F_EXCL)
#define NL_OP_REPLACE		(NLM_F_CREATE|NLM_F_REPLACE)

enum nlq_op { NLQ_DEL, NLQ_ADD, NLQ_REPLACE };
static const char *nlq_op_name[] = { "delete", "add", "replace" };

struct nlq_entry {
  struct nlq_entry *next;		/* In the hash */
  node n;				/* In the queue, oldest first */
  struct nlmsghdr *del;			/* Deletion of the kernel's route (has_old) */
  struct nlmsghdr *add;			/* The new route (has_new); flags set when sent */
  u32 id;				/* The new route's id (sync_map, seen_map) */
  u32 old_metric, new_metric;
  u32 nhid;				/* The next-hop object the new route names, 0: none */
  u8 has_old, has_new;
  u8 replaceable;			/* New route may replace (IPv4; IPv6 unicast via a gateway) */
  net_addr_union net;
};

struct nlq {
  node n;				/* In nlq_list */
  struct krt_proto *p;
  pool *pool;
  slab *slab;				/* struct nlq_entry */
  list pending;				/* struct nlq_entry, oldest first */
  HASH(struct nlq_entry) hash;		/* The same, by network */
  event *event;				/* Sends what is pending */
  u8 mark_seen;				/* A scan runs: written routes count as seen */
  u8 thread;				/* Writes through the writer thread (netlink thread) */
  u8 corked;				/* Holds the route import cork (nest/rt-cork.c) */
  struct nlnh_routes *nh;		/* The objects its routes name (nl-nhobj.c) */
  u64 changes, coalesced, routes, messages, batches, failed, pressure, corks;
  btime longest;			/* Longest batch: sendmsg() and its answers */
  btime longest_wait;			/* Longest back-pressure wait */
  uint batch;				/* Networks per batch now (nlq_adapt()) */
};

#define NLQ_KEY(e)		&(e)->net.n
#define NLQ_NEXT(e)		(e)->next
#define NLQ_EQ(a,b)		net_equal(a, b)
#define NLQ_FN(a)		net_hash(a)
#define NLQ_REHASH		nlq_rehash
#define NLQ_PARAMS		/8, *2, 2, 2, 6, 24

HASH_DEFINE_REHASH_FN(NLQ, struct nlq_entry)

/* A message of the batch being sent: a route change, or an object operation */
struct nlq_msg {
  struct nlq_entry *e;			/* The route's entry, or NULL */
  struct nlnh *obj;			/* The object (e == NULL) */
  u8 op;				/* enum nlq_op, or enum nlnh_op for an object */
  u8 nh_missing;			/* Refused: the object it names does not exist */
  int err;				/* 0, an errno, or -1: answer lost */
};

#define NLQ_MSG_MAX		(3 * NLQ_BATCH_MAX)	/* Objects, then a deletion and an addition per network */

/*
 * The batch with the writer: at most one, of one protocol's queue. Its
 * entries are off the queue (a new change of one of its networks starts a
 * new entry) and freed when its results are in (nlq_complete()).
 */
static struct nlw_batch nlq_batch;
static struct nlq *nlq_batch_q;		/* Whose batch it is */
static uint nlq_batch_taken;		/* Networks in it */
static int nlq_busy;			/* It is with the writer, or being written */
static int nlq_kif_wanted;		/* An interface scan waits for it */
static u64 nlq_kif_later;		/* Interface scans put off */

static int nlq_fd = -1;			/* The write socket, shared by all kernel protocols */
static u32 nlq_portid;
static u32 nlq_seq;
static byte *nlq_tx;
static uint nlq_tx_size;			/* NLQ_TX_SIZE, more for a route that needs more */
static struct nlq_msg *nlq_sent;
static int nlq_broken;			/* It failed: stock's paths from now on */
static list nlq_list;			/* struct nlq of running kernel protocols */
static uint nlq_users;
static int nlq_async_fd = -1;		/* BIRD's asynchronous socket, filtered */
static timer *nlq_resync_timer;
static timer *nlq_sweep_timer;		/* Deletes unused next-hop objects when nothing is pending */
static int nlq_leftovers_done;		/* Objects of an earlier run deleted */
static u32 nlq_parsed;			/* Object the route being parsed names (nlq_parsed_route()) */
static btime nlq_last_resync;
static struct tbf nlq_rl_err = TBF_DEFAULT_LOG_LIMITS;
static struct tbf nlq_rl_bad = TBF_DEFAULT_LOG_LIMITS;

static void nlq_event(void *q);
static void nlq_resync(timer *t);
static void nlq_fail_all(void);
static void nlq_writer_done(void);
static void nlq_back_pressure(struct nlq *q);
static void nlq_wait(void);
static void nlq_next(struct nlq *after);
static void nlq_hand_on(struct nlq *after);
static void nlq_wait_only(void);
static void nlq_uncork_idle(void);
static void nlq_seen_batch(struct nlq *q);
static void nlq_uncork(struct nlq *q);
static void nlq_sweep(timer *t);
static void nlq_sweep_soon(void);

/* Does a protocol's queue write through the writer thread? */
static inline int
nlq_threaded(struct nlq *q)
{
  return q->thread && nlw_threaded();
}

/* Does a protocol write its routes with next-hop objects? */
static inline int
nlq_objects(struct krt_proto *p)
{
  return KRT_CF->sys.nlq.objects &&
    ((p->p.net_type == NET_IP4) || (p->p.net_type == NET_IP6));
}


/*
 *	Configuration
 */

/**
 * nlq_init_config - default Netlink options of a kernel protocol
 * @c: the options in the protocol's configuration
 */
void
nlq_init_config(struct nlq_params *c)
{
  c->async = 1;
  c->batch = NLQ_DEFAULT_BATCH;
  c->queue = NLQ_DEFAULT_QUEUE;
  c->slice = NLQ_DEFAULT_SLICE;
  c->thread = 1;
}

/**
 * nlq_reconfigure - may a kernel protocol take new Netlink options?
 * @p: the protocol
 * @n: new configuration
 * @o: old configuration
 *
 * Batch, queue and slice sizes apply from the next batch or slice on;
 * `netlink nexthop objects` on or off rewrites the table; turning
 * `netlink async` or `netlink thread` on or off needs a restart of the
 * protocol (returns 0).
 */
int
nlq_reconfigure(struct krt_proto *p, struct krt_config *n, struct krt_config *o)
{
  if ((n->sys.nlq.async != o->sys.nlq.async) || (n->sys.nlq.thread != o->sys.nlq.thread))
    return 0;

  /*
   * Objects on or off: every route is written again, the new way, each
   * replacing its old self (a refeed), so none is missing meanwhile
   */
  if ((n->sys.nlq.objects != o->sys.nlq.objects) && p->sys.nlq &&
      p->p.main_channel && (p->p.main_channel->channel_state == CS_UP))
    channel_request_feeding(p->p.main_channel);

  return 1;
}


/*
 *	Sockets
 */

static int
nlq_open(void)
{
  if (nlq_fd >= 0)
    return 1;

  if (nlq_broken)
    return 0;

  int fd = socket(PF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
  if (fd < 0)
    goto fail;

  int one = 1, rcvbuf = NLQ_RCVBUF;
  if (setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)) < 0)
    DBG("KRT: NETLINK_CAP_ACK not supported\n");
  if (setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) < 0)
    DBG("KRT: NETLINK_EXT_ACK not supported\n");
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));

  struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
  socklen_t sl = sizeof(sa);
  if ((bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) ||
      (getsockname(fd, (struct sockaddr *) &sa, &sl) < 0))
  {
    int e = errno;
    close(fd);
    errno = e;
    goto fail;
  }

  nlq_fd = fd;
  nlq_portid = sa.nl_pid;
  nlq_seq = (u32) (current_time() TO_S) << 12;

  if (!nlq_tx)
  {
    nlq_tx = mb_alloc(krt_pool, nlq_tx_size = NLQ_TX_SIZE);
    nlq_sent = mb_alloc(krt_pool, NLQ_MSG_MAX * sizeof(struct nlq_msg));
    nlq_batch.err = mb_alloc(krt_pool, NLQ_MSG_MAX * sizeof(int));
    nlq_batch.why = mb_alloc(krt_pool, NLQ_MSG_MAX * sizeof(u16));
    nlq_resync_timer = tm_new_init(krt_pool, nlq_resync, NULL, 0, 0);
    nlq_sweep_timer = tm_new_init(krt_pool, nlq_sweep, NULL, 0, 0);
  }

  return 1;

fail:
  log(L_ERR "KRT: Cannot open Netlink socket for batched writes: %m; using synchronous writes");
  nlq_broken = 1;
  return 0;
}

/*
 * Drop route notifications that our write socket caused. Classic BPF loads are
 * big-endian, Netlink headers host-endian: compare with htons()/htonl().
 */
static void
nlq_filter_echoes(int fd)
{
  struct sock_filter code[] = {
    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, offsetof(struct nlmsghdr, nlmsg_type)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(RTM_NEWROUTE), 1, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(RTM_DELROUTE), 0, 3),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct nlmsghdr, nlmsg_pid)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(nlq_portid), 0, 1),
    BPF_STMT(BPF_RET | BPF_K, 0),
    BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
  };
  struct sock_fprog prog = { .len = ARRAY_SIZE(code), .filter = code };

  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0)
    log(L_WARN "KRT: Cannot filter our own route notifications: %m");
}

static void
nlq_close(void)
{
  if (nlq_fd < 0)
    return;

  /* The writer may not have a batch on the socket */
  nlq_wait();

  close(nlq_fd);
  nlq_fd = -1;

  if (nlq_async_fd >= 0)
    setsockopt(nlq_async_fd, SOL_SOCKET, SO_DETACH_FILTER, NULL, 0);
  nlq_async_fd = -1;
}


/*
 *	Protocol start and stop
 */

/**
 * nlq_start - set up batched writes for a kernel protocol
 * @p: the protocol, starting
 * @async_fd: BIRD's asynchronous Netlink socket (-1 if none), to be filtered
 *
 * Does nothing when `netlink async` is off, for MPLS, or when the write socket
 * cannot be opened (then it logs an error): stock's paths do the work.
 */
void
nlq_start(struct krt_proto *p, int async_fd)
{
  if (!KRT_CF->sys.nlq.async || ((p->af != AF_INET) && (p->af != AF_INET6)))
    return;

  if (!nlq_open())
    return;

  if ((async_fd >= 0) && (async_fd != nlq_async_fd))
  {
    nlq_async_fd = async_fd;
    nlq_filter_echoes(async_fd);
  }

  struct nlq *q = mb_allocz(p->p.pool, sizeof(struct nlq));
  q->p = p;
  q->pool = p->p.pool;
  q->slab = sl_new(p->p.pool, sizeof(struct nlq_entry));
  init_list(&q->pending);
  HASH_INIT(q->hash, p->p.pool, 6);
  q->event = ev_new_init(p->p.pool, nlq_event, q);
  q->batch = KRT_CF->sys.nlq.batch;
  q->thread = KRT_CF->sys.nlq.thread && nlw_start(nlq_writer_done, krt_pool);

  if (!nlnh_start() && KRT_CF->sys.nlq.objects)
    log(L_WARN "%s: Kernel has no next-hop objects, routes are written the old way", p->p.name);
  q->nh = nlnh_routes_new(p->p.pool);

  if (!nlq_users++)
    init_list(&nlq_list);
  add_tail(&nlq_list, &q->n);
  p->sys.nlq = q;
  nlq_sweep_soon();
}

static void
nlq_free(struct nlq *q, struct nlq_entry *e)
{
  mb_free(e->del);
  mb_free(e->add);
  sl_free(e);
  (void) q;
}

/**
 * nlq_drop - forget what is pending for a kernel protocol
 * @p: the protocol
 */
void
nlq_drop(struct krt_proto *p)
{
  struct nlq *q = p->sys.nlq;
  struct nlq_entry *e;
  node *n, *nxt;

  if (!q)
    return;

  WALK_LIST_DELSAFE(n, nxt, q->pending)
  {
    e = SKIP_BACK(struct nlq_entry, n, n);
    rem_node(&e->n);
    HASH_REMOVE2(q->hash, NLQ, q->pool, e);
    nlq_free(q, e);
  }
  ev_postpone(q->event);
  nlq_uncork(q);
}

/**
 * nlq_stop - end batched writes of a kernel protocol
 * @p: the protocol, shutting down
 *
 * What is still pending is sent first, as stock would have written it already.
 * The rest is freed with the protocol's pool.
 */
void
nlq_stop(struct krt_proto *p)
{
  struct nlq *q = p->sys.nlq;

  if (!q)
    return;

  nlq_send(p, 0);
  nlq_drop(p);
  rem_node(&q->n);
  p->sys.nlq = NULL;
  nlnh_routes_free(q->nh);

  if (!--nlq_users)
  {
    nlq_close();
    if (nlq_resync_timer)
      tm_stop(nlq_resync_timer);
    if (nlq_sweep_timer)
      tm_stop(nlq_sweep_timer);
    nlq_leftovers_done = 0;
  }

  nlnh_stop();
}

/**
 * nlq_active - does a kernel protocol write through the queue?
 * @p: the protocol
 */
int
nlq_active(struct krt_proto *p)
{
  return p->sys.nlq && !nlq_broken;
}

/**
 * nlq_mark_seen - count written routes as seen by the running scan
 * @p: the protocol
 * @on: whether a scan runs
 *
 * A route written while a sliced scan runs may be written after the dump has
 * passed its place: the scan's prune must not install it again.
 */
void
nlq_mark_seen(struct krt_proto *p, int on)
{
  struct nlq *q = p->sys.nlq;

  if (!q)
    return;

  q->mark_seen = on;
  if (on && nlq_busy && (nlq_batch_q == q))
    nlq_seen_batch(q);
}

/**
 * nlq_idle - is nothing pending for a kernel protocol?
 * @p: the protocol
 */
int
nlq_idle(struct krt_proto *p)
{
  return !p->sys.nlq || EMPTY_LIST(p->sys.nlq->pending);
}


/*
 *	Queueing
 */

static struct nlmsghdr *
nlq_build(struct nlq *q, rte *e, int op)
{
  uint size = nl_route_size(e);
  struct nlmsghdr *h = nl_build_route(q->p, e, op, alloca(size), size);
  struct nlmsghdr *m = mb_alloc(q->pool, NLMSG_ALIGN(h->nlmsg_len));

  memcpy(m, h, h->nlmsg_len);
  m->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len);
  return m;
}

/*
 * The network's entry; a new one takes @old as the kernel's side. An entry
 * found pending keeps the kernel's side of its first change: a later change's
 * old route is one still waiting in the queue, which the kernel never saw.
 */
static struct nlq_entry *
nlq_get(struct nlq *q, const net_addr *n, rte *old)
{
  struct nlq_entry *e = HASH_FIND(q->hash, NLQ, n);

  if (e)
  {
    q->coalesced++;
    return e;
  }

  e = sl_allocz(q->slab);
  net_copy(&e->net.n, n);
  add_tail(&q->pending, &e->n);
  HASH_INSERT2(q->hash, NLQ, q->pool, e);

  if (old)
  {
    e->has_old = 1;
    e->old_metric = ea_get_int(old->attrs->eattrs, EA_KRT_METRIC, 0);
    e->del = nlq_build(q, old, NL_OP_DELETE);
  }

  return e;
}

static int nlq_send_batch(struct nlq *q);

/*
 * The kernel's time per route varies a lot (a trie being resized, RCU grace
 * periods when it frees much memory): a batch that took longer than a slice
 * halves the next ones, a fast full one doubles them again, up to `netlink
 * batch`. So one sendmsg() keeps near the slice, and BIRD's loop with it.
 */
static void
nlq_adapt(struct nlq *q, uint taken, btime dt)
{
  struct krt_proto *p = q->p;
  btime slice = KRT_CF->sys.nlq.slice;

  if ((dt > slice) && (q->batch > NLQ_BATCH_MIN))
    q->batch = MAX(q->batch / 2, NLQ_BATCH_MIN);
  else if ((dt < slice / 4) && (taken >= q->batch) && (q->batch < KRT_CF->sys.nlq.batch))
    q->batch = MIN(q->batch * 2, KRT_CF->sys.nlq.batch);
}

/**
 * nlq_replace_rte - queue a kernel route change
 * @p: the kernel protocol
 * @new: the route to be in the kernel, or %NULL
 * @old: the route the kernel has, or %NULL
 *
 * Called by krt_replace_rte() with its arguments. Returns 1 when the change is
 * queued, 0 when stock's synchronous write has to do it.
 */
int
nlq_replace_rte(struct krt_proto *p, rte *new, rte *old)
{
  struct nlq *q = p->sys.nlq;

  if (!q || nlq_broken || (!new && !old))
    return 0;

  net *n = (new ?: old)->net;
  struct nlq_entry *e = nlq_get(q, n->n.addr, old);
  q->changes++;

  mb_free(e->add);
  e->add = NULL;
  e->has_new = 0;

  if (!new)
    nlnh_route(q->nh, p->af, 0, NULL, old);

  if (new)
  {
    rta *a = new->attrs;
    e->has_new = 1;
    e->id = new->id;
    e->new_metric = ea_get_int(a->eattrs, EA_KRT_METRIC, 0);
    e->replaceable = (p->af == AF_INET) || ((a->dest == RTD_UNICAST) && ipa_nonzero(a->nh.gw));
    e->add = nlq_build(q, new, NL_OP_ADD);

    u32 nhid = e->nhid = nlnh_route(q->nh, p->af, nlq_objects(p), new, old);

    /*
     * A scan found the route naming the object it is to name, yet not
     * forwarding as BIRD's: the object was changed behind our back
     */
    if (nhid && old && !old->id && (nlq_parsed == nhid))
      nlq_nexthop_changed(nhid);

    if (nhid)
    {
      struct nlmsghdr *m = nlnh_route_msg(e->add, nhid, alloca(nlnh_route_size(e->add)));
      mb_free(e->add);
      e->add = mb_alloc(q->pool, m->nlmsg_len);
      memcpy(e->add, m, m->nlmsg_len);
    }

    /* In sync until its answer says otherwise (nlq_done(), see the DOC above) */
    bmap_set(&p->sync_map, new->id);
  }

  /*
   * Sliced dumps and prunes stop before a write would find the queue full
   * (nlq_full(), nlq_held_full()), so they never wait here; an IPv6 dump
   * holding the queue does all of it before reading on.
   */
  if ((q->hash.count > KRT_CF->sys.nlq.queue) &&
      !(nlq_threaded(q) && nl_dump_holds_writes(p)))
    nlq_back_pressure(q);

  /*
   * With a batch in the writer thread, its completion sends the next one
   * (nlq_next()); an event scheduled for nothing would keep BIRD's loop from
   * reading the protocols' sockets and the writer's completions (with events
   * pending it reads those only every tenth cycle; the CLI's sockets it reads
   * in every cycle).
   */
  if (!EMPTY_LIST(q->pending) && !ev_active(q->event) && !(nlq_busy && nlq_threaded(q)))
    ev_schedule(q->event);

  return 1;
}

/**
 * nlq_delete_net - queue the deletion of a network's route
 * @p: the kernel protocol
 * @n: the network
 *
 * The message is the one stock's builder makes for a deletion (network, table
 * and the protocol's `metric`). Through krt_replace_rte(): if the batched
 * writes have failed meanwhile, stock's synchronous write deletes it.
 */
void
nlq_delete_net(struct krt_proto *p, const net_addr *n)
{
  net *nn = alloca(sizeof(net) + n->length);
  rta a = { .dest = RTD_NONE };
  rte e = { .attrs = &a, .net = nn };

  memset(nn, 0, sizeof(net));
  net_copy(nn->n.addr, n);
  krt_replace_rte(p, nn, NULL, &e);
}

/**
 * nlq_route_net - the network a parsed kernel route refers to
 * @p: the kernel protocol
 * @n: the route's network
 * @src: the route's KRT_SRC_*
 * @lp: linear pool that lives while the route is processed
 *
 * Stock calls net_get(), creating table nodes (and in bloombird filter
 * entries) for every kernel route BIRD does not have. Here the table is only
 * searched (net_find(), which the FIB filter answers fast for absent
 * networks); an absent network gets a temporary node in @lp, enough for
 * deciding and deleting. Routes learned into the protocol's own table keep a
 * pointer to the node, so they still get a real one, as in stock.
 */
net *
nlq_route_net(struct krt_proto *p, const net_addr *n, int src, linpool *lp)
{
  rtable *t = p->p.main_channel->table;

  if (!nlq_active(p) ||
      ((src == KRT_SRC_ALIEN) && KRT_CF->learn) ||
      ((src == KRT_SRC_KERNEL) && (KRT_CF->learn == KRT_LEARN_ALL)))
    return net_get(t, n);

  net *x = net_find(t, n);
  if (x)
    return x;

  x = lp_allocz(lp, sizeof(net) + n->length);
  net_copy(x->n.addr, n);
  return x;
}

/**
 * nlq_table_left - has a kernel protocol left its kernel table?
 * @p: the protocol nl_parse_route() found for a route's table
 *
 * Stock's krt_shutdown() flushes synchronously and takes the protocol out of
 * the parser's table map (krt_sys_shutdown()) before BIRD reads another
 * notification. A sliced flush keeps it there, stopping (PS_STOP), until its
 * last deletion is answered, while at a shutdown the device protocol drops
 * the interfaces: a notification of a foreign route would be parsed for a
 * protocol that has stopped, and its interface logged as unknown, an error
 * stock never logs. So the parser skips the routes of such a table, as
 * stock's skips those of a table nobody syncs. The flush itself reads the
 * kernel's table on a socket of its own (nl-dump.c) and parses nothing.
 */
int
nlq_table_left(struct krt_proto *p)
{
  return p->p.proto_state == PS_STOP;
}


/*
 *	Sending and answers
 */

static inline int
nlq_allow_replace(struct krt_proto *p, struct nlq_entry *e)
{
  /* As stock's nl_allow_replace(): (net, metric) is the kernel's key */
  if (!KRT_CF->sys.metric && (e->new_metric != e->old_metric))
    return 0;

  return e->replaceable;
}

static void
nlq_log_error(struct nlq *q, struct nlq_msg *m, int err, const char *why)
{
  if (!m->e)
    return;		/* An object's: nlnh_done() speaks for them */

  if (err < 0)
    log_rl(&nlq_rl_err, L_WARN "Netlink: Answer lost (%s: %s %N)",
	   q->p->p.name, nlq_op_name[m->op], &m->e->net.n);
  else
    log_rl(&nlq_rl_err, L_WARN "Netlink: %s (%s: %s %N%s%s)", strerror(err),
	   q->p->p.name, nlq_op_name[m->op], &m->e->net.n, why ? ": " : "", why ?: "");
}

static void
nlq_put(struct nlq_entry *e, struct nlmsghdr *m, uint op, uint *len, uint *cnt, uint *last)
{
  struct nlmsghdr *h = (void *) (nlq_tx + *len);
  *last = *len;

  memcpy(h, m, m->nlmsg_len);
  h->nlmsg_flags = NLM_F_REQUEST |
    ((op == NLQ_ADD) ? NL_OP_ADD : (op == NLQ_REPLACE) ? NL_OP_REPLACE : NL_OP_DELETE);
  h->nlmsg_seq = ++nlq_seq;
  h->nlmsg_pid = 0;

  nlq_sent[*cnt] = (struct nlq_msg) { .e = e, .op = op };
  *len += h->nlmsg_len;
  (*cnt)++;
}

/* Is a later write of the same route waiting in the queue (a scan rewrote it)? */
static inline int
nlq_requeued(struct nlq *q, struct nlq_entry *e)
{
  struct nlq_entry *later = HASH_FIND(q->hash, NLQ, &e->net.n);

  return later && later->has_new && (later->id == e->id);
}

/*
 * The outcome of one message for the sync state, as in stock's
 * krt_replace_rte(). The route's bit was set when it was queued; a failure
 * clears it, unless the route waits in the queue once more: then the answer
 * to that write decides, as the later of two writes does in stock.
 */
static void
nlq_done(struct nlq *q, struct nlq_msg *m)
{
  struct krt_proto *p = q->p;

  if (!m->e)
  {
    if (nlnh_done(m->obj, m->op, m->err) == NLNH_RESYNC)
      nlq_async_overflow();
    return;
  }

  if (m->err)
    q->failed++;

  if (m->op == NLQ_DEL)
    return;

  if (!m->err)
    bmap_set(&p->sync_map, m->e->id);
  else if (!nlq_requeued(q, m->e))
    bmap_clear(&p->sync_map, m->e->id);

  /* Refused for want of our object: deleted behind our back */
  if (m->nh_missing)
    nlq_nexthop_changed(m->e->nhid);

  if (q->mark_seen)
    bmap_set(&p->seen_map, m->e->id);
}

/*
 * The batch's results: anomalies and failures logged, the sync state of each
 * route recorded, the entries freed. Runs in BIRD's loop.
 */
static void
nlq_complete(void)
{
  struct nlw_batch *b = &nlq_batch;
  struct nlq *q = nlq_batch_q;
  uint cnt = b->cnt;

  nlq_busy = 0;
  nlq_batch_q = NULL;

  if (b->bad_type)
    log_rl(&nlq_rl_bad, L_WARN "KRT: Unexpected Netlink message type %u on the write socket, skipped",
	   b->bad_type_val);
  if (b->bad_seq)
    log_rl(&nlq_rl_bad, L_WARN "KRT: Netlink answer with unexpected sequence number %u, skipped",
	   b->bad_seq_val);
  if (b->bad_trunc)
    log_rl(&nlq_rl_bad, L_WARN "KRT: Truncated Netlink answer, skipped");
  if (b->bad_code)
    log_rl(&nlq_rl_bad, L_WARN "KRT: Netlink answer with invalid error code %d, skipped", b->bad_code_val);
  if (b->remnant)
    log_rl(&nlq_rl_bad, L_WARN "KRT: Netlink answer remnant of size %u, skipped", b->remnant_val);
  if (b->recv_err)
    log(L_ERR "KRT: Netlink recvmsg on the write socket: %s", strerror(b->recv_err));

  for (uint i = 0; i < cnt; i++)
    nlq_sent[i].err = b->err[i];

  if (b->send_err)
  {
    int e = b->send_err;
    if ((e == EAGAIN) || (e == EWOULDBLOCK) || (e == ENOBUFS) || (e == ENOMEM))
    {
      /* Nothing of it reached the kernel: failed, retried by the resync */
      log_rl(&nlq_rl_err, L_WARN "Netlink: Sending %u messages failed: %s", cnt, strerror(e));
      nlq_async_overflow();
    }
    else
    {
      log(L_ERR "KRT: Netlink write socket failed: %s; falling back to synchronous writes", strerror(e));
      nlq_broken = 1;
    }

    for (uint i = 0; i < cnt; i++)
      nlq_sent[i].err = e;
  }
  else
  {
    for (uint i = 0; i < cnt; i++)
    {
      struct nlq_msg *m = &nlq_sent[i];
      const char *why = b->why[i] ? b->text + b->why[i] - 1 : NULL;
      if ((m->err > 0) && !((m->op == NLQ_DEL) && (m->err == ESRCH)))
	nlq_log_error(q, m, m->err, why);

      /* The kernel's reason for a route naming an object it does not have */
      m->nh_missing = m->e && m->e->nhid && (m->op != NLQ_DEL) && (m->err == EINVAL) &&
	(!why || strstr(why, "exthop id"));
    }

    if (b->lost)
    {
      /* Without its answer, a message may have failed: treat as failed */
      uint n = 0;
      for (uint i = 0; i < cnt; i++)
	if (!nlq_sent[i].err && (i < cnt - 1))
	{
	  nlq_sent[i].err = -1;
	  n++;
	}
      log(L_WARN "KRT: Lost Netlink answers to up to %u route changes, resync scheduled", n);
      nlq_async_overflow();
    }
  }

  btime dt = (btime) (b->ns / 1000);
  q->longest = MAX(q->longest, dt);
  nlq_adapt(q, nlq_batch_taken, dt);
  q->batches++;
  q->messages += cnt;
  q->routes += nlq_batch_taken;

  for (uint i = 0; i < cnt; i++)
  {
    nlq_done(q, &nlq_sent[i]);
    if (nlq_sent[i].e && ((i == cnt - 1) || (nlq_sent[i + 1].e != nlq_sent[i].e)))
      nlq_free(q, nlq_sent[i].e);
  }

  if (nlq_broken)
    nlq_fail_all();
  else
    nlq_sweep_soon();
}

/*
 * A running scan counts the routes of a batch as seen from the moment the
 * batch leaves the queue: the prune may pass them while the writer thread
 * has them, and must not add them once more (the kernel would refuse the
 * second add, EEXIST). A write that fails clears its route's bit in sync_map
 * (nlq_done()), so the next scan retries it, as stock's does.
 */
static void
nlq_seen_batch(struct nlq *q)
{
  for (uint i = 0; i < nlq_batch.cnt; i++)
    if (nlq_sent[i].e && (nlq_sent[i].op != NLQ_DEL))
      bmap_set(&q->p->seen_map, nlq_sent[i].e->id);
}

/* Fill the batch with up to one batch of the queue; returns the number of networks taken */
static uint
nlq_fill(struct nlq *q)
{
  struct krt_proto *p = q->p;
  uint max = MIN(q->batch, KRT_CF->sys.nlq.batch);	/* Reconfigured lower */
  uint len = 0, cnt = 0, taken = 0, last = 0;
  u32 first = nlq_seq + 1;

  /* Objects first: the routes of this batch and later ones may name them */
  struct nlnh *o;
  uint op;
  while ((cnt < NLQ_BATCH_MAX) && (o = nlnh_pending(&op)))
  {
    struct nlmsghdr *h = (void *) (nlq_tx + len);
    uint l = nlnh_msg(o, op, h, nlq_tx_size - len);
    if (!l)
      break;

    h->nlmsg_seq = ++nlq_seq;
    h->nlmsg_pid = 0;
    nlq_sent[cnt++] = (struct nlq_msg) { .obj = o, .op = op };
    last = len;
    len += NLMSG_ALIGN(l);
    nlnh_sent(o, op);
  }

  /* Routes only when no object waits: one of them may need it */
  if (nlnh_pending(&op))
    max = 0;

  while (!EMPTY_LIST(q->pending) && (taken < max))
  {
    struct nlq_entry *e = SKIP_BACK(struct nlq_entry, n, HEAD(q->pending));
    uint need = (e->has_old ? e->del->nlmsg_len : 0) + (e->has_new ? e->add->nlmsg_len : 0);

    if (cnt && (len + need > nlq_tx_size))
      break;

    /* A route alone larger than a batch (thousands of next hops): a buffer for it */
    if (need > nlq_tx_size)
    {
      mb_free(nlq_tx);
      nlq_tx = mb_alloc(krt_pool, nlq_tx_size = need);
    }

    rem_node(&e->n);
    HASH_REMOVE2(q->hash, NLQ, q->pool, e);
    taken++;

    if (e->has_old && e->has_new && nlq_allow_replace(p, e))
      nlq_put(e, e->add, NLQ_REPLACE, &len, &cnt, &last);
    else
    {
      if (e->has_old)
	nlq_put(e, e->del, NLQ_DEL, &len, &cnt, &last);
      if (e->has_new)
	nlq_put(e, e->add, NLQ_ADD, &len, &cnt, &last);
    }

    /* Added and withdrawn before it was sent */
    if (!e->has_old && !e->has_new)
      nlq_free(q, e);
  }

  if (cnt)
    /* The last message asks for an acknowledgement: when it is there, all are */
    ((struct nlmsghdr *) (nlq_tx + last))->nlmsg_flags |= NLM_F_ACK;

  nlq_batch.tx = nlq_tx;
  nlq_batch.len = len;
  nlq_batch.first = first;
  nlq_batch.cnt = cnt;
  nlq_batch_taken = taken;
  return taken;
}

/*
 * Send up to one batch of @q: to the writer thread if it runs and the
 * protocol uses it (then the results come later, nlq_writer_done()), else in
 * BIRD's loop. Returns the number of networks taken off the queue; 0 while
 * the writer is busy.
 */
static int
nlq_send_batch(struct nlq *q)
{
  /*
   * A protocol writing in BIRD's loop first waits for another's batch with
   * the thread and collects it as its completion would have: that one's
   * slices go on and corks go (the thread's eventfd finds nothing later).
   */
  if (!nlq_threaded(q))
    nlq_wait_only();

  if (nlq_broken || nlq_busy)
    return 0;

  uint taken = nlq_fill(q);
  if (!nlq_batch.cnt)
  {
    if (!nlq_threaded(q))
      nlq_hand_on(q);
    return taken;
  }

  nlq_busy = 1;
  nlq_batch_q = q;

  if (q->mark_seen)
    nlq_seen_batch(q);

  if (nlq_threaded(q))
    nlw_submit(nlq_fd, &nlq_batch);
  else
  {
    nlw_write(nlq_fd, &nlq_batch);
    nlq_complete();
    nlq_hand_on(q);
  }

  return taken;
}

/* BIRD's loop wrote or collected a batch: the idle writer thread gets the next one */
static void
nlq_hand_on(struct nlq *after)
{
  if (!nlw_threaded())
    return;

  nlq_next(after);
  nlq_uncork_idle();
}

/* The writer is idle: give it the next queue that has work, round robin */
static void
nlq_next(struct nlq *after)
{
  struct nlq *q;

  if (nlq_busy || nlq_broken || !nlq_users)
    return;

  /* From the queue after @after to the end, then from the start */
  node *start = after ? after->n.next : HEAD(nlq_list);
  for (int pass = 0; pass < 2; pass++)
  {
    for (node *n = (pass ? HEAD(nlq_list) : start); NODE_VALID(n); n = n->next)
    {
      q = SKIP_BACK(struct nlq, n, n);
      /* A queue held back by an IPv6 dump waits (the dump drains it when full) */
      if (!EMPTY_LIST(q->pending) && nlq_threaded(q) && !nl_dump_holds_writes(q->p))
      {
	nlq_send_batch(q);
	return;
      }
    }
  }
}

/* The writer's batch is taken back: its results recorded, slices waiting for it go on */
static void
nlq_collected(void)
{
  struct nlq *q;

  nlq_complete();

  WALK_LIST(q, nlq_list)
  {
    if (q->hash.count < ((struct krt_config *) q->p->p.cf)->sys.nlq.queue)
      nlq_uncork(q);
    krt_slice_writes_done(q->p);
  }
}

/* The writer has nothing to do: nothing would release a cork any more */
static void
nlq_uncork_idle(void)
{
  struct nlq *q;

  if (nlq_busy)
    return;

  WALK_LIST(q, nlq_list)
    nlq_uncork(q);
}

/* A batch the writer thread had is done (BIRD's loop, from its eventfd) */
static void
nlq_writer_done(void)
{
  struct nlq *q = nlq_batch_q;

  if (!nlq_busy)
    return;

  nlq_collected();

  /* Between two batches: the interface scan put off meanwhile, at top level */
  if (nlq_kif_wanted)
  {
    nlq_kif_wanted = 0;
    kif_scan_deferred();
  }

  nlq_next(q);
  nlq_uncork_idle();
}

/**
 * krt_sys_kif_scan_later - defer an interface scan while the kernel has a batch
 *
 * An interface scan dumps links and addresses synchronously. Made while the
 * writer thread's batch is in the kernel, the dump waits for the kernel's
 * locks behind many route changes, and BIRD's loop with it. So it waits for
 * the batch to be done: nlq_writer_done() runs it from there; the timer asks
 * again within a second in case the batch is collected by a wait instead.
 * Returns 1 if the scan was deferred, 0 if it may run now.
 */
int
krt_sys_kif_scan_later(void)
{
  if (!nlq_busy || !nlw_threaded())
    return 0;

  nlq_kif_wanted = 1;
  nlq_kif_later++;
  kif_request_scan();
  return 1;
}

/* Wait for the batch with the writer thread; the caller gives it the next one */
static void
nlq_wait_only(void)
{
  if (!nlq_busy || !nlw_threaded())
    return;

  nlw_wait();
  nlq_collected();
}

/* Wait for the batch with the writer thread, then go on with the next */
static void
nlq_wait(void)
{
  struct nlq *q = nlq_batch_q;

  if (!nlq_busy || !nlw_threaded())
    return;

  nlq_wait_only();
  nlq_next(q);
}

/**
 * nlq_writing - has the writer thread a batch of a kernel protocol?
 * @p: the protocol
 *
 * Its completion calls krt_slice_writes_done().
 */
int
nlq_writing(struct krt_proto *p)
{
  struct nlq *q = p->sys.nlq;

  return q && nlq_busy && (nlq_batch_q == q) && nlw_threaded();
}

/*
 * A full queue (more than `netlink queue` changes waiting). Nothing waits
 * for the writer in BIRD's loop: with a batch in the kernel, route import is
 * corked (nest/rt-cork.c; BGP stops reading its sessions before the next
 * UPDATE) and a feed of the protocol (its start, `restart`, a refeed) is held
 * (the channel's feed event is not run again), so the loop goes on serving
 * the CLI and the protocols while the kernel works. Both are released when a
 * batch brings the queue below `netlink queue`, or when the writer has
 * nothing left to do; the queue stays near that size, enough to keep the
 * writer busy.
 *
 * Waits inside the loop, bounded per loop cycle, were the way before: the
 * bound held only as long as the main thread got its CPU back in time, and
 * the CLI waited through every cycle that waited.
 *
 * Producers that neither stops (a static protocol, a reload) fill the queue on
 * up to NLQ_PRESSURE_LAST times `netlink queue`, where they wait for the
 * writer for as long as it takes, so that memory stays bounded.
 */

/* Hold the route import cork, and the protocol's feed, until the queue is below `netlink queue` again */
static void
nlq_cork(struct nlq *q)
{
  struct channel *c = q->p->p.main_channel;

  if (c && (c->export_state == ES_FEEDING))
    c->feed_held = 1;

  if (q->corked)
    return;

  q->corked = 1;
  q->corks++;
  rt_cork_acquire();
}

static void
nlq_uncork(struct nlq *q)
{
  struct channel *c = q->p->p.main_channel;

  if (c && c->feed_held)
  {
    c->feed_held = 0;
    if (c->export_state == ES_FEEDING)
      ev_schedule_work(c->feed_event);
  }

  if (!q->corked)
    return;

  q->corked = 0;
  rt_cork_release();
}

static void
nlq_back_pressure(struct nlq *q)
{
  struct krt_proto *p = q->p;
  uint last = KRT_CF->sys.nlq.queue * NLQ_PRESSURE_LAST;

  q->pressure++;

  if (nlq_threaded(q) && !nlq_broken && (q->hash.count < last))
  {
    if (!nlq_busy)
      nlq_send_batch(q);

    if (nlq_busy)
      nlq_cork(q);
    return;
  }

  /* Writing in BIRD's loop: until below the queue's size; at the last limit: below it */
  btime t0 = current_time_now();
  uint limit = nlq_threaded(q) ? last : KRT_CF->sys.nlq.queue;

  while ((q->hash.count >= limit) && !nlq_broken)
  {
    nlq_wait_only();
    if (!nlq_send_batch(q))
      break;
  }

  q->longest_wait = MAX(q->longest_wait, current_time_now() - t0);
}

/**
 * nlq_send - send what is pending for a kernel protocol
 * @p: the protocol
 * @deadline: stop sending batches after this time (0: send everything and
 * wait for the answers)
 *
 * With the writer thread, this gives it one batch if it is idle and returns
 * (0: the writer's completions go on with the rest). Returns 1 when nothing
 * of the protocol is pending or with the writer any more.
 */
int
nlq_send(struct krt_proto *p, btime deadline)
{
  struct nlq *q = p->sys.nlq;

  if (!q)
    return 1;

  if (!deadline)
  {
    while ((!EMPTY_LIST(q->pending) || (nlq_busy && (nlq_batch_q == q))) && !nlq_broken)
      if (nlq_busy)
	nlq_wait();
      else
	nlq_send_batch(q);
  }
  else if (nlq_threaded(q))
  {
    if (!EMPTY_LIST(q->pending))
      nlq_send_batch(q);
  }
  else
    while (!EMPTY_LIST(q->pending) && !nlq_broken)
    {
      nlq_send_batch(q);
      if (current_time_now() >= deadline)
	break;
    }

  return EMPTY_LIST(q->pending) && !(nlq_busy && (nlq_batch_q == q));
}

/**
 * nlq_full - is a kernel protocol's queue full?
 * @p: the protocol
 *
 * A dump that queues writes (flush, scan) stops reading while it is, instead
 * of making BIRD's loop wait (back-pressure); krt_slice_writes_done() resumes it.
 */
int
nlq_full(struct krt_proto *p)
{
  return nlq_busy && nlq_held_full(p);
}

/**
 * nlq_held_full - is the queue of a protocol full while the writer thread
 * could take it (a dump holds it: nl_dump_holds_writes())?
 * @p: the protocol
 */
int
nlq_held_full(struct krt_proto *p)
{
  struct nlq *q = p->sys.nlq;

  return q && nlq_threaded(q) && (q->hash.count >= KRT_CF->sys.nlq.queue);
}

/**
 * nlq_drained - has the writer thread done every write of a protocol?
 * @p: the protocol
 */
int
nlq_drained(struct krt_proto *p)
{
  struct nlq *q = p->sys.nlq;

  return !q || nlq_broken || (EMPTY_LIST(q->pending) && !(nlq_busy && (nlq_batch_q == q)));
}

/**
 * nlq_kicks_later - will a completion of the writer thread go on with a protocol's writes?
 * @p: the protocol
 *
 * Then a slice waiting for them need not schedule itself again.
 */
int
nlq_kicks_later(struct krt_proto *p)
{
  return p->sys.nlq && nlq_threaded(p->sys.nlq) && nlq_busy;
}

static void
nlq_event(void *data)
{
  struct nlq *q = data;
  struct krt_proto *p = q->p;

  /* nlq_kick() sends them when the dump is read */
  if (nl_dump_holds_writes(p))
    return;

  /* The writer thread's completions go on with the rest (nlq_next()) */
  if (nlq_threaded(q))
  {
    nlq_send_batch(q);
    return;
  }

  if (!nlq_send(p, current_time_now() + KRT_CF->sys.nlq.slice))
    ev_schedule(q->event);
}

/**
 * nlq_kick - send what is pending for a kernel protocol soon
 * @p: the protocol
 *
 * Called when a dump that held the writes back (nl_dump_holds_writes()) ends.
 */
void
nlq_kick(struct krt_proto *p)
{
  struct nlq *q = p->sys.nlq;

  if (q && !EMPTY_LIST(q->pending) && !ev_active(q->event))
    ev_schedule(q->event);
}


/*
 *	Failures and resync
 */

/* The write socket failed: stock's paths from now on, a scan repairs the rest */
static void
nlq_fail_all(void)
{
  struct nlq_entry *e;
  struct nlq *q;
  node *n;

  nlq_close();

  WALK_LIST(q, nlq_list)
  {
    WALK_LIST2(e, n, q->pending, n)
      if (e->has_new)
	bmap_clear(&q->p->sync_map, e->id);

    nlq_drop(q->p);
  }

  krt_scan_kick_all();
}

/**
 * nlq_async_overflow - the kernel dropped notifications for BIRD
 *
 * Called when BIRD's asynchronous Netlink socket reports ENOBUFS, and when
 * answers to our writes are lost: schedules a scan of every kernel protocol
 * within %NLQ_RESYNC_DELAY, and not sooner than %NLQ_RESYNC_INTERVAL after the
 * previous one. Stock only waits for the next periodic scan.
 */
void
nlq_async_overflow(void)
{
  if (!nlq_users || !nlq_resync_timer || tm_active(nlq_resync_timer))
    return;

  btime now = current_time();
  btime when = MAX(now + NLQ_RESYNC_DELAY, nlq_last_resync + NLQ_RESYNC_INTERVAL);

  log(L_INFO "KRT: Resync of kernel tables in %t s", when - now);
  tm_set(nlq_resync_timer, when);
}

static void
nlq_resync(timer *t UNUSED)
{
  nlq_last_resync = current_time();
  log(L_INFO "KRT: Resync of kernel tables after dropped Netlink messages");

  kif_request_scan();
  krt_scan_kick_all();
}


/*
 *	Next-hop objects
 */

/* Nothing pending anywhere, nothing with the kernel */
static int
nlq_all_idle(void)
{
  struct nlq *q;

  if (nlq_busy)
    return 0;

  WALK_LIST(q, nlq_list)
    if (!EMPTY_LIST(q->pending))
      return 0;

  return 1;
}

/* Every kernel protocol has finished its first scan */
static int
nlq_all_scanned(void)
{
  struct nlq *q;

  WALK_LIST(q, nlq_list)
    if (!q->p->initialized)
      return 0;

  return 1;
}

/* Object operations waiting and no route change: a batch of them alone */
static void
nlq_send_objects(void)
{
  struct nlq *q;
  uint op;

  if (nlq_busy || nlq_broken || !nlnh_pending(&op))
    return;

  WALK_LIST(q, nlq_list)
    if (!nl_dump_holds_writes(q->p))
    {
      nlq_send_batch(q);
      return;
    }
}

static void
nlq_sweep_soon(void)
{
  if (nlq_sweep_timer && !tm_active(nlq_sweep_timer))
    tm_start(nlq_sweep_timer, 1 S);
}

/*
 * Unused objects are deleted only while no route change is pending or with
 * the kernel (nlnh_sweep()); those of an earlier run once every protocol has
 * finished its first scan, which rewrote the routes naming them.
 */
static void
nlq_sweep(timer *t)
{
  int again = 1;

  if (!nlq_users || nlq_broken)
    return;

  if (nlq_all_idle())
  {
    if (!nlq_leftovers_done && nlq_all_scanned())
    {
      nlq_leftovers_done = 1;
      nlnh_leftovers();
    }

    again = nlnh_sweep(current_time()) || !nlq_leftovers_done;
    nlq_send_objects();
  }

  if (again)
    tm_start(t, 1 S);
}

/**
 * nlq_parsed_route - a route of a scan is being parsed
 * @h: its message (RTM_NEWROUTE)
 *
 * Called by stock's parser before it hands the route to krt_got_route(),
 * which asks krt_sys_route_current(): the object the route names, if any.
 */
void
nlq_parsed_route(struct nlmsghdr *h)
{
  struct rtmsg *r = NLMSG_DATA(h);
  struct rtattr *a = RTM_RTA(r);
  int len = RTM_PAYLOAD(h);

  nlq_parsed = 0;
  for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
    if ((a->rta_type == 30 /* RTA_NH_ID */) && (RTA_PAYLOAD(a) == sizeof(u32)))
      memcpy(&nlq_parsed, RTA_DATA(a), sizeof(u32));
}

/**
 * krt_sys_route_current - is the kernel's route written as this run writes it?
 * @p: the kernel protocol
 * @e: BIRD's route of the network the scan found
 *
 * Asked by krt_got_route() for a route in sync by stock's rules: one that
 * names another object than the one BIRD wrote it with, or names one where
 * BIRD wrote none, is rewritten (nlnh_current()).
 */
int
krt_sys_route_current(struct krt_proto *p, rte *e)
{
  struct nlq *q = p->sys.nlq;

  return nlnh_current(q ? q->nh : NULL, e, nlq_parsed);
}

/**
 * nlq_nexthop_changed - an object may have been deleted or changed, not by us
 * @nhid: its id
 *
 * Called for a notification of a change to one of our objects, for a route
 * write naming it that the kernel refused, and for a scanned route that
 * names it but does not forward as BIRD's route. The kernel tells nobody of
 * the routes a deletion took with it: BIRD's object is restored and the
 * tables scanned again.
 */
void
nlq_nexthop_changed(u32 nhid)
{
  if (!nlq_users || !nlnh_lost(nhid))
    return;

  /* Created again at the head of the next batch; the sweep sends it if no route change comes */
  log_rl(&nlq_rl_err, L_WARN "KRT: Next-hop object %u deleted or changed behind our back, restoring it", nhid);
  nlq_sweep_soon();
  nlq_async_overflow();
}


/*
 * nlq_nexthop_notified - the kernel notified a change of a next-hop object
 * @h: the notification (RTM_NEWNEXTHOP, RTM_DELNEXTHOP)
 *
 * Stock's parser keeps its table of the kernel's objects from these (our own
 * pass too: it reads our routes by them when the kernel sends routes with
 * their object's id alone). One of ours changed by somebody else is restored.
 */
static void
nlq_nexthop_notified(struct nlmsghdr *h)
{
  if (!nlq_users || (h->nlmsg_pid == nlq_portid) ||
      (h->nlmsg_len < NLMSG_LENGTH(8)))
    return;

  /* struct nhmsg is 8 bytes; NHA_ID (1) is the first attribute we look for */
  struct rtattr *a = (void *) ((byte *) NLMSG_DATA(h) + NLMSG_ALIGN(8));
  int len = h->nlmsg_len - NLMSG_LENGTH(8);

  for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
    if ((a->rta_type == 1 /* NHA_ID */) && (RTA_PAYLOAD(a) == sizeof(u32)))
    {
      u32 id;
      memcpy(&id, RTA_DATA(a), sizeof(u32));
      nlq_nexthop_changed(id);
      return;
    }
}


/*
 * nlq_link_notified - the kernel notified a change of an interface
 * @h: the notification (RTM_NEWLINK, RTM_DELLINK)
 *
 * An interface going down or losing carrier takes our objects through it
 * with it, silently (nlnh_link()); when it is back they are created again and
 * the tables scanned.
 */
static void
nlq_link_notified(struct nlmsghdr *h)
{
  if (!nlq_users || (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))))
    return;

  struct ifinfomsg *i = NLMSG_DATA(h);
  int up = (h->nlmsg_type == RTM_NEWLINK) && (i->ifi_flags & 0x1 /* IFF_UP */) &&
    (i->ifi_flags & 0x10000 /* IFF_LOWER_UP */);

  if (nlnh_link(i->ifi_index, up))
  {
    log(L_INFO "KRT: Interface %u is back, restoring the next-hop objects through it", i->ifi_index);
    nlq_sweep_soon();
    nlq_async_overflow();
  }
}


/**
 * nlq_async_msg - a notification on BIRD's asynchronous Netlink socket
 * @h: the message
 *
 * Called by stock's handler before it parses the message itself.
 */
void
nlq_async_msg(struct nlmsghdr *h)
{
  switch (h->nlmsg_type)
  {
  case 104:	/* RTM_NEWNEXTHOP */
  case 105:	/* RTM_DELNEXTHOP */
    nlq_nexthop_notified(h);
    break;

  case RTM_NEWLINK:
  case RTM_DELLINK:
    nlq_link_notified(h);
    break;
  }
}


/*
 *	CLI
 */

/**
 * nlq_show - the queue's state in `show protocols all`
 * @p: the kernel protocol
 */
void
nlq_show(struct krt_proto *p)
{
  struct nlq *q = p->sys.nlq;

  if (!q)
  {
    if (KRT_CF->sys.nlq.async && nlq_broken)
      cli_msg(-1006, "  Netlink writes:   synchronous (batched writes failed)");
    return;
  }

  /* Routes still to be written: in the queue, and with the kernel (shown `*` by show route) */
  uint writing = (nlq_busy && (nlq_batch_q == q)) ? nlq_batch_taken : 0;

  cli_msg(-1006, "  Netlink writes:   batched, %u pending, %u being written, %lu changes (%lu coalesced), %lu routes in %lu messages, %lu batches",
	  q->hash.count, writing, q->changes, q->coalesced, q->routes, q->messages, q->batches);
  cli_msg(-1006, "  Netlink failures: %lu, back-pressure %lu (longest wait %t ms, import corked %lu times), longest batch %t ms, batch now %u",
	  q->failed, q->pressure, q->longest_wait * 1000, q->corks, q->longest * 1000, MIN(q->batch, KRT_CF->sys.nlq.batch));
  cli_msg(-1006, "  Interface scans put off for a batch: %lu", nlq_kif_later);
  if (nlq_objects(p))
    nlnh_show(q->nh);
  rt_cork_show();
}
