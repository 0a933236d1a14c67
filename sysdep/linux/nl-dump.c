/*
 *	bloombird -- Kernel table dumps read in time slices
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Sliced Netlink dumps
 *
 * The system side of the sliced scans (sysdep/unix/krt-slice.c). Stock reads
 * a table dump on the socket it shares with interface scans, blocking until
 * the end. Here every kernel protocol dumps on a socket of its own
 * (NETLINK_GET_STRICT_CHK, so the kernel sends only the protocol's table),
 * read without blocking: the kernel fills the next part of a dump when the
 * previous one is read, so there is always something to read until
 * NLMSG_DONE, and a slice stops when its time is up, leaving the rest in the
 * socket. Each route goes to stock's parser (nl_parse_route_scan()), and so to
 * krt_got_route(), exactly as in stock's scan.
 *
 * A flush (shutdown without `persist`) reads the same dump and queues the
 * deletion of each route of protocol bird in it (with the protocol's `metric`,
 * when one is set) through the batched queue.
 *
 * The kernel answering something unexpected (another sequence number, another
 * message type, a truncated message) is logged and skipped. A socket that
 * fails is reported: the scan then falls back to stock's.
 */

#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#undef LOCAL_DEBUG

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/protocol.h"
#include "nest/iface.h"
#include "conf/conf.h"
#include "lib/timer.h"
#include "lib/string.h"
#include "sysdep/unix/krt.h"
#include "sysdep/unix/krt-slice.h"

#include CONFIG_INCLUDE_NLSYS_H

#define NL_DUMP_RX_SIZE		32768
#define NL_DUMP_IDLE_MAX	1000	/* Slices without data before a dump counts as dead */

struct nl_dump {
  int fd;
  u32 seq;
  byte *buf;
  struct nlmsghdr *h;			/* Next message in buf */
  uint len;				/* Bytes from h on */
  u8 flush;				/* Delete BIRD's routes instead of scanning */
  u8 done;
  uint idle;				/* Reads without data in a row */
  u64 routes, deleted;			/* This dump */
  u8 waiting;				/* Stopped for a full write queue */
  u8 draining;				/* IPv6: stopped until the held writes are all done */
  u8 requested;				/* The request is sent (IPv6: after the writer's batch) */
};

static struct tbf nl_dump_rl = TBF_DEFAULT_LOG_LIMITS;


static int
nl_dump_open(struct krt_proto *p, struct nl_dump *d)
{
  int one = 1;

  d->fd = socket(PF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
  if (d->fd < 0)
  {
    log(L_ERR "%s: Cannot open Netlink socket for sliced scans: %m", p->p.name);
    return 0;
  }

  if (setsockopt(d->fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one)) < 0)
  {
    log(L_ERR "%s: Netlink strict checking failed: %m; using synchronous scans", p->p.name);
    close(d->fd);
    d->fd = -1;
    return 0;
  }

  return 1;
}

static void
nl_dump_close(struct nl_dump *d)
{
  if (d->fd >= 0)
    close(d->fd);

  d->fd = -1;
  d->h = NULL;
  d->len = 0;
}

/* Send the dump request; 0 if it fails (logged, socket closed) */
static int
nl_dump_request(struct krt_proto *p, struct nl_dump *d)
{
  u32 table_id = KRT_CF->sys.table_id;

  struct {
    struct nlmsghdr nh;
    struct rtmsg rtm;
    struct rtattr rta;
    u32 table_id;
  } req = {
    .nh.nlmsg_type = RTM_GETROUTE,
    .nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)),
    .nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
    .nh.nlmsg_seq = d->seq = (u32) current_time_now(),
    .rtm.rtm_family = p->af,
  };

  /* As stock's nl_request_dump_route() */
  if (table_id < 256)
    req.rtm.rtm_table = table_id;
  else
  {
    req.rta.rta_type = RTA_TABLE;
    req.rta.rta_len = RTA_LENGTH(4);
    req.table_id = table_id;
    req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + req.rta.rta_len;
  }

  if (send(d->fd, &req, req.nh.nlmsg_len, 0) < 0)
  {
    log(L_ERR "%s: Netlink dump request failed: %m", p->p.name);
    nl_dump_close(d);
    return 0;
  }

  d->requested = 1;
  return 1;
}

