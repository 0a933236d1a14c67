/*
 *	bloombird -- FIB Bloom filter tests
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include "test/birdtest.h"
#include "test/bt-utils.h"

#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "nest/fib-test-nets.h"

/*
 * Every test runs a FIB with its filter next to a reference FIB with
 * `bloom off' (stock fib_find() and fib_route() loops) and compares them.
 */

#define KEY_SIZE	64		/* Room for any net_addr incl. short flow data */
#define UNIVERSE	24000		/* Candidate keys per net type */
#define OPS		200000		/* Random operations per net type */
#define QUERIES		20000

struct test_node {
  int pos;
  struct fib_node n;
};

static const struct fib_bloom_config cf_off = { .enabled = 0, .hashes = 6, .counters = 16 };

static const int all_types[] = {
  NET_IP4, NET_IP6, NET_VPN4, NET_VPN6, NET_ROA4, NET_ROA6,
  NET_FLOW4, NET_FLOW6, NET_IP6_SADR, NET_MPLS, NET_ASPA,
};

/* Prefixes drawn from a few /8 (/16 for IPv6) roots, so they nest and LPM has work */
static ip4_addr
rnd_ip4(void)
{ return ip4_from_u32(((10 + bt_random_n(4)) << 24) | (bt_random() & 0xffffff)); }

static ip6_addr
rnd_ip6(void)
{ return ip6_build(0x20010000 | bt_random_n(4), bt_random() & 0xffff00ff, bt_random(), bt_random()); }

static uint
rnd_len(uint max)
{
  /* Mostly long prefixes, as in real tables, but every length occurs */
  return (bt_random_n(4) ? max - bt_random_n(max / 3 + 1) : bt_random_n(max + 1));
}

static void
rnd_net(net_addr *n, int type, int full)
{
  uint l4 = full ? IP4_MAX_PREFIX_LENGTH : rnd_len(IP4_MAX_PREFIX_LENGTH);
  uint l6 = full ? IP6_MAX_PREFIX_LENGTH : rnd_len(64);
  ip4_addr a4 = ip4_and(rnd_ip4(), ip4_mkmask(l4));
  ip6_addr a6 = ip6_and(rnd_ip6(), ip6_mkmask(l6));
  fib_test_fill_net(n, type, a4, l4, a6, l6);
}

/* The query for LPM: a full-length address of the type */
static void
rnd_query(net_addr *n, int type)
{
  rnd_net(n, type, 1);
}

#define KEY(keys, i) ((net_addr *) ((keys) + (size_t) (i) * KEY_SIZE))

static void
fib_pair_init(struct fib *f, struct fib *ref, pool *p, int type, uint order)
{
  fib_init(f, p, type, sizeof(struct test_node), OFFSETOF(struct test_node, n), order, NULL);
  fib_init(ref, p, type, sizeof(struct test_node), OFFSETOF(struct test_node, n), order, NULL);
  fib_bloom_configure(ref, &cf_off);
}

static int
same_node(struct fib *f, struct test_node *a, struct fib *ref, struct test_node *b)
{
  if (!a || !b)
    return !a && !b;

  return net_equal(fib_user_to_node(f, a)->addr, fib_user_to_node(ref, b)->addr);
}

/* Every key in the FIB must be found, every other one must not */
static int
check_all(struct fib *f, byte *keys, byte *in)
{
  int ok = 1;
  for (uint i = 0; i < UNIVERSE; i++)
  {
    struct test_node *tn = fib_find(f, KEY(keys, i));
    if (in[i] && (!tn || !net_equal(fib_user_to_node(f, tn)->addr, KEY(keys, i))))
      ok = 0;
    if (!in[i] && tn)
      ok = 0;
  }
  return ok;
}

