/*
 *	bloombird -- Kernel next-hop objects: tests
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "test/birdtest.h"

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/protocol.h"
#include "nest/iface.h"
#include "lib/resource.h"
#include "conf/conf.h"
#include "sysdep/unix/krt.h"
#include "sysdep/linux/nl-nhobj.h"
#include "test/bt-utils.h"

#define RTA_NH_ID_	30
#define NHA_ID_		1
#define NHA_GROUP_	2
#define NHA_OIF_	5
#define NHA_GATEWAY_	6

static struct iface ifa = { .index = 7 }, ifb = { .index = 9 };
static linpool *lp;

/* A route to nowhere in particular with @n next hops via @ifc, gateways from 10.0.0.@first */
static rte *
mk_route(u32 id, int n, int first, int weight)
{
  rte *e = lp_allocz(lp, sizeof(rte));
  rta *a = lp_allocz(lp, RTA_MAX_SIZE);
  e->id = id;
  e->attrs = a;
  a->dest = RTD_UNICAST;

  struct nexthop *nh = &a->nh;
  for (int i = 0; i < n; i++)
  {
    if (i)
      nh = nh->next = lp_allocz(lp, NEXTHOP_MAX_SIZE);
    nh->gw = ipa_from_ip4(ip4_build(10, 0, 0, first + i));
    nh->iface = (i % 2) ? &ifb : &ifa;
    nh->weight = weight;
  }
  return e;
}

/* Objects waiting to be sent, in order; each marked sent (and answered 0 when @answer) */
static int
drain(struct nlnh **got, uint *ops, int max, int answer)
{
  int n = 0;
  struct nlnh *o;
  uint op;

  while ((n < max) && (o = nlnh_pending(&op)))
  {
    got[n] = o;
    ops[n++] = op;
    nlnh_sent(o, op);
  }

  if (answer)
    for (int i = 0; i < n; i++)
      nlnh_done(got[i], ops[i], 0);

  return n;
}

static struct rtattr *
find_attr(struct nlmsghdr *h, uint hdr, uint type)
{
  struct rtattr *a = (void *) ((byte *) h + NLMSG_LENGTH(hdr));
  int len = h->nlmsg_len - NLMSG_LENGTH(hdr);

  for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
    if (a->rta_type == type)
      return a;
  return NULL;
}

static int
start(void)
{
  if (!krt_pool)
    krt_pool = rp_new(&root_pool, "Kernel syncer");
  if (!lp)
    lp = lp_new_default(&root_pool);

  if (!nlnh_start())
  {
    bt_debug("the kernel has no next-hop objects: nothing to test here\n");
    nlnh_stop();
    return 0;
  }
  return 1;
}

