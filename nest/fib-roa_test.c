/*
 *	bloombird -- ROA index tests
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include "test/birdtest.h"
#include "test/bt-utils.h"

#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "nest/fib-roa.h"
#include "nest/rt-lpm.h"
#include "lib/event.h"
#include "conf/conf.h"

/*
 * ROA tables are churned through every state a ROA net can be in (absent,
 * a node without a route, a valid route, only a filtered route), with the
 * validity changes reported as rte_announce() reports them, and checked
 * against a brute-force RFC 6483 verdict over the ROAs with a valid route:
 * net_roa_check() through the index, and the index itself against one
 * built from the nodes (fib_roa_exact()), across its resizes up and down,
 * `bloom off' and on, and a filter built while the table is in use.
 */

#define UNIVERSE	24000
#define QUERIES		1500
#define ASNS		6

enum roa_state { R_ABSENT, R_NODE, R_VALID, R_FILTERED };

struct roa_set {
  rtable *tab;
  net_addr_union *roa;
  byte *state;
  uint n;
};

static rte valid_rte;
static rte filtered_rte = { .flags = REF_FILTERED };

static const struct fib_bloom_config cf_on = { .enabled = 1, .hashes = 5, .counters = 10 };
static const struct fib_bloom_config cf_off = { .enabled = 0, .hashes = 5, .counters = 10 };

/* Sparse universes (t_sparse()): IPv4 ROAs anywhere, a quarter of them /16
 * or shorter; IPv6 ROAs anywhere in 2000::/3, a quarter of them /16-/32
 * (shorter ones would cover most of it); so that most routes have one
 * covering ROA prefix, whose candidate length a check must not miss */
static int sparse;

/* A ROA of a few nested blocks; now and then one with host bits set */
static void
rnd_roa(net_addr_union *r, int v6)
{
  uint asn = 64500 + bt_random_n(ASNS);
  if (!v6 && sparse)
  {
    uint len = bt_random_n(4) ? 17 + bt_random_n(16) : bt_random_n(17);
    ip4_addr a = ip4_and(ip4_from_u32(bt_random()), ip4_mkmask(len));
    net_fill_roa4(&r->n, a, len, len + bt_random_n(33 - len), asn);
  }
  else if (sparse)
  {
    uint len = bt_random_n(4) ? 33 + bt_random_n(96) : 16 + bt_random_n(17);
    ip6_addr a = ip6_build(0x20000000 | (bt_random() & 0x1fffffff), bt_random(), bt_random(), bt_random());
    a = ip6_and(a, ip6_mkmask(len));
    net_fill_roa6(&r->n, a, len, len + bt_random_n(129 - len), asn);
  }
  else if (!v6)
  {
    uint len = bt_random_n(8) ? 12 + bt_random_n(13) : bt_random_n(33);
    ip4_addr a = ip4_from_u32(((10 + bt_random_n(3)) << 24) | (bt_random() & 0xffffff));
    if (bt_random_n(64))
      a = ip4_and(a, ip4_mkmask(len));
    net_fill_roa4(&r->n, a, len, len + bt_random_n(33 - len), asn);
  }
  else
  {
    uint len = bt_random_n(8) ? 24 + bt_random_n(25) : bt_random_n(129);
    ip6_addr a = ip6_build(0x20010db0 | bt_random_n(3), bt_random(), bt_random(), bt_random());
    if (bt_random_n(64))
      a = ip6_and(a, ip6_mkmask(len));
    net_fill_roa6(&r->n, a, len, len + bt_random_n(129 - len), asn);
  }
}

static int
roa_cmp(const void *a, const void *b)
{ return net_compare(a, b); }

