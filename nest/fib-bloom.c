/*
 *	bloombird -- Counting Bloom filters beside BIRD FIBs
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: FIB Bloom filters
 *
 * Every &fib carries a &fib_bloom: a count of prefixes per prefix length
 * (always kept) and, once the FIB hash has grown to order
 * %FIB_BLOOM_MIN_ORDER (some 2k entries; below that the hash chains sit in
 * cache and a filter only costs), a counting Bloom filter of its keys.
 * fib_find() tests the filter first and skips the chain walk on a negative;
 * longest-prefix match skips the lengths that hold no prefix and tests the
 * remaining ones in the filter before any chain is walked.
 *
 * Shape. The filter is blocked: each key hashes to one 64-byte block (one
 * cache line) of 128 4-bit counters and sets @hashes counters in it, taken
 * from independent 6-bit slices of the hash, alternately in the block's
 * two halves (FIB_BLOOM_SLOTS). One line per key
 * means one cache miss per test, which matters more than the slightly
 * higher false-positive rate of blocked filters: in BIRD 2 the hash chains
 * are short (order up to 24), so a test that costs more than one miss would
 * eat the whole gain. Four-bit counters overflow with negligible
 * probability; a counter that reaches 15 stays there (never decremented),
 * so a delete can never produce a false negative, and the next rebuild
 * makes it exact again.
 *
 * Query plane. Tests only need to know which counters are non-zero, so
 * beside the counters each block has 128 bits (16 bytes, four blocks to a
 * line), set when a counter leaves zero and cleared when it returns to it;
 * every test reads these, never the counters. A full IPv4 table's
 * counters (some 5-10 MB) fall out of a shared L3 as soon as the
 * neighbours on the host get busy, its query plane (a quarter of that)
 * mostly stays: with the counters alone, the gain of misses through the
 * filter shrank to little once the host was busy; reading the query plane
 * kept it. An update with the filter active touches one more line, and
 * only while a counter crosses zero.
 *
 * Key. A 64-bit mix (the finalizer of MurmurHash3, applied to the prefix,
 * length and RD words) of the parts of the &net_addr that BIRD's own chain
 * hash uses: ROA, flow and SADR nets are keyed by (dst) prefix and length
 * only, so ROA checks can ask the filter without knowing ASN or max length.
 *
 * Size. A counting filter cannot be resized in place, so it is rebuilt from
 * the nodes, and sized for the most entries the FIB holds before its next
 * rehash (twice its hash size) at @counters counters per entry. The rebuild
 * rides on fib_rehash(): its walk feeds every node to the new filter while
 * the node is in cache, and filter blocks are prefetched in batches, so the
 * filter costs the growth of a table little beyond what the rehash costs
 * anyway (a separate walk per rebuild cost more than the inserts themselves).
 * While a table grows it has @counters to 2 x @counters counters (half a
 * byte each, and a bit of query plane) per entry: with the defaults (10
 * counters, 5 hashes) 6.25 to 12.5 bytes per entry and a false-positive
 * rate of 1.4% down to 0.13% (blocked-filter estimate; `show fib' and
 * tests/bench print the measured rate). A FIB at the top hash order (2^24 buckets) does not rehash any
 * more; its filter is rebuilt by a walk of its own when it overfills.
 */

