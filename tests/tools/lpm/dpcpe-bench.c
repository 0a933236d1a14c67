/*
 *	bloombird -- dpcpe engine benchmark
 *
 *	dpcpe-bench [options] TABLE4 TABLE6 [UPDATES]
 *
 *	TABLE4, TABLE6: xz-compressed text, one "prefix/len" per line; a
 *	route's value is the 0-based line of the first occurrence of its
 *	masked prefix. UPDATES: a RIS trace as `bgpdump -m' text (gzip), its
 *	A and W records applied to the full tables as fast as possible.
 *
 *	For each table: whole-table build time, memory, the chosen levels with
 *	their counts, filter sizes and false-positive rates (sampled and on
 *	the query mix), ns per lookup and Mlps for every variant for random
 *	addresses inside prefixes and uniformly random addresses (IPv6: in
 *	2000::/3), the update rate; the same for the ablation (one filter and
 *	table per prefix length, no expansion). Medians of --reps runs.
 *
 *	Options: -q N (queries per kind, default 2^20), -r N (runs, 5),
 *	--sweep (IPv6 level counts 3-14, IPv4 DP levels: the measurement
 *	behind %DPCPE_DEF_LEVELS6), --filters (lookups that skip the filters).
 *
 *	The engine-against-engine and DPDK comparison is tests/bench/lpm-engines
 *	(lpmtool and tests/bench/dpdk, engines dpcpe and perlength among
 *	them); this tool looks inside the engine (levels, per-level false
 *	positives on the queries, level sweep), which the engine interface
 *	does not show. `make bench' runs it after
 *	tests/bench/lpm-engines (tests/bench/dpcpe-internals).
 *
 *	Linked against the patched tree's objects like tests/tools/fib/fibtool.c
 *	(tests/tools/lpm/dpcpe-build.sh). Not a test: it prints numbers.
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#define _GNU_SOURCE 1

#include "test/birdtest.h"

#include "nest/lpm-dpcpe.h"
#include "lib/string.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static uint nq = 1 << 20, reps = 5;
static int do_sweep, do_filters;
static pool *bp;

static void __attribute__((noreturn, format(printf, 1, 2)))
quit(const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
  fputc('\n', stderr);
  exit(1);
}

static double
now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static u64 rs = 0x2545f4914f6cdd1dULL;
static inline u64 rnd(void) { rs ^= rs >> 12; rs ^= rs << 25; rs ^= rs >> 27; return rs * 0x2545f4914f6cdd1dULL; }

static int
dcmp(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median(double *v, uint n)
{
  qsort(v, n, sizeof(double), dcmp);
  return (n & 1) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 *	Tables
 */

struct table {
  uint bits;
  const char *name;
  uint lines;
  uint n;				/* Unique prefixes */
  struct lpm_route *r;
};

static inline u64
pfx_hash(const net_addr_union *n)
{
  u64 x = (n->n.type == NET_IP4) ? ((u64) _I(n->ip4.prefix) << 8 | n->ip4.pxlen)
    : ((u64) _I0(n->ip6.prefix) << 32 | _I1(n->ip6.prefix)) ^ ((u64) _I2(n->ip6.prefix) * 0x9e3779b97f4a7c15ULL)
      ^ ((u64) _I3(n->ip6.prefix) << 17) ^ n->ip6.pxlen;
  x ^= x >> 31; x *= 0xbf58476d1ce4e5b9ULL; x ^= x >> 29;
  return x;
}