/**
 * krt_sys_dump_start - ask the kernel for a kernel protocol's table
 * @p: the protocol
 * @flush: delete BIRD's routes in the dump instead of scanning them
 *
 * An IPv6 dump holds the protocol's writes from here on, and none may be in
 * the kernel while it is read: while the writer thread still has a batch of
 * the protocol, the request waits for it (the first krt_sys_dump_step() after
 * the batch sends it) instead of making BIRD's loop wait.
 *
 * Returns 0 if the dump cannot be requested (logged).
 */
int
krt_sys_dump_start(struct krt_proto *p, int flush)
{
  struct nl_dump *d = p->sys.dump;

  if (!d)
  {
    d = p->sys.dump = mb_allocz(p->p.pool, sizeof(struct nl_dump));
    d->buf = mb_alloc(p->p.pool, NL_DUMP_RX_SIZE);
    d->fd = -1;
  }

  /* A dump abandoned half-way leaves its rest in the socket */
  nl_dump_close(d);
  if (!nl_dump_open(p, d))
    return 0;

  d->flush = flush;
  d->done = 0;
  d->draining = 0;
  d->idle = 0;
  d->requested = 0;
  d->routes = d->deleted = 0;

#ifdef HAVE_NEXTHOP_OBJECTS
  /* As stock's scan: the kernel's objects read again, for routes named by them alone */
  if (!flush)
    nl_scan_nexthops();
#endif

  if ((p->af == AF_INET6) && nlq_writing(p))
    return 1;

  return nl_dump_request(p, d);
}

/**
 * krt_sys_dump_stop - abandon a dump
 * @p: the kernel protocol
 */
void
krt_sys_dump_stop(struct krt_proto *p)
{
  if (p->sys.dump)
    nl_dump_close(p->sys.dump);

  nlq_kick(p);
}

/**
 * nl_dump_holds_writes - does a running dump hold a protocol's writes back?
 * @p: the kernel protocol
 *
 * When the IPv6 tree changes between two reads of a dump, the kernel starts
 * the walk again and skips as many routes as it has sent: a route deleted
 * meanwhile before the walk's position hides another one from the dump, which
 * the prune would then add again (and the kernel refuse, EEXIST). So writes
 * of an IPv6 protocol wait while its table is read; a flush repeats its dump
 * until it finds nothing to delete. IPv4 dumps resume at the last key sent
 * and need no wait.
 *
 * The walk started again costs the kernel as many steps as routes sent so
 * far, so the tree must change between reads as rarely as possible: when the
 * held queue is full the dump stops reading until the writer thread has done
 * all of it (d->draining), then reads on; a scan that rewrites a whole table
 * (the end of a graceful restart) makes the walk start again once per full
 * queue, not once per batch.
 */
int
nl_dump_holds_writes(struct krt_proto *p)
{
  struct nl_dump *d = p->sys.dump;

  return d && (d->fd >= 0) && !d->done && !d->draining && (p->af == AF_INET6);
}

/*
 * Should the dump stop reading for now? A full queue with the writer busy
 * (IPv4: it goes on after a batch) or an IPv6 dump's full held queue, which
 * must be done completely before the walk goes on.
 */
static int
nl_dump_stop(struct krt_proto *p, struct nl_dump *d)
{
  if (d->draining)
  {
    if (!nlq_drained(p))
      return 1;

    d->draining = 0;
  }

  if ((p->af == AF_INET6) && nlq_held_full(p))
  {
    d->draining = 1;
    nlq_kick(p);
    return 1;
  }

  return nlq_full(p);
}

/**
 * krt_sys_dump_deleted - how many routes a flush dump has deleted
 * @p: the kernel protocol
 */
uint
krt_sys_dump_deleted(struct krt_proto *p)
{
  return p->sys.dump ? p->sys.dump->deleted : 0;
}

