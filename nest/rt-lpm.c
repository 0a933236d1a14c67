/*
 *	bloombird -- A routing table's own LPM engine
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Table LPM engines
 *
 * A table configured with `lpm engine <name>' keeps an LPM engine
 * (nest/lpm.h) beside its FIB. The engine holds exactly the nets whose best
 * route is valid (rte_is_valid()), each with a slot number that @slot maps
 * back to the net, so that net_route() - which returns the longest-prefix
 * net with a valid route, and serves `show route for', recursive next hops
 * (the hostcache) and flowspec validation - becomes one engine lookup.
 *
 * Keeping it exact: rte_announce() is where every change of a net's valid
 * best route passes (after rte_recalculate() and rt_next_hop_update_net()),
 * and it tells us when the valid best route appears or goes. A net keeps
 * its slot while it has a valid best route, whichever route that is; the
 * slot is freed when the net leaves the engine, before BIRD may prune the
 * net itself. A whole build (configuration, retry after a failure) walks the
 * FIB once.
 *
 * Answers: for an address (a net of full length) the engine's answer is
 * the answer. For a shorter net the engine looks up its first address; a
 * covering net no longer than the query is the answer, and no covering net
 * at all means none; a longer one (it covers the address but not the whole
 * query) is left to the filter path. A ROA table's engine holds its ROA
 * prefixes instead and answers net_roa_check() (rt-lpm-roa.c). Tables of
 * other types are refused in the configuration.
 *
 * Memory exhaustion: an engine update that fails leaves the engine as it
 * was; the table then stops asking it (the filter path answers, exactly),
 * logs that, and an event retries a whole build into a fresh engine.
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/lpm.h"
#include "nest/rt-lpm.h"
#include "lib/event.h"
#include "lib/timer.h"
#include "lib/resource.h"
#include "lib/string.h"

/**
 * rt_lpm_config_default - default engine configuration of a table
 * @c: configuration to fill
 *
 * No engine, and the batch lookup variant chosen automatically.
 */
void
rt_lpm_config_default(struct rt_lpm_config *c)
{
  *c = (struct rt_lpm_config) { .class = NULL, .variant = LPM_VAR_AUTO };
}

/**
 * rt_lpm_config_same - whether two engine configurations are equal
 * @a: one configuration
 * @b: the other
 *
 * Compares the engine class, the variant and the levels; returns 1 if all
 * three are the same.
 */
int
rt_lpm_config_same(const struct rt_lpm_config *a, const struct rt_lpm_config *b)
{
  return (a->class == b->class) && (a->variant == b->variant) && (a->levels == b->levels);
}

static void
rt_lpm_stop(struct rt_lpm *l)
{
  if (l->e)
    lpm_free(l->e);
  l->e = NULL;
  rfree(l->pool);
}

static void
rt_lpm_slot_set(struct rt_lpm *l, u32 id, net *n)
{
  if (id >= l->slots)
  {
    u32 size = MAX(l->slots * 2, MAX(id + 1, 1024));
    l->slot = l->slot ? mb_realloc(l->slot, size * sizeof(net *)) : mb_alloc(l->pool, size * sizeof(net *));
    memset(l->slot + l->slots, 0, (size - l->slots) * sizeof(net *));
    l->slots = size;
  }
  l->slot[id] = n;
}

/* An IP table's engine: every net with a valid best route, in a slot of its own */
static int
rt_lpm_build_ip(struct rt_lpm *l)
{
  rtable *tab = l->tab;
  idm_init(&l->ids, l->pool, 1024);
  if (l->slot)
    memset(l->slot, 0, l->slots * sizeof(net *));

  uint cnt = 0, cap = MAX(tab->fib.entries, 1);
  struct lpm_route *r = mb_alloc(l->pool, cap * sizeof(struct lpm_route));

  FIB_WALK(&tab->fib, net, n)
  {
    if (!rte_is_valid(n->routes))
      continue;

    u32 id = idm_alloc(&l->ids);
    rt_lpm_slot_set(l, id, n);
    net_copy(&r[cnt].n.n, n->n.addr);
    r[cnt].value = id;
    cnt++;
  }
  FIB_WALK_END;

  int rv = lpm_build(l->e, r, cnt);
  mb_free(r);
  return (rv < 0) ? -1 : 0;
}

/* A fresh engine with the table's contents; NULL on failure */
static struct lpm_engine *
rt_lpm_build(struct rt_lpm *l)
{
  rtable *tab = l->tab;
  struct lpm_params par = { .variant = l->cf.variant, .levels = l->cf.levels };
  int roa = net_val_match(tab->addr_type, NB_ROA);
  uint type = !roa ? tab->addr_type : (tab->addr_type == NET_ROA4) ? NET_IP4 : NET_IP6;

  btime t0 = current_time();
  if (!(l->e = lpm_new(l->pool, l->cf.class, type, &par)))
    return NULL;

  if ((roa ? rt_lpm_roa_build(l) : rt_lpm_build_ip(l)) < 0)
  {
    lpm_free(l->e);
    return l->e = NULL;
  }

  l->built = current_time();
  l->build_time = l->built - t0;
  return l->e;
}

static void rt_lpm_rebuild(void *data);

/**
 * rt_lpm_configure - set up, rebuild or drop a table's engine
 * @tab: table
 * @cf: the engine part of the table's configuration
 *
 * Called from rt_setup() and rt_reconfigure(). An unchanged configuration
 * keeps the engine as it is; a changed one builds a new engine from the
 * table (the old one answers until the new one is complete); `off' drops it.
 */
