/*
 *	bloombird -- Incremental FIB rehash tests
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include "test/birdtest.h"
#include "test/bt-utils.h"

#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "nest/fib-rehash.h"
#include "nest/fib-test-nets.h"
#include "lib/event.h"
#include "conf/conf.h"

/*
 * A FIB is churned while its rehashes are in progress, buckets moved by
 * random amounts between the operations (directly, and by running its
 * event), and checked against a plain array of keys: membership, chain
 * positions, the walk's hash order, longest-prefix match, and iterators
 * parked across moves. fib_rehash_min_order is lowered so that every
 * rehash from order 10 up is incremental.
 */

#define KEY_SIZE	64
#define UNIVERSE	24000
#define CHECK_EVERY	997

struct test_node {
  int pos;
  struct fib_node n;
};

static const int all_types[] = {
  NET_IP4, NET_IP6, NET_VPN4, NET_VPN6, NET_ROA4, NET_ROA6,
  NET_FLOW4, NET_FLOW6, NET_IP6_SADR, NET_MPLS, NET_ASPA,
};

static const struct fib_bloom_config cf_off = { .enabled = 0, .hashes = 5, .counters = 10 };

#define KEY(keys, i) ((net_addr *) ((keys) + (size_t) (i) * KEY_SIZE))

/* Checks made while a rehash was in progress, growing and shrinking */
static uint seen_grow, seen_shrink;

static void
rnd_net(net_addr *n, int type)
{
  /* Nested prefixes under a few roots, every length */
  uint l4 = bt_random_n(4) ? 32 - bt_random_n(12) : bt_random_n(33);
  uint l6 = bt_random_n(4) ? 64 - bt_random_n(20) : bt_random_n(129);
  ip4_addr a4 = ip4_and(ip4_from_u32(((10 + bt_random_n(4)) << 24) | (bt_random() & 0xffffff)), ip4_mkmask(l4));
  ip6_addr a6 = ip6_and(ip6_build(0x20010000 | bt_random_n(4), bt_random(), bt_random(), bt_random()), ip6_mkmask(l6));
  fib_test_fill_net(n, type, a4, l4, a6, l6);
}

static int
key_cmp(const void *a, const void *b)
{ return net_compare(a, b); }

/* UNIVERSE random keys, duplicates dropped; returns their number */
static uint
make_keys(byte *keys, int type)
{
  for (uint i = 0; i < UNIVERSE; i++)
    rnd_net(KEY(keys, i), type);

  qsort(keys, UNIVERSE, KEY_SIZE, key_cmp);

  uint n = 0;
  for (uint i = 0; i < UNIVERSE; i++)
    if (!n || !net_equal(KEY(keys, i), KEY(keys, n - 1)))
      memmove(KEY(keys, n++), KEY(keys, i), KEY_SIZE);

  /* Shuffle, so that the insertion order is not the sort order */
  byte tmp[KEY_SIZE];
  for (uint i = n - 1; i > 0; i--)
  {
    uint j = bt_random_n(i + 1);
    memcpy(tmp, KEY(keys, i), KEY_SIZE);
    memcpy(KEY(keys, i), KEY(keys, j), KEY_SIZE);
    memcpy(KEY(keys, j), tmp, KEY_SIZE);
  }
  return n;
}

/* Longest present key covering @q (IP nets), by brute force */
static int
ref_route(byte *keys, byte *in, uint n, const net_addr *q)
{
  int best = -1;
  for (uint i = 0; i < n; i++)
    if (in[i] && net_in_netX(q, KEY(keys, i)) &&
	((best < 0) || (KEY(keys, i)->pxlen > KEY(keys, best)->pxlen)))
      best = i;
  return best;
}

