/*
 *	bloombird -- Kernel next-hop objects of the kernel sync
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Kernel next-hop objects
 *
 * Written the old way, every route carries its next hops, and the kernel
 * builds and matches their description (for IPv4 its fib_info) for every
 * route anew. Since Linux 5.3 a next hop (gateway and interface) or a group
 * of them (ECMP, with weights) can be a kernel object of its own, created
 * once; a route then names it by id (RTA_NH_ID). With `netlink nexthop
 * objects` on, the kernel protocol writes its routes that way.
 *
 * This file keeps the table of the distinct next-hop sets the exported
 * routes use: one object per single next hop, and one group object per set
 * of several, whose members are single objects. Sets are counted: a route
 * holds its set, a group its members. The first route of a new set queues
 * the creation of its object(s); the write queue (nl-queue.c) puts pending
 * object operations at the head of its next batch, so an object always
 * reaches the kernel before the first route that names it, through the same
 * socket and writer thread. A set no route holds any more is deleted after
 * %NLNH_KEEP, and only when no route write is pending (nlnh_sweep(): the
 * routes that named it have been rewritten by then); a set wanted again
 * before that is taken back as it is.
 *
 * The table is one for all kernel protocols of BIRD: objects belong to the
 * network namespace, not to a kernel table, so two protocols exporting via
 * the same next hops share the object. Each protocol remembers per route the
 * object it wrote it with (&nlnh_routes, by route id), which is what it
 * gives back when the route is replaced or withdrawn.
 *
 * Objects carry protocol `bird` (RTPROT_BIRD) and ids from %NLNH_ID_BASE.
 * When the first kernel protocol starts, the kernel's objects are read: ours
 * left from an earlier run (a crash, a graceful restart, `persist`) and
 * anybody's in our range are never reused; a route the scan finds naming an
 * object is in sync only if it names the object this run wrote it with
 * (nlnh_current()), so every leftover route is rewritten by the first scan,
 * and our leftover objects are deleted once every kernel protocol has
 * finished it. Objects of other ids or protocols are never touched.
 *
 * Routes the kernel cannot take through an object (blackhole, unreachable,
 * prohibit, MPLS labels, a realm, an explicit scope, IPv6 source-specific
 * routes) and sets of more than %NLNH_PATHS_MAX next hops are written the
 * old way. A kernel without objects, or one refusing to create one, turns
 * them off for good with one log line; routes already written with an
 * object fail and are rewritten the old way by the scan this schedules.
 */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#undef LOCAL_DEBUG

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/protocol.h"
#include "nest/iface.h"
#include "nest/cli.h"
#include "lib/hash.h"
#include "lib/string.h"
#include "lib/timer.h"
#include "sysdep/unix/krt.h"
#include "sysdep/linux/nl-nhobj.h"

#include CONFIG_INCLUDE_NLSYS_H

/* From <linux/nexthop.h> (Linux 5.3), for building with older headers */
#define NLNH_RTM_NEWNEXTHOP	104
#define NLNH_RTM_DELNEXTHOP	105
#define NLNH_RTM_GETNEXTHOP	106
#define NLNH_RTA_NH_ID		30
#define NHA_ID_			1
#define NHA_GROUP_		2
#define NHA_OIF_		5
#define NHA_GATEWAY_		6

struct nlnh_nhmsg {
  u8 family, scope, protocol, resvd;
  u32 flags;
};

struct nlnh_grp {
  u32 id;
  u8 weight, resvd1;
  u16 resvd2;
};

/* One next hop of a set; zeroed before it is filled, compared as bytes */
struct nlnh_path {
  ip_addr gw;
  u32 ifindex;
  u8 weight;				/* BIRD's weight (kernel's weight - 1); 0 in a single */
  u8 onlink;
  u8 pad[2];
};

struct nlnh_key {
  u8 af;				/* The routes' family */
  u8 pad;
  u16 paths;
  struct nlnh_path path[0];
};

enum nlnh_state {
  NLNH_NEW,				/* Not created yet (creation queued) */
  NLNH_LIVE,				/* Created, or being created */
  NLNH_GOING,				/* Deletion sent: out of the hash */
};

struct nlnh {
  struct nlnh *next;			/* In the hash */
  node n;				/* In nlnh_ops or nlnh_retired */
  u32 id;				/* The kernel object's id */
  u32 refs;				/* Routes and groups holding it */
  u8 state;				/* enum nlnh_state */
  u8 op;				/* Operation queued in nlnh_ops, 0: none */
  u8 retired;				/* In nlnh_retired */
  u8 replace;				/* Created once: create again with NLM_F_REPLACE (restoring ours) */
  btime since;				/* Retired since */
  struct nlnh **member;			/* Group: its single objects */
  struct nlnh_key key;			/* Last: the paths follow */
};

