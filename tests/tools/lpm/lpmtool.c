/*
 *	bloombird -- LPM engine check and benchmark tool
 *
 *	Linked against the patched tree (tests/tools/lpm/build.sh, the way
 *	tests/tools/fib/fibtool.c is), so it runs the engines exactly as bird does.
 *	The engine is chosen by name (-e, default simd); every batch variant
 *	the engine implements and the CPU has is run.
 *
 *	lpmtool [-e ENG] queries 4|6 TABLE SEED OUTDIR [CAPTURE]
 *		OUTDIR/in (1M random addresses inside random table prefixes),
 *		OUTDIR/random (1M uniformly random; IPv6 in 2000::/3) and
 *		OUTDIR/trace (CAPTURE, the real capture destinations, as is);
 *		one address per line
 *	lpmtool [-e ENG] check 4|6 TABLE [UPDATES]
 *		exactness against a reference LPM: whole-table build, every
 *		variant, in/random/boundary queries, whole-table incremental
 *		insertion, then the RIS update trace replayed with checks along
 *		the way, then built-vs-incremental equivalence; exit 1 on any
 *		difference
 *	lpmtool [-e ENG] [-t SECONDS] [-n N] bench 4|6 TABLE QUERYDIR [UPDATES]
 *		"key value" lines: ns per lookup and Mlps per variant and query
 *		file, memory, build time, update rate, lookup loss while a
 *		thread applies the trace at 10x its real rate
 *	lpmtool plans 4|6 TABLE [PLAN...]
 *		simd only: memory and lookup time of stride plans
 *	lpmtool [-e ENG] fill 4|6 TABLE [ROUNDS]
 *		the work of a convergence: the whole table, shuffled as routes
 *		arrive over BGP, into an empty engine in batches of 256
 *		through lpm_apply() (as `protocol lpm' applies them), then
 *		withdrawn the same way; ns per change per round and medians
 *
 *	TABLE: "prefix/len" per line, anything after a tab ignored (.xz and
 *	.gz are read through xz/gzip). The value of a route is the 0-based
 *	index of the first line with its (masked) prefix (-n N: that index
 *	modulo N, so that N values repeat as next hops do in a forwarding
 *	table); later duplicates are ignored. UPDATES: `bgpdump -m' text (.gz), announcements and
 *	withdrawals of the table's family; the value of an announcement is
 *	0x40000000 + the peer's number in order of appearance.
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#define _GNU_SOURCE

#include "test/birdtest.h"
#include "test/bt-utils.h"

#include "nest/lpm.h"
#include "nest/lpm-simd.h"
#include "nest/lpm-dpcpe.h"
#include "lib/string.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NQ		1000000
#define BATCH		128

static int v6;
static uint bits;
static const struct lpm_class *cls;
static u32 variants;

/* xorshift64*, seeded */
static u64 rs = 88172645463325252ULL;
static inline u64 rnd(void) { rs ^= rs >> 12; rs ^= rs << 25; rs ^= rs >> 27; return rs * 0x2545f4914f6cdd1dULL; }
static inline u32 rnd_n(u32 n) { return (u32) ((rnd() >> 32) * n >> 32); }

static double
now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static FILE *
open_in(const char *fn)
{
  uint l = strlen(fn);
  if ((l > 3 && !strcmp(fn + l - 3, ".xz")) || (l > 3 && !strcmp(fn + l - 3, ".gz")))
  {
    char cmd[4096];
    bsnprintf(cmd, sizeof(cmd), "%s -dc '%s'", strcmp(fn + l - 3, ".xz") ? "gzip" : "xz", fn);
    FILE *f = popen(cmd, "r");
    if (!f)
      die("cannot run %s", cmd);
    return f;
  }
  FILE *f = fopen(fn, "r");
  if (!f)
    die("cannot open %s", fn);
  return f;
}

static void
close_in(const char *fn, FILE *f)
{
  uint l = strlen(fn);
  if ((l > 3 && !strcmp(fn + l - 3, ".xz")) || (l > 3 && !strcmp(fn + l - 3, ".gz")))
    pclose(f);
  else
    fclose(f);
}

static ip6_addr
pmask(ip6_addr a, uint len)
{
  if (!v6)
  {
    a.addr[0] &= len ? ~0U << (32 - len) : 0;
    return a;
  }
  return ip6_and(a, ip6_mkmask(len));
}

static ip6_addr
plast(ip6_addr a, uint len)
{
  ip6_addr m = v6 ? ip6_mkmask(len) : (ip6_addr) { .addr = { len ? ~0U << (32 - len) : 0, ~0U, ~0U, ~0U } };
  for (uint w = 0; w < (v6 ? 4U : 1U); w++)
    a.addr[w] |= ~m.addr[w];
  return a;
}

static ip6_addr
addr_step(ip6_addr a, int d)
{
  if (!v6)
  {
    a.addr[0] += d;
    return a;
  }
  for (int w = 3; w >= 0; w--)
  {
    u32 o = a.addr[w];
    a.addr[w] += d;
    if ((d > 0) ? (a.addr[w] > o) : (a.addr[w] < o))
      break;
  }
  return a;
}

static int
parse_addr(const char *s, ip6_addr *a)
{
  if (!v6)
  {
    ip4_addr x;
    if (!ip4_pton(s, &x))
      return 0;
    *a = (ip6_addr) { .addr = { ip4_to_u32(x) } };
    return 1;
  }
  return ip6_pton(s, a);
}

static int
parse_prefix(char *s, ip6_addr *a, uint *len)
{
  char *slash = strchr(s, '/');
  if (!slash)
    return 0;
  *slash = 0;
  char *end;
  long l = strtol(slash + 1, &end, 10);
  if ((end == slash + 1) || (l < 0) || (l > bits) || !parse_addr(s, a))
    return 0;
  *len = l;
  *a = pmask(*a, l);
  return 1;
}

static void
mknet(net_addr *n, ip6_addr a, uint len)
{
  if (v6)
    net_fill_ip6(n, a, len);
  else
    net_fill_ip4(n, ip4_from_u32(a.addr[0]), len);
}

/*
 *	Reference LPM: one hash per prefix length, probed longest first
 */

