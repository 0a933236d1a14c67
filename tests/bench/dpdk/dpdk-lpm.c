/*
 *	bloombird -- DPDK reference LPM benchmark
 *
 *	dpdk-lpm 4|6 TABLE QUERYDIR [--dump KIND] [--batch N] [--only NAME] [-- EAL args]
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: DPDK reference LPM benchmark
 *
 * bloombird's LPM engines promise to beat DPDK's longest-prefix-match
 * libraries; a promise like that is only worth something when DPDK is
 * measured on the same machine, the same table and the same queries, in the
 * same run. This standalone program (not part of the BIRD tree, linked only
 * against the system's DPDK 22.11) loads a table into every DPDK 22.11 LPM
 * structure of the family and measures each lookup variant:
 *
 * IPv4: rte_fib (DIR24_8, 4-byte next hops) with the AVX-512 and the scalar
 * (macro) bulk lookup, rte_lpm (DIR-24-8) with rte_lpm_lookup_bulk() and
 * rte_lpm_lookupx4(). IPv6: rte_fib6 (TRIE, 4-byte next hops) with the
 * AVX-512 and the scalar bulk lookup, rte_lpm6 with
 * rte_lpm6_lookup_bulk_func().
 *
 * Values: a route's value is the 0-based index, among the successfully
 * parsed lines of TABLE, of the first line holding its masked prefix (later
 * duplicates are ignored), as bloombird's own tools number routes, so that
 * answers can be compared line by line. The structures store a dense route
 * number (0 .. routes-1, which fits every structure's next-hop width far
 * longer than the line index would) and answers are mapped back to line
 * indices when printed. rte_lpm and rte_lpm6 refuse a /0: a default route is
 * given to them as the /1 halves the table does not have itself, which
 * answers the same. A table with more routes than a structure's next-hop
 * width holds is not loaded into it; the output says so.
 *
 * Memory is what the libraries allocated from DPDK's heap (heap statistics
 * before creation and after the build): all of it (mem_bytes: the rte_fib
 * family keeps a RIB beside its lookup tables, rte_lpm a rule table) and
 * the lookup tables alone (mem_tables_bytes: an empty structure with the
 * same second-level groups). Those groups are allocated at creation, so
 * each structure gets as few as it needs to load the table (dl_build()).
 * DPDK runs without hugepages (--no-huge: its memory is then a memfd of
 * ordinary 4 KiB pages, so lookups in the 64 MiB first-level tables pay TLB
 * misses that a hugepage deployment would not) unless --huge asks for
 * hugetlbfs pages, as DPDK is deployed; the output says which.
 * Lookups are timed in bulk
 * batches over a whole query file, repeated for at least 0.5 s per round,
 * median of 5 rounds. Which lookup function DPDK really installed is printed
 * (library and offset), and an unavailable variant is reported, never
 * silently replaced.
 *
 * Output: "# " comment lines and "key value" lines; --dump KIND prints
 * instead, per query of file KIND, the answer of every variant.
 */

#define _GNU_SOURCE
#define ALLOW_EXPERIMENTAL_API		/* rte_vect_set_max_simd_bitwidth() in 22.11 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>
#include <rte_vect.h>
#include <rte_version.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;
typedef unsigned int uint;

#define DL_NONE		UINT32_MAX		/* answer: no covering route */
#define DL_FIB_NONE	((1ULL << 31) - 1)	/* rte_fib/rte_fib6 4-byte default: largest next hop */
#define DL_LPM_MAX	((1U << 24) - 1)	/* rte_lpm next hops: 24 bits */
#define DL_LPM6_MAX	((1U << 21) - 1)	/* rte_lpm6 next hops: 21 bits */
#define DL_ROUNDS	5
#define DL_ROUND_S	0.5
#define DL_BATCH_MAX	1024

static const char *dl_kinds[] = { "in", "random", "trace" };
#define DL_KINDS (sizeof(dl_kinds) / sizeof(dl_kinds[0]))

struct dl_route {
  u8 a[16];				/* masked prefix, network order */
  u8 len;
  u32 line;				/* index among parsed lines */
};

struct dl_queries {
  const char *kind;
  uint n;
  void *q;				/* u32 host order (IPv4) or u8[16] (IPv6) */
};

/**
 * struct dl_variant - one lookup variant of one DPDK structure
 * @name: output key prefix ("rte_fib.avx512")
 * @select: installs this variant's lookup, returns 0 or a negative error
 * @fn: the function that will do the lookups, for the report
 * @lookup: bulk lookup of @n queries into a raw answer buffer
 * @decode: raw answer @i to a dense route number or %DL_NONE
 */
struct dl_variant {
  const char *name;
  int (*select)(void);
  void *(*fn)(void);
  void (*lookup)(const void *q, uint n, void *raw);
  u32 (*decode)(const void *raw, uint i);
  int usable;
  u32 *ans[DL_KINDS];
};

static int dl_v6;
static uint dl_qsize;			/* bytes per query address */
static uint dl_batch = 64;
static int dl_huge;			/* --huge: DPDK's heap on hugetlbfs pages */

static struct dl_route *dl_routes;	/* unique routes, file order */
static uint dl_routes_n, dl_lines, dl_dups, dl_bad;
static int dl_default = -1;		/* dense number of a /0, if any */

static struct dl_queries dl_q[DL_KINDS];

static struct rte_fib *dl_fib;
static struct rte_fib6 *dl_fib6;
static struct rte_lpm *dl_lpm;
static struct rte_lpm6 *dl_lpm6;

static volatile u64 dl_sink;
static int dl_dumping;			/* --dump: key lines become comments */
static const char *dl_only;		/* --only: structures and variants named so (a prefix) */

static inline int
dl_left_out(const char *name)
{
  return dl_only && strncmp(name, dl_only, strlen(dl_only));
}

static void
dl_die(const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  fputs("dpdk-lpm: ", stderr);
  vfprintf(stderr, fmt, args);
  fputc('\n', stderr);
  va_end(args);
  exit(1);
}

