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
 * protocol "bird" (12), metric 32, a gateway and an output interface.
 *
 *   nlfill FAMILY TABLE GATEWAY IFNAME PREFIXES [BATCH]
 *
 * FAMILY 4 or 6; PREFIXES: a file with one prefix per line, in the order to
 * write them. Prints "add_s A del_s D routes N failed F" (seconds of the
 * adds and of the deletes, wall clock) and exits 1 if any write failed.
 *
 * Build: cc -O2 -o nlfill nlfill.c
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define RTPROT_BIRD_	12
#define METRIC		32
#define MSG_MAX		128		/* bytes per route message, with room */

struct route {
  unsigned char a[16];
  unsigned char len;
};

static int fam, af, alen, ifindex;
static unsigned table;
static unsigned char gw[16];

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

static void
attr(struct nlmsghdr *h, unsigned short type, const void *data, unsigned short len)
{
  struct rtattr *a = (struct rtattr *) ((char *) h + NLMSG_ALIGN(h->nlmsg_len));
  a->rta_type = type;
  a->rta_len = RTA_LENGTH(len);
  memcpy(RTA_DATA(a), data, len);
  h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* One route message at @buf; returns its length */
static unsigned
route_msg(char *buf, const struct route *r, int add, unsigned seq)
{
  struct nlmsghdr *h = (struct nlmsghdr *) buf;
  memset(buf, 0, MSG_MAX);
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
  attr(h, RTA_DST, r->a, alen);
  attr(h, RTA_TABLE, &table, 4);
  attr(h, RTA_PRIORITY, &metric, 4);
  if (add)
  {
    attr(h, RTA_GATEWAY, gw, alen);
    attr(h, RTA_OIF, &oif, 4);
  }
  return NLMSG_ALIGN(h->nlmsg_len);
}

/* Write every route (@add) or delete it, @batch per sendmsg(); failures */
static unsigned
pass(int fd, const struct route *r, unsigned n, unsigned batch, int add)
{
  char *buf = malloc((size_t) batch * MSG_MAX), rx[65536];
  unsigned failed = 0, seq = 1;

  for (unsigned i = 0; i < n; i += batch)
  {
    unsigned k = n - i < batch ? n - i : batch, len = 0;
    for (unsigned j = 0; j < k; j++)
      len += route_msg(buf + len, &r[i + j], add, seq++);
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
	    fprintf(stderr, "nlfill: %s refused: %s\n", add ? "add" : "delete", strerror(-e->error));
	  acks++;
	}
    }
  }

  free(buf);
  return failed;
}

int
main(int argc, char **argv)
{
  if (argc < 6)
  {
    fprintf(stderr, "usage: nlfill 4|6 TABLE GATEWAY IFNAME PREFIXES [BATCH]\n");
    return 2;
  }

  fam = atoi(argv[1]);
  af = fam == 6 ? AF_INET6 : AF_INET;
  alen = fam == 6 ? 16 : 4;
  table = atoi(argv[2]);
  unsigned batch = argc > 6 ? atoi(argv[6]) : 512;
  if (inet_pton(af, argv[3], gw) != 1)
  {
    fprintf(stderr, "nlfill: bad gateway %s\n", argv[3]);
    return 2;
  }
  if (!(ifindex = if_nametoindex(argv[4])))
    die(argv[4]);

  FILE *f = fopen(argv[5], "r");
  if (!f)
    die(argv[5]);
  unsigned n = 0, cap = 1 << 16;
  struct route *r = malloc(cap * sizeof(*r));
  char line[256];
  while (fgets(line, sizeof(line), f))
  {
    char *s = strchr(line, '/');
    if (!s)
      continue;
    *s++ = 0;
    if (n == cap)
      r = realloc(r, (cap *= 2) * sizeof(*r));
    memset(&r[n], 0, sizeof(r[n]));
    if (inet_pton(af, line, r[n].a) != 1)
    {
      fprintf(stderr, "nlfill: bad prefix %s\n", line);
      return 2;
    }
    r[n++].len = atoi(s);
  }
  fclose(f);

  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  int one = 1, buf = 4 << 20;
  if (fd < 0)
    die("socket");
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
  if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
    die("bind");

  double t0 = now();
  unsigned failed = pass(fd, r, n, batch, 1);
  double t1 = now();
  failed += pass(fd, r, n, batch, 0);
  double t2 = now();

  printf("add_s %.3f del_s %.3f routes %u failed %u\n", t1 - t0, t2 - t1, n, failed);
  return failed ? 1 : 0;
}