struct rmap {
  uint order, count;
  ip6_addr *key;
  u32 *val;
  u8 *used;
};

static struct rmap rm[IP6_MAX_PREFIX_LENGTH + 1];
static u8 rlens[IP6_MAX_PREFIX_LENGTH + 1];
static uint nrlens;

static inline uint
rmap_slot(const struct rmap *m, ip6_addr a)
{
  u64 x = ((u64) a.addr[0] << 32 | a.addr[1]) * 0x9e3779b97f4a7c15ULL;
  x ^= ((u64) a.addr[2] << 32 | a.addr[3]) * 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return (uint) (x >> (64 - m->order));
}

static void
rmap_init(struct rmap *m, uint order)
{
  m->order = order;
  m->count = 0;
  m->key = calloc(1U << order, sizeof(ip6_addr));
  m->val = calloc(1U << order, sizeof(u32));
  m->used = calloc(1U << order, 1);
}

static u32
rmap_get(const struct rmap *m, ip6_addr a)
{
  if (!m->count)
    return LPM_NONE;
  uint mask = (1U << m->order) - 1;
  for (uint i = rmap_slot(m, a); m->used[i]; i = (i + 1) & mask)
    if (ip6_equal(m->key[i], a))
      return m->val[i];
  return LPM_NONE;
}

static void rmap_put(struct rmap *m, ip6_addr a, u32 v);

static void
rmap_grow(struct rmap *m)
{
  struct rmap o = *m;
  rmap_init(m, o.order + 1);
  for (uint i = 0; i < (1U << o.order); i++)
    if (o.used[i])
      rmap_put(m, o.key[i], o.val[i]);
  free(o.key);
  free(o.val);
  free(o.used);
}

static void
rmap_put(struct rmap *m, ip6_addr a, u32 v)
{
  if (!m->order)
    rmap_init(m, 4);
  if (2 * (m->count + 1) > (1U << m->order))
    rmap_grow(m);

  uint mask = (1U << m->order) - 1, i;
  for (i = rmap_slot(m, a); m->used[i]; i = (i + 1) & mask)
    if (ip6_equal(m->key[i], a))
    {
      m->val[i] = v;
      return;
    }
  m->used[i] = 1;
  m->key[i] = a;
  m->val[i] = v;
  m->count++;
}

static void
rmap_del(struct rmap *m, ip6_addr a)
{
  if (!m->count)
    return;
  uint mask = (1U << m->order) - 1, i;
  for (i = rmap_slot(m, a); m->used[i]; i = (i + 1) & mask)
    if (ip6_equal(m->key[i], a))
      break;
  if (!m->used[i])
    return;

  for (uint j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask)
  {
    uint h = rmap_slot(m, m->key[j]);
    if (((j - h) & mask) >= ((j - i) & mask))
    {
      m->key[i] = m->key[j];
      m->val[i] = m->val[j];
      i = j;
    }
  }
  m->used[i] = 0;
  m->count--;
}

static void
ref_lens(void)
{
  nrlens = 0;
  for (int l = bits; l >= 0; l--)
    if (rm[l].count)
      rlens[nrlens++] = l;
}

static void
ref_set(ip6_addr a, uint len, u32 v)
{
  uint had = rm[len].count;
  if (v == LPM_NONE)
    rmap_del(&rm[len], a);
  else
    rmap_put(&rm[len], a, v);
  if (!had != !rm[len].count)
    ref_lens();
}

static u32
ref_lookup(ip6_addr a)
{
  for (uint i = 0; i < nrlens; i++)
  {
    u32 v = rmap_get(&rm[rlens[i]], pmask(a, rlens[i]));
    if (v != LPM_NONE)
      return v;
  }
  return LPM_NONE;
}

static u64
ref_count(void)
{
  u64 n = 0;
  for (uint l = 0; l <= bits; l++)
    n += rm[l].count;
  return n;
}

/* The reference's contents as routes for a build */
static struct lpm_route *
ref_routes(uint *count)
{
  uint n = ref_count(), k = 0;
  struct lpm_route *r = malloc((n + 1) * sizeof(struct lpm_route));
  for (uint l = 0; l <= bits; l++)
    for (uint i = 0; rm[l].order && (i < (1U << rm[l].order)); i++)
      if (rm[l].used[i])
      {
	mknet(&r[k].n.n, rm[l].key[i], l);
	r[k++].value = rm[l].val[i];
      }
  *count = k;
  return r;
}

/*
 *	Table
 */

struct pfx {
  ip6_addr a;
  u32 val;
  u8 len;
};

static struct pfx *tab;
static uint ntab;
static uint nvals;			/* -n: values modulo this (0: line index) */

static void
read_table(const char *fn)
{
  FILE *f = open_in(fn);
  char line[512];
  uint cap = 1 << 16, idx = 0;
  tab = malloc(cap * sizeof(struct pfx));

  while (fgets(line, sizeof(line), f))
  {
    line[strcspn(line, "\t\r\n")] = 0;
    ip6_addr a;
    uint len;
    if (!parse_prefix(line, &a, &len))
      continue;

    u32 i = idx++;
    if (rmap_get(&rm[len], a) != LPM_NONE)
      continue;				/* Later duplicate */
    if (nvals)
      i %= nvals;
    ref_set(a, len, i);

    if (ntab == cap)
      tab = realloc(tab, (cap *= 2) * sizeof(struct pfx));
    tab[ntab++] = (struct pfx) { .a = a, .len = len, .val = i };
  }
  close_in(fn, f);
  if (!ntab)
    die("%s: no prefixes", fn);
}

static struct lpm_route *
table_routes(void)
{
  struct lpm_route *r = malloc(ntab * sizeof(struct lpm_route));
  for (uint i = 0; i < ntab; i++)
  {
    mknet(&r[i].n.n, tab[i].a, tab[i].len);
    r[i].value = tab[i].val;
  }
  return r;
}

/*
 *	Query sets
 */

struct qs {
  const char *name;
  uint n;
  ip6_addr *a;				/* Always */
  ip4_addr *a4;				/* IPv4 copy */
};