/* A "key value" line; a comment while dumping */
static void
dl_put(const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  if (dl_dumping && fmt[0] != '#')
    fputs("# ", stdout);
  vprintf(fmt, args);
  va_end(args);
}

static double
dl_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
dl_mask(u8 *a, uint len)
{
  for (uint i = 0; i < 16; i++)
  {
    uint bits = (len > i * 8) ? len - i * 8 : 0;
    if (bits < 8)
      a[i] &= (u8) (0xff00 >> bits);
  }
}

static inline u32
dl_ip4(const u8 *a)
{
  return ((u32) a[0] << 24) | ((u32) a[1] << 16) | ((u32) a[2] << 8) | a[3];
}


/*
 *	Table
 */

static int
dl_route_cmp(const void *x, const void *y)
{
  const struct dl_route *a = x, *b = y;
  int c = memcmp(a->a, b->a, 16);
  if (c)
    return c;
  if (a->len != b->len)
    return a->len - b->len;
  return (a->line > b->line) - (a->line < b->line);
}

static int
dl_line_cmp(const void *x, const void *y)
{
  const struct dl_route *a = x, *b = y;
  return (a->line > b->line) - (a->line < b->line);
}

/* "prefix/len", anything after a tab ignored; 0 if the line is not one */
static int
dl_parse_prefix(char *s, struct dl_route *r)
{
  s[strcspn(s, "\t\r\n")] = 0;
  char *slash = strchr(s, '/');
  if (!slash || !isdigit((unsigned char) slash[1]))
    return 0;

  *slash = 0;
  char *end;
  ulong len = strtoul(slash + 1, &end, 10);
  while (*end == ' ')
    end++;
  if (*end || len > (dl_v6 ? 128UL : 32UL))
    return 0;

  memset(r->a, 0, 16);
  if (inet_pton(dl_v6 ? AF_INET6 : AF_INET, s, r->a) != 1)
    return 0;

  r->len = len;
  dl_mask(r->a, len);
  return 1;
}

/**
 * dl_read_table - read TABLE, drop duplicates, number the routes
 * @fn: file name
 *
 * Leaves the unique routes in file order in @dl_routes, each with the index
 * of its first line among the parsed lines.
 */
static void
dl_read_table(const char *fn)
{
  FILE *f = fopen(fn, "r");
  if (!f)
    dl_die("cannot open %s: %s", fn, strerror(errno));

  uint cap = 1 << 20;
  dl_routes = malloc(cap * sizeof(struct dl_route));
  char line[512];

  while (fgets(line, sizeof(line), f))
  {
    if (dl_lines == cap)
      dl_routes = realloc(dl_routes, (cap *= 2) * sizeof(struct dl_route));
    if (!dl_routes)
      dl_die("out of memory");

    struct dl_route *r = &dl_routes[dl_lines];
    if (!dl_parse_prefix(line, r))
    {
      dl_bad++;
      continue;
    }
    r->line = dl_lines++;
  }
  fclose(f);

  /* Keep the first line of each prefix */
  qsort(dl_routes, dl_lines, sizeof(struct dl_route), dl_route_cmp);
  uint n = 0;
  for (uint i = 0; i < dl_lines; i++)
    if (!n || memcmp(dl_routes[i].a, dl_routes[n - 1].a, 16) ||
	dl_routes[i].len != dl_routes[n - 1].len)
      dl_routes[n++] = dl_routes[i];
  dl_dups = dl_lines - n;
  dl_routes_n = n;
  qsort(dl_routes, n, sizeof(struct dl_route), dl_line_cmp);

  for (uint i = 0; i < n; i++)
    if (!dl_routes[i].len)
      dl_default = i;
}

/* Lines numbers of the routes, by dense route number */
static inline u32
dl_value(u32 dense)
{
  return (dense == DL_NONE) ? DL_NONE : dl_routes[dense].line;
}

struct dl_key {
  u8 a[16];
  u8 bits;
};

static int
dl_key_cmp(const void *x, const void *y)
{
  return memcmp(x, y, sizeof(struct dl_key));
}

/**
 * dl_tbl8_needed - second-level groups a DIR-24-8 style table needs
 *
 * One 256-entry group per distinct (b, first b bits) with b = 24, 32, ...
 * below some route's length: what rte_fib, rte_lpm and rte_lpm6 allocate
 * for the table. rte_fib6 reserves groups for the worst case, per route,
 * and needs more (dl_build() finds out how many).
 */
static uint
dl_tbl8_needed(void)
{
  uint cap = 1024, n = 0;
  struct dl_key *k = malloc(cap * sizeof(struct dl_key));

  for (uint i = 0; i < dl_routes_n; i++)
    for (uint b = 24; b < dl_routes[i].len; b += 8)
    {
      if (n == cap)
	k = realloc(k, (cap *= 2) * sizeof(struct dl_key));
      if (!k)
	dl_die("out of memory");
      memcpy(k[n].a, dl_routes[i].a, 16);
      dl_mask(k[n].a, b);
      k[n++].bits = b;
    }

  qsort(k, n, sizeof(struct dl_key), dl_key_cmp);
  uint groups = 0;
  for (uint i = 0; i < n; i++)
    if (!i || dl_key_cmp(&k[i], &k[i - 1]))
      groups++;
  free(k);
  return groups;
}


/*
 *	Queries
 */

static void
dl_read_queries(const char *dir, uint kind)
{
  struct dl_queries *q = &dl_q[kind];
  q->kind = dl_kinds[kind];

  char fn[4096];
  snprintf(fn, sizeof(fn), "%s/%s", dir, q->kind);
  FILE *f = fopen(fn, "r");
  if (!f)
    return;

  uint cap = 1 << 16, lineno = 0;
  q->q = malloc(cap * dl_qsize);
  char line[256];

  while (fgets(line, sizeof(line), f))
  {
    lineno++;
    line[strcspn(line, " \t\r\n")] = 0;
    if (!line[0])
      continue;

    if (q->n == cap)
      q->q = realloc(q->q, (cap *= 2) * dl_qsize);
    if (!q->q)
      dl_die("out of memory");

    u8 a[16];
    if (inet_pton(dl_v6 ? AF_INET6 : AF_INET, line, a) != 1)
      dl_die("%s:%u: not an IPv%d address: %s", fn, lineno, dl_v6 ? 6 : 4, line);

    if (dl_v6)
      memcpy((u8 *) q->q + q->n * 16, a, 16);
    else
      ((u32 *) q->q)[q->n] = dl_ip4(a);
    q->n++;
  }
  fclose(f);

  if (!q->n)
  {
    free(q->q);
    q->q = NULL;
  }
}