static void
set_new(struct roa_set *s, int v6)
{
  pool *p = rp_new(&root_pool, "ROA test");
  rtable *t = mb_allocz(p, sizeof(rtable));
  t->rp = p;
  t->name = "roa";
  t->addr_type = v6 ? NET_ROA6 : NET_ROA4;
  fib_init(&t->fib, p, t->addr_type, sizeof(net), OFFSETOF(net, n), 0, NULL);
  fib_bloom_roa_attach(&t->fib);

  s->tab = t;
  s->roa = mb_alloc(p, UNIVERSE * sizeof(net_addr_union));
  s->state = mb_allocz(p, UNIVERSE);
  s->n = 0;

  /* Distinct ROAs (a duplicate would be one net in two entries), shuffled */
  for (uint i = 0; i < UNIVERSE; i++)
    rnd_roa(&s->roa[i], v6);

  qsort(s->roa, UNIVERSE, sizeof(net_addr_union), roa_cmp);
  for (uint i = 0; i < UNIVERSE; i++)
    if (!s->n || !net_equal(&s->roa[i].n, &s->roa[s->n - 1].n))
      s->roa[s->n++] = s->roa[i];

  for (uint i = s->n - 1; i > 0; i--)
  {
    uint j = bt_random_n(i + 1);
    net_addr_union x = s->roa[i];
    s->roa[i] = s->roa[j];
    s->roa[j] = x;
  }
}

/* ROA @i enters state @to; validity changes reported as rte_announce() does */
static void
roa_to(struct roa_set *s, uint i, uint to)
{
  rtable *t = s->tab;
  uint from = s->state[i];
  if (from == to)
    return;

  net *n = (from == R_ABSENT) ? fib_get(&t->fib, &s->roa[i].n) : fib_find(&t->fib, &s->roa[i].n);
  ASSERT_DIE(n);

  n->routes = (to == R_VALID) ? &valid_rte : (to == R_FILTERED) ? &filtered_rte : NULL;
  if ((from == R_VALID) != (to == R_VALID))
    if (RT_LPM_TRACKING(t))
      rt_lpm_net_changed(t, n, to == R_VALID);

  if (to == R_ABSENT)
    fib_delete(&t->fib, n);

  s->state[i] = to;
}

/* Stock's verdict by brute force: the ROAs with a valid route covering @q */
static int
ref_check(struct roa_set *s, const net_addr *q, u32 asn)
{
  int anything = 0;
  for (uint i = 0; i < s->n; i++)
  {
    const net_addr_union *r = &s->roa[i];
    if ((s->state[i] != R_VALID) || (r->n.pxlen > q->pxlen))
      continue;

    /* Stock trims the query and compares: a ROA with host bits never matches */
    int cover = (q->type == NET_IP4) ?
      ip4_equal(r->roa4.prefix, ip4_and(((const net_addr_ip4 *) q)->prefix, ip4_mkmask(r->n.pxlen))) :
      ip6_equal(r->roa6.prefix, ip6_and(((const net_addr_ip6 *) q)->prefix, ip6_mkmask(r->n.pxlen)));
    if (!cover)
      continue;

    anything = 1;
    u32 ra = (q->type == NET_IP4) ? r->roa4.asn : r->roa6.asn;
    uint rm = (q->type == NET_IP4) ? r->roa4.max_pxlen : r->roa6.max_pxlen;
    if (asn && (ra == asn) && (rm >= q->pxlen))
      return ROA_VALID;
  }
  return anything ? ROA_INVALID : ROA_UNKNOWN;
}

/* A route prefix inside or around a ROA, or anywhere in the blocks */
static void
rnd_query(struct roa_set *s, net_addr_union *q, int v6)
{
  const net_addr_union *r = &s->roa[bt_random_n(s->n)];
  if (!v6)
  {
    uint more = bt_random_n(9);	/* Drawn once: MIN() evaluates its arguments twice */
    uint len = bt_random_n(4) ? MIN(r->n.pxlen + more, 32U) : bt_random_n(33);
    ip4_addr a = bt_random_n(4) ? ip4_or(r->roa4.prefix, ip4_from_u32(bt_random() & ~ip4_to_u32(ip4_mkmask(r->n.pxlen)))) :
      ip4_from_u32(((10 + bt_random_n(3)) << 24) | (bt_random() & 0xffffff));
    net_fill_ip4(&q->n, ip4_and(a, ip4_mkmask(len)), len);
  }
  else
  {
    uint more = bt_random_n(17);
    uint len = bt_random_n(4) ? MIN(r->n.pxlen + more, 128U) : bt_random_n(129);
    ip6_addr a = r->roa6.prefix;
    for (uint b = r->n.pxlen; b < 128; b++)
      if (bt_random_n(2))
	ip6_setbit(&a, b);
    net_fill_ip6(&q->n, ip6_and(a, ip6_mkmask(len)), len);
  }
}

