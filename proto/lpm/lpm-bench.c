/*
 *	bloombird -- LPM exporter: `show lpm lookup benchmark'
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: LPM exporter benchmark
 *
 * `show lpm lookup benchmark <protocol> [<count>]' measures, inside the
 * running daemon and on the exporter's own data, what a data plane and a
 * feed would cost: lookups of addresses inside random exported prefixes,
 * single and in batches of every variant this CPU runs (answers checked
 * against the single lookups), the same with the next-hop entry read as a
 * reader reads it, and BIRD's own fib_route() on the exported prefixes (a
 * FIB of them made for the purpose; the exporter keeps none) for
 * comparison. It then builds a sample of the exported prefixes into two
 * fresh private engines, once with one whole-table build (what a feed into
 * an empty engine does, lpm.c) and once with one update per prefix (what a
 * feed would otherwise cost), and checks that both answer alike.
 *
 * The work runs in slices of at most %LPMX_BENCH_SLICE through the CLI's
 * continuation, so BIRD's loop goes on between them (routes, sessions,
 * kernel sync) and never waits for the command longer than a slice; each
 * figure is the sum of its slices' times. A whole build cannot be cut, so
 * it builds a sample small enough for one slice. The live engine is only
 * read; if it changes meanwhile, answers are not compared, and if the
 * protocol restarts or BIRD is reconfigured, the benchmark stops.
 */

#include "nest/bird.h"
#include "nest/cli.h"
#include "nest/route.h"
#include "nest/lpm.h"
#include "nest/fib-bloom.h"
#include "conf/conf.h"
#include "lib/string.h"

#include "proto/lpm/lpm.h"
#include "nest/cli-codes.h"

#define LPMX_BENCH_BATCH	256			/* lookups per batch call */
#define LPMX_BENCH_SLICE	(10 * 1000000ULL)	/* ns of work per loop cycle */
#define LPMX_BENCH_CHUNK	4096			/* operations between clock reads */
#define LPMX_BENCH_BUILD_MAX	32768			/* prefixes of the whole-build sample */

enum lpmx_bench_step {
  LB_START,		/* Next family: its arrays */
  LB_DUMP,		/* The engine's prefixes */
  LB_ADDR,		/* Addresses inside random prefixes */
  LB_SINGLE,		/* Single lookups (the reference) */
  LB_BATCH,		/* Batches of variant @var */
  LB_NH,		/* Batches of the variant in use + next-hop entries */
  LB_FIB_FILL,		/* A FIB of the prefixes (not timed) */
  LB_FIB_ROUTE,		/* fib_route() on it */
  LB_BUILD,		/* Whole build of the sample */
  LB_UPDATES,		/* One update per prefix of the sample */
  LB_COMPARE,		/* The two private engines' answers */
  LB_END,		/* The family's last lines */
};

struct lpmx_bench {
  struct lpmx_proto *p;
  struct config *cf;			/* The config it started on */
  u32 run;				/* The protocol's start it began in */
  pool *pool;				/* Everything below */
  uint count;				/* Lookups per family */
  uint fam;				/* 0: IPv4, 1: IPv6, 2: done */
  enum lpmx_bench_step step;
  uint var;				/* LB_BATCH: the variant */
  uint pos;				/* Progress in the step */
  u64 ns;				/* Time of the step so far */
  u64 updates;				/* The live engine's updates when the family began */
  u64 dump_pos;				/* LB_DUMP: where the engine's dump goes on */
  uint bad;				/* Answers that differ, in this step */

  struct lpm_engine *e;			/* The live engine */
  int v6;
  struct lpm_route *r;			/* Its prefixes */
  uint cnt, cap, sample;
  ip4_addr *a4;
  ip6_addr *a6;
  u32 *ref, *val, *val2;
  struct fib fib;
  int fib_up;
  struct lpm_engine *eb, *es;		/* Private: whole build, single updates */
  u64 build_ns;
  uintptr_t sink;
};

static u64 lpmx_rng;

static inline u64
lpmx_rnd(void)
{
  lpmx_rng ^= lpmx_rng >> 12; lpmx_rng ^= lpmx_rng << 25; lpmx_rng ^= lpmx_rng >> 27;
  return lpmx_rng * 0x2545f4914f6cdd1dULL;
}

