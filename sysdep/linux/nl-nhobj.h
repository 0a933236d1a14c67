/*
 *	bloombird -- Kernel next-hop objects of the kernel sync
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_NL_NHOBJ_H_
#define _BIRD_NL_NHOBJ_H_

/*
 * Object ids BIRD uses: [NLNH_ID_BASE, NLNH_ID_BASE + NLNH_IDS). Objects
 * elsewhere, or of another protocol than `bird`, are never touched.
 */
#define NLNH_ID_BASE		0xb1d00000U
#define NLNH_IDS		(1U << 20)
#define NLNH_PATHS_MAX		256	/* Next hops of one set; more: the old way */
#define NLNH_KEEP		(5 S_)	/* An unused object stays this long */

struct nlnh;				/* One next-hop set and its kernel object */
struct nlnh_routes;			/* Per kernel protocol: the object of each route */
struct krt_proto;
struct rte;
struct nlmsghdr;
struct linpool;

/* The operations on objects sent in batches (nlnh_pending()) */
enum nlnh_op { NLNH_CREATE = 1, NLNH_DELETE };

/* nlnh_done(): what the batch's owner has to do */
#define NLNH_RESYNC		1	/* Objects failed: the old way from now on, scan again */

int nlnh_start(void);
void nlnh_stop(void);
int nlnh_available(void);
struct nlnh_routes *nlnh_routes_new(pool *p);
void nlnh_routes_free(struct nlnh_routes *r);

u32 nlnh_route(struct nlnh_routes *r, int af, int use, struct rte *new, struct rte *old);
uint nlnh_route_size(const struct nlmsghdr *m);
struct nlmsghdr *nlnh_route_msg(const struct nlmsghdr *m, u32 id, void *buf);
int nlnh_current(struct nlnh_routes *r, struct rte *e, u32 nhid);

struct nlnh *nlnh_pending(uint *op);
uint nlnh_msg(struct nlnh *o, uint op, void *buf, uint size);
void nlnh_sent(struct nlnh *o, uint op);
int nlnh_done(struct nlnh *o, uint op, int err);
const char *nlnh_name(struct nlnh *o, char *buf, uint size);
int nlnh_sweep(btime now);
uint nlnh_leftovers(void);
int nlnh_lost(u32 id);
int nlnh_link(u32 ifindex, int up);

void nlnh_show(struct nlnh_routes *r);

#endif