static void
qs_alloc(struct qs *q, const char *name, uint n)
{
  q->name = name;
  q->n = n;
  q->a = malloc((n + 1) * sizeof(ip6_addr));
  q->a4 = malloc((n + 1) * sizeof(ip4_addr));
}

static void
qs_fix4(struct qs *q)
{
  for (uint i = 0; i < q->n; i++)
    q->a4[i] = ip4_from_u32(q->a[i].addr[0]);
}

static ip6_addr
addr_random(void)
{
  ip6_addr a = { .addr = { rnd(), rnd(), rnd(), rnd() } };
  if (!v6)
    a.addr[1] = a.addr[2] = a.addr[3] = 0;
  else
    a.addr[0] = (a.addr[0] & 0x1fffffff) | 0x20000000;	/* 2000::/3 */
  return a;
}

static ip6_addr
addr_inside(ip6_addr p, uint len)
{
  ip6_addr r = addr_random(), l = plast(p, len);
  if (v6)
    r.addr[0] = rnd();
  for (uint w = 0; w < 4; w++)
    r.addr[w] = p.addr[w] | (r.addr[w] & (l.addr[w] ^ p.addr[w]));
  return r;
}

static void
qs_in(struct qs *q, uint n)
{
  qs_alloc(q, "in", n);
  for (uint i = 0; i < n; i++)
  {
    const struct pfx *p = &tab[rnd_n(ntab)];
    q->a[i] = addr_inside(p->a, p->len);
  }
  qs_fix4(q);
}

static void
qs_random(struct qs *q, uint n)
{
  qs_alloc(q, "random", n);
  for (uint i = 0; i < n; i++)
    q->a[i] = addr_random();
  qs_fix4(q);
}

/* First and last address of every prefix, and the ones just outside */
static void
qs_boundary(struct qs *q, const struct pfx *p, uint np)
{
  qs_alloc(q, "boundary", 4 * np);
  for (uint i = 0; i < np; i++)
  {
    ip6_addr l = plast(p[i].a, p[i].len);
    q->a[4 * i] = p[i].a;
    q->a[4 * i + 1] = l;
    q->a[4 * i + 2] = addr_step(p[i].a, -1);
    q->a[4 * i + 3] = addr_step(l, 1);
  }
  qs_fix4(q);
}

static int
qs_read(struct qs *q, const char *name, const char *fn)
{
  FILE *f = fopen(fn, "r");
  if (!f)
    return 0;
  uint cap = 1 << 16;
  qs_alloc(q, name, cap);
  q->n = 0;
  char line[256];
  while (fgets(line, sizeof(line), f))
  {
    line[strcspn(line, " \t\r\n")] = 0;
    ip6_addr a;
    if (!parse_addr(line, &a))
      continue;
    if (q->n == cap)
    {
      cap *= 2;
      q->a = realloc(q->a, (cap + 1) * sizeof(ip6_addr));
      q->a4 = realloc(q->a4, (cap + 1) * sizeof(ip4_addr));
    }
    q->a[q->n++] = a;
  }
  fclose(f);
  qs_fix4(q);
  return 1;
}

static void
qs_write(const struct qs *q, const char *fn)
{
  FILE *f = fopen(fn, "w");
  if (!f)
    die("cannot write %s", fn);
  char buf[64];
  for (uint i = 0; i < q->n; i++)
  {
    if (v6)
      bsnprintf(buf, sizeof(buf), "%I6", q->a[i]);
    else
      bsnprintf(buf, sizeof(buf), "%I4", q->a4[i]);
    fputs(buf, f);
    fputc('\n', f);
  }
  fclose(f);
}

/*
 *	Engines
 */

static struct lpm_engine *
engine_new(uint variant)
{
  struct lpm_params par = { .variant = variant };
  struct lpm_engine *e = lpm_new(&root_pool, cls, v6 ? NET_IP6 : NET_IP4, &par);
  if (!e)
    die("engine %s: cannot create (variant %s)", cls->name,
	variant < LPM_VAR_MAX ? lpm_variant_names[variant] : "auto");
  return e;
}

static void
bulk(const struct lpm_engine *e, uint var, const struct qs *q, uint from, u32 *out, uint n)
{
  if (v6)
    cls->bulk6[var](e, q->a + from, out, n);
  else
    cls->bulk4[var](e, q->a4 + from, out, n);
}

static inline u32
single(const struct lpm_engine *e, const struct qs *q, uint i)
{
  return v6 ? lpm_lookup6(e, q->a[i]) : lpm_lookup4(e, q->a4[i]);
}

static char *
addr_str(ip6_addr a)
{
  static char buf[64];
  if (v6)
    bsnprintf(buf, sizeof(buf), "%I6", a);
  else
    bsnprintf(buf, sizeof(buf), "%I4", ip4_from_u32(a.addr[0]));
  return buf;
}

/*
 * Every answer of @e for @q: scalar single lookups against the reference
 * (if @ref) and every variant's batches (sizes 1..BATCH) against those.
 * Returns the number of differences (reports the first few).
 */
static uint
check_set(const char *what, const struct lpm_engine *e, const struct qs *q, int ref, const struct lpm_engine *other)
{
  u32 *s = malloc(q->n * sizeof(u32)), *b = malloc((q->n + BATCH) * sizeof(u32));
  uint bad = 0;

  for (uint i = 0; i < q->n; i++)
  {
    s[i] = single(e, q, i);
    u32 w = ref ? ref_lookup(q->a[i]) : other ? single(other, q, i) : s[i];
    if ((s[i] != w) && (bad++ < 5))
      printf("DIFF %s %s %s: scalar %u, %s %u\n", what, q->name, addr_str(q->a[i]), s[i], ref ? "reference" : "other", w);
  }

  for (uint v = 0; v < LPM_VAR_MAX; v++)
  {
    if (!(variants & (1U << v)))
      continue;
    for (uint i = 0; i < q->n; )
    {
      uint c = 1 + rnd_n(BATCH);
      c = MIN(c, q->n - i);
      bulk(e, v, q, i, b + i, c);
      i += c;
    }
    for (uint i = 0; i < q->n; i++)
      if ((b[i] != s[i]) && (bad++ < 5))
	printf("DIFF %s %s %s: %s %u, scalar %u\n", what, q->name, addr_str(q->a[i]), lpm_variant_names[v], b[i], s[i]);
  }

  free(s);
  free(b);
  return bad;
}

