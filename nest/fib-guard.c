/*
 *	bloombird -- Length guards of a FIB's longest-prefix walk
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Length guards
 *
 * A longest-prefix walk has many candidate lengths, and a filter test per
 * candidate costs a cache line each. The guards rule most of them out for
 * less: a head counter that says whether the query's region holds any
 * prefix at all, a mask of lengths per region for each band of eight
 * lengths, and for IPv4 the exact cover table of lengths below 16 (see
 * fib-guard.h). They are built with the filter, from the nodes, and kept
 * by every insert and delete; they may claim too many lengths (a sticky
 * counter, a length gone from a shared slot), never too few, so a walk
 * that trusts them finds every covering prefix.
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/fib-guard.h"

/* The slot of @a's own region in its band, NULL if the band has no masks */
static inline u16 *
band_slot(const struct fib_guards *g, const net_addr *a, int v6, u64 rdh)
{
  uint j = a->pxlen >> FIB_BAND_SHIFT;
  const struct fib_band *bd = &g->band[j];
  return bd->slot ? &bd->slot[fib_band_index(bd, j, (const void *) a, v6, rdh)] : NULL;
}

/* Set or clear @a's length in the entries of all the /16s it covers (for
 * nets without host bits: tables hold no others, rte_validate() rejects
 * them, but a FIB takes any) */
static void
cover_mark(u16 *cv, const net_addr *a, int on)
{
  uint len = a->pxlen;
  u32 n = 1U << (FIB_COVER_LENGTHS - len);
  u32 first = (ip4_to_u32(((const net_addr_ip4 *) a)->prefix) >> FIB_COVER_LENGTHS) & ~(n - 1);
  u16 bit = 1U << len;

  if (on)
    for (u32 i = 0; i < n; i++)
      cv[first + i] |= bit;
  else
    for (u32 i = 0; i < n; i++)
      cv[first + i] &= ~bit;
}

/* Does another node of @f have @a's prefix? (ROA tables: one node per ROA) */
static int
cover_shared(struct fib *f, const net_addr *a)
{
  if (f->addr_type != NET_ROA4)
    return 0;

  for (struct fib_node *e = *fib_slot(f, net_hash(a)); e; e = e->next)
    if ((e->addr != a) && net_equal_prefix_roa4((const void *) e->addr, (const void *) a))
      return 1;

  return 0;
}

static void
guard_init(struct fib *f, struct fib_guard *hd, uint len, u32 keys)
{
  uint bits = 8;
  while ((bits < 16) && ((1U << bits) < 4 * keys))
    bits++;

  hd->len = len;
  hd->bits = bits;
  hd->cnt = mb_allocz(f->fib_pool, sizeof(u16) << bits);
}

/*
 * Band @j gets masks if it holds prefixes: one slot per region for up to
 * 16-bit regions when there are at least as many keys as regions (IPv4 /8
 * and /16: exact, and no hash to compute), else hashed slots, half again as
 * many as keys, so that most slots hold one region, but at most 64K of
 * them (128 KB, a guard's size): a mask read that misses the L2 cache costs
 * more than the filter tests it saves, even though a capped band's slots
 * then share several regions each.
 */
static void
band_init(struct fib *f, struct fib_band *bd, uint j, u32 keys, int vpn)
{
  uint base = j << FIB_BAND_SHIFT;
  uint bits = 6;
  while ((bits < FIB_BAND_MAX_BITS) && ((1ULL << bits) < keys + keys / 2))
    bits++;

  bd->direct = !vpn && (base <= FIB_BAND_DIRECT) && (base <= bits);
  bd->bits = bd->direct ? base : bits;
  bd->slot = mb_allocz(f->fib_pool, sizeof(u16) << bd->bits);
}

/**
 * fib_guards_free - free the guards
 * @g: guards
 *
 * Frees the head guard, the cover table and every band's length masks,
 * and clears their descriptors, so that walks find no guards until
 * fib_guards_init() builds them again.
 */
void
fib_guards_free(struct fib_guards *g)
{
  if (g->head.cnt)
    mb_free(g->head.cnt);
  g->head = (struct fib_guard) {};

  if (g->cover)
    mb_free(g->cover);
  g->cover = NULL;

  for (uint j = 0; j < FIB_BANDS; j++)
  {
    if (g->band[j].slot)
      mb_free(g->band[j].slot);
    g->band[j] = (struct fib_band) {};
  }
}

/**
 * fib_guards_account - count a net in or out of the guards
 * @g: guards
 * @f: their FIB
 * @a: the net
 * @add: 1 for an insert, 0 for a delete
 *
 * Updates the head guard's counter, the cover table bit (for IPv4 lengths
 * below 16) or the length mask and count of the net's band slot. Counters
 * that saturate stay put, so a guard may claim too much but never too
 * little; nets of types without longest-prefix walks are ignored. Called
 * for every net the FIB gains or loses while it has guards, and for every
 * node when they are built.
 */
