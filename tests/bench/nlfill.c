/*
 *	bloombird -- the kernel's own time for a full table (no bird)
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 *
 * The floor under any kernel sync: the routes bird would install, written
 * by the cheapest client there is, batches of RTM_NEWROUTEs in one
 * sendmsg() each, acknowledged with NETLINK_CAP_ACK (so the answers are
 * small) and read after each batch, and then deleted the same way. The
 * routes carry what bird's carry in the benchmark rig: kernel table,
 * protocol "bird" (12), metric 32, and their next hops.
 *
 *   nlfill [-k K] [-objects] [-pause] [-print] FAMILY TABLE GATEWAY IFNAME PREFIXES [BATCH]
 *
 * FAMILY 4 or 6; PREFIXES: a file with one prefix per line, in the order to
 * write them (anything after the prefix length on a line is ignored); BATCH
 * messages per sendmsg(), 512 by default. Prints
 *
 *   add_s A del_s D routes N failed F
 *
 * (seconds of the route adds and of the route deletes, wall clock) and exits
 * 1 if any write failed.
 *
 * Next hops. Without -k every route has one next hop, GATEWAY on IFNAME.
 * With -k K (1..32) every route has K next hops, weight 1 each, taken from a
 * pool of 32 gateways on IFNAME: GATEWAY, GATEWAY + 1, ..., GATEWAY + 31
 * (address arithmetic; GATEWAY 10.255.0.1 gives .1 to .32, which must lie in
 * a subnet connected on IFNAME). Which ones is a function of the prefix
 * alone, so that a bird configuration can carry the same sets (see
 * ecmp-sets.py, which must stay identical to nh_set() below):
 *
 *   h     = FNV-1a, 32 bits, over the prefix's address in network order
 *           (4 or 16 bytes, as written in the file) and then its length
 *           (one byte)
 *   s     = h mod 64                          (NSETS = 64 set indices)
 *   start = s mod 32, step = 1 + 2 * (s div 32)   (1 or 3, odd: no repeats)
 *   set   = pool members (start + j * step) mod 32, j = 0 .. K-1, as a set
 *           (sorted by pool index; routes whose sets are equal share one)
 *
 * Two ways of writing the next hops:
 *
 *   default   in each route: RTA_GATEWAY + RTA_OIF for one next hop,
 *             RTA_MULTIPATH (an rtnexthop with RTA_GATEWAY per member,
 *             rtnh_hops = weight - 1) for several
 *   -objects  nexthop objects first (RTM_NEWNEXTHOP, protocol bird, batched
 *             like the routes): one per pool member in use, NHA_GATEWAY +
 *             NHA_OIF, id 0x0b1d0001 + pool index; with K > 1 one group per
 *             distinct set, NHA_GROUP (id, weight - 1 each), id 0x0b1d0100 +
 *             the set's number in order of first use. The routes then carry
 *             RTA_NH_ID only (the member's id with one next hop, the group's
 *             with several). After the route deletes, the objects are
 *             deleted (groups first). The line printed gets
 *             " nh_add_s A nh_del_s D objects N" appended (seconds of the
 *             object adds and deletes, how many objects).
 *
 * -pause: once everything is written, nlfill stops itself (SIGSTOP) before
 * deleting, so that the caller can read the kernel's memory with the table
 * in; SIGCONT lets it go on. -print: writes nothing to the kernel, prints
 * the route of each prefix as a bird static route ("route P via G1 via
 * G2 ...;", the members in pool order) and the number of distinct sets on
 * stderr; IFNAME is not looked up.
 *
 * Build: cc -O2 -Wall -o nlfill nlfill.c
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define RTPROT_BIRD_	12
#define METRIC		32
#define POOL		32		/* gateways GATEWAY .. GATEWAY + 31 */
#define NSETS		64		/* set indices of the prefixes */
#define NH_ID_BASE	0x0b1d0000u	/* + 1 + pool index: one next hop */
#define NH_GROUP_BASE	(NH_ID_BASE + 0x100)	/* + set number: a group */

struct route {
  unsigned char a[16];
  unsigned char len;
  unsigned char set;			/* distinct set number */
};

struct nhset {
  unsigned char n, m[POOL];		/* pool indices, ascending */
};

static int fam, af, alen, ifindex, paths, objects;
static unsigned table, msg_max;
static unsigned char pool[POOL][16];
static struct nhset sets[NSETS];
static unsigned nsets;
static int pool_used[POOL];

static void
die(const char *m)
{
  perror(m);
  exit(2);
}

static double
now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static unsigned
number(const char *s, unsigned min, unsigned max, const char *what)
{
  char *e;
  errno = 0;
  unsigned long v = strtoul(s, &e, 10);
  if (errno || e == s || *e || v < min || v > max)
  {
    fprintf(stderr, "nlfill: bad %s %s (%u..%u)\n", what, s, min, max);
    exit(2);
  }
  return v;
}

