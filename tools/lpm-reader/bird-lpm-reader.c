/*
 *	bloombird -- bird-lpm-reader: look up addresses in an LPM export
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/*
 * bird-lpm-reader [-w SECONDS] [-v VARIANT] NAME COMMAND ...
 *   lookup [FILE]		answer addresses (FILE or stdin): "ADDR NEXT-HOPS" or "ADDR -"
 *   status			header, counts, memory, staleness
 *   bench [COUNT] [FILE]	lookups per second per variant (COUNT of FILE's addresses, else
 *				random ones), median of 5 rounds of at least 0.5 s
 *   follow SECONDS [FILE]	stay attached for SECONDS, following bird across restarts,
 *				then answer FILE's addresses
 *   watch SECONDS FILE		look FILE's addresses up for SECONDS without pause; print
 *				lookups per second and how long updates took to reach the reader
 * -w: wait up to SECONDS for the export to appear (a reader started before bird).
 * Exit status: 0, 1 on errors, 3 on a layout version mismatch.
 */

#include "tools/lpm-reader/lpm-reader.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct addr {
  int v6;
  uint32_t a[4];
  char text[64];
};

static double
now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
parse_addr(const char *s, struct addr *x)
{
  unsigned char b[16];
  if (inet_pton(AF_INET, s, b) == 1)
  {
    inet_ntop(AF_INET, b, x->text, sizeof(x->text));
    x->v6 = 0;
    x->a[0] = ((uint32_t) b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    return 0;
  }
  if (inet_pton(AF_INET6, s, b) == 1)
  {
    inet_ntop(AF_INET6, b, x->text, sizeof(x->text));	/* Printed as bird prints it */
    x->v6 = 1;
    for (int i = 0; i < 4; i++)
      x->a[i] = ((uint32_t) b[4*i] << 24) | (b[4*i+1] << 16) | (b[4*i+2] << 8) | b[4*i+3];
    return 0;
  }
  return -1;
}

static struct addr *
read_addrs(const char *file, unsigned *count)
{
  FILE *f = (file && strcmp(file, "-")) ? fopen(file, "r") : stdin;
  if (!f)
  {
    fprintf(stderr, "bird-lpm-reader: %s: %s\n", file, strerror(errno));
    exit(1);
  }

  unsigned n = 0, cap = 1024;
  struct addr *a = malloc(cap * sizeof(*a));
  char line[256];
  while (fgets(line, sizeof(line), f))
  {
    char *s = line + strspn(line, " \t");
    s[strcspn(s, " \t\r\n")] = 0;
    if (!*s || (*s == '#'))
      continue;
    if (n == cap)
      a = realloc(a, (cap *= 2) * sizeof(*a));
    if (parse_addr(s, &a[n]) < 0)
    {
      fprintf(stderr, "bird-lpm-reader: not an address: %s\n", s);
      continue;
    }
    n++;
  }
  if (f != stdin)
    fclose(f);
  *count = n;
  return a;
}

static long owner = -1;			/* -o: the uid to trust besides root */

static struct lpmr *
attach(const char *name, double wait)
{
  char err[512];
  int code;
  double until = now_s() + wait;

  for (;;)
  {
    struct lpmr *r = lpmr_open_owner(name, owner, &code, err, sizeof(err));
    if (r)
      return r;
    if ((code == LPMR_EVERSION) || (code == LPMR_EFORMAT) || (code == LPMR_EOWNER) || (now_s() >= until))
    {
      fprintf(stderr, "bird-lpm-reader: %s\n", err);
      exit((code == LPMR_EVERSION) ? 3 : 1);
    }
    usleep(20000);
  }
}

static void
answer_all(struct lpmr *r, const struct addr *a, unsigned n)
{
  char buf[1024];
  for (unsigned i = 0; i < n; i++)
  {
    if (a[i].v6)
      lpmr_answer6(r, a[i].a, buf, sizeof(buf));
    else
      lpmr_answer4(r, a[i].a[0], buf, sizeof(buf));
    printf("%s %s\n", a[i].text, buf);
  }
}

static void
status(struct lpmr *r)
{
  struct lpmr_status s;
  lpmr_status(r, &s);
  printf("instance %016llx, bird pid %u, %s\n", (unsigned long long) s.instance, s.pid,
	 (s.state == LPMX_RUNNING) ? "running" : "closed");
  printf("layout version %u, variant %s\n", LPMX_VERSION, lpmr_variant(r));
  printf("prefixes ipv4 %llu, ipv6 %llu; next-hop entries %u\n",
	 (unsigned long long) s.prefixes[0], (unsigned long long) s.prefixes[1], s.nh_live);
  printf("memory: exporter region %llu bytes, ipv4 region %llu, ipv6 region %llu (resident)\n",
	 (unsigned long long) s.mem[0], (unsigned long long) s.mem[1], (unsigned long long) s.mem[2]);
  printf("generation %llu; last update %.3f ms ago; heartbeat %.3f ms ago%s; retried batches %llu\n",
	 (unsigned long long) s.generation, s.update_age_ns / 1e6, s.heartbeat_age_ns / 1e6,
	 (s.heartbeat_age_ns > 1000000000ULL) ? " (STALE: bird is not running)" : "",
	 (unsigned long long) s.retries);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t
rnd(void)
{
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return (rng * 0x2545f4914f6cdd1dULL) >> 32;
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

#define BENCH_BURST	256
static volatile uint32_t sink;

static void
bench(struct lpmr *r, unsigned count, const struct addr *in, unsigned nin)
{
  static const char * const vars[] = { "scalar", "avx2", "avx512" };
  uint32_t *a4 = malloc(count * sizeof(uint32_t)), (*a6)[4] = malloc(count * sizeof(*a6));
  uint32_t nh[BENCH_BURST];
  unsigned n4 = 0, n6 = 0;

  for (unsigned i = 0; i < count; i++)
  {
    if (nin)
    {
      const struct addr *x = &in[i % nin];
      if (x->v6)
	memcpy(a6[n6++], x->a, 16);
      else
	a4[n4++] = x->a[0];
    }
    else
    {
      a4[n4++] = rnd();
      a6[n6][0] = 0x20000000 | (rnd() & 0x1fffffff);	/* 2000::/3 */
      a6[n6][1] = rnd(); a6[n6][2] = rnd(); a6[n6][3] = rnd();
      n6++;
    }
  }

  printf("%u IPv4 and %u IPv6 addresses (%s), batches of 256, median of 5 rounds of at least 0.5 s\n",
	 n4, n6, nin ? "from the file" : "uniformly random");
  double base4 = 0, base6 = 0;
  for (unsigned v = 0; v < 3; v++)
  {
    if (lpmr_set_variant(r, vars[v]) < 0)
    {
      printf("  %-7s not on this CPU\n", vars[v]);
      continue;
    }

    for (int fam = 0; fam < 2; fam++)
    {
      unsigned n = fam ? n6 : n4;
      if (!n || !(fam ? lpmr_has6(r) : lpmr_has4(r)))
	continue;

      /* Rounds of whole passes for at least 0.5 s each; the median of 5 */
      double round[5];
      for (int rep = 0; rep < 5; rep++)
      {
	double t0 = now_s(), t;
	uint64_t done = 0;
	/*
	 * A burst of 256 at a time into one answer buffer, as a data plane
	 * handles bursts (and as tests/bench/dpdk and lpmtool time theirs):
	 * answers written over 4 MB would evict the table from the cache.
	 */
	do {
	  for (unsigned i = 0; i < n; i += BENCH_BURST)
	  {
	    unsigned k = (n - i < BENCH_BURST) ? n - i : BENCH_BURST;
	    if (fam)
	      lpmr_lookup6(r, (const uint32_t (*)[4]) a6 + i, nh, k);
	    else
	      lpmr_lookup4(r, a4 + i, nh, k);
	    sink += nh[0];
	  }
	  done += n;
	} while ((t = now_s() - t0) < 0.5);
	round[rep] = t / done;
      }
      qsort(round, 5, sizeof(double), cmp_double);
      double med = round[2] * n;
      double mlps = n / med / 1e6;
      double *base = fam ? &base6 : &base4;
      if (!v)
	*base = mlps;
      printf("  %-7s IPv%d: %8.1f Mlps per core, %6.2f ns per lookup, %5.2fx scalar\n",
	     vars[v], fam ? 6 : 4, mlps, 1e3 / mlps, *base ? mlps / *base : 0);
    }
  }

  struct lpmr_status s;
  lpmr_status(r, &s);
  printf("  batches repeated (reuse seqlock): %llu\n", (unsigned long long) s.retries);
  free(a4); free(a6);
}

static void
follow(struct lpmr *r, double seconds, const struct addr *a, unsigned n)
{
  char err[512];
  struct lpmr_status s;
  double until = now_s() + seconds;
  int stale = 0;
  uint32_t a4[64], nh[64], dest[64];
  unsigned k = 0;

  for (unsigned i = 0; (i < n) && (k < 64); i++)
    if (!a[i].v6)
      a4[k++] = a[i].a[0];

  lpmr_status(r, &s);
  printf("attached instance %016llx (bird pid %u)\n", (unsigned long long) s.instance, s.pid);
  fflush(stdout);

  while (now_s() < until)
  {
    uint64_t old = s.instance;
    int rc = lpmr_check(r, err, sizeof(err));
    if (rc == 1)
    {
      lpmr_status(r, &s);
      printf("reattached: instance %016llx -> %016llx (bird pid %u)\n",
	     (unsigned long long) old, (unsigned long long) s.instance, s.pid);
      stale = 0;
    }
    else if ((rc < 0) && !stale)
    {
      printf("stale: %s; keeping the last table\n", err);
      stale = 1;
    }
    fflush(stdout);

    /*
     * Keep looking up meanwhile, as a data plane would: a batch and the
     * entries its answers lead to, used only if bird cannot have reused
     * one of them in between (the stamp taken after lpmr_check(), which
     * may have remapped)
     */
    uint64_t stamp;
    do {
      stamp = lpmr_stamp(r);
      lpmr_lookup4(r, a4, nh, k);
      for (unsigned i = 0; i < k; i++)
      {
	const struct lpmx_nh *e = lpmr_nh(r, nh[i]);
	dest[i] = e ? e->dest : 0;
      }
    } while (!lpmr_valid(r, stamp));
    for (unsigned i = 0; i < k; i++)
      sink += dest[i];
    usleep(20000);
  }

  answer_all(r, a, n);
}

static volatile sig_atomic_t watch_stop;

static void
watch_signal(int sig)
{
  (void) sig;
  watch_stop = 1;
}

static int
cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return (x > y) - (x < y);
}

/*
 * watch: look up FILE's addresses over and over, as a data plane would, and
 * after every batch ask the header's generation. A new one means bird
 * applied updates; the time since it applied the last of them is how long
 * that update took to reach this reader (an earlier one of the same poll
 * waited at most the poll gap longer, reported too). SIGTERM or SIGINT
 * ends it early, with the report.
 */
static void
watch(struct lpmr *r, double seconds, const struct addr *in, unsigned nin)
{
  unsigned n4 = 0, n6 = 0, cap = 1 << 20, nl = 0;
  uint32_t *a4 = malloc((nin + 1) * sizeof(uint32_t)), (*a6)[4] = malloc((nin + 1) * sizeof(*a6));
  uint32_t nh[256];
  uint64_t *lat = malloc(cap * sizeof(uint64_t));
  uint64_t lookups = 0, gaps = 0, updates = 0, up, last_poll, t_end;
  char err[512];

  for (unsigned i = 0; i < nin; i++)
    if (in[i].v6)
      memcpy(a6[n6++], in[i].a, 16);
    else
      a4[n4++] = in[i].a[0];

  signal(SIGTERM, watch_signal);
  signal(SIGINT, watch_signal);
  printf("watching %u IPv4 and %u IPv6 addresses\n", n4, n6);
  fflush(stdout);

  uint64_t gen = lpmr_generation(r, &up), g0 = gen;
  uint64_t t0 = last_poll = lpmr_now_ns(), next_check = t0;
  t_end = t0 + (uint64_t) (seconds * 1e9);
  unsigned i4 = 0, i6 = 0;

  for (;;)
  {
    if (n4)
    {
      unsigned k = (n4 - i4 < 256) ? n4 - i4 : 256;
      lpmr_lookup4(r, a4 + i4, nh, k);
      lookups += k;
      i4 = (i4 + k) % n4;
    }
    if (n6)
    {
      unsigned k = (n6 - i6 < 64) ? n6 - i6 : 64;
      lpmr_lookup6(r, (const uint32_t (*)[4]) (a6 + i6), nh, k);
      lookups += k;
      i6 = (i6 + k) % n6;
    }

    uint64_t g = lpmr_generation(r, &up), now = lpmr_now_ns();
    if (now - last_poll > gaps)
      gaps = now - last_poll;
    last_poll = now;
    if (g != gen)
    {
      updates += (g > gen) ? g - gen : 1;
      gen = g;
      if (nl < cap)
	lat[nl++] = (now > up) ? now - up : 0;
    }
    if (now >= next_check)
    {
      if (lpmr_check(r, err, sizeof(err)) == 1)
      {
	printf("reattached to a new bird instance\n");
	gen = lpmr_generation(r, &up);
      }
      next_check = now + 100000000;
      if ((now >= t_end) || watch_stop)
	break;
    }
  }

  double dt = (lpmr_now_ns() - t0) / 1e9;
  struct lpmr_status s;
  lpmr_status(r, &s);
  printf("watch: %llu lookups in %.1f s: %.1f Mlps on one core (%s)\n",
	 (unsigned long long) lookups, dt, lookups / dt / 1e6, lpmr_variant(r));
  printf("watch: generation %llu -> %llu, %llu updates in %u polls that saw new ones\n",
	 (unsigned long long) g0, (unsigned long long) gen, (unsigned long long) updates, nl);
  if (nl)
  {
    qsort(lat, nl, sizeof(uint64_t), cmp_u64);
    printf("watch: update -> reader latency: median %.1f us, p99 %.1f us, max %.1f us; longest poll gap %.1f us\n",
	   lat[nl / 2] / 1e3, lat[(uint64_t) nl * 99 / 100] / 1e3, lat[nl - 1] / 1e3, gaps / 1e3);
  }
  printf("watch: batches repeated (reuse seqlock): %llu\n", (unsigned long long) s.retries);
  free(a4); free(a6); free(lat);
}

static void
usage(void)
{
  fprintf(stderr, "usage: bird-lpm-reader [-w SECONDS] [-v VARIANT] [-o OWNER] NAME lookup [FILE] | status | bench [COUNT] [FILE] | follow SECONDS [FILE] | watch SECONDS FILE\n");
  exit(1);
}

int
main(int argc, char **argv)
{
  double wait = 0;
  const char *variant = "auto";
  int o;

  while ((o = getopt(argc, argv, "w:v:o:")) >= 0)
    switch (o)
    {
    case 'w': wait = atof(optarg); break;
    case 'v': variant = optarg; break;
    case 'o':
    {
      const struct passwd *pw = getpwnam(optarg);
      char *end;
      owner = pw ? (long) pw->pw_uid : strtol(optarg, &end, 10);
      if (!pw && (!*optarg || *end || (owner < 0)))
      {
	fprintf(stderr, "bird-lpm-reader: -o %s: no such user\n", optarg);
	return 1;
      }
      break;
    }
    default: usage();
    }

  if (argc - optind < 2)
    usage();

  const char *name = argv[optind], *cmd = argv[optind + 1];
  char **arg = argv + optind + 2;
  int nargs = argc - optind - 2;

  if (lpmr_has_variant(variant) < 0)
  {
    fprintf(stderr, "bird-lpm-reader: variant %s is not available on this CPU\n", variant);
    return 1;
  }

  struct lpmr *r = attach(name, wait);
  lpmr_set_variant(r, variant);
  unsigned n = 0;
  struct addr *a;

  if (!strcmp(cmd, "lookup"))
  {
    a = read_addrs(nargs ? arg[0] : NULL, &n);
    answer_all(r, a, n);
  }
  else if (!strcmp(cmd, "status"))
    status(r);
  else if (!strcmp(cmd, "bench"))
  {
    unsigned count = nargs ? strtoul(arg[0], NULL, 10) : 10000000;
    a = (nargs > 1) ? read_addrs(arg[1], &n) : NULL;
    bench(r, count ?: 1, a, n);
  }
  else if (!strcmp(cmd, "watch") && (nargs > 1))
  {
    a = read_addrs(arg[1], &n);
    if (!n)
      usage();
    watch(r, atof(arg[0]), a, n);
  }
  else if (!strcmp(cmd, "follow") && nargs)
  {
    a = read_addrs((nargs > 1) ? arg[1] : NULL, &n);
    follow(r, atof(arg[0]), a, n);
  }
  else
    usage();

  lpmr_close(r);
  return 0;
}
