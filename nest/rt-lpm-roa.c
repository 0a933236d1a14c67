/*
 *	bloombird -- ROA checks through a ROA table's LPM engine
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: ROA tables with an LPM engine
 *
 * RFC 6483 validation of a route asks for every ROA whose prefix covers the
 * route's prefix. Stock net_roa_check() looks for them at every length from
 * the route's down to 0 (a FIB chain per length, or the lengths its trie
 * holds); the FIB's filter rules lengths out, but a real VRP set has ROAs
 * of nearly every length from /8 to /24, so most are still tried.
 *
 * A ROA table configured with `lpm engine <name>' keeps instead one
 * &rt_lpm_roa_group per distinct ROA prefix (prefix and length) that has at
 * least one ROA with a valid route, holding the max length and origin of
 * each of those ROAs, and an LPM engine of those prefixes whose value is the
 * group's number. One engine lookup of the route's first address finds the
 * longest ROA prefix covering it; no answer means no covering ROA at all
 * (unknown, the most common verdict at a route server). From there each
 * group points to the closest group that covers it (@up): the groups no
 * longer than the route, followed upwards, are exactly the ROA prefixes
 * covering the route, and their ROAs decide as stock's loop does (valid if
 * one matches the origin and allows the length, else invalid if there is
 * any, else unknown) without a FIB chain or a net being touched.
 *
 * The ROAs of a group change in rte_announce() (rt_lpm_net_changed()), so
 * they are always those with a valid route. @up is found when asked (a hash
 * probe per shorter length that has groups, longest first) and kept until a
 * group appears or goes anywhere in the table (@gen): ROA sets change
 * rarely and in bursts, lookups come all the time.
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/lpm.h"
#include "nest/rt-lpm.h"
#include "lib/hash.h"
#include "lib/resource.h"

/* A distinct ROA prefix with ROAs that have a valid route */
struct rt_lpm_roa_group {
  struct rt_lpm_roa_group *next;	/* In the hash */
  struct rt_lpm_roa_group *up;		/* The closest covering group, if @gen is current */
  u32 gen;
  u32 id;				/* Its value in the engine */
  u32 nets, cap;			/* Its ROAs with a valid route; room in @many */
  union {
    u64 one;				/* @nets == 1 and !@many: the ROA */
    u64 *many;				/* Otherwise: @nets ROAs */
  };
  net_addr n;				/* The prefix, as an ipv4 or ipv6 net */
};

/* A ROA of a group: origin and max length */
#define RLR_ROA(asn, max)	(((u64) (asn) << 8) | (max))
#define RLR_ROA_ASN(e)		((u32) ((e) >> 8))
#define RLR_ROA_MAX(e)		((uint) ((e) & 0xff))

#define RLR_KEY(g)		(&(g)->n)
#define RLR_NEXT(g)		(g)->next
#define RLR_EQ(a, b)		net_equal(a, b)
#define RLR_FN(k)		net_hash(k)
#define RLR_ORDER		12
#define RLR_REHASH		rt_lpm_roa_rehash
#define RLR_PARAMS		/8, *2, 2, 2, 12, 26

HASH_DEFINE_REHASH_FN(RLR, struct rt_lpm_roa_group)

/*
 * The ipv4 or ipv6 net of a ROA's prefix; 0 for a prefix with host bits set
 * (BIRD validates them away; were one to come, stock's loop, which trims
 * the route's prefix and compares, would never match it: left out alike)
 */
static inline int
rt_lpm_roa_key(net_addr *k, const net_addr *roa)
{
  if (roa->type == NET_ROA4)
  {
    ip4_addr a = ((const net_addr_roa4 *) roa)->prefix;
    net_fill_ip4(k, a, roa->pxlen);
    return ip4_equal(a, ip4_and(a, ip4_mkmask(roa->pxlen)));
  }
  else
  {
    ip6_addr a = ((const net_addr_roa6 *) roa)->prefix;
    net_fill_ip6(k, a, roa->pxlen);
    return ip6_equal(a, ip6_and(a, ip6_mkmask(roa->pxlen)));
  }
}

/* The group index of a ROA table's engine, empty */
static struct rt_lpm_roa *
rt_lpm_roa_new(pool *p)
{
  struct rt_lpm_roa *r = mb_allocz(p, sizeof(struct rt_lpm_roa));
  r->pool = p;
  r->slab = sl_new(p, sizeof(struct rt_lpm_roa_group));
  HASH_INIT(r->hash, p, RLR_ORDER);
  idm_init(&r->ids, p, 1024);
  r->gen = 1;
  return r;
}