/* Equal sets share one object, a group's members come first, and sets are counted */
static int
t_sets(void)
{
  if (!start())
    return 1;

  struct nlnh_routes *r = nlnh_routes_new(&root_pool);
  struct nlnh *got[16];
  uint ops[16];

  u32 a = nlnh_route(r, AF_INET, 1, mk_route(1, 1, 1, 0), NULL);
  u32 b = nlnh_route(r, AF_INET, 1, mk_route(2, 1, 1, 0), NULL);
  u32 c = nlnh_route(r, AF_INET, 1, mk_route(3, 1, 2, 0), NULL);
  bt_assert(a && (a == b) && (c != a));
  bt_assert((a >= NLNH_ID_BASE) && (c >= NLNH_ID_BASE));

  /* Four next hops (10.0.0.1-4, every second on ifb): the group and the three
   * members not there yet; all six creations in order, members before the group */
  u32 g = nlnh_route(r, AF_INET, 1, mk_route(4, 4, 1, 2), NULL);
  bt_assert(g && (g != a) && (g != c));
  int n = drain(got, ops, 16, 1);
  bt_assert(n == 6);
  for (int i = 0; i < n; i++)
    bt_assert(ops[i] == NLNH_CREATE);
  byte buf[1024];
  struct nlmsghdr *h = (void *) buf;
  nlnh_msg(got[n - 1], NLNH_CREATE, buf, sizeof(buf));
  struct rtattr *grp = find_attr(h, 8, NHA_GROUP_);
  bt_assert(grp && (RTA_PAYLOAD(grp) == 4 * 8));
  bt_assert(((u8 *) RTA_DATA(grp))[4] == 2);	/* weight */
  for (int i = 0; i < n - 1; i++)
  {
    nlnh_msg(got[i], NLNH_CREATE, buf, sizeof(buf));
    bt_assert(!find_attr(h, 8, NHA_GROUP_) && find_attr(h, 8, NHA_GATEWAY_));
  }

  /* Not through an object: blackhole; the option off */
  rte *bh = mk_route(5, 1, 1, 0);
  bh->attrs->dest = RTD_BLACKHOLE;
  bt_assert(nlnh_route(r, AF_INET, 1, bh, NULL) == 0);
  bt_assert(nlnh_route(r, AF_INET, 0, mk_route(6, 1, 1, 0), NULL) == 0);

  /* The route as written, and not */
  bt_assert(nlnh_current(r, mk_route(1, 1, 1, 0), a));
  bt_assert(!nlnh_current(r, mk_route(1, 1, 1, 0), c));
  bt_assert(!nlnh_current(r, mk_route(1, 1, 1, 0), 0));
  bt_assert(nlnh_current(r, mk_route(6, 1, 1, 0), 0));
  bt_assert(!nlnh_current(r, mk_route(6, 1, 1, 0), a));

  /* Route 2 moves to c: a still held by route 1, nothing to delete */
  bt_assert(nlnh_route(r, AF_INET, 1, mk_route(2, 1, 2, 0), mk_route(2, 1, 1, 0)) == c);
  bt_assert(!nlnh_sweep(current_time() + 2 * NLNH_KEEP));
  bt_assert(!nlnh_pending(&ops[0]));

  /* Route 1 and the group withdrawn: retired, deleted only after the keep time, the group first */
  nlnh_route(r, AF_INET, 0, NULL, mk_route(1, 1, 1, 0));
  nlnh_route(r, AF_INET, 0, NULL, mk_route(4, 4, 1, 2));
  bt_assert(nlnh_sweep(current_time()));
  bt_assert(!nlnh_pending(&ops[0]));
  nlnh_sweep(current_time() + 2 * NLNH_KEEP);
  n = drain(got, ops, 16, 1);
  bt_assert((n == 1) && (ops[0] == NLNH_DELETE));

  /* The group's members are let go when the group is gone: a (held by the group alone now) and the other three */
  nlnh_sweep(current_time() + 4 * NLNH_KEEP);
  n = drain(got, ops, 16, 1);
  bt_assert(n == 4);
  for (int i = 0; i < n; i++)
    bt_assert(ops[i] == NLNH_DELETE);

  /* A set wanted again before its deletion is taken back as it is */
  u32 d = nlnh_route(r, AF_INET, 1, mk_route(7, 1, 9, 0), NULL);
  drain(got, ops, 16, 1);
  nlnh_route(r, AF_INET, 0, NULL, mk_route(7, 1, 9, 0));
  bt_assert(nlnh_route(r, AF_INET, 1, mk_route(8, 1, 9, 0), NULL) == d);
  bt_assert(!nlnh_pending(&ops[0]));

  nlnh_routes_free(r);
  nlnh_stop();
  return 1;
}

/* The route message: next hops out, the object's id in, the rest as built */
static int
t_route_msg(void)
{
  byte buf[512], out[600];
  struct nlmsghdr *h = (void *) buf;
  memset(buf, 0, sizeof(buf));
  h->nlmsg_type = RTM_NEWROUTE;
  h->nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
  struct rtmsg *rm = NLMSG_DATA(h);
  rm->rtm_family = AF_INET;
  rm->rtm_flags = RTNH_F_ONLINK;

  u32 v = 42;
  uint types[] = { RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_PRIORITY, RTA_MULTIPATH, RTA_TABLE };
  for (uint i = 0; i < ARRAY_SIZE(types); i++)
  {
    struct rtattr *a = (void *) (buf + NLMSG_ALIGN(h->nlmsg_len));
    a->rta_type = types[i];
    a->rta_len = RTA_LENGTH(4);
    memcpy(RTA_DATA(a), &v, 4);
    h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
  }

  bt_assert(nlnh_route_size(h) <= sizeof(out));
  struct nlmsghdr *m = nlnh_route_msg(h, 0xb1d00007, out);
  bt_assert(find_attr(m, sizeof(struct rtmsg), RTA_DST));
  bt_assert(find_attr(m, sizeof(struct rtmsg), RTA_PRIORITY));
  bt_assert(find_attr(m, sizeof(struct rtmsg), RTA_TABLE));
  bt_assert(!find_attr(m, sizeof(struct rtmsg), RTA_OIF));
  bt_assert(!find_attr(m, sizeof(struct rtmsg), RTA_GATEWAY));
  bt_assert(!find_attr(m, sizeof(struct rtmsg), RTA_MULTIPATH));
  struct rtattr *id = find_attr(m, sizeof(struct rtmsg), RTA_NH_ID_);
  bt_assert(id && (*(u32 *) RTA_DATA(id) == 0xb1d00007));
  bt_assert(!(((struct rtmsg *) NLMSG_DATA(m))->rtm_flags & RTNH_F_ONLINK));
  return 1;
}