static int
t_churn_all_types(void)
{
  bt_bird_init();

  /* Filter pinned active (the path under test), then left to the policy */
  for (uint run = 0; run < 2 * ARRAY_SIZE(all_types); run++)
  {
    int pinned = run < ARRAY_SIZE(all_types);
    int type = all_types[run % ARRAY_SIZE(all_types)];
    pool *p = rp_new(&root_pool, "FIB bloom test");
    byte *keys = mb_allocz(p, (size_t) UNIVERSE * KEY_SIZE);
    byte *in = mb_allocz(p, UNIVERSE);
    struct fib f, ref;
    fib_pair_init(&f, &ref, p, type, 0);
    fib_bloom_pin(&f, pinned);

    /* Distinct keys: the reference FIB tells duplicates */
    for (uint i = 0; i < UNIVERSE; )
    {
      rnd_net(KEY(keys, i), type, 0);
      struct test_node *tn = fib_get(&ref, KEY(keys, i));
      if (tn->pos)
	continue;
      tn->pos = ++i;
    }
    for (uint i = 0; i < UNIVERSE; i++)
      fib_delete(&ref, fib_find(&ref, KEY(keys, i)));
    bt_assert(ref.entries == 0);

    uint max_order = 0, min_order_after = 99, entries = 0, bad = 0, seen_filter = 0;
    uint sweeps_ok = 1, bits_ok = 1, guards_ok = 1;

    /* Grow towards the whole universe, shrink to almost nothing, twice */
    for (uint op = 0; op < OPS; op++)
    {
      /* grow 20%, shrink 30%, grow 20%, shrink 30% of the time */
      uint pc = (op * 100) / OPS;
      uint phase = (pc < 20) ? 0 : (pc < 50) ? 1 : (pc < 70) ? 2 : 3;
      int grow = !(phase & 1);
      uint i = bt_random_n(UNIVERSE);
      net_addr *k = KEY(keys, i);

      if (!in[i] && (grow || !bt_random_n(64)))
      {
	fib_get(&f, k);
	fib_get(&ref, k);
	in[i] = 1;
	entries++;
      }
      else if (in[i] && (!grow || !bt_random_n(8)))
      {
	fib_delete(&f, fib_find(&f, k));
	fib_delete(&ref, fib_find(&ref, k));
	in[i] = 0;
	entries--;
      }

      /* A key or a random net, compared with the reference */
      net_addr_union q;
      if (op & 1)
	rnd_net(&q.n, type, 0);
      else
	net_copy(&q.n, KEY(keys, bt_random_n(UNIVERSE)));

      bad += !same_node(&f, fib_find(&f, &q.n), &ref, fib_find(&ref, &q.n));

      rnd_query(&q.n, type);
      bad += !same_node(&f, fib_route(&f, &q.n), &ref, fib_route(&ref, &q.n));

      max_order = MAX(max_order, f.hash_order);
      seen_filter |= fib_bloom_active(f.bloom);
      if (phase == 3)
	min_order_after = MIN(min_order_after, f.hash_order);

      if (!(op % (OPS / 16)))
      {
	sweeps_ok &= check_all(&f, keys, in);
	bits_ok &= fib_filter_bits_exact(&f.bloom->filter);
	guards_ok &= fib_guards_valid(&f.bloom->guards, &f);
      }
    }
    sweeps_ok &= check_all(&f, keys, in);

    bt_assert_msg(bad == 0, "%s: %u answers differ from the reference", net_label[type], bad);
    bt_assert_msg(sweeps_ok, "%s: a present key was not found (false negative) or an absent one was", net_label[type]);
    bt_assert_msg(bits_ok && fib_filter_bits_exact(&f.bloom->filter), "%s: a query-plane bit differs from its counter", net_label[type]);
    bt_assert_msg(guards_ok && fib_guards_valid(&f.bloom->guards, &f), "%s: a guard or length mask rules out a present node", net_label[type]);
    bt_assert(f.entries == entries && ref.entries == entries);
    bt_assert_msg(max_order >= 13, "%s: grew to order %u", net_label[type], max_order);
    bt_assert_msg(min_order_after < max_order, "%s: shrank to order %u", net_label[type], min_order_after);
    bt_assert_msg(seen_filter, "%s: the filter was %s", net_label[type], pinned ? "never built" : "never built by the policy");

    /* Per-length counts agree with the nodes */
    u32 cnt[FIB_MAX_PXLEN + 1] = {};
    FIB_WALK(&f, struct test_node, tn) { cnt[fib_user_to_node(&f, tn)->addr->pxlen]++; } FIB_WALK_END;
    bt_assert(!memcmp(cnt, f.bloom->lengths.count, sizeof(cnt)));

    bt_debug("%s (%s): max order %u, final order %u, filter queries %lu, negatives %lu, fp %lu, built %u dropped %u\n",
	     net_label[type], pinned ? "pinned" : "policy", max_order, f.hash_order, f.bloom->filter.queries,
	     f.bloom->filter.negatives, f.bloom->filter.false_pos, f.bloom->activations, f.bloom->drops);

    rfree(p);
  }

  bt_bird_cleanup();
  return 1;
}