void
rt_lpm_configure(rtable *tab, const struct rt_lpm_config *cf)
{
  struct rt_lpm *old = tab->lpm;

  /* Not an engine's: a ROA table's FIB keeps a ROA index with its filter */
  fib_bloom_roa_attach(&tab->fib);

  if (old && rt_lpm_config_same(&old->cf, cf) && !old->stale)
    return;

  if (!cf->class)
  {
    if (old)
      rt_lpm_stop(old);
    tab->lpm = NULL;
    rt_lpm_sync_walk(tab);
    return;
  }

  pool *p = rp_newf(tab->rp, "LPM engine %s of %s", cf->class->name, tab->name);
  struct rt_lpm *l = mb_allocz(p, sizeof(struct rt_lpm));
  l->tab = tab;
  l->pool = p;
  l->cf = *cf;
  l->rebuild = ev_new_init(p, rt_lpm_rebuild, l);

  if (!(l->e = rt_lpm_build(l)))
  {
    log(L_ERR "Table %s: cannot build its %s LPM engine (out of memory), %s",
	tab->name, cf->class->name, old ? "the previous one stays" : "lookups go the usual way");
    rfree(p);
    if (old)
      old->failures++;
    return;
  }

  if (old)
  {
    l->updates = old->updates;
    l->failures = old->failures;
    rt_lpm_stop(old);
  }

  tab->lpm = l;
  rt_lpm_sync_walk(tab);
}

/**
 * rt_lpm_sync_walk - say whether lookups walk the table's trie at once
 * @tab: table whose trie or engine changed
 *
 * net_route() of an IP table and net_roa_check() of a ROA table with a
 * trie and no engine are stock's trie walks (measured cheaper than any
 * filter walk, see fib-lpm.c), and they should not pay tests per call to
 * find that out: @trie_walk is the trie then, else NULL, and its one test
 * replaces stock's test of @trie. Called wherever @lpm or @trie changes
 * (rt_lpm_configure(), the trie rebuild in rt_prune_table(), the engine
 * benchmark).
 */
void
rt_lpm_sync_walk(rtable *tab)
{
  int walk = net_val_match(tab->addr_type, NB_IP | NB_ROA);
  tab->trie_walk = (tab->trie && !tab->lpm && walk) ? tab->trie : NULL;
}

static void
rt_lpm_rebuild(void *data)
{
  struct rt_lpm *l = data;
  rtable *tab = l->tab;
  struct rt_lpm_config cf = l->cf;

  rt_lpm_configure(tab, &cf);
  if (tab->lpm != l)
    log(L_INFO "Table %s: LPM engine rebuilt after a failed update", tab->name);
}

static void
rt_lpm_fail(struct rt_lpm *l, const net_addr *n)
{
  l->failures++;
  if (l->stale)
    return;

  l->stale = 1;
  log(L_ERR "Table %s: LPM engine out of memory at %N; lookups go the usual way until it is rebuilt",
      l->tab->name, n);
  ev_schedule(l->rebuild);
}

/**
 * rt_lpm_net_changed - a net's valid best route appeared or went
 * @tab: table
 * @n: the net
 * @valid: it has a valid best route now (and had none), or the reverse
 *
 * Called from rte_announce() while RT_LPM_TRACKING(): for the ROA index of
 * the table's FIB (fib-roa.c) and for its engine.
 */
void
rt_lpm_net_changed(rtable *tab, net *n, int valid)
{
  fib_bloom_roa_changed(&tab->fib, n->n.addr, valid);

  struct rt_lpm *l = tab->lpm;
  if (!l || l->stale)
    return;

  u32 old;
  l->updates++;

  if (l->roa)
  {
    if (rt_lpm_roa_net_changed(l, n, valid) < 0)
      rt_lpm_fail(l, n->n.addr);
    return;
  }

  if (valid)
  {
    u32 id = idm_alloc(&l->ids);
    if (lpm_update(l->e, n->n.addr, id, &old) < 0)
    {
      idm_free(&l->ids, id);
      rt_lpm_fail(l, n->n.addr);
      return;
    }

    rt_lpm_slot_set(l, id, n);

    /* Already held (should not happen): keep one slot */
    if (old != LPM_NONE)
    {
      idm_free(&l->ids, old);
      l->slot[old] = NULL;
    }
  }
  else
  {
    if (lpm_remove(l->e, n->n.addr, &old) < 0)
    {
      rt_lpm_fail(l, n->n.addr);
      return;
    }

    if (old != LPM_NONE)
    {
      idm_free(&l->ids, old);
      l->slot[old] = NULL;
    }
  }
}

/**
 * rt_lpm_route - net_route() through the table's engine
 * @tab: table
 * @n: net asked about
 * @done: set to 1 when the answer is the engine's (not for a net out of
 * its length range or with host bits set, fib_key_canonical(): stock's
 * paths answer those)
 */
net *
rt_lpm_route(rtable *tab, const net_addr *n, int *done)
{
  struct rt_lpm *l = tab->lpm;
  *done = 0;

  if (!l || l->stale || (n->type != tab->addr_type) || !net_is_ip(n) ||
      (n->pxlen > net_max_prefix_length[n->type]) || !fib_key_canonical(n))
    return NULL;

  u32 v = (n->type == NET_IP4) ?
    lpm_lookup4(l->e, net4_prefix(n)) :
    lpm_lookup6(l->e, net6_prefix(n));

  /* An address needs no length check (and so no look at the net) */
  net *r = (v == LPM_NONE) ? NULL : l->slot[v];
  if (r && (n->pxlen < net_max_prefix_length[n->type]) && (r->n.addr->pxlen > n->pxlen))
  {
    l->fallbacks++;
    return NULL;
  }

  l->lookups++;
  *done = 1;
  return r;
}
