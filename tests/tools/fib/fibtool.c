/*
 *	bloombird -- FIB differential and benchmark tool
 *
 *	Built twice from this one file: against the patched tree and against
 *	the stock tree (tests/tools/fib/tool.mk), so both run BIRD's own fib_find(),
 *	fib_get(), fib_delete(), fib_route(), net_route() and net_roa_check()
 *	on the same table and the same queries.
 *
 *	fibtool diff  4|6 TABLE SEED   answers of every query, one per line
 *	fibtool bench 4|6 TABLE SEED   ns/op of each operation (median of 5)
 *	fibtool pair  4|6 TABLE SEED   one round (of PASSES passes over its
 *				       queries) of the operation on each line
 *				       "NAME [PASSES]" of standard input, its
 *				       mean ns/op on
 *				       standard output (tests/bench/fib-pair runs
 *				       a stock and a patched one side by side
 *				       and alternates them round by round)
 *	fibtool count 4|6 TABLE SEED   each operation once over its queries, in
 *				       a function of its own (count_NAME), for
 *				       valgrind --tool=callgrind --toggle-collect
 *				       (tests/bench/fib-count: instructions and
 *				       simulated cache misses per operation,
 *				       exact and free of the VM's noise)
 *	fibtool grow  4|6 TABLE SEED   the table inserted into an empty FIB in
 *				       file order, and every single fib_get()
 *				       that took over 1 ms (the hash table's
 *				       all-at-once rehash: a loop cycle of a
 *				       daemon importing a full table)
 *	fibtool roa 4|6 ROAS SEED QUERIES [count]
 *				       ROA checks of real routes against a
 *				       real ROA set, as an import makes them
 *				       (roa_real(); tests/bench/roa-checks)
 *
 *	In diff mode the patched build pins its filters active (the path that
 *	must be exact); $FIBTOOL_ADAPTIVE=1 leaves them to the upkeep policy;
 *	$FIBTOOL_REHASH_ONESHOT=1 rehashes every FIB at once, as stock does.
 *	Bench mode runs the policy as a daemon would. $FIBTOOL_LPM=ENGINE gives
 *	the fib-loop and the trie table an LPM engine (`lpm engine ENGINE'), so
 *	net_route() answers through it, and the ROA table without a trie too
 *	(net_roa_check() through its ROA prefixes; the trie ROA table keeps
 *	the trie walk).
 *
 *	TABLE: text, one "prefix/len" per line (anything after a tab ignored).
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include "test/birdtest.h"
#include "test/bt-utils.h"

#include "nest/route.h"
#include "nest/attrs.h"
#include "filter/data.h"
#include "lib/string.h"
#include "lib/event.h"
#include "conf/conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#if __has_include("nest/fib-bloom.h")
#define BLOOMBIRD 1
#include "nest/fib-bloom.h"
#include "nest/fib-roa.h"
#include "nest/lpm.h"
#include "nest/rt-lpm.h"
#endif

#if __has_include("nest/fib-rehash.h")
#include "nest/fib-rehash.h"
#define FIB_REHASH_INCREMENTAL 1
#endif

#define ROA_ASNS 50

static rtable *tf, *tt, *td, *tr, *trt;	/* fib loop, trie, import only; ROA tables without and with a trie */

static int v6;
static uint nets_n;
static net_addr_union *nets;
static rte valid_rte;			/* flags 0: rte_is_valid() */

/* Deterministic across builds: xorshift64* */
static u64 rs;
static inline u64 rnd(void) { rs ^= rs >> 12; rs ^= rs << 25; rs ^= rs >> 27; return rs * 0x2545f4914f6cdd1dULL; }
static inline u32 rnd_n(u32 n) { return (u32) ((rnd() >> 32) * n >> 32); }

static void
read_table(const char *fn)
{
  FILE *f = fopen(fn, "r");
  if (!f)
    die("cannot open %s", fn);

  uint cap = 1 << 20;
  nets = malloc(cap * sizeof(net_addr_union));
  char line[512];

  while (fgets(line, sizeof(line), f))
  {
    char *slash = strchr(line, '/');
    if (!slash)
      continue;
    *slash = 0;
    uint len = atoi(slash + 1);

    if (nets_n == cap)
      nets = realloc(nets, (cap *= 2) * sizeof(net_addr_union));

    net_addr_union *n = &nets[nets_n];
    if (!v6)
    {
      ip4_addr a;
      if (!ip4_pton(line, &a) || len > 32)
	continue;
      net_fill_ip4(&n->n, ip4_and(a, ip4_mkmask(len)), len);
    }
    else
    {
      ip6_addr a;
      if (!ip6_pton(line, &a) || len > 128)
	continue;
      net_fill_ip6(&n->n, ip6_and(a, ip6_mkmask(len)), len);
    }
    nets_n++;
  }
  fclose(f);
}

static rtable *
new_table(pool *p, uint type, int trie)
{
  rtable *t = mb_allocz(p, sizeof(rtable));
  t->rp = p;
  t->addr_type = type;
  t->name = trie ? "trie" : "fib";
  fib_init(&t->fib, p, type, sizeof(net), OFFSETOF(net, n), 0, NULL);
  if (trie)
  {
    t->trie = f_new_trie(lp_new_default(p), 0);
    t->trie->ipv4 = !v6;
  }
#ifdef BLOOMBIRD
  rt_lpm_sync_walk(t);		/* as rt_setup() does, through rt_lpm_configure() */
  fib_bloom_roa_attach(&t->fib);	/* likewise: a ROA table keeps a ROA index with its filter */
#endif
  return t;
}

static void
table_add(rtable *t, const net_addr *a)
{
  net *n = fib_get(&t->fib, a);
  n->routes = &valid_rte;
#ifdef BLOOMBIRD
  if (RT_LPM_TRACKING(t))
    rt_lpm_net_changed(t, n, 1);
#endif
  if (t->trie)
    trie_add_prefix(t->trie, a, a->pxlen, a->pxlen);
}