static inline const void *
dl_qat(const struct dl_queries *q, uint i)
{
  return (const u8 *) q->q + (size_t) i * dl_qsize;
}


/*
 *	DPDK: environment, memory, function names
 */

static int
dl_affinity_cpu(void)
{
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) < 0)
    dl_die("sched_getaffinity: %s", strerror(errno));
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set))
      return c;
  dl_die("empty CPU affinity");
  return -1;
}

/* "N pages of S kB reserved", from /proc/meminfo, for the output */
static const char *
dl_huge_size(void)
{
  static char buf[96];
  char line[128];
  long total = -1, size = -1;
  FILE *f = fopen("/proc/meminfo", "r");
  while (f && fgets(line, sizeof(line), f))
  {
    sscanf(line, "HugePages_Total: %ld", &total);
    sscanf(line, "Hugepagesize: %ld", &size);
  }
  if (f)
    fclose(f);
  snprintf(buf, sizeof(buf), "%ld pages of %ld kB reserved", total, size);
  return buf;
}

static void
dl_eal_init(const char *prog, int xargc, char **xargv)
{
  char lcore[16], prefix[32];
  snprintf(lcore, sizeof(lcore), "%d", dl_affinity_cpu());
  snprintf(prefix, sizeof(prefix), "dpdk-lpm-%d", (int) getpid());

  /*
   * Private runtime files, so that several runs never meet. With --huge,
   * the heap grows on the hugetlbfs pages the system has reserved (no -m:
   * only what the structures need is taken); --in-memory keeps the page
   * files unlinked, as --no-shconf keeps the configuration private.
   */
  char *args[64] = {
    (char *) prog, "--no-pci", "--no-shconf", "--no-telemetry",
    "--file-prefix", prefix, "-l", lcore, "--log-level=error",
  };
  int argc = 9;
  if (dl_huge)
    args[argc++] = "--in-memory";
  else
  {
    args[argc++] = "--no-huge";
    args[argc++] = "-m";
    args[argc++] = "2048";
  }
  if (argc + xargc >= 64)
    dl_die("too many EAL arguments");
  for (int i = 0; i < xargc; i++)
    args[argc++] = xargv[i];

  if (rte_eal_init(argc, args) < 0)
    dl_die("rte_eal_init: %s", rte_strerror(rte_errno));
}

/* Bytes allocated from DPDK's heaps, all sockets */
static u64
dl_heap_bytes(void)
{
  u64 sum = 0;
  for (uint i = 0; i < rte_socket_count(); i++)
  {
    struct rte_malloc_socket_stats st;
    if (!rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st))
      sum += st.heap_allocsz_bytes;
  }
  return sum;
}

/*
 * rte_fib and rte_fib6 keep their lookup function in a private structure,
 * next to the pointers rte_fib_get_rib() and rte_fib_get_dp() return: find
 * that pair and take the word after it. NULL if the layout is not that.
 */
static void *
dl_fn_after(const void *obj, const void *rib, const void *dp)
{
  const void *const *w = obj;
  for (uint i = 1; i + 1 < 16; i++)
    if (w[i - 1] == rib && w[i] == dp)
      return (void *) w[i + 1];
  return NULL;
}

static void
dl_print_fn(const char *name, void *fn)
{
  Dl_info di;
  if (!fn)
    dl_put("%s.fn unknown\n", name);
  else if (!dladdr(fn, &di) || !di.dli_fname)
    dl_put("%s.fn %p\n", name, fn);
  else
  {
    const char *base = strrchr(di.dli_fname, '/');
    int named = di.dli_sname && di.dli_saddr == fn;
    dl_put("%s.fn %s+0x%lx%s%s%s\n", name, base ? base + 1 : di.dli_fname,
	   (unsigned long) ((uintptr_t) fn - (uintptr_t) di.dli_fbase),
	   named ? "(" : "", named ? di.dli_sname : "", named ? ")" : "");
  }
}


/*
 *	The structures
 */

/**
 * struct dl_struct - one DPDK structure and how to load it
 * @name: output key prefix ("rte_fib")
 * @max_value: largest next hop it holds
 * @obj: where the structure is kept
 * @create: creates it with @tbl8 second-level groups and room for @routes
 * routes, 0 or -errno
 * @add: adds route @i (dense number) with value @i
 * @add_half: for structures that take no /0: adds the /1 with this first
 * byte and the default route's value; NULL if /0 is taken as it is
 * @destroy: frees it
 */
struct dl_struct {
  const char *name;
  u64 max_value;
  void **obj;
  int (*create)(uint tbl8, uint routes);
  int (*add)(uint i);
  int (*add_half)(u8 first);
  void (*destroy)(void);
};

struct dl_load {
  double build_s;
  u64 mem_create, mem;
  uint failed, nospc;
  int err;
};

static void
dl_load_add(struct dl_load *l, int ret)
{
  if (ret >= 0)
    return;
  if (!l->failed++)
    l->err = ret;
  if (ret == -ENOSPC)
    l->nospc++;
}

/*
 * rte_lpm and rte_lpm6 take no /0: a default route becomes the /1 halves
 * the table does not route itself, which answers the same.
 */
static void
dl_load_default(const struct dl_struct *s, struct dl_load *l)
{
  int have[2] = { 0, 0 };
  for (uint i = 0; i < dl_routes_n; i++)
    if (dl_routes[i].len == 1)
      have[dl_routes[i].a[0] >> 7] = 1;

  for (uint h = 0; h < 2; h++)
    if (!have[h])
      dl_load_add(l, s->add_half(h << 7));
}

