/*
 *	bloombird -- The simd LPM engine: a state-jump table
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: simd LPM engine (state-jump table)
 *
 * Lookups. The table is a state-jump table in the manner of Spider and
 * GAMT: a direct root table indexed by the first bits of the address,
 * then rows indexed by the following bits, level by level (layout in
 * nest/lpm-simd.h). Values are leaf-pushed, so a lookup never backtracks:
 * it reads one element per level and stops at the first leaf. Every
 * element is one 4-byte unit holding either a row link or an answer, so
 * each step is one load (one gather lane), and a lane that has finished
 * simply drops out of the gather mask. Row links are element indices into
 * one never-moving &lpm_region, so lookup memory holds no pointers and
 * can be read through a &simd_view from anywhere.
 *
 * Stride plans, chosen by measurement on the real tier-1 tables (`lpmtool
 * plans' prints memory and speed of any plan; docs/results/lpm-engines.md has the
 * figures). IPv4: a 20-bit root, 4-bit rows to /24, 8-bit rows to /32.
 * Spider's 16-8-8 spends a 256-element row on every /16 holding a longer
 * prefix, and values here are per prefix, so those rows are mostly copies
 * of a few covering answers: 20-4-8 needs about half the memory at the
 * same two loads for a /24 and the same batch speed (a 4-bit row is one
 * cache line; the 4 MB root stays in the L3 cache).
 * IPv6: 20, 4, 8 to /32, then 6, 5, 5 to /48, then 8-bit rows: the tier-1
 * table has most prefixes at /32-/48, thinly spread, so 8-bit rows there
 * would be mostly copies, while the 6-5-5 split costs one more load for
 * the deepest prefixes and keeps the table well inside the 32 MB target;
 * of the plans within that target it measured fastest for addresses
 * inside prefixes.
 * simd_new_plan() takes any plan whose levels do not cross a 32-bit word.
 *
 * Route aggregation. A row whose elements are all the same answer is not
 * kept: the element above it holds that answer. The control side keeps
 * the node (its owners, its children), so a later update can give it a row
 * again.
 *
 * Control side (the writer only). A multibit trie with the lookup strides:
 * one &simd_node per row that exists or could exist, with, per element, the
 * length of the prefix that supplied its value (its owner), a bitmap and
 * array of child nodes, and the row it has in lookup memory (none when
 * aggregated). Prefixes themselves, with their values, are in a hash table.
 * Owners turn an update into the minimal set of element writes, GAMT-style:
 * adding or replacing P/L writes the elements in P's range whose owner is
 * not longer than L, and in child rows the elements they inherited;
 * removing P/L gives the elements P owned to the next covering prefix (one
 * look in the hash for each length between the node's depth and L, or the
 * owner the node inherited). Nodes are processed depth first; a node whose
 * elements have become equal loses its row, a node that has no row and
 * whose elements now differ gets one; nodes holding nothing are deleted.
 *
 * Readers in other threads. Only single aligned 4-byte stores change live
 * lookup memory. A new row is written completely (or built in a per-level
 * scratch row and copied) before the element linking it is stored with
 * release order, so a reader sees, per address, the old or the new answer.
 * A row that is unlinked is retired (lpm_epoch_retire()) once the update's
 * last store is done and reused only when lpm_epoch_safe() says so; the
 * limbo list is reclaimed at the start of later updates. The root never
 * moves: a whole-table build writes a new root in a private buffer and new
 * rows beside the old ones, then stores the root elements that differ.
 *
 * Memory. An update needs at most one new row per level on its path plus
 * one for each node that is aggregated now (its subtree might need rows
 * again); it is refused (-1, nothing changed) unless the region has that
 * much room. Control memory comes from the engine's own pool (slabs for
 * nodes, mb_alloc() for the rest).
 *
 * Whole-table build. Routes are counting-sorted by length and painted in
 * that order, each into rows that exist from the start (a longer prefix
 * never precedes a shorter one, so painting never needs to reach into
 * children); one depth-first pass then removes the rows that turned out
 * uniform.
 */

#include "nest/bird.h"
#include "nest/lpm.h"
#include "nest/lpm-simd.h"
#include "nest/cli.h"
#include "lib/bitops.h"
#include "lib/resource.h"
#include "lib/string.h"
#include "lib/timer.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#define SIMD_REGION_SIZE		(1ULL << 30)	/* Reserved, touched as needed */
#define SIMD_HASH_MIN_ORDER	8

static const u8 simd_plan4[] = { 20, 4, 8 };
static const u8 simd_plan6[] = { 20, 4, 8, 6, 5, 5, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8 };

/* A node of the control trie: one (possible) row */
struct simd_node {
  u32 row;				/* Element index of its row, 0 when aggregated */
  u32 agg;				/* The element every position holds when aggregated */
  u32 nown;				/* Prefixes of lengths depth+1 .. depth+stride */
  u32 nchild;
  u16 ccap;				/* Room in @child */
  u8 level;
  struct simd_node **child;		/* Children in element order */
  u64 cmap[4];				/* Elements that have a child */
  u8 owner[];				/* Per element: 1 + length of the prefix supplying it; 0: none */
};

/* Prefixes and their values: open addressing, linear probing */
struct simd_hash {
  uint order;
  uint count;
  uint stride;				/* Bytes per slot: 12 (IPv4), 24 (IPv6) */
  byte *slot;				/* struct simd_hslot, one array: a probe is one miss */
  u64 seed;				/* Of this allocation (simd_hash_alloc()) */
};

/* A slot of the prefix hash: length + 1 (0: empty), value, key (1 or 4 words) */
struct simd_hslot {
  u32 len;
  u32 val;
  u32 key[];
};

/* Everything that describes the contents (a build makes a second one) */
struct simd_ctl {
  struct simd_node *root;
  struct simd_node **root_child;
  struct simd_hash h;
  u32 lencnt[IP6_MAX_PREFIX_LENGTH + 1];
  u64 nodes[SIMD_MAX_LEVELS];
  u64 rows[SIMD_MAX_LEVELS];
  u64 aggregated[SIMD_MAX_LEVELS];
  u64 agg_el;				/* Sum of aggregated[k] << stride[k] (simd_room()) */
};

struct simd_limbo {
  u32 row;
  u32 level;
  u64 tag;				/* lpm_epoch_retire(), 0 until the update ends */
};

struct simd {
  struct lpm_engine e;
  pool *p;
  struct lpm_region *reg;
  u32 *mem;
  struct simd_view view;
  uint v6;
  uint levels;
  u8 stride[SIMD_MAX_LEVELS];
  u8 depth[SIMD_MAX_LEVELS];
  u8 level_of[IP6_MAX_PREFIX_LENGTH + 1];
  ip6_addr mask6[IP6_MAX_PREFIX_LENGTH + 1];	/* IPv6 netmasks by length (ip6_mkmask() loops) */
  slab *slab[SIMD_MAX_LEVELS];
  u32 *scratch[SIMD_MAX_LEVELS];
  struct simd_ctl c;