static void
read_table(struct table *t, const char *fn, uint bits)
{
  char cmd[1024];
  bsnprintf(cmd, sizeof(cmd), "xz -dc '%s'", fn);
  FILE *f = popen(cmd, "r");
  if (!f)
    quit("cannot read %s", fn);

  const char *b = strrchr(fn, '/');
  t->name = b ? b + 1 : fn;
  t->bits = bits;
  uint cap = 1 << 20;
  t->r = xmalloc(cap * sizeof(struct lpm_route));
  u32 hs = 1 << 22, *h = xmalloc(hs * sizeof(u32));
  memset(h, 0, hs * sizeof(u32));

  char line[512];
  while (fgets(line, sizeof(line), f))
  {
    char *sl = strchr(line, '/');
    if (!sl)
      continue;
    *sl = 0;
    uint len = atoi(sl + 1), ln = t->lines++;
    net_addr_union n;
    if (bits == 32)
    {
      ip4_addr a;
      if (!ip4_pton(line, &a) || (len > 32))
	continue;
      net_fill_ip4(&n.n, ip4_and(a, ip4_mkmask(len)), len);
    }
    else
    {
      ip6_addr a;
      if (!ip6_pton(line, &a) || (len > 128))
	continue;
      net_fill_ip6(&n.n, ip6_and(a, ip6_mkmask(len)), len);
    }

    /* First occurrence only */
    u32 i = pfx_hash(&n) & (hs - 1);
    for (; h[i]; i = (i + 1) & (hs - 1))
      if (net_equal(&t->r[h[i] - 1].n.n, &n.n))
	break;
    if (h[i])
      continue;

    if (t->n == cap)
      t->r = xrealloc(t->r, (cap *= 2) * sizeof(struct lpm_route));
    t->r[t->n] = (struct lpm_route) { .n = n, .value = ln };
    h[i] = ++t->n;
  }
  pclose(f);
  xfree(h);
}

/*
 *	Queries
 */

struct queries {
  const char *kind;
  ip4_addr *a4;
  ip6_addr *a6;
};

static void
make_queries(struct table *t, struct queries *q, int inside)
{
  q->kind = inside ? "inside prefixes" : (t->bits == 32) ? "uniform" : "uniform in 2000::/3";
  q->a4 = xmalloc(nq * sizeof(ip4_addr));
  q->a6 = xmalloc(nq * sizeof(ip6_addr));

  for (uint i = 0; i < nq; i++)
  {
    u64 hi = rnd(), lo = rnd();
    if (inside)
    {
      const net_addr_union *n = &t->r[rnd() % t->n].n;
      if (t->bits == 32)
      {
	u32 m = n->ip4.pxlen ? (~0U << (32 - n->ip4.pxlen)) : 0;
	hi = (u64) ((_I(n->ip4.prefix) & m) | ((hi >> 32) & ~m)) << 32;
      }
      else
      {
	ip6_addr m = ip6_mkmask(n->ip6.pxlen);
	u64 mh = ((u64) _I0(m) << 32) | _I1(m), ml = ((u64) _I2(m) << 32) | _I3(m);
	hi = ((((u64) _I0(n->ip6.prefix) << 32) | _I1(n->ip6.prefix)) & mh) | (hi & ~mh);
	lo = ((((u64) _I2(n->ip6.prefix) << 32) | _I3(n->ip6.prefix)) & ml) | (lo & ~ml);
      }
    }
    else if (t->bits == 128)
      hi = (hi >> 3) | (1ULL << 61);

    q->a4[i] = ip4_from_u32(hi >> 32);
    q->a6[i] = ip6_build(hi >> 32, (u32) hi, lo >> 32, (u32) lo);
  }
}

/*
 *	Engines
 */

/* An engine with the whole table; NULL if the build is refused (too many entries) */
static struct lpm_engine *
engine_try(struct table *t, const struct dpcpe_opts *o, double *build)
{
  struct lpm_engine *e = dpcpe_create_ex(bp, (t->bits == 32) ? NET_IP4 : NET_IP6, LPM_VAR_SCALAR, o);
  if (!e)
    quit("dpcpe_create_ex failed");

  double v[16];
  for (uint i = 0; i < MIN(reps, 16); i++)
  {
    double t0 = now();
    if (lpm_build(e, t->r, t->n) < 0)
    {
      lpm_free(e);
      return NULL;
    }
    v[i] = now() - t0;
  }
  *build = median(v, MIN(reps, 16));
  return e;
}