/* Object messages: a first creation exclusive, a restoration a replacement, a deletion the id alone */
static int
t_obj_msg(void)
{
  if (!start())
    return 1;

  struct nlnh_routes *r = nlnh_routes_new(&root_pool);
  u32 id = nlnh_route(r, AF_INET, 1, mk_route(1, 1, 5, 0), NULL);
  uint op;
  struct nlnh *o = nlnh_pending(&op);
  bt_assert(o && (op == NLNH_CREATE));

  byte buf[1024];
  struct nlmsghdr *h = (void *) buf;
  bt_assert(nlnh_msg(o, op, buf, 16) == 0);
  bt_assert(nlnh_msg(o, op, buf, sizeof(buf)) == h->nlmsg_len);
  bt_assert((h->nlmsg_flags & NLM_F_CREATE) && (h->nlmsg_flags & NLM_F_EXCL) && !(h->nlmsg_flags & NLM_F_REPLACE));
  bt_assert(((byte *) NLMSG_DATA(h))[0] == AF_INET);	/* nh_family */
  bt_assert(((byte *) NLMSG_DATA(h))[2] == RTPROT_BIRD);	/* nh_protocol */
  bt_assert(*(u32 *) RTA_DATA(find_attr(h, 8, NHA_ID_)) == id);
  bt_assert(*(u32 *) RTA_DATA(find_attr(h, 8, NHA_OIF_)) == 7);
  bt_assert(RTA_PAYLOAD(find_attr(h, 8, NHA_GATEWAY_)) == 4);
  nlnh_sent(o, op);
  bt_assert(nlnh_done(o, op, 0) == 0);

  /* Lost behind our back: created again, replacing */
  bt_assert(nlnh_lost(id));
  bt_assert(!nlnh_lost(id));		/* Already queued */
  bt_assert((nlnh_pending(&op) == o) && (op == NLNH_CREATE));
  nlnh_msg(o, op, buf, sizeof(buf));
  bt_assert(h->nlmsg_flags & NLM_F_REPLACE);
  nlnh_sent(o, op);
  nlnh_done(o, op, 0);
  bt_assert(!nlnh_lost(0xb1d00000 + 12345));	/* Not ours */

  /* Withdrawn while its restoration waits: the restoration dropped, the object retired and not restored */
  bt_assert(nlnh_lost(id));
  nlnh_route(r, AF_INET, 0, NULL, mk_route(1, 1, 5, 0));
  bt_assert(!nlnh_pending(&op));
  bt_assert(!nlnh_lost(id));
  bt_assert(!nlnh_pending(&op));
  bt_assert(nlnh_route(r, AF_INET, 1, mk_route(1, 1, 5, 0), NULL) == id);	/* Taken back as it is */
  bt_assert(!nlnh_pending(&op));

  /* A transient failure: again; a refusal of a restoration: objects stay on */
  bt_assert(nlnh_lost(id));
  nlnh_pending(&op);
  nlnh_sent(o, op);
  bt_assert(nlnh_done(o, op, ENOBUFS) == 0);
  bt_assert(nlnh_pending(&op) == o);
  nlnh_sent(o, op);
  bt_assert(nlnh_done(o, op, EINVAL) == 0);
  bt_assert(nlnh_available());

  /* One that failed to be restored is not deleted (nothing is there) */
  nlnh_route(r, AF_INET, 0, NULL, mk_route(1, 1, 5, 0));
  nlnh_sweep(current_time() + 2 * NLNH_KEEP);
  bt_assert(!nlnh_pending(&op));

  /* Deletion: the id alone, no protocol */
  id = nlnh_route(r, AF_INET, 1, mk_route(2, 1, 20, 0), NULL);
  o = nlnh_pending(&op);
  nlnh_sent(o, op);
  nlnh_done(o, op, 0);
  nlnh_route(r, AF_INET, 0, NULL, mk_route(2, 1, 20, 0));
  nlnh_sweep(current_time() + 2 * NLNH_KEEP);
  bt_assert((nlnh_pending(&op) == o) && (op == NLNH_DELETE));
  nlnh_msg(o, op, buf, sizeof(buf));
  bt_assert(h->nlmsg_type == 105 /* RTM_DELNEXTHOP */);
  bt_assert(((byte *) NLMSG_DATA(h))[2] == 0);
  bt_assert(*(u32 *) RTA_DATA(find_attr(h, 8, NHA_ID_)) == id);
  bt_assert(!find_attr(h, 8, NHA_OIF_) && !find_attr(h, 8, NHA_GATEWAY_));
  nlnh_sent(o, op);
  nlnh_done(o, op, 0);

  /* A refused first creation turns objects off for good, once */
  nlnh_route(r, AF_INET, 1, mk_route(3, 1, 6, 0), NULL);
  o = nlnh_pending(&op);
  bt_assert(o && (op == NLNH_CREATE));
  nlnh_sent(o, op);
  bt_assert(nlnh_done(o, op, EINVAL) == NLNH_RESYNC);
  bt_assert(!nlnh_available());
  bt_assert(nlnh_route(r, AF_INET, 1, mk_route(4, 1, 7, 0), NULL) == 0);

  nlnh_routes_free(r);
  nlnh_stop();
  return 1;
}

int
main(int argc, char *argv[])
{
  bt_init(argc, argv);
  bt_bird_init();

  bt_test_suite(t_sets, "equal sets share an object, groups after their members, counted, deleted after the keep time");
  bt_test_suite(t_route_msg, "route messages name the object instead of the next hops");
  bt_test_suite(t_obj_msg, "object messages, restoration, transient failures, fallback");

  return bt_exit_value();
}
