/*
 *	bloombird -- simd LPM engine tests
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include "test/birdtest.h"
#include "nest/test-scale.h"
#include "test/bt-utils.h"

#include "nest/lpm.h"
#include "nest/lpm-simd.h"
#include "nest/lpm-test-dump.h"
#include "lib/timer.h"

#include <pthread.h>
#include <stdatomic.h>

/*
 * Every test runs the engine next to a naive reference (a hash of
 * prefixes probed at every length, longest first) and compares: the scalar
 * single lookup after every step, at and around the boundaries of the
 * prefix just touched and at random addresses; every batch variant the CPU
 * has against the scalar lookup, over the addresses collected so far, in
 * batches of odd sizes.
 */

/* Forked test cases leave with _exit(): flush what they say */
#define LOG(...) do { bt_log(__VA_ARGS__); fflush(stdout); } while (0)

#define REF_ORDER	17
#define UNIVERSE	3000
#define MAXQ		8192
#define POISON		0x7ffffff0	/* Never a value of a test route */

/*
 *	Reference
 */

struct ref_entry {
  ip6_addr a;
  u8 len, used;
  u32 val;				/* LPM_NONE: deleted */
};

static struct ref_entry *ref;
static u32 ref_lencnt[IP6_MAX_PREFIX_LENGTH + 1];
static int v6;
static uint bits;

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

static struct ref_entry *
ref_slot(ip6_addr a, uint len)
{
  u64 h = ((u64) a.addr[0] * 0x9e3779b97f4a7c15ULL) ^ ((u64) a.addr[1] * 0xc2b2ae3d27d4eb4fULL) ^
    ((u64) a.addr[2] * 0x165667b19e3779f9ULL) ^ ((u64) (a.addr[3] + len) * 0x27d4eb2f165667c5ULL);
  uint i = (h ^ (h >> 29)) & ((1U << REF_ORDER) - 1);
  for (;; i = (i + 1) & ((1U << REF_ORDER) - 1))
    if (!ref[i].used || ((ref[i].len == len) && ip6_equal(ref[i].a, a)))
      return &ref[i];
}

static void
ref_reset(void)
{
  if (!ref)
    ref = malloc(sizeof(struct ref_entry) << REF_ORDER);
  memset(ref, 0, sizeof(struct ref_entry) << REF_ORDER);
  memset(ref_lencnt, 0, sizeof(ref_lencnt));
}

static u32
ref_get(ip6_addr a, uint len)
{
  struct ref_entry *r = ref_slot(a, len);
  return r->used ? r->val : LPM_NONE;
}

static u32
ref_set(ip6_addr a, uint len, u32 val)
{
  struct ref_entry *r = ref_slot(a, len);
  u32 old = r->used ? r->val : LPM_NONE;
  if ((old == LPM_NONE) != (val == LPM_NONE))
    ref_lencnt[len] += (val == LPM_NONE) ? -1 : 1;
  r->a = a;
  r->len = len;
  r->used = 1;
  r->val = val;
  return old;
}

static u32
ref_lookup(ip6_addr a)
{
  for (int l = bits; l >= 0; l--)
    if (ref_lencnt[l])
    {
      u32 v = ref_get(pmask(a, l), l);
      if (v != LPM_NONE)
	return v;
    }
  return LPM_NONE;
}

/*
 *	Addresses and prefixes
 */

static ip6_addr
addr_add(ip6_addr a, int d)
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

static ip6_addr
addr_last(ip6_addr a, uint len)
{
  if (!v6)
  {
    a.addr[0] |= len ? ~(~0U << (32 - len)) : ~0U;
    return a;
  }
  ip6_addr m = ip6_mkmask(len);
  for (int w = 0; w < 4; w++)
    a.addr[w] |= ~m.addr[w];
  return a;
}

static ip6_addr
addr_random(void)
{
  ip6_addr a = { .addr = { bt_random(), bt_random(), bt_random(), bt_random() } };
  if (!v6)
    a.addr[1] = a.addr[2] = a.addr[3] = 0;
  return a;
}

/* A random address inside a/len */
static ip6_addr
addr_inside(ip6_addr a, uint len)
{
  ip6_addr r = addr_random();
  ip6_addr m = v6 ? ip6_mkmask(len) : (ip6_addr) { .addr = { len ? ~0U << (32 - len) : 0 } };
  for (int w = 0; w < 4; w++)
    r.addr[w] = (a.addr[w] & m.addr[w]) | (r.addr[w] & ~m.addr[w]);
  return r;
}

/* For messages (bt_log is libc's printf) */
static const char *
astr(ip6_addr a, int len)
{
  static char buf[4][64];
  static uint i;
  char *b = buf[i++ % 4];
  if (v6)
    bsnprintf(b, 64, (len < 0) ? "%I6" : "%I6/%d", a, len);
  else
    bsnprintf(b, 64, (len < 0) ? "%I4" : "%I4/%d", ip4_from_u32(a.addr[0]), len);
  return b;
}

static void
mknet(net_addr *n, ip6_addr a, uint len)
{
  if (v6)
    net_fill_ip6(n, a, len);
  else
    net_fill_ip4(n, ip4_from_u32(a.addr[0]), len);
}

static u32
eng_lookup(struct lpm_engine *e, ip6_addr a)
{
  return v6 ? lpm_lookup6(e, a) : lpm_lookup4(e, ip4_from_u32(a.addr[0]));
}

/* Lengths at and around every stride boundary of the plans tested, and more */
static const u8 lens4[] = { 0, 1, 7, 8, 9, 12, 15, 16, 17, 19, 20, 21, 23, 24, 25, 27, 28, 29, 30, 31, 32 };
static const u8 lens6[] = { 0, 3, 15, 16, 17, 19, 20, 21, 23, 24, 25, 31, 32, 33, 36, 39, 40, 41, 43, 44,
			    45, 47, 48, 49, 55, 56, 57, 63, 64, 65, 72, 96, 112, 119, 120, 121, 127, 128 };

/* Anchors that prefixes are drawn near, so that they nest and collide */
static ip6_addr anchors[12];

static void
anchors_init(void)
{
  for (uint i = 0; i < ARRAY_SIZE(anchors); i++)
  {
    anchors[i] = addr_random();
    if (!v6)
      anchors[i].addr[0] = (anchors[i].addr[0] & 0x03ffffff) | 0x28000000;
    else
      anchors[i].addr[0] = (anchors[i].addr[0] & 0x0003ffff) | 0x20010000;
  }
}

