/*
 *	bloombird -- `show lpm': tables' LPM engines and their speed
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/cli.h"
#include "nest/lpm.h"
#include "nest/rt-lpm.h"
#include "lib/string.h"
#include "lib/timer.h"

#include <time.h>

#define CLI_LPM 1028

static void
rt_lpm_show_one(struct cli *c, rtable *t)
{
  struct rt_lpm *l = t->lpm;

  cli_printf(c, -CLI_LPM, "Table %s (%s):", t->name, net_label[t->addr_type]);
  if (!l)
  {
    cli_printf(c, -CLI_LPM, "  Engine:           none (lookups through the FIB%s)", t->trie ? " and its trie" : "");
    return;
  }

  struct lpm_stats s;
  lpm_stats(l->e, &s);

  cli_printf(c, -CLI_LPM, "  Engine:           %s, variant %s%s", l->e->class->name,
	     lpm_variant_names[l->e->variant], l->stale ? " (stale after a failed update: not asked until rebuilt)" : "");
  if (l->roa)
    cli_printf(c, -CLI_LPM, "  Prefixes:         %lu (distinct ROA prefixes with a valid ROA; covering prefix found %lu times)",
	       s.prefixes, l->roa->ups);
  else
    cli_printf(c, -CLI_LPM, "  Prefixes:         %lu (nets with a valid best route)", s.prefixes);
  cli_printf(c, -CLI_LPM, "  Memory:           %lu bytes for lookups, %lu for updates; %lu units, %lu retired",
	     s.mem_lookup, s.mem_control, s.units, s.retired);
  cli_printf(c, -CLI_LPM, "  Memory in all:    %lu bytes (engine and table side: %s)",
	     rmemsize(l->pool).effective, l->roa ? "ROA prefix groups with their ROAs" : "net slots");
  cli_printf(c, -CLI_LPM, "  Updates:          %lu from the table, %lu applied by the engine, %lu failed",
	     l->updates, s.updates, l->failures);
  cli_printf(c, -CLI_LPM, "  Last build:       %t ago, took %t s", current_time() - l->built, l->build_time);
  if (l->roa)
    cli_printf(c, -CLI_LPM, "  Lookups:          %lu ROA checks answered", l->lookups);
  else
    cli_printf(c, -CLI_LPM, "  Lookups:          %lu answered, %lu left to the filter path (query shorter than the match)",
	       l->lookups, l->fallbacks);

  if (l->e->class->show)
    l->e->class->show(l->e, c, -CLI_LPM);
}

/**
 * rt_lpm_show - show lpm [<table>]
 * @c: CLI
 * @tc: table, NULL for all
 */
void
rt_lpm_show(struct cli *c, struct rtable_config *tc)
{
  if (tc)
  {
    if (!tc->table)
      cf_error("Table %s is not running", tc->name);
    rt_lpm_show_one(c, tc->table);
  }
  else
  {
    rtable *t;
    node *n;
    int first = 1;
    WALK_LIST2(t, n, routing_tables, n)
    {
      if (!first)
	cli_printf(c, -CLI_LPM, "");
      first = 0;
      rt_lpm_show_one(c, t);
    }
  }

  cli_msg(0, "");
}

/*
 *	show lpm benchmark <table> [<count>]
 */

static u64
bench_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (u64) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static u64 bench_rng;
static inline u64
bench_rnd(void)
{
  bench_rng ^= bench_rng >> 12; bench_rng ^= bench_rng << 25; bench_rng ^= bench_rng >> 27;
  return bench_rng * 0x2545f4914f6cdd1dULL;
}

/* An address inside @n */
static void
bench_addr(net_addr_union *q, const net_addr *n)
{
  if (n->type == NET_IP4)
  {
    u32 m = ip4_to_u32(ip4_mkmask(n->pxlen));
    u32 a = (ip4_to_u32(net4_prefix(n)) & m) | ((u32) bench_rnd() & ~m);
    net_fill_ip4(&q->n, ip4_from_u32(a), IP4_MAX_PREFIX_LENGTH);
  }
  else
  {
    ip6_addr m = ip6_mkmask(n->pxlen);
    ip6_addr r = ip6_build(bench_rnd(), bench_rnd(), bench_rnd(), bench_rnd());
    net_fill_ip6(&q->n, ip6_or(ip6_and(net6_prefix(n), m), ip6_and(r, ip6_not(m))), IP6_MAX_PREFIX_LENGTH);
  }
}

static inline const net_addr *
bench_net(net_addr_union *q, int v6, const ip4_addr *a4, const ip6_addr *a6, uint i)
{
  if (v6)
    net_fill_ip6(&q->n, a6[i], IP6_MAX_PREFIX_LENGTH);
  else
    net_fill_ip4(&q->n, a4[i], IP4_MAX_PREFIX_LENGTH);
  return &q->n;
}

static void
bench_print(struct cli *c, const char *what, u64 ns, uint count)
{
  double per = (double) ns / count;
  cli_printf(c, -CLI_LPM, "  %-34s %8u.%u ns/lookup %8u.%u Mlps", what,
	     (uint) per, (uint) (per * 10) % 10,
	     (uint) (1000 / per), (uint) (10000 / per) % 10);
}

#define BENCH_BATCH 256