  u64 top, limit, cap;			/* Elements: bump allocation, reserved, cap */
  u64 path_el;				/* Elements of one row per level below the root */
  u32 *free[SIMD_MAX_STRIDE + 1];	/* Reusable rows by stride */
  u32 nfree[SIMD_MAX_STRIDE + 1], cfree[SIMD_MAX_STRIDE + 1];
  struct simd_limbo *limbo;
  u32 hlimbo, nlimbo, climbo, plimbo;	/* Head, end, room, first without a tag */
  int poison;
  u32 poison_leaf;

  u64 updates, builds, writes, reclaimed, alloc_failures, child_slots;
  btime last_build, last_build_time;
};

#define SIMD(e) SKIP_BACK(struct simd, e, e)

/* Operation in progress */
struct simd_op {
  ip6_addr a;				/* Prefix, host bits clear (IPv4 in addr[0]) */
  uint len;
  uint level;				/* Level whose node holds the prefix */
  uint lo, hi;				/* Its elements there */
  int delta;				/* +1 new prefix, -1 removed, 0 replaced */
  u8 newo, match, inh;			/* New owner; owner to replace (removal); inherited owner on the path */
  u32 newv;				/* New element (a leaf) */
};


/*
 *	Helpers
 */

static inline uint simd_size(const struct simd *t, uint k) { return 1U << t->stride[k]; }

/* Nodes without a row at level @k: @d more */
static inline void
simd_agg(const struct simd *t, struct simd_ctl *c, uint k, int d)
{
  c->aggregated[k] += d;
  c->agg_el += (s64) d << t->stride[k];
}

static inline uint
simd_key(const struct simd *t, const ip6_addr *a, uint k)
{
  return (a->addr[t->view.word[k]] >> t->view.shift[k]) & t->view.mask[k];
}

static inline ip6_addr
simd_mask(const struct simd *t, ip6_addr a, uint len)
{
  if (!t->v6)
  {
    a.addr[0] &= len ? ~0U << (32 - len) : 0;
    return a;
  }
  return ip6_and(a, t->mask6[len]);
}

/* A net's prefix as the engine keys it: host bits clear, IPv4 in addr[0] */
static inline ip6_addr
simd_prefix(const struct simd *t, const net_addr *n)
{
  ip6_addr a = t->v6 ? net6_prefix(n) : (ip6_addr) { .addr = { ip4_to_u32(net4_prefix(n)) } };
  return simd_mask(t, a, n->pxlen);
}

static void
simd_op_init(const struct simd *t, struct simd_op *op, const net_addr *n)
{
  memset(op, 0, sizeof(*op));
  op->a = simd_prefix(t, n);
  op->len = n->pxlen;

  uint k = t->level_of[op->len];
  uint end = t->depth[k] + t->stride[k];
  op->level = k;
  op->lo = simd_key(t, &op->a, k);
  op->hi = op->lo + (1U << (end - op->len));
}

static inline uint
simd_rank(const struct simd_node *n, uint i)
{
  uint r = 0;
  for (uint w = 0; w < (i >> 6); w++)
    r += u64_popcount(n->cmap[w]);
  return r + u64_popcount(n->cmap[i >> 6] & ((1ULL << (i & 63)) - 1));
}

static inline struct simd_node *
simd_child(const struct simd_ctl *c, const struct simd_node *n, uint k, uint i)
{
  if (!k)
    return c->root_child[i];
  if (!(n->cmap[i >> 6] & (1ULL << (i & 63))))
    return NULL;
  return n->child[simd_rank(n, i)];
}

/* Rows are checked after every update that wrote them: most are not
 * uniform and differ early, so stop at the first group of 8 that differs */
static inline int
simd_uniform(const u32 *b, uint n)
{
  u32 x = b[0];
  if (simd_is_link(x))
    return 0;

  uint i = 0;
  for (; i + 8 <= n; i += 8)
    if ((b[i] ^ x) | (b[i + 1] ^ x) | (b[i + 2] ^ x) | (b[i + 3] ^ x) |
	(b[i + 4] ^ x) | (b[i + 5] ^ x) | (b[i + 6] ^ x) | (b[i + 7] ^ x))
      return 0;
  for (; i < n; i++)
    if (b[i] != x)
      return 0;
  return 1;
}


/*
 *	Prefix hash
 */

/*
 * Every allocation of the hash has a random seed. With one fixed function,
 * keys inserted in the slot order of another table (a dump of one engine
 * fed to another, as `show lpm lookup benchmark' does; or prefixes chosen
 * to collide) pile up in one run while the table is smaller than the one
 * they came from: each insert then probes the whole run, and filling a
 * full table becomes quadratic.
 */
static inline uint
simd_hash_slot(const struct simd_hash *h, const ip6_addr *a, uint len)
{
  u64 x = ((((u64) a->addr[0] << 32) | a->addr[1]) ^ h->seed) * 0x9e3779b97f4a7c15ULL;
  x ^= ((((u64) a->addr[2] << 32) | a->addr[3]) + len) * 0xc2b2ae3d27d4eb4fULL;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  return (uint) (x >> (64 - h->order));
}

/* At most half full (see simd_hash_probe()) */
static inline int
simd_hash_fits(u64 count, uint order)
{
  return 2 * count <= (1ULL << order);
}

static inline struct simd_hslot *
simd_hash_at(const struct simd_hash *h, uint i)
{
  return (struct simd_hslot *) (h->slot + (size_t) i * h->stride);
}

/* Fixed sizes, so that the copy is two or four stores and not a call */
static inline void
simd_hash_key_set(const struct simd_hash *h, struct simd_hslot *x, const ip6_addr *a)
{
  if (h->stride == sizeof(struct simd_hslot) + sizeof(u32))
    x->key[0] = a->addr[0];
  else
    memcpy(x->key, a->addr, 4 * sizeof(u32));
}

static inline int
simd_hash_eq(const struct simd_hash *h, uint i, const ip6_addr *a, uint len)
{
  const struct simd_hslot *x = simd_hash_at(h, i);
  if (x->len != len + 1)
    return 0;
  if (h->stride == sizeof(struct simd_hslot) + sizeof(u32))
    return x->key[0] == a->addr[0];
  return !((x->key[0] ^ a->addr[0]) | (x->key[1] ^ a->addr[1]) |
	   (x->key[2] ^ a->addr[2]) | (x->key[3] ^ a->addr[3]));
}

static inline void
simd_hash_key(const struct simd_hash *h, uint i, ip6_addr *a)
{
  const struct simd_hslot *x = simd_hash_at(h, i);
  if (h->stride == sizeof(struct simd_hslot) + sizeof(u32))
    *a = (ip6_addr) { .addr = { x->key[0] } };
  else
    *a = (ip6_addr) { .addr = { x->key[0], x->key[1], x->key[2], x->key[3] } };
}

static void
simd_hash_alloc(struct simd *t, struct simd_hash *h, uint order)
{
  h->order = order;
  h->count = 0;
  h->stride = sizeof(struct simd_hslot) + (t->v6 ? 4 : 1) * sizeof(u32);
  h->slot = mb_allocz(t->p, (size_t) h->stride << order);
  random_bytes(&h->seed, sizeof(h->seed));
}

static void
simd_hash_free(struct simd_hash *h)
{
  mb_free(h->slot);
  memset(h, 0, sizeof(*h));
}