static void
rnd_prefix(ip6_addr *a, uint *len)
{
  const u8 *ls = v6 ? lens6 : lens4;
  uint nl = v6 ? ARRAY_SIZE(lens6) : ARRAY_SIZE(lens4);
  *len = ls[bt_random_n(nl)];
  if (!bt_random_n(8))
    *len = bt_random_n(bits + 1);

  /* An anchor with a few bits flipped */
  ip6_addr x = anchors[bt_random_n(ARRAY_SIZE(anchors))];
  for (uint f = bt_random_n(4); f; f--)
  {
    uint b = bt_random_n(bits);
    x.addr[b / 32] ^= 0x80000000U >> (b % 32);
  }
  *a = pmask(x, *len);
}

static u32
rnd_value(void)
{
  switch (bt_random_n(8))
  {
  case 0: return 1 + bt_random_n(3);		/* Equal values: aggregation */
  case 1: return bt_random_n(2) ? 0 : LPM_VALUE_MAX;
  default: return bt_random_n(1000000);
  }
}

/*
 *	Checks
 */

static ip6_addr *qset;
static uint qn, qpos;
static uint nvariants_run;

static void
q_add(ip6_addr a)
{
  if (!qset)
    qset = malloc(MAXQ * sizeof(ip6_addr));
  if (qn < MAXQ)
    qset[qn++] = a;
  else
    qset[qpos++ % MAXQ] = a;
}

/* Scalar single lookups at and around a prefix, and a few random ones */
static int
check_prefix(struct lpm_engine *e, ip6_addr a, uint len)
{
  ip6_addr q[10];
  uint n = 0;
  ip6_addr last = addr_last(a, len);
  q[n++] = a;
  q[n++] = last;
  q[n++] = addr_add(a, -1);
  q[n++] = addr_add(last, 1);
  q[n++] = addr_inside(a, len);
  q[n++] = addr_inside(a, len);
  q[n++] = addr_inside(a, MIN(len + 1, bits));
  q[n++] = addr_random();
  q[n++] = addr_inside(anchors[bt_random_n(ARRAY_SIZE(anchors))], 16);
  q[n++] = addr_inside(anchors[bt_random_n(ARRAY_SIZE(anchors))], 8);

  /* The exact lookup of the prefix itself (lpm_find()) */
  net_addr_union na, px;
  mknet(&na.n, a, len);
  if (lpm_find(e, &na.n) != ref_get(a, len))
  {
    LOG("find %s: got %u, want %u", astr(a, len), lpm_find(e, &na.n), ref_get(a, len));
    return 0;
  }

  for (uint i = 0; i < n; i++)
  {
    u32 got = eng_lookup(e, q[i]), want = ref_lookup(q[i]);
    if (got != want)
    {
      LOG("lookup %s: got %u, want %u (after %s)", astr(q[i], -1), got, want, astr(a, len));
      return 0;
    }

    /* lpm_match() answers from the prefixes: the same value, from a covering prefix */
    mknet(&na.n, q[i], bits);
    u32 m = lpm_match(e, &na.n, &px.n);
    if ((m != want) || ((m != LPM_NONE) && (!net_in_netX(&na.n, &px.n) || (ref_get(pmask(q[i], px.n.pxlen), px.n.pxlen) != m))))
    {
      char pb[64];
      bsnprintf(pb, sizeof(pb), "%N", &px.n);
      LOG("match %s: got %u from %s, want %u", astr(q[i], -1), m, pb, want);
      return 0;
    }
    q_add(q[i]);
  }
  return 1;
}

/* Every batch variant against the scalar lookup, batches of odd sizes */
static int
check_batches(struct lpm_engine *e)
{
  static ip4_addr a4[MAXQ];
  static u32 out[MAXQ];
  u32 cpu = lpm_variants_cpu() & lpm_simd_class.variants;
  uint ran = 0;

  for (uint i = 0; i < qn; i++)
    a4[i] = ip4_from_u32(qset[i].addr[0]);

  for (uint v = 0; v < LPM_VAR_MAX; v++)
  {
    if (!(cpu & (1U << v)))
      continue;

    for (uint i = 0; i < qn; )
    {
      uint c = 1 + bt_random_n(100);
      c = MIN(c, qn - i);
      if (v6)
	lpm_simd_class.bulk6[v](e, qset + i, out + i, c);
      else
	lpm_simd_class.bulk4[v](e, a4 + i, out + i, c);
      i += c;
    }

    for (uint i = 0; i < qn; i++)
    {
      u32 want = eng_lookup(e, qset[i]);
      if (out[i] != want)
      {
	LOG("variant %s: %s answers %u, scalar %u", lpm_variant_names[v], astr(qset[i], -1), out[i], want);
	return 0;
      }
    }
    ran |= 1U << v;
  }

  nvariants_run |= ran;
  return 1;
}

static void
log_variants(void)
{
  char buf[64] = "";
  for (uint v = 0; v < LPM_VAR_MAX; v++)
    if (nvariants_run & (1U << v))
      strcat(strcat(buf, " "), lpm_variant_names[v]);
  LOG("batch variants checked against scalar:%s", buf);
}

static void
family(int fam6)
{
  v6 = fam6;
  bits = v6 ? IP6_MAX_PREFIX_LENGTH : IP4_MAX_PREFIX_LENGTH;
  ref_reset();
  qn = qpos = 0;
  anchors_init();
}

static struct lpm_engine *
new_engine(const char *plan)
{
  u8 st[SIMD_MAX_LEVELS];
  if (!plan)
    return lpm_new(&root_pool, &lpm_simd_class, v6 ? NET_IP6 : NET_IP4, NULL);

  int n = simd_plan_parse(plan, st, SIMD_MAX_LEVELS);
  bt_assert(n > 0);
  return simd_new_plan(&root_pool, v6 ? NET_IP6 : NET_IP4, LPM_VAR_AUTO, st, n);
}

/* One step: update or remove, checked against the reference */
static int
step(struct lpm_engine *e, ip6_addr a, uint len, u32 val)
{
  net_addr_union n;
  u32 old, want;
  mknet(&n.n, a, len);

  if (val == LPM_NONE)
  {
    want = ref_set(a, len, LPM_NONE);
    if (lpm_remove(e, &n.n, &old) < 0)
      { LOG("remove %s failed", astr(a, len)); return 0; }
  }
  else
  {
    want = ref_set(a, len, val);
    if (lpm_update(e, &n.n, val, &old) < 0)
      { LOG("update %s failed", astr(a, len)); return 0; }
  }

  if (old != want)
    { LOG("%s: old value %u, want %u", astr(a, len), old, want); return 0; }

  return check_prefix(e, a, len);
}