/* A ROA per prefix: max length 0-2 longer, one of ROA_ASNS origins */
static void
roa_of(net_addr_union *r, const net_addr_union *n, uint i)
{
  uint maxlen = MIN(n->n.pxlen + (i % 3), v6 ? 128U : 32U);
  u32 asn = 64496 + (i % ROA_ASNS);
  if (!v6)
    net_fill_roa4(&r->n, n->ip4.prefix, n->n.pxlen, maxlen, asn);
  else
    net_fill_roa6(&r->n, n->ip6.prefix, n->n.pxlen, maxlen, asn);
}

/* A second ROA of the same prefix: exact length, the next origin */
static void
roa_second(net_addr_union *r, const net_addr_union *n, uint i)
{
  u32 asn = 64496 + ((i + 1) % ROA_ASNS);
  if (!v6)
    net_fill_roa4(&r->n, n->ip4.prefix, n->n.pxlen, n->n.pxlen, asn);
  else
    net_fill_roa6(&r->n, n->ip6.prefix, n->n.pxlen, n->n.pxlen, asn);
}

/* Set (@valid) or clear the route of ROA net @r in both ROA tables */
static void
roa_set(const net_addr *r, int valid)
{
  for (rtable **t = (rtable *[]) { tr, trt, NULL }; *t; t++)
  {
    net *n = fib_find(&(*t)->fib, r);
    if (!n || (!n->routes == !valid))
      continue;

    n->routes = valid ? &valid_rte : NULL;
#ifdef BLOOMBIRD
    if (RT_LPM_TRACKING(*t))
      rt_lpm_net_changed(*t, n, valid);
#endif
  }
}

/* Deterministic choice of the ROAs churned (no draw from the generator) */
static inline uint
roa_pick(uint i, uint shift, uint mod)
{
  return ((i * 2654435761U) >> shift) % mod;
}

/* Full-length address inside @n, or anywhere (IPv6: in 2000::/3) */
static void
addr_in(net_addr_union *q, const net_addr_union *n)
{
  if (!v6)
  {
    u32 host = n->n.pxlen == 32 ? 0 : (u32) rnd() & ~ip4_to_u32(ip4_mkmask(n->n.pxlen));
    net_fill_ip4(&q->n, ip4_from_u32(ip4_to_u32(n->ip4.prefix) | host), 32);
  }
  else
  {
    ip6_addr r = ip6_build(rnd(), rnd(), rnd(), rnd());
    ip6_addr m = ip6_mkmask(n->n.pxlen);
    ip6_addr a = ip6_or(ip6_and(n->ip6.prefix, m), ip6_and(r, ip6_not(m)));
    net_fill_ip6(&q->n, a, 128);
  }
}

static void
addr_random(net_addr_union *q)
{
  if (!v6)
    net_fill_ip4(&q->n, ip4_from_u32(rnd()), 32);
  else
    net_fill_ip6(&q->n, ip6_build(0x20000000 | (rnd() & 0x1fffffff), rnd(), rnd(), rnd()), 128);
}

/* A prefix of a table length at a random place: almost always absent */
static void
prefix_random(net_addr_union *q)
{
  uint len = nets[rnd_n(nets_n)].n.pxlen;
  addr_random(q);
  if (!v6)
    net_fill_ip4(&q->n, ip4_and(q->ip4.prefix, ip4_mkmask(len)), len);
  else
    net_fill_ip6(&q->n, ip6_and(q->ip6.prefix, ip6_mkmask(len)), len);
}

/* Query sets */
struct qset { uint n; net_addr_union *q; u32 *asn; };

static struct qset
qset_new(uint n)
{
  struct qset s = { .n = n, .q = malloc(n * sizeof(net_addr_union)), .asn = malloc(n * sizeof(u32)) };
  return s;
}

static const char *
net_str(const net *n)
{
  return n ? tmp_sprintf("%N", n->n.addr) : "-";
}

static double
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static volatile uintptr_t sink;

/* Tables and query sets, shared by main() and the count_*() functions */
static struct qset hit, miss, mixed, in, any, roa;
static uint churn_type;

/*
 * Median of 5 rounds of ns per query. Latency: each query's address depends
 * on the previous answer (through a zero the compiler cannot see), so the
 * lookups do not overlap, as in BIRD where every lookup is followed by
 * route processing. Throughput: independent back-to-back lookups, which
 * out-of-order execution overlaps; it rewards short instruction paths.
 */
static uintptr_t zero;

/*
 * Hardware counters (cycles, instructions, last-level cache misses) over
 * the same rounds, where the machine exposes them (many VMs do not: then
 * one line says so and only wall time is printed).
 */
static int perf_fd[3] = { -1, -1, -1 };

static void
perf_open(void)
{
  static const u64 cfg[3] = { PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CACHE_MISSES };
  for (int i = 0; i < 3; i++)
  {
    struct perf_event_attr a = {
      .type = PERF_TYPE_HARDWARE, .size = sizeof(a), .config = cfg[i],
      .disabled = 1, .exclude_kernel = 1, .exclude_hv = 1,
    };
    perf_fd[i] = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  }
  printf("# hardware counters: %s\n", (perf_fd[0] >= 0) ? "cycles, instructions, cache misses" :
	 "not exposed on this machine (wall time only)");
}

static void
perf_start(void)
{
  for (int i = 0; i < 3; i++)
    if (perf_fd[i] >= 0)
    {
      ioctl(perf_fd[i], PERF_EVENT_IOC_RESET, 0);
      ioctl(perf_fd[i], PERF_EVENT_IOC_ENABLE, 0);
    }
}

