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
 * comparison. It then builds the exported prefixes into two fresh private
 * engines, once with one whole-table build (what a feed into an empty
 * engine does, lpm.c) and once with one update per prefix (what a feed
 * would otherwise cost), and checks that both answer like the live engine.
 * The daemon does nothing else meanwhile; the live engine is only read.
 */

#include "nest/bird.h"
#include "nest/cli.h"
#include "nest/route.h"
#include "nest/lpm.h"
#include "nest/fib-bloom.h"
#include "lib/string.h"

#include "proto/lpm/lpm.h"

#define CLI_LPMX_BENCH	1031
#define LPMX_BATCH	256

static u64 lpmx_rng;

static inline u64
lpmx_rnd(void)
{
  lpmx_rng ^= lpmx_rng >> 12; lpmx_rng ^= lpmx_rng << 25; lpmx_rng ^= lpmx_rng >> 27;
  return lpmx_rng * 0x2545f4914f6cdd1dULL;
}

static void
lpmx_bench_line(const char *what, u64 ns, uint count)
{
  double per = (double) ns / count;
  cli_msg(-CLI_LPMX_BENCH, "  %-44s %8u.%u ns/lookup %8u.%u Mlps", what,
	  (uint) per, (uint) (per * 10) % 10, (uint) (1000 / per), (uint) (10000 / per) % 10);
}

static void
lpmx_bench_secs(const char *what, u64 ns, uint count)
{
  cli_msg(-CLI_LPMX_BENCH, "  %-44s %4lu.%03lu s, %lu ns per prefix", what,
	  ns / 1000000000, ns / 1000000 % 1000, count ? ns / count : 0);
}

/* Engine answers for @n addresses: single (@bulk NULL) or in batches */
static void
lpmx_bench_run(const struct lpm_engine *e, int v6, const ip4_addr *a4, const ip6_addr *a6,
	       u32 *val, uint n, lpm_bulk4_fn *b4, lpm_bulk6_fn *b6)
{
  if (!b4 && !b6)
  {
    for (uint i = 0; i < n; i++)
      val[i] = v6 ? lpm_lookup6(e, a6[i]) : lpm_lookup4(e, a4[i]);
    return;
  }

  for (uint i = 0; i < n; i += LPMX_BATCH)
  {
    uint k = MIN(LPMX_BATCH, n - i);
    if (v6)
      b6(e, a6 + i, val + i, k);
    else
      b4(e, a4 + i, val + i, k);
  }
}

static uint
lpmx_bench_diff(const u32 *a, const u32 *b, uint n)
{
  uint bad = 0;
  for (uint i = 0; i < n; i++)
    bad += (a[i] != b[i]);
  return bad;
}

/* A private engine with the exported prefixes: one build, or one update each */
static struct lpm_engine *
lpmx_bench_engine(struct lpmx_fam *f, pool *pp, const struct lpm_route *r, uint cnt, int single, u64 *ns)
{
  struct lpm_params par = { .variant = f->e->variant };
  struct lpm_engine *e = lpm_new(pp, f->e->class, f->e->net_type, &par);
  if (!e)
    return NULL;

  u64 t0 = lpmx_now_ns();
  int rv = 0;
  u32 old;
  if (single)
    for (uint i = 0; (i < cnt) && (rv >= 0); i++)
      rv = lpm_update(e, &r[i].n.n, r[i].value, &old);
  else
    rv = lpm_build(e, r, cnt);
  *ns = lpmx_now_ns() - t0;

  if (rv < 0)
  {
    lpm_free(e);
    return NULL;
  }
  return e;
}