static const char *
variants_str(void)
{
  static char buf[64];
  buf[0] = 0;
  for (uint v = 0; v < LPM_VAR_MAX; v++)
    if (variants & (1U << v))
      strcat(strcat(buf, buf[0] ? " " : ""), lpm_variant_names[v]);
  return buf;
}

/*
 *	Update trace
 */

struct upd {
  double t;				/* Seconds from the first record */
  ip6_addr a;
  u8 len;
  u32 val;				/* LPM_NONE: withdrawal */
};

static struct upd *upd;
static uint nupd;

static void
read_updates(const char *fn)
{
  FILE *f = open_in(fn);
  char line[8192], peers[256][48];
  uint npeers = 0, cap = 1 << 16;
  long t0 = -1;
  upd = malloc(cap * sizeof(struct upd));
  nupd = 0;

  while (fgets(line, sizeof(line), f))
  {
    char *fld[7] = {}, *s = line;
    uint nf = 0;
    while (nf < 7 && (fld[nf] = strsep(&s, "|")))
      nf++;
    if ((nf < 6) || strcmp(fld[0], "BGP4MP") || (strcmp(fld[2], "A") && strcmp(fld[2], "W")))
      continue;
    if (!strchr(fld[5], ':') != !v6)
      continue;

    ip6_addr a;
    uint len;
    fld[5][strcspn(fld[5], "\r\n")] = 0;
    if (!parse_prefix(fld[5], &a, &len))
      continue;

    uint p;
    for (p = 0; (p < npeers) && strcmp(peers[p], fld[3]); p++)
      ;
    if (p == npeers && npeers < 256)
      strncpy(peers[npeers++], fld[3], 47);

    long t = atol(fld[1]);
    if (t0 < 0)
      t0 = t;
    if (nupd == cap)
      upd = realloc(upd, (cap *= 2) * sizeof(struct upd));
    upd[nupd++] = (struct upd) {
      .t = t - t0, .a = a, .len = len,
      .val = (fld[2][0] == 'A') ? 0x40000000 + p : LPM_NONE,
    };
  }
  close_in(fn, f);

  /* One-second timestamps: spread each second's records evenly over it */
  for (uint i = 0; i < nupd; )
  {
    uint j = i;
    while ((j < nupd) && (upd[j].t == upd[i].t))
      j++;
    for (uint k = i; k < j; k++)
      upd[k].t += (double) (k - i) / (j - i);
    i = j;
  }
}

static int
apply(struct lpm_engine *e, const struct upd *u)
{
  net_addr_union n;
  mknet(&n.n, u->a, u->len);
  return (u->val == LPM_NONE) ? lpm_remove(e, &n.n, NULL) : lpm_update(e, &n.n, u->val, NULL);
}

/*
 *	queries
 */

static int
cmd_queries(const char *table, const char *seed, const char *dir, const char *capture)
{
  rs = strtoull(seed, NULL, 10) * 0x9e3779b97f4a7c15ULL + 1;
  read_table(table);
  mkdir(dir, 0755);

  struct qs in, any;
  char fn[4096];
  qs_in(&in, NQ);
  qs_random(&any, NQ);
  bsnprintf(fn, sizeof(fn), "%s/in", dir);
  qs_write(&in, fn);
  bsnprintf(fn, sizeof(fn), "%s/random", dir);
  qs_write(&any, fn);
  printf("%s/in: %u addresses inside random prefixes of %u\n", dir, in.n, ntab);
  printf("%s/random: %u uniformly random addresses%s\n", dir, any.n, v6 ? " in 2000::/3" : "");

  if (capture)
  {
    FILE *f = open_in(capture);
    bsnprintf(fn, sizeof(fn), "%s/trace", dir);
    FILE *o = fopen(fn, "w");
    if (!o)
      die("cannot write %s", fn);
    char line[256];
    uint n = 0;
    while (fgets(line, sizeof(line), f))
      n += (fputs(line, o) >= 0);
    fclose(o);
    close_in(capture, f);
    printf("%s/trace: %u capture destinations from %s\n", dir, n, capture);
  }
  return 0;
}

/*
 *	check
 */