static int
engine_matches_ref(struct lpm_engine *e)
{
  struct lpm_stats s;
  lpm_stats(e, &s);
  u64 n = 0;
  for (uint l = 0; l <= bits; l++)
    n += ref_lencnt[l];
  if (s.prefixes != n)
    { LOG("engine holds %lu prefixes, reference %lu", (ulong) s.prefixes, (ulong) n); return 0; }
  return 1;
}

/*
 *	Tests
 */

static int
run_random(int fam6, const char *plan, uint ops)
{
  family(fam6);
  struct lpm_engine *e = new_engine(plan);
  bt_assert(e);

  /* A fixed universe, so that prefixes come back, get replaced and removed */
  ip6_addr *ua = malloc(UNIVERSE * sizeof(ip6_addr));
  uint *ul = malloc(UNIVERSE * sizeof(uint));
  for (uint i = 0; i < UNIVERSE; i++)
    rnd_prefix(&ua[i], &ul[i]);

  for (uint i = 0; i < ops; i++)
  {
    uint j = bt_random_n(UNIVERSE);
    u32 v = bt_random_n(3) ? rnd_value() : LPM_NONE;
    if (!step(e, ua[j], ul[j], v))
      { LOG("step %u (%s, plan %s)", i, v6 ? "IPv6" : "IPv4", plan ?: "default"); return 0; }
    if (!(i % 512) && !check_batches(e))
      return 0;
  }

  bt_assert(engine_matches_ref(e));
  bt_assert(check_batches(e));

  /* Everything out again: the table must end empty */
  for (uint j = 0; j < UNIVERSE; j++)
    if (!step(e, ua[j], ul[j], LPM_NONE))
      return 0;

  struct simd_info in;
  simd_get_info(e, &in);
  for (uint k = 1; k < in.levels; k++)
    bt_assert_msg(!in.nodes[k] && !in.rows[k], "level %u: %lu nodes, %lu rows left", k, (ulong) in.nodes[k], (ulong) in.rows[k]);
  bt_assert(engine_matches_ref(e));

  free(ua);
  free(ul);
  lpm_free(e);
  log_variants();
  return 1;
}

/*
 * Batches (lpm_apply()): the same changes as single updates, with the same
 * old values, in order, even when a batch changes one prefix several times
 * (a small universe makes that common).
 */
static int
run_apply(int fam6)
{
  family(fam6);
  struct lpm_engine *e = new_engine(NULL);
  bt_assert(e);

  enum { NU = 600, MAXB = 300 };
  const uint batches = bt_scaled(300);
  ip6_addr ua[NU];
  uint ul[NU];
  for (uint i = 0; i < NU; i++)
    rnd_prefix(&ua[i], &ul[i]);

  struct lpm_change *c = malloc(MAXB * sizeof(struct lpm_change));
  uint *pick = malloc(MAXB * sizeof(uint));
  u32 *want = malloc(MAXB * sizeof(u32));
  uint repeats = 0;

  for (uint b = 0; b < batches; b++)
  {
    uint n = 1 + bt_random_n(MAXB);
    for (uint j = 0; j < n; j++)
    {
      pick[j] = bt_random_n(NU);
      mknet(&c[j].n.n, ua[pick[j]], ul[pick[j]]);
      c[j].value = bt_random_n(3) ? rnd_value() : LPM_NONE;
      c[j].old = 0x12345678;
      c[j].result = 1;
      want[j] = ref_set(ua[pick[j]], ul[pick[j]], c[j].value);
      for (uint k = 0; k < j; k++)
	repeats += (pick[k] == pick[j]);
    }

    bt_assert(lpm_apply(e, c, n) == 0);
    for (uint j = 0; j < n; j++)
    {
      bt_assert_msg(!c[j].result, "batch %u change %u: result %d", b, j, c[j].result);
      bt_assert_msg(c[j].old == want[j], "batch %u change %u (%s): old %u, want %u",
		    b, j, astr(ua[pick[j]], ul[pick[j]]), c[j].old, want[j]);
    }
    for (uint j = 0; j < n; j++)
      if (!check_prefix(e, ua[pick[j]], ul[pick[j]]))
	{ LOG("batch %u", b); return 0; }
    bt_assert(engine_matches_ref(e));
    if (!(b % 32))
      bt_assert(check_batches(e));
  }

  bt_assert_msg(repeats > 0, "no batch changed a prefix twice");
  free(c);
  free(pick);
  free(want);
  lpm_free(e);
  log_variants();
  return 1;
}

static int t_apply4(void) { return run_apply(0); }
static int t_apply6(void) { return run_apply(1); }

static int t_random4(void) { return run_random(0, NULL, bt_scaled(40000)); }
static int t_random6(void) { return run_random(1, NULL, bt_scaled(40000)); }

static int
t_random_plans(void)
{
  static const char *p4[] = { "20-4-8", "18-6-4-4", "8-8-8-8", "16-4-4-4-4" };
  static const char *p6[] = { "16-8-8-8-8-8-8-8-8-8-8-8-8-8-8", "20-4-8-8-8-8-8-8-8-8-8-8-8-8-8",
			      "16-8-8-6-5-5-8-8-8-8-8-8-8-8-8-8", "16-8-4-4-4-4-4-4-8-8-8-8-8-8-8-8-8-8" };
  for (uint i = 0; i < ARRAY_SIZE(p4); i++)
    if (!run_random(0, p4[i], bt_scaled(10000)))
      return 0;
  for (uint i = 0; i < ARRAY_SIZE(p6); i++)
    if (!run_random(1, p6[i], bt_scaled(10000)))
      return 0;
  return 1;
}