/* The whole FIB against the key array */
static int
check_fib(struct fib *f, byte *keys, byte *in, uint n, int lpm)
{
  int ok = 1;
  byte *seen = tmp_allocz(n);

  if (f->rehash_old)
    (f->rehash_step > 0) ? seen_grow++ : seen_shrink++;

  /* Every chain holds its own hashes, and in order the chains are sorted */
  u32 last = 0;
  uint count = 0;
  for (uint c = 0; c < fib_chains(f); c++)
    for (struct fib_node *e = fib_chain(f, c); e; e = e->next)
    {
      u32 h = net_hash(e->addr);
      if ((fib_chain_index(f, h) != c) || (h < last))
	ok = 0;
      last = h;
      count++;
    }

  /* FIB_WALK() sees each present key once, and nothing else */
  uint walked = 0;
  FIB_WALK(f, struct test_node, tn)
  {
    if (!in[tn->pos] || seen[tn->pos] || !net_equal(tn->n.addr, KEY(keys, tn->pos)))
      ok = 0;
    seen[tn->pos] = 1;
    walked++;
  }
  FIB_WALK_END;

  if ((count != f->entries) || (walked != f->entries))
    ok = 0;

  for (uint i = 0; i < n; i++)
  {
    struct test_node *tn = fib_find(f, KEY(keys, i));
    if (in[i] ? (!tn || (tn->pos != (int) i) || !seen[i]) : !!tn)
      ok = 0;
  }

  for (uint k = 0; lpm && (k < 16); k++)
  {
    net_addr_union q;
    rnd_net(&q.n, f->addr_type);
    q.n.pxlen = net_max_prefix_length[f->addr_type];
    int r = ref_route(keys, in, n, &q.n);
    struct test_node *tn = fib_route(f, &q.n);
    if ((r < 0) ? !!tn : (!tn || (tn->pos != r)))
      ok = 0;
  }

  return ok;
}

/* One net type's keys, which of them are in, and the FIB under test */
struct test_set {
  pool *p;
  byte *keys, *in;
  uint n;
  struct fib f;
};

static void
set_new(struct test_set *s, int type)
{
  s->p = rp_new(&root_pool, "FIB rehash test");
  s->keys = mb_allocz(s->p, (size_t) UNIVERSE * KEY_SIZE);
  s->n = make_keys(s->keys, type);
  s->in = mb_allocz(s->p, s->n);
  fib_init(&s->f, s->p, type, sizeof(struct test_node), OFFSETOF(struct test_node, n), 0, NULL);
}

static void
set_free(struct test_set *s)
{
  fib_free(&s->f);
  rfree(s->p);
}

static void
test_init(void)
{
  bt_bird_init();
  config = config_alloc("");	/* ev_run_list() logs events by the configuration */
  fib_rehash_min_order = 10;
}

static void
test_done(void)
{
  fib_rehash_min_order = FIB_REHASH_MIN_ORDER;
  bt_bird_cleanup();
}

/* What a main loop does between reads: run the move event, or move some */
static void
move_some(struct fib *f)
{
  /* Mostly a few buckets, so that checks find rehashes in progress */
  uint r = bt_random_n(1024);
  if (r < 2)
    ev_run_list(&global_event_list);
  else if (r < 256)
    fib_rehash_move(f, 1 + bt_random_n(8));
}

static void
toggle(struct fib *f, byte *keys, byte *in, uint i)
{
  if (in[i])
    fib_delete(f, fib_find(f, KEY(keys, i)));
  else
    ((struct test_node *) fib_get(f, KEY(keys, i)))->pos = i;
  in[i] = !in[i];
}

static int
t_churn(void)
{
  test_init();
  seen_grow = seen_shrink = 0;

  /* With `bloom off', every rehash is incremental; left to the upkeep
     policy, the checks' misses build the filter and later ones are not */
  int ok = 1;
  for (uint t = 0; t < 2 * ARRAY_SIZE(all_types); t++)
  {
    int type = all_types[t % ARRAY_SIZE(all_types)];
    int lpm = (type == NET_IP4) || (type == NET_IP6);
    struct test_set ts;
    set_new(&ts, type);
    struct fib *f = &ts.f;
    byte *keys = ts.keys, *in = ts.in;
    uint n = ts.n;
    if (t < ARRAY_SIZE(all_types))
      fib_bloom_configure(f, &cf_off);

    /* Fill (31 of 32 operations insert), then drain (31 of 32 delete) */
    for (uint phase = 0; phase < 2; phase++)
      for (uint op = 0; op < 3 * n; op++)
      {
	uint i = bt_random_n(n);
	if (in[i] != (bt_random_n(32) ? !phase : phase))
	  toggle(f, keys, in, i);

	move_some(f);

	if (!(op % CHECK_EVERY) && !check_fib(f, keys, in, n, lpm))
	{
	  bt_debug("type %s: mismatch in phase %u at op %u\n", net_label[type], phase, op);
	  ok = 0;
	}
      }

    ok = ok && check_fib(f, keys, in, n, lpm);
    set_free(&ts);
  }

  bt_debug("checks during a rehash: %u growing, %u shrinking\n", seen_grow, seen_shrink);
  bt_assert_msg(seen_grow > 0, "no check ran while a FIB grew");
  bt_assert_msg(seen_shrink > 0, "no check ran while a FIB shrank");
  test_done();
  return ok;
}

/*
 * An iterator parked between slices, the FIB changed and its buckets moved
 * meanwhile: every key present throughout is visited exactly once, no key
 * twice, and in hash order (BIRD's guarantee for FIB_ITERATE_PUT()).
 */