static int
simd_hash_find(const struct simd_hash *h, const ip6_addr *a, uint len, u32 *val)
{
  uint mask = (1U << h->order) - 1;
  for (uint i = simd_hash_slot(h, a, len); simd_hash_at(h, i)->len; i = (i + 1) & mask)
    if (simd_hash_eq(h, i, a, len))
    {
      *val = simd_hash_at(h, i)->val;
      return 1;
    }
  return 0;
}

/*
 * The slot of a key, or the empty slot that ends its probe sequence (where
 * it would be inserted); returns whether the key is there. Linear probing
 * at a load of at most one half: an update looks its prefix up and then
 * stores into the same slot, and a lookup of an absent key (every new
 * prefix) probes 2.5 slots on average, against 8.5 at three quarters.
 */
static inline int
simd_hash_probe(const struct simd_hash *h, const ip6_addr *a, uint len, uint *slot)
{
  uint mask = (1U << h->order) - 1;
  uint i = simd_hash_slot(h, a, len);
  for (; simd_hash_at(h, i)->len; i = (i + 1) & mask)
    if (simd_hash_eq(h, i, a, len))
    {
      *slot = i;
      return 1;
    }

  *slot = i;
  return 0;
}

/* Store at a slot simd_hash_probe() gave (@had: the key is there) */
static inline void
simd_hash_put(struct simd_hash *h, uint i, const ip6_addr *a, uint len, u32 val, int had)
{
  struct simd_hslot *x = simd_hash_at(h, i);
  x->val = val;
  if (had)
    return;

  x->len = len + 1;
  simd_hash_key_set(h, x, a);
  h->count++;
}

/* Insert or replace; the caller made room (simd_hash_room()) */
static void
simd_hash_set(struct simd_hash *h, const ip6_addr *a, uint len, u32 val)
{
  uint i;
  int had = simd_hash_probe(h, a, len, &i);
  simd_hash_put(h, i, a, len, val, had);
}

static void
simd_hash_room(struct simd *t, struct simd_hash *h, uint more)
{
  if (simd_hash_fits(h->count + more, h->order))
    return;

  struct simd_hash o = *h;
  uint order = o.order;
  while (!simd_hash_fits(o.count + more, order))
    order++;

  /* The keys are distinct: each goes to the first empty slot from its home */
  simd_hash_alloc(t, h, order);
  uint mask = (1U << order) - 1;
  for (uint i = 0; i < (1U << o.order); i++)
  {
    const struct simd_hslot *x = simd_hash_at(&o, i);
    if (!x->len)
      continue;

    ip6_addr a;
    simd_hash_key(&o, i, &a);
    uint j = simd_hash_slot(h, &a, x->len - 1);
    while (simd_hash_at(h, j)->len)
      j = (j + 1) & mask;
    memcpy(simd_hash_at(h, j), x, h->stride);
  }
  h->count = o.count;
  simd_hash_free(&o);
}

static void
simd_hash_del(struct simd_hash *h, const ip6_addr *a, uint len)
{
  uint mask = (1U << h->order) - 1;
  uint i = simd_hash_slot(h, a, len);
  while (!simd_hash_eq(h, i, a, len))
  {
    ASSERT(simd_hash_at(h, i)->len);
    i = (i + 1) & mask;
  }

  /* Backward shift: move later members of the run into the hole */
  for (uint j = (i + 1) & mask; simd_hash_at(h, j)->len; j = (j + 1) & mask)
  {
    ip6_addr b;
    simd_hash_key(h, j, &b);
    uint home = simd_hash_slot(h, &b, simd_hash_at(h, j)->len - 1);
    if (((j - home) & mask) < ((j - i) & mask))
      continue;

    memcpy(simd_hash_at(h, i), simd_hash_at(h, j), h->stride);
    i = j;
  }

  simd_hash_at(h, i)->len = 0;
  h->count--;
}


/*
 *	Rows of lookup memory
 */

static void
simd_push(struct simd *t, u32 **arr, u32 *n, u32 *cap, u32 x)
{
  if (*n == *cap)
  {
    *cap = *cap ? 2 * *cap : 64;
    *arr = *arr ? mb_realloc(*arr, *cap * sizeof(u32)) : mb_alloc(t->p, *cap * sizeof(u32));
  }
  (*arr)[(*n)++] = x;
}

/*
 * Room for @el more elements at the top: within the reserved part of the
 * region, or reserved now (lpm_region_reserve(); a shared region's pages
 * are allocated before they are written, so a full file system refuses the
 * update instead of killing bird with SIGBUS), never beyond the cap.
 */
static int
simd_reserve(struct simd *t, u64 el)
{
  if (t->top + el <= t->limit)
    return 1;
  if ((t->top + el > t->cap) ||
      (lpm_region_reserve(t->reg, SIMD_HEADER_SIZE + (t->top + el) * sizeof(u32)) < 0))
    return 0;

  t->limit = MIN(t->cap, (t->reg->reserved - SIMD_HEADER_SIZE) / sizeof(u32));
  return 1;
}

static inline int
simd_row_can(struct simd *t, uint k)
{
  return t->nfree[t->stride[k]] || simd_reserve(t, simd_size(t, k));
}

static u32
simd_row_alloc(struct simd *t, uint k)
{
  uint s = t->stride[k];
  if (t->nfree[s])
    return t->free[s][--t->nfree[s]];

  ASSERT(t->top + simd_size(t, k) <= t->limit);
  u32 r = t->top;
  t->top += simd_size(t, k);
  t->reg->used = MAX(t->reg->used, SIMD_HEADER_SIZE + t->top * sizeof(u32));
  return r;
}

/* A row no reader can have seen */
static void
simd_row_free(struct simd *t, u32 row, uint k)
{
  uint s = t->stride[k];
  simd_push(t, &t->free[s], &t->nfree[s], &t->cfree[s], row);
}

/* A row that was linked: reused once readers have quiesced */
static void
simd_row_retire(struct simd *t, u32 row, uint k)
{
  if (t->nlimbo == t->climbo)
  {
    t->climbo = t->climbo ? 2 * t->climbo : 256;
    t->limbo = t->limbo ? mb_realloc(t->limbo, t->climbo * sizeof(struct simd_limbo))
      : mb_alloc(t->p, t->climbo * sizeof(struct simd_limbo));
  }
  t->limbo[t->nlimbo++] = (struct simd_limbo) { .row = row, .level = k };
}

/* End of an update: tag what it retired (after its last store) */
static void
simd_retire_commit(struct simd *t)
{
  if (t->plimbo == t->nlimbo)
    return;

  u64 tag = lpm_epoch_retire(&t->e);
  for (uint i = t->plimbo; i < t->nlimbo; i++)
    t->limbo[i].tag = tag;
  t->plimbo = t->nlimbo;
}

static void
simd_reclaim_one(struct simd *t, struct simd_limbo *l)
{
  if (t->poison)
  {
    u32 *r = t->mem + l->row;
    for (uint i = 0; i < simd_size(t, l->level); i++)
      r[i] = t->poison_leaf;
  }
  simd_row_free(t, l->row, l->level);
  t->reclaimed++;
}