/**
 * rt_lpm_bench - time lookups inside the running daemon
 * @c: CLI
 * @tc: table
 * @count: number of lookups
 *
 * Addresses inside random prefixes of the table (drawn from its nets with a
 * valid route), looked up by every batch variant of the table's engine this
 * CPU runs, by single engine lookups, and by net_route() without the engine
 * (the filter path). The daemon does nothing else meanwhile; answers are
 * checked against each other, so a wrong variant shows as a mismatch.
 */
void
rt_lpm_bench(struct cli *c, struct rtable_config *tc, uint count)
{
  if (!tc->table)
    cf_error("Table %s is not running", tc->name);

  rtable *t = tc->table;
  struct rt_lpm *l = t->lpm;
  if (!l || l->stale)
    cf_error("Table %s has no usable LPM engine (lpm engine in its configuration)", tc->name);
  if (l->roa)
    cf_error("Table %s is a ROA table: its engine answers ROA checks, timed by make bench", tc->name);

  /* Nets with a valid route, then addresses inside random ones of them */
  pool *p = rp_new(t->rp, "LPM benchmark");
  uint nn = 0;
  net **nets = mb_alloc(p, MAX(t->fib.entries, 1) * sizeof(net *));
  FIB_WALK(&t->fib, net, n)
  {
    if (rte_is_valid(n->routes))
      nets[nn++] = n;
  }
  FIB_WALK_END;

  if (!nn)
  {
    rfree(p);
    cf_error("Table %s has no routes", tc->name);
  }

  int v6 = (t->addr_type == NET_IP6);
  ip4_addr *a4 = v6 ? NULL : mb_alloc(p, count * sizeof(ip4_addr));
  ip6_addr *a6 = v6 ? mb_alloc(p, count * sizeof(ip6_addr)) : NULL;
  u32 *ref = mb_alloc(p, count * sizeof(u32));
  u32 *val = mb_alloc(p, count * sizeof(u32));

  bench_rng = 0x9e3779b97f4a7c15ULL ^ current_time();
  for (uint i = 0; i < count; i++)
  {
    net_addr_union q;
    bench_addr(&q, nets[(uint) ((bench_rnd() >> 32) * nn >> 32)]->n.addr);
    if (v6)
      a6[i] = net6_prefix(&q.n);
    else
      a4[i] = net4_prefix(&q.n);
  }

  cli_printf(c, -CLI_LPM, "Table %s: %u lookups of addresses inside its %u routed prefixes", t->name, count, nn);

  /* Single lookups: the reference answers */
  u64 t0 = bench_now_ns();
  for (uint i = 0; i < count; i++)
    ref[i] = v6 ? lpm_lookup6(l->e, a6[i]) : lpm_lookup4(l->e, a4[i]);
  bench_print(c, tmp_sprintf("%s, single lookups", l->e->class->name), bench_now_ns() - t0, count);

  /* Batches, every variant this CPU runs */
  for (uint v = 0; v < LPM_VAR_MAX; v++)
  {
    lpm_bulk4_fn *b4 = l->e->class->bulk4[v];
    lpm_bulk6_fn *b6 = l->e->class->bulk6[v];
    if ((v6 ? !b6 : !b4) || (lpm_variant_select(v, l->e->class->variants) != (int) v))
      continue;

    t0 = bench_now_ns();
    for (uint i = 0; i < count; i += BENCH_BATCH)
    {
      uint k = MIN(BENCH_BATCH, count - i);
      if (v6)
	b6(l->e, a6 + i, val + i, k);
      else
	b4(l->e, a4 + i, val + i, k);
    }
    u64 dt = bench_now_ns() - t0;

    uint bad = 0;
    for (uint i = 0; i < count; i++)
      bad += (val[i] != ref[i]);

    bench_print(c, tmp_sprintf("%s, %s batches of %u%s", l->e->class->name, lpm_variant_names[v],
			       BENCH_BATCH, (v == l->e->variant) ? " (in use)" : ""), dt, count);
    if (bad)
      cli_printf(c, -CLI_LPM, "  MISMATCH: %u answers of %s differ from single lookups", bad, lpm_variant_names[v]);
  }

  /* net_route() with the engine, and without it (the filter path) */
  net_addr_union q;
  uintptr_t sink = 0;
  t0 = bench_now_ns();
  for (uint i = 0; i < count; i++)
    sink += (uintptr_t) net_route(t, bench_net(&q, v6, a4, a6, i));
  bench_print(c, "net_route() through the engine", bench_now_ns() - t0, count);

  t->lpm = NULL;
  rt_lpm_sync_walk(t);
  t0 = bench_now_ns();
  for (uint i = 0; i < count; i++)
    sink -= (uintptr_t) net_route(t, bench_net(&q, v6, a4, a6, i));
  u64 dt = bench_now_ns() - t0;
  t->lpm = l;
  rt_lpm_sync_walk(t);
  bench_print(c, tmp_sprintf("net_route() without it (%s)",
			     t->trie ? "stock trie walk" :
			     t->fib.bloom->state == FIB_BLOOM_OFF ? "stock loop" : "filter path"), dt, count);

  if (sink)
    cli_printf(c, -CLI_LPM, "  MISMATCH: net_route() answers differ with and without the engine");

  rfree(p);
  cli_msg(0, "");
}