struct nlnh_routes {
  pool *pool;
  u32 *id;				/* By route id: the object it was written with, 0: none */
  u32 size;
  u32 via;				/* Routes written with an object now */
  u64 too_many;				/* Routes written the old way: too many next hops */
  u64 other;				/* ... the kernel takes them only the old way */
};

static inline uint nlnh_key_size(const struct nlnh_key *k)
{ return sizeof(struct nlnh_key) + k->paths * sizeof(struct nlnh_path); }

#define NLNH_KEY(o)		&(o)->key
#define NLNH_NEXT(o)		(o)->next
#define NLNH_EQ(a,b)		((a)->paths == (b)->paths && !memcmp(a, b, nlnh_key_size(a)))
#define NLNH_FN(k)		mem_hash(k, nlnh_key_size(k))
#define NLNH_REHASH		nlnh_rehash
#define NLNH_PARAMS		/8, *2, 2, 2, 6, 20

HASH_DEFINE_REHASH_FN(NLNH, struct nlnh)

static pool *nlnh_pool;
static HASH(struct nlnh) nlnh_hash;
static struct nlnh **nlnh_by_id;	/* By id - NLNH_ID_BASE */
static u32 nlnh_ids;			/* Ids handed out so far (size of nlnh_by_id in use) */
static u32 nlnh_id_max;			/* Allocated size of nlnh_by_id */
static u32 *nlnh_free_ids, nlnh_nfree;
static u32 *nlnh_taken, nlnh_ntaken;	/* Ids in our range the kernel had at start, sorted */
static u32 *nlnh_leftover, nlnh_nleftover; /* Ours among them: to be deleted */
static list nlnh_ops;			/* struct nlnh with an operation to send, in order */
static list nlnh_retired;		/* struct nlnh nobody holds, oldest first */
static uint nlnh_users;
static int nlnh_have;			/* The kernel has objects (the start-up read worked) */
static int nlnh_failed;			/* It refused one: the old way from now on */
static u64 nlnh_created, nlnh_deleted, nlnh_restored;
static struct tbf nlnh_rl = TBF_DEFAULT_LOG_LIMITS;


/*
 *	Ids
 */

/* mb_realloc() that also takes NULL */
static void *
nlnh_realloc(pool *p, void *m, uint size)
{
  return m ? mb_realloc(m, size) : mb_alloc(p, size);
}