/* Create @s with @tbl8 groups and add the whole table in file order */
static void
dl_load(const struct dl_struct *s, uint tbl8, struct dl_load *l)
{
  memset(l, 0, sizeof(*l));
  u64 heap0 = dl_heap_bytes();
  int ret = s->create(tbl8, dl_routes_n + 2);
  if (ret < 0)
    dl_die("%s: create with %u tbl8 groups: %s", s->name, tbl8, strerror(-ret));
  l->mem_create = dl_heap_bytes() - heap0;

  double t0 = dl_now();
  for (uint i = 0; i < dl_routes_n; i++)
    if (dl_routes[i].len || !s->add_half)
      dl_load_add(l, s->add(i));
  if (s->add_half && dl_default >= 0)
    dl_load_default(s, l);
  l->build_s = dl_now() - t0;
  l->mem = dl_heap_bytes() - heap0;
}

/**
 * dl_build - load the table into a structure, with as few groups as it takes
 * @s: structure
 * @tbl8: second-level groups to try first
 *
 * The second-level groups are allocated when a structure is created, so they
 * are part of its memory: start from the count the table needs, and if the
 * structure asks for more (rte_fib6 reserves groups for the worst case),
 * grow by half until the table fits, then narrow down to within 2% of the
 * smallest count that fits (each try is a whole build; not done for builds
 * over 10 s). Prints the figures of the last, kept, build; returns its
 * count of groups (0: not loaded).
 */
static uint
dl_build(const struct dl_struct *s, uint tbl8)
{
  if (dl_routes_n && dl_routes_n - 1 > s->max_value)
  {
    dl_put("# %s: %u routes, next hops hold 0..%lu: not loaded\n",
	   s->name, dl_routes_n, (unsigned long) s->max_value);
    dl_put("%s.skipped value_range\n", s->name);
    return 0;
  }

  struct dl_load l;
  uint lo = 0, tries = 1;
  for (dl_load(s, tbl8, &l); l.nospc; dl_load(s, tbl8, &l), tries++)
  {
    s->destroy();
    if (tbl8 > (1U << 24))
      dl_die("%s: still out of space with %u tbl8 groups (%u adds refused): %s",
	     s->name, tbl8, l.nospc, strerror(-l.err));
    lo = tbl8;
    tbl8 += tbl8 / 2;
  }
  int kept = 1;				/* the live build is the one with tbl8 groups */
  while (lo && l.build_s < 10 && tbl8 - lo > tbl8 / 50)
  {
    uint mid = lo + (tbl8 - lo) / 2;
    struct dl_load m;
    s->destroy();
    dl_load(s, mid, &m);
    tries++;
    if (m.nospc)
      lo = mid, kept = 0;
    else
      tbl8 = mid, l = m, kept = 1;
  }
  if (!kept)
  {
    s->destroy();
    dl_load(s, tbl8, &l);
    tries++;
  }

  /* The lookup tables alone: the same groups, room for one route */
  void *keep = *s->obj;
  u64 heap0 = dl_heap_bytes();
  if (s->create(tbl8, 1) < 0)
    dl_die("%s: create: %s", s->name, rte_strerror(rte_errno));
  u64 tables = dl_heap_bytes() - heap0;
  s->destroy();
  *s->obj = keep;

  dl_put("%s.build_s %.3f\n", s->name, l.build_s);
  dl_put("%s.mem_bytes %lu\n", s->name, (unsigned long) l.mem);
  dl_put("%s.mem_create_bytes %lu\n", s->name, (unsigned long) l.mem_create);
  dl_put("%s.mem_tables_bytes %lu\n", s->name, (unsigned long) tables);
  dl_put("%s.tbl8_groups %u\n", s->name, tbl8);
  dl_put("%s.build_tries %u\n", s->name, tries);
  dl_put("%s.add_failed %u\n", s->name, l.failed);
  if (s->add_half && dl_default >= 0)
    dl_put("# %s: takes no /0, default route given as /1 route(s)\n", s->name);
  if (l.failed)
    fprintf(stderr, "dpdk-lpm: %s: %u adds failed, first: %s\n",
	    s->name, l.failed, strerror(-l.err));
  return tbl8;
}

/*
 * The work of a convergence, as `lpmtool fill' measures it for our engines:
 * the whole table added to an empty structure in a shuffled order (routes
 * come over BGP in the sender's order, unrelated to their addresses), then
 * deleted in the same order. The shuffle is lpmtool's (xorshift64*, seed
 * 12345, Fisher-Yates from the end), so both see the same order of the same
 * routes. For structures with a delete only (rte_fib, rte_fib6: rte_lpm
 * loads a full table in minutes, see its build_s).
 */
static u64 dl_rs;
static inline u64 dl_rnd(void) { dl_rs ^= dl_rs >> 12; dl_rs ^= dl_rs << 25; dl_rs ^= dl_rs >> 27; return dl_rs * 0x2545f4914f6cdd1dULL; }
static inline u32 dl_rnd_n(u32 n) { return (u32) ((dl_rnd() >> 32) * n >> 32); }

#define DL_FILL_ROUNDS 3

static int
dl_cmp_double(const void *x, const void *y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return (a > b) - (a < b);
}