static void
lpmx_bench_line(struct cli *c, const char *what, u64 ns, uint count)
{
  double per = (double) ns / MAX(count, 1);
  cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "  %-44s %8u.%u ns/lookup %8u.%u Mlps", what,
	     (uint) per, (uint) (per * 10) % 10, (uint) (1000 / per), (uint) (10000 / per) % 10);
}

static void
lpmx_bench_secs(struct cli *c, const char *what, u64 ns, uint count)
{
  cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "  %-44s %4lu.%03lu s, %lu ns per prefix", what,
	     ns / 1000000000, ns / 1000000 % 1000, count ? ns / count : 0);
}

static uint
lpmx_bench_diff(const u32 *a, const u32 *b, uint n)
{
  uint bad = 0;
  for (uint i = 0; i < n; i++)
    bad += (a[i] != b[i]);
  return bad;
}

/* Answers of @e for addresses [@from, @to): single (@b4, @b6 NULL) or in batches */
static void
lpmx_bench_run(struct lpmx_bench *b, const struct lpm_engine *e, u32 *val, uint from, uint to,
	       lpm_bulk4_fn *b4, lpm_bulk6_fn *b6)
{
  if (!b4 && !b6)
  {
    for (uint i = from; i < to; i++)
      val[i] = b->v6 ? lpm_lookup6(e, b->a6[i]) : lpm_lookup4(e, b->a4[i]);
    return;
  }

  for (uint i = from; i < to; i += LPMX_BENCH_BATCH)
  {
    uint k = MIN(LPMX_BENCH_BATCH, to - i);
    if (b->v6)
      b6(e, b->a6 + i, val + i, k);
    else
      b4(e, b->a4 + i, val + i, k);
  }
}

/* Is the live engine as it was when the family began? */
static int
lpmx_bench_same(struct lpmx_bench *b)
{
  struct lpm_stats st;
  lpm_stats(b->e, &st);
  return st.updates == b->updates;
}

/* The next variant from @v on with batches for this family, or LPM_VAR_MAX */
static uint
lpmx_bench_next_var(struct lpmx_bench *b, uint v)
{
  for (; v < LPM_VAR_MAX; v++)
    if ((b->v6 ? !!b->e->class->bulk6[v] : !!b->e->class->bulk4[v]) &&
	(lpm_variant_select(v, b->e->class->variants) == (int) v))
      break;
  return v;
}

static void
lpmx_bench_next(struct lpmx_bench *b, enum lpmx_bench_step s)
{
  b->step = s;
  b->pos = 0;
  b->ns = 0;
  b->bad = 0;
}

/* The family's private data goes; the engine and FIB with it */
static void
lpmx_bench_fam_free(struct lpmx_bench *b)
{
  if (b->eb)
    lpm_free(b->eb);
  if (b->es)
    lpm_free(b->es);
  if (b->fib_up)
    fib_free(&b->fib);
  b->eb = b->es = NULL;
  b->fib_up = 0;
}

static void
lpmx_bench_cleanup(struct cli *c)
{
  struct lpmx_bench *b = c->rover;
  lpmx_bench_fam_free(b);
  rfree(b->pool);
  c->rover = NULL;
}

/* Family setup: the arrays; the prefixes are dumped in slices */
static int
lpmx_bench_start(struct cli *c, struct lpmx_bench *b)
{
  struct lpmx_fam *f = &b->p->fam[b->fam];
  if (!f->e)
    return 0;

  b->e = f->e;
  b->v6 = (b->e->net_type == NET_IP6);
  struct lpm_stats st;
  lpm_stats(b->e, &st);
  b->updates = st.updates;
  if (!st.prefixes)
  {
    cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "%s: no prefixes", net_label[b->e->net_type]);
    return 0;
  }

  b->cap = st.prefixes;
  b->r = mb_alloc(b->pool, b->cap * sizeof(struct lpm_route));
  b->cnt = 0;
  b->dump_pos = 0;
  b->a4 = b->v6 ? NULL : mb_alloc(b->pool, b->count * sizeof(ip4_addr));
  b->a6 = b->v6 ? mb_alloc(b->pool, b->count * sizeof(ip6_addr)) : NULL;
  b->ref = mb_alloc(b->pool, b->count * sizeof(u32));
  b->val = mb_alloc(b->pool, b->count * sizeof(u32));
  b->val2 = mb_alloc(b->pool, b->count * sizeof(u32));
  lpmx_rng = 0x9e3779b97f4a7c15ULL ^ lpmx_now_ns();
  return 1;
}