/* Scripted cases, each checked after every step */
static int
run_adversarial(int fam6)
{
  family(fam6);
  struct lpm_engine *e = new_engine(NULL);
  ip6_addr z = {}, a = anchors[0], b;
  uint L = bits;

  /* Default route, host routes, the default removed under them */
  bt_assert(step(e, z, 0, 7));
  bt_assert(step(e, pmask(a, L), L, 8));
  bt_assert(step(e, addr_add(pmask(a, L), 1), L, 9));
  bt_assert(step(e, z, 0, 10));				/* Replaced */
  bt_assert(step(e, z, 0, LPM_NONE));
  bt_assert(step(e, pmask(a, L), L, LPM_NONE));
  bt_assert(step(e, z, 0, 11));

  /* Nested chain through every length, then removed from the middle out */
  for (uint l = 1; l <= L; l++)
    bt_assert(step(e, pmask(a, l), l, 100 + l));
  for (uint l = L / 2; l >= 1; l--)
    bt_assert(step(e, pmask(a, l), l, LPM_NONE));
  for (uint l = L / 2 + 1; l <= L; l++)
    bt_assert(step(e, pmask(a, l), l, (l & 1) ? LPM_NONE : 200 + l));
  for (uint l = 1; l <= L; l++)
    bt_assert(step(e, pmask(a, l), l, 300 + l));	/* Re-added, replacing */

  /* A covering prefix with many more-specifics, deleted and re-added */
  uint cl = v6 ? 32 : 16;
  b = pmask(anchors[1], cl);
  bt_assert(step(e, b, cl, 1000));
  for (uint i = 0; i < 300; i++)
  {
    uint l = cl + 1 + bt_random_n(v6 ? 40 : 16);
    bt_assert(step(e, pmask(addr_inside(b, cl), l), l, 2000 + i));
  }
  bt_assert(step(e, b, cl, LPM_NONE));
  bt_assert(step(e, b, cl, 1001));
  bt_assert(step(e, pmask(b, cl - 1), cl - 1, 1002));
  bt_assert(step(e, b, cl, LPM_NONE));
  bt_assert(step(e, pmask(b, cl - 1), cl - 1, LPM_NONE));

  /* Straddling stride boundaries: lengths around each level's end */
  b = anchors[2];
  const u8 *ls = v6 ? lens6 : lens4;
  uint nl = v6 ? ARRAY_SIZE(lens6) : ARRAY_SIZE(lens4);
  for (uint r = 0; r < 3; r++)
    for (uint i = 0; i < nl; i++)
      bt_assert(step(e, pmask(b, ls[i]), ls[i], (r == 1) ? LPM_NONE : 5000 + r * 100 + i));

  bt_assert(engine_matches_ref(e));
  bt_assert(check_batches(e));
  lpm_free(e);
  log_variants();
  return 1;
}

static int t_adversarial4(void) { return run_adversarial(0); }
static int t_adversarial6(void) { return run_adversarial(1); }

static u64
aggregated(struct lpm_engine *e)
{
  struct simd_info in;
  simd_get_info(e, &in);
  u64 n = 0;
  for (uint k = 1; k < in.levels; k++)
    n += in.aggregated[k];
  return n;
}

/* Rows whose elements all become equal disappear and come back */
static int
run_aggregation(int fam6)
{
  family(fam6);
  struct lpm_engine *e = new_engine(NULL);
  uint cl = v6 ? 40 : 16;			/* A node boundary in both default plans */
  uint sl = cl + 8;
  ip6_addr b = pmask(anchors[3], cl);

  bt_assert(step(e, b, cl, 5));
  bt_assert(aggregated(e) == 0);

  /* Every more-specific one level down with the same value: uniform */
  uint n = 1U << (sl - cl);
  for (uint i = 0; i < n; i++)
  {
    ip6_addr x = b;
    x.addr[(sl - 1) / 32] |= i << (31 - (sl - 1) % 32);
    bt_assert(step(e, x, sl, 5));
  }
  u64 agg = aggregated(e);
  bt_assert_msg(agg >= 1, "uniform row kept");

  /* One differs: rows are back (all of them on the path); equal again: gone again */
  ip6_addr x = b;
  x.addr[(sl - 1) / 32] |= 7U << (31 - (sl - 1) % 32);
  bt_assert(step(e, x, sl, 6));
  bt_assert(aggregated(e) < agg);
  bt_assert(step(e, x, sl, 5));
  bt_assert(aggregated(e) == agg);

  /* A longer prefix below an aggregated node, then the cover changes */
  ip6_addr y = pmask(addr_inside(x, sl), bits);
  bt_assert(step(e, y, bits, 5));
  bt_assert(step(e, b, cl, 9));
  bt_assert(step(e, y, bits, 9));
  bt_assert(step(e, b, cl, LPM_NONE));
  bt_assert(step(e, y, bits, LPM_NONE));
  for (uint i = 0; i < n; i++)
  {
    ip6_addr x = b;
    x.addr[(sl - 1) / 32] |= i << (31 - (sl - 1) % 32);
    bt_assert(step(e, x, sl, (i & 1) ? 3 : LPM_NONE));
  }

  bt_assert(engine_matches_ref(e));
  bt_assert(check_batches(e));
  lpm_free(e);
  log_variants();
  return 1;
}

static int t_aggregation4(void) { return run_aggregation(0); }
static int t_aggregation6(void) { return run_aggregation(1); }

/* Whole-table builds: equal to the reference, replace what was there */
static int
run_build(int fam6)
{
  family(fam6);
  struct lpm_engine *e = new_engine(NULL);
  uint cnt = bt_scaled(20000);
  struct lpm_route *r = malloc(cnt * sizeof(struct lpm_route));

  for (uint round = 0; round < 3; round++)
  {
    /* Incremental contents first, to be replaced */
    for (uint i = 0; i < 500; i++)
    {
      ip6_addr a;
      uint l;
      rnd_prefix(&a, &l);
      bt_assert(step(e, a, l, rnd_value()));
    }

    ref_reset();
    for (uint i = 0; i < cnt; i++)
    {
      ip6_addr a;
      uint l;
      rnd_prefix(&a, &l);
      if (i && !bt_random_n(20))			/* Duplicates: the last wins */
      {
	uint j = bt_random_n(i);
	a = v6 ? net6_prefix(&r[j].n.n) : (ip6_addr) { .addr = { ip4_to_u32(net4_prefix(&r[j].n.n)) } };
	l = r[j].n.n.pxlen;
      }
      mknet(&r[i].n.n, a, l);
      r[i].value = rnd_value();
      ref_set(a, l, r[i].value);
    }

    bt_assert(lpm_build(e, r, round == 2 ? 0 : cnt) == 0);
    if (round == 2)
      ref_reset();
    bt_assert(engine_matches_ref(e));

    qn = 0;
    for (uint i = 0; i < MAXQ / 4; i++)
    {
      uint j = bt_random_n(cnt);
      ip6_addr a = v6 ? net6_prefix(&r[j].n.n) : (ip6_addr) { .addr = { ip4_to_u32(net4_prefix(&r[j].n.n)) } };
      bt_assert(check_prefix(e, a, r[j].n.n.pxlen));
    }
    bt_assert(check_batches(e));

    /* Incremental updates go on from the built table */
    for (uint i = 0; i < 3000; i++)
    {
      uint j = bt_random_n(cnt);
      ip6_addr a = v6 ? net6_prefix(&r[j].n.n) : (ip6_addr) { .addr = { ip4_to_u32(net4_prefix(&r[j].n.n)) } };
      bt_assert(step(e, a, r[j].n.n.pxlen, bt_random_n(2) ? rnd_value() : LPM_NONE));
    }
    bt_assert(engine_matches_ref(e));
    bt_assert(check_batches(e));
  }

  struct lpm_stats s;
  lpm_stats(e, &s);
  bt_assert(s.builds == 3);
  free(r);
  lpm_free(e);
  log_variants();
  return 1;
}