static void
dl_fill(const struct dl_struct *s, uint tbl8, int (*del)(uint i))
{
  uint n = dl_routes_n, *perm = malloc(n * sizeof(uint));
  double ta[DL_FILL_ROUNDS], tw[DL_FILL_ROUNDS];
  if (!perm)
    dl_die("out of memory");
  for (uint i = 0; i < n; i++)
    perm[i] = i;
  dl_rs = 12345;
  for (uint i = n - 1; i > 0; i--)
  {
    uint j = dl_rnd_n(i + 1), x = perm[i];
    perm[i] = perm[j];
    perm[j] = x;
  }

  void *keep = *s->obj;
  for (int r = 0; r < DL_FILL_ROUNDS; r++)
  {
    uint fa = 0, fw = 0;
    int ea = 0, ew = 0, ret;
    if (s->create(tbl8, n + 2) < 0)
      dl_die("%s: create: %s", s->name, rte_strerror(rte_errno));
    double t0 = dl_now();
    for (uint i = 0; i < n; i++)
      if ((ret = s->add(perm[i])) < 0)
	ea = fa++ ? ea : ret;
    double t1 = dl_now();
    for (uint i = 0; i < n; i++)
      if ((ret = del(perm[i])) < 0)
	ew = fw++ ? ew : ret;
    double t2 = dl_now();
    s->destroy();
    if (fa && (ea == -ENOSPC) && !r && (tbl8 < (1U << 24)))
    {
      /* Another order may need more second-level groups than file order */
      tbl8 += tbl8 / 2;
      r--;
      continue;
    }
    if (fa || fw)
      dl_die("%s: fill: %u adds (first: %s) and %u deletes (first: %s) failed",
	     s->name, fa, fa ? strerror(-ea) : "-", fw, fw ? strerror(-ew) : "-");
    ta[r] = (t1 - t0) * 1e9 / n;
    tw[r] = (t2 - t1) * 1e9 / n;
  }
  *s->obj = keep;
  free(perm);

  qsort(ta, DL_FILL_ROUNDS, sizeof(double), dl_cmp_double);
  qsort(tw, DL_FILL_ROUNDS, sizeof(double), dl_cmp_double);
  dl_put("# %s fill: the table added in lpmtool's shuffled order, then deleted; median of %u rounds\n", s->name, DL_FILL_ROUNDS);
  dl_put("%s.fill.tbl8_groups %u\n", s->name, tbl8);
  dl_put("%s.fill.announce.ns %.1f\n", s->name, ta[DL_FILL_ROUNDS / 2]);
  dl_put("%s.fill.withdraw.ns %.1f\n", s->name, tw[DL_FILL_ROUNDS / 2]);
}

/* DPDK wants every structure named, and each name once */
static const char *
dl_name(void)
{
  static char name[32];
  static uint seq;
  snprintf(name, sizeof(name), "dl%u", seq++);
  return name;
}

static int
dl_fib_create(uint tbl8, uint routes)
{
  struct rte_fib_conf conf = {
    .type = RTE_FIB_DIR24_8,
    .default_nh = DL_FIB_NONE,
    .max_routes = routes,
    .dir24_8 = { .nh_sz = RTE_FIB_DIR24_8_4B, .num_tbl8 = tbl8 },
  };
  dl_fib = rte_fib_create(dl_name(), SOCKET_ID_ANY, &conf);
  return dl_fib ? 0 : -rte_errno;
}

static int
dl_fib_add(uint i)
{
  return rte_fib_add(dl_fib, dl_ip4(dl_routes[i].a), dl_routes[i].len, i);
}

static int
dl_fib_del(uint i)
{
  return rte_fib_delete(dl_fib, dl_ip4(dl_routes[i].a), dl_routes[i].len);
}

static void
dl_fib_destroy(void)
{
  rte_fib_free(dl_fib);
  dl_fib = NULL;
}

static int
dl_lpm_create(uint tbl8, uint routes)
{
  struct rte_lpm_config conf = {
    .max_rules = routes,
    .number_tbl8s = tbl8,
  };
  dl_lpm = rte_lpm_create(dl_name(), SOCKET_ID_ANY, &conf);
  return dl_lpm ? 0 : -rte_errno;
}

static int
dl_lpm_add(uint i)
{
  return rte_lpm_add(dl_lpm, dl_ip4(dl_routes[i].a), dl_routes[i].len, i);
}

static int
dl_lpm_half(u8 first)
{
  return rte_lpm_add(dl_lpm, (u32) first << 24, 1, dl_default);
}

static void
dl_lpm_destroy(void)
{
  rte_lpm_free(dl_lpm);
  dl_lpm = NULL;
}

static int
dl_fib6_create(uint tbl8, uint routes)
{
  struct rte_fib6_conf conf = {
    .type = RTE_FIB6_TRIE,
    .default_nh = DL_FIB_NONE,
    .max_routes = routes,
    .trie = { .nh_sz = RTE_FIB6_TRIE_4B, .num_tbl8 = tbl8 },
  };
  dl_fib6 = rte_fib6_create(dl_name(), SOCKET_ID_ANY, &conf);
  return dl_fib6 ? 0 : -rte_errno;
}

static int
dl_fib6_add(uint i)
{
  return rte_fib6_add(dl_fib6, dl_routes[i].a, dl_routes[i].len, i);
}

static int
dl_fib6_del(uint i)
{
  return rte_fib6_delete(dl_fib6, dl_routes[i].a, dl_routes[i].len);
}

static void
dl_fib6_destroy(void)
{
  rte_fib6_free(dl_fib6);
  dl_fib6 = NULL;
}

static int
dl_lpm6_create(uint tbl8, uint routes)
{
  struct rte_lpm6_config conf = {
    .max_rules = routes,
    .number_tbl8s = tbl8,
  };
  dl_lpm6 = rte_lpm6_create(dl_name(), SOCKET_ID_ANY, &conf);
  return dl_lpm6 ? 0 : -rte_errno;
}

static int
dl_lpm6_add(uint i)
{
  return rte_lpm6_add(dl_lpm6, dl_routes[i].a, dl_routes[i].len, i);
}

static int
dl_lpm6_half(u8 first)
{
  u8 a[16] = { first };
  return rte_lpm6_add(dl_lpm6, a, 1, dl_default);
}

static void
dl_lpm6_destroy(void)
{
  rte_lpm6_free(dl_lpm6);
  dl_lpm6 = NULL;
}

static const struct dl_struct dl_structs4[] = {
  { "rte_fib", DL_FIB_NONE - 1, (void **) &dl_fib, dl_fib_create, dl_fib_add, NULL, dl_fib_destroy },
  { "rte_lpm", DL_LPM_MAX, (void **) &dl_lpm, dl_lpm_create, dl_lpm_add, dl_lpm_half, dl_lpm_destroy },
  { .name = NULL }
};