/* One operation of the step at @i; its time is counted unless it is set-up */
static void
lpmx_bench_op(struct lpmx_bench *b, uint from, uint to)
{
  switch (b->step)
  {
  case LB_ADDR:
    for (uint i = from; i < to; i++)
    {
      const net_addr *n = &b->r[(uint) ((lpmx_rnd() >> 32) * b->cnt >> 32)].n.n;
      if (b->v6)
      {
	ip6_addr m = ip6_mkmask(n->pxlen);
	ip6_addr x = ip6_build(lpmx_rnd(), lpmx_rnd(), lpmx_rnd(), lpmx_rnd());
	b->a6[i] = ip6_or(ip6_and(net6_prefix(n), m), ip6_and(x, ip6_not(m)));
      }
      else
      {
	u32 m = ip4_to_u32(ip4_mkmask(n->pxlen));
	b->a4[i] = ip4_from_u32((ip4_to_u32(net4_prefix(n)) & m) | ((u32) lpmx_rnd() & ~m));
      }
    }
    break;

  case LB_DUMP:
  {
    uint want = MIN(to - from, b->cap - b->cnt);
    uint got = lpm_dump_from(b->e, b->r + b->cnt, want, &b->dump_pos);
    b->cnt += got;
    if (got < want)
      b->cap = b->cnt;		/* The dump is over */
    break;
  }

  case LB_SINGLE:
    lpmx_bench_run(b, b->e, b->ref, from, to, NULL, NULL);
    break;

  case LB_BATCH:
    lpmx_bench_run(b, b->e, b->val, from, to, b->v6 ? NULL : b->e->class->bulk4[b->var],
		   b->v6 ? b->e->class->bulk6[b->var] : NULL);
    break;

  case LB_NH:
    lpmx_bench_run(b, b->e, b->val, from, to, b->v6 ? NULL : b->e->bulk4, b->v6 ? b->e->bulk6 : NULL);
    for (uint i = from; i < to; i++)
      if (b->val[i] != LPM_NONE)
	b->sink += b->p->nht.nh[b->val[i]].path[0].ifindex;
    break;

  case LB_FIB_FILL:
    for (uint i = from; i < to; i++)
      fib_get(&b->fib, &b->r[i].n.n);
    break;

  case LB_FIB_ROUTE:
    for (uint i = from; i < to; i++)
    {
      net_addr_union q;
      if (b->v6)
	net_fill_ip6(&q.n, b->a6[i], IP6_MAX_PREFIX_LENGTH);
      else
	net_fill_ip4(&q.n, b->a4[i], IP4_MAX_PREFIX_LENGTH);
      b->sink += (uintptr_t) fib_route(&b->fib, &q.n);
    }
    break;

  case LB_UPDATES:
    for (uint i = from; i < to; i++)
    {
      u32 old;
      if (lpm_update(b->es, &b->r[i].n.n, b->r[i].value, &old) < 0)
      {
	lpm_free(b->es);
	b->es = NULL;
	break;
      }
    }
    break;

  case LB_COMPARE:
    lpmx_bench_run(b, b->eb, b->val, from, to, NULL, NULL);
    lpmx_bench_run(b, b->es, b->val2, from, to, NULL, NULL);
    break;

  default:
    break;
  }
}

/* Answers of [@from, @to) that differ, counted after the step's chunk (not timed) */
static void
lpmx_bench_check(struct lpmx_bench *b, uint from, uint to)
{
  if (b->step == LB_BATCH)
    b->bad += lpmx_bench_diff(b->val + from, b->ref + from, to - from);
  else if (b->step == LB_COMPARE)
  {
    b->bad += lpmx_bench_diff(b->val + from, b->val2 + from, to - from);
    if (b->sample == b->cnt)
      b->bad += lpmx_bench_diff(b->val + from, b->ref + from, to - from);
  }
}

/* Steps of @n operations, run in chunks until the slice is used up; 1: step done */
static int
lpmx_bench_chunks(struct lpmx_bench *b, uint n, u64 *budget)
{
  while (b->pos < n)
  {
    uint to = MIN(n, b->pos + LPMX_BENCH_CHUNK);
    u64 t0 = lpmx_now_ns();
    lpmx_bench_op(b, b->pos, to);
    u64 t1 = lpmx_now_ns();
    lpmx_bench_check(b, b->pos, to);
    u64 dt = lpmx_now_ns() - t0;
    b->ns += t1 - t0;
    b->pos = to;
    if ((b->step == LB_UPDATES) && !b->es)
      return 1;
    if ((b->step == LB_DUMP) && (b->cnt == b->cap))
      return 1;
    if (dt >= *budget)
    {
      *budget = 0;
      return b->pos >= n;
    }
    *budget -= dt;
  }
  return 1;
}