static int t_build4(void) { return run_build(0); }
static int t_build6(void) { return run_build(1); }

/* Out of lookup memory: refused, and nothing changed */
static int
run_alloc_failure(int fam6)
{
  family(fam6);
  struct lpm_engine *e = new_engine(NULL);
  struct simd_info in;

  for (uint i = 0; i < 2000; i++)
  {
    ip6_addr a;
    uint l;
    rnd_prefix(&a, &l);
    bt_assert(step(e, a, l, rnd_value()));
  }

  simd_get_info(e, &in);
  simd_set_limit(e, 4096 + in.elements_top * 4);

  uint refused = 0, done = 0;
  for (uint i = 0; i < 3000; i++)
  {
    ip6_addr a;
    uint l;
    net_addr_union n;
    u32 old, v = bt_random_n(4) ? rnd_value() : LPM_NONE;
    rnd_prefix(&a, &l);
    mknet(&n.n, a, l);

    int rv = (v == LPM_NONE) ? lpm_remove(e, &n.n, &old) : lpm_update(e, &n.n, v, &old);
    bt_assert(old == ref_get(a, l));			/* The old value is reported either way */
    if (rv < 0)
      refused++;
    else
    {
      done++;
      ref_set(a, l, v);
    }
    bt_assert(check_prefix(e, a, l));			/* Answers as the reference: refused ones left no trace */
  }
  LOG("with the region full: %u updates refused, %u done (free rows or no new row needed)", refused, done);
  bt_assert(refused > 0);

  /* A build that does not fit is refused too, the table keeps answering */
  struct lpm_route r[4000];
  for (uint i = 0; i < ARRAY_SIZE(r); i++)
  {
    ip6_addr a;
    uint l;
    rnd_prefix(&a, &l);
    l = MAX(l, v6 ? 48U : 24U);
    mknet(&r[i].n.n, pmask(a, l), l);
    r[i].value = 1;
  }
  bt_assert(lpm_build(e, r, ARRAY_SIZE(r)) < 0);
  qn = 0;
  for (uint i = 0; i < 500; i++)
  {
    ip6_addr a;
    uint l;
    rnd_prefix(&a, &l);
    bt_assert(check_prefix(e, a, l));
  }
  bt_assert(check_batches(e));

  struct lpm_stats s;
  lpm_stats(e, &s);
  bt_assert(s.alloc_failures == refused + 1);
  bt_assert(engine_matches_ref(e));

  /* Room again: updates go through */
  simd_set_limit(e, ~(size_t) 0);
  for (uint i = 0; i < 2000; i++)
  {
    ip6_addr a;
    uint l;
    rnd_prefix(&a, &l);
    bt_assert(step(e, a, l, bt_random_n(3) ? rnd_value() : LPM_NONE));
  }
  bt_assert(engine_matches_ref(e));
  lpm_free(e);
  log_variants();
  return 1;
}

static int t_alloc_failure4(void) { return run_alloc_failure(0); }
static int t_alloc_failure6(void) { return run_alloc_failure(1); }

/* Retired rows are reused only after every reader has left */
static int
t_quiescence(void)
{
  family(0);
  struct lpm_engine *e = new_engine(NULL);
  struct lpm_reader r;
  struct simd_info in0, in1;
  ip6_addr b = pmask(anchors[0], 24);

  bt_assert(step(e, pmask(b, 16), 16, 1));
  lpm_reader_add(e, &r);
  lpm_read_begin(e, &r);

  /* Each pair makes a /24 row and drops it again */
  simd_get_info(e, &in0);
  for (uint i = 0; i < 50; i++)
  {
    ip6_addr x = addr_add(b, i * 256);
    bt_assert(step(e, x, 25, 2));
    bt_assert(step(e, x, 25, LPM_NONE));
  }
  simd_get_info(e, &in1);
  bt_assert_msg(in1.limbo_rows >= 50, "%lu rows retired", (ulong) in1.limbo_rows);
  bt_assert(in1.reclaimed == in0.reclaimed);
  bt_assert(in1.elements_top >= in0.elements_top + 50 * 256);	/* New rows, none reused */

  /* The reader leaves: the next update reclaims everything */
  lpm_read_end(&r);
  bt_assert(step(e, b, 25, 3));
  simd_get_info(e, &in1);
  bt_assert(in1.limbo_rows == 0);
  bt_assert(in1.reclaimed >= in0.reclaimed + 50);

  /* A reader that began after the retirement does not hold it up */
  bt_assert(step(e, b, 25, LPM_NONE));
  lpm_read_begin(e, &r);
  bt_assert(step(e, addr_add(b, 256), 25, 4));
  simd_get_info(e, &in1);
  bt_assert(in1.limbo_rows == 0);
  lpm_read_end(&r);

  lpm_reader_remove(e, &r);
  lpm_free(e);
  return 1;
}

/*
 * A reader thread looks up watched addresses continuously while the main
 * thread updates. The update sequence is fixed beforehand and played on
 * the reference first, which gives each watched address its history: every
 * change with the number of the update that made it. The writer publishes
 * that number after each update. A reader's answer is admissible if the
 * address had it at some point from the number published before the lookup
 * to the one after it plus one (the update in progress); the reader checks
 * every answer as it goes. Reclaimed rows are poisoned with a value no
 * route has, so a row reused under a reader shows as a wrong answer.
 */

#define WATCH		256
/* A sanitized build runs these loops ten times slower: it does a tenth of
 * the operations, within birdtest's timeout */
#ifdef __SANITIZE_ADDRESS__
#define READER_OPS	bt_scaled(20000)
#else
#define READER_OPS	bt_scaled(200000)
#endif

