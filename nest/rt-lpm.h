/*
 *	bloombird -- A routing table's own LPM engine
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_RT_LPM_H_
#define _BIRD_RT_LPM_H_

#include "nest/bird.h"
#include "lib/net.h"
#include "lib/idm.h"
#include "lib/hash.h"
#include "nest/fib-bloom.h"

struct rtable;
struct network;
struct cli;
struct lpm_class;
struct lpm_engine;

/*
 * The engine of a table holds, for every net with a valid best route, the
 * net's slot number; @slot maps slot numbers back to nets. It is kept by
 * rt_lpm_net_changed(), called where the valid best route of a net appears
 * or goes (rte_announce()), and answers net_route() through rt_lpm_route().
 */
struct rt_lpm {
  struct rtable *tab;
  pool *pool;				/* Engine, slots; freed as a whole */
  struct lpm_engine *e;
  struct rt_lpm_config cf;
  struct network **slot;		/* Slot number -> net */
  u32 slots;				/* Size of @slot */
  struct idm ids;			/* Slot numbers in use */
  u8 stale;				/* An update failed: not asked until rebuilt */
  u64 updates;				/* Notifications applied */
  u64 lookups, fallbacks;		/* net_route() answers, and left to the filter path */
  u64 failures;				/* Updates or builds that ran out of memory */
  btime built;				/* Last whole build: when ... */
  btime build_time;			/* ... and how long it took */
  struct event *rebuild;		/* Retry after a failure */
  struct rt_lpm_roa *roa;		/* ROA tables: the prefix groups (rt-lpm-roa.c) */
};

/*
 * A ROA table's engine holds its distinct ROA prefixes (those with a ROA
 * that has a valid route), each with a group number that @group maps back
 * to the group: its ROAs and the closest ROA prefix covering it.
 */
struct rt_lpm_roa_group;

struct rt_lpm_roa {
  pool *pool;
  slab *slab;				/* Groups */
  HASH(struct rt_lpm_roa_group) hash;	/* Prefix -> group */
  struct rt_lpm_roa_group **group;	/* Group number -> group */
  u32 ids_max;				/* Size of @group */
  struct idm ids;			/* Group numbers in use */
  u32 len_groups[IP6_MAX_PREFIX_LENGTH + 1];	/* Groups of each length */
  u32 gen;				/* Bumped when a group appears or goes */
  u64 ups;				/* Covering groups looked up */
};

void rt_lpm_config_default(struct rt_lpm_config *c);
int rt_lpm_config_same(const struct rt_lpm_config *a, const struct rt_lpm_config *b);

/* rt_setup() and rt_reconfigure(): create, rebuild or drop the engine */
void rt_lpm_configure(struct rtable *tab, const struct rt_lpm_config *cf);
void rt_lpm_sync_walk(struct rtable *tab);	/* After @lpm or @trie changed */

/* rte_announce(): the net's valid best route appeared (@valid) or went;
 * called while the table has an engine or its FIB a ROA index (fib-roa.c) */
void rt_lpm_net_changed(struct rtable *tab, struct network *n, int valid);
#define RT_LPM_TRACKING(tab)	((tab)->lpm || (tab)->fib.bloom->roa)

/* net_route(): *@done = 0 when the engine cannot answer (no engine, stale,
 * a type it does not serve, or an answer longer than a short query) */
struct network *rt_lpm_route(struct rtable *tab, const net_addr *n, int *done);

/* ROA tables (rt-lpm-roa.c): a whole build into @l->e and updates, both
 * returning -1 when the engine ran out of memory; net_roa_check(), with
 * *@done = 0 when the engine cannot answer (the stock paths do) */
int rt_lpm_roa_build(struct rt_lpm *l);
int rt_lpm_roa_net_changed(struct rt_lpm *l, struct network *n, int valid);
int rt_lpm_roa_check(struct rtable *tab, const net_addr *n, u32 asn, int *done);

/* CLI (rt-lpm-cli.c) */
void rt_lpm_show(struct cli *c, struct rtable_config *tc);
void rt_lpm_bench(struct cli *c, struct rtable_config *tc, uint count);

#endif