static int
cmd_check(const char *table, const char *updates)
{
  uint bad = 0;
  double t;

  read_table(table);
  printf("table %s: %u prefixes (IPv%d); engine %s; variants %s\n", table, ntab, v6 ? 6 : 4, cls->name, variants_str());

  struct qs in, any, bnd;
  qs_in(&in, NQ);
  qs_random(&any, NQ);
  qs_boundary(&bnd, tab, ntab);

  /* Whole-table build */
  struct lpm_route *r = table_routes();
  struct lpm_engine *e = engine_new(LPM_VAR_AUTO);
  t = now();
  if (lpm_build(e, r, ntab) < 0)
    die("build failed");
  printf("built in %.3f s\n", now() - t);

  uint b = check_set("build", e, &in, 1, NULL) + check_set("build", e, &any, 1, NULL) + check_set("build", e, &bnd, 1, NULL);
  printf("%s build: %u in, %u random, %u boundary queries, every variant against scalar against the reference: %u differences\n",
	 b ? "FAIL" : "ok  ", in.n, any.n, bnd.n, b);
  bad += b;

  /* The same table inserted route by route */
  struct lpm_engine *inc = engine_new(LPM_VAR_AUTO);
  t = now();
  for (uint i = 0; i < ntab; i++)
    if (lpm_update(inc, &r[i].n.n, r[i].value, NULL) < 0)
      die("update failed");
  t = now() - t;
  b = check_set("incremental", inc, &in, 0, e) + check_set("incremental", inc, &any, 0, e) + check_set("incremental", inc, &bnd, 0, e);
  printf("%s inserted route by route (%.0f routes/s): answers equal to the built table: %u differences\n",
	 b ? "FAIL" : "ok  ", ntab / t, b);
  bad += b;
  lpm_free(inc);

  if (updates)
  {
    read_updates(updates);
    struct qs touched;
    uint np = 0, every = 10000, checks = 0;
    struct pfx *tp = malloc(nupd * sizeof(struct pfx));
    t = now();
    for (uint i = 0; i < nupd; i++)
    {
      if (apply(e, &upd[i]) < 0)
	die("update %u failed", i);
      ref_set(upd[i].a, upd[i].len, upd[i].val);
      tp[np++] = (struct pfx) { .a = upd[i].a, .len = upd[i].len };

      if (!((i + 1) % every) || (i + 1 == nupd))
      {
	/* What was touched since the last check, and a sample of the rest */
	struct qs smp;
	qs_boundary(&touched, tp, np);
	qs_in(&smp, 20000);
	b = check_set("trace", e, &touched, 1, NULL) + check_set("trace", e, &smp, 1, NULL);
	if (b)
	  printf("FAIL after update %u\n", i + 1);
	bad += b;
	checks++;
	np = 0;
	free(touched.a); free(touched.a4); free(smp.a); free(smp.a4);
      }
    }
    b = check_set("trace end", e, &in, 1, NULL) + check_set("trace end", e, &any, 1, NULL) + check_set("trace end", e, &bnd, 1, NULL);
    printf("%s RIS trace: %u updates of this family replayed (%.1f s with checks), %u checks on the way and one of everything at the end: %u differences\n",
	   b ? "FAIL" : "ok  ", nupd, now() - t, checks, b);
    bad += b;

    /* The table the trace left, built whole, answers as the incremental one */
    uint n;
    struct lpm_route *fr = ref_routes(&n);
    struct lpm_engine *e2 = engine_new(LPM_VAR_AUTO);
    if (lpm_build(e2, fr, n) < 0)
      die("build failed");
    struct qs fb;
    struct pfx *fp = malloc(n * sizeof(struct pfx));
    for (uint i = 0; i < n; i++)
      fp[i] = (struct pfx) { .a = v6 ? net6_prefix(&fr[i].n.n) : (ip6_addr) { .addr = { ip4_to_u32(net4_prefix(&fr[i].n.n)) } },
			     .len = fr[i].n.n.pxlen };
    qs_boundary(&fb, fp, n);
    b = check_set("rebuilt", e2, &in, 0, e) + check_set("rebuilt", e2, &any, 0, e) + check_set("rebuilt", e2, &fb, 0, e);
    printf("%s after the trace: %u prefixes built whole answer as the incrementally updated table: %u differences\n",
	   b ? "FAIL" : "ok  ", n, b);
    bad += b;

    struct lpm_stats s1, s2;
    lpm_stats(e, &s1);
    lpm_stats(e2, &s2);
    printf("     incremental: %lu units, %lu bytes lookup memory; rebuilt: %lu units, %lu bytes\n",
	   (ulong) s1.units, (ulong) s1.mem_lookup, (ulong) s2.units, (ulong) s2.mem_lookup);
    if (s1.prefixes != s2.prefixes || s1.prefixes != ref_count())
    {
      printf("FAIL prefix counts: incremental %lu, rebuilt %lu, reference %lu\n",
	     (ulong) s1.prefixes, (ulong) s2.prefixes, (ulong) ref_count());
      bad++;
    }
    lpm_free(e2);
  }

  lpm_free(e);
  printf("variants run: %s\n", variants_str());
  printf("%s\n", bad ? "FAILED" : "all checks passed");
  return !!bad;
}

/*
 *	bench
 */

static uint bench_secs = 3;

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median(double *v, uint n)
{
  qsort(v, n, sizeof(double), cmp_double);
  return v[n / 2];
}

static volatile u32 sink;

/*
 * ns per lookup, batches of BATCH, median of 5 passes over the set. Not
 * inlined, nor time_single(): tests/bench/lpm-count counts instructions per
 * call of each by name.
 */
static __attribute__((noinline)) double
time_bulk(const struct lpm_engine *e, uint var, const struct qs *q)
{
  u32 out[BATCH];
  double r[5];
  uint reps = MAX(1U, 2000000 / q->n);

  for (uint k = 0; k < 5; k++)
  {
    double t = now();
    for (uint rep = 0; rep < reps; rep++)
      for (uint i = 0; i + BATCH <= q->n; i += BATCH)
      {
	bulk(e, var, q, i, out, BATCH);
	sink += out[BATCH - 1];
      }
    r[k] = (now() - t) * 1e9 / (reps * (q->n / BATCH * BATCH));
  }
  return median(r, 5);
}

static __attribute__((noinline)) double
time_single(const struct lpm_engine *e, const struct qs *q)
{
  double r[5];
  uint reps = MAX(1U, 2000000 / q->n);

  for (uint k = 0; k < 5; k++)
  {
    double t = now();
    u32 x = 0;
    for (uint rep = 0; rep < reps; rep++)
      for (uint i = 0; i < q->n; i++)
	x += single(e, q, i);
    sink += x;
    r[k] = (now() - t) * 1e9 / (reps * q->n);
  }
  return median(r, 5);
}

/*
 * Lookup loss while a thread applies the trace at 10x. The writer goes on
 * through the trace from where the previous loaded window stopped (the
 * trace's own timing, divided by @speed), so every window applies new
 * updates, never the same ones again as no-ops.
 */
static struct {
  struct lpm_engine *e;
  _Atomic int stop;
  int cpu;
  uint next, applied, late, wrapped;
  double speed;
} ld;

static void *
loader_main(void *arg UNUSED)
{
  if (ld.cpu >= 0)
  {
    cpu_set_t cs;
    CPU_ZERO(&cs);
    CPU_SET(ld.cpu, &cs);
    pthread_setaffinity_np(pthread_self(), sizeof(cs), &cs);
  }

  double t0 = now() - upd[ld.next].t / ld.speed;
  while (!atomic_load_explicit(&ld.stop, memory_order_relaxed))
  {
    uint i = ld.next;
    double due = t0 + upd[i].t / ld.speed, d = due - now();
    if (d > 0)
    {
      struct timespec ts = { (time_t) d, (long) ((d - (time_t) d) * 1e9) };
      nanosleep(&ts, NULL);
    }
    else if (d < -0.01)
      ld.late++;
    apply(ld.e, &upd[i]);
    ld.applied++;
    if (++ld.next == nupd)
    {
      ld.next = 0;
      ld.wrapped++;
      t0 = now();
    }
  }
  return NULL;
}