static const struct dl_struct dl_structs6[] = {
  { "rte_fib6", DL_FIB_NONE - 1, (void **) &dl_fib6, dl_fib6_create, dl_fib6_add, NULL, dl_fib6_destroy },
  { "rte_lpm6", DL_LPM6_MAX, (void **) &dl_lpm6, dl_lpm6_create, dl_lpm6_add, dl_lpm6_half, dl_lpm6_destroy },
  { .name = NULL }
};


/*
 *	Lookup variants
 */

static int
dl_fib_use(enum rte_fib_lookup_type type)
{
  return dl_fib ? rte_fib_select_lookup(dl_fib, type) : -ENOENT;
}

static int
dl_fib6_use(enum rte_fib6_lookup_type type)
{
  return dl_fib6 ? rte_fib6_select_lookup(dl_fib6, type) : -ENOENT;
}

static int dl_fib_avx512(void) { return dl_fib_use(RTE_FIB_LOOKUP_DIR24_8_VECTOR_AVX512); }
static int dl_fib_scalar(void) { return dl_fib_use(RTE_FIB_LOOKUP_DIR24_8_SCALAR_MACRO); }
static int dl_fib6_avx512(void) { return dl_fib6_use(RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512); }
static int dl_fib6_scalar(void) { return dl_fib6_use(RTE_FIB6_LOOKUP_TRIE_SCALAR); }
static int dl_lpm_ready(void) { return dl_lpm ? 0 : -ENOENT; }
static int dl_lpm6_ready(void) { return dl_lpm6 ? 0 : -ENOENT; }

static void *
dl_fib_fn(void)
{
  return dl_fn_after(dl_fib, rte_fib_get_rib(dl_fib), rte_fib_get_dp(dl_fib));
}

static void *
dl_fib6_fn(void)
{
  return dl_fn_after(dl_fib6, rte_fib6_get_rib(dl_fib6), rte_fib6_get_dp(dl_fib6));
}

static void *dl_lpm6_fn(void) { return (void *) rte_lpm6_lookup_bulk_func; }

static void
dl_fib_lookup(const void *q, uint n, void *raw)
{
  rte_fib_lookup_bulk(dl_fib, (uint32_t *) q, raw, n);
}

static void
dl_fib6_lookup(const void *q, uint n, void *raw)
{
  rte_fib6_lookup_bulk(dl_fib6, (uint8_t (*)[16]) q, raw, n);
}

static u32
dl_fib_decode(const void *raw, uint i)
{
  u64 v = ((const u64 *) raw)[i];
  return (v == DL_FIB_NONE) ? DL_NONE : (u32) v;
}

static void
dl_lpm_bulk(const void *q, uint n, void *raw)
{
  rte_lpm_lookup_bulk(dl_lpm, (const uint32_t *) q, raw, n);
}

static u32
dl_lpm_bulk_decode(const void *raw, uint i)
{
  u32 v = ((const u32 *) raw)[i];
  return (v & RTE_LPM_LOOKUP_SUCCESS) ? (v & 0x00ffffff) : DL_NONE;
}

static void
dl_lpm_x4(const void *q, uint n, void *raw)
{
  const u32 *ip = q;
  u32 *hop = raw;
  uint i = 0;

  for (; i + 4 <= n; i += 4)
    rte_lpm_lookupx4(dl_lpm, _mm_loadu_si128((const __m128i *) (ip + i)), hop + i, DL_NONE);
  for (; i < n; i++)
    if (rte_lpm_lookup(dl_lpm, ip[i], &hop[i]) < 0)
      hop[i] = DL_NONE;
}

static u32
dl_lpm_x4_decode(const void *raw, uint i)
{
  return ((const u32 *) raw)[i];
}

static void
dl_lpm6_lookup(const void *q, uint n, void *raw)
{
  rte_lpm6_lookup_bulk_func(dl_lpm6, (uint8_t (*)[16]) q, raw, n);
}

static u32
dl_lpm6_decode(const void *raw, uint i)
{
  int32_t v = ((const int32_t *) raw)[i];
  return (v < 0) ? DL_NONE : (u32) v;
}

#define DL_VARIANT(n, s, f, l, d) \
  { .name = n, .select = s, .fn = f, .lookup = l, .decode = d }

static struct dl_variant dl_variants4[] = {
  DL_VARIANT("rte_fib.avx512", dl_fib_avx512, dl_fib_fn, dl_fib_lookup, dl_fib_decode),
  DL_VARIANT("rte_fib.scalar", dl_fib_scalar, dl_fib_fn, dl_fib_lookup, dl_fib_decode),
  DL_VARIANT("rte_lpm.bulk", dl_lpm_ready, NULL, dl_lpm_bulk, dl_lpm_bulk_decode),
  DL_VARIANT("rte_lpm.x4", dl_lpm_ready, NULL, dl_lpm_x4, dl_lpm_x4_decode),
  { .name = NULL }
};

static struct dl_variant dl_variants6[] = {
  DL_VARIANT("rte_fib6.avx512", dl_fib6_avx512, dl_fib6_fn, dl_fib6_lookup, dl_fib_decode),
  DL_VARIANT("rte_fib6.scalar", dl_fib6_scalar, dl_fib6_fn, dl_fib6_lookup, dl_fib_decode),
  DL_VARIANT("rte_lpm6.bulk", dl_lpm6_ready, dl_lpm6_fn, dl_lpm6_lookup, dl_lpm6_decode),
  { .name = NULL }
};

/**
 * dl_select - make a variant's lookup the current one and report it
 * @v: variant
 * @quiet: do not report
 *
 * Returns 0 if the variant cannot be used (it is then reported, and not
 * replaced by another one).
 */
static int
dl_select(struct dl_variant *v, int quiet)
{
  int ret = v->select();
  if (ret < 0)
  {
    if (!quiet)
      dl_put("%s.selected no (error %d: %s)\n", v->name, ret, strerror(-ret));
    return 0;
  }
  if (!quiet)
  {
    dl_put("%s.selected yes\n", v->name);
    if (!v->fn)
      dl_put("%s.fn inline(rte_lpm.h)\n", v->name);
    else
      dl_print_fn(v->name, v->fn());
  }
  return 1;
}