/* Keys that share blocks and saturate counters: still no false negative */
static int
t_saturation(void)
{
  bt_bird_init();

  pool *p = rp_new(&root_pool, "FIB bloom saturation");
  struct fib f, ref;
  fib_pair_init(&f, &ref, p, NET_IP4, FIB_BLOOM_MIN_ORDER);
  fib_bloom_pin(&f, 1);
  bt_assert(fib_bloom_active(f.bloom));

  net_addr_ip4 k = NET_ADDR_IP4(ip4_build(192, 0, 2, 0), 24);
  fib_get(&f, (net_addr *) &k);

  /* Count the same key 40 more times: its counters saturate */
  for (int i = 0; i < 40; i++)
    fib_bloom_add(&f, (net_addr *) &k);
  bt_assert(f.bloom->filter.saturated >= f.bloom->cf.hashes);

  for (int i = 0; i < 40; i++)
    fib_bloom_del(&f, (net_addr *) &k);
  bt_assert(fib_filter_bits_exact(&f.bloom->filter));

  /* Sticky counters: the real key is still admitted and found */
  bt_assert(fib_find(&f, (net_addr *) &k) != NULL);

  /* Adversarial churn around the saturated block: many keys in, all out */
  net_addr_ip4 *ks = mb_alloc(p, 4000 * sizeof(net_addr_ip4));
  for (int i = 0; i < 4000; i++)
  {
    ks[i] = NET_ADDR_IP4(ip4_from_u32(0xc6120000 + (i << 4)), 28);
    fib_get(&f, (net_addr *) &ks[i]);
  }
  for (int round = 0; round < 3; round++)
    for (int i = round; i < 4000; i += 3)
    {
      fib_delete(&f, fib_find(&f, (net_addr *) &ks[i]));
      bt_assert(fib_find(&f, (net_addr *) &k) != NULL);
      if (i + 1 < 4000 && (i + 1) % 3 > round)
	bt_assert(fib_find(&f, (net_addr *) &ks[i + 1]) != NULL);
    }
  bt_assert(fib_find(&f, (net_addr *) &k) != NULL);
  bt_assert(fib_filter_bits_exact(&f.bloom->filter));

  /* The key removed: the filter may still say maybe, the FIB says no */
  fib_delete(&f, fib_find(&f, (net_addr *) &k));
  bt_assert(fib_find(&f, (net_addr *) &k) == NULL);
  bt_assert(f.bloom->lengths.count[24] == 0 && f.bloom->lengths.count[28] == 0);

  /* A rebuild starts exact again */
  fib_bloom_resize(&f);
  bt_assert(f.bloom->filter.saturated == 0);
  bt_assert(f.bloom->filter.items == f.entries);

  rfree(p);
  bt_bird_cleanup();
  return 1;
}