/* Per-operation counts after @ops operations, printed as NAME.cycles etc. */
static void
perf_stop(const char *name, double ops)
{
  static const char *what[3] = { "cycles", "instructions", "llc_misses" };
  for (int i = 0; i < 3; i++)
  {
    u64 v;
    if ((perf_fd[i] < 0) || (read(perf_fd[i], &v, sizeof(v)) != sizeof(v)))
      continue;
    ioctl(perf_fd[i], PERF_EVENT_IOC_DISABLE, 0);
    printf("%s.%-*s %10.1f\n", name, (int) (23 - strlen(name)), what[i], v / ops);
  }
}

#define BENCH_ONE(name, qs, expr, dep) do {					\
  double r_[5];									\
  perf_start();									\
  for (int k_ = 0; k_ < 5; k_++) {						\
    double t0_ = now_ns(); uintptr_t acc_ = 0, last_ = 0;			\
    for (uint i = 0; i < (qs).n; i++) {						\
      const net_addr *q = &(qs).q[(i + (dep ? (last_ & zero) : 0)) % (qs).n].n; (void) q; \
      last_ = (uintptr_t) (expr); acc_ += last_; }				\
    r_[k_] = (now_ns() - t0_) / (qs).n; sink += acc_;				\
  }										\
  qsort(r_, 5, sizeof(double), cmp_double);					\
  printf("%-24s %10.1f\n", name, r_[2]);					\
  perf_stop(name, 5.0 * (qs).n);						\
} while (0)

#define BENCH(name, qs, expr) do {						\
  BENCH_ONE(name, qs, expr, 1);							\
  BENCH_ONE(name "_tput", qs, expr, 0);						\
} while (0)

/*
 * Count mode. Each operation runs over its query set in a function of its
 * own, twice: warm_NAME() first (caches, branch history and the filter's
 * upkeep policy settle as in bench mode), then count_NAME(), the one that
 * callgrind collects. The order follows bench mode; misses are counted
 * again once the policy has built the filter. Hits are counted on
 * a FIB that is never asked anything else (no lookup has missed there: no
 * filter, the path of a table that only imports) and on the fib table's, whose filter the
 * misses of the query generation built (a filter that fib_find() keeps
 * counting for but does not ask while hits dominate).
 */
/* Kept apart: not inlined, cloned or folded with their identical twins */
#define NOINLINE __attribute__((noipa))

#define COUNT_OP(name, qs, expr)						\
  static NOINLINE uintptr_t warm_##name(void) {				\
    uintptr_t acc = 0;								\
    for (uint i = 0; i < (qs).n; i++) { const net_addr *q = &(qs).q[i].n; u32 asn = (qs).asn[i]; \
      (void) asn; acc += (uintptr_t) (expr); }					\
    return acc; }								\
  static NOINLINE uintptr_t count_##name(void) {				\
    uintptr_t acc = 0;								\
    for (uint i = 0; i < (qs).n; i++) { const net_addr *q = &(qs).q[i].n; u32 asn = (qs).asn[i]; \
      (void) asn; acc += (uintptr_t) (expr); }					\
    return acc; }

COUNT_OP(fib_find_hit_dormant, hit, fib_find(&td->fib, q))
COUNT_OP(fib_find_hit, hit, fib_find(&tf->fib, q))
COUNT_OP(fib_find_miss, miss, fib_find(&tf->fib, q))
COUNT_OP(fib_find_miss_filter_built, miss, fib_find(&tf->fib, q))
COUNT_OP(fib_find_hit_after_misses, hit, fib_find(&tf->fib, q))
COUNT_OP(fib_find_mixed, mixed, fib_find(&tf->fib, q))
COUNT_OP(net_route_in, in, net_route(tf, q))
COUNT_OP(net_route_in_trie, in, net_route(tt, q))
COUNT_OP(net_route_random, any, net_route(tf, q))
COUNT_OP(net_route_random_trie, any, net_route(tt, q))
COUNT_OP(fib_route_in, in, fib_route(&tf->fib, q))
COUNT_OP(roa_check, roa, net_roa_check(tr, q, asn))
COUNT_OP(roa_check_trie, roa, net_roa_check(trt, q, asn))

#ifdef BLOOMBIRD
/*
 * Lookups in the trie tables until they are what a busy table would be:
 * the IP table's filter built by the policy (a table with a trie lets its
 * trie lead only while it has none, and counts those lookups towards
 * building one: fib_bloom_trie_leads()), the ROA table's index built by
 * its first check (fib-roa.c; it needs no filter).
 */
static int
trie_tables_ready(void)
{ return fib_bloom_active(tt->fib.bloom) && trt->fib.bloom->roa; }

static void
warm_trie_tables(void)
{
  uint k;
  for (k = 0; (k < 64) && !trie_tables_ready(); k++)
    for (uint i = 0; i < in.n; i++)
    {
      sink += (uintptr_t) net_route(tt, &in.q[i].n);
      sink += net_roa_check(trt, &roa.q[i].n, roa.asn[i]);
    }

  fprintf(stderr, "fibtool: trie tables' filter and ROA index %s after %u passes\n",
	  trie_tables_ready() ? "built" : "NOT built", k);
}
#endif

/*
 * What BIRD's main loop does between reads: run the scheduled events
 * (bloombird's incremental FIB rehash moves buckets there; stock has none).
 * The insert, delete and grow loops run them every %EVENTS_EVERY updates,
 * as the loop would between reads of a BGP session, counted in the time;
 * run_events() settles a table before lookups.
 */
#define EVENTS_EVERY	64

static inline int
events_due(uint i)
{ return (i % EVENTS_EVERY) == EVENTS_EVERY - 1; }

static void
run_events(void)
{
  while (ev_run_list(&global_event_list))
    ;
}

/* The whole table into a fresh FIB, then out again */
static NOINLINE uintptr_t
count_fib_get_insert(rtable *tx)
{
  uintptr_t acc = 0;
  for (uint i = 0; i < nets_n; i++)
  {
    acc += (uintptr_t) fib_get(&tx->fib, &nets[i].n);
    if (events_due(i))
      ev_run_list(&global_event_list);
  }
  return acc;
}