/* Verdicts of random checks against the reference, and the index itself */
static int
check_all(struct roa_set *s, int v6, const char *when)
{
  struct fib_bloom *b = s->tab->fib.bloom;
  struct fib_roa *r = b->roa;
  u64 checks = r ? r->checks : 0;
  u32 changes = b->activations + b->drops;
  uint bad = 0;

  for (uint i = 0; i < QUERIES; i++)
  {
    net_addr_union q;
    rnd_query(s, &q, v6);
    u32 asn = bt_random_n(4) ? 64500 + bt_random_n(ASNS + 1) : 0;

    int want = ref_check(s, &q.n, asn);
    int got = net_roa_check(s->tab, &q.n, asn);

    /* The filter walk too, the index set aside for the call and the FIB
     * detached, so that the call builds none (pinned: the policy cannot
     * drop or build the filter meanwhile) */
    int walk = want;
    if (b->pinned)
    {
      struct fib_roa *cur = b->roa;
      u8 nets = b->roa_nets;
      b->roa = NULL;
      b->roa_nets = FIB_ROA_NONE;
      walk = net_roa_check(s->tab, &q.n, asn);
      b->roa = cur;
      b->roa_nets = nets;
    }

    if (((got != want) || (walk != want)) && (bad++ < 5))
      bt_debug("%s, %s: roa_check(%s, AS%u) = %d (filter walk %d), expected %d\n",
	       v6 ? "IPv6" : "IPv4", when, tmp_sprintf("%N", &q.n), asn, got, walk, want);
  }

  int exact = fib_roa_exact(b->roa, &s->tab->fib);
  if (r)
    bt_assert_msg(r->stale <= r->groups / 4 + 64, "%s: %u stale block mask bits for %u slots", when, r->stale, r->groups);
  bt_assert_msg(!bad, "%s, %s: %u of %u verdicts (index or filter walk) differ from stock's", v6 ? "IPv6" : "IPv4", when, bad, QUERIES);
  bt_assert_msg(exact, "%s, %s: the index differs from one built from the nodes", v6 ? "IPv6" : "IPv4", when);
  if (r && (b->activations + b->drops == changes))
    bt_assert_msg(r->checks == checks + QUERIES, "%s, %s: %lu of %u checks went through the index", v6 ? "IPv6" : "IPv4", when, r->checks - checks, QUERIES);
  return !bad && exact;
}

/* One check of a FIB with a filter: it builds the index */
static void
first_check(struct roa_set *s, int v6)
{
  net_addr_union q;
  rnd_query(s, &q, v6);
  net_roa_check(s->tab, &q.n, 64500);
  bt_assert_msg(s->tab->fib.bloom->roa, "%s: a check with the filter built did not build the index", v6 ? "IPv6" : "IPv4");
}

/* One check that must not build an index */
static void
first_check_none(struct roa_set *s)
{
  net_addr_union q;
  rnd_query(s, &q, 0);
  net_roa_check(s->tab, &q.n, 64500);
}

static void
churn(struct roa_set *s, uint steps, uint bias)
{
  for (uint k = 0; k < steps; k++)
  {
    uint i = bt_random_n(s->n);
    uint to = bt_random_n(4);
    if (bt_random_n(8) < bias)
      to = R_VALID;
    roa_to(s, i, to);
  }
}