/* One pass over the queries, answers (dense route numbers) into @ans */
static void
dl_answers(struct dl_variant *v, const struct dl_queries *q, u32 *ans)
{
  u64 raw[DL_BATCH_MAX];
  for (uint i = 0; i < q->n; i += dl_batch)
  {
    uint n = (q->n - i < dl_batch) ? q->n - i : dl_batch;
    v->lookup(dl_qat(q, i), n, raw);
    for (uint j = 0; j < n; j++)
      ans[i + j] = v->decode(raw, j);
  }
}

/* ns per lookup: passes over the queries for at least DL_ROUND_S */
static double
dl_round(struct dl_variant *v, const struct dl_queries *q)
{
  u64 raw[DL_BATCH_MAX];
  u64 lookups = 0, sink = 0;
  double t0 = dl_now(), t;

  do
  {
    for (uint i = 0; i < q->n; i += dl_batch)
    {
      uint n = (q->n - i < dl_batch) ? q->n - i : dl_batch;
      v->lookup(dl_qat(q, i), n, raw);
      sink += raw[0];
    }
    lookups += q->n;
    t = dl_now();
  }
  while (t - t0 < DL_ROUND_S);

  dl_sink += sink;
  return (t - t0) * 1e9 / lookups;
}

static int
dl_double_cmp(const void *x, const void *y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return (a > b) - (a < b);
}

static void
dl_measure(struct dl_variant *v, uint kind)
{
  const struct dl_queries *q = &dl_q[kind];
  u32 *ans = v->ans[kind] = malloc(q->n * sizeof(u32));
  if (!ans)
    dl_die("out of memory");
  dl_answers(v, q, ans);

  u64 sum = 0;
  uint hits = 0;
  for (uint i = 0; i < q->n; i++)
    if (ans[i] != DL_NONE)
    {
      sum += (u64) dl_value(ans[i]) + 1;
      hits++;
    }

  double ns[DL_ROUNDS];
  for (uint r = 0; r < DL_ROUNDS; r++)
    ns[r] = dl_round(v, q);
  qsort(ns, DL_ROUNDS, sizeof(double), dl_double_cmp);
  double med = ns[DL_ROUNDS / 2];

  dl_put("%s.%s.ns %.2f\n", v->name, q->kind, med);
  dl_put("%s.%s.mlps %.1f\n", v->name, q->kind, 1e3 / med);
  dl_put("%s.%s.ns_min %.2f\n", v->name, q->kind, ns[0]);
  dl_put("%s.%s.ns_max %.2f\n", v->name, q->kind, ns[DL_ROUNDS - 1]);
  dl_put("%s.%s.hits %u\n", v->name, q->kind, hits);
  dl_put("%s.%s.sum %lu\n", v->name, q->kind, (unsigned long) sum);
  fflush(stdout);
}

static void
dl_addr_str(const void *a, char *buf)
{
  if (dl_v6)
    inet_ntop(AF_INET6, a, buf, INET6_ADDRSTRLEN);
  else
  {
    u32 x = *(const u32 *) a;
    sprintf(buf, "%u.%u.%u.%u", x >> 24, (x >> 16) & 0xff, (x >> 8) & 0xff, x & 0xff);
  }
}

/* Every variant against the first usable one, on every query file */
static void
dl_check(struct dl_variant *vs)
{
  struct dl_variant *ref = NULL;
  for (struct dl_variant *v = vs; v->name; v++)
    if (v->usable && !ref)
      ref = v;
  if (!ref)
    return;

  dl_put("check.reference %s\n", ref->name);
  for (uint k = 0; k < DL_KINDS; k++)
    for (struct dl_variant *v = vs; v->name; v++)
    {
      if (!dl_q[k].q || v == ref || !v->usable)
	continue;

      uint bad = 0;
      for (uint i = 0; i < dl_q[k].n; i++)
	if (v->ans[k][i] != ref->ans[k][i] && bad++ < 5)
	{
	  char buf[INET6_ADDRSTRLEN];
	  dl_addr_str(dl_qat(&dl_q[k], i), buf);
	  fprintf(stderr, "dpdk-lpm: %s %s line %u (%s): %s says %d, %s says %d\n",
		  dl_kinds[k], v->name, i + 1, buf, ref->name, (int) dl_value(ref->ans[k][i]),
		  v->name, (int) dl_value(v->ans[k][i]));
	}
      dl_put("check.%s.%s.mismatch %u\n", dl_kinds[k], v->name, bad);
    }
}

static void
dl_dump(struct dl_variant *vs, uint kind)
{
  const struct dl_queries *q = &dl_q[kind];

  printf("# dump %s: address", q->kind);
  for (struct dl_variant *v = vs; v->name; v++)
    if (dl_select(v, 1))
    {
      v->usable = 1;
      v->ans[kind] = malloc(q->n * sizeof(u32));
      if (!v->ans[kind])
	dl_die("out of memory");
      dl_answers(v, q, v->ans[kind]);
      printf(" %s", v->name);
    }
  printf("\n");

  for (uint i = 0; i < q->n; i++)
  {
    char buf[INET6_ADDRSTRLEN];
    dl_addr_str(dl_qat(q, i), buf);
    fputs(buf, stdout);
    for (struct dl_variant *v = vs; v->name; v++)
      if (v->usable)
      {
	u32 a = v->ans[kind][i];
	if (a == DL_NONE)
	  fputs("\t-", stdout);
	else
	  printf("\t%u", dl_value(a));
      }
    putchar('\n');
  }
}


/*
 *	Main
 */

static void
dl_cpu_model(char *buf, size_t size)
{
  snprintf(buf, size, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;

  char line[512];
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, "model name", 10) && strchr(line, ':'))
    {
      char *s = strchr(line, ':') + 1;
      while (*s == ' ')
	s++;
      s[strcspn(s, "\n")] = 0;
      snprintf(buf, size, "%s", s);
      break;
    }
  fclose(f);
}