static struct lpm_engine *
engine(struct table *t, const struct dpcpe_opts *o, double *build)
{
  struct lpm_engine *e = engine_try(t, o, build);
  if (!e)
    quit("build failed");
  return e;
}

/* ns per lookup: variant v's batch, or (v = -1) single scalar lookups */
static double
time_lookups(struct lpm_engine *e, uint bits, struct queries *q, int v, u32 *out)
{
  double *s = xmalloc(reps * sizeof(double));
  for (uint r = 0; r < reps; r++)
  {
    double t0 = now();
    if (v < 0)
    {
      if (bits == 32)
	for (uint i = 0; i < nq; i++)
	  out[i] = lpm_lookup4(e, q->a4[i]);
      else
	for (uint i = 0; i < nq; i++)
	  out[i] = lpm_lookup6(e, q->a6[i]);
    }
    else if (bits == 32)
      lpm_dpcpe_class.bulk4[v](e, q->a4, out, nq);
    else
      lpm_dpcpe_class.bulk6[v](e, q->a6, out, nq);
    s[r] = (now() - t0) * 1e9 / nq;
  }
  double m = median(s, reps);
  xfree(s);
  return m;
}

static const char *
mb(u64 b)
{
  static char buf[4][32];
  static uint k;
  char *p = buf[k++ & 3];
  bsprintf(p, "%d.%d MB", (int) (b >> 20), (int) (((b & 0xfffff) * 10) >> 20));
  return p;
}

static void
show_levels(struct lpm_engine *e, struct queries *qs, uint nqs)
{
  struct dpcpe *x = (void *) e;
  struct dpcpe_layout *s = &x->s;
  uint dpfx = 0;
  for (uint l = 0; l <= s->dbits; l++)
    dpfx += x->len_count[l];

  printf("  direct /%u: %u prefixes /0-/%u, %s\n", s->dbits, dpfx, s->dbits, mb(4ULL << s->dbits));

  /* Filter tests, positives and hits per level on the query mix */
  const struct dpcpe_dir *d = dpcpe_dir_get(x->base);
  u64 tests[DPCPE_DIR_LEVELS] = {}, pos[DPCPE_DIR_LEVELS] = {}, hits[DPCPE_DIR_LEVELS] = {};
  for (uint k = 0; k < nqs; k++)
    for (uint i = 0; i < nq; i++)
    {
      u32 w[4];
      if (x->bits == 32)
	w[0] = _I(qs[k].a4[i]), w[1] = w[2] = w[3] = 0;
      else
	memcpy(w, qs[k].a6[i].addr, 16);

      for (uint j = 0; j < d->nlevels; j++)
      {
	const struct dpcpe_ldesc *l = &d->lv[j];
	u32 kk[4] = { w[0] & l->mask[0], w[1] & l->mask[1], w[2] & l->mask[2], w[3] & l->mask[3] };
	u64 h = dpcpe_hash(kk, l->words, l->sa, l->sb);
	tests[j]++;
	if (!dpcpe_filter_test(x->base, l, h))
	  continue;
	pos[j]++;
	if (dpcpe_probe_lane6(x->base, l, h, kk))
	{
	  hits[j]++;
	  break;
	}
      }
    }

  for (int i = s->nlev - 1; i >= 0; i--)
  {
    struct dpcpe_level *l = &s->lv[i];
    uint j = s->nlev - 1 - i;
    u64 neg = tests[j] - hits[j];
    printf("  level /%-3u prefixes /%u-/%u: %6u, entries %8u, table %s (load %.2f), filter %s (%.1f bits/entry, k=%u%s), "
	   "fp sampled %.4f, on queries %.4f (%lu tests)\n",
	   l->d.len, l->lo + 1, l->d.len, l->prefixes, l->count, mb((u64) l->d.nb * DPCPE_BUCKET),
	   (double) l->used / dpcpe_level_slots(l), mb((u64) l->d.nw * 8),
	   l->count ? 64.0 * l->d.nw / l->count : 0.0, l->d.k, l->d.filter ? "" : ", not tested",
	   dpcpe_level_fp_sample(x, l, 20000), neg ? (double) (pos[j] - hits[j]) / neg : 0.0, (ulong) tests[j]);
  }
}