/* The route's family and table, as nl_parse_route() finds them */
static int
nl_dump_ours(struct krt_proto *p, struct nlmsghdr *h, struct rtmsg **rp)
{
  struct rtmsg *r = NLMSG_DATA(h);

  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
  {
    log_rl(&nl_dump_rl, L_WARN "%s: Truncated route in Netlink dump, skipped", p->p.name);
    return 0;
  }

  if (r->rtm_family != p->af)
    return 0;

  u32 table = r->rtm_table;
  int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(struct rtmsg));
  for (struct rtattr *a = RTM_RTA(r); RTA_OK(a, len); a = RTA_NEXT(a, len))
    if ((a->rta_type == RTA_TABLE) && (RTA_PAYLOAD(a) == 4))
      table = *(u32 *) RTA_DATA(a);

  *rp = r;
  return table == KRT_CF->sys.table_id;
}

/* Flush: queue the deletion of a route of ours */
static void
nl_dump_delete(struct krt_proto *p, struct nl_dump *d, struct nlmsghdr *h, struct rtmsg *r)
{
  struct rtattr *dst = NULL, *src = NULL;
  u32 priority = 0;
  net_addr_union n;

  if ((r->rtm_protocol != RTPROT_BIRD) || (r->rtm_flags & RTM_F_CLONED))
    return;

  int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(struct rtmsg));
  for (struct rtattr *a = RTM_RTA(r); RTA_OK(a, len); a = RTA_NEXT(a, len))
    switch (a->rta_type)
    {
    case RTA_DST: dst = a; break;
    case RTA_SRC: src = a; break;
    case RTA_PRIORITY:
      if (RTA_PAYLOAD(a) == 4)
	priority = *(u32 *) RTA_DATA(a);
      break;
    }

  /* Stock deletes (network, metric): a route of another metric is not ours */
  if (KRT_CF->sys.metric && (priority != KRT_CF->sys.metric))
    return;

  uint alen = (p->af == AF_INET) ? 4 : 16;
  if ((dst && (RTA_PAYLOAD(dst) != alen)) || (src && (RTA_PAYLOAD(src) != alen)) ||
      (r->rtm_dst_len > alen * 8) || (r->rtm_src_len > alen * 8))
  {
    log_rl(&nl_dump_rl, L_WARN "%s: Malformed route in Netlink dump, skipped", p->p.name);
    return;
  }

  if (p->af == AF_INET)
    net_fill_ip4(&n.n, dst ? ip4_ntoh(*(ip4_addr *) RTA_DATA(dst)) : IP4_NONE, r->rtm_dst_len);
  else if (p->p.net_type == NET_IP6_SADR)
    net_fill_ip6_sadr(&n.n, dst ? ip6_ntoh(*(ip6_addr *) RTA_DATA(dst)) : IP6_NONE, r->rtm_dst_len,
		      src ? ip6_ntoh(*(ip6_addr *) RTA_DATA(src)) : IP6_NONE, r->rtm_src_len);
  else if (!src)
    net_fill_ip6(&n.n, dst ? ip6_ntoh(*(ip6_addr *) RTA_DATA(dst)) : IP6_NONE, r->rtm_dst_len);
  else
    return;

  nlq_delete_net(p, &n.n);
  d->deleted++;
}

static void
nl_dump_error(struct krt_proto *p, struct nlmsghdr *h)
{
  struct nlmsgerr *e = NLMSG_DATA(h);

  /* As stock's nl_get_scan(): the error ends the dump */
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
    log(L_WARN "Netlink: Truncated error message received");
  else if (e->error)
    log_rl(&nl_dump_rl, L_WARN "Netlink: %s (%s: dump of table %u)",
	   strerror(netlink_error_to_os(e->error)), p->p.name, KRT_CF->sys.table_id);
}

/**
 * krt_sys_dump_step - process a dump until a deadline
 * @p: the kernel protocol
 * @deadline: when to stop
 *
 * Returns 1 when the dump is complete, 0 when there is more, -1 when the
 * socket failed (logged).
 */