/**
 * DOC: Upkeep policy
 *
 * A filter pays on lookups that miss (each negative saves a chain walk,
 * and an LPM walk skips most lengths) and costs on every insert and delete
 * (a line of counters to update, guards to count) and in memory. BGP
 * tables import far more than they are asked, so by default a FIB keeps no
 * filter: it starts %FIB_BLOOM_DORMANT, where only the per-length counts
 * are kept (one increment per update) and fib_find() is stock's chain walk,
 * inline while the FIB's gate is clear (fib_find_gate()); a miss calls
 * fib_bloom_find_missed() out of line to count it, a hit calls nothing.
 *
 * Misses (fib_find() misses, chain probes of LPM walks that found nothing,
 * lookups of a table with a trie that its trie answered for want of a
 * filter: fib_bloom_trie_leads()) and updates are counted in @pol_miss and @pol_upd, both halved whenever
 * their sum passes half the entries (plus a floor of 4096), so the policy
 * sees recent history at the table's own scale. Every
 * %FIB_BLOOM_POLICY_EVERY events fib_bloom_policy() decides: a dormant FIB
 * of at least %FIB_BLOOM_MIN_ORDER gets its filter, built in one batched,
 * prefetched pass over the nodes, once 4 x misses > entries / 2 + 2 x
 * updates; an active one drops it once updates > entries / 2 + 4 x misses.
 * The two conditions cannot hold together, so the state does not flap.
 *
 * An active filter is asked by fib_find() only while it answers. Asking,
 * calls and misses are counted in windows of %FIB_BLOOM_POLICY_EVERY calls,
 * and the next window asks too if at least half of this one's calls
 * missed; not asking, fib_find() runs the same code as without a filter
 * (hits count nothing), and after %FIB_BLOOM_REASK misses it asks again
 * for a window (after twice as many each time such a window finds misses
 * rare, up to %FIB_BLOOM_REASK_MAX). With rare misses, few windows ask;
 * with a minority, a few; with most calls missing, nearly all.
 * LPM walks always use an active filter: there most tested lengths miss
 * (a dormant FIB's LPM walks probe the chains of the lengths in use, and
 * count each probe that misses). fib_bloom_pin() keeps a filter active for
 * tests and tools. No state changes an answer: a dormant FIB answers with
 * stock's walks, an active one with the filter's, which never gives a
 * false negative.
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "nest/fib-roa.h"
#include "lib/resource.h"
#include "lib/string.h"

/**
 * fib_bloom_config_default - default filter configuration
 * @c: configuration to fill
 *
 * Enables the filter with %FIB_BLOOM_DEF_HASHES hashes and
 * %FIB_BLOOM_DEF_COUNTERS counters per entry; every FIB and table
 * configuration starts from these.
 */
void
fib_bloom_config_default(struct fib_bloom_config *c)
{
  c->enabled = 1;
  c->hashes = FIB_BLOOM_DEF_HASHES;
  c->counters = FIB_BLOOM_DEF_COUNTERS;
}

/*
 *	Counters
 */

static void
bloom_insert(struct fib_bloom *b, u64 h)
{
  u64 *blk = (u64 *) fib_bloom_block(b, h);
  u64 *qblk = (u64 *) fib_bloom_qblock(b, h);
  u64 x = FIB_BLOOM_SLOTS(h);

  for (uint i = 0; i < b->cf.hashes; i++)
  {
    uint pos = FIB_BLOOM_SLOT(x, i);
    uint c = fib_bloom_counter(blk, pos);
    if (c == FIB_BLOOM_CMAX)
      continue;

    if (!c)
      qblk[pos >> 6] |= 1ULL << (pos & 63);

    blk[pos >> 4] += 1ULL << ((pos & 15) * 4);
    if (c + 1 == FIB_BLOOM_CMAX)
      b->saturated++;
  }
  b->items++;
}

static void
bloom_remove(struct fib_bloom *b, u64 h)
{
  u64 *blk = (u64 *) fib_bloom_block(b, h);
  u64 *qblk = (u64 *) fib_bloom_qblock(b, h);
  u64 x = FIB_BLOOM_SLOTS(h);

  for (uint i = 0; i < b->cf.hashes; i++)
  {
    uint pos = FIB_BLOOM_SLOT(x, i);
    uint c = fib_bloom_counter(blk, pos);

    /* A saturated counter may undercount its keys: keep it (no false negative) */
    if (c == FIB_BLOOM_CMAX)
      continue;

    ASSERT_DIE(c > 0);
    blk[pos >> 4] -= 1ULL << ((pos & 15) * 4);
    if (c == 1)
      qblk[pos >> 6] &= ~(1ULL << (pos & 63));
  }
  b->items--;
}


/*
 *	Life cycle
 */