static int
nlnh_id_taken(u32 id)
{
  u32 lo = 0, hi = nlnh_ntaken;
  while (lo < hi)
  {
    u32 mid = (lo + hi) / 2;
    if (nlnh_taken[mid] == id)
      return 1;
    if (nlnh_taken[mid] < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

/* A free id for @o, or 0 when the range is exhausted */
static u32
nlnh_id_get(struct nlnh *o)
{
  u32 i;

  if (nlnh_nfree)
    i = nlnh_free_ids[--nlnh_nfree];
  else
  {
    do {
      if (nlnh_ids >= NLNH_IDS)
	return 0;
      i = nlnh_ids++;
    } while (nlnh_id_taken(NLNH_ID_BASE + i));

    if (nlnh_ids > nlnh_id_max)
    {
      u32 n = MAX(nlnh_id_max * 2, 1024);
      while (n < nlnh_ids)		/* Ids in use at start skipped */
	n *= 2;
      nlnh_by_id = nlnh_realloc(nlnh_pool, nlnh_by_id, n * sizeof(struct nlnh *));
      nlnh_free_ids = nlnh_realloc(nlnh_pool, nlnh_free_ids, n * sizeof(u32));
      memset(nlnh_by_id + nlnh_id_max, 0, (n - nlnh_id_max) * sizeof(struct nlnh *));
      nlnh_id_max = n;
    }
  }

  nlnh_by_id[i] = o;
  return NLNH_ID_BASE + i;
}

static void
nlnh_id_put(u32 id)
{
  u32 i = id - NLNH_ID_BASE;

  /* Ids of an earlier run stay taken (nlnh_id_taken()) */
  if (i >= nlnh_ids || (nlnh_by_id[i] == NULL))
    return;

  nlnh_by_id[i] = NULL;
  nlnh_free_ids[nlnh_nfree++] = i;
}

static inline struct nlnh *
nlnh_find_id(u32 id)
{
  u32 i = id - NLNH_ID_BASE;
  return ((id >= NLNH_ID_BASE) && (i < nlnh_ids)) ? nlnh_by_id[i] : NULL;
}


/*
 *	The table
 */

static void
nlnh_queue(struct nlnh *o, uint op)
{
  if (o->op)
    rem_node(&o->n);
  o->op = op;
  add_tail(&nlnh_ops, &o->n);
}

static void nlnh_put(struct nlnh *o);

static void
nlnh_free(struct nlnh *o)
{
  if (o->state != NLNH_GOING)
    HASH_REMOVE2(nlnh_hash, NLNH, nlnh_pool, o);
  if (o->op || o->retired)
    rem_node(&o->n);
  nlnh_id_put(o->id);

  if (o->member)
    for (uint i = 0; i < o->key.paths; i++)
      nlnh_put(o->member[i]);

  mb_free(o->member);
  mb_free(o);
}

/* One more holder of @o; a retired set is taken back */
static inline void
nlnh_hold(struct nlnh *o)
{
  if (o->refs++)
    return;

  if (o->retired)
  {
    rem_node(&o->n);
    o->retired = 0;
  }

  /* Its deletion not sent yet: kept */
  if (o->op == NLNH_DELETE)
  {
    rem_node(&o->n);
    o->op = 0;
  }

  /* Its restoration failed earlier: tried again */
  if ((o->state == NLNH_NEW) && !o->op && !nlnh_failed)
    nlnh_queue(o, NLNH_CREATE);
}

/* The object of set @k, held once more; NULL when no id is left */
static struct nlnh *
nlnh_get(const struct nlnh_key *k)
{
  struct nlnh *o = HASH_FIND(nlnh_hash, NLNH, k);
  if (o)
  {
    nlnh_hold(o);
    return o;
  }

  o = mb_allocz(nlnh_pool, sizeof(struct nlnh) + k->paths * sizeof(struct nlnh_path));
  memcpy(&o->key, k, nlnh_key_size(k));

  if (k->paths > 1)
  {
    /* Members first: their creation is queued before the group's */
    struct nlnh_key *m = alloca(sizeof(struct nlnh_key) + sizeof(struct nlnh_path));
    o->member = mb_allocz(nlnh_pool, k->paths * sizeof(struct nlnh *));

    for (uint i = 0; i < k->paths; i++)
    {
      memset(m, 0, sizeof(struct nlnh_key) + sizeof(struct nlnh_path));
      m->af = k->af;
      m->paths = 1;
      m->path[0] = k->path[i];
      m->path[0].weight = 0;

      if (!(o->member[i] = nlnh_get(m)))
      {
	while (i--)
	  nlnh_put(o->member[i]);
	mb_free(o->member);
	mb_free(o);
	return NULL;
      }
    }
  }

  if (!(o->id = nlnh_id_get(o)))
  {
    if (o->member)
      for (uint i = 0; i < k->paths; i++)
	nlnh_put(o->member[i]);
    mb_free(o->member);
    mb_free(o);
    return NULL;
  }

  o->refs = 1;
  o->state = NLNH_NEW;
  HASH_INSERT2(nlnh_hash, NLNH, nlnh_pool, o);
  nlnh_queue(o, NLNH_CREATE);
  return o;
}

/* One holder less: retired when it was the last (nlnh_sweep() deletes it later) */
static void
nlnh_put(struct nlnh *o)
{
  ASSERT(o->refs);
  if (--o->refs)
    return;

  /* Never sent: nothing to delete */
  if ((o->state == NLNH_NEW) && (o->op == NLNH_CREATE) && !o->replace)
  {
    nlnh_free(o);
    return;
  }

  /* A restoration (or a creation whose answer was lost) waiting: not needed
   * any more; the object may be in the kernel, the sweep deletes it */
  if (o->op)
  {
    rem_node(&o->n);
    o->op = 0;
    o->state = NLNH_LIVE;
  }

  o->retired = 1;
  o->since = current_time();
  add_tail(&nlnh_retired, &o->n);
}


/*
 *	Start and stop
 */

static int
nlnh_cmp_u32(const void *a, const void *b)
{
  u32 x = *(const u32 *) a, y = *(const u32 *) b;
  return (x > y) - (x < y);
}

/*
 * Read the kernel's objects once: does it have them, which ids in our range
 * are used, and which of those are ours from an earlier run.
 */
static int
nlnh_read_kernel(void)
{
  int fd = socket(PF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0)
    return -errno;

  struct {
    struct nlmsghdr h;
    struct nlnh_nhmsg m;
  } req = {
    .h = {
      .nlmsg_len = sizeof(req),
      .nlmsg_type = NLNH_RTM_GETNEXTHOP,
      .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
      .nlmsg_seq = 1,
    },
  };

  /* A kernel (or an emulator) that never answers: no objects */
  struct timeval tv = { .tv_sec = 1 };
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

  struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
  if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *) &sa, sizeof(sa)) < 0)
  {
    int e = errno;
    close(fd);
    return -e;
  }

  uint bufsize = 65536, max = 0;
  byte *buf = mb_alloc(nlnh_pool, bufsize);
  int err = 0, done = 0;

  while (!done)
  {
    int len = recv(fd, buf, bufsize, 0);
    if (len < 0)
    {
      if (errno == EINTR)
	continue;
      err = -errno;
      break;
    }

    struct nlmsghdr *h = (void *) buf;
    for (; NLMSG_OK(h, (uint) len); h = NLMSG_NEXT(h, len))
    {
      if (h->nlmsg_type == NLMSG_DONE)
      {
	done = 1;
	break;
      }

      if (h->nlmsg_type == NLMSG_ERROR)
      {
	struct nlmsgerr *e = NLMSG_DATA(h);
	err = (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e))) ? e->error : -EINVAL;
	done = 1;
	break;
      }

      if ((h->nlmsg_type != NLNH_RTM_NEWNEXTHOP) ||
	  (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlnh_nhmsg))))
	continue;

      struct nlnh_nhmsg *m = NLMSG_DATA(h);
      struct rtattr *a = (void *) ((byte *) m + NLMSG_ALIGN(sizeof(*m)));
      int alen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
      u32 id = 0;

      for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
	if ((a->rta_type == NHA_ID_) && (RTA_PAYLOAD(a) >= sizeof(u32)))
	  memcpy(&id, RTA_DATA(a), sizeof(u32));

      if ((id < NLNH_ID_BASE) || (id - NLNH_ID_BASE >= NLNH_IDS))
	continue;

      if (nlnh_ntaken == max)
      {
	max = MAX(2 * max, 256);
	nlnh_taken = nlnh_realloc(nlnh_pool, nlnh_taken, max * sizeof(u32));
	nlnh_leftover = nlnh_realloc(nlnh_pool, nlnh_leftover, max * sizeof(u32));
      }

      nlnh_taken[nlnh_ntaken++] = id;
      if (m->protocol == RTPROT_BIRD)
	nlnh_leftover[nlnh_nleftover++] = id;
    }
  }

  mb_free(buf);
  close(fd);

  if (nlnh_ntaken)
    qsort(nlnh_taken, nlnh_ntaken, sizeof(u32), nlnh_cmp_u32);

  return err;
}