int
krt_sys_dump_step(struct krt_proto *p, btime deadline)
{
  struct nl_dump *d = p->sys.dump;
  uint n = 0;

  if (!d || (d->fd < 0))
    return -1;

  d->waiting = 0;

  /* IPv6: requested once the writer is done with the protocol's batch */
  if (!d->requested)
  {
    if (nlq_writing(p))
    {
      d->waiting = 1;
      return 0;
    }

    if (!nl_dump_request(p, d))
      return -1;
  }

  for (;;)
  {
    if (!d->h || !NLMSG_OK(d->h, d->len))
    {
      if (d->h && d->len)
	log_rl(&nl_dump_rl, L_WARN "%s: Netlink dump remnant of size %u, skipped", p->p.name, d->len);
      d->h = NULL;

      /* The socket goes now: a protocol that stops keeps none open */
      if (d->done)
      {
	nl_dump_close(d);
	nlq_kick(p);
	return 1;
      }

      if (current_time_now() >= deadline)
	return 0;

      /* The writer thread is behind: read on when it has taken a batch */
      if (nl_dump_stop(p, d))
      {
	d->waiting = 1;
	return 0;
      }

      struct iovec iov = { d->buf, NL_DUMP_RX_SIZE };
      struct sockaddr_nl sa;
      struct msghdr m = {
	.msg_name = &sa,
	.msg_namelen = sizeof(sa),
	.msg_iov = &iov,
	.msg_iovlen = 1,
      };
      int x = recvmsg(d->fd, &m, MSG_DONTWAIT);

      if (x < 0)
      {
	if (errno == EINTR)
	  continue;

	if (((errno == EAGAIN) || (errno == EWOULDBLOCK)) && (++d->idle < NL_DUMP_IDLE_MAX))
	  return 0;

	log(L_ERR "%s: Netlink dump failed: %m", p->p.name);
	return -1;
      }

      d->idle = 0;
      if (sa.nl_pid)
	continue;

      if (m.msg_flags & MSG_TRUNC)
      {
	log(L_ERR "%s: Netlink dump truncated", p->p.name);
	return -1;
      }

      d->h = (void *) d->buf;
      d->len = x;
      continue;
    }

    struct nlmsghdr *h = d->h;
    struct rtmsg *r;
    d->h = NLMSG_NEXT(h, d->len);

    if (h->nlmsg_seq != d->seq)
    {
      log_rl(&nl_dump_rl, L_WARN "%s: Netlink message out of sequence in a dump (%x != %x), skipped",
	     p->p.name, h->nlmsg_seq, d->seq);
      continue;
    }

    switch (h->nlmsg_type)
    {
    case NLMSG_DONE:
      d->done = 1;
      break;

    case NLMSG_ERROR:
      nl_dump_error(p, h);
      d->done = 1;
      break;

    case RTM_NEWROUTE:
      if (!nl_dump_ours(p, h, &r))
	break;

      d->routes++;
      if (d->flush)
	nl_dump_delete(p, d, h, r);
      else
	nl_parse_route_scan(h);
      break;

    default:
      log_rl(&nl_dump_rl, L_WARN "%s: Unexpected Netlink message type %u in a dump, skipped",
	     p->p.name, h->nlmsg_type);
    }

    if (n++ && (current_time_now() >= deadline))	/* Every message: one may have sent a batch */
    {
      if (d->done)
	nlq_kick(p);
      return d->done;
    }

    /* Every message may queue a write: stop before back-pressure would wait */
    if (!d->done && nl_dump_stop(p, d))
    {
      d->waiting = 1;
      return 0;
    }
  }
}


/*
 *	The rest of the system side of krt-slice.c
 */

/**
 * krt_sys_slice_init - forget the state of an earlier run
 * @p: the kernel protocol, starting
 *
 * Its memory went with the protocol's pool; krt_sys_start() sets it up again.
 */
void
krt_sys_slice_init(struct krt_proto *p)
{
  p->sys.nlq = NULL;
  p->sys.dump = NULL;
}

/**
 * krt_sys_sliced - does a kernel protocol scan in slices?
 * @p: the protocol
 */
int
krt_sys_sliced(struct krt_proto *p)
{
  return nlq_active(p);
}

