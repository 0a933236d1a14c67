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
#include "nest/cli-codes.h"

#include <time.h>


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

#define BENCH_BATCH	256
#define BENCH_SLICE	(10 * 1000000ULL)	/* ns of work per loop cycle */
#define BENCH_CHUNK	4096			/* lookups between clock reads */

enum bench_step {
  BS_DUMP,			/* The engine's prefixes */
  BS_ADDR,			/* Addresses inside random prefixes */
  BS_SINGLE,			/* Single engine lookups (the reference) */
  BS_BATCH,			/* Batches of variant @var */
  BS_ROUTE,			/* net_route() through the engine */
  BS_FILTER,			/* net_route() without it */
  BS_DONE,
};

struct bench {
  rtable *t;			/* Locked while the benchmark runs */
  struct rt_lpm *l;		/* Its engine when it began */
  struct config *cf;		/* The config it began on */
  pool *pool;
  uint count, nn, cap;
  u64 dump_pos;			/* BS_DUMP: where the engine's dump goes on */
  uint bad;			/* Answers of this step that differ */
  u64 updates;			/* The engine's updates when it began */
  int v6;
  enum bench_step step;
  uint var, pos;
  u64 ns;
  struct lpm_route *r;		/* The engine's prefixes */
  ip4_addr *a4;
  ip6_addr *a6;
  u32 *ref, *val;
  uintptr_t sink;
};

static int
bench_same(struct bench *b)
{
  struct lpm_stats st;
  lpm_stats(b->l->e, &st);
  return st.updates == b->updates;
}

static uint
bench_next_var(struct bench *b, uint v)
{
  const struct lpm_class *k = b->l->e->class;
  for (; v < LPM_VAR_MAX; v++)
    if ((b->v6 ? !!k->bulk6[v] : !!k->bulk4[v]) && (lpm_variant_select(v, k->variants) == (int) v))
      break;
  return v;
}

static void
bench_step(struct bench *b, enum bench_step s)
{
  b->step = s;
  b->pos = 0;
  b->ns = 0;
  b->bad = 0;
}

static void
bench_ops(struct bench *b, uint from, uint to)
{
  struct lpm_engine *e = b->l->e;
  net_addr_union q;

  switch (b->step)
  {
  case BS_DUMP:
  {
    uint want = MIN(to - from, b->cap - b->nn);
    uint got = lpm_dump_from(e, b->r + b->nn, want, &b->dump_pos);
    b->nn += got;
    if (got < want)
      b->cap = b->nn;		/* The dump is over */
    break;
  }

  case BS_ADDR:
    for (uint i = from; i < to; i++)
    {
      bench_addr(&q, &b->r[(uint) ((bench_rnd() >> 32) * b->nn >> 32)].n.n);
      if (b->v6)
	b->a6[i] = net6_prefix(&q.n);
      else
	b->a4[i] = net4_prefix(&q.n);
    }
    break;

  case BS_SINGLE:
    for (uint i = from; i < to; i++)
      b->ref[i] = b->v6 ? lpm_lookup6(e, b->a6[i]) : lpm_lookup4(e, b->a4[i]);
    break;

  case BS_BATCH:
    for (uint i = from; i < to; i += BENCH_BATCH)
    {
      uint k = MIN(BENCH_BATCH, to - i);
      if (b->v6)
	e->class->bulk6[b->var](e, b->a6 + i, b->val + i, k);
      else
	e->class->bulk4[b->var](e, b->a4 + i, b->val + i, k);
    }
    break;

  case BS_ROUTE:
    for (uint i = from; i < to; i++)
      b->sink += (uintptr_t) net_route(b->t, bench_net(&q, b->v6, b->a4, b->a6, i));
    break;

  case BS_FILTER:
    for (uint i = from; i < to; i++)
      b->sink -= (uintptr_t) net_route(b->t, bench_net(&q, b->v6, b->a4, b->a6, i));
    break;

  default:
    break;
  }
}

/* The step's lookups in chunks until the slice is used up; 1: step done */
static int
bench_chunks(struct bench *b, u64 *budget)
{
  /* The filter path: the table without its engine for this slice only */
  if (b->step == BS_FILTER)
  {
    b->t->lpm = NULL;
    rt_lpm_sync_walk(b->t);
  }

  uint n = (b->step == BS_DUMP) ? ~0U : b->count;
  while ((b->pos < n) && ((b->step != BS_DUMP) || (b->nn < b->cap)))
  {
    uint to = MIN(n, b->pos + BENCH_CHUNK);
    u64 t0 = bench_now_ns();
    bench_ops(b, b->pos, to);
    u64 t1 = bench_now_ns();
    if (b->step == BS_BATCH)
      for (uint i = b->pos; i < to; i++)
	b->bad += (b->val[i] != b->ref[i]);
    u64 dt = bench_now_ns() - t0;
    b->ns += t1 - t0;
    b->pos = to;
    if (dt >= *budget)
    {
      *budget = 0;
      break;
    }
    *budget -= dt;
  }

  if (b->step == BS_FILTER)
  {
    b->t->lpm = b->l;
    rt_lpm_sync_walk(b->t);
  }
  return (b->step == BS_DUMP) ? (b->nn >= b->cap) : (b->pos >= b->count);
}