struct result { double ns[2][LPM_VAR_MAX + 1]; };	/* [query kind][variant + 1], [..][0] single */

static void
run_lookups(const char *name, struct lpm_engine *e, uint bits, struct queries *qs, u32 **ref, struct result *res)
{
  u32 *out = xmalloc(nq * sizeof(u32));

  for (uint k = 0; k < 2; k++)
  {
    printf("  %-28s %-20s", name, qs[k].kind);
    for (int v = -1; v < LPM_VAR_MAX; v++)
    {
      if ((v >= 0) && !(lpm_variants_cpu() & (1U << v)))
      {
	res->ns[k][v + 1] = 0;
	continue;
      }
      double ns = time_lookups(e, bits, &qs[k], v, out);
      res->ns[k][v + 1] = ns;
      printf("  %s %.2f ns %.1f Mlps", (v < 0) ? "single" : lpm_variant_names[v], ns, 1000 / ns);

      if (!ref[k])
      {
	ref[k] = xmalloc(nq * sizeof(u32));
	memcpy(ref[k], out, nq * sizeof(u32));
      }
      else if (memcmp(ref[k], out, nq * sizeof(u32)))
	printf(" [ANSWERS DIFFER]");
    }
    printf("\n");
  }
  xfree(out);
}

static double
best(struct result *r, uint k)
{
  double b = 0;
  for (uint v = 1; v <= LPM_VAR_MAX; v++)
    if (r->ns[k][v] && (!b || (r->ns[k][v] < b)))
      b = r->ns[k][v];
  return b;
}

/*
 *	Updates
 */

static void
run_updates(struct table *t, struct lpm_engine *e, const char *trace)
{
  /* Remove a random fifth of the table, then add it back */
  uint n = t->n / 5;
  uint *pick = xmalloc(t->n * sizeof(uint));
  for (uint i = 0; i < t->n; i++)
    pick[i] = i;
  for (uint i = 0; i < n; i++)
  {
    uint j = i + rnd() % (t->n - i), x = pick[i];
    pick[i] = pick[j];
    pick[j] = x;
  }

  u32 old;
  double t0 = now();
  for (uint i = 0; i < n; i++)
    lpm_remove(e, &t->r[pick[i]].n.n, &old);
  double t1 = now();
  for (uint i = 0; i < n; i++)
    if (lpm_update(e, &t->r[pick[i]].n.n, t->r[pick[i]].value, &old) < 0)
      quit("update failed");
  double t2 = now();
  for (uint i = 0; i < n; i++)
    lpm_update(e, &t->r[pick[i]].n.n, t->r[pick[i]].value ^ 1, &old);
  double t3 = now();
  xfree(pick);

  printf("  updates: %u removes %.0f/s, %u adds %.0f/s, %u value replacements %.0f/s (%u prefixes)\n",
	 n, n / (t1 - t0), n, n / (t2 - t1), n, n / (t3 - t2), t->n);

  if (!trace)
    return;

  /* The RIS trace: its records for this family, in order */
  char cmd[1024];
  bsnprintf(cmd, sizeof(cmd), "zcat '%s'", trace);
  FILE *f = popen(cmd, "r");
  if (!f)
    return;

  uint cap = 1 << 18, m = 0;
  struct { net_addr_union n; u32 v; u8 w; } *u = xmalloc(cap * sizeof(*u));
  char line[4096];
  while (fgets(line, sizeof(line), f))
  {
    char *fld[8];
    uint nf = 0;
    for (char *p = line, *s; nf < 8 && (s = strsep(&p, "|")); )
      fld[nf++] = s;
    if ((nf < 6) || ((fld[2][0] != 'A') && (fld[2][0] != 'W')))
      continue;

    char *sl = strchr(fld[5], '/');
    if (!sl)
      continue;
    *sl = 0;
    uint len = atoi(sl + 1);
    net_addr_union n;
    if (t->bits == 32)
    {
      ip4_addr a;
      if (strchr(fld[5], ':') || !ip4_pton(fld[5], &a) || (len > 32))
	continue;
      net_fill_ip4(&n.n, ip4_and(a, ip4_mkmask(len)), len);
    }
    else
    {
      ip6_addr a;
      if (!strchr(fld[5], ':') || !ip6_pton(fld[5], &a) || (len > 128))
	continue;
      net_fill_ip6(&n.n, ip6_and(a, ip6_mkmask(len)), len);
    }
    if (m == cap)
      u = xrealloc(u, (cap *= 2) * sizeof(*u));
    u[m].n = n;
    u[m].v = m & 0xffffff;
    u[m].w = (fld[2][0] == 'W');
    m++;
  }
  pclose(f);

  uint w = 0;
  t0 = now();
  for (uint i = 0; i < m; i++)
    if (u[i].w)
      lpm_remove(e, &u[i].n.n, &old), w++;
    else if (lpm_update(e, &u[i].n.n, u[i].v, &old) < 0)
      quit("trace update failed");
  t1 = now();
  printf("  RIS trace: %u records (%u withdrawals) applied in %.3f s: %.0f updates/s\n",
	 m, w, t1 - t0, m / (t1 - t0));
  xfree(u);
}