static inline void
len_inc(struct fib_bloom *b, uint len)
{
  if (!b->len_count[len]++)
    b->len_map[len >> 6] |= 1ULL << (len & 63);
}

/* One test covers both rare cases: the last prefix of a length, and a bug */
static inline void
len_dec(struct fib_bloom *b, uint len)
{
  u32 *c = &b->len_count[len];
  if (*c <= 1)
  {
    ASSERT_DIE(*c);
    b->len_map[len >> 6] &= ~(1ULL << (len & 63));
  }
  (*c)--;
}

/**
 * fib_bloom_init - attach filter state to a new FIB
 * @f: FIB being initialized
 *
 * Allocates the &fib_bloom of @f from its pool with the default
 * configuration. A new FIB starts %FIB_BLOOM_DORMANT: per-length counts are
 * kept, but there is no filter until the upkeep policy builds one.
 */
void
fib_bloom_init(struct fib *f)
{
  struct fib_bloom *b = mb_allocz(f->fib_pool, sizeof(struct fib_bloom));
  fib_bloom_config_default(&b->cf);
  b->fib = f;
  b->state = FIB_BLOOM_DORMANT;
  b->pol_countdown = b->find_left = FIB_BLOOM_POLICY_EVERY;
  b->reask = FIB_BLOOM_REASK;
  f->bloom = b;
}

/**
 * fib_find_gate - set and clear bits of a FIB's find gate
 * @f: the FIB
 * @set: FIB_FIND_* bits to set
 * @clear: FIB_FIND_* bits to clear
 *
 * The only writer of @find_gate and @find_type after fib_init(). fib_find()
 * walks a FIB of IPv4 or IPv6 prefixes inline while @find_type equals the
 * query's type, so @find_type is the FIB's address type while no bit is
 * set, else 0, which is no address type: one compare the hit path needs
 * anyway (the query's type) tests the gate too.
 */
void
fib_find_gate(struct fib *f, uint set, uint clear)
{
  f->find_gate = (f->find_gate | set) & ~clear;
  f->find_type = f->find_gate ? 0 : f->addr_type;
}

/* Whether fib_find() asks the filter: the FIB's FIB_FIND_FILTER bit */
static inline void
bloom_ask(struct fib_bloom *b, int ask)
{
  fib_find_gate(b->fib, ask ? FIB_FIND_FILTER : 0, ask ? 0 : FIB_FIND_FILTER);
}

/**
 * fib_bloom_asked - whether fib_find() asks the filter
 * @b: filter state
 *
 * Returns non-zero while the FIB's %FIB_FIND_FILTER bit is set, that is
 * while fib_find() goes through fib_bloom_find() rather than stock's walk.
 */
int
fib_bloom_asked(const struct fib_bloom *b)
{
  return b->fib->find_gate & FIB_FIND_FILTER;
}

static void
bloom_release(struct fib_bloom *b)
{
  fib_lpm_guards_free(b);
  if (b->mem)
    mb_free(b->mem);

  b->mem = NULL;
  b->blocks = b->bits = NULL;
  bloom_ask(b, 0);
  b->nblocks = b->capacity = b->items = b->saturated = 0;
}

/**
 * fib_bloom_free - free a FIB's filter state
 * @f: FIB being freed
 *
 * Drops the ROA index, the filter and its guards, and the &fib_bloom
 * itself. Does nothing if @f has no filter state.
 */
void
fib_bloom_free(struct fib *f)
{
  if (!f->bloom)
    return;

  fib_roa_free(f);
  bloom_release(f->bloom);
  mb_free(f->bloom);
  f->bloom = NULL;
}

/* Add the batched keys, their blocks prefetched first: overlaps the misses */
static void
bloom_flush_batch(struct fib_bloom *b)
{
  for (uint i = 0; i < b->batch_n; i++)
  {
    __builtin_prefetch(fib_bloom_block(b, b->batch[i]), 1);
    __builtin_prefetch(fib_bloom_qblock(b, b->batch[i]), 1);
  }

  for (uint i = 0; i < b->batch_n; i++)
    bloom_insert(b, b->batch[i]);

  b->batch_n = 0;
}

