/*
 *	bloombird -- LPM exporter: the next-hop table
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: LPM exporter next-hop table
 *
 * Engines map a prefix to a 32-bit value; the exporter makes that value
 * an index into a table of next-hop sets (&lpmx_nh: a kind, and up to
 * %LPMX_PATHS gateway/interface/weight paths), so that a full table of a
 * million prefixes shares the few thousand distinct sets its routes have.
 * Entries are keyed by their bytes (a key's paths are zeroed before they
 * are filled, so equal sets are equal bytes; only the paths in use are
 * hashed and compared), found through a hash, and counted: an
 * entry lives while prefixes refer to it.
 *
 * The table itself lives in the exporter region, which readers in other
 * processes map. An entry is written completely before its index is
 * handed out (the engine then links it with release stores), and it is
 * never written again while referenced. An entry whose last reference
 * went is retired with the writer's current tick number and reused only
 * after a later tick has bumped the reuse seqlock (lpmx_nh_reclaim(),
 * proto/lpm/lpm-shm.c explains why that is enough).
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/iface.h"
#include "lib/hash.h"
#include "lib/resource.h"
#include "lib/string.h"

#include "proto/lpm/lpm.h"

#define LPMX_NH_NIL	0xffffffffU

/**
 * lpmx_nh_init - set up an empty next-hop table
 * @t: table
 * @p: pool for the writer's bookkeeping
 * @reg: the exporter region
 * @nh: the entries (in @reg, zeroed)
 * @max: entries @nh holds
 */
void
lpmx_nh_init(struct lpmx_nht *t, pool *p, struct lpm_region *reg, struct lpmx_nh *nh, u32 max)
{
  memset(t, 0, sizeof(*t));
  t->nh = nh;
  t->reg = reg;
  t->max = max;
  t->refs = mb_allocz(p, max * sizeof(u32));
  t->next = mb_alloc(p, max * sizeof(u32));
  t->tag = mb_alloc(p, max * sizeof(u64));
  t->free = mb_alloc(p, max * sizeof(u32));
  t->limbo = mb_alloc(p, max * sizeof(u32));
  t->order = u32_log2(max);
  t->hash = mb_alloc(p, (1U << t->order) * sizeof(u32));
  memset(t->hash, 0xff, (1U << t->order) * sizeof(u32));
}

/* The bytes of a set that matter: the header and the paths in use (the
 * rest is zero in a key; a whole entry is 328 bytes, a typical key 48) */
static inline uint
lpmx_nh_size(const struct lpmx_nh *k)
{
  return OFFSETOF(struct lpmx_nh, path) + k->paths * sizeof(struct lpmx_path);
}

static inline uint
lpmx_nh_slot(const struct lpmx_nht *t, const struct lpmx_nh *k)
{
  return mem_hash(k, lpmx_nh_size(k)) >> (32 - t->order);
}

/*
 * Entries are written where no entry was before only once their pages are
 * reserved in the region (a shared region's full file system would
 * otherwise kill bird with SIGBUS at the write).
 */
static int
lpmx_nh_grow(struct lpmx_nht *t)
{
  size_t off = (byte *) t->nh - (byte *) t->reg->base;
  if (lpm_region_reserve(t->reg, off + (t->used + 1) * sizeof(struct lpmx_nh)) < 0)
    return -1;

  t->avail = MIN(t->max, (t->reg->reserved - off) / sizeof(struct lpmx_nh));
  return 0;
}

/**
 * lpmx_nh_get - the entry of a next-hop set, with one more reference
 * @t: table
 * @k: the set, zeroed before it was filled
 *
 * Returns the entry's index, -1 when the table is full, or -2 when the
 * region cannot grow (@t->reg->reserve_errno says why).
 */