/**
 * nlnh_start - a kernel protocol with batched writes starts
 *
 * The first one reads the kernel's objects (nlnh_read_kernel()). Returns
 * whether the kernel has objects.
 */
int
nlnh_start(void)
{
  if (nlnh_users++)
    return nlnh_have;

  nlnh_pool = rp_new(krt_pool, "Kernel next-hop objects");
  HASH_INIT(nlnh_hash, nlnh_pool, 6);
  init_list(&nlnh_ops);
  init_list(&nlnh_retired);
  nlnh_by_id = NULL;
  nlnh_free_ids = nlnh_taken = nlnh_leftover = NULL;
  nlnh_ids = nlnh_id_max = nlnh_nfree = nlnh_ntaken = nlnh_nleftover = 0;
  nlnh_failed = 0;

  int err = nlnh_read_kernel();
  nlnh_have = !err;

  if (err)
    log(L_INFO "KRT: Kernel has no next-hop objects (%s)", strerror(-err));
  else if (nlnh_nleftover)
    log(L_INFO "KRT: %u next-hop objects of an earlier run, deleted when the first scans are done",
	nlnh_nleftover);

  return nlnh_have;
}

/**
 * nlnh_stop - a kernel protocol with batched writes has stopped
 *
 * When the last one has, the table is forgotten; the kernel keeps what is
 * left of the objects for the next run, which deletes them (routes that
 * persist may name them).
 */
void
nlnh_stop(void)
{
  if (--nlnh_users)
    return;

  rfree(nlnh_pool);
  nlnh_pool = NULL;
  nlnh_have = 0;
}

/**
 * nlnh_available - may routes be written with objects now?
 */
int
nlnh_available(void)
{
  return nlnh_have && !nlnh_failed;
}

/**
 * nlnh_routes_new - the per-route record of a kernel protocol
 * @p: the protocol's pool
 */
struct nlnh_routes *
nlnh_routes_new(pool *p)
{
  struct nlnh_routes *r = mb_allocz(p, sizeof(struct nlnh_routes));
  r->pool = p;
  return r;
}

/**
 * nlnh_routes_free - a kernel protocol stops: its routes let go of their objects
 * @r: its record
 */
void
nlnh_routes_free(struct nlnh_routes *r)
{
  if (nlnh_pool)
    for (u32 i = 0; i < r->size; i++)
      if (r->id[i])
      {
	struct nlnh *o = nlnh_find_id(r->id[i]);
	if (o)
	  nlnh_put(o);
      }

  mb_free(r->id);
  mb_free(r);
}


/*
 *	Routes
 */

/* The object route @id was written with, forgotten */
static struct nlnh *
nlnh_take(struct nlnh_routes *r, u32 id)
{
  if (!id || (id >= r->size) || !r->id[id])
    return NULL;

  struct nlnh *o = nlnh_find_id(r->id[id]);
  r->id[id] = 0;
  r->via--;
  return o;
}

static void
nlnh_set(struct nlnh_routes *r, u32 id, struct nlnh *o)
{
  if (id >= r->size)
  {
    u32 n = MAX(r->size * 2, 1024);
    while (n <= id)
      n *= 2;
    r->id = nlnh_realloc(r->pool, r->id, n * sizeof(u32));
    memset(r->id + r->size, 0, (n - r->size) * sizeof(u32));
    r->size = n;
  }

  r->id[id] = o->id;
  r->via++;
}