/**
 * fib_bloom_rebuild_begin - start building the filter anew
 * @f: FIB whose hash is being (re)built
 *
 * Drops the old filter and, if the FIB is large enough and filters are
 * enabled, allocates an empty one for twice the FIB's hash size (the most
 * entries it holds before its next rehash), or twice its entries if more.
 * The nodes are then fed by fib_bloom_rebuild_node(): fib_rehash() does it
 * in its own walk, while each node is in cache anyway. Returns whether
 * there is a filter to feed, so that a rehash without one (a table that only
 * imports) calls nothing per node.
 */
int
fib_bloom_rebuild_begin(struct fib *f)
{
  struct fib_bloom *b = f->bloom;
  bloom_release(b);
  b->rebuilding = 0;

  if ((b->state != FIB_BLOOM_ACTIVE) || (f->hash_order < FIB_BLOOM_MIN_ORDER))
    return 0;

  /* fib_get() may call us with the new node linked but not yet counted */
  u64 cap = MAX(2 * (u64) f->hash_size, FIB_BLOOM_HEADROOM((u64) f->entries + 1));
  u64 nb = (cap * b->cf.counters + FIB_BLOOM_BLOCK_SLOTS - 1) / FIB_BLOOM_BLOCK_SLOTS;

  b->mem = mb_allocz(f->fib_pool, nb * (64 + 16) + 64);
  b->blocks = (u64 *) BIRD_ALIGN((uintptr_t) b->mem, 64);
  b->bits = b->blocks + 8 * nb;
  b->nblocks = nb;
  b->capacity = cap;
  b->rebuilds++;
  b->rebuilding = 1;
  b->batch_n = 0;
  fib_lpm_guards_init(f);
  return 1;
}

/**
 * fib_bloom_rebuild_node - feed one node to a filter being rebuilt
 * @f: FIB
 * @a: the node's net
 *
 * Called for every node between fib_bloom_rebuild_begin() and
 * fib_bloom_rebuild_end(); does nothing if no rebuild is in progress. Keys
 * are batched so that their filter blocks are prefetched together, and the
 * net is counted in the guards at once.
 */
void
fib_bloom_rebuild_node(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  if (!b->rebuilding)
    return;

  b->batch[b->batch_n++] = fib_bloom_hash(a);
  if (b->batch_n == FIB_BLOOM_BATCH)
    bloom_flush_batch(b);

  fib_lpm_guards_account(b, a, 1);
}

/**
 * fib_bloom_rebuild_end - finish a filter rebuild
 * @f: FIB
 *
 * Adds the keys still batched and lets fib_find() ask the new filter; the
 * next window of calls decides whether it goes on asking. Does nothing if
 * no rebuild is in progress.
 */
void
fib_bloom_rebuild_end(struct fib *f)
{
  struct fib_bloom *b = f->bloom;
  if (!b->rebuilding)
    return;

  bloom_flush_batch(b);
  b->rebuilding = 0;
  bloom_ask(b, 1);		/* The next window decides */
}

/**
 * fib_bloom_resize - rebuild the filter from the nodes
 * @f: FIB
 *
 * For changes that do not come with a rehash: configuration, and a filter
 * overfilled at the top hash order.
 */
void
fib_bloom_resize(struct fib *f)
{
  fib_bloom_rebuild_begin(f);
  if (!f->bloom->rebuilding)
    return;

  /* fib_chain(): during an incremental rehash, both tables' nodes */
  uint chains = fib_chains(f);
  for (uint i = 0; i < chains; i++)
  {
    if (i + 16 < chains)
      __builtin_prefetch(fib_chain(f, i + 16));

    for (struct fib_node *e = fib_chain(f, i); e; e = e->next)
      fib_bloom_rebuild_node(f, e->addr);
  }

  fib_bloom_rebuild_end(f);
}