/* Move retired rows that no reader can see any more to the free lists */
static void
simd_reclaim(struct simd *t)
{
  ASSERT(t->plimbo == t->nlimbo);
  if (t->hlimbo == t->nlimbo)
    return;

  /* Tags grow along the list: if the newest is safe, all are */
  if (lpm_epoch_safe(&t->e, t->limbo[t->nlimbo - 1].tag))
    while (t->hlimbo < t->nlimbo)
      simd_reclaim_one(t, &t->limbo[t->hlimbo++]);

  while (t->hlimbo < t->nlimbo)
  {
    u64 tag = t->limbo[t->hlimbo].tag;
    if (!lpm_epoch_safe(&t->e, tag))
      break;
    while ((t->hlimbo < t->nlimbo) && (t->limbo[t->hlimbo].tag == tag))
      simd_reclaim_one(t, &t->limbo[t->hlimbo++]);
  }

  if (t->hlimbo == t->nlimbo)
    t->hlimbo = t->nlimbo = t->plimbo = 0;
  else if (t->hlimbo > 1024 && 2 * t->hlimbo > t->nlimbo)
  {
    memmove(t->limbo, t->limbo + t->hlimbo, (t->nlimbo - t->hlimbo) * sizeof(struct simd_limbo));
    t->nlimbo -= t->hlimbo;
    t->plimbo = t->nlimbo;
    t->hlimbo = 0;
  }
}

/*
 * Room for one update: one row per level of the path, and one for every
 * node aggregated now, counted against the free rows of each stride and
 * the untouched rest of the region.
 */
static int
simd_room(struct simd *t)
{
  /* Enough even if no free row could be reused: the common case */
  if (t->top + t->path_el + t->c.agg_el <= t->limit)
    return 1;

  u64 need[SIMD_MAX_STRIDE + 1] = {};
  for (uint k = 1; k < t->levels; k++)
    need[t->stride[k]] += 1 + t->c.aggregated[k];

  u64 el = 0;
  for (uint s = 1; s <= SIMD_MAX_STRIDE; s++)
    if (need[s] > t->nfree[s])
      el += (need[s] - t->nfree[s]) << s;

  return simd_reserve(t, el);
}


/*
 *	Control nodes
 */

static struct simd_node *
simd_node_new(struct simd *t, struct simd_ctl *c, uint k, u8 owner, u32 agg)
{
  struct simd_node *n = sl_alloc(t->slab[k]);
  *n = (struct simd_node) { .agg = agg, .level = k };
  memset(n->owner, owner, simd_size(t, k));
  c->nodes[k]++;
  simd_agg(t, c, k, 1);
  return n;
}

static void
simd_node_free(struct simd *t, struct simd_ctl *c, struct simd_node *n)
{
  ASSERT(!n->row && !n->nchild);
  if (n->child)
  {
    t->child_slots -= n->ccap;
    mb_free(n->child);
  }
  c->nodes[n->level]--;
  simd_agg(t, c, n->level, -1);
  sl_free(n);
}

static void
simd_child_add(struct simd *t, struct simd_ctl *c, struct simd_node *n, uint k, uint i, struct simd_node *ch)
{
  n->nchild++;
  if (!k)
  {
    c->root_child[i] = ch;
    return;
  }

  if (n->nchild > n->ccap)
  {
    uint cap = MIN(n->ccap ? 2 * n->ccap : 2, simd_size(t, k));
    n->child = n->child ? mb_realloc(n->child, cap * sizeof(void *)) : mb_alloc(t->p, cap * sizeof(void *));
    t->child_slots += cap - n->ccap;
    n->ccap = cap;
  }

  uint r = simd_rank(n, i);
  memmove(&n->child[r + 1], &n->child[r], (n->nchild - 1 - r) * sizeof(void *));
  n->child[r] = ch;
  n->cmap[i >> 6] |= 1ULL << (i & 63);
}

static void
simd_child_del(struct simd *t, struct simd_ctl *c, struct simd_node *n, uint k, uint i)
{
  n->nchild--;
  if (!k)
  {
    c->root_child[i] = NULL;
    return;
  }

  uint r = simd_rank(n, i);
  memmove(&n->child[r], &n->child[r + 1], (n->nchild - r) * sizeof(void *));
  n->cmap[i >> 6] &= ~(1ULL << (i & 63));
  if (!n->nchild)
  {
    t->child_slots -= n->ccap;
    mb_free(n->child);
    n->child = NULL;
    n->ccap = 0;
  }
}

static void
simd_ctl_init(struct simd *t, struct simd_ctl *c, uint prefixes)
{
  memset(c, 0, sizeof(*c));
  uint n = simd_size(t, 0);
  c->root = mb_allocz(t->p, sizeof(struct simd_node) + n);
  c->root_child = mb_allocz(t->p, n * sizeof(void *));
  c->nodes[0] = c->rows[0] = 1;

  uint order = SIMD_HASH_MIN_ORDER;
  while (!simd_hash_fits(prefixes, order))
    order++;
  simd_hash_alloc(t, &c->h, order);
}

/* Free a node's subtree; its rows are retired (@live) or were never seen */
static void
simd_subtree_free(struct simd *t, struct simd_ctl *c, struct simd_node *n, int live)
{
  uint k = n->level;
  for (uint j = 0; j < n->nchild; j++)
    simd_subtree_free(t, c, n->child[j], live);
  n->nchild = 0;

  if (n->row)
  {
    if (live)
      simd_row_retire(t, n->row, k);
    else
      simd_row_free(t, n->row, k);
    n->row = 0;
    c->rows[k]--;
    simd_agg(t, c, k, 1);
  }
  simd_node_free(t, c, n);
}

static void
simd_ctl_free(struct simd *t, struct simd_ctl *c, int live)
{
  for (uint i = 0; i < simd_size(t, 0); i++)
    if (c->root_child[i])
      simd_subtree_free(t, c, c->root_child[i], live);

  mb_free(c->root);
  mb_free(c->root_child);
  simd_hash_free(&c->h);
}


/*
 *	Incremental updates
 */

/* Where a node's elements are written: its live row or a scratch row */
static inline u32 *
simd_begin(struct simd *t, struct simd_node *n, uint k, int *live)
{
  if (!k || n->row)
  {
    *live = 1;
    return t->mem + n->row;
  }

  *live = 0;
  u32 *b = t->scratch[k];
  for (uint i = 0; i < simd_size(t, k); i++)
    b[i] = n->agg;
  return b;
}

static inline void
simd_put(struct simd *t, u32 *b, uint i, u32 x, int live)
{
  if (b[i] == x)
    return;

  if (live)
  {
    atomic_store_explicit((_Atomic u32 *) &b[i], x, memory_order_release);
    t->writes++;
  }
  else
    b[i] = x;
}

/* A node is done: keep, drop or create its row; returns the element linking it */
static u32
simd_end(struct simd *t, struct simd_node *n, uint k, u32 *b, int live)
{
  uint size = simd_size(t, k);
  int uni = simd_uniform(b, size);

  if (live)
  {
    if (!uni)
      return n->row;

    simd_row_retire(t, n->row, k);
    n->row = 0;
    n->agg = b[0];
    t->c.rows[k]--;
    simd_agg(t, &t->c, k, 1);
    return n->agg;
  }

  if (uni)
    return n->agg = b[0];

  u32 r = simd_row_alloc(t, k);
  memcpy(t->mem + r, b, size * sizeof(u32));
  n->row = r;
  t->c.rows[k]++;
  simd_agg(t, &t->c, k, -1);
  return r;
}