/* The set of a route's next hops: 0, -1 not through an object, -2 too many next hops */
static int
nlnh_key_of(struct nlnh_key *k, int af, rte *e)
{
  rta *a = e->attrs;

  if ((a->dest != RTD_UNICAST) ||
      ea_find(a->eattrs, EA_KRT_REALM) || ea_find(a->eattrs, EA_KRT_SCOPE))
    return -1;

  k->af = af;
  k->pad = 0;
  k->paths = 0;

  for (struct nexthop *nh = &a->nh; nh; nh = nh->next)
  {
    if (nh->labels || !nh->iface)
      return -1;

    if (k->paths == NLNH_PATHS_MAX)
      return -2;

    struct nlnh_path *q = &k->path[k->paths++];
    memset(q, 0, sizeof(*q));
    q->gw = nh->gw;
    q->ifindex = nh->iface->index;
    q->weight = nh->weight;
    q->onlink = !!(nh->flags & RNF_ONLINK);
  }

  if (k->paths == 1)
  {
    k->path[0].weight = 0;
    return 0;
  }

  /*
   * A group names each member once (two paths differing in weight alone
   * would be one member twice), and kernels before 6.12 take weights up to
   * 255 (BIRD's 254)
   */
  for (uint i = 0; i < k->paths; i++)
  {
    if (k->path[i].weight == 255)
      return -1;

    for (uint j = 0; j < i; j++)
      if (ipa_equal(k->path[i].gw, k->path[j].gw) && (k->path[i].ifindex == k->path[j].ifindex) &&
	  (k->path[i].onlink == k->path[j].onlink))
	return -1;
  }

  return 0;
}

/**
 * nlnh_route - a route change, for the objects
 * @r: the protocol's record
 * @af: the protocol's family
 * @use: whether the protocol writes with objects
 * @new: the route to be in the kernel, or %NULL
 * @old: the route the kernel has, or %NULL (may be a kernel route of a scan)
 *
 * The set of @new is held (its object created if it is new) and the object
 * the replaced route was written with let go. Returns the id of the object
 * @new is to be written with, 0: the old way.
 */
u32
nlnh_route(struct nlnh_routes *r, int af, int use, rte *new, rte *old)
{
  struct nlnh *prev = NULL, *prev2 = NULL, *o = NULL;

  if (!nlnh_pool)
    return 0;

  if (old)
    prev = nlnh_take(r, old->id);
  if (new && (!old || (new->id != old->id)))
    prev2 = nlnh_take(r, new->id);

  if (new && use && nlnh_available())
  {
    struct nlnh_key *k = alloca(sizeof(struct nlnh_key) + NLNH_PATHS_MAX * sizeof(struct nlnh_path));
    int res = nlnh_key_of(k, af, new);

    if (!res && (o = nlnh_get(k)))
      nlnh_set(r, new->id, o);
    else if (res == -2)
      r->too_many++;
    else
      r->other++;
  }

  /* After the hold: a set that stays is not retired for a moment */
  if (prev)
    nlnh_put(prev);
  if (prev2)
    nlnh_put(prev2);

  return o ? o->id : 0;
}

/**
 * nlnh_route_size - buffer size nlnh_route_msg() needs
 * @m: the route message
 */
uint
nlnh_route_size(const struct nlmsghdr *m)
{
  return NLMSG_ALIGN(m->nlmsg_len) + RTA_SPACE(sizeof(u32));
}

/**
 * nlnh_route_msg - the route message, naming an object for its next hops
 * @m: the message stock's builder made (RTM_NEWROUTE)
 * @id: the object
 * @buf: nlnh_route_size() bytes
 *
 * Everything but the next hops is kept as stock built it.
 */
struct nlmsghdr *
nlnh_route_msg(const struct nlmsghdr *m, u32 id, void *buf)
{
  struct nlmsghdr *h = buf;
  uint hl = NLMSG_LENGTH(sizeof(struct rtmsg));
  memcpy(h, m, hl);

  struct rtmsg *rm = NLMSG_DATA(h);
  rm->rtm_flags &= ~RTNH_F_ONLINK;

  const struct rtattr *a = (const void *) ((const byte *) m + NLMSG_ALIGN(hl));
  int alen = m->nlmsg_len - NLMSG_ALIGN(hl);
  uint len = NLMSG_ALIGN(hl);

  for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
    switch (a->rta_type)
    {
    case RTA_OIF:
    case RTA_GATEWAY:
    case RTA_VIA:
    case RTA_MULTIPATH:
      break;

    default:
      memcpy((byte *) h + len, a, a->rta_len);
      len += RTA_ALIGN(a->rta_len);
    }

  struct rtattr *n = (void *) ((byte *) h + len);
  n->rta_type = NLNH_RTA_NH_ID;
  n->rta_len = RTA_LENGTH(sizeof(u32));
  memcpy(RTA_DATA(n), &id, sizeof(u32));
  len += RTA_SPACE(sizeof(u32));

  h->nlmsg_len = len;
  return h;
}