/*
 * Above its capacity by a margin: a growing FIB rehashes (and rebuilds the
 * filter) first, so this only fires at the top hash order. Shrinking needs
 * no check here: the FIB rehashes down, and the filter with it.
 */
static inline int
bloom_overfull(const struct fib_bloom *b)
{ return b->items > b->capacity + b->capacity / 4; }

/* Enter @state, building or dropping the filter; the policy starts afresh */
static void
bloom_set_state(struct fib *f, uint state)
{
  struct fib_bloom *b = f->bloom;

  b->state = state;
  b->pol_miss = b->pol_upd = 0;
  b->find_miss = 0;
  b->find_left = FIB_BLOOM_POLICY_EVERY;
  b->reask = FIB_BLOOM_REASK;
  b->reasked = 0;
  fib_bloom_resize(f);
  fib_roa_state(f);
}

/**
 * fib_bloom_configure - apply a new filter configuration
 * @f: FIB
 * @c: new configuration
 *
 * Does nothing if @c equals the current configuration. Otherwise
 * `bloom off' drops the filter, enabling a disabled one returns it to the
 * policy (or to an active filter if pinned), and other changes rebuild the
 * filter from the nodes.
 */
void
fib_bloom_configure(struct fib *f, const struct fib_bloom_config *c)
{
  struct fib_bloom *b = f->bloom;

  if (!memcmp(&b->cf, c, sizeof(struct fib_bloom_config)))
    return;

  b->cf = *c;
  if (!c->enabled)
    bloom_set_state(f, FIB_BLOOM_OFF);
  else if (b->state == FIB_BLOOM_OFF)
    bloom_set_state(f, b->pinned ? FIB_BLOOM_ACTIVE : FIB_BLOOM_DORMANT);
  else
    fib_bloom_resize(f);
}

/**
 * fib_bloom_pin - keep the filter active whatever the policy says
 * @f: FIB
 * @pin: 1 to pin (the filter is built now), 0 to return to the policy
 *
 * For tests and tools that check or measure the filter paths themselves.
 */
void
fib_bloom_pin(struct fib *f, int pin)
{
  struct fib_bloom *b = f->bloom;
  b->pinned = pin;

  if (pin && (b->state == FIB_BLOOM_DORMANT))
    bloom_set_state(f, FIB_BLOOM_ACTIVE);
}

/**
 * fib_bloom_find_window - a window of fib_find() calls through the filter is over
 * @b: filter state
 *
 * fib_find() asks an active filter in the next window too if at least
 * half of the calls of this one missed; otherwise it stops asking until
 * @reask misses have passed. A hit through the filter pays the filter's
 * line and then the chain walk, a miss saves the walk: with only a
 * minority of misses, asking paid on single IPv4 lookups but made IPv6
 * lookups and back-to-back ones slower than stock's. A
 * window that asked again and found misses rare doubles @reask (up to
 * %FIB_BLOOM_REASK_MAX), so a steady mix of hits and some misses asks
 * rarely; any other window resets it. Then the policy runs.
 */
void
fib_bloom_find_window(struct fib_bloom *b)
{
  int ask = fib_bloom_active(b) && (2 * b->find_miss >= FIB_BLOOM_POLICY_EVERY);

  if (!ask && b->reasked)
    b->reask = MIN(2 * b->reask, FIB_BLOOM_REASK_MAX);
  else
    b->reask = FIB_BLOOM_REASK;

  bloom_ask(b, ask);
  b->reasked = 0;
  b->find_miss = 0;
  b->find_left = FIB_BLOOM_POLICY_EVERY;
  fib_bloom_policy(b->fib);
}

/**
 * fib_bloom_find_missed - fib_find() without the filter found nothing
 * @f: FIB
 *
 * Out of line: fib_find() that does not ask the filter calls nothing on a
 * hit and this on a miss, the event that may make a filter pay: it counts
 * for the policy, and after @reask of them an active filter is
 * asked again for a window. It takes the FIB, not its &fib_bloom: then
 * fib_find() holds no pointer to the latter across its walk (one register
 * saved and restored less per call).
 */