/* The set of next hops (pool indices, ascending) of a prefix, with @k paths */
static struct nhset
nh_set(const struct route *r, int k)
{
  uint32_t h = 2166136261u;
  for (int i = 0; i < alen; i++)
    h = (h ^ r->a[i]) * 16777619u;
  h = (h ^ r->len) * 16777619u;

  unsigned s = h % NSETS, start = s % POOL, step = 1 + 2 * (s / POOL);
  int in[POOL] = { 0 };
  for (int j = 0; j < k; j++)
    in[(start + j * step) % POOL] = 1;

  struct nhset n = { 0 };
  for (int i = 0; i < POOL; i++)
    if (in[i])
      n.m[n.n++] = i;
  return n;
}

/* The distinct set number of @n, a new one if it is new */
static unsigned
set_number(const struct nhset *n)
{
  for (unsigned i = 0; i < nsets; i++)
    if (sets[i].n == n->n && !memcmp(sets[i].m, n->m, n->n))
      return i;
  sets[nsets] = *n;			/* at most NSETS distinct ones */
  for (int i = 0; i < n->n; i++)
    pool_used[n->m[i]] = 1;
  return nsets++;
}

static void
attr(struct nlmsghdr *h, unsigned short type, const void *data, unsigned short len)
{
  struct rtattr *a = (struct rtattr *) ((char *) h + NLMSG_ALIGN(h->nlmsg_len));
  a->rta_type = type;
  a->rta_len = RTA_LENGTH(len);
  memcpy(RTA_DATA(a), data, len);
  h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* The id of the object that route set @s refers to */
static uint32_t
set_id(unsigned s)
{
  return sets[s].n == 1 ? NH_ID_BASE + 1 + sets[s].m[0] : NH_GROUP_BASE + s;
}

/* One route message at @buf; returns its length */
static unsigned
route_msg(char *buf, const struct route *r, int add, unsigned seq)
{
  struct nlmsghdr *h = (struct nlmsghdr *) buf;
  memset(buf, 0, msg_max);
  h->nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
  h->nlmsg_type = add ? RTM_NEWROUTE : RTM_DELROUTE;
  h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0);
  h->nlmsg_seq = seq;

  struct rtmsg *m = NLMSG_DATA(h);
  m->rtm_family = af;
  m->rtm_dst_len = r->len;
  m->rtm_table = table < 256 ? table : RT_TABLE_UNSPEC;
  m->rtm_protocol = RTPROT_BIRD_;
  m->rtm_scope = RT_SCOPE_UNIVERSE;
  m->rtm_type = RTN_UNICAST;

  unsigned metric = METRIC, oif = ifindex;
  const struct nhset *n = &sets[r->set];
  attr(h, RTA_DST, r->a, alen);
  attr(h, RTA_TABLE, &table, 4);
  attr(h, RTA_PRIORITY, &metric, 4);
  if (!add)
    return NLMSG_ALIGN(h->nlmsg_len);

  if (objects)
  {
    uint32_t id = set_id(r->set);
    attr(h, RTA_NH_ID, &id, 4);
  }
  else if (n->n == 1)
  {
    attr(h, RTA_GATEWAY, pool[n->m[0]], alen);
    attr(h, RTA_OIF, &oif, 4);
  }
  else
  {
    /* RTA_MULTIPATH: rtnexthops, each with its RTA_GATEWAY */
    struct rtattr *mp = (struct rtattr *) ((char *) h + NLMSG_ALIGN(h->nlmsg_len));
    mp->rta_type = RTA_MULTIPATH;
    unsigned len = RTA_LENGTH(0);
    for (int i = 0; i < n->n; i++)
    {
      struct rtnexthop *nh = (struct rtnexthop *) ((char *) mp + len);
      nh->rtnh_len = RTNH_LENGTH(RTA_LENGTH(alen));
      nh->rtnh_flags = 0;
      nh->rtnh_hops = 0;		/* weight 1 */
      nh->rtnh_ifindex = ifindex;
      struct rtattr *g = RTNH_DATA(nh);
      g->rta_type = RTA_GATEWAY;
      g->rta_len = RTA_LENGTH(alen);
      memcpy(RTA_DATA(g), pool[n->m[i]], alen);
      len += RTNH_ALIGN(nh->rtnh_len);
    }
    mp->rta_len = len;
    h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(len);
  }
  return NLMSG_ALIGN(h->nlmsg_len);
}

/* One nexthop object message at @buf; object @i of the list: pool members
 * in use first (i < POOL, by pool index), then the groups (POOL + set) */