int
lpmx_nh_get(struct lpmx_nht *t, const struct lpmx_nh *k)
{
  uint size = lpmx_nh_size(k);
  uint h = lpmx_nh_slot(t, k);

  /* Equal headers mean equal path counts, so @size bytes decide */
  for (u32 i = t->hash[h]; i != LPMX_NH_NIL; i = t->next[i])
    if (!memcmp(&t->nh[i], k, size))
    {
      t->refs[i]++;
      return i;
    }

  u32 i;
  if (t->nfree)
    i = t->free[--t->nfree];
  else if (t->used < t->max)
  {
    if ((t->used >= t->avail) && (lpmx_nh_grow(t) < 0))
      return -2;
    i = t->used++;
  }
  else
    return -1;

  /* Complete before anyone can get the index */
  memcpy(&t->nh[i], k, size);
  memset((byte *) &t->nh[i] + size, 0, sizeof(struct lpmx_nh) - size);
  atomic_thread_fence(memory_order_release);

  t->refs[i] = 1;
  t->next[i] = t->hash[h];
  t->hash[h] = i;
  t->live++;
  return i;
}

/**
 * lpmx_nh_put - drop one reference
 * @t: table
 * @i: entry index
 * @tick: the writer's current tick number (the entry's retirement tag)
 */
void
lpmx_nh_put(struct lpmx_nht *t, u32 i, u64 tick)
{
  ASSERT(i < t->used && t->refs[i]);
  if (--t->refs[i])
    return;

  uint h = lpmx_nh_slot(t, &t->nh[i]);
  u32 *pp = &t->hash[h];
  while (*pp != i)
    pp = &t->next[*pp];
  *pp = t->next[i];

  /* Readers may still hold the index: the contents stay until reclaimed */
  t->tag[i] = tick;
  t->limbo[t->nlimbo++] = i;
  t->live--;
}

/**
 * lpmx_nh_reclaim - make retired entries reusable
 * @t: table
 * @tick: the tick number just started (after its reuse_seq bump)
 *
 * Entries retired before @tick become free. Retirement tags grow along
 * the limbo list.
 */
void
lpmx_nh_reclaim(struct lpmx_nht *t, u64 tick)
{
  u32 j = 0;
  while ((j < t->nlimbo) && (t->tag[t->limbo[j]] < tick))
  {
    u32 i = t->limbo[j++];
    t->nh[i].dest = 0;
    t->free[t->nfree++] = i;
  }

  memmove(t->limbo, t->limbo + j, (t->nlimbo - j) * sizeof(u32));
  t->nlimbo -= j;
}

/**
 * lpmx_nh_key - the next-hop set of a route
 * @k: key to fill
 * @a: the route's attributes
 *
 * Returns 0, or -1 when the set cannot be represented: more than
 * %LPMX_PATHS paths, MPLS labels, or no destination.
 */
int
lpmx_nh_key(struct lpmx_nh *k, const rta *a)
{
  /* Zeroed as far as it will be used (lpmx_nh_size()) */
  k->dest = k->paths = 0;

  switch (a->dest)
  {
  case RTD_BLACKHOLE:
  case RTD_UNREACHABLE:
  case RTD_PROHIBIT:
    k->dest = a->dest;
    return 0;

  case RTD_UNICAST:
    break;

  default:
    return -1;
  }

  k->dest = LPMX_UNICAST;
  for (const struct nexthop *nh = &a->nh; nh; nh = nh->next)
  {
    if ((k->paths == LPMX_PATHS) || nh->labels || !nh->iface)
      return -1;

    struct lpmx_path *q = &k->path[k->paths++];
    memset(q, 0, sizeof(*q));
    if (ipa_nonzero(nh->gw))
    {
      ip6_addr g = ipa_to_ip6(nh->gw);
      memcpy(q->gw, g.addr, sizeof(q->gw));
      q->gw_family = ipa_is_ip4(nh->gw) ? 4 : 6;
    }
    q->ifindex = nh->iface->index;
    q->weight = nh->weight;
    q->onlink = !!(nh->flags & RNF_ONLINK);
    strncpy(q->ifname, nh->iface->name, LPMX_IFNAME - 1);
  }

  /* A single path has no weight to speak of */
  if (k->paths == 1)
    k->path[0].weight = 0;

  return 0;
}