static void
dl_usage(void)
{
  fputs("usage: dpdk-lpm 4|6 TABLE QUERYDIR [--dump KIND] [--batch N] [--huge] [--only P] [-- EAL args]\n"
	"  TABLE     one prefix/len per line (anything after a tab ignored)\n"
	"  QUERYDIR  query files in, random, trace: one address per line (missing ones skipped)\n"
	"  --dump K  print each variant's answer (route line index or -) per query of file K\n"
	"  --batch N addresses per bulk lookup call (default 64, at most 1024)\n"
	"  --huge    DPDK's heap on hugetlbfs pages (reserved by the system) instead of --no-huge\n"
	"  --only P  only the structures and variants whose names start with P (rte_fib: rte_fib and rte_fib6)\n", stderr);
  exit(2);
}

int
main(int argc, char **argv)
{
  const char *dump = NULL;
  int pos = 0, xargc = 0;
  char *posv[3], **xargv = NULL;

  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--"))
    {
      xargv = argv + i + 1;
      xargc = argc - i - 1;
      break;
    }
    else if (!strcmp(argv[i], "--huge"))
      dl_huge = 1;
    else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      dl_only = argv[++i];
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
      dump = argv[++i];
    else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
    {
      dl_batch = atoi(argv[++i]);
      if (dl_batch < 1 || dl_batch > DL_BATCH_MAX)
	dl_usage();
    }
    else if (argv[i][0] == '-' && argv[i][1])
      dl_usage();
    else if (pos < 3)
      posv[pos++] = argv[i];
    else
      dl_usage();

  if (pos != 3 || (strcmp(posv[0], "4") && strcmp(posv[0], "6")))
    dl_usage();

  dl_v6 = (posv[0][0] == '6');
  dl_dumping = !!dump;
  dl_qsize = dl_v6 ? 16 : 4;

  uint dump_kind = DL_KINDS;
  if (dump)
  {
    for (uint k = 0; k < DL_KINDS; k++)
      if (!strcmp(dump, dl_kinds[k]))
	dump_kind = k;
    if (dump_kind == DL_KINDS)
      dl_die("--dump: no query kind %s (in, random, trace)", dump);
  }

  dl_read_table(posv[1]);
  for (uint k = 0; k < DL_KINDS; k++)
    dl_read_queries(posv[2], k);
  if (dump && !dl_q[dump_kind].q)
    dl_die("--dump %s: no queries in %s/%s", dump, posv[2], dump);

  dl_eal_init(argv[0], xargc, xargv);
  int simd = rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);

  /* Comments and keys: what ran where */
  char cpu[256];
  dl_cpu_model(cpu, sizeof(cpu));
  dl_put("# dpdk-lpm: %s, CPU %s, lcore %u (cpu %d)\n",
	 rte_version(), cpu, rte_lcore_id(), dl_affinity_cpu());
  if (dl_huge)
    dl_put("# hugepages: DPDK heap on hugetlbfs pages (%s)\n", dl_huge_size());
  else
    dl_put("# hugepages: not used (EAL --no-huge: DPDK heap on ordinary 4 KiB pages)\n");
  dl_put("# values: route = index of its first line among parsed lines; none = -\n");
  dl_put("# lookups: bulk, %u addresses per call; ns per lookup = median of %d rounds of >= %.1f s\n",
	 dl_batch, DL_ROUNDS, DL_ROUND_S);
  dl_put("dpdk_version %s\n", rte_version() + (strncmp(rte_version(), "DPDK ", 5) ? 0 : 5));
  dl_put("hugepages %d\n", dl_huge);
  dl_put("lcore_cpu %d\n", dl_affinity_cpu());
  dl_put("batch %u\n", dl_batch);
  dl_put("max_simd_bitwidth %u\n", rte_vect_get_max_simd_bitwidth());
  if (simd)
    dl_put("# rte_vect_set_max_simd_bitwidth(512) refused: %s\n", strerror(-simd));
  dl_put("table.lines %u\n", dl_lines + dl_bad);
  dl_put("table.parsed %u\n", dl_lines);
  dl_put("table.routes %u\n", dl_routes_n);
  dl_put("table.duplicates %u\n", dl_dups);
  dl_put("table.bad_lines %u\n", dl_bad);
  for (uint k = 0; k < DL_KINDS; k++)
    if (dl_q[k].q)
      dl_put("queries.%s %u\n", dl_kinds[k], dl_q[k].n);
    else
    {
      dl_put("# query file %s/%s: missing or empty, skipped\n", posv[2], dl_kinds[k]);
      dl_put("queries.%s 0\n", dl_kinds[k]);
      fprintf(stderr, "dpdk-lpm: %s/%s: missing or empty, skipped\n", posv[2], dl_kinds[k]);
    }
  fflush(stdout);

  uint need = dl_tbl8_needed();
  uint tbl8 = need + need / 4 + 256;
  dl_put("table.tbl8_needed %u\n", need);

  for (const struct dl_struct *s = dl_v6 ? dl_structs6 : dl_structs4; s->name; s++)
  {
    if (dl_left_out(s->name))
    {
      dl_put("# %s: left out (--only %s)\n", s->name, dl_only);
      continue;
    }
    uint kept = dl_build(s, tbl8);
    fflush(stdout);
    if (kept && !dl_dumping && (s->add == dl_fib_add || s->add == dl_fib6_add))
      dl_fill(s, kept, s->add == dl_fib_add ? dl_fib_del : dl_fib6_del);
  }
  struct dl_variant *vs = dl_v6 ? dl_variants6 : dl_variants4;
  fflush(stdout);

  if (dump)
  {
    dl_dump(vs, dump_kind);
    fflush(stdout);
    rte_eal_cleanup();
    return 0;
  }

  for (struct dl_variant *v = vs; v->name; v++)
  {
    if (dl_left_out(v->name) || !(v->usable = dl_select(v, 0)))
      continue;
    for (uint k = 0; k < DL_KINDS; k++)
      if (dl_q[k].q)
	dl_measure(v, k);
  }
  dl_check(vs);
  dl_put("# sink %lu\n", (unsigned long) (dl_sink & 1));

  rte_eal_cleanup();
  return 0;
}