/* Lookups per second for @secs, with lpm_read_begin/end around each batch */
static double
reader_rate(struct lpm_engine *e, uint var, const struct qs *q, double secs)
{
  struct lpm_reader r;
  u32 out[BATCH];
  u64 n = 0;
  lpm_reader_add(e, &r);
  double t0 = now(), t;
  do
  {
    for (uint i = 0; i + BATCH <= q->n; i += BATCH)
    {
      lpm_read_begin(e, &r);
      bulk(e, var, q, i, out, BATCH);
      lpm_read_end(&r);
      sink += out[0];
      n += BATCH;
      if (!(i & 0xffff) && (now() - t0 > secs))
	break;
    }
    t = now() - t0;
  }
  while (t < secs);
  lpm_reader_remove(e, &r);
  return n / t;
}

static void
key(const char *k, const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  printf("%s.v%d.%s ", cls->name, v6 ? 6 : 4, k);
  vprintf(fmt, args);
  putchar('\n');
  va_end(args);
}

static long region_huge_kb(const struct lpm_engine *e);

static int
cmd_bench(const char *table, const char *dir, const char *updates)
{
  read_table(table);
  struct lpm_route *r = table_routes();
  const char *tn = strrchr(table, '/') ? strrchr(table, '/') + 1 : table;

  struct qs qs[3];
  const char *names[3] = { "in", "random", "trace" };
  uint nq = 0;
  for (uint i = 0; i < 3; i++)
  {
    char fn[4096];
    bsnprintf(fn, sizeof(fn), "%s/%s", dir, names[i]);
    if (qs_read(&qs[nq], names[i], fn))
      nq++;
    else
      printf("# %s missing, skipped\n", fn);
  }

  key("table", "%s", tn);
  key("prefixes", "%u", ntab);
  key("variants", "%s", variants_str());
  key("cpu", "%d", sched_getcpu());
  key("thp", "%s", prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1 ? "off" : "advised");

  /* Whole-table builds, each into a fresh engine */
  double bt[3];
  struct lpm_engine *e = NULL;
  for (uint k = 0; k < 3; k++)
  {
    lpm_free(e);
    e = engine_new(LPM_VAR_AUTO);
    double t = now();
    if (lpm_build(e, r, ntab) < 0)
      die("build failed");
    bt[k] = now() - t;
  }
  key("build.ms", "%.1f", median(bt, 3) * 1e3);

  struct lpm_stats s;
  lpm_stats(e, &s);
  key("mem.lookup.bytes", "%lu", (ulong) s.mem_lookup);
  key("mem.control.bytes", "%lu", (ulong) s.mem_control);
  key("units", "%lu", (ulong) s.units);
  key("mem.lookup.hugepages_kb", "%ld", region_huge_kb(e));

  for (uint v = 0; v < LPM_VAR_MAX; v++)
  {
    if (!(variants & (1U << v)))
      continue;
    for (uint i = 0; i < nq; i++)
    {
      double ns = time_bulk(e, v, &qs[i]);
      char k[64];
      bsnprintf(k, sizeof(k), "%s.%s.batch.ns", lpm_variant_names[v], qs[i].name);
      key(k, "%.2f", ns);
      bsnprintf(k, sizeof(k), "%s.%s.batch.mlps", lpm_variant_names[v], qs[i].name);
      key(k, "%.1f", 1e3 / ns);
    }
  }
  for (uint i = 0; i < nq; i++)
  {
    double ns = time_single(e, &qs[i]);
    char k[64];
    bsnprintf(k, sizeof(k), "single.%s.ns", qs[i].name);
    key(k, "%.2f", ns);
  }

  if (updates)
  {
    read_updates(updates);

    /* As fast as possible, on top of the full table: median of 3 fresh tables */
    double tu[3];
    for (uint k = 0; k < 3; k++)
    {
      if (k)
      {
	lpm_free(e);
	e = engine_new(LPM_VAR_AUTO);
	if (lpm_build(e, r, ntab) < 0)
	  die("build failed");
      }
      struct simd_info i0, i1;
      int simd = !strcmp(cls->name, "simd");
      if (simd)
	simd_get_info(e, &i0);
      double t = now();
      for (uint i = 0; i < nupd; i++)
	if (apply(e, &upd[i]) < 0)
	  die("update failed");
      tu[k] = now() - t;
      if (simd && !k)
      {
	/* Stores into live lookup memory: what a concurrent reader can feel */
	simd_get_info(e, &i1);
	key("updates.element_writes", "%lu", (ulong) (i1.writes - i0.writes));
	key("updates.element_writes_per_update", "%.1f", (double) (i1.writes - i0.writes) / MAX(nupd, 1U));
      }
    }
    key("updates.count", "%u", nupd);
    key("updates.per_s", "%.0f", nupd / median(tu, 3));
    key("updates.trace_s", "%.0f", nupd ? upd[nupd - 1].t : 0.0);
    key("updates.trace_per_s", "%.0f", nupd ? nupd / MAX(upd[nupd - 1].t, 1.0) : 0.0);

    /* The whole table inserted route by route into an empty engine */
    lpm_free(e);
    e = engine_new(LPM_VAR_AUTO);
    double t = now();
    for (uint i = 0; i < ntab; i++)
      if (lpm_update(e, &r[i].n.n, r[i].value, NULL) < 0)
	die("update failed");
    key("insert.per_s", "%.0f", ntab / (now() - t));

    /* Loss at 10x: baseline and loaded runs alternate, medians */
    lpm_free(e);
    e = engine_new(LPM_VAR_AUTO);
    if (lpm_build(e, r, ntab) < 0)
      die("build failed");
    const struct qs *q = &qs[0];
    ld.e = e;
    ld.speed = 10;
    ld.cpu = -1;
    int me = sched_getcpu();
    for (int c = 0; c < CPU_SETSIZE && c < 64; c++)
      if ((c != me) && (ld.cpu < 0))
      {
	cpu_set_t cs;
	CPU_ZERO(&cs);
	CPU_SET(c, &cs);
	if (!sched_setaffinity(0, sizeof(cs), &cs))
	{
	  ld.cpu = c;
	  CPU_ZERO(&cs);
	  CPU_SET(me, &cs);
	  sched_setaffinity(0, sizeof(cs), &cs);
	}
      }

    /* Alternating windows without and with the writer; loss per pair */
#define LOSS_ROUNDS 7
    double base[LOSS_ROUNDS], load[LOSS_ROUNDS], pair[LOSS_ROUNDS];
    uint applied = 0;
    ld.next = 0;
    for (uint k = 0; k < LOSS_ROUNDS; k++)
    {
      base[k] = reader_rate(e, e->variant, q, bench_secs);

      pthread_t th;
      atomic_store(&ld.stop, 0);
      ld.applied = 0;
      pthread_create(&th, NULL, loader_main, NULL);
      load[k] = reader_rate(e, e->variant, q, bench_secs);
      atomic_store(&ld.stop, 1);
      pthread_join(th, NULL);
      applied += ld.applied;
      pair[k] = 100 * (1 - load[k] / base[k]);
    }
    double b = median(base, LOSS_ROUNDS), l = median(load, LOSS_ROUNDS);
    double pmin = pair[0], pmax = pair[0];
    for (uint k = 1; k < LOSS_ROUNDS; k++)
      pmin = MIN(pmin, pair[k]), pmax = MAX(pmax, pair[k]);
    key("loss.variant", "%s", lpm_variant_names[e->variant]);
    key("loss.queries", "%s", q->name);
    key("loss.writer_cpu", "%d", ld.cpu);
    key("loss.rounds", "%u", LOSS_ROUNDS);
    key("loss.updates_applied", "%u", applied);
    key("loss.updates_per_s", "%.0f", applied / ((double) LOSS_ROUNDS * bench_secs));
    key("loss.trace_wrapped", "%u", ld.wrapped);
    key("loss.late_updates", "%u", ld.late);
    key("loss.base.mlps", "%.1f", b / 1e6);
    key("loss.loaded.mlps", "%.1f", l / 1e6);
    key("loss.pct", "%.2f", 100 * (1 - l / b));
    key("loss.pair_median.pct", "%.2f", median(pair, LOSS_ROUNDS));
    key("loss.pair_min.pct", "%.2f", pmin);
    key("loss.pair_max.pct", "%.2f", pmax);
  }

  lpm_free(e);
  return 0;
}