static unsigned
nh_msg(char *buf, unsigned i, int add, unsigned seq)
{
  struct nlmsghdr *h = (struct nlmsghdr *) buf;
  memset(buf, 0, msg_max);
  h->nlmsg_len = NLMSG_LENGTH(sizeof(struct nhmsg));
  h->nlmsg_type = add ? RTM_NEWNEXTHOP : RTM_DELNEXTHOP;
  h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0);
  h->nlmsg_seq = seq;

  struct nhmsg *m = NLMSG_DATA(h);
  m->nh_family = i < POOL ? af : AF_UNSPEC;	/* groups: no family */
  m->nh_protocol = add ? RTPROT_BIRD_ : 0;	/* deletes: id alone */

  uint32_t id = i < POOL ? NH_ID_BASE + 1 + i : NH_GROUP_BASE + (i - POOL);
  attr(h, NHA_ID, &id, 4);
  if (!add)
    return NLMSG_ALIGN(h->nlmsg_len);

  if (i < POOL)
  {
    unsigned oif = ifindex;
    attr(h, NHA_GATEWAY, pool[i], alen);
    attr(h, NHA_OIF, &oif, 4);
  }
  else
  {
    const struct nhset *n = &sets[i - POOL];
    struct nexthop_grp g[POOL];
    memset(g, 0, sizeof(g));
    for (int j = 0; j < n->n; j++)
      g[j].id = NH_ID_BASE + 1 + n->m[j];	/* weight 1: 0 in the message */
    attr(h, NHA_GROUP, g, n->n * sizeof(g[0]));
  }
  return NLMSG_ALIGN(h->nlmsg_len);
}

/* Messages of a pass: route @i, or object number @i of the list */
struct pass {
  const struct route *r;
  const unsigned *obj;
  int add;
};

static unsigned
pass_msg(const struct pass *p, char *buf, unsigned i, unsigned seq)
{
  return p->r ? route_msg(buf, &p->r[i], p->add, seq) : nh_msg(buf, p->obj[i], p->add, seq);
}

/* Write all @n messages of @p, @batch per sendmsg(); failures */
static unsigned
pass(int fd, const struct pass *p, unsigned n, unsigned batch)
{
  char *buf = malloc((size_t) batch * msg_max), rx[65536];
  unsigned failed = 0, seq = 1;
  if (!buf)
    die("malloc");

  for (unsigned i = 0; i < n; i += batch)
  {
    unsigned k = n - i < batch ? n - i : batch, len = 0;
    for (unsigned j = 0; j < k; j++)
      len += pass_msg(p, buf + len, i + j, seq++);
    if (send(fd, buf, len, 0) != (ssize_t) len)
      die("send");

    /* One acknowledgement per message */
    for (unsigned acks = 0; acks < k; )
    {
      ssize_t got = recv(fd, rx, sizeof(rx), 0);
      if (got < 0)
      {
	if (errno == EINTR)
	  continue;
	die("recv");
      }
      for (struct nlmsghdr *h = (struct nlmsghdr *) rx; NLMSG_OK(h, (unsigned) got); h = NLMSG_NEXT(h, got))
	if (h->nlmsg_type == NLMSG_ERROR)
	{
	  struct nlmsgerr *e = NLMSG_DATA(h);
	  if (e->error && !failed++)
	    fprintf(stderr, "nlfill: %s%s refused: %s\n", p->add ? "add" : "delete",
		    p->r ? "" : " of a nexthop object", strerror(-e->error));
	  acks++;
	}
    }
  }

  free(buf);
  return failed;
}

/* @base + @i in network order, @alen bytes */
static void
addr_add(unsigned char *dst, const unsigned char *base, unsigned i)
{
  memcpy(dst, base, alen);
  for (int b = alen - 1; b >= 0 && i; b--)
  {
    unsigned v = dst[b] + (i & 0xff);
    dst[b] = v;
    i = (i >> 8) + (v >> 8);
  }
}

static void
usage(void)
{
  fprintf(stderr, "usage: nlfill [-k K] [-objects] [-pause] [-print] 4|6 TABLE GATEWAY IFNAME PREFIXES [BATCH]\n");
  exit(2);
}