static int
t_iterate(void)
{
  test_init();

  int ok = 1;
  uint moved_under = 0;
  for (uint t = 0; t < 2; t++)
  {
    int type = t ? NET_IP6 : NET_IP4;
    struct test_set ts;
    set_new(&ts, type);
    struct fib *f = &ts.f;
    byte *keys = ts.keys, *in = ts.in;
    uint n = ts.n;
    byte *start = mb_allocz(ts.p, n);
    byte *touched = mb_allocz(ts.p, n);
    uint *visits = mb_allocz(ts.p, n * sizeof(uint));

    /* Grow through the iteration (round 0), then shrink (round 1) */
    for (uint round = 0; round < 2; round++)
    {
      uint target = round ? n / 2 : 1500;
      for (uint i = 0; i < n; i++)
	if (in[i] != (i < target))
	  toggle(f, keys, in, i);

      memcpy(start, in, n);
      memset(touched, 0, n);
      memset(visits, 0, n * sizeof(uint));

      struct fib_iterator fit;
      u32 last = 0;
      FIB_ITERATE_INIT(&fit, f);

    again:
      {
	uint k = 0, slice = 1 + bt_random_n(40);
	FIB_ITERATE_START(f, &fit, struct test_node, tn)
	{
	  if (k++ == slice)
	  {
	    FIB_ITERATE_PUT(&fit);

	    /* Between slices: change the FIB (growing or shrinking), move buckets */
	    for (uint c = 0; c < 30; c++)
	    {
	      uint i = bt_random_n(n);
	      if (in[i] != (bt_random_n(10) ? !round : round))
	      {
		toggle(f, keys, in, i);
		touched[i] = 1;
	      }
	      move_some(f);
	    }
	    if (f->rehash_old)
	      moved_under++;
	    goto again;
	  }

	  u32 h = net_hash(tn->n.addr);
	  if (h < last)
	    ok = 0;
	  last = h;
	  visits[tn->pos]++;
	}
	FIB_ITERATE_END;
      }

      for (uint i = 0; i < n; i++)
	if ((visits[i] > 1) || (start[i] && !touched[i] && (visits[i] != 1)))
	{
	  bt_debug("%s round %u: key %u visited %u times\n", net_label[type], round, i, visits[i]);
	  ok = 0;
	}

      ok = ok && check_fib(f, keys, in, n, 1);
    }

    set_free(&ts);
  }

  bt_assert_msg(moved_under > 0, "no rehash was in progress while an iterator was parked");
  test_done();
  return ok;
}

/*
 * A filter activated in the middle of a rehash is built from both tables;
 * with it active, the next rehash finishes the one in progress and is done
 * at once (rebuilding the filter). No false negative on the way.
 */
static int
t_filter_during_rehash(void)
{
  test_init();

  int ok = 1;
  for (uint t = 0; t < 2; t++)
  {
    int type = t ? NET_IP6 : NET_IP4;
    struct test_set ts;
    set_new(&ts, type);
    struct fib *f = &ts.f;
    byte *keys = ts.keys, *in = ts.in;
    uint n = ts.n;

    /* Insert until a rehash of order 12 or more is half done */
    uint i = 0;
    while ((i < n) && !(f->rehash_old && (f->hash_order >= 12) && (f->rehash_pos >= f->rehash_old_size / 2)))
    {
      toggle(f, keys, in, i++);
      if (f->rehash_old && (f->rehash_pos < f->rehash_old_size / 2))
	fib_rehash_move(f, 1);
    }
    bt_assert_msg(f->rehash_old, "%s: no rehash in progress", net_label[type]);

    fib_bloom_pin(f, 1);
    bt_assert(fib_bloom_active(f->bloom));
    ok = ok && check_fib(f, keys, in, n, 1);

    /* The rest, with the filter active: rehashes are done at once */
    uint order = f->hash_order;
    for (; i < n; i++)
      toggle(f, keys, in, i);
    bt_assert_msg(f->hash_order > order, "%s: no rehash with the filter active", net_label[type]);
    bt_assert(!f->rehash_old);
    ok = ok && check_fib(f, keys, in, n, 1);

    set_free(&ts);
  }

  test_done();
  return ok;
}

int
main(int argc, char *argv[])
{
  bt_init(argc, argv);

  bt_test_suite(t_churn, "Random churn of every net type during incremental rehashes, up and down");
  bt_test_suite(t_iterate, "Parked iterators across moved buckets: each key once, in hash order");
  bt_test_suite(t_filter_during_rehash, "A filter built during a rehash, then one-shot rehashes");

  return bt_exit_value();
}