static NOINLINE uintptr_t
count_fib_find_delete(rtable *tx)
{
  uintptr_t acc = 0;
  for (uint i = 0; i < nets_n; i++)
  {
    void *n = fib_find(&tx->fib, &nets[i].n);
    acc += (uintptr_t) n;
    if (n)
      fib_delete(&tx->fib, n);
    if (events_due(i))
      ev_run_list(&global_event_list);
  }
  return acc;
}

/*
 * Pair mode. One round of one operation per request, so that a driver can
 * alternate the stock and the patched build round by round and compare
 * each round with its neighbour: on a shared VM whose speed drifts by tens
 * of percent within minutes, the ratio of two adjacent rounds is steadier
 * than the ratio of two medians taken minutes apart. Same loops as
 * BENCH_ONE().
 */
#define ROUND_OP(name, qs, expr, dep)						\
  static NOINLINE double round_##name(void) {					\
    double t0_ = now_ns(); uintptr_t acc_ = 0, last_ = 0;			\
    for (uint i = 0; i < (qs).n; i++) {						\
      uint j_ = (i + (dep ? (last_ & zero) : 0)) % (qs).n;			\
      const net_addr *q = &(qs).q[j_].n; u32 asn = (qs).asn[j_]; (void) asn;	\
      last_ = (uintptr_t) (expr); acc_ += last_; }				\
    sink += acc_;								\
    return (now_ns() - t0_) / (qs).n; }