/*
 *	plans (simd)
 */

/* Huge pages backing the simd engine's region, kB (-1: unknown) */
static long
region_huge_kb(const struct lpm_engine *e)
{
  if (strcmp(cls->name, "simd"))
    return -1;
  ulong base = (ulong) simd_region_base(e), lo, hi;
  char line[256];
  FILE *f = fopen("/proc/self/smaps", "r");
  long kb = -1;
  int in = 0;
  while (f && fgets(line, sizeof(line), f))
  {
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
      in = (base >= lo) && (base < hi);
    else if (in && !strncmp(line, "AnonHugePages:", 14))
      kb = atol(line + 14);
  }
  if (f)
    fclose(f);
  return kb;
}

static int
cmd_plans(const char *table, char **plans, uint np)
{
  static const char *def4[] = { "20-4-8", "16-8-8", "18-6-8", "19-5-8", "16-4-4-8", "16-4-4-4-4", "17-7-8" };
  static const char *def6[] = {
    "20-4-8-6-5-5-8-8-8-8-8-8-8-8-8-8",
    "18-6-8-6-5-5-8-8-8-8-8-8-8-8-8-8",
    "16-8-8-8-4-4-8-8-8-8-8-8-8-8-8-8",
    "16-8-8-8-8-8-8-8-8-8-8-8-8-8-8",
    "16-8-8-4-4-4-4-8-8-8-8-8-8-8-8-8-8",
    "16-8-8-6-5-5-8-8-8-8-8-8-8-8-8-8",
    "16-8-4-4-4-4-4-4-8-8-8-8-8-8-8-8-8-8",
    "20-4-8-8-4-4-8-8-8-8-8-8-8-8-8-8",
  };
  if (!np)
  {
    plans = (char **) (v6 ? def6 : def4);
    np = v6 ? ARRAY_SIZE(def6) : ARRAY_SIZE(def4);
  }

  read_table(table);
  struct lpm_route *r = table_routes();
  struct qs in, any;
  qs_in(&in, NQ);
  qs_random(&any, NQ);

  struct lpm_engine *es[np];
  double tb[np], tin[np][5], tany[np][5], tsc[np][5];
  for (uint i = 0; i < np; i++)
  {
    u8 st[SIMD_MAX_LEVELS];
    int n = simd_plan_parse(plans[i], st, SIMD_MAX_LEVELS);
    es[i] = (n > 0) ? simd_new_plan(&root_pool, v6 ? NET_IP6 : NET_IP4, LPM_VAR_AUTO, st, n) : NULL;
    if (!es[i])
      continue;
    double t = now();
    if (lpm_build(es[i], r, ntab) < 0)
      die("build failed");
    tb[i] = now() - t;
  }

  /* Rounds over all plans, so that noise from elsewhere hits them alike */
  for (uint k = 0; k < 5; k++)
    for (uint i = 0; i < np; i++)
      if (es[i])
      {
	tin[i][k] = time_bulk(es[i], es[i]->variant, &in);
	tany[i][k] = time_bulk(es[i], es[i]->variant, &any);
	tsc[i][k] = time_bulk(es[i], LPM_VAR_SCALAR, &in);
      }

  for (uint i = 0; i < np; i++)
  {
    struct lpm_engine *e = es[i];
    if (!e)
    {
      printf("plan %s: refused\n", plans[i]);
      continue;
    }

    struct simd_info inf;
    simd_get_info(e, &inf);
    u64 mem = (1ULL << inf.stride[0]) * 4;
    char rows[256] = "";
    for (uint k = 1; k < inf.levels; k++)
    {
      mem += (inf.rows[k] << inf.stride[k]) * 4;
      if (inf.rows[k])
	bsnprintf(rows + strlen(rows), sizeof(rows) - strlen(rows), " %lu", (ulong) inf.rows[k]);
    }
    struct lpm_stats s;
    lpm_stats(e, &s);

    printf("plan %-38s huge %5ld kB  lookup %6.1f MB  control %6.1f MB  build %4.0f ms  %s in %5.2f ns  random %5.2f ns  scalar in %5.2f ns  rows:%s\n",
	   plans[i], region_huge_kb(e), mem / 1e6, s.mem_control / 1e6, tb[i] * 1e3, lpm_variant_names[e->variant],
	   median(tin[i], 5), median(tany[i], 5), median(tsc[i], 5), rows);
    lpm_free(e);
  }
  return 0;
}