static void
lpmx_bench_fam(struct lpmx_proto *p, struct lpmx_fam *f, pool *pp, uint count)
{
  struct lpm_engine *e = f->e;
  int v6 = (e->net_type == NET_IP6);
  struct lpm_stats st;
  lpm_stats(e, &st);
  uint nn = st.prefixes;

  if (!nn)
  {
    cli_msg(-CLI_LPMX_BENCH, "%s: no prefixes", net_label[e->net_type]);
    return;
  }

  /* The exported prefixes, then addresses inside random ones of them */
  struct lpm_route *r = mb_alloc(pp, nn * sizeof(struct lpm_route));
  uint cnt = lpm_dump(e, r, nn);

  ip4_addr *a4 = v6 ? NULL : mb_alloc(pp, count * sizeof(ip4_addr));
  ip6_addr *a6 = v6 ? mb_alloc(pp, count * sizeof(ip6_addr)) : NULL;
  u32 *ref = mb_alloc(pp, count * sizeof(u32));
  u32 *val = mb_alloc(pp, count * sizeof(u32));

  lpmx_rng = 0x9e3779b97f4a7c15ULL ^ lpmx_now_ns();
  for (uint i = 0; i < count; i++)
  {
    const net_addr *n = &r[(uint) ((lpmx_rnd() >> 32) * cnt >> 32)].n.n;
    if (v6)
    {
      ip6_addr m = ip6_mkmask(n->pxlen);
      ip6_addr x = ip6_build(lpmx_rnd(), lpmx_rnd(), lpmx_rnd(), lpmx_rnd());
      a6[i] = ip6_or(ip6_and(net6_prefix(n), m), ip6_and(x, ip6_not(m)));
    }
    else
    {
      u32 m = ip4_to_u32(ip4_mkmask(n->pxlen));
      a4[i] = ip4_from_u32((ip4_to_u32(net4_prefix(n)) & m) | ((u32) lpmx_rnd() & ~m));
    }
  }

  cli_msg(-CLI_LPMX_BENCH, "%s: %u lookups of addresses inside its %u exported prefixes, %u next-hop entries",
	  net_label[e->net_type], count, cnt, p->nht.live);

  /* Single lookups: the reference */
  u64 t0 = lpmx_now_ns();
  lpmx_bench_run(e, v6, a4, a6, ref, count, NULL, NULL);
  lpmx_bench_line(tmp_sprintf("%s, single lookups", e->class->name), lpmx_now_ns() - t0, count);

  for (uint v = 0; v < LPM_VAR_MAX; v++)
  {
    lpm_bulk4_fn *b4 = v6 ? NULL : e->class->bulk4[v];
    lpm_bulk6_fn *b6 = v6 ? e->class->bulk6[v] : NULL;
    if ((!b4 && !b6) || (lpm_variant_select(v, e->class->variants) != (int) v))
      continue;

    t0 = lpmx_now_ns();
    lpmx_bench_run(e, v6, a4, a6, val, count, b4, b6);
    lpmx_bench_line(tmp_sprintf("%s, %s batches of %u%s", e->class->name, lpm_variant_names[v],
				LPMX_BATCH, (v == e->variant) ? " (in use)" : ""), lpmx_now_ns() - t0, count);

    uint bad = lpmx_bench_diff(val, ref, count);
    if (bad)
      cli_msg(-CLI_LPMX_BENCH, "  MISMATCH: %u answers of %s differ from single lookups", bad, lpm_variant_names[v]);
  }

  /* As a reader forwards: the batch in use, then each answer's next-hop entry */
  uintptr_t sink = 0;
  t0 = lpmx_now_ns();
  lpmx_bench_run(e, v6, a4, a6, val, count, v6 ? NULL : e->bulk4, v6 ? e->bulk6 : NULL);
  for (uint i = 0; i < count; i++)
    if (val[i] != LPM_NONE)
      sink += p->nht.nh[val[i]].path[0].ifindex;
  lpmx_bench_line(tmp_sprintf("%s batches + next-hop entry", lpm_variant_names[e->variant]),
		  lpmx_now_ns() - t0, count);

  /* BIRD's FIB of the same prefixes, with its filter as a routing table's */
  struct fib fib;
  fib_init(&fib, pp, e->net_type, sizeof(struct fib_node), 0, 0, NULL);
  for (uint i = 0; i < cnt; i++)
    fib_get(&fib, &r[i].n.n);
  fib_bloom_pin(&fib, 1);

  net_addr_union q;
  t0 = lpmx_now_ns();
  for (uint i = 0; i < count; i++)
  {
    if (v6)
      net_fill_ip6(&q.n, a6[i], IP6_MAX_PREFIX_LENGTH);
    else
      net_fill_ip4(&q.n, a4[i], IP4_MAX_PREFIX_LENGTH);
    sink += (uintptr_t) fib_route(&fib, &q.n);
  }
  lpmx_bench_line("fib_route() on the exported prefixes", lpmx_now_ns() - t0, count);
  fib_free(&fib);

  /* A feed: one whole build against one update per prefix */
  u64 tb = 0, ts = 0;
  struct lpm_engine *eb = lpmx_bench_engine(f, pp, r, cnt, 0, &tb);
  struct lpm_engine *es = eb ? lpmx_bench_engine(f, pp, r, cnt, 1, &ts) : NULL;
  if (!eb || !es)
    cli_msg(-CLI_LPMX_BENCH, "  (no memory for a private engine: builds not measured)");
  else
  {
    lpmx_bench_secs(tmp_sprintf("feed of %u prefixes, one whole build", cnt), tb, cnt);
    lpmx_bench_secs(tmp_sprintf("feed of %u prefixes, one update each", cnt), ts, cnt);
    cli_msg(-CLI_LPMX_BENCH, "  %-44s %4u.%02u x", "whole build speed-up",
	    (uint) (ts / MAX(tb, 1)), (uint) (ts * 100 / MAX(tb, 1)) % 100);

    lpmx_bench_run(eb, v6, a4, a6, val, count, NULL, NULL);
    uint bad = lpmx_bench_diff(val, ref, count);
    lpmx_bench_run(es, v6, a4, a6, val, count, NULL, NULL);
    bad += lpmx_bench_diff(val, ref, count);
    if (bad)
      cli_msg(-CLI_LPMX_BENCH, "  MISMATCH: %u answers of the private engines differ from the live one", bad);
  }

  if (eb)
    lpm_free(eb);
  if (es)
    lpm_free(es);

  /* The loops' results must be used, or they could be left out */
  if (sink == 1)
    cli_msg(-CLI_LPMX_BENCH, "  (checksum %lu)", (ulong) sink);
}

/**
 * lpmx_bench - show lpm lookup benchmark <protocol> [<count>]
 * @P: an LPM exporter
 * @count: lookups per family
 *
 * Prints one block per family the exporter has; see the DOC comment.
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
  pool *pp = rp_new(P->pool, "LPM exporter benchmark");
  for (uint i = 0; i < 2; i++)
    if (p->fam[i].e)
      lpmx_bench_fam(p, &p->fam[i], pp, count);
  rfree(pp);

  cli_msg(0, "");
}