static int
t_churn(void)
{
  bt_bird_init();
  config = config_alloc("");

  int ok = 1;
  for (int v6 = 0; v6 < 2; v6++)
  {
    struct roa_set s;
    set_new(&s, v6);
    struct fib *f = &s.tab->fib;

    /* Pinned while small: no filter until a rehash builds it; the index
     * comes with the first check after that, small, and grows */
    fib_bloom_pin(f, 1);
    for (uint i = 0; (i < 64) && !fib_bloom_active(f->bloom); i++)
      churn(&s, 256, 4);
    bt_assert_msg(fib_bloom_active(f->bloom) && !f->bloom->roa, "%s: filter built %d, index %p before any check",
		  v6 ? "IPv6" : "IPv4", fib_bloom_active(f->bloom), f->bloom->roa);
    first_check(&s, v6);
    churn(&s, s.n / 2, 4);
    ok &= check_all(&s, v6, "grown");

    /* Mostly valid: the index grows; then mostly not: it shrinks */
    uint order0 = f->bloom->roa->order;
    churn(&s, 3 * s.n, 7);
    uint order1 = f->bloom->roa->order;
    ok &= check_all(&s, v6, "filled");
    for (uint i = 0; i < s.n; i++)
      if (bt_random_n(16))
	roa_to(&s, i, bt_random_n(2) ? R_ABSENT : R_FILTERED);
    uint order2 = f->bloom->roa->order;
    bt_assert_msg((order1 > order0) && (order2 < order1), "%s: index order %u -> %u -> %u, no growth and shrink",
		  v6 ? "IPv6" : "IPv4", order0, order1, order2);
    ok &= check_all(&s, v6, "emptied");

    /* `bloom off': stock's paths, no index; on and pinned: rebuilt from the nodes */
    churn(&s, s.n, 5);
    fib_bloom_configure(f, &cf_off);
    bt_assert(!f->bloom->roa);
    ok &= check_all(&s, v6, "bloom off");
    churn(&s, s.n / 4, 4);
    fib_bloom_configure(f, &cf_on);
    first_check(&s, v6);
    ok &= check_all(&s, v6, "bloom on again");

    /* Left to the policy: the index comes with the first check, without
     * a filter */
    fib_bloom_configure(f, &cf_off);
    fib_bloom_pin(f, 0);
    fib_bloom_configure(f, &cf_on);
    bt_assert(!f->bloom->roa);
    {
      first_check(&s, v6);
      bt_assert_msg(!fib_bloom_active(f->bloom), "%s: the first check built the filter, not only the index", v6 ? "IPv6" : "IPv4");
      churn(&s, s.n / 16, 4);
      ok &= check_all(&s, v6, "index without a filter");

      /* Slots of long prefixes come and go: their stale mask bits are
       * recomputed, within the bound check_all() asserts */
      u32 stale_max = 0, tidied = 0;
      for (uint k = 0; k < 4 * s.n; k++)
      {
	uint i = bt_random_n(s.n);
	if (s.roa[i].n.pxlen > 16)
	{
	  u32 before = f->bloom->roa->stale;
	  roa_to(&s, i, (s.state[i] == R_VALID) ? R_ABSENT : R_VALID);
	  tidied += (f->bloom->roa->stale < before);
	  stale_max = MAX(stale_max, f->bloom->roa->stale);
	}
      }
      bt_assert_msg(tidied, "%s: stale block mask bits never recomputed (up to %u)", v6 ? "IPv6" : "IPv4", stale_max);
      ok &= check_all(&s, v6, "long prefixes churned");
      bt_assert_msg(!fib_bloom_active(f->bloom) || f->bloom->roa, "%s: the index went with the filter policy", v6 ? "IPv6" : "IPv4");
    }
    for (uint round = 0; (round < 64) && !f->bloom->roa; round++)
    {
      net_addr_union q;
      for (uint i = 0; i < 1000; i++)
      {
	rnd_query(&s, &q, v6);
	net_roa_check(s.tab, &q.n, 64500);
      }
    }
    bt_assert_msg(f->bloom->roa, "%s: checks did not make the policy build the index", v6 ? "IPv6" : "IPv4");
    churn(&s, s.n / 16, 4);
    ok &= check_all(&s, v6, "policy");

    rfree(s.tab->rp);
  }

  bt_bird_cleanup();
  return ok;
}

/* The verdict with @crowd ROAs of 10.0.0.0/16 (AS 70000 + i, max /16 + i % 9) added */
static int
crowd_check(struct roa_set *s, const net_addr *q, u32 asn, uint crowd)
{
  int want = ref_check(s, q, asn);
  if ((want == ROA_VALID) || (q->pxlen < 16) || ((ip4_to_u32(net4_prefix(q)) >> 16) != 0x0a00))
    return want;

  uint i = asn - 70000;
  return ((asn >= 70000) && (i < crowd) && (16 + i % 9 >= q->pxlen)) ? ROA_VALID : ROA_INVALID;
}

#define CROWD	(FIB_ROA_MAX_SHARED + 100)