/* The address family of a kernel protocol's configuration, as krt_start() sets p->af */
static int
nl_dump_cf_af(struct proto_config *pc)
{
  switch (pc->net_type)
  {
  case NET_IP4:		return AF_INET;
  case NET_IP6:
  case NET_IP6_SADR:	return AF_INET6;
  default:		return -1;
  }
}

/**
 * krt_sys_table_wanted - does another kernel protocol want the table?
 * @p: the kernel protocol, shutting down
 *
 * Stock's flush ends within krt_shutdown(), and with it the protocol's hold
 * on its kernel table (nl_table_map, netlink.c). A protocol of the new
 * configuration that syncs the same table (one renamed, or moved to the
 * table) starts right after, in the same protos_commit(); beside a sliced
 * flush it would find the table still held, log that it is registered by
 * the stopping one and never start, and the flush would delete its routes.
 * So when the running configuration has another kernel protocol of the same
 * family and table, the flush is stock's (krt_slice_flush() returns 0).
 */
int
krt_sys_table_wanted(struct krt_proto *p)
{
  struct proto_config *pc;

  if (!config)
    return 0;

  WALK_LIST(pc, config->protos)
    if ((pc->protocol == &proto_unix_kernel) && (pc->proto != &p->p) &&
	(nl_dump_cf_af(pc) == p->af) &&
	(((struct krt_config *) pc)->sys.table_id == KRT_CF->sys.table_id))
      return 1;

  return 0;
}

/**
 * krt_sys_writes_step - send pending writes until a deadline
 * @p: the kernel protocol
 * @deadline: when to stop
 *
 * Returns 1 when nothing is pending.
 */
int
krt_sys_writes_step(struct krt_proto *p, btime deadline)
{
  return nlq_send(p, deadline);
}

/**
 * krt_sys_dump_waiting - has the dump stopped for a full write queue?
 * @p: the kernel protocol
 *
 * Then krt_slice_writes_done() resumes it when the writer thread has taken
 * a batch.
 */
int
krt_sys_dump_waiting(struct krt_proto *p)
{
  return p->sys.dump && p->sys.dump->waiting;
}

/**
 * krt_sys_flush_net - queue the deletion stock's flush makes for a network
 * @p: the kernel protocol, flushing
 * @n: a network of its table whose route was exported
 *
 * Stock's krt_flush_routes() calls krt_replace_rte() with no new route, and
 * its deletion names the network, the table and the protocol's `metric'
 * only: nlq_delete_net() queues that message.
 */
void
krt_sys_flush_net(struct krt_proto *p, const net_addr *n)
{
  nlq_delete_net(p, n);
}

/**
 * krt_sys_writes_full - should a writer of more routes stop for now?
 * @p: the kernel protocol
 *
 * True while the protocol's queue is full and the writer thread has a batch:
 * the prune then stops until krt_slice_writes_done() instead of waiting.
 */
int
krt_sys_writes_full(struct krt_proto *p)
{
  return nlq_full(p);
}

/**
 * krt_sys_writes_later - will krt_slice_writes_done() say when writes go on?
 * @p: the kernel protocol
 *
 * True while the writer thread has a batch: its completion calls
 * krt_slice_writes_done() for every kernel protocol.
 */
int
krt_sys_writes_later(struct krt_proto *p)
{
  return nlq_kicks_later(p);
}

/**
 * krt_sys_writes_drop - forget pending writes
 * @p: the kernel protocol
 */
void
krt_sys_writes_drop(struct krt_proto *p)
{
  nlq_drop(p);
}

/**
 * krt_sys_mark_seen - count routes written while a scan runs as seen
 * @p: the kernel protocol
 * @on: whether a scan runs
 */
void
krt_sys_mark_seen(struct krt_proto *p, int on)
{
  nlq_mark_seen(p, on);
}

/**
 * krt_sys_slice - time budget of one slice
 * @p: the kernel protocol
 */
btime
krt_sys_slice(struct krt_proto *p)
{
  return KRT_CF->sys.nlq.slice;
}

/**
 * krt_sys_show_info - the system side's lines in `show protocols all`
 * @p: the kernel protocol
 */
void
krt_sys_show_info(struct krt_proto *p)
{
  nlq_show(p);
}