/* The filter's false-positive rate is near what the formula predicts */
static int
t_false_positive_rate(void)
{
  bt_bird_init();

  for (int v6 = 0; v6 < 2; v6++)
  {
    int type = v6 ? NET_IP6 : NET_IP4;
    pool *p = rp_new(&root_pool, "FIB bloom fpr");
    struct fib f;
    fib_init(&f, p, type, sizeof(struct test_node), OFFSETOF(struct test_node, n), 0, NULL);
    fib_bloom_pin(&f, 1);

    for (int i = 0; i < 200000; i++)
    {
      net_addr_union n;
      rnd_net(&n.n, type, 0);
      fib_get(&f, &n.n);
    }

    struct fib_bloom *b = f.bloom;
    u64 q0 = b->filter.queries, n0 = b->filter.negatives, fp0 = b->filter.false_pos;
    for (int i = 0; i < 1000000; i++)
    {
      net_addr_union n;
      rnd_net(&n.n, type, 0);
      fib_find(&f, &n.n);
    }

    u64 absent = (b->filter.negatives - n0) + (b->filter.false_pos - fp0);
    double measured = (double) (b->filter.false_pos - fp0) / absent;
    double predicted = fib_filter_fpr_predicted(&b->filter);

    bt_debug("%s: %u entries, %u B filter, measured FPR %.5f, predicted %.5f\n",
	     net_label[type], f.entries, fib_filter_size(&b->filter), measured, predicted);
    bt_assert(b->filter.queries - q0 == 1000000);
    bt_assert(measured > 0 && measured < 3 * predicted + 0.001);
    bt_assert(measured < 0.05);

    rfree(p);
  }

  bt_bird_cleanup();
  return 1;
}

/* Configuration changes rebuild the filter or drop it */
static int
t_configure(void)
{
  bt_bird_init();

  pool *p = rp_new(&root_pool, "FIB bloom config");
  struct fib f;
  fib_init(&f, p, NET_IP6, sizeof(struct test_node), OFFSETOF(struct test_node, n), 0, NULL);
  fib_bloom_pin(&f, 1);

  net_addr_union *ks = mb_alloc(p, 10000 * sizeof(net_addr_union));
  for (int i = 0; i < 10000; i++)
  {
    rnd_net(&ks[i].n, NET_IP6, 0);
    fib_get(&f, &ks[i].n);
  }
  bt_assert(fib_bloom_active(f.bloom));

  /* Half the counters per entry: half the blocks (up to rounding) */
  struct fib_bloom_config c = { .enabled = 1, .hashes = 3, .counters = 24 };
  fib_bloom_configure(&f, &c);
  uint size_def = fib_filter_size(&f.bloom->filter);
  c.counters = 12;
  fib_bloom_configure(&f, &c);
  bt_assert(2 * fib_filter_size(&f.bloom->filter) <= size_def + 128);
  bt_assert(2 * fib_filter_size(&f.bloom->filter) >= size_def - 128);
  bt_assert(f.bloom->cf.hashes == 3);

  c.enabled = 0;
  fib_bloom_configure(&f, &c);
  bt_assert(!fib_bloom_active(f.bloom));

  c.enabled = 1;
  fib_bloom_configure(&f, &c);
  bt_assert(fib_bloom_active(f.bloom));

  for (int i = 0; i < 10000; i++)
    bt_assert(fib_find(&f, &ks[i].n) != NULL);

  rfree(p);
  bt_bird_cleanup();
  return 1;
}

/*
 * The upkeep policy: filling a FIB builds no filter; lookups that miss
 * build it; a stream of updates with no lookups drops it again; answers
 * are the reference's throughout.
 */
