/*
 *	bloombird -- The dpcpe LPM engine: hint bytes
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe hints
 *
 * A lookup of the paper's scheme hashes and filter-tests every level, longest
 * first: at full size that is a cache line per level per address (8 filter
 * words for IPv6), most of them for levels that hold nothing near the
 * address, and on a core that keeps only so many misses in flight the lines,
 * not the instructions, set the rate. The direct array already names a
 * region of the address space for each address (its first @dbits bits), so
 * beside each array entry we keep one hint byte saying which levels hold
 * entries in that region: bit (i mod 8) for the level of index i, shortest
 * first. A random IPv6 address falls in a /16 that holds nothing and is
 * answered by the array alone; an IPv4 address tests the /32 level only in
 * the few /20s that hold prefixes longer than /24.
 *
 * The writer keeps, per array entry and bit, a count of the live expanded
 * entries behind it (u16, control memory). A count that reaches its maximum
 * stays there, so the bit stays set: a set bit may be stale, a clear one
 * never is. The bit is set before an entry is stored (dpcpe_level_insert())
 * and cleared after the last entry is gone (dpcpe_level_delete()); capture
 * and release only change values and leave the counts alone; a table
 * resize moves entries without counting them (dpcpe_hint_copy()). Each
 * layout has its own hints, built with its levels and retired with them.
 */

#include "nest/bird.h"
#include "nest/lpm-dpcpe.h"

#define HINT_MAX	0xffff		/* Saturated: the bit stays */

static inline u64
hint_index(const struct dpcpe_level *l, struct dpcpe_key k)
{
  return l->hbits ? (k.hi >> (64 - l->hbits)) : 0;
}

/**
 * dpcpe_hint_setup - hint bytes and counts of a layout being built
 * @x: engine
 * @s: layout with its direct array and levels set up, no entries yet
 *
 * Returns -1 if memory ran out (nothing allocated, the levels keep no hints).
 */
int
dpcpe_hint_setup(struct dpcpe *x, struct dpcpe_layout *s)
{
  s->hbits = MIN(s->dbits, DPCPE_HBITS);
  u64 n = 1ULL << s->hbits;
  s->hn = MIN(MAX(s->nlev, 1), 8);
  s->hint = dpcpe_arena_alloc(&x->la, n);
  s->hcnt = dpcpe_arena_alloc(&x->ca, n * s->hn * sizeof(u16));
  if ((s->hint == DPCPE_NOMEM) || (s->hcnt == DPCPE_NOMEM))
  {
    if (s->hint != DPCPE_NOMEM) dpcpe_arena_free(&x->la, s->hint, n);
    if (s->hcnt != DPCPE_NOMEM) dpcpe_arena_free(&x->ca, s->hcnt, n * s->hn * sizeof(u16));
    s->hint = s->hcnt = 0;
    return -1;
  }

  memset(x->base + s->hint, 0, n);
  memset(dpcpe_ptr(&x->ca, s->hcnt), 0, n * s->hn * sizeof(u16));

  for (uint i = 0; i < s->nlev; i++)
  {
    struct dpcpe_level *l = &s->lv[i];
    l->hint = s->hint;
    l->hcnt = s->hcnt;
    l->hbits = s->hbits;
    l->hidx = i % 8;
    l->hn = s->hn;
    l->d.hbit = 1 << l->hidx;
  }
  return 0;
}

/**
 * dpcpe_hint_release - free a layout's hints
 * @x: engine
 * @s: layout
 * @published: readers may see them: the bytes are retired, not freed
 */
void
dpcpe_hint_release(struct dpcpe *x, struct dpcpe_layout *s, int published)
{
  u64 n = 1ULL << s->hbits;
  if (!s->hint)
    return;

  if (published)
    dpcpe_pending_block(x, s->hint, n);
  else
    dpcpe_arena_free(&x->la, s->hint, n);
  dpcpe_arena_free(&x->ca, s->hcnt, n * s->hn * sizeof(u16));
  s->hint = s->hcnt = 0;
}