/* Every covering link must be found again: a group appeared or went */
static void
rt_lpm_roa_changed(struct rt_lpm_roa *r)
{
  if (++r->gen)
    return;

  /* Wrapped around: no covering link may look current by chance */
  HASH_WALK(r->hash, next, g)
    g->gen = 0;
  HASH_WALK_END;
  r->gen = 1;
}

/* The group of prefix @k, created if it has none */
static struct rt_lpm_roa_group *
rt_lpm_roa_get(struct rt_lpm_roa *r, const net_addr *k)
{
  struct rt_lpm_roa_group *g = HASH_FIND(r->hash, RLR, k);
  if (g)
    return g;

  g = sl_allocz(r->slab);
  net_copy(&g->n, k);
  g->id = idm_alloc(&r->ids);

  if (g->id >= r->ids_max)
  {
    u32 size = MAX(r->ids_max * 2, MAX(g->id + 1, 1024));
    r->group = r->group ? mb_realloc(r->group, size * sizeof(void *)) : mb_alloc(r->pool, size * sizeof(void *));
    memset(r->group + r->ids_max, 0, (size - r->ids_max) * sizeof(void *));
    r->ids_max = size;
  }

  r->group[g->id] = g;
  HASH_INSERT2(r->hash, RLR, r->pool, g);
  r->len_groups[k->pxlen]++;
  rt_lpm_roa_changed(r);
  return g;
}

static void
rt_lpm_roa_free(struct rt_lpm_roa *r, struct rt_lpm_roa_group *g)
{
  if (g->cap)
    mb_free(g->many);

  HASH_REMOVE2(r->hash, RLR, r->pool, g);
  r->group[g->id] = NULL;
  idm_free(&r->ids, g->id);
  r->len_groups[g->n.pxlen]--;
  sl_free(g);
  rt_lpm_roa_changed(r);
}

/* The ROAs of @g: one inline, more in an array */
static inline const u64 *
rt_lpm_roa_entries(const struct rt_lpm_roa_group *g)
{
  return g->cap ? g->many : &g->one;
}

/* @g gets ROA @e; returns the number of its ROAs before */
static u32
rt_lpm_roa_add(struct rt_lpm_roa *r, struct rt_lpm_roa_group *g, u64 e)
{
  if (!g->nets && !g->cap)
    g->one = e;
  else
  {
    if (g->nets >= g->cap)
    {
      u32 cap = MAX(4, g->cap * 2);
      u64 *m = mb_alloc(r->pool, cap * sizeof(u64));
      memcpy(m, rt_lpm_roa_entries(g), g->nets * sizeof(u64));
      if (g->cap)
	mb_free(g->many);
      g->many = m;
      g->cap = cap;
    }
    g->many[g->nets] = e;
  }

  return g->nets++;
}

/* @g loses ROA @e (kept in any order); returns the number of its ROAs left */
static u32
rt_lpm_roa_del(struct rt_lpm_roa_group *g, u64 e)
{
  u64 *m = g->cap ? g->many : &g->one;
  for (u32 i = 0; i < g->nets; i++)
    if (m[i] == e)
    {
      m[i] = m[--g->nets];
      break;
    }

  return g->nets;
}

/* The origin and max length of a ROA net */
static inline u64
rt_lpm_roa_of(const net_addr *roa)
{
  if (roa->type == NET_ROA4)
    return RLR_ROA(((const net_addr_roa4 *) roa)->asn, ((const net_addr_roa4 *) roa)->max_pxlen);
  else
    return RLR_ROA(((const net_addr_roa6 *) roa)->asn, ((const net_addr_roa6 *) roa)->max_pxlen);
}

/**
 * rt_lpm_roa_build - a whole build of a ROA table's engine
 * @l: the table's engine state, with a fresh engine in @l->e
 *
 * Groups the ROA nets that have a valid route by prefix and builds the
 * engine from the groups. Returns 0, or -1 when the engine ran out of memory.
 */
int
rt_lpm_roa_build(struct rt_lpm *l)
{
  rtable *tab = l->tab;
  struct rt_lpm_roa *r = l->roa = rt_lpm_roa_new(l->pool);

  FIB_WALK(&tab->fib, net, n)
  {
    net_addr k;
    if (rte_is_valid(n->routes) && rt_lpm_roa_key(&k, n->n.addr))
      rt_lpm_roa_add(r, rt_lpm_roa_get(r, &k), rt_lpm_roa_of(n->n.addr));
  }
  FIB_WALK_END;

  uint cnt = 0;
  struct lpm_route *rt = mb_alloc(l->pool, MAX(r->hash.count, 1) * sizeof(struct lpm_route));
  HASH_WALK(r->hash, next, g)
  {
    net_copy(&rt[cnt].n.n, &g->n);
    rt[cnt].value = g->id;
    cnt++;
  }
  HASH_WALK_END;

  int rv = lpm_build(l->e, rt, cnt);
  mb_free(rt);
  return (rv < 0) ? -1 : 0;
}