/**
 * nlnh_current - is a scanned route written the way this run writes it?
 * @r: the protocol's record
 * @e: BIRD's route of the network
 * @nhid: the object the kernel's route names, 0: none
 *
 * A kernel route is in sync only if it names the object BIRD wrote it with
 * (or none, written the old way): a route of an earlier run, or one naming
 * an object that was lost, is rewritten.
 */
int
nlnh_current(struct nlnh_routes *r, rte *e, u32 nhid)
{
  u32 mine = (r && e->id < r->size) ? r->id[e->id] : 0;

  if (mine != nhid)
    return 0;

  if (!mine)
    return 1;

  struct nlnh *o = nlnh_find_id(mine);
  return o && (o->state == NLNH_LIVE);
}


/*
 *	Operations in batches
 */

/**
 * nlnh_pending - the next object operation to send
 * @op: its operation (enum nlnh_op)
 *
 * Returns the object, or %NULL when none is waiting.
 */
struct nlnh *
nlnh_pending(uint *op)
{
  if (!nlnh_pool || EMPTY_LIST(nlnh_ops))
    return NULL;

  struct nlnh *o = SKIP_BACK(struct nlnh, n, HEAD(nlnh_ops));
  *op = o->op;
  return o;
}

static void
nlnh_add_attr(struct nlmsghdr *h, uint type, const void *data, uint len)
{
  struct rtattr *a = (void *) ((byte *) h + NLMSG_ALIGN(h->nlmsg_len));
  a->rta_type = type;
  a->rta_len = RTA_LENGTH(len);
  memcpy(RTA_DATA(a), data, len);
  h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/**
 * nlnh_msg - the message of an object operation
 * @o: the object
 * @op: the operation
 * @buf: where to build it
 * @size: bytes at @buf
 *
 * Returns the message's length, 0 when it does not fit. The flags are the
 * request's; the caller sets the sequence number and the ACK.
 */
uint
nlnh_msg(struct nlnh *o, uint op, void *buf, uint size)
{
  const struct nlnh_key *k = &o->key;
  uint need = NLMSG_LENGTH(sizeof(struct nlnh_nhmsg)) + 3 * RTA_SPACE(sizeof(u32)) +
    RTA_SPACE(sizeof(ip6_addr)) + RTA_SPACE(k->paths * sizeof(struct nlnh_grp));

  if (need > size)
    return 0;

  struct nlmsghdr *h = buf;
  memset(h, 0, NLMSG_LENGTH(sizeof(struct nlnh_nhmsg)));
  h->nlmsg_len = NLMSG_LENGTH(sizeof(struct nlnh_nhmsg));
  struct nlnh_nhmsg *m = NLMSG_DATA(h);

  if (op == NLNH_DELETE)
  {
    h->nlmsg_type = NLNH_RTM_DELNEXTHOP;
    h->nlmsg_flags = NLM_F_REQUEST;
    m->family = AF_UNSPEC;
    nlnh_add_attr(h, NHA_ID_, &o->id, sizeof(u32));
    return h->nlmsg_len;
  }

  h->nlmsg_type = NLNH_RTM_NEWNEXTHOP;
  h->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | (o->replace ? NLM_F_REPLACE : NLM_F_EXCL);
  m->protocol = RTPROT_BIRD;
  nlnh_add_attr(h, NHA_ID_, &o->id, sizeof(u32));

  if (k->paths > 1)
  {
    struct nlnh_grp *g = alloca(k->paths * sizeof(struct nlnh_grp));
    memset(g, 0, k->paths * sizeof(struct nlnh_grp));
    for (uint i = 0; i < k->paths; i++)
    {
      g[i].id = o->member[i]->id;
      g[i].weight = k->path[i].weight;
    }

    m->family = AF_UNSPEC;
    nlnh_add_attr(h, NHA_GROUP_, g, k->paths * sizeof(struct nlnh_grp));
    return h->nlmsg_len;
  }

  const struct nlnh_path *q = &k->path[0];
  nlnh_add_attr(h, NHA_OIF_, &q->ifindex, sizeof(u32));

  if (ipa_zero(q->gw))
    m->family = k->af;
  else if (ipa_is_ip4(q->gw))
  {
    ip4_addr g = ip4_hton(ipa_to_ip4(q->gw));
    m->family = AF_INET;
    nlnh_add_attr(h, NHA_GATEWAY_, &g, sizeof(g));
  }
  else
  {
    ip6_addr g = ip6_hton(ipa_to_ip6(q->gw));
    m->family = AF_INET6;
    nlnh_add_attr(h, NHA_GATEWAY_, &g, sizeof(g));
  }

  if (q->onlink)
    m->flags |= RTNH_F_ONLINK;

  return h->nlmsg_len;
}

/**
 * nlnh_sent - an object operation has been put into a batch
 * @o: the object
 * @op: the operation
 */
void
nlnh_sent(struct nlnh *o, uint op)
{
  rem_node(&o->n);
  o->op = 0;

  if (op == NLNH_CREATE)
    o->state = NLNH_LIVE;
  else
  {
    /* A set wanted from now on gets a new object */
    HASH_REMOVE2(nlnh_hash, NLNH, nlnh_pool, o);
    o->state = NLNH_GOING;
  }
}

/**
 * nlnh_done - the kernel's answer to an object operation
 * @o: the object
 * @op: the operation
 * @err: 0, an errno, or -1: the answer was lost
 *
 * Returns %NLNH_RESYNC when the kernel refused to create an object: objects
 * are off from now on and the routes written with one have to be rewritten.
 */
int
nlnh_done(struct nlnh *o, uint op, int err)
{
  /* Nothing reached the kernel, or the answer was lost: once more */
  if ((err < 0) || (err == EAGAIN) || (err == EWOULDBLOCK) || (err == ENOBUFS) || (err == ENOMEM))
  {
    /* Nobody holds it any more: it may be there, the sweep deletes it */
    if ((op == NLNH_CREATE) && o->retired)
      return 0;

    if (op == NLNH_CREATE)
    {
      o->state = NLNH_NEW;
      o->replace = 1;
    }
    nlnh_queue(o, op);
    return 0;
  }

  if (op == NLNH_DELETE)
  {
    /* ENOENT: it was gone already; otherwise the next run tries again */
    if (err && (err != ENOENT))
      log_rl(&nlnh_rl, L_WARN "KRT: Cannot delete next-hop object %u: %s", o->id, strerror(err));
    else
      nlnh_deleted++;

    nlnh_free(o);
    return 0;
  }

  if (!err)
  {
    /* Any later creation restores it */
    o->replace = 1;
    nlnh_created++;
    return 0;
  }

  o->state = NLNH_NEW;
  if (nlnh_failed)
    return 0;

  /* Restoring one that was there: the scan that follows tries again */
  if (o->replace)
  {
    char buf[64];
    log_rl(&nlnh_rl, L_WARN "KRT: Cannot restore next-hop object %s: %s",
	   nlnh_name(o, buf, sizeof(buf)), strerror(err));
    return 0;
  }

  nlnh_failed = 1;
  char buf[64];
  if (err > 0)
    log(L_WARN "KRT: Kernel refused next-hop object %s: %s; routes are written the old way from now on",
	nlnh_name(o, buf, sizeof(buf)), strerror(err));
  else
    log(L_WARN "KRT: Answer to creating next-hop object %s lost; routes are written the old way from now on",
	nlnh_name(o, buf, sizeof(buf)));
  return NLNH_RESYNC;
}

/**
 * nlnh_name - an object for log messages
 * @o: the object
 * @buf: buffer
 * @size: its size
 */
const char *
nlnh_name(struct nlnh *o, char *buf, uint size)
{
  if (o->key.paths > 1)
    bsnprintf(buf, size, "%u (group of %u)", o->id, o->key.paths);
  else if (ipa_nonzero(o->key.path[0].gw))
    bsnprintf(buf, size, "%u (via %I)", o->id, o->key.path[0].gw);
  else
    bsnprintf(buf, size, "%u (device)", o->id);
  return buf;
}

/**
 * nlnh_sweep - delete objects nobody has held for a while
 * @now: current time
 *
 * Called when no route write is pending or with the kernel, so the routes
 * that named a retired object have been rewritten, and at least once every
 * kernel protocol has finished its first scan: then also the objects of an
 * earlier run go. Returns 1 while retired objects wait for their time.
 */
int
nlnh_sweep(btime now)
{
  if (!nlnh_pool)
    return 0;

  while (!EMPTY_LIST(nlnh_retired))
  {
    struct nlnh *o = SKIP_BACK(struct nlnh, n, HEAD(nlnh_retired));
    if (o->since + NLNH_KEEP > now)
      break;

    rem_node(&o->n);
    o->retired = 0;

    if (o->state == NLNH_LIVE)
      nlnh_queue(o, NLNH_DELETE);
    else
      nlnh_free(o);
  }

  return !EMPTY_LIST(nlnh_retired);
}

/**
 * nlnh_leftovers - delete the objects of an earlier run
 *
 * Called once every kernel protocol has finished its first scan, with no
 * route write pending: the routes that named them have been rewritten.
 * Returns the number of deletions queued.
 */
uint
nlnh_leftovers(void)
{
  uint n = nlnh_nleftover;

  for (uint i = 0; i < n; i++)
  {
    /* A record of its own, never in the hash */
    struct nlnh *o = mb_allocz(nlnh_pool, sizeof(struct nlnh) + sizeof(struct nlnh_path));
    o->id = nlnh_leftover[i];
    o->state = NLNH_GOING;
    o->key.paths = 1;
    o->op = NLNH_DELETE;
    add_tail(&nlnh_ops, &o->n);
  }

  nlnh_nleftover = 0;
  return n;
}

/* Create @o again as it was, unless that is queued already */
static void
nlnh_restore(struct nlnh *o)
{
  /* Retired: deleted soon anyway */
  if ((o->state != NLNH_LIVE) || o->op || o->retired)
    return;

  nlnh_restored++;
  o->replace = 1;
  nlnh_queue(o, NLNH_CREATE);
}

/**
 * nlnh_lost - an object was deleted or changed behind BIRD's back
 * @id: its id
 *
 * Ours is created again as it was (groups containing a lost member too: the
 * kernel took the member out of them). The kernel has removed the routes
 * naming a deleted object without telling anybody: the caller scans again.
 * Returns 1 if the object was ours.
 */
int
nlnh_lost(u32 id)
{
  struct nlnh *o = nlnh_pool ? nlnh_find_id(id) : NULL;

  if (!o || o->op || o->retired || (o->state == NLNH_GOING))
    return 0;

  /* Its restoration failed earlier: once more (a group's members first) */
  if (o->state == NLNH_NEW)
  {
    if (nlnh_failed)
      return 0;
    if (o->member)
      for (uint i = 0; i < o->key.paths; i++)
	if ((o->member[i]->state == NLNH_NEW) && !o->member[i]->op)
	  nlnh_queue(o->member[i], NLNH_CREATE);
    nlnh_queue(o, NLNH_CREATE);
    return 1;
  }

  /* A group's members first: one of them may be what is gone */
  if (o->member)
    for (uint i = 0; i < o->key.paths; i++)
      nlnh_restore(o->member[i]);

  nlnh_restore(o);

  if (o->key.paths == 1)
    HASH_WALK(nlnh_hash, next, g)
      if (g->member && (g->state == NLNH_LIVE) && !g->op)
	for (uint i = 0; i < g->key.paths; i++)
	  if (g->member[i] == o)
	  {
	    nlnh_restore(g);
	    break;
	  }
    HASH_WALK_END;

  return 1;
}


/* Has @o a next hop through interface @ifindex? */
static int
nlnh_uses(struct nlnh *o, u32 ifindex)
{
  for (uint i = 0; i < o->key.paths; i++)
    if (o->key.path[i].ifindex == ifindex)
      return 1;
  return 0;
}

/**
 * nlnh_link - an interface went down or came up
 * @ifindex: the interface
 * @up: whether it is up and has carrier now
 *
 * The kernel deletes the objects through an interface that goes down or
 * loses carrier, and the routes naming them, and tells nobody (routes
 * written the old way stay, marked linkdown). So ours through it are taken
 * for gone, and when it is back they are created again, and the groups they
 * are members of replaced; the caller scans the tables again. Returns 1 when
 * something was queued.
 */
int
nlnh_link(u32 ifindex, int up)
{
  int queued = 0;

  if (!nlnh_pool)
    return 0;

  HASH_WALK(nlnh_hash, next, o)
    if (!o->member && nlnh_uses(o, ifindex))
    {
      if (!up && (o->state == NLNH_LIVE) && (o->op != NLNH_DELETE))
      {
	if (o->op)
	  rem_node(&o->n);
	o->op = 0;
	o->state = NLNH_NEW;
	o->replace = 1;
      }
      else if (up && (o->state == NLNH_NEW) && !o->op && !o->retired && !nlnh_failed)
      {
	nlnh_restored++;
	nlnh_queue(o, NLNH_CREATE);
	queued = 1;
      }
    }
  HASH_WALK_END;

  /* Groups after their members; the kernel took those members out of them */
  if (queued)
    HASH_WALK(nlnh_hash, next, g)
      if (g->member && nlnh_uses(g, ifindex) && (g->state == NLNH_LIVE) && !g->op && !g->retired)
      {
	g->replace = 1;
	nlnh_queue(g, NLNH_CREATE);
      }
    HASH_WALK_END;

  return queued;
}


/*
 *	CLI
 */

/**
 * nlnh_show - the objects in `show protocols all`
 * @r: the protocol's record, or %NULL
 */
void
nlnh_show(struct nlnh_routes *r)
{
  if (!r)
    return;

  if (!nlnh_have || nlnh_failed)
  {
    cli_msg(-1006, "  Next-hop objects: off (%s)", nlnh_failed ? "the kernel refused one" : "the kernel has none");
    return;
  }

  cli_msg(-1006, "  Next-hop objects: %u routes via objects, %lu written the old way (%lu: more than %u next hops)",
	  r->via, r->too_many + r->other, r->too_many, NLNH_PATHS_MAX);
  uint live = 0;
  HASH_WALK(nlnh_hash, next, o)
    live += (o->state == NLNH_LIVE) && !o->op;
  HASH_WALK_END;

  cli_msg(-1006, "  Objects:          %u in the kernel, %u sets, %lu created, %lu deleted, %lu restored",
	  live, nlnh_hash.count, nlnh_created, nlnh_deleted, nlnh_restored);
}