/* A private engine for the sample */
static struct lpm_engine *
lpmx_bench_engine(struct lpmx_bench *b)
{
  struct lpm_params par = { .variant = b->e->variant };
  return lpm_new(b->pool, b->e->class, b->e->net_type, &par);
}

/* One slice of the benchmark; 0: it goes on in the next loop cycle */
static int
lpmx_bench_slice(struct cli *c, struct lpmx_bench *b)
{
  u64 budget = LPMX_BENCH_SLICE;

  while (budget && (b->fam < 2))
  {
    switch (b->step)
    {
    case LB_START:
      if (!lpmx_bench_start(c, b))
      {
	b->fam++;
	break;
      }
      lpmx_bench_next(b, LB_DUMP);
      break;

    case LB_DUMP:
      if (!lpmx_bench_chunks(b, ~0U, &budget))
	break;
      if (!b->cnt)
      {
	cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "%s: no prefixes", net_label[b->e->net_type]);
	b->fam++;
	lpmx_bench_next(b, LB_START);
	break;
      }
      b->sample = MIN(b->cnt, LPMX_BENCH_BUILD_MAX);
      cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "%s: %u lookups of addresses inside its %u exported prefixes, %u next-hop entries",
		 net_label[b->e->net_type], b->count, b->cnt, b->p->nht.live);
      lpmx_bench_next(b, LB_ADDR);
      break;

    case LB_ADDR:
      if (lpmx_bench_chunks(b, b->count, &budget))
	lpmx_bench_next(b, LB_SINGLE);
      break;

    case LB_SINGLE:
      if (!lpmx_bench_chunks(b, b->count, &budget))
	break;
      lpmx_bench_line(c, tmp_sprintf("%s, single lookups", b->e->class->name), b->ns, b->count);
      lpmx_bench_next(b, LB_BATCH);
      b->var = lpmx_bench_next_var(b, 0);
      if (b->var == LPM_VAR_MAX)
	lpmx_bench_next(b, LB_NH);
      break;

    case LB_BATCH:
      if (!lpmx_bench_chunks(b, b->count, &budget))
	break;
      lpmx_bench_line(c, tmp_sprintf("%s, %s batches of %u%s", b->e->class->name, lpm_variant_names[b->var],
				     LPMX_BENCH_BATCH, (b->var == b->e->variant) ? " (in use)" : ""), b->ns, b->count);
      if (b->bad && lpmx_bench_same(b))
	cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "  MISMATCH: %u answers of %s differ from single lookups",
		   b->bad, lpm_variant_names[b->var]);
      uint v = lpmx_bench_next_var(b, b->var + 1);
      lpmx_bench_next(b, (v < LPM_VAR_MAX) ? LB_BATCH : LB_NH);
      b->var = v;
      break;

    case LB_NH:
      if (!lpmx_bench_chunks(b, b->count, &budget))
	break;
      lpmx_bench_line(c, tmp_sprintf("%s batches + next-hop entry", lpm_variant_names[b->e->variant]), b->ns, b->count);
      /* BIRD's FIB of the same prefixes, with its filter as a routing
       * table's: pinned while empty, so that it grows with the FIB instead
       * of being built at once when full */
      fib_init(&b->fib, b->pool, b->e->net_type, sizeof(struct fib_node), 0, 0, NULL);
      fib_bloom_pin(&b->fib, 1);
      b->fib_up = 1;
      lpmx_bench_next(b, LB_FIB_FILL);
      break;

    case LB_FIB_FILL:
      if (!lpmx_bench_chunks(b, b->cnt, &budget))
	break;
      lpmx_bench_next(b, LB_FIB_ROUTE);
      break;

    case LB_FIB_ROUTE:
      if (!lpmx_bench_chunks(b, b->count, &budget))
	break;
      lpmx_bench_line(c, "fib_route() on the exported prefixes", b->ns, b->count);
      fib_free(&b->fib);
      b->fib_up = 0;
      lpmx_bench_next(b, LB_BUILD);
      return 0;			/* The free may have taken a while */

    case LB_BUILD:
    {
      /* One call: the sample keeps it within a slice */
      u64 t0 = lpmx_now_ns();
      b->eb = lpmx_bench_engine(b);
      if (b->eb && (lpm_build(b->eb, b->r, b->sample) < 0))
      {
	lpm_free(b->eb);
	b->eb = NULL;
      }
      b->build_ns = lpmx_now_ns() - t0;
      b->es = b->eb ? lpmx_bench_engine(b) : NULL;
      lpmx_bench_next(b, b->es ? LB_UPDATES : LB_END);
      return 0;
    }

    case LB_UPDATES:
      if (!lpmx_bench_chunks(b, b->sample, &budget))
	break;
      if (b->es)
      {
	u64 ts = b->ns, tb = b->build_ns;
	const char *of = (b->sample < b->cnt) ? tmp_sprintf(" of %u", b->cnt) : "";
	lpmx_bench_secs(c, tmp_sprintf("feed of %u%s prefixes, one whole build", b->sample, of), tb, b->sample);
	lpmx_bench_secs(c, tmp_sprintf("feed of %u%s prefixes, one update each", b->sample, of), ts, b->sample);
	cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "  %-44s %4u.%02u x", "whole build speed-up",
		   (uint) (ts / MAX(tb, 1)), (uint) (ts * 100 / MAX(tb, 1)) % 100);
      }
      lpmx_bench_next(b, b->es ? LB_COMPARE : LB_END);
      break;

    case LB_COMPARE:
      if (!lpmx_bench_chunks(b, b->count, &budget))
	break;
      if (b->bad && ((b->sample < b->cnt) || lpmx_bench_same(b)))
	cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "  MISMATCH: %u answers of the private engines differ", b->bad);
      lpmx_bench_next(b, LB_END);
      break;

    case LB_END:
      if (!b->eb || !b->es)
	cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "  (no memory for a private engine: builds not measured)");
      if (!lpmx_bench_same(b))
	cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "  (the exporter's engine changed meanwhile: answers not compared with its own)");
      /* The loops' results must be used, or they could be left out */
      if (b->sink == 1)
	cli_printf(c, -CLI_LPM_LOOKUP_BENCH, "  (checksum %lu)", (ulong) b->sink);
      lpmx_bench_fam_free(b);
      b->fam++;
      lpmx_bench_next(b, LB_START);
      return 0;
    }
  }

  return b->fam >= 2;
}