static int
t_crowded(void)
{
  bt_bird_init();
  config = config_alloc("");

  struct roa_set s;
  set_new(&s, 0);
  rtable *t = s.tab;
  struct fib *f = &t->fib;

  fib_bloom_pin(f, 1);
  for (uint i = 0; i < s.n; i++)
    roa_to(&s, i, R_VALID);
  first_check(&s, 0);

  /* One prefix gets more ROAs than a slot counts, one by one: the index
   * is dropped and the table's checks walk the FIB, still exact */
  u32 roas0 = f->bloom->roa ? f->bloom->roa->roas : 0;
  for (uint i = 0; i < CROWD; i++)
  {
    net_addr_union r;
    net_fill_roa4(&r.n, ip4_build(10, 0, 0, 0), 16, 16 + i % 9, 70000 + i);
    net *n = fib_get(f, &r.n);
    n->routes = &valid_rte;
    if (RT_LPM_TRACKING(t))
      rt_lpm_net_changed(t, n, 1);

    /* (a random ROA or a hundred may share the prefix already) */
    if (i + 200 == FIB_ROA_MAX_SHARED)
      bt_assert_msg(f->bloom->roa && (f->bloom->roa->roas == roas0 + i + 1), "index lost before its slot is full");
  }
  bt_assert_msg(!f->bloom->roa && !f->bloom->roa_nets, "index kept with a prefix of %u ROAs", CROWD);

  uint bad = 0;
  for (uint i = 0; i < QUERIES; i++)
  {
    net_addr_union q;
    uint len = 16 + bt_random_n(17);
    net_fill_ip4(&q.n, ip4_and(ip4_from_u32(0x0a000000 | (bt_random() & 0xffff)), ip4_mkmask(len)), len);
    u32 asn = bt_random_n(2) ? 70000 + bt_random_n(CROWD + 50) : 64500 + bt_random_n(ASNS);
    bad += (net_roa_check(t, &q.n, asn) != crowd_check(&s, &q.n, asn, CROWD));
  }
  bt_assert_msg(!bad, "%u of %u verdicts differ from stock's after the index was dropped", bad, QUERIES);

  /* Attached again (a reconfiguration): a build from the nodes gives up too */
  fib_bloom_roa_attach(f);
  first_check_none(&s);
  bt_assert_msg(!f->bloom->roa, "an index built with a prefix of %u ROAs", CROWD);

  rfree(t->rp);
  bt_bird_cleanup();
  return !bad;
}

/*
 * Block masks where they decide: sparse ROAs, most routes covered by one
 * ROA prefix only, so a candidate length missing from a mask changes the
 * verdict. ROAs of /17 and longer come and go (their mask bits go stale
 * and are recomputed), /16 and shorter ones too (their bits cleared at
 * once). IPv6: ROAs of /17-/32 mark every /32 they cover, longer ones the
 * /32 they lie in, those past /80 the table's far mask.
 */
static int
t_sparse(void)
{
  bt_bird_init();
  config = config_alloc("");
  sparse = 1;

  int ok = 1;
  for (int v6 = 0; v6 < 2; v6++)
  {
    struct roa_set s;
    set_new(&s, v6);
    struct fib *f = &s.tab->fib;

    churn(&s, 2 * s.n, 6);
    first_check(&s, v6);
    bt_assert_msg(!fib_bloom_active(f->bloom), "%s: the first check built the filter, not only the index", v6 ? "IPv6" : "IPv4");
    ok &= check_all(&s, v6, "sparse");

    for (uint round = 0; round < 4; round++)
    {
      for (uint k = 0; k < s.n / 2; k++)
      {
	uint i = bt_random_n(s.n);
	roa_to(&s, i, (s.state[i] == R_VALID) ? bt_random_n(4) : R_VALID);
      }
      ok &= check_all(&s, v6, "sparse, churned");
    }

    rfree(s.tab->rp);
  }

  sparse = 0;
  bt_bird_cleanup();
  return ok;
}

int
main(int argc, char *argv[])
{
  bt_init(argc, argv);

  bt_test_suite(t_churn, "ROA index against brute-force RFC 6483 verdicts under churn, resizes and filter changes");
  bt_test_suite(t_sparse, "Block masks on sparse IPv4 and IPv6 ROAs: no candidate length missed, stale bits recomputed");
  bt_test_suite(t_crowded, "A prefix with more ROAs than a slot counts: the index is dropped, checks stay exact");

  return bt_exit_value();
}