/* Entry @k appears in level @l: count it, and set its bit before it is stored */
void
dpcpe_hint_add(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k)
{
  if (!l->hint)
    return;

  u64 i = hint_index(l, k);
  u16 *c = (u16 *) dpcpe_ptr(&x->ca, l->hcnt) + i * l->hn + l->hidx;
  if (*c < HINT_MAX)
    (*c)++;

  byte *h = x->base + l->hint + i;
  if (!(*h & l->d.hbit))
    __atomic_store_n(h, *h | l->d.hbit, __ATOMIC_RELEASE);
}

/* Entry @k has left level @l: clear its bit after the last one */
void
dpcpe_hint_del(struct dpcpe *x, struct dpcpe_level *l, struct dpcpe_key k)
{
  if (!l->hint)
    return;

  u64 i = hint_index(l, k);
  u16 *c = (u16 *) dpcpe_ptr(&x->ca, l->hcnt) + i * l->hn + l->hidx;
  ASSERT_DIE(*c);
  if ((*c == HINT_MAX) || --*c)
    return;

  byte *h = x->base + l->hint + i;
  __atomic_store_n(h, *h & ~l->d.hbit, __ATOMIC_RELEASE);
}

/* A resized level's replacement takes over the hints after its entries were copied uncounted */
void
dpcpe_hint_copy(struct dpcpe_level *to, const struct dpcpe_level *from)
{
  to->hint = from->hint;
  to->hcnt = from->hcnt;
  to->hbits = from->hbits;
  to->hidx = from->hidx;
  to->hn = from->hn;
  to->d.hbit = from->d.hbit;
}

/**
 * dpcpe_hint_check - recount the hints of the current layout (tests)
 * @x: engine
 *
 * Every count equals the live entries behind it or is saturated, and every
 * hint byte has exactly the bits of its non-zero counts. Returns 1 if so.
 */
int
dpcpe_hint_check(struct dpcpe *x)
{
  struct dpcpe_layout *s = &x->s;
  if (!s->hint)
    return 1;

  u64 n = 1ULL << s->hbits;
  u32 *cnt = mb_allocz(x->e.pool, n * s->hn * sizeof(u32));

  for (uint li = 0; li < s->nlev; li++)
  {
    struct dpcpe_level *l = &s->lv[li];
    byte *own = dpcpe_level_owner(x, l);
    if ((l->hint != s->hint) || (l->hidx != li % 8) || (l->d.hbit != (1 << l->hidx)))
      goto bad;
    for (u32 sl = 0; sl < dpcpe_level_slots(l); sl++)
      if (own[sl] < DPCPE_RETIRED)
	cnt[hint_index(l, dpcpe_level_key(x, l, sl)) * s->hn + l->hidx]++;
  }

  const u16 *c = dpcpe_ptr(&x->ca, s->hcnt);
  const byte *h = x->base + s->hint;
  for (u64 i = 0; i < n; i++)
  {
    uint bits = 0;
    for (uint b = 0; b < s->hn; b++)
    {
      u32 want = cnt[i * s->hn + b], have = c[i * s->hn + b];
      if ((have != want) && (have != HINT_MAX))
	goto bad;
      if (have)
	bits |= 1 << b;
    }
    if (h[i] != bits)
      goto bad;
  }

  mb_free(cnt);
  return 1;

bad:
  mb_free(cnt);
  return 0;
}

/* Hint bytes that name some level (show lpm) */
u64
dpcpe_hint_slots_used(struct dpcpe *x)
{
  struct dpcpe_layout *s = &x->s;
  u64 used = 0;
  if (!s->hint)
    return 0;

  const byte *h = x->base + s->hint;
  for (u64 i = 0; i < (1ULL << s->hbits); i++)
    used += !!h[i];
  return used;
}