struct hist { u32 ver, val; };

static struct {
  struct lpm_engine *e;
  ip6_addr watch[WATCH];
  struct hist *h[WATCH];
  uint hn[WATCH];
  _Atomic u32 version;
  _Atomic int stop;
  u64 answers, during, across, bad;
  char msg[5][128];
} rt;

static int
admissible(uint w, u32 v0, u32 v1, u32 val)
{
  /* The last change at or before v0, by bisection; then every one up to v1 + 1 */
  const struct hist *h = rt.h[w];
  uint lo = 0, hi = rt.hn[w];
  while (hi - lo > 1)
  {
    uint mid = (lo + hi) / 2;
    if (h[mid].ver <= v0)
      lo = mid;
    else
      hi = mid;
  }
  for (uint i = lo; (i < rt.hn[w]) && (h[i].ver <= v1 + 1); i++)
    if (h[i].val == val)
      return 1;
  return 0;
}

static void
hist_add(uint w, u32 ver, u32 val)
{
  if (rt.hn[w] && rt.h[w][rt.hn[w] - 1].val == val)
    return;
  if (!(rt.hn[w] & (rt.hn[w] - 1)))
    rt.h[w] = realloc(rt.h[w], 2 * MAX(rt.hn[w], 1U) * sizeof(struct hist));
  rt.h[w][rt.hn[w]++] = (struct hist) { ver, val };
}

static void *
reader_main(void *arg UNUSED)
{
  struct lpm_reader r;
  ip4_addr a4[32];
  ip6_addr a6[32];
  u32 w[32], out[32];
  u64 rs = 12345, round = 0;

  lpm_reader_add(rt.e, &r);
  while (!atomic_load_explicit(&rt.stop, memory_order_acquire))
  {
    /* Single lookups and batches (the engine's variant) in turn */
    uint n = (round++ & 1) ? 32 : 1;
    for (uint i = 0; i < n; i++)
    {
      rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
      w[i] = rs % WATCH;
      a6[i] = rt.watch[w[i]];
      a4[i] = ip4_from_u32(a6[i].addr[0]);
    }

    u32 v0 = atomic_load_explicit(&rt.version, memory_order_acquire);
    lpm_read_begin(rt.e, &r);
    if (n == 1)
      out[0] = v6 ? lpm_lookup6(rt.e, a6[0]) : lpm_lookup4(rt.e, a4[0]);
    else if (v6)
      lpm_lookup6_bulk(rt.e, a6, out, n);
    else
      lpm_lookup4_bulk(rt.e, a4, out, n);
    lpm_read_end(&r);
    u32 v1 = atomic_load_explicit(&rt.version, memory_order_acquire);

    for (uint i = 0; i < n; i++)
      if (!admissible(w[i], v0, v1, out[i]) && (rt.bad++ < ARRAY_SIZE(rt.msg)))
	bsnprintf(rt.msg[rt.bad - 1], sizeof(rt.msg[0]), "watched %u at updates %u-%u answered %u",
		  w[i], v0, v1, out[i]);
    rt.answers += n;
    rt.during += (v0 < READER_OPS) ? n : 0;
    rt.across += (v0 != v1) ? n : 0;
  }
  lpm_reader_remove(rt.e, &r);
  return NULL;
}

static int
run_reader(int fam6)
{
  family(fam6);
  memset(&rt, 0, sizeof(rt));
  rt.e = new_engine(NULL);
  simd_set_poison(rt.e, 1, POISON);

  ip6_addr *ua = malloc(UNIVERSE * sizeof(ip6_addr));
  uint *ul = malloc(UNIVERSE * sizeof(uint));
  for (uint i = 0; i < UNIVERSE; i++)
    rnd_prefix(&ua[i], &ul[i]);
  for (uint i = 0; i < UNIVERSE / 2; i++)
    bt_assert(step(rt.e, ua[i], ul[i], rnd_value()));

  /* Watched: addresses at the ends of and inside the prefixes updated */
  for (uint w = 0; w < WATCH; w++)
  {
    uint j = bt_random_n(UNIVERSE);
    rt.watch[w] = (w & 1) ? addr_inside(ua[j], ul[j]) : addr_last(ua[j], ul[j]);
    hist_add(w, 0, ref_lookup(rt.watch[w]));
  }

  /* The updates, played on the reference first for the histories */
  struct { u32 j, v; } *ops = malloc(READER_OPS * sizeof(*ops));
  for (uint i = 0; i < READER_OPS; i++)
  {
    uint j = bt_random_n(UNIVERSE);
    u32 v = bt_random_n(3) ? rnd_value() : LPM_NONE;
    ops[i].j = j;
    ops[i].v = v;
    ref_set(ua[j], ul[j], v);
    for (uint w = 0; w < WATCH; w++)
      if (ip6_equal(pmask(rt.watch[w], ul[j]), ua[j]))
	hist_add(w, i + 1, ref_lookup(rt.watch[w]));
  }

  pthread_t th;
  bt_assert(pthread_create(&th, NULL, reader_main, NULL) == 0);

  btime t0 = current_time_now();
  for (uint i = 0; i < READER_OPS; i++)
  {
    net_addr_union n;
    u32 old;
    mknet(&n.n, ua[ops[i].j], ul[ops[i].j]);
    if (ops[i].v == LPM_NONE)
      bt_assert(lpm_remove(rt.e, &n.n, &old) == 0);
    else
      bt_assert(lpm_update(rt.e, &n.n, ops[i].v, &old) == 0);
    atomic_store_explicit(&rt.version, i + 1, memory_order_release);
  }

  btime t1 = current_time_now();
  atomic_store_explicit(&rt.stop, 1, memory_order_release);
  pthread_join(th, NULL);

  /* The check can fail: an answer no update gave is refused */
  bt_assert(!admissible(0, 0, READER_OPS, POISON));

  struct simd_info in;
  simd_get_info(rt.e, &in);
  LOG("%s: %u updates in %u ms; reader: %lu answers (singles and %s batches), %lu while updates ran, %lu spanning one; %lu rows reclaimed meanwhile",
      v6 ? "IPv6" : "IPv4", READER_OPS, (uint) ((t1 - t0) / 1000), (ulong) rt.answers, lpm_variant_names[rt.e->variant],
      (ulong) rt.during, (ulong) rt.across, (ulong) in.reclaimed);
  for (uint i = 0; i < MIN(rt.bad, ARRAY_SIZE(rt.msg)); i++)
    LOG("reader: %s", rt.msg[i]);
  bt_assert_msg(!rt.bad, "%lu inadmissible answers", (ulong) rt.bad);
  bt_assert(rt.during > 100000);
  bt_assert(in.reclaimed > 0);

  for (uint w = 0; w < WATCH; w++)
    free(rt.h[w]);
  free(ops);
  free(ua);
  free(ul);
  lpm_free(rt.e);
  return 1;
}