/*
 *	fill: a convergence's changes, as the exporter applies them
 */

#define FILL_BATCH	256		/* LPMX_BATCH */

static double
fill_pass(struct lpm_engine *e, const struct lpm_route *r, uint withdraw)
{
  struct lpm_change *q = malloc(FILL_BATCH * sizeof(struct lpm_change));
  double t = now();

  for (uint i = 0; i < ntab; i += FILL_BATCH)
  {
    uint k = MIN(FILL_BATCH, ntab - i);
    for (uint j = 0; j < k; j++)
    {
      q[j].n = r[i + j].n;
      q[j].value = withdraw ? LPM_NONE : r[i + j].value;
    }
    if (lpm_apply(e, q, k))
      die("fill: update failed");
  }

  t = now() - t;
  free(q);
  return t * 1e9 / ntab;
}

static int
cmd_fill(const char *table, const char *rounds)
{
  uint nr = rounds ? atoi(rounds) : 5;
  read_table(table);
  struct lpm_route *r = table_routes();
  double *ti = malloc(nr * sizeof(double)), *tw = malloc(nr * sizeof(double));

  /* BGP brings routes in the sender's order, unrelated to their addresses */
  rs = 12345;
  for (uint i = ntab - 1; i > 0; i--)
  {
    uint j = rnd_n(i + 1);
    struct lpm_route x = r[i]; r[i] = r[j]; r[j] = x;
  }

  for (uint i = 0; i < nr; i++)
  {
    struct lpm_engine *e = engine_new(LPM_VAR_AUTO);
    ti[i] = fill_pass(e, r, 0);
    struct lpm_stats s;
    lpm_stats(e, &s);
    if (s.prefixes != ntab)
      die("fill: %lu prefixes after the fill, %u expected", (ulong) s.prefixes, ntab);
    tw[i] = fill_pass(e, r, 1);
    lpm_stats(e, &s);
    if (s.prefixes)
      die("fill: %lu prefixes left after withdrawing all", (ulong) s.prefixes);
    printf("round %u: %.1f ns per announcement, %.1f ns per withdrawal\n", i + 1, ti[i], tw[i]);
    lpm_free(e);
  }

  key("fill.announce.ns", "%.1f", median(ti, nr));
  key("fill.withdraw.ns", "%.1f", median(tw, nr));
  return 0;
}

int
main(int argc, char *argv[])
{
  const char *eng = "simd";
  int c;

  int huge = 0;
  bt_init(1, (char *[]) { "lpmtool", NULL });
  optind = 1;
  while ((c = getopt(argc, argv, "e:t:n:H")) >= 0)
    switch (c)
    {
    case 'e': eng = optarg; break;
    case 'n': nvals = atoi(optarg); break;
    case 'H': huge = 1; break;
    case 't': bench_secs = atoi(optarg); break;
    default: goto usage;
    }
  argc -= optind;
  argv += optind;
  if (argc < 3)
    goto usage;

  /*
   * BIRD turns transparent huge pages off for the whole process
   * (PR_SET_THP_DISABLE, for its own allocator); -H allows them again for
   * regions that ask (MADV_HUGEPAGE), as PR_THP_DISABLE_EXCEPT_ADVISED
   * (Linux 6.18) does, or everywhere on older kernels.
   */
  if (huge && (prctl(PR_SET_THP_DISABLE, 1, 1 << 1, 0, 0) < 0) && (prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0) < 0))
    die("cannot allow huge pages: %m");
  v6 = (argv[1][0] == '6');
  bits = v6 ? IP6_MAX_PREFIX_LENGTH : IP4_MAX_PREFIX_LENGTH;
  /* perlength, the ablation of dpcpe, is no configuration engine: by class */
  if (!(cls = lpm_class_find(eng)) && !(cls = strcmp(eng, "perlength") ? NULL : &lpm_perlength_class))
    die("unknown engine %s", eng);
  variants = cls->variants & lpm_variants_cpu();
  for (uint v = 0; v < LPM_VAR_MAX; v++)
    if (v6 ? !cls->bulk6[v] : !cls->bulk4[v])
      variants &= ~(1U << v);

  if (!strcmp(argv[0], "queries") && (argc >= 5))
    return cmd_queries(argv[2], argv[3], argv[4], argc > 5 ? argv[5] : NULL);
  if (!strcmp(argv[0], "check"))
    return cmd_check(argv[2], argc > 3 ? argv[3] : NULL);
  if (!strcmp(argv[0], "bench") && (argc >= 4))
    return cmd_bench(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
  if (!strcmp(argv[0], "plans") && !strcmp(eng, "simd"))
    return cmd_plans(argv[2], argv + 3, argc - 3);
  if (!strcmp(argv[0], "fill"))
    return cmd_fill(argv[2], argc > 3 ? argv[3] : NULL);

usage:
  fprintf(stderr, "usage: lpmtool [-e ENGINE] queries 4|6 TABLE SEED OUTDIR [CAPTURE]\n"
	  "       lpmtool [-e ENGINE] check 4|6 TABLE [UPDATES]\n"
	  "       lpmtool [-e ENGINE] [-t SECONDS] [-n VALUES] [-H] bench 4|6 TABLE QUERYDIR [UPDATES]\n"
	  "       lpmtool plans 4|6 TABLE [PLAN...]\n"
	  "       lpmtool [-e ENGINE] fill 4|6 TABLE [ROUNDS]\n");
  return 2;
}