/* One slice; 1: the benchmark is done */
static int
bench_slice(struct cli *c, struct bench *b)
{
  u64 budget = BENCH_SLICE;
  struct lpm_engine *e = b->l->e;

  while (budget)
  {
    if (b->step == BS_DONE)
      return 1;
    if (!bench_chunks(b, &budget))
      return 0;

    switch (b->step)
    {
    case BS_DUMP:
      if (!b->nn)
      {
	cli_printf(c, -CLI_LPM, "  (the table lost its routes meanwhile)");
	return 1;
      }
      cli_printf(c, -CLI_LPM, "Table %s: %u lookups of addresses inside its %u routed prefixes", b->t->name, b->count, b->nn);
      bench_step(b, BS_ADDR);
      break;

    case BS_ADDR:
      bench_step(b, BS_SINGLE);
      break;

    case BS_SINGLE:
      bench_print(c, tmp_sprintf("%s, single lookups", e->class->name), b->ns, b->count);
      b->var = bench_next_var(b, 0);
      bench_step(b, (b->var < LPM_VAR_MAX) ? BS_BATCH : BS_ROUTE);
      break;

    case BS_BATCH:
      bench_print(c, tmp_sprintf("%s, %s batches of %u%s", e->class->name, lpm_variant_names[b->var],
				 BENCH_BATCH, (b->var == e->variant) ? " (in use)" : ""), b->ns, b->count);
      if (b->bad && bench_same(b))
	cli_printf(c, -CLI_LPM, "  MISMATCH: %u answers of %s differ from single lookups", b->bad, lpm_variant_names[b->var]);
      uint v = bench_next_var(b, b->var + 1);
      bench_step(b, (v < LPM_VAR_MAX) ? BS_BATCH : BS_ROUTE);
      b->var = v;
      break;

    case BS_ROUTE:
      bench_print(c, "net_route() through the engine", b->ns, b->count);
      bench_step(b, BS_FILTER);
      break;

    case BS_FILTER:
      bench_print(c, tmp_sprintf("net_route() without it (%s)",
				 b->t->trie ? "stock trie walk" :
				 b->t->fib.bloom->state == FIB_BLOOM_OFF ? "stock loop" : "filter path"), b->ns, b->count);
      if (!bench_same(b))
	cli_printf(c, -CLI_LPM, "  (the table changed meanwhile: answers not compared)");
      else if (b->sink)
	cli_printf(c, -CLI_LPM, "  MISMATCH: net_route() answers differ with and without the engine");
      bench_step(b, BS_DONE);
      break;

    default:
      break;
    }
  }
  return b->step == BS_DONE;
}

static void
bench_cleanup(struct cli *c)
{
  struct bench *b = c->rover;
  rt_unlock_table(b->t);
  rfree(b->pool);
  c->rover = NULL;
}

static void
bench_cont(struct cli *c)
{
  struct bench *b = c->rover;

  if (b->cf != config)
    cli_printf(c, 8004, "Stopped due to reconfiguration");
  else if ((b->t->lpm != b->l) || b->l->stale)
    cli_printf(c, 8004, "Stopped: the table's engine was replaced");
  else if (!bench_slice(c, b))
    return;
  else
    cli_printf(c, 0, "");

  bench_cleanup(c);
  c->cont = c->cleanup = NULL;
}

/**
 * rt_lpm_bench - time lookups inside the running daemon
 * @c: CLI
 * @tc: table
 * @count: number of lookups
 *
 * Addresses inside random prefixes of the table (those its engine holds:
 * nets with a valid best route), looked up by every batch variant of the
 * table's engine this CPU runs, by single engine lookups, and by
 * net_route() with and without the engine (the filter path). Answers are
 * checked against each other, so a wrong variant shows as a mismatch. The
 * lookups run in slices of at most %BENCH_SLICE through the CLI's
 * continuation, so BIRD's loop goes on between them; each figure is the
 * sum of its slices' times, and answers are compared only if the table did
 * not change meanwhile.
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

  struct lpm_stats st;
  lpm_stats(l->e, &st);
  if (!st.prefixes)
    cf_error("Table %s has no routes", tc->name);

  pool *p = rp_new(c->pool, "LPM benchmark");
  struct bench *b = mb_allocz(p, sizeof(struct bench));
  b->t = t;
  b->l = l;
  b->cf = config;
  b->pool = p;
  b->count = count;
  b->updates = st.updates;
  b->v6 = (t->addr_type == NET_IP6);

  /* The engine's prefixes, dumped in slices */
  b->cap = st.prefixes;
  b->r = mb_alloc(p, b->cap * sizeof(struct lpm_route));
  b->a4 = b->v6 ? NULL : mb_alloc(p, count * sizeof(ip4_addr));
  b->a6 = b->v6 ? mb_alloc(p, count * sizeof(ip6_addr)) : NULL;
  b->ref = mb_alloc(p, count * sizeof(u32));
  b->val = mb_alloc(p, count * sizeof(u32));
  bench_rng = 0x9e3779b97f4a7c15ULL ^ current_time();
  bench_step(b, BS_DUMP);

  rt_lock_table(t);
  c->rover = b;
  c->cont = bench_cont;
  c->cleanup = bench_cleanup;
}