int
main(int argc, char **argv)
{
  int pause_ = 0, print = 0;
  int a = 1;
  for (; a < argc && argv[a][0] == '-'; a++)
    if (!strcmp(argv[a], "-k") && a + 1 < argc)
      paths = number(argv[++a], 1, POOL, "path count");
    else if (!strcmp(argv[a], "-objects"))
      objects = 1;
    else if (!strcmp(argv[a], "-pause"))
      pause_ = 1;
    else if (!strcmp(argv[a], "-print"))
      print = 1;
    else
      usage();
  argc -= a - 1;
  argv += a - 1;
  if (argc < 6 || argc > 7)
    usage();

  if (strcmp(argv[1], "4") && strcmp(argv[1], "6"))
    usage();
  fam = atoi(argv[1]);
  af = fam == 6 ? AF_INET6 : AF_INET;
  alen = fam == 6 ? 16 : 4;
  table = number(argv[2], 1, 0xffffffffu, "table");
  unsigned batch = argc > 6 ? number(argv[6], 1, 65536, "batch") : 512;
  unsigned char gw[16];
  if (inet_pton(af, argv[3], gw) != 1)
  {
    fprintf(stderr, "nlfill: bad gateway %s\n", argv[3]);
    return 2;
  }
  for (int i = 0; i < POOL; i++)
    addr_add(pool[i], gw, i);
  if (!print && !(ifindex = if_nametoindex(argv[4])))
    die(argv[4]);

  /* rtmsg and 3 attributes, then up to POOL rtnexthops with a gateway */
  msg_max = 128 + (paths ? paths : 1) * (sizeof(struct rtnexthop) + RTA_LENGTH(16));

  FILE *f = fopen(argv[5], "r");
  if (!f)
    die(argv[5]);
  unsigned n = 0, cap = 1 << 16;
  struct route *r = malloc(cap * sizeof(*r));
  char line[256];
  while (r && fgets(line, sizeof(line), f))
  {
    char *s = strchr(line, '/');
    if (!s)
      continue;
    *s++ = 0;
    if (n == cap && !(r = realloc(r, (cap *= 2) * sizeof(*r))))
      break;
    memset(&r[n], 0, sizeof(r[n]));
    if (inet_pton(af, line, r[n].a) != 1)
    {
      fprintf(stderr, "nlfill: bad prefix %s\n", line);
      return 2;
    }
    int len = atoi(s);
    if (len < 0 || len > alen * 8)
    {
      fprintf(stderr, "nlfill: bad prefix length %s/%d\n", line, len);
      return 2;
    }
    r[n].len = len;
    struct nhset ns = { 1, { 0 } };	/* without -k: GATEWAY alone */
    if (paths)
      ns = nh_set(&r[n], paths);
    r[n].set = set_number(&ns);
    n++;
  }
  if (!r)
    die("malloc");
  fclose(f);

  if (print)
  {
    char p[INET6_ADDRSTRLEN];
    for (unsigned i = 0; i < n; i++)
    {
      inet_ntop(af, r[i].a, p, sizeof(p));
      printf("route %s/%u", p, r[i].len);
      for (int j = 0; j < sets[r[i].set].n; j++)
      {
	inet_ntop(af, pool[sets[r[i].set].m[j]], p, sizeof(p));
	printf(" via %s", p);
      }
      printf(";\n");
    }
    fprintf(stderr, "nlfill: %u prefixes, %u distinct sets of next hops\n", n, nsets);
    return 0;
  }

  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  int one = 1, buf = 4 << 20;
  if (fd < 0)
    die("socket");
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  /* as root past the system's limit: batches of multipath routes are big */
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) < 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) < 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
  if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
    die("bind");

  /* The objects: pool members in use, then groups (delete in reverse) */
  unsigned obj[POOL + NSETS], nobj = 0, nmemb = 0, failed = 0;
  if (objects)
  {
    for (unsigned i = 0; i < POOL; i++)
      if (pool_used[i])
	obj[nobj++] = i;
    nmemb = nobj;
    for (unsigned s = 0; s < nsets; s++)
      if (sets[s].n > 1)
	obj[nobj++] = POOL + s;
  }

  double t0 = now();
  if (objects)
    failed += pass(fd, &(struct pass) { .obj = obj, .add = 1 }, nobj, batch);
  double t1 = now();
  failed += pass(fd, &(struct pass) { .r = r, .add = 1 }, n, batch);
  double t2 = now();
  if (pause_)
    raise(SIGSTOP);
  double t3 = now();
  failed += pass(fd, &(struct pass) { .r = r, .add = 0 }, n, batch);
  double t4 = now();
  if (objects)
  {
    failed += pass(fd, &(struct pass) { .obj = obj + nmemb, .add = 0 }, nobj - nmemb, batch);
    failed += pass(fd, &(struct pass) { .obj = obj, .add = 0 }, nmemb, batch);
  }
  double t5 = now();

  printf("add_s %.3f del_s %.3f routes %u failed %u", t2 - t1, t4 - t3, n, failed);
  if (objects)
    printf(" nh_add_s %.3f nh_del_s %.3f objects %u", t1 - t0, t5 - t4, nobj);
  printf("\n");
  return failed ? 1 : 0;
}