/* Write (op->newo, op->newv) into elements lo..hi-1 that qualify, and below */
static void
simd_paint(struct simd *t, struct simd_node *n, uint k, u32 *b, int live, uint lo, uint hi, const struct simd_op *op)
{
  u8 *ow = n->owner;

  for (uint i = lo; i < hi; i++)
  {
    u8 o = ow[i];
    if (op->delta < 0 ? (o != op->match) : (o > op->newo))
      continue;

    ow[i] = op->newo;
    u32 x = op->newv;
    struct simd_node *c = simd_child(&t->c, n, k, i);
    if (c)
    {
      int cl;
      u32 *cb = simd_begin(t, c, k + 1, &cl);
      simd_paint(t, c, k + 1, cb, cl, 0, simd_size(t, k + 1), op);
      x = simd_end(t, c, k + 1, cb, cl);
    }
    simd_put(t, b, i, x, live);
  }
}

/* The next covering prefix of a removed one: in this node, else inherited */
static void
simd_cover(struct simd *t, struct simd_op *op, uint k)
{
  int lmin = k ? t->depth[k] + 1 : 0;
  u32 v;

  for (int l = (int) op->len - 1; l >= lmin; l--)
    if (t->c.lencnt[l])
    {
      ip6_addr m = simd_mask(t, op->a, l);
      if (simd_hash_find(&t->c.h, &m, l, &v))
      {
	op->newo = l + 1;
	op->newv = simd_leaf(v);
	return;
      }
    }

  op->newo = k ? op->inh : 0;
  op->newv = SIMD_LEAF;
  if (op->newo)
  {
    ip6_addr m = simd_mask(t, op->a, op->newo - 1);
    int found = simd_hash_find(&t->c.h, &m, op->newo - 1, &v);
    ASSERT(found);
    op->newv = simd_leaf(v);
  }
}

static u32
simd_descend(struct simd *t, struct simd_node *n, uint k, struct simd_op *op)
{
  int live;
  u32 *b;

  if (k == op->level)
  {
    if (op->delta < 0)
      simd_cover(t, op, k);
    n->nown += op->delta;
    b = simd_begin(t, n, k, &live);
    simd_paint(t, n, k, b, live, op->lo, op->hi, op);
    return k ? simd_end(t, n, k, b, live) : 0;
  }

  uint i = simd_key(t, &op->a, k);
  struct simd_node *c = simd_child(&t->c, n, k, i);
  b = simd_begin(t, n, k, &live);
  if (!c)
  {
    ASSERT(op->delta > 0);
    c = simd_node_new(t, &t->c, k + 1, n->owner[i], b[i]);
    simd_child_add(t, &t->c, n, k, i, c);
  }

  op->inh = n->owner[i];
  u32 x = simd_descend(t, c, k + 1, op);
  simd_put(t, b, i, x, live);

  if (!c->nown && !c->nchild)
  {
    ASSERT(!c->row);
    simd_child_del(t, &t->c, n, k, i);
    simd_node_free(t, &t->c, c);
  }

  return k ? simd_end(t, n, k, b, live) : 0;
}

static int
simd_update(struct lpm_engine *e, const net_addr *n, u32 value, u32 *old)
{
  struct simd *t = SIMD(e);
  struct simd_op op;
  uint slot;

  ASSERT(value <= LPM_VALUE_MAX);
  simd_op_init(t, &op, n);

  /* Room first, so that the slot found stays valid until the store */
  simd_hash_room(t, &t->c.h, 1);
  int had = simd_hash_probe(&t->c.h, &op.a, op.len, &slot);
  u32 ov = had ? simd_hash_at(&t->c.h, slot)->val : LPM_NONE;
  if (old)
    *old = ov;

  if (had && (ov == value))
  {
    t->updates++;
    return 0;
  }

  simd_reclaim(t);
  if (!simd_room(t))
  {
    t->alloc_failures++;
    return -1;
  }

  op.delta = had ? 0 : 1;
  op.newo = op.len + 1;
  op.newv = simd_leaf(value);
  simd_descend(t, t->c.root, 0, &op);

  /* Painting reads the prefix hash only for removals: the slot is as found */
  simd_hash_put(&t->c.h, slot, &op.a, op.len, value, had);
  t->c.lencnt[op.len] += op.delta;
  simd_retire_commit(t);
  t->updates++;
  return 0;
}

static u32
simd_find(const struct lpm_engine *e, const net_addr *n)
{
  const struct simd *t = SKIP_BACK(const struct simd, e, e);
  ip6_addr a = simd_prefix(t, n);
  u32 v;

  return simd_hash_find(&t->c.h, &a, n->pxlen, &v) ? v : LPM_NONE;
}

static uint
simd_dump(const struct lpm_engine *e, struct lpm_route *r, uint max, u64 *pos)
{
  const struct simd *t = SKIP_BACK(const struct simd, e, e);
  const struct simd_hash *h = &t->c.h;
  uint cnt = 0;
  ip6_addr a;
  u64 i;

  for (i = *pos; h->slot && (i < (1ULL << h->order)) && (cnt < max); i++)
  {
    const struct simd_hslot *x = simd_hash_at(h, i);
    if (!x->len)
      continue;

    simd_hash_key(h, i, &a);
    if (t->v6)
      net_fill_ip6(&r[cnt].n.n, a, x->len - 1);
    else
      net_fill_ip4(&r[cnt].n.n, ip4_from_u32(a.addr[0]), x->len - 1);
    r[cnt++].value = x->val;
  }

  *pos = i;
  return cnt;
}

static int
simd_remove(struct lpm_engine *e, const net_addr *n, u32 *old)
{
  struct simd *t = SIMD(e);
  struct simd_op op;
  u32 ov;

  simd_op_init(t, &op, n);
  int had = simd_hash_find(&t->c.h, &op.a, op.len, &ov);
  if (old)
    *old = had ? ov : LPM_NONE;
  if (!had)
    return 0;

  simd_reclaim(t);
  if (!simd_room(t))
  {
    t->alloc_failures++;
    return -1;
  }

  op.delta = -1;
  op.match = op.len + 1;
  simd_descend(t, t->c.root, 0, &op);

  simd_hash_del(&t->c.h, &op.a, op.len);
  t->c.lencnt[op.len]--;
  simd_retire_commit(t);
  t->updates++;
  return 0;
}

/*
 * Batches. An update of a full table waits on a few cache misses in turn:
 * the root's element, owner and child, the child node, the prefix hash.
 * While one change is applied, those of a change SIMD_AHEAD further are
 * prefetched, and the child node of one SIMD_AHEAD / 2 further (its pointer
 * has arrived by then), so that the misses of several changes overlap.
 * Prefetches are hints: a hash that grows or rows that move meanwhile only
 * make them useless, never wrong.
 */
#define SIMD_AHEAD 8

static inline void
simd_prefetch(const struct simd *t, const net_addr *n, int child)
{
  ip6_addr a = simd_prefix(t, n);
  uint len = n->pxlen;
  uint i = simd_key(t, &a, 0);

  if (child)
  {
    const struct simd_node *c = t->c.root_child[i];
    if (c && t->level_of[len])
    {
      __builtin_prefetch(c, 1);
      __builtin_prefetch(&c->owner[simd_key(t, &a, 1)], 1);
    }
    return;
  }

  const struct simd_hash *h = &t->c.h;
  uint s = simd_hash_slot(h, &a, len);
  __builtin_prefetch(&t->c.root_child[i], 0);
  __builtin_prefetch(&t->c.root->owner[i], 1);
  __builtin_prefetch(&t->mem[t->c.root->row + i], 1);
  __builtin_prefetch(simd_hash_at(h, s), 1);
}