void
fib_bloom_find_missed(struct fib *f)
{
  struct fib_bloom *b = f->bloom;
  b->pol_miss++;
  if (fib_bloom_active(b) && (++b->find_miss >= b->reask))
  {
    bloom_ask(b, 1);
    b->reasked = 1;
    b->find_miss = 0;
    b->find_left = FIB_BLOOM_POLICY_EVERY;
  }

  fib_bloom_tick(b);
}

/**
 * fib_bloom_policy - the periodic upkeep decision
 * @f: FIB
 *
 * Called every %FIB_BLOOM_POLICY_EVERY events by fib_bloom_tick(); see
 * the DOC section "Upkeep policy" for the rules.
 */
void
fib_bloom_policy(struct fib *f)
{
  struct fib_bloom *b = f->bloom;
  b->pol_countdown = FIB_BLOOM_POLICY_EVERY;

  if (b->state == FIB_BLOOM_OFF)
    return;

  u64 e = f->entries;
  if (b->pol_miss + b->pol_upd > e / 2 + 4096)
  {
    b->pol_miss /= 2;
    b->pol_upd /= 2;
  }

  if (b->pinned)
    return;

  if ((b->state == FIB_BLOOM_DORMANT) && (f->hash_order >= FIB_BLOOM_MIN_ORDER) &&
      (4 * b->pol_miss > e / 2 + 2 * b->pol_upd))
  {
    b->activations++;
    bloom_set_state(f, FIB_BLOOM_ACTIVE);
  }
  else if ((b->state == FIB_BLOOM_ACTIVE) && (b->pol_upd > e / 2 + 4 * b->pol_miss))
  {
    b->drops++;
    bloom_set_state(f, FIB_BLOOM_DORMANT);
  }
}

/*
 * The filter's share of an insert or delete, out of line: inlined into
 * fib_get() and fib_delete(), its registers made every update of a FIB
 * without a filter save and restore more registers.
 */
static __attribute__((noinline)) void
bloom_add_key(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  bloom_insert(b, fib_bloom_hash(a));
  fib_lpm_guards_account(b, a, 1);
  if (bloom_overfull(b))
    fib_bloom_resize(f);
}

static __attribute__((noinline)) void
bloom_del_key(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  bloom_remove(b, fib_bloom_hash(a));
  fib_lpm_guards_account(b, a, 0);
}

/**
 * fib_bloom_add - account for a net inserted into the FIB
 * @f: FIB
 * @a: the inserted net
 *
 * Called by fib_get() for every new node: counts the prefix length and
 * the update for the policy, adds the key to an active filter (out of
 * line, bloom_add_key()) and ticks the policy.
 */
void
fib_bloom_add(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  len_inc(b, a->pxlen);
  b->pol_upd++;

  if (fib_bloom_active(b))
    bloom_add_key(f, a);

  fib_bloom_tick(b);
}

/**
 * fib_bloom_del - account for a net deleted from the FIB
 * @f: FIB
 * @a: the net being deleted
 *
 * Uncounts the prefix length, counts the update and removes the key from
 * an active filter. fib_delete() calls this before its walk (then nothing
 * of it is live across the call: two registers fewer to save per delete)
 * and ticks the policy only once the node is gone, as the policy may build
 * the filter from the nodes.
 */
void
fib_bloom_del(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  len_dec(b, a->pxlen);
  b->pol_upd++;

  if (fib_bloom_active(b))
    bloom_del_key(f, a);
}

/**
 * fib_bloom_find - fib_find() through the filter
 * @f: FIB with an active filter
 * @a: net to find
 *
 * fib_find() calls it while the FIB's %FIB_FIND_FILTER bit is set, that
 * is while most calls miss: a negative answers without touching the chain,
 * a positive walks it. No prefetch of the bucket with the filter line: it
 * would double the lines a negative fetches and lose most of the filter's
 * gain on misses. Never inlined
 * into fib_find(): its registers would cost the hit path (stock's walk) a
 * stack frame.
 */