/*
 *	One table
 */

static void
bench_table(struct table *t, const char *trace)
{
  struct dpcpe_opts o;
  struct result rd, rp;
  struct queries qs[2];
  u32 *ref[2] = {};
  double bt;

  printf("\n== IPv%u %s: %u lines, %u unique prefixes ==\n", (t->bits == 32) ? 4 : 6, t->name, t->lines, t->n);
  make_queries(t, &qs[0], 1);
  make_queries(t, &qs[1], 0);

  /* DPCPE, default levels */
  dpcpe_opts_default(&o);
  struct lpm_engine *e = engine(t, &o, &bt);
  struct lpm_stats st;
  lpm_stats(e, &st);
  struct dpcpe *x = (void *) e;
  printf("dpcpe: build %.3f s (median of %u), lookup memory %s, control memory %s, %lu expanded entries, %u levels%s\n",
	 bt, reps, mb(st.mem_lookup), mb(st.mem_control), (ulong) st.units, x->s.nlev,
	 x->dp ? " chosen by DP" : " (fixed groups)");
  show_levels(e, qs, 2);
  run_lookups("dpcpe", e, t->bits, qs, ref, &rd);

  /* Ablation: no expansion */
  dpcpe_opts_default(&o);
  o.per_length = 1;
  double bp_t;
  struct lpm_engine *pl = engine(t, &o, &bp_t);
  struct lpm_stats sp;
  lpm_stats(pl, &sp);
  printf("per-length (ablation, no expansion): build %.3f s, lookup memory %s, %u levels\n",
	 bp_t, mb(sp.mem_lookup), ((struct dpcpe *) pl)->s.nlev);
  run_lookups("per-length", pl, t->bits, qs, ref, &rp);
  lpm_free(pl);

  for (uint k = 0; k < 2; k++)
    printf("  DPCPE gain, %s: %.2fx (best variant %.2f ns vs %.2f ns); scalar %.2fx\n",
	   qs[k].kind, best(&rp, k) / best(&rd, k), best(&rd, k), best(&rp, k),
	   rp.ns[k][1 + LPM_VAR_SCALAR] / rd.ns[k][1 + LPM_VAR_SCALAR]);

  if (do_filters)
  {
    dpcpe_opts_default(&o);
    o.filter_min = ~0U;
    struct lpm_engine *nf = engine(t, &o, &bp_t);
    struct result rn;
    run_lookups("dpcpe, filters not tested", nf, t->bits, qs, ref, &rn);
    lpm_free(nf);
  }

  if (do_sweep)
  {
    printf("level sweep (%s):\n", (t->bits == 32) ? "IPv4 DP levels; 0 = fixed groups" : "IPv6 levels");
    uint lo = (t->bits == 32) ? 2 : 3, hi = (t->bits == 32) ? 6 : 14;
    for (uint n = lo; n <= hi; n++)
    {
      dpcpe_opts_default(&o);
      o.levels = n;
      struct lpm_engine *se = engine_try(t, &o, &bp_t);
      if (!se)
      {
	printf("  %2u levels: build refused (the expansion needs more entries than a level holds)\n", n);
	continue;
      }
      struct lpm_stats ss;
      lpm_stats(se, &ss);
      struct dpcpe *sx = (void *) se;
      char lv[256] = "";
      for (uint i = 0; i < sx->s.nlev; i++)
	bsprintf(lv + strlen(lv), "%s%u", i ? "," : "", sx->s.lv[i].d.len);
      double ns[2][2];
      u32 *out = xmalloc(nq * sizeof(u32));
      int vb = lpm_variant_select(LPM_VAR_AUTO, lpm_dpcpe_class.variants);
      if (vb < 0)
	die("no variant of dpcpe runs here (BLOOMBIRD_LPM_VARIANT?)");
      for (uint k = 0; k < 2; k++)
      {
	ns[k][0] = time_lookups(se, t->bits, &qs[k], LPM_VAR_SCALAR, out);
	ns[k][1] = time_lookups(se, t->bits, &qs[k], vb, out);
	if (memcmp(out, ref[k], nq * sizeof(u32)))
	  printf("  [ANSWERS DIFFER]");
      }
      xfree(out);
      printf("  %2u levels (%s): %8lu entries, lookup %s, build %.3f s; inside %.2f ns scalar %.2f ns %s; uniform %.2f / %.2f ns\n",
	     n, lv, (ulong) ss.units, mb(ss.mem_lookup), bp_t, ns[0][0], ns[0][1], lpm_variant_names[vb], ns[1][0], ns[1][1]);
      lpm_free(se);
    }
  }


  run_updates(t, e, trace);
  lpm_free(e);
  for (uint k = 0; k < 2; k++)
  {
    xfree(qs[k].a4); xfree(qs[k].a6); xfree(ref[k]);
  }
}