static uint
simd_apply(struct lpm_engine *e, struct lpm_change *ch, uint count)
{
  struct simd *t = SIMD(e);
  uint failed = 0;

  for (uint j = 0; (j < SIMD_AHEAD) && (j < count); j++)
    simd_prefetch(t, &ch[j].n.n, 0);

  for (uint j = 0; j < count; j++)
  {
    if (j + SIMD_AHEAD < count)
      simd_prefetch(t, &ch[j + SIMD_AHEAD].n.n, 0);
    if (j + SIMD_AHEAD / 2 < count)
      simd_prefetch(t, &ch[j + SIMD_AHEAD / 2].n.n, 1);

    failed += (lpm_apply_one(e, &ch[j]) < 0);
  }
  return failed;
}


/*
 *	Whole-table build
 */

/* Paint one route into rows that nobody sees yet; -1 if out of rows */
static int
simd_build_one(struct simd *t, struct simd_ctl *c, u32 *root, const struct simd_op *op, int fresh)
{
  struct simd_node *n = c->root;
  u32 *b = root;

  for (uint k = 0; k < op->level; k++)
  {
    uint i = simd_key(t, &op->a, k);
    struct simd_node *ch = simd_child(c, n, k, i);
    if (!ch)
    {
      if (!simd_row_can(t, k + 1))
	return -1;

      ch = simd_node_new(t, c, k + 1, n->owner[i], b[i]);
      ch->row = simd_row_alloc(t, k + 1);
      simd_agg(t, c, k + 1, -1);
      c->rows[k + 1]++;
      u32 *r = t->mem + ch->row;
      for (uint j = 0; j < simd_size(t, k + 1); j++)
	r[j] = b[i];
      b[i] = ch->row;
      simd_child_add(t, c, n, k, i, ch);
    }
    n = ch;
    b = t->mem + ch->row;
  }

  /* Shorter prefixes came first, so nothing below these elements exists yet */
  for (uint i = op->lo; i < op->hi; i++)
    if (n->owner[i] <= op->newo)
    {
      n->owner[i] = op->newo;
      b[i] = op->newv;
    }

  n->nown += fresh;
  return 0;
}

/* Drop the rows that came out uniform, children first */
static u32
simd_build_aggregate(struct simd *t, struct simd_ctl *c, struct simd_node *n, uint k)
{
  u32 *b = t->mem + n->row;
  uint j = 0;

  for (uint w = 0; w < 4; w++)
    for (u64 m = n->cmap[w]; m; m &= m - 1)
    {
      uint i = 64 * w + __builtin_ctzll(m);
      b[i] = simd_build_aggregate(t, c, n->child[j++], k + 1);
    }

  if (!simd_uniform(b, simd_size(t, k)))
    return n->row;

  simd_row_free(t, n->row, k);
  n->row = 0;
  n->agg = b[0];
  c->rows[k]--;
  simd_agg(t, c, k, 1);
  return n->agg;
}

static int
simd_build(struct lpm_engine *e, const struct lpm_route *r, uint count)
{
  struct simd *t = SIMD(e);
  btime t0 = current_time_now();
  uint rsize = simd_size(t, 0);
  struct simd_ctl nc;
  struct simd_op op;

  simd_reclaim(t);
  simd_ctl_init(t, &nc, count);
  u32 *root = mb_alloc(t->p, rsize * sizeof(u32));
  for (uint i = 0; i < rsize; i++)
    root[i] = SIMD_LEAF;

  /* Counting sort by length; equal prefixes keep their order, the last wins */
  uint pos[IP6_MAX_PREFIX_LENGTH + 2] = {};
  u32 *ord = count ? mb_alloc(t->p, count * sizeof(u32)) : NULL;
  for (uint i = 0; i < count; i++)
  {
    ASSERT(r[i].n.n.type == t->e.net_type);
    ASSERT(r[i].value <= LPM_VALUE_MAX);
    pos[r[i].n.n.pxlen + 1]++;
  }
  for (uint l = 1; l <= IP6_MAX_PREFIX_LENGTH + 1; l++)
    pos[l] += pos[l - 1];
  for (uint i = 0; i < count; i++)
    ord[pos[r[i].n.n.pxlen]++] = i;

  for (uint j = 0; j < count; j++)
  {
    const struct lpm_route *rt = &r[ord[j]];
    simd_op_init(t, &op, &rt->n.n);
    op.newo = op.len + 1;
    op.newv = simd_leaf(rt->value);

    uint before = nc.h.count;
    simd_hash_set(&nc.h, &op.a, op.len, rt->value);
    uint fresh = nc.h.count - before;
    nc.lencnt[op.len] += fresh;

    if (simd_build_one(t, &nc, root, &op, fresh) < 0)
    {
      simd_ctl_free(t, &nc, 0);
      mb_free(root);
      if (ord)
	mb_free(ord);
      t->alloc_failures++;
      return -1;
    }
  }
  if (ord)
    mb_free(ord);

  for (uint i = 0; i < rsize; i++)
    if (nc.root_child[i])
      root[i] = simd_build_aggregate(t, &nc, nc.root_child[i], 1);

  /* Switch: the new rows are complete; store the root elements that differ */
  for (uint i = 0; i < rsize; i++)
    simd_put(t, t->mem, i, root[i], 1);
  mb_free(root);

  simd_ctl_free(t, &t->c, 1);
  t->c = nc;
  simd_retire_commit(t);

  /* BIRD's monotonic clock; current_time() would be the loop's cached value */
  t->builds++;
  t->last_build = current_time_now();
  t->last_build_time = t->last_build - t0;
  return 0;
}


/*
 *	Lookups through the engine
 */

static u32
simd_lookup4(const struct lpm_engine *e, ip4_addr a)
{
  return simd_view_lookup4(&SIMD(e)->view, ip4_to_u32(a));
}

static u32
simd_lookup6(const struct lpm_engine *e, ip6_addr a)
{
  return simd_view_lookup6(&SIMD(e)->view, &a);
}