static int t_reader4(void) { return run_reader(0); }
static int t_reader6(void) { return run_reader(1); }

/*
 *	Views of hand-made regions: header checks, and walks that end at the
 *	last level whatever links they meet (a reader in another process can
 *	meet a row reused for a shallower level; here a row links to itself)
 */

#define VIEW_ROOT	16
#define VIEW_ELEMS	((1U << VIEW_ROOT) + 256)

static void *
view_region(uint family, uint levels, const u8 *stride, uint strides)
{
  void *r = xmalloc(SIMD_HEADER_SIZE + VIEW_ELEMS * sizeof(u32));
  memset(r, 0, SIMD_HEADER_SIZE);
  struct simd_header *h = r;
  *h = (struct simd_header) {
    .magic = SIMD_MAGIC, .version = SIMD_VERSION, .family = family, .levels = levels,
    .elements_offset = SIMD_HEADER_SIZE, .elements_max = VIEW_ELEMS,
  };
  memcpy(h->stride, stride, MIN(strides, SIMD_MAX_LEVELS));

  /* Root: leaves answering 7, but 10.0/16 (or 0a00::/16) links to a row of links to itself */
  u32 *m = (u32 *) ((byte *) r + SIMD_HEADER_SIZE), row = 1U << VIEW_ROOT;
  for (u32 i = 0; i < row; i++)
    m[i] = simd_leaf(7);
  m[0x0a00] = row;
  for (u32 i = 0; i < 256; i++)
    m[row + i] = row;
  return r;
}

static int
t_view(void)
{
  struct simd_view v;
  static const u8 good[] = { 16, 8, 8 }, zero[] = { 16, 0, 8 }, cross[] = { 20, 16 },
    longer[] = { 16, 8, 8, 8 }, wide[] = { 16, 16, 33 };
  void *r;

  /* Headers: accepted as written, refused if a level could not be read */
#define STRIDES(s) s, ARRAY_SIZE(s)
  struct { uint family, levels; const u8 *stride; uint strides; int ok; const char *what; } hv[] = {
    { 4, 3, STRIDES(good), 1, "IPv4 16-8-8" },
    { 6, 3, STRIDES(good), 1, "IPv6 16-8-8 (the rest of the address unused)" },
    { 6, 4, STRIDES(longer), 1, "IPv6 16-8-8-8" },
    { 4, 3, STRIDES(zero), 0, "a level of no bits" },
    { 4, 2, STRIDES(cross), 0, "a level across a 32-bit word" },
    { 4, 4, STRIDES(longer), 0, "IPv4 levels of 40 bits" },
    { 6, 3, STRIDES(wide), 0, "a level of 33 bits" },
    { 5, 3, STRIDES(good), 0, "family 5" },
    { 4, 0, STRIDES(good), 0, "no levels" },
    { 4, SIMD_MAX_LEVELS + 1, STRIDES(good), 0, "too many levels" },
  };
#undef STRIDES
  for (uint i = 0; i < ARRAY_SIZE(hv); i++)
  {
    r = view_region(hv[i].family, hv[i].levels, hv[i].stride, hv[i].strides);
    int got = (simd_view_init(&v, r) == 0);
    bt_assert_msg(got == hv[i].ok, "header with %s: %s", hv[i].what, got ? "accepted" : "refused");
    xfree(r);
  }

  /* Walks through the self-linked row end after the last level, in every variant */
  typedef void bulk4_fn(const struct simd_view *, const ip4_addr *, u32 *, uint);
  typedef void bulk6_fn(const struct simd_view *, const ip6_addr *, u32 *, uint);
  static bulk4_fn * const b4[LPM_VAR_MAX] = { simd_bulk4_scalar, LPM_IF_AVX2(simd_bulk4_avx2), LPM_IF_AVX512(simd_bulk4_avx512) };
  static bulk6_fn * const b6[LPM_VAR_MAX] = { simd_bulk6_scalar, LPM_IF_AVX2(simd_bulk6_avx2), LPM_IF_AVX512(simd_bulk6_avx512) };
  enum { N = 200 };
  ip4_addr a4[N];
  ip6_addr a6[N];
  u32 val[N];
  char buf[64] = "";
  uint leaves = 0;

  for (uint i = 0; i < N; i++)
  {
    u32 x = (i & 1) ? (0x0a000000 | (bt_random() & 0xffff)) : (u32) bt_random();
    a4[i] = ip4_from_u32(x);
    a6[i] = ip6_build(x, bt_random(), bt_random(), bt_random());
  }

  for (uint fam = 4; fam <= 6; fam += 2)
  {
    r = view_region(fam, 3, good, ARRAY_SIZE(good));
    bt_assert(simd_view_init(&v, r) == 0);

    for (uint i = 0; i < N; i++)
    {
      u32 x = ip4_to_u32(a4[i]);
      u32 got = (fam == 4) ? simd_view_lookup4(&v, x) : simd_view_lookup6(&v, &a6[i]);
      if ((x >> 16) != 0x0a00)
	leaves += (got == 7);
    }

    for (uint k = 0; k < LPM_VAR_MAX; k++)
      if (lpm_variants_cpu() & (1U << k))
      {
	memset(val, 0x55, sizeof(val));
	if (fam == 4)
	  b4[k](&v, a4, val, N);
	else
	  b6[k](&v, a6, val, N);
	for (uint i = 0; i < N; i++)
	  if ((ip4_to_u32(a4[i]) >> 16) != 0x0a00)
	    leaves += (val[i] == 7);
	if (fam == 4)
	  bt_sprintf_concat(buf, " %s", lpm_variant_names[k]);
      }
    xfree(r);
  }

  /* Addresses outside 10.0/16 (0a00::/16) answer their leaf: singles and each variant, both families */
  uint outside = 0;
  for (uint i = 0; i < N; i++)
    outside += ((ip4_to_u32(a4[i]) >> 16) != 0x0a00);
  uint vars = __builtin_popcount(lpm_variants_cpu() & ((1U << LPM_VAR_MAX) - 1));
  LOG("hand-made views: %u headers checked; walks through a self-linked row ended in singles and variants%s; %u of %u leaves right",
      (uint) ARRAY_SIZE(hv), buf, leaves, 2 * (1 + vars) * outside);
  bt_assert(leaves == 2 * (1 + vars) * outside);
  return 1;
}

