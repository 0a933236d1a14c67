/*
 *	bloombird -- LPM exporter protocol
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_PROTO_LPM_H_
#define _BIRD_PROTO_LPM_H_

#include "nest/bird.h"
#include "nest/protocol.h"
#include "nest/route.h"
#include "nest/lpm.h"
#include "lib/timer.h"

#include "proto/lpm/lpm-shm.h"

#define LPMX_TICK	(10 MS)		/* Heartbeat and reuse grace period */
#define LPMX_BATCH	256		/* Route changes queued for one lpm_apply() */
#define LPMX_SHM_NAME_MAX 48		/* Export names (the objects add ".ipv4" etc.) */

struct lpmx_config {
  struct proto_config c;
  const struct lpm_class *class;	/* Engine, `simd' by default */
  u8 variant;				/* enum lpm_variant */
  const char *shm;			/* Export name, NULL: no shared memory */
  int shm_gid;				/* Group of its objects, -1: bird's */
  u16 shm_mode;				/* Their permissions */
};

#define LPMX_SHM_MODE	0640		/* Default: bird's user writes, its group reads */

/* Next-hop table (lpm-nh.c): entries in the exporter region, bookkeeping here */
struct lpmx_nht {
  struct lpmx_nh *nh;			/* Entries (shared) */
  struct lpm_region *reg;		/* The region @nh lies in */
  u32 max, used, live;			/* Capacity, high-water mark, referenced */
  u32 avail;				/* Entries whose pages are reserved in @reg */
  u32 *refs;				/* Per entry: prefixes referring to it */
  u32 *next;				/* Hash chains */
  u32 *hash;				/* 2^order chain heads */
  uint order;
  u64 *tag;				/* Per entry: tick it was retired in */
  u32 *free, nfree;			/* Reusable */
  u32 *limbo, nlimbo;			/* Retired, oldest first */
};

/* A prefix collected by a feed for the engine's one build (lpm.c) */
struct lpmx_net {
  u32 nh;				/* Next-hop entry */
  struct fib_node n;
};

struct lpmx_fam {
  struct channel *c;
  struct lpm_engine *e;
  struct lpm_reader proxy;		/* Stands for readers in other processes */
  struct fib fib;			/* Prefixes collected by a feed (@fib_up) */
  struct lpm_change *q;			/* Changes not in the engine yet (lpmx_flush_fam()) */
  uint nq;
  u64 q_ns;				/* When the oldest queued change came (ns) */
  u8 unpublished;			/* Counters changed since lpmx_publish() */
  u64 updates;				/* Route changes applied */
  u64 rejected;				/* Routes left out: next hop not representable */
  u64 failures;				/* Engine updates refused (memory) */

  /* Feeds (lpm.c): an initial feed into an empty engine is one build */
  u8 bulk;				/* Feeding: routes go to @fib only */
  u8 fib_up;				/* @fib exists (only while @bulk) */
  u64 feed_t0;				/* When the running feed began (ns) */
  u64 feed_ns, build_ns;		/* Last feed: whole duration, its build */
  u64 feed_prefixes;			/* Last feed: prefixes held at its end */
  u32 feeds, bulk_builds;		/* Feeds ended; of them built at once */
};

/* The export: owned name, exporter region (lpm-shm.c) */
struct lpmx_export {
  resource r;
  int lock_fd;				/* flock()ed /dev/shm/N.lock */
  u64 lock_ino;				/* Its inode, to unlink only our own */
  char *name;				/* N */
  struct lpm_region *reg;		/* The exporter region, shared or private */
  struct lpmx_header *hdr;
};

struct lpmx_proto {
  struct proto p;
  struct lpmx_fam fam[2];		/* [0] IPv4, [1] IPv6 */
  struct lpmx_export *x;
  struct lpmx_nht nht;
  rta *nh_rta;				/* Last route's attributes (a reference), or NULL */
  u32 nh_idx;				/* Their next-hop entry (a reference) */
  timer *tick;
  event *flush;				/* Applies the queued changes */
  u64 tick_no;				/* Reuse grace periods passed */
  u8 dirty;				/* Updates since the last tick */
  u8 space_failed;			/* A shared region could not grow: stopping */
  u8 restart;				/* ... or was truncated: restarting */
  u32 run;				/* Starts so far (a benchmark tells a restart) */
  event *stop;				/* Stops the protocol (lpmx_space_failed()) */
  struct tbf rl;			/* Log rate limit */
};

extern struct protocol proto_lpm;

/* lpm-nh.c */
void lpmx_nh_init(struct lpmx_nht *t, pool *p, struct lpm_region *reg, struct lpmx_nh *nh, u32 max);
int lpmx_nh_key(struct lpmx_nh *k, const rta *a);
int lpmx_nh_get(struct lpmx_nht *t, const struct lpmx_nh *k);
static inline void lpmx_nh_ref(struct lpmx_nht *t, u32 i) { t->refs[i]++; }
void lpmx_nh_put(struct lpmx_nht *t, u32 i, u64 tick);
void lpmx_nh_reclaim(struct lpmx_nht *t, u64 tick);

/* lpm-shm.c */
int lpmx_shm_name_valid(const char *name);
int lpmx_shm_check(const char *name, char *err, uint errsize);
struct lpmx_export *lpmx_export_open(pool *p, const struct lpmx_config *cf, const char *proto, char *err, uint errsize);
void lpmx_export_close(struct lpmx_export *x);
u64 lpmx_now_ns(void);

/* lpm.c: `show lpm lookup' */
void lpmx_show_lookup(struct proto *P, const net_addr *n);
void lpmx_flush(struct lpmx_proto *p);		/* Queued changes into the engines */

/* lpm-bench.c: `show lpm lookup benchmark' */
void lpmx_bench(struct proto *P, uint count);

#endif