static int
t_policy(void)
{
  bt_bird_init();

  pool *p = rp_new(&root_pool, "FIB bloom policy");
  struct fib f, ref;
  fib_pair_init(&f, &ref, p, NET_IP4, 0);

  const uint n = 60000;
  net_addr_union *ks = mb_alloc(p, 2 * n * sizeof(net_addr_union));
  for (uint i = 0; i < 2 * n; i++)
    rnd_net(&ks[i].n, NET_IP4, 0);

  /* Import: no filter, however large the FIB grows */
  for (uint i = 0; i < n; i++)
  {
    fib_get(&f, &ks[i].n);
    fib_get(&ref, &ks[i].n);
  }
  bt_assert_msg(f.hash_order >= FIB_BLOOM_MIN_ORDER, "order %u", f.hash_order);
  bt_assert_msg(f.bloom->state == FIB_BLOOM_DORMANT && !fib_bloom_active(f.bloom) && !f.bloom->activations,
		"state %u after import", f.bloom->state);

  /* Hits only: still no filter */
  uint bad = 0;
  for (uint i = 0; i < 4 * n; i++)
    bad += !same_node(&f, fib_find(&f, &ks[i % n].n), &ref, fib_find(&ref, &ks[i % n].n));
  bt_assert(!fib_bloom_active(f.bloom));

  /* Misses: the filter is built, and fib_find() asks it */
  uint q;
  for (q = 0; (q < 4 * n) && !fib_bloom_active(f.bloom); q++)
  {
    net_addr_union m;
    rnd_net(&m.n, NET_IP4, 1);
    bad += !same_node(&f, fib_find(&f, &m.n), &ref, fib_find(&ref, &m.n));
  }
  bt_assert_msg(fib_bloom_active(f.bloom) && (f.bloom->activations == 1), "not built after %u misses", q);
  bt_debug("filter built after %u misses for %u entries\n", q, f.entries);
  for (uint i = 0; i < 2 * FIB_BLOOM_POLICY_EVERY; i++)
  {
    net_addr_union m;
    rnd_net(&m.n, NET_IP4, 1);
    bad += !same_node(&f, fib_find(&f, &m.n), &ref, fib_find(&ref, &m.n));
  }
  bt_assert(fib_bloom_asked(f.bloom));

  /* A hit-only workload stops asking the filter but keeps it */
  for (uint i = 0; i < 4 * FIB_BLOOM_POLICY_EVERY; i++)
    bad += !same_node(&f, fib_find(&f, &ks[i % n].n), &ref, fib_find(&ref, &ks[i % n].n));
  bt_assert(!fib_bloom_asked(f.bloom) && fib_bloom_active(f.bloom));

  /* Misses while it does not ask: after FIB_BLOOM_REASK of them it asks again */
  uint m = 0;
  for (; (m < 4 * FIB_BLOOM_REASK) && !fib_bloom_asked(f.bloom); m++)
  {
    net_addr_union x;
    do rnd_net(&x.n, NET_IP4, 1); while (fib_find(&ref, &x.n));
    bad += !same_node(&f, fib_find(&f, &x.n), &ref, NULL);
  }
  bt_assert_msg(fib_bloom_asked(f.bloom) && (m == FIB_BLOOM_REASK), "asks again after %u misses", m);
  for (uint i = 0; i < 4 * FIB_BLOOM_POLICY_EVERY; i++)
    bad += !same_node(&f, fib_find(&f, &ks[i % n].n), &ref, fib_find(&ref, &ks[i % n].n));
  bt_assert(!fib_bloom_asked(f.bloom) && fib_bloom_active(f.bloom));

  /* A quarter misses: asked again now and then, ever more rarely (hits
   * through the filter cost more than the misses save); three quarters:
   * asked nearly always */
  for (uint quarters = 1; quarters <= 3; quarters += 2)
  {
    u64 q0 = f.bloom->filter.queries;
    uint calls = 256 * FIB_BLOOM_POLICY_EVERY;
    for (uint i = 0; i < calls; i++)
    {
      net_addr_union x;
      if ((i % 4) >= quarters)
	x = ks[i % n];
      else
	do rnd_net(&x.n, NET_IP4, 1); while (fib_find(&ref, &x.n));
      bad += !same_node(&f, fib_find(&f, &x.n), &ref, fib_find(&ref, &x.n));
    }
    double asked = (double) (f.bloom->filter.queries - q0) / calls;
    bt_debug("%u/4 misses: %.3f of the calls asked the filter, re-ask after %u\n", quarters, asked, f.bloom->reask);
    bt_assert_msg((quarters == 1) ? (asked < 0.1) : (asked > 0.9),
		  "%u/4 misses: %.3f of the calls asked the filter", quarters, asked);
  }

  /* Updates with no lookups: dropped */
  uint u;
  for (u = 0; (u < 8 * n) && fib_bloom_active(f.bloom); u++)
  {
    net_addr_union *k = &ks[n + (u % n)];
    if ((u / n) & 1)
    {
      void *x = fib_find_chain(&f, &k->n);
      bad += !same_node(&f, x, &ref, fib_find(&ref, &k->n));
      if (x)
      {
	fib_delete(&f, x);
	fib_delete(&ref, fib_find(&ref, &k->n));
      }
    }
    else
    {
      fib_get(&f, &k->n);
      fib_get(&ref, &k->n);
    }
  }
  bt_assert_msg(!fib_bloom_active(f.bloom) && (f.bloom->drops == 1), "not dropped after %u updates", u);
  bt_debug("filter dropped after %u updates\n", u);

  /* Answers never differed; LPM agrees too */
  for (uint i = 0; i < 20000; i++)
  {
    net_addr_union m;
    rnd_query(&m.n, NET_IP4);
    bad += !same_node(&f, fib_route(&f, &m.n), &ref, fib_route(&ref, &m.n));
  }
  bt_assert_msg(bad == 0, "%u answers differ from the reference", bad);

  rfree(p);
  bt_bird_cleanup();
  return 1;
}