__attribute__((noinline)) void *
fib_bloom_find(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  u64 h = fib_bloom_hash(a);

  b->queries++;

  void *r = NULL;
  if (!fib_bloom_test_hash(b, h))
    b->negatives++;
  else if (!(r = fib_find_chain(f, a)))
    b->false_pos++;

  fib_bloom_find_seen(b, !r);
  return r;
}


/*
 *	Statistics
 */

/**
 * fib_bloom_size - memory of the filter in bytes
 * @b: filter state
 *
 * Counts each block's line of counters and its query-plane bits; the
 * guards are counted by fib_lpm_guards_size().
 */
uint
fib_bloom_size(const struct fib_bloom *b)
{ return b->nblocks * (64 + 16); }

/**
 * fib_bloom_fill - share of the filter's counters that are non-zero
 * @b: filter state
 *
 * Counts the query plane's set bits; 0 without an active filter. For
 * the statistics of `show fib'.
 */
double
fib_bloom_fill(const struct fib_bloom *b)
{
  if (!fib_bloom_active(b))
    return 0;

  u64 nz = 0;
  for (uint i = 0; i < b->nblocks * 2; i++)
    nz += __builtin_popcountll(b->bits[i]);

  return (double) nz / ((double) b->nblocks * FIB_BLOOM_BLOCK_SLOTS);
}

/**
 * fib_bloom_bits_exact - check the query plane against the counters
 * @b: filter state
 *
 * For tests: whether every bit of the query plane is set exactly when its
 * counter is non-zero (1 also without a filter).
 */
int
fib_bloom_bits_exact(const struct fib_bloom *b)
{
  for (uint i = 0; fib_bloom_active(b) && (i < b->nblocks); i++)
    for (uint pos = 0; pos < FIB_BLOOM_BLOCK_SLOTS; pos++)
      if (!fib_bloom_counter(b->blocks + 8 * i, pos) != !fib_bloom_bit(b->bits + 2 * i, pos))
	return 0;

  return 1;
}

/* e^-x as (1 - x/2^20)^(2^20): good to 1e-5 here, and no libm in bird */
static double
bloom_exp_neg(double x)
{
  double e = 1 - x / (1 << 20);
  for (int i = 0; i < 20; i++)
    e *= e;
  return e;
}

static double
bloom_pow(double x, uint n)
{
  double p = 1;
  while (n--)
    p *= x;
  return p;
}

/**
 * fib_bloom_fpr_predicted - expected false-positive rate of the filter
 * @b: filter state
 *
 * Models a blocked filter: a query lands in a block holding L keys, L
 * Poisson-distributed with mean items / blocks, and finds its k0 slots of
 * half 0 non-zero with probability (1 - (1 - 1/64)^(k0 L))^k0, its k1 slots
 * of half 1 likewise. Returns 0 without an active filter. For `show fib'
 * and the tests, which compare it with the measured rate.
 */
double
fib_bloom_fpr_predicted(const struct fib_bloom *b)
{
  if (!fib_bloom_active(b))
    return 0;

  /* Half 0 takes the even slots, half 1 the odd ones (FIB_BLOOM_SLOT()) */
  uint k0 = (b->cf.hashes + 1) / 2, k1 = b->cf.hashes / 2;
  double lambda = (double) b->items / b->nblocks;
  double pl = bloom_exp_neg(lambda);		/* P(L = 0) */
  double empty0 = 1, empty1 = 1, fpr = 0;

  /* One key leaves a given slot of half 0 (half 1) zero */
  double keep0 = bloom_pow(1 - 2.0 / FIB_BLOOM_BLOCK_SLOTS, k0);
  double keep1 = bloom_pow(1 - 2.0 / FIB_BLOOM_BLOCK_SLOTS, k1);

  for (uint L = 0; L < 4 * lambda + 64; L++)
  {
    fpr += pl * bloom_pow(1 - empty0, k0) * bloom_pow(1 - empty1, k1);
    pl *= lambda / (L + 1);
    empty0 *= keep0;
    empty1 *= keep1;
  }

  return fpr;
}