int
main(int argc, char **argv)
{
  char *files[3] = {};
  uint nf = 0;

  for (int i = 1; i < argc; i++)
  {
    if (!strcmp(argv[i], "-q") && (i + 1 < argc))
      nq = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-r") && (i + 1 < argc))
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--sweep"))
      do_sweep = 1;
    else if (!strcmp(argv[i], "--filters"))
      do_filters = 1;
    else if (nf < 3)
      files[nf++] = argv[i];
  }
  if (nf < 2)
  {
    fprintf(stderr, "usage: %s [-q N] [-r N] [--sweep] [--filters] TABLE4.xz TABLE6.xz [UPDATES.bgpdump-m.txt.gz]\n", argv[0]);
    return 2;
  }
  nq = (nq + 63) & ~63U;
  reps = MAX(reps, 1U);

  resource_init();
  bp = rp_new(&root_pool, "dpcpe bench");

  char vs[64] = "";
  for (uint v = 0; v < LPM_VAR_MAX; v++)
    if (lpm_variants_cpu() & (1U << v))
      bsprintf(vs + strlen(vs), " %s", lpm_variant_names[v]);
  printf("dpcpe-bench: %u queries per kind, median of %u runs; CPU variants:%s; CPU %d\n", nq, reps, vs, sched_getcpu());

  struct table t4 = {}, t6 = {};
  read_table(&t4, files[0], 32);
  bench_table(&t4, files[2]);
  read_table(&t6, files[1], 128);
  bench_table(&t6, files[2]);
  return 0;
}