#define SIMD_BULK(fam, var) \
  static void simd_e_bulk##fam##_##var(const struct lpm_engine *e, const ip##fam##_addr *a, u32 *v, uint n) \
  { simd_bulk##fam##_##var(&SIMD(e)->view, a, v, n); }

SIMD_BULK(4, scalar)
SIMD_BULK(6, scalar)
#ifdef CONFIG_LPM_AVX2
SIMD_BULK(4, avx2)
SIMD_BULK(6, avx2)
#endif
#ifdef CONFIG_LPM_AVX512
SIMD_BULK(4, avx512)
SIMD_BULK(6, avx512)
#endif


/*
 *	Creation, stats
 */

/**
 * simd_plan_format - write a stride plan as text
 * @buf: output buffer
 * @size: its size
 * @stride: bits per level, root first
 * @levels: entries of @stride
 *
 * Writes the strides separated by '-' ("20-4-8"), the form
 * simd_plan_parse() reads, truncated to @size. Returns the length
 * written.
 */
int
simd_plan_format(char *buf, uint size, const u8 *stride, uint levels)
{
  char *p = buf, *end = buf + size;
  for (uint k = 0; (k < levels) && (p < end); k++)
    p += bsnprintf(p, end - p, k ? "-%u" : "%u", stride[k]);
  return p - buf;
}

/**
 * simd_plan_parse - read a stride plan
 * @s: strides separated by '-' or ',', root first ("16-8-8")
 * @stride: output
 * @max: room in @stride
 *
 * Returns the number of levels, or -1. Validity is checked by
 * simd_new_plan().
 */
int
simd_plan_parse(const char *s, u8 *stride, uint max)
{
  uint n = 0;
  while (*s)
  {
    char *end;
    long v = strtol(s, &end, 10);
    if ((end == s) || (v < 1) || (v > 32) || (n == max))
      return -1;
    stride[n++] = v;
    s = end;
    if (*s == '-' || *s == ',')
      s++;
  }
  return n ? (int) n : -1;
}

static int
simd_plan_ok(uint bits, const u8 *stride, uint levels)
{
  if (!levels || (levels > SIMD_MAX_LEVELS) || (stride[0] < 8) || (stride[0] > SIMD_MAX_ROOT))
    return 0;

  uint d = 0;
  for (uint k = 0; k < levels; k++)
  {
    if (!stride[k] || (k && (stride[k] > SIMD_MAX_STRIDE)))
      return 0;
    if ((d / 32) != ((d + stride[k] - 1) / 32))
      return 0;
    d += stride[k];
  }
  return d == bits;
}

/**
 * simd_new_plan - create a simd engine with a given stride plan
 * @pp: pool to create it in
 * @net_type: %NET_IP4 or %NET_IP6
 * @variant: batch lookup variant, or %LPM_VAR_AUTO
 * @stride: bits per level, root first
 * @levels: entries of @stride
 *
 * Returns NULL for another net type, a plan simd_plan_ok() refuses, a
 * variant lpm_variant_select() refuses, or no address space.
 */
static struct lpm_engine *
simd_new_in(pool *pp, uint net_type, uint variant, const u8 *stride, uint levels, const struct lpm_params *shm);

struct lpm_engine *
simd_new_plan(pool *pp, uint net_type, uint variant, const u8 *stride, uint levels)
{
  return simd_new_in(pp, net_type, variant, stride, levels, NULL);
}

/* The same, with the lookup region in shared memory if @shm names an object */
static struct lpm_engine *
simd_new_in(pool *pp, uint net_type, uint variant, const u8 *stride, uint levels, const struct lpm_params *shm)
{
  if ((net_type != NET_IP4) && (net_type != NET_IP6))
    return NULL;

  uint v6 = (net_type == NET_IP6);
  if (!simd_plan_ok(v6 ? IP6_MAX_PREFIX_LENGTH : IP4_MAX_PREFIX_LENGTH, stride, levels))
    return NULL;

  int var = lpm_variant_select(variant, lpm_simd_class.variants);
  if (var < 0)
    return NULL;

  pool *p = rp_new(pp, "LPM simd");
  struct lpm_region *reg = (shm && shm->shm_name) ?
    lpm_region_new_shm(p, shm->shm_name, SIMD_REGION_SIZE, shm->shm_mode, shm->shm_gid) :
    lpm_region_new(p, SIMD_REGION_SIZE);
  if (!reg)
  {
    rfree(p);
    return NULL;
  }
  /* The header and the root row are written now */
  if (lpm_region_reserve(reg, SIMD_HEADER_SIZE + ((size_t) sizeof(u32) << stride[0])) < 0)
  {
    int err = errno;
    rfree(p);
    errno = err;
    return NULL;
  }

  /* Huge pages where the kernel allows them: rows are spread everywhere */
  madvise(reg->base, reg->size, MADV_HUGEPAGE);

  struct simd *t = mb_allocz(p, sizeof(struct simd));
  lpm_engine_init(&t->e, &lpm_simd_class, p, net_type, var);
  t->p = p;
  t->reg = reg;
  t->v6 = v6;
  t->levels = levels;

  struct simd_header *h = reg->base;
  h->magic = SIMD_MAGIC;
  h->version = SIMD_VERSION;
  h->family = v6 ? 6 : 4;
  h->levels = levels;
  h->elements_offset = SIMD_HEADER_SIZE;
  h->elements_max = MIN((reg->size - SIMD_HEADER_SIZE) / sizeof(u32), 1ULL << 31);
  memcpy(h->stride, stride, levels);

  t->mem = (u32 *) ((byte *) reg->base + SIMD_HEADER_SIZE);
  t->cap = h->elements_max;
  t->limit = MIN(t->cap, (reg->reserved - SIMD_HEADER_SIZE) / sizeof(u32));
  simd_view_init(&t->view, reg->base);

  for (uint l = 0; l <= IP6_MAX_PREFIX_LENGTH; l++)
    t->mask6[l] = ip6_mkmask(l);

  uint d = 0;
  for (uint k = 0; k < levels; k++)
  {
    t->path_el += k ? 1ULL << stride[k] : 0;
    t->stride[k] = stride[k];
    t->depth[k] = d;
    for (uint l = (k ? d + 1 : 0); l <= d + stride[k]; l++)
      t->level_of[l] = k;
    d += stride[k];

    if (k)
    {
      t->slab[k] = sl_new(p, sizeof(struct simd_node) + simd_size(t, k));
      t->scratch[k] = mb_alloc(p, simd_size(t, k) * sizeof(u32));
    }
  }

  for (uint i = 0; i < simd_size(t, 0); i++)
    t->mem[i] = SIMD_LEAF;
  t->top = simd_size(t, 0);
  reg->used = SIMD_HEADER_SIZE + t->top * sizeof(u32);

  simd_ctl_init(t, &t->c, 0);
  return &t->e;
}

static struct lpm_engine *
simd_create(pool *p, uint net_type, const struct lpm_params *par)
{
  if (net_type == NET_IP6)
    return simd_new_in(p, net_type, par->variant, simd_plan6, ARRAY_SIZE(simd_plan6), par);
  else
    return simd_new_in(p, net_type, par->variant, simd_plan4, ARRAY_SIZE(simd_plan4), par);
}

static void
simd_free(struct lpm_engine *e)
{
  struct simd *t = SIMD(e);
  lpm_engine_fini(&t->e);
  rfree(t->p);
}

/**
 * simd_view - the lookup view of a simd engine
 * @e: engine
 *
 * Returns the engine's &simd_view, through which the single and batch
 * lookups (simd_view_lookup4(), simd_bulk4_scalar() and the others) read
 * its table.
 */
const struct simd_view *
simd_view(const struct lpm_engine *e)
{
  return &SIMD(e)->view;
}

/**
 * simd_region_base - base address of a simd engine's lookup region
 * @e: engine
 *
 * For tools and tests that read the region directly (its header and
 * elements).
 */
const void *
simd_region_base(const struct lpm_engine *e)
{
  return SIMD(e)->reg->base;
}

/**
 * simd_set_limit - cap the lookup memory of a simd engine
 * @e: engine
 * @bytes: lookup memory allowed, header included
 *
 * Further element allocations fail beyond the cap, which never exceeds
 * what the region can hold: for tests of allocation failure.
 */
void
simd_set_limit(struct lpm_engine *e, size_t bytes)
{
  struct simd *t = SIMD(e);
  const struct simd_header *h = t->reg->base;
  u64 el = bytes > SIMD_HEADER_SIZE ? (bytes - SIMD_HEADER_SIZE) / sizeof(u32) : 0;
  t->cap = MIN(el, h->elements_max);
  t->limit = MIN(t->cap, (t->reg->reserved - SIMD_HEADER_SIZE) / sizeof(u32));
}

/**
 * simd_set_poison - overwrite reclaimed rows with a marker answer
 * @e: engine
 * @on: 1 to poison, 0 to stop
 * @value: the answer the poisoned rows give
 *
 * While on, rows taken back for reuse are first filled with leaves
 * answering @value, so that a reader still using one would notice (tests
 * of the readers' epochs).
 */
void
simd_set_poison(struct lpm_engine *e, int on, u32 value)
{
  struct simd *t = SIMD(e);
  t->poison = on;
  t->poison_leaf = simd_leaf(value);
}

/**
 * simd_get_info - statistics of a simd engine
 * @e: engine
 * @i: filled with the engine's figures
 *
 * Fills @i with the stride plan, the rows, nodes and aggregated nodes per
 * level, the free, retired and reclaimed rows, the high-water mark of
 * elements, the element stores into live memory and the state of the
 * prefix hash. It scans the whole hash: for the tools and the tests, not
 * for `show lpm'.
 */
void
simd_get_info(const struct lpm_engine *e, struct simd_info *i)
{
  const struct simd *t = SIMD(e);
  memset(i, 0, sizeof(*i));
  i->levels = t->levels;
  memcpy(i->stride, t->stride, t->levels);
  for (uint k = 0; k < t->levels; k++)
  {
    i->rows[k] = t->c.rows[k];
    i->nodes[k] = t->c.nodes[k];
    i->aggregated[k] = k ? t->c.aggregated[k] : 0;
  }
  for (uint s = 1; s <= SIMD_MAX_STRIDE; s++)
    i->free_rows += t->nfree[s];
  i->limbo_rows = t->nlimbo - t->hlimbo;
  i->reclaimed = t->reclaimed;
  i->elements_top = t->top;
  i->writes = t->writes;

  /* A scan of the whole hash: for the tests and lpmtool, not `show lpm' */
  const struct simd_hash *h = &t->c.h;
  uint run = 0;
  i->hash_slots = h->slot ? (1ULL << h->order) : 0;
  i->hash_count = h->count;
  for (u64 k = 0; k < i->hash_slots; k++)
    if (simd_hash_at(h, k)->len)
      i->hash_run = MAX(i->hash_run, (u64) ++run);
    else
      run = 0;
}

static u64
simd_mem_control(const struct simd *t)
{
  u64 m = sizeof(struct simd);
  uint rs = simd_size(t, 0);
  m += sizeof(struct simd_node) + rs + rs * sizeof(void *);
  for (uint k = 1; k < t->levels; k++)
    m += t->c.nodes[k] * (sizeof(struct simd_node) + simd_size(t, k)) + simd_size(t, k) * sizeof(u32);
  m += t->child_slots * sizeof(void *);
  m += (u64) t->c.h.stride << t->c.h.order;
  for (uint s = 1; s <= SIMD_MAX_STRIDE; s++)
    m += t->cfree[s] * sizeof(u32);
  m += t->climbo * sizeof(struct simd_limbo);
  return m;
}

static void
simd_stats(const struct lpm_engine *e, struct lpm_stats *s)
{
  const struct simd *t = SIMD(e);
  memset(s, 0, sizeof(*s));
  s->prefixes = t->c.h.count;
  s->updates = t->updates;
  s->builds = t->builds;
  s->last_build = t->last_build;
  s->last_build_time = t->last_build_time;
  s->mem_lookup = SIMD_HEADER_SIZE + t->top * sizeof(u32);
  s->mem_control = simd_mem_control(t);
  for (uint k = 0; k < t->levels; k++)
    s->units += t->c.rows[k];
  s->retired = t->nlimbo - t->hlimbo;
  s->alloc_failures = t->alloc_failures;
  s->region_errno = t->reg->reserve_errno;
  s->region_lost = lpm_region_lost(t->reg);
}

static void
simd_show(const struct lpm_engine *e, struct cli *c, int code)
{
  const struct simd *t = SIMD(e);
  char plan[96], rows[512];
  char *p = rows, *end = rows + sizeof(rows);
  u64 inuse = simd_size(t, 0), agg = 0, free = 0;

  simd_plan_format(plan, sizeof(plan), t->stride, t->levels);
  for (uint k = 1; (k < t->levels) && (p < end); k++)
    if (t->c.nodes[k])
    {
      p += bsnprintf(p, end - p, "%s/%u:%lu", (p == rows) ? "" : " ", t->depth[k] + t->stride[k], t->c.rows[k]);
      inuse += t->c.rows[k] << t->stride[k];
      agg += t->c.aggregated[k];
    }
  if (p == rows)
    bsnprintf(rows, sizeof(rows), "none");
  for (uint s = 1; s <= SIMD_MAX_STRIDE; s++)
    free += t->nfree[s];

  cli_printf(c, code, "  Stride plan:      %s (root %u elements, rows of up to %u)", plan, simd_size(t, 0), 1U << SIMD_MAX_STRIDE);
  cli_printf(c, code, "  Rows by level:    %s", rows);
  cli_printf(c, code, "  Lookup memory:    %lu bytes in rows, %lu touched; %lu aggregated nodes without a row",
	     (u64) (inuse * sizeof(u32)), (u64) (SIMD_HEADER_SIZE + t->top * sizeof(u32)), agg);
  cli_printf(c, code, "  Row reuse:        %lu free, %u waiting for readers, %lu reclaimed",
	     free, t->nlimbo - t->hlimbo, t->reclaimed);
  cli_printf(c, code, "  Element writes:   %lu", t->writes);
}

const struct lpm_class lpm_simd_class = {
  .name = "simd",
  .variants = LPM_VARIANTS_BUILT,
  .create = simd_create,
  .free = simd_free,
  .update = simd_update,
  .remove = simd_remove,
  .build = simd_build,
  .apply = simd_apply,
  .find = simd_find,
  .dump = simd_dump,
  .lookup4 = simd_lookup4,
  .lookup6 = simd_lookup6,
  .bulk4 = {
    [LPM_VAR_SCALAR] = simd_e_bulk4_scalar,
    [LPM_VAR_AVX2] = LPM_IF_AVX2(simd_e_bulk4_avx2),
    [LPM_VAR_AVX512] = LPM_IF_AVX512(simd_e_bulk4_avx512),
  },
  .bulk6 = {
    [LPM_VAR_SCALAR] = simd_e_bulk6_scalar,
    [LPM_VAR_AVX2] = LPM_IF_AVX2(simd_e_bulk6_avx2),
    [LPM_VAR_AVX512] = LPM_IF_AVX512(simd_e_bulk6_avx512),
  },
  .stats = simd_stats,
  .show = simd_show,
};

LPM_CLASS_REGISTER(lpm_simd_class);