/*
 * The policy may build the filter on any event, a delete's too, and it
 * builds from the nodes: fib_delete() must tick it only once the node is
 * gone, or the filter counts a node the FIB no longer has. Misses bring
 * the policy to the point of building; each of its checks is made to fall
 * on a delete.
 */
static int
t_policy_on_delete(void)
{
  bt_bird_init();

  pool *p = rp_new(&root_pool, "FIB bloom policy on delete");
  struct fib f, ref;
  fib_pair_init(&f, &ref, p, NET_IP4, 0);

  const uint n = 60000;
  net_addr_union *ks = mb_alloc(p, n * sizeof(net_addr_union));
  for (uint i = 0; i < n; i++)
  {
    rnd_net(&ks[i].n, NET_IP4, 0);
    fib_get(&f, &ks[i].n);
    fib_get(&ref, &ks[i].n);
  }
  bt_assert(!fib_bloom_active(f.bloom));

  uint bad = 0, del = 0, q;
  net_addr_union *gone = NULL;
  for (q = 0; (q < 8 * n) && !fib_bloom_active(f.bloom); q++)
  {
    if (f.bloom->pol_countdown > 1)
    {
      net_addr_union m;
      rnd_net(&m.n, NET_IP4, 1);
      bad += !same_node(&f, fib_find(&f, &m.n), &ref, fib_find(&ref, &m.n));
      continue;
    }

    /* The next event is a policy check: a delete */
    void *x = NULL;
    while ((del < n) && !(x = fib_find_chain(&f, &ks[del].n)))
      del++;
    if (!x)
      break;
    gone = &ks[del++];
    fib_delete(&f, x);
    fib_delete(&ref, fib_find(&ref, &gone->n));
  }

  bt_assert_msg(fib_bloom_active(f.bloom) && gone, "not built after %u events", q);
  bt_assert_msg(f.bloom->filter.items == f.entries, "filter counts %u keys for %u nodes", f.bloom->filter.items, f.entries);
  bt_assert(fib_find(&f, &gone->n) == NULL);

  /* Every node still found through the filter; the rebuild counts the same */
  for (uint i = 0; i < n; i++)
    bad += !same_node(&f, fib_find(&f, &ks[i].n), &ref, fib_find(&ref, &ks[i].n));
  uint items = f.bloom->filter.items;
  fib_bloom_resize(&f);
  bt_assert(f.bloom->filter.items == items);
  bt_assert_msg(bad == 0, "%u answers differ from the reference", bad);

  rfree(p);
  bt_bird_cleanup();
  return 1;
}

int
main(int argc, char *argv[])
{
  bt_init(argc, argv);

  bt_test_suite(t_churn_all_types, "Random insert/delete/find/route against stock, every net type, rehash up and down");
  bt_test_suite(t_saturation, "Saturated counters never cause a false negative");
  bt_test_suite(t_false_positive_rate, "Measured false-positive rate near the predicted one");
  bt_test_suite(t_configure, "Reconfiguration rebuilds or drops the filter");
  bt_test_suite(t_policy, "Upkeep policy: no filter on import, built by misses, dropped by updates");
  bt_test_suite(t_policy_on_delete, "Upkeep policy: a filter built on a delete does not count the deleted node");

  return bt_exit_value();
}