static void
lpmx_bench_cont(struct cli *c)
{
  struct lpmx_bench *b = c->rover;
  struct lpmx_proto *p = b->p;

  if (b->cf != config)
    cli_printf(c, 8004, "Stopped due to reconfiguration");
  else if ((p->p.proto_state != PS_UP) || (p->run != b->run) || ((b->fam < 2) && (b->step != LB_START) && (p->fam[b->fam].e != b->e)))
    cli_printf(c, 8004, "Stopped: %s restarted", p->p.name);
  else if (!lpmx_bench_slice(c, b))
    return;
  else
    cli_printf(c, 0, "");

  lpmx_bench_cleanup(c);
  c->cont = c->cleanup = NULL;
}

/**
 * lpmx_bench - show lpm lookup benchmark <protocol> [<count>]
 * @P: an LPM exporter
 * @count: lookups per family
 *
 * Checks the request and starts the benchmark, which prints one block per
 * family the exporter has as it goes (see the DOC comment).
 */
void
lpmx_bench(struct proto *P, uint count)
{
  struct lpmx_proto *p = (void *) P;

  if ((P->proto_state != PS_UP) || (!p->fam[0].e && !p->fam[1].e))
    cf_error("%s has no engine running", P->name);

  for (uint i = 0; i < 2; i++)
    if (p->fam[i].e && p->fam[i].bulk)
      cf_error("%s is being fed; try again when the feed is over", P->name);

  lpmx_flush(p);
  pool *pp = rp_new(this_cli->pool, "LPM exporter benchmark");
  struct lpmx_bench *b = mb_allocz(pp, sizeof(struct lpmx_bench));
  b->p = p;
  b->cf = config;
  b->run = p->run;
  b->pool = pp;
  b->count = count;
  lpmx_bench_next(b, LB_START);

  this_cli->rover = b;
  this_cli->cont = lpmx_bench_cont;
  this_cli->cleanup = lpmx_bench_cleanup;
}