void
fib_guards_account(struct fib_guards *g, struct fib *f, const net_addr *a, int add)
{
  const net_addr_union *u = (const void *) a;
  int v6;
  u64 rdh;

  if (!fib_key_family(a, &v6, &rdh))
    return;

  struct fib_guard *hd = &g->head;
  if (hd->cnt && (a->pxlen >= hd->len))
  {
    u16 *c = &hd->cnt[fib_guard_index(hd, u, v6, rdh)];
    if (*c != 0xffff)		/* Sticky: may undercount, never drops to 0 */
    {
      ASSERT_DIE(add || (*c > 0));
      *c += add ? 1 : -1;
    }
  }

  /* A delete clears the cover bit only with the prefix's last node. A net
   * with host bits is left out: no walk's trimmed query can equal it, and
   * its delete must not clear the bit of the same prefix without them */
  if (g->cover && (a->pxlen < FIB_COVER_LENGTHS))
  {
    if (fib_key_canonical(a) && (add || !cover_shared(f, a)))
      cover_mark(g->cover, a, add);
    return;
  }

  u16 *sl = band_slot(g, a, v6, rdh);
  if (!sl)
    return;

  uint cnt = *sl >> 8;
  if (add)
  {
    *sl |= 1U << (a->pxlen & 7);
    if (cnt < FIB_BAND_CMAX)
      *sl += 0x100;
  }
  else if (cnt < FIB_BAND_CMAX)
  {
    ASSERT_DIE(cnt > 0);
    *sl = (cnt == 1) ? 0 : *sl - 0x100;	/* The last one out clears the mask */
  }
}

/**
 * fib_guards_init - size the guards of a FIB, empty
 * @g: guards (their old memory is freed)
 * @f: FIB
 * @l: its prefixes per length
 *
 * The head guard sits at the shortest used length (if it is at least
 * %FIB_GUARD_MIN_HEAD); every band of lengths holding prefixes gets its
 * length masks, except that an IPv4 FIB holding prefixes shorter than 16
 * gets the cover table for those instead of band 1's masks. All start
 * empty; the caller accounts every node (fib_guards_account()). (A prefix
 * shorter than 16 added after a build that found none has neither a cover
 * table nor band 1 masks: the lengths in use there are then all
 * candidates, until the next build.)
 */
void
fib_guards_init(struct fib_guards *g, struct fib *f, const struct fib_lengths *l)
{
  fib_guards_free(g);

  if (!net_val_match(f->addr_type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4 | NB_IP6 | NB_VPN6 | NB_ROA6 | NB_FLOW6))
    return;

  int head = fib_lengths_shortest(l);
  if (head < 0)
    return;

  /* At a short head (IPv4 /8) nearly every root is routed: not worth a guard */
  if (head >= FIB_GUARD_MIN_HEAD)
    guard_init(f, &g->head, head, f->entries);

  if (fib_cover_type(f->addr_type) && (l->map[0] & ((1U << FIB_COVER_LENGTHS) - 1)))
    g->cover = mb_allocz(f->fib_pool, sizeof(u16) << FIB_COVER_LENGTHS);

  /* Band 0 has a single region: the lengths in use say all there is */
  int vpn = net_val_match(f->addr_type, NB_VPN4 | NB_VPN6);
  for (uint j = g->cover ? (FIB_COVER_LENGTHS >> FIB_BAND_SHIFT) : 1; j < FIB_BANDS; j++)
  {
    u32 keys = 0;
    for (uint len = j << FIB_BAND_SHIFT; len < MIN((j + 1) << FIB_BAND_SHIFT, FIB_MAX_PXLEN + 1); len++)
      keys += l->count[len];

    /* fib_get() may rebuild with its new node linked but not yet counted */
    if (keys)
      band_init(f, &g->band[j], j, keys + 1, vpn);
  }
}

/**
 * fib_guards_valid - check that the guards admit every node
 * @g: guards
 * @f: their FIB
 *
 * For tests: every node's first bits have a non-zero head guard counter
 * (when its length is guarded) and its band's slot has its length set and
 * a non-zero count, and the cover table is exactly the one its nodes make
 * (no bit missing, none left over). Returns 1 if so (or without guards).
 */
int
fib_guards_valid(const struct fib_guards *g, struct fib *f)
{
  u16 *cv = g->cover ? mb_allocz(f->fib_pool, sizeof(u16) << FIB_COVER_LENGTHS) : NULL;
  int ok = 1;

  FIB_WALK(f, void, z)
  {
    const net_addr *a = fib_user_to_node(f, z)->addr;
    const net_addr_union *u = (const void *) a;
    int v6;
    u64 rdh;

    if (!fib_key_family(a, &v6, &rdh))
      continue;

    if (g->head.cnt && (a->pxlen >= g->head.len) && !g->head.cnt[fib_guard_index(&g->head, u, v6, rdh)])
      ok = 0;

    if (cv && (a->pxlen < FIB_COVER_LENGTHS))
    {
      if (fib_key_canonical(a))
	cover_mark(cv, a, 1);
      continue;
    }

    const u16 *sl = band_slot(g, a, v6, rdh);
    if (sl && (!(*sl & (1U << (a->pxlen & 7))) || !(*sl >> 8)))
      ok = 0;
  }
  FIB_WALK_END;

  if (cv)
  {
    ok &= !memcmp(cv, g->cover, sizeof(u16) << FIB_COVER_LENGTHS);
    mb_free(cv);
  }

  return ok;
}

/**
 * fib_guards_bands - number of bands with length masks
 * @g: guards
 *
 * For statistics and the tests.
 */
uint
fib_guards_bands(const struct fib_guards *g)
{
  uint n = 0;
  for (uint j = 0; j < FIB_BANDS; j++)
    n += !!g->band[j].slot;
  return n;
}

/**
 * fib_guards_size - memory of the guards in bytes
 * @g: guards
 *
 * Counts the head guard, the length masks and the cover table.
 */
uint
fib_guards_size(const struct fib_guards *g)
{
  uint sz = g->head.cnt ? (sizeof(u16) << g->head.bits) : 0;
  sz += g->cover ? (sizeof(u16) << FIB_COVER_LENGTHS) : 0;
  for (uint j = 0; j < FIB_BANDS; j++)
    if (g->band[j].slot)
      sz += sizeof(u16) << g->band[j].bits;
  return sz;
}