#define ROUND_OPS(name, qs, expr)						\
  ROUND_OP(name, qs, expr, 1)							\
  ROUND_OP(name##_tput, qs, expr, 0)

ROUND_OPS(fib_find_hit_dormant, hit, fib_find(&td->fib, q))
ROUND_OPS(fib_find_hit, hit, fib_find(&tf->fib, q))
ROUND_OPS(fib_find_miss, miss, fib_find(&tf->fib, q))
ROUND_OPS(fib_find_mixed, mixed, fib_find(&tf->fib, q))
ROUND_OPS(net_route_in, in, net_route(tf, q))
ROUND_OPS(net_route_in_trie, in, net_route(tt, q))
ROUND_OPS(net_route_random, any, net_route(tf, q))
ROUND_OPS(net_route_random_trie, any, net_route(tt, q))
ROUND_OPS(fib_route_in, in, fib_route(&tf->fib, q))
ROUND_OP(roa_check, roa, net_roa_check(tr, q, asn), 0)
ROUND_OP(roa_check_trie, roa, net_roa_check(trt, q, asn), 0)

/* The whole table into a fresh FIB (timed), then out again (not timed) */
static NOINLINE double
round_fib_get_insert(void)
{
  pool *px = rp_new(&root_pool, "churn");
  rtable *tx = new_table(px, churn_type, 0);
  double t0 = now_ns();
  sink += count_fib_get_insert(tx);
  double t = (now_ns() - t0) / nets_n;
  rfree(px);
  return t;
}

/* The whole table into a fresh FIB (not timed), then out again (timed) */
static NOINLINE double
round_fib_find_delete(void)
{
  pool *px = rp_new(&root_pool, "churn");
  rtable *tx = new_table(px, churn_type, 0);
  sink += count_fib_get_insert(tx);
  run_events();
  double t0 = now_ns();
  sink += count_fib_find_delete(tx);
  double t = (now_ns() - t0) / nets_n;
  rfree(px);
  return t;
}

static int
pair_serve(void)
{
#define OP(name) { #name, round_##name }
#define OPS(name) OP(name), OP(name##_tput)
  static const struct { const char *name; double (*round)(void); } ops[] = {
    OPS(fib_find_hit_dormant), OPS(fib_find_hit), OPS(fib_find_miss), OPS(fib_find_mixed),
    OPS(net_route_in), OPS(net_route_in_trie), OPS(net_route_random),
    OPS(net_route_random_trie), OPS(fib_route_in), OP(roa_check), OP(roa_check_trie),
    OP(fib_get_insert), OP(fib_find_delete),
  };
#undef OPS
#undef OP

  /* The operations, in bench order, then one answer per request */
  printf("ops");
  for (uint i = 0; i < ARRAY_SIZE(ops); i++)
    printf(" %s", ops[i].name);
  printf("\n");
  fflush(stdout);

  /* "NAME [PASSES]": that many passes over the operation's queries, the mean */
  char line[80], name[64];
  while (fgets(line, sizeof(line), stdin))
  {
    uint passes = 1, i = 0;
    if ((sscanf(line, "%63s %u", name, &passes) < 1) || !passes || (passes > 1000))
    {
      printf("error bad request\n");
      fflush(stdout);
      continue;
    }
    while ((i < ARRAY_SIZE(ops)) && strcmp(ops[i].name, name))
      i++;
    if (i == ARRAY_SIZE(ops))
      printf("error unknown operation '%s'\n", name);
    else
    {
      double t = 0;
      for (uint k = 0; k < passes; k++)
	t += ops[i].round();	/* The filters' policy runs inside, as in bench mode */
      printf("%s %.2f\n", ops[i].name, t / passes);
    }
    fflush(stdout);
  }
  return 0;
}

static int
count_all(uint nq)
{
#define RUN(name) do { sink += warm_##name(); sink += count_##name(); printf("%-26s %u\n", #name, nq); } while (0)
  RUN(fib_find_hit_dormant);
  RUN(fib_find_hit);
  RUN(fib_find_miss);
#ifdef BLOOMBIRD
  /* More misses, until the policy builds the filter (IPv4 needs more than one pass) */
  for (int k = 0; (k < 64) && !fib_bloom_active(tf->fib.bloom); k++)
    sink += warm_fib_find_miss();
  printf("# fib filter %s\n", fib_bloom_active(tf->fib.bloom) ? "built" : "not built");
#endif
  RUN(fib_find_miss_filter_built);
  RUN(fib_find_hit_after_misses);
  RUN(fib_find_mixed);
  RUN(net_route_in);
  RUN(net_route_in_trie);
  RUN(net_route_random);
  RUN(net_route_random_trie);
  RUN(fib_route_in);
  RUN(roa_check);
  RUN(roa_check_trie);
#undef RUN

  /* Churn: once to warm up, once counted */
  for (int k = 0; k < 2; k++)
  {
    pool *px = rp_new(&root_pool, "churn");
    rtable *tx = new_table(px, churn_type, 0);
    if (!k)
    {
      for (uint i = 0; i < nets_n; i++)
	sink += (uintptr_t) fib_get(&tx->fib, &nets[i].n);
      for (uint i = 0; i < nets_n; i++)
	fib_delete(&tx->fib, fib_find(&tx->fib, &nets[i].n));
    }
    else
    {
      sink += count_fib_get_insert(tx);
      sink += count_fib_find_delete(tx);
    }
    rfree(px);
  }
  printf("%-26s %u\n%-26s %u\n", "fib_get_insert", nets_n, "fib_find_delete", nets_n);
  return 0;
}

/*
 * Grow mode: single inserts slower than 1 ms, with the FIB's size then, and
 * the longest run of the events (every %EVENTS_EVERY inserts).
 */
static int
grow(uint type)
{
  rtable *t = new_table(rp_new(&root_pool, "grow"), type, 0);
  double worst_get = 0, worst_ev = 0;

  for (uint i = 0; i < nets_n; i++)
  {
    double t0 = now_ns();
    fib_get(&t->fib, &nets[i].n);
    double dt = now_ns() - t0;
    worst_get = MAX(worst_get, dt);

    if (dt > 1e6)
      printf("fib_get %u took %.1f ms (hash table now %u buckets)\n",
	     i + 1, dt / 1e6, t->fib.hash_size);

    if (events_due(i))
    {
      t0 = now_ns();
      ev_run_list(&global_event_list);
      dt = now_ns() - t0;
      worst_ev = MAX(worst_ev, dt);
      if (dt > 1e6)
	printf("events after fib_get %u took %.1f ms\n", i + 1, dt / 1e6);
    }
  }
  printf("longest fib_get %.3f ms, longest event run %.3f ms, %u entries, %u buckets\n",
	 worst_get / 1e6, worst_ev / 1e6, t->fib.entries, t->fib.hash_size);
  return 0;
}

/*
 * fibtool roa 4|6 ROAS SEED QUERIES [count] -- ROA validation as an import
 * does it, on a real ROA set and real routes (tests/bench/roa-checks): ROAS
 * holds BIRD static lines (route P/L max M as A;), QUERIES "P/L ASN" lines,
 * the networks and origins of a feed in its order (tests/bench/roa/mkroa.py
 * writes both). Two ROA tables as a configuration would have them, without
 * and with `trie on`, filled in the file's order; nothing pinned, so
 * bloombird's filter and ROA index come when its policy builds them, as in
 * the daemon. Prints the verdict counts of each table, the first pass over
 * the queries (what an import pays: the policy's builds included) and the
 * median of 5 more (steady state), ns per check. With `count', the first
 * pass and one steady pass run in count_roa_first_*() and
 * count_roa_steady_*(), for callgrind (tests/bench/roa-checks collects each).
 */
static void
roa_read(rtable *t, rtable *tt, const char *name)
{
  FILE *f = fopen(name, "r");
  if (!f)
    die("cannot open %s", name);

  char line[256], px[128];
  uint len, max, asn, n = 0;
  while (fgets(line, sizeof(line), f))
  {
    if (sscanf(line, "route %127[^/]/%u max %u as %u", px, &len, &max, &asn) != 4)
      continue;

    net_addr_union r;
    if (!v6)
    {
      ip4_addr a;
      if (!ip4_pton(px, &a) || (len > 32) || (max > 32))
	die("%s: bad ROA line %s", name, line);
      net_fill_roa4(&r.n, a, len, max, asn);
    }
    else
    {
      ip6_addr a;
      if (!ip6_pton(px, &a) || (len > 128) || (max > 128))
	die("%s: bad ROA line %s", name, line);
      net_fill_roa6(&r.n, a, len, max, asn);
    }
    table_add(t, &r.n);
    table_add(tt, &r.n);
    n++;
  }
  fclose(f);
  fprintf(stderr, "fibtool: %u ROAs from %s\n", n, name);
}

static struct qset
roa_queries(const char *name)
{
  FILE *f = fopen(name, "r");
  if (!f)
    die("cannot open %s", name);

  uint cap = 1 << 16;
  struct qset s = qset_new(cap);
  s.n = 0;

  char line[256], px[128];
  uint len, asn;
  while (fgets(line, sizeof(line), f))
  {
    if (sscanf(line, "%127[^/]/%u %u", px, &len, &asn) != 3)
      continue;
    if (s.n == cap)
    {
      cap *= 2;
      s.q = realloc(s.q, cap * sizeof(net_addr_union));
      s.asn = realloc(s.asn, cap * sizeof(u32));
    }

    net_addr_union *q = &s.q[s.n];
    if (!v6)
    {
      ip4_addr a;
      if (!ip4_pton(px, &a) || (len > 32))
	die("%s: bad query line %s", name, line);
      net_fill_ip4(&q->n, a, len);
    }
    else
    {
      ip6_addr a;
      if (!ip6_pton(px, &a) || (len > 128))
	die("%s: bad query line %s", name, line);
      net_fill_ip6(&q->n, a, len);
    }
    s.asn[s.n++] = asn;
  }
  fclose(f);
  return s;
}

COUNT_OP(roa_first_fib, roa, net_roa_check(tr, q, asn))
COUNT_OP(roa_first_trie, roa, net_roa_check(trt, q, asn))
COUNT_OP(roa_steady_fib, roa, net_roa_check(tr, q, asn))
COUNT_OP(roa_steady_trie, roa, net_roa_check(trt, q, asn))

static void
roa_verdicts(rtable *t, uint c[3])
{
  c[0] = c[1] = c[2] = 0;
  for (uint i = 0; i < roa.n; i++)
  {
    int v = net_roa_check(t, &roa.q[i].n, roa.asn[i]);
    c[(v == ROA_VALID) ? 0 : (v == ROA_INVALID) ? 1 : 2]++;
  }
}

static double
roa_pass(rtable *t)
{
  double t0 = now_ns();
  uintptr_t acc = 0;
  for (uint i = 0; i < roa.n; i++)
    acc += net_roa_check(t, &roa.q[i].n, roa.asn[i]);
  sink += acc;
  return (now_ns() - t0) / roa.n;
}

static int
roa_real(int argc, char *argv[])
{
  if (argc < 6)
    die("usage: fibtool roa 4|6 ROAS SEED QUERIES [count]");

  int count = (argc > 6) && !strcmp(argv[6], "count");
  uint type = v6 ? NET_ROA6 : NET_ROA4;
  pool *p = rp_new(&root_pool, "fibtool");
  tr = new_table(p, type, 0);
  trt = new_table(p, type, 1);
  roa_read(tr, trt, argv[3]);
  run_events();
  roa = roa_queries(argv[5]);
  fprintf(stderr, "fibtool: %u queries from %s\n", roa.n, argv[5]);

  if (count)
  {
    sink += count_roa_first_fib();
    sink += count_roa_first_trie();
    sink += warm_roa_steady_fib() + warm_roa_steady_trie();
    sink += count_roa_steady_fib();
    sink += count_roa_steady_trie();
  }

  /* First passes: the table as the import finds it (in count mode already warm) */
  double first[2] = { roa_pass(tr), roa_pass(trt) };
  double r[2][5];
  for (uint k = 0; k < 5; k++)
  {
    r[0][k] = roa_pass(tr);
    r[1][k] = roa_pass(trt);
  }

  uint c[2][3];
  roa_verdicts(tr, c[0]);
  roa_verdicts(trt, c[1]);

  for (uint i = 0; i < 2; i++)
  {
    qsort(r[i], 5, sizeof(double), cmp_double);
    printf("%-14s verdicts %u/%u/%u first %.1f steady %.1f ns\n", i ? "roa_real_trie" : "roa_real",
	   c[i][0], c[i][1], c[i][2], first[i], r[i][2]);
  }
#ifdef BLOOMBIRD
  for (rtable **t = (rtable *[]) { tr, trt, NULL }; *t; t++)
    fprintf(stderr, "fibtool: %s table: filter %s, ROA index %s\n", (*t)->trie ? "trie" : "fib",
	    fib_bloom_active((*t)->fib.bloom) ? "active" : "not active", (*t)->fib.bloom->roa ? "built" : "none");
#endif
  return 0;
}

int
main(int argc, char *argv[])
{
  if (argc < 5)
    die("usage: fibtool diff|bench|pair|count|grow 4|6 TABLE SEED; fibtool roa 4|6 ROAS SEED QUERIES [count]");

  int count = !strcmp(argv[1], "count");
  int pair = !strcmp(argv[1], "pair");
  int bench = count || pair || !strcmp(argv[1], "bench");
  v6 = (argv[2][0] == '6');
  rs = strtoull(argv[4], NULL, 10) * 0x9e3779b97f4a7c15ULL + 1;
  zero = (argc > 99);		/* 0, unknown to the compiler */

  bt_init(1, (char *[]) { argv[0], NULL });
  bt_bird_init();
  config = config_alloc("");	/* ev_run_list() logs events by the configuration */
#ifdef FIB_REHASH_INCREMENTAL
  /* Ablation: stock's one-shot rehash for every FIB */
  if (getenv("FIBTOOL_REHASH_ONESHOT"))
    fib_rehash_min_order = 99;
#endif
  if (!strcmp(argv[1], "roa"))
    return roa_real(argc, argv);

  read_table(argv[3]);

  uint type = v6 ? NET_IP6 : NET_IP4;
  if (!strcmp(argv[1], "grow"))
    return grow(type);

  pool *p = rp_new(&root_pool, "fibtool");
  pool *pf = rp_new(p, "fib only");
  tf = new_table(pf, type, 0);
  tt = new_table(p, type, 1);
  td = new_table(p, type, 0);
  tr = new_table(p, v6 ? NET_ROA6 : NET_ROA4, 0);
  trt = new_table(p, v6 ? NET_ROA6 : NET_ROA4, 1);
  churn_type = type;

  for (uint i = 0; i < nets_n; i++)
  {
    net_addr_union r;
    table_add(tf, &nets[i].n);
    table_add(tt, &nets[i].n);
    if (bench || count)
      table_add(td, &nets[i].n);
    roa_of(&r, &nets[i], i);
    table_add(tr, &r.n);
    table_add(trt, &r.n);

    /* Diff mode: a second ROA (another origin, no longer) for every 4th prefix */
    if (!bench && !(i % 4))
    {
      roa_second(&r, &nets[i], i);
      table_add(tr, &r.n);
      table_add(trt, &r.n);
    }
  }

  /* Settled, as in the daemon: rehashes in progress finish between reads */
  run_events();

#ifdef BLOOMBIRD
  const char *engine = getenv("FIBTOOL_LPM");
  if (engine && *engine)
  {
    struct rt_lpm_config lc = { .class = lpm_class_find(engine), .variant = LPM_VAR_AUTO };
    if (!lc.class)
      die("no LPM engine %s", engine);
    rt_lpm_configure(tf, &lc);
    rt_lpm_configure(tt, &lc);
    rt_lpm_configure(tr, &lc);	/* ROA checks; trt keeps the trie walk */
    if (!tf->lpm || !tt->lpm || !tr->lpm)
      die("LPM engine %s could not be built", engine);
    fprintf(stderr, "fibtool: lpm engine %s, variant %s\n", engine, lpm_variant_names[tf->lpm->e->variant]);
  }

  if (!bench && !getenv("FIBTOOL_ADAPTIVE"))
    for (rtable **t = (rtable *[]) { tf, tt, tr, trt, NULL }; *t; t++)
      fib_bloom_pin(&(*t)->fib, 1);
#endif
  uint entries = tf->fib.entries;

  /* Queries: as many as prefixes in diff mode, a sample in bench mode */
  uint nq = count ? MIN(entries, 50000U) : bench ? MIN(entries, 200000U) : entries;
  hit = qset_new(nq), miss = qset_new(nq), in = qset_new(nq), any = qset_new(nq), roa = qset_new(nq);
  mixed = qset_new(nq);
  for (uint i = 0; i < nq; i++)
  {
    uint j = rnd_n(nets_n);
    hit.q[i] = nets[j];
    do prefix_random(&miss.q[i]); while (bench && fib_find(&tf->fib, &miss.q[i].n));
    addr_in(&in.q[i], &nets[rnd_n(nets_n)]);
    addr_random(&any.q[i]);

    /* ROA check: a table prefix or a longer one inside it, some origin */
    const net_addr_union *b = &nets[rnd_n(nets_n)];
    uint longer = rnd_n(4);	/* Drawn once: MIN() evaluates its arguments twice */
    uint len = MIN(b->n.pxlen + longer, v6 ? 128U : 32U);
    addr_in(&roa.q[i], b);
    if (!v6)
      net_fill_ip4(&roa.q[i].n, ip4_and(roa.q[i].ip4.prefix, ip4_mkmask(len)), len);
    else
      net_fill_ip6(&roa.q[i].n, ip6_and(roa.q[i].ip6.prefix, ip6_mkmask(len)), len);
    roa.asn[i] = (i & 7) ? 64496 + rnd_n(ROA_ASNS + 2) : 0;
  }

  /* A quarter misses among hits, scattered by a hash of the index (no
   * period a branch predictor could learn; the other sets' draws stay) */
  for (uint i = 0; i < nq; i++)
    mixed.q[i] = ((i * 2654435761u) >> 30) ? hit.q[i] : miss.q[i];

  if (!bench)
  {
    printf("# %s entries %u\n", v6 ? "ipv6" : "ipv4", entries);
    for (uint i = 0; i < nq; i++)
    {
      printf("H %s %s\n", net_str(fib_find(&tf->fib, &hit.q[i].n)), net_str(net_route(tt, &hit.q[i].n)));
      printf("M %s %s\n", net_str(fib_find(&tf->fib, &miss.q[i].n)), net_str(fib_route(&tf->fib, &miss.q[i].n)));
      printf("I %s %s %s\n", net_str(net_route(tf, &in.q[i].n)), net_str(net_route(tt, &in.q[i].n)),
	     net_str(fib_route(&tf->fib, &in.q[i].n)));
      printf("A %s %s %s\n", net_str(net_route(tf, &any.q[i].n)), net_str(net_route(tt, &any.q[i].n)),
	     net_str(fib_route(&tf->fib, &any.q[i].n)));
      printf("R %d %d %d\n", net_roa_check(tr, &roa.q[i].n, roa.asn[i]), net_roa_check(tr, &roa.q[i].n, 0),
	     net_roa_check(trt, &roa.q[i].n, roa.asn[i]));
      printf("U %d %d\n", net_roa_check(tr, &any.q[i].n, roa.asn[i]), net_roa_check(trt, &any.q[i].n, roa.asn[i]));
      tmp_flush();
    }

    /* Out-of-range lengths (/33-/40, /129-/136): whatever stock answers */
    uint max = v6 ? IP6_MAX_PREFIX_LENGTH : IP4_MAX_PREFIX_LENGTH;
    uint nout = getenv("FIBTOOL_IN_RANGE_ONLY") ? 0 : MIN(nq, 20000U);
    for (uint i = 0; i < nout; i++)
    {
      net_addr_union q = nets[rnd_n(nets_n)];
      q.n.pxlen = max + 1 + rnd_n(8);
      u32 asn = 64496 + rnd_n(ROA_ASNS);
      printf("O %s %s %s %d\n", net_str(fib_route(&tf->fib, &q.n)), net_str(net_route(tf, &q.n)),
	     net_str(net_route(tt, &q.n)), net_roa_check(tr, &q.n, asn));
      tmp_flush();
    }

    /* Host bits set past the length (a table prefix and one bit): whatever stock answers */
    for (uint i = 0; i < nout; i++)
    {
      net_addr_union q = nets[rnd_n(nets_n)];
      u32 asn = 64496 + rnd_n(ROA_ASNS);
      if (q.n.pxlen < max)
      {
	uint bit = q.n.pxlen + rnd_n(max - q.n.pxlen);
	if (v6)
	  ip6_setbit(&q.ip6.prefix, bit);
	else
	  ip4_setbit(&q.ip4.prefix, bit);
      }
      printf("N %s %s %s %s %d %d\n", tmp_sprintf("%N", &q.n), net_str(fib_route(&tf->fib, &q.n)), net_str(net_route(tf, &q.n)),
	     net_str(net_route(tt, &q.n)), net_roa_check(tr, &q.n, asn), net_roa_check(trt, &q.n, asn));
      tmp_flush();
    }

    /*
     * ROA churn: a third of the ROAs (and of the second ROAs) lose their
     * route, then half of those get it back; the same checks after each
     * (ROA prefixes leaving and coming back, ROA prefixes keeping one of
     * two ROAs)
     */
    uint nc = MIN(nq, 50000U);
    for (int phase = 0; phase < 2; phase++)
    {
      for (uint i = 0; i < nets_n; i++)
	if (!roa_pick(i, 7, 3) && (!phase || !roa_pick(i, 11, 2)))
	{
	  net_addr_union r;
	  roa_of(&r, &nets[i], i);
	  roa_set(&r.n, phase);
	  if (!(i % 4) && !roa_pick(i, 13, 3))
	  {
	    roa_second(&r, &nets[i], i);
	    roa_set(&r.n, phase);
	  }
	}

      for (uint i = 0; i < nc; i++)
      {
	printf("%c %d %d %d %d\n", phase ? 'B' : 'W', net_roa_check(tr, &roa.q[i].n, roa.asn[i]),
	       net_roa_check(tr, &roa.q[i].n, 0), net_roa_check(tr, &any.q[i].n, roa.asn[i]),
	       net_roa_check(trt, &roa.q[i].n, roa.asn[i]));
	tmp_flush();
      }
    }

#ifdef BLOOMBIRD
    fprintf(stderr, "fibtool: trie tables' filters at the end: %s, %s\n",
	    fib_bloom_active(tt->fib.bloom) ? "built" : "none", fib_bloom_active(trt->fib.bloom) ? "built" : "none");
    for (rtable **t = (rtable *[]) { tr, trt, NULL }; *t; t++)
      if ((*t)->fib.bloom->roa)
	fprintf(stderr, "fibtool: ROA index of the %s ROA table: %u prefixes, %lu checks through it\n",
		(*t)->trie ? "trie" : "fib", (*t)->fib.bloom->roa->groups, (*t)->fib.bloom->roa->checks);
    if (tr->lpm)
      fprintf(stderr, "fibtool: engine answers: %lu net_route, %lu net_route with a trie, %lu ROA checks\n",
	      tf->lpm->lookups, tt->lpm->lookups, tr->lpm->lookups);
#endif
    return 0;
  }

#ifdef BLOOMBIRD
  /* Timed lookups in the trie tables run where the upkeep policy settles
   * after many of them: with their filters built */
  warm_trie_tables();
#endif

  if (count)
    return count_all(nq);

  if (pair)
    return pair_serve();

  /* Bench: memory first, then lookups, then churn */
  printf("# %s entries %u queries %u\n", v6 ? "ipv6" : "ipv4", entries, nq);
  perf_open();
  printf("%-24s %10.1f\n", "mem_fib_B_per_prefix", (double) rmemsize(pf).effective / entries);
#ifdef BLOOMBIRD
  printf("%-24s %10.1f\n", "mem_filter_B_per_prefix",
	 (double) (fib_filter_size(&tf->fib.bloom->filter) + fib_guards_size(&tf->fib.bloom->guards)) / entries);
  struct fib_bloom *fb = tf->fib.bloom;
  u64 n0 = fb->filter.negatives, fp0 = fb->filter.false_pos;
#else
  printf("%-24s %10.1f\n", "mem_filter_B_per_prefix", 0.0);
#endif

  BENCH("fib_find_hit_dormant", hit, fib_find(&td->fib, q));
  BENCH("fib_find_hit", hit, fib_find(&tf->fib, q));
  BENCH("fib_find_miss", miss, fib_find(&tf->fib, q));
#ifdef BLOOMBIRD
  u64 neg = fb->filter.negatives - n0, fp = fb->filter.false_pos - fp0;
  printf("%-24s %10.6f\n", "fpr_measured", neg + fp ? (double) fp / (neg + fp) : 0.0);
#else
  printf("%-24s %10.6f\n", "fpr_measured", 0.0);
#endif
  BENCH("fib_find_mixed", mixed, fib_find(&tf->fib, q));
  BENCH("net_route_in", in, net_route(tf, q));
  BENCH("net_route_in_trie", in, net_route(tt, q));
  BENCH("net_route_random", any, net_route(tf, q));
  BENCH("net_route_random_trie", any, net_route(tt, q));
  BENCH("fib_route_in", in, fib_route(&tf->fib, q));
  for (int trie = 0; trie < 2; trie++)
  {
    rtable *t = trie ? trt : tr;
    double r[5];
    perf_start();
    for (int k = 0; k < 5; k++)
    {
      double t0 = now_ns();
      for (uint i = 0; i < roa.n; i++)
	sink += net_roa_check(t, &roa.q[i].n, roa.asn[i]);
      r[k] = (now_ns() - t0) / roa.n;
    }
    qsort(r, 5, sizeof(double), cmp_double);
    printf("%-24s %10.1f\n", trie ? "roa_check_trie" : "roa_check", r[2]);
    perf_stop(trie ? "roa_check_trie" : "roa_check", 5.0 * roa.n);
  }

  /* Insert and delete: a fresh FIB of the whole table, 5 times */
  {
    double ins[5], del[5];
    for (int k = 0; k < 5; k++)
    {
      pool *px = rp_new(p, "churn");
      rtable *tx = new_table(px, type, 0);
      double t0 = now_ns();
      for (uint i = 0; i < nets_n; i++)
	sink += (uintptr_t) fib_get(&tx->fib, &nets[i].n);
      ins[k] = (now_ns() - t0) / nets_n;

      t0 = now_ns();
      for (uint i = 0; i < nets_n; i++)
      {
	void *n = fib_find(&tx->fib, &nets[i].n);
	if (n)
	  fib_delete(&tx->fib, n);
      }
      del[k] = (now_ns() - t0) / nets_n;
      rfree(px);
    }
    qsort(ins, 5, sizeof(double), cmp_double);
    qsort(del, 5, sizeof(double), cmp_double);
    printf("%-24s %10.1f\n", "fib_get_insert", ins[2]);
    printf("%-24s %10.1f\n", "fib_find_delete", del[2]);
  }

  return 0;
}