/**
 * rt_lpm_roa_net_changed - a ROA net's valid route appeared or went
 * @l: the table's engine state
 * @n: the ROA net
 * @valid: it has a valid route now (and had none), or the reverse
 *
 * The first ROA of a prefix puts the prefix into the engine, its last one
 * takes it out. Returns 0, or -1 when the engine ran out of memory (the
 * caller marks the engine stale; the index is dropped with it).
 */
int
rt_lpm_roa_net_changed(struct rt_lpm *l, net *n, int valid)
{
  struct rt_lpm_roa *r = l->roa;
  u64 e = rt_lpm_roa_of(n->n.addr);
  net_addr k;
  u32 old;

  if (!rt_lpm_roa_key(&k, n->n.addr))
    return 0;

  if (valid)
  {
    struct rt_lpm_roa_group *g = rt_lpm_roa_get(r, &k);
    if (rt_lpm_roa_add(r, g, e))
      return 0;

    return (lpm_update(l->e, &g->n, g->id, &old) < 0) ? -1 : 0;
  }

  struct rt_lpm_roa_group *g = HASH_FIND(r->hash, RLR, &k);
  if (!g || rt_lpm_roa_del(g, e))
    return 0;

  int rv = lpm_remove(l->e, &g->n, &old);
  rt_lpm_roa_free(r, g);
  return (rv < 0) ? -1 : 0;
}

/* The closest group covering @g, found again if a group appeared or went */
static inline struct rt_lpm_roa_group *
rt_lpm_roa_up(struct rt_lpm_roa *r, struct rt_lpm_roa_group *g)
{
  if (g->gen == r->gen)
    return g->up;

  g->up = NULL;
  net_addr k;
  net_copy(&k, &g->n);
  for (int len = g->n.pxlen - 1; len >= 0; len--)
    if (r->len_groups[len])
    {
      k.pxlen = len;
      net_normalize(&k);
      if (g->up = HASH_FIND(r->hash, RLR, &k))
	break;
    }

  g->gen = r->gen;
  r->ups++;
  return g->up;
}

/**
 * rt_lpm_roa_check - net_roa_check() through a ROA table's engine
 * @tab: ROA table
 * @n: IP network to check
 * @asn: origin AS, 0 if unknown
 * @done: set to 0 when the engine cannot answer (no engine, stale, a net
 * of the other family, out of its length range or with host bits set,
 * fib_key_canonical()): the stock paths answer
 *
 * Returns ROA_VALID, ROA_INVALID or ROA_UNKNOWN, as stock does.
 */
int
rt_lpm_roa_check(rtable *tab, const net_addr *n, u32 asn, int *done)
{
  struct rt_lpm *l = tab->lpm;
  int v4 = (tab->addr_type == NET_ROA4) && (n->type == NET_IP4);
  int v6 = (tab->addr_type == NET_ROA6) && (n->type == NET_IP6);
  *done = 0;

  if (!l || l->stale || !l->roa || (!v4 && !v6) || (n->pxlen > net_max_prefix_length[n->type]) ||
      !fib_key_canonical(n))
    return ROA_UNKNOWN;

  struct rt_lpm_roa *r = l->roa;
  u32 v = v4 ? lpm_lookup4(l->e, net4_prefix(n)) : lpm_lookup6(l->e, net6_prefix(n));

  *done = 1;
  l->lookups++;
  if (v == LPM_NONE)
    return ROA_UNKNOWN;

  /* The longest ROA prefix covering the address may be longer than @n */
  struct rt_lpm_roa_group *g = r->group[v];
  while (g && (g->n.pxlen > n->pxlen))
    g = rt_lpm_roa_up(r, g);

  if (!g)
    return ROA_UNKNOWN;

  /* Every group from there up covers @n and has ROAs: valid or invalid */
  if (asn)
    for (; g; g = rt_lpm_roa_up(r, g))
    {
      const u64 *e = rt_lpm_roa_entries(g);
      for (u32 i = 0; i < g->nets; i++)
	if ((RLR_ROA_ASN(e[i]) == asn) && (RLR_ROA_MAX(e[i]) >= n->pxlen))
	  return ROA_VALID;
    }

  return ROA_INVALID;
}