/* What the engine refuses */
static int
t_bad_input(void)
{
  u8 st[SIMD_MAX_LEVELS];
  static const char *bad4[] = { "16-8", "16-8-8-8", "16-16", "4-4-8-8-8", "24-8", "16-8-9-1", "12-8-12" };
  static const char *bad6[] = { "16-8-8", "16-8-8-8-8-8-8-8-8-8-8-8-8-8-8-8", "16-8-8-10-6-8-8-8-8-8-8-8-8-8-8",
				"16-12-4-8-8-8-8-8-8-8-8-8-8-8-8" };

  for (uint i = 0; i < ARRAY_SIZE(bad4); i++)
  {
    int n = simd_plan_parse(bad4[i], st, SIMD_MAX_LEVELS);
    bt_assert_msg(n < 0 || !simd_new_plan(&root_pool, NET_IP4, LPM_VAR_AUTO, st, n), "plan %s accepted", bad4[i]);
  }
  for (uint i = 0; i < ARRAY_SIZE(bad6); i++)
  {
    int n = simd_plan_parse(bad6[i], st, SIMD_MAX_LEVELS);
    bt_assert_msg(n < 0 || !simd_new_plan(&root_pool, NET_IP6, LPM_VAR_AUTO, st, n), "plan %s accepted", bad6[i]);
  }
  bt_assert(simd_plan_parse("16-x", st, SIMD_MAX_LEVELS) < 0);
  bt_assert(simd_plan_parse("", st, SIMD_MAX_LEVELS) < 0);

  bt_assert(!lpm_new(&root_pool, &lpm_simd_class, NET_VPN4, NULL));
  bt_assert(!lpm_new(&root_pool, &lpm_simd_class, NET_FLOW6, NULL));
  bt_assert(lpm_class_find("simd") == &lpm_simd_class);

  /* Every variant the CPU has can be pinned; others are refused */
  for (uint v = 0; v < LPM_VAR_MAX; v++)
  {
    struct lpm_params par = { .variant = v };
    struct lpm_engine *e = lpm_new(&root_pool, &lpm_simd_class, NET_IP4, &par);
    if (lpm_variants_cpu() & (1U << v))
    {
      bt_assert(e && (e->variant == v));
      lpm_free(e);
    }
    else
      bt_assert(!e);
  }
  struct lpm_params par = { .variant = LPM_VAR_MAX };
  bt_assert(!lpm_new(&root_pool, &lpm_simd_class, NET_IP4, &par));
  return 1;
}

/*
 * A new engine fed in the order another one dumps its prefixes (as `show
 * lpm lookup benchmark' feeds its private engines): each allocation of the
 * prefix hash has its own seed, so runs stay as short as for any order
 * (nest/lpm-test-dump.h).
 */
static u64
simd_test_run(struct lpm_engine *e)
{
  struct simd_info i;
  simd_get_info(e, &i);
  return i.hash_run;
}

static int
t_dump_order(void)
{
  struct lpm_engine *a = lpm_new(&root_pool, &lpm_simd_class, NET_IP4, NULL);
  struct lpm_engine *b = lpm_new(&root_pool, &lpm_simd_class, NET_IP4, NULL);
  bt_assert(a && b);

  struct lpm_dump_order o;
  lpm_test_dump_order(a, b, simd_test_run, &o);

  struct simd_info ia, ib;
  simd_get_info(a, &ia);
  simd_get_info(b, &ib);
  LOG("%u prefixes; longest run of the prefix hash: %lu of %lu slots at the end (random order), "
      "%lu at most while a second engine was fed in the first's dump order",
      o.count, (ulong) ia.hash_run, (ulong) ia.hash_slots, (ulong) o.worst);
  bt_assert(ib.hash_count == o.count);
  /* Random order at 1/2 load: 20-70; one fixed function: over 100,000 */
  bt_assert(o.worst <= 1000);
  bt_assert(!o.bad);

  /* The seeds differ: the second engine's slot order is not the first's */
  LOG("dumps of the two engines: %u of %u prefixes at the same place", o.same, o.count);
  bt_assert(o.same < o.count / 100);

  lpm_free(a);
  lpm_free(b);
  return 1;
}

int
main(int argc, char *argv[])
{
  bt_init(argc, argv);

  bt_test_suite(t_dump_order, "IPv4: a new engine fed in another's dump order keeps short hash runs");
  bt_test_suite(t_random4, "IPv4: random add/replace/remove against a reference, every step checked");
  bt_test_suite(t_random6, "IPv6: random add/replace/remove against a reference, every step checked");
  bt_test_suite(t_apply4, "IPv4: batches (lpm_apply) give the old values and contents of single updates");
  bt_test_suite(t_apply6, "IPv6: batches (lpm_apply) give the old values and contents of single updates");
  bt_test_suite(t_random_plans, "Other stride plans: the same random sequences");
  bt_test_suite(t_adversarial4, "IPv4: default, host routes, nested chains, covers of many, stride boundaries");
  bt_test_suite(t_adversarial6, "IPv6: default, host routes, nested chains, covers of many, stride boundaries");
  bt_test_suite(t_aggregation4, "IPv4: uniform rows aggregate and come back");
  bt_test_suite(t_aggregation6, "IPv6: uniform rows aggregate and come back");
  bt_test_suite(t_build4, "IPv4: whole-table builds replace the contents, updates go on");
  bt_test_suite(t_build6, "IPv6: whole-table builds replace the contents, updates go on");
  bt_test_suite(t_alloc_failure4, "IPv4: out of lookup memory, nothing changes");
  bt_test_suite(t_alloc_failure6, "IPv6: out of lookup memory, nothing changes");
  bt_test_suite(t_quiescence, "Retired rows are reused only after readers quiesce");
  bt_test_suite(t_reader4, "IPv4: a reader thread sees only old or new answers");
  bt_test_suite(t_reader6, "IPv6: a reader thread sees only old or new answers");
  bt_test_suite(t_bad_input, "Bad plans, net types and variants are refused");
  bt_test_suite(t_view, "Views of hand-made regions: header checks, walks end at the last level");

  return bt_exit_value();
}
