/*
 *	bloombird -- The FIB accelerator: life cycle and upkeep policy
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: The FIB accelerator
 *
 * Every &fib carries a &fib_bloom, and this file alone creates, builds,
 * updates and frees its parts: a count of prefixes per length (always kept,
 * fib-lengths.h); once the FIB hash has grown to order %FIB_BLOOM_MIN_ORDER
 * (some 2k entries; below that the hash chains sit in cache and a filter
 * only costs) and the upkeep policy finds it pays, a counting Bloom filter
 * of its keys (fib-filter.c) with the length guards of longest-prefix
 * walks (fib-guard.c); and for a table's ROA FIB, the ROA index
 * (fib-roa.c). The parts know nothing of each other; fib_bloom_add() and
 * fib_bloom_del() hand every update to each. Lookups read them:
 * fib_find() tests the filter first and skips the chain walk on a negative
 * (fib_bloom_find()); the longest-prefix walk (fib-walk.c) skips the
 * lengths that hold no prefix and those the guards rule out, and tests the
 * rest in the filter before any chain is walked.
 *
 * Size. A counting filter cannot be resized in place, so it is rebuilt from
 * the nodes, and sized for the most entries the FIB holds before its next
 * rehash (twice its hash size) at @counters counters per entry. The rebuild
 * rides on fib_rehash(): its walk feeds every node to the new filter while
 * the node is in cache, and filter blocks are prefetched in batches, so the
 * filter costs the growth of a table little beyond what the rehash costs
 * anyway (a separate walk per rebuild cost more than the inserts themselves).
 * While a table grows it has @counters to 2 x @counters counters per entry.
 * A FIB at the top hash order (2^24 buckets) does not rehash any more; its
 * filter is rebuilt by a walk of its own when it overfills.
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
 * fib_bloom_config_default - default accelerator configuration
 * @c: configuration to fill
 *
 * Enables the accelerator with a filter of %FIB_FILTER_DEF_HASHES hashes
 * and %FIB_FILTER_DEF_COUNTERS counters per entry; every FIB and table
 * configuration starts from these.
 */
void
fib_bloom_config_default(struct fib_bloom_config *c)
{
  c->enabled = 1;
  c->hashes = FIB_FILTER_DEF_HASHES;
  c->counters = FIB_FILTER_DEF_COUNTERS;
}

/**
 * fib_bloom_init - attach the accelerator to a new FIB
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
 * @b: accelerator
 *
 * Returns non-zero while the FIB's %FIB_FIND_FILTER bit is set, that is
 * while fib_find() goes through fib_bloom_find() rather than stock's walk.
 */
int
fib_bloom_asked(const struct fib_bloom *b)
{
  return b->fib->find_gate & FIB_FIND_FILTER;
}

/* Drop the filter and its guards */
static void
bloom_release(struct fib_bloom *b)
{
  fib_guards_free(&b->guards);
  fib_filter_free(&b->filter);
  bloom_ask(b, 0);
}

static void
bloom_roa_free(struct fib_bloom *b)
{
  if (b->roa)
    fib_roa_free(b->roa);
  b->roa = NULL;
}

/**
 * fib_bloom_free - free a FIB's accelerator
 * @f: FIB being freed
 *
 * Drops the ROA index, the filter and its guards, and the &fib_bloom
 * itself. Does nothing if @f has none.
 */
void
fib_bloom_free(struct fib *f)
{
  if (!f->bloom)
    return;

  bloom_roa_free(f->bloom);
  bloom_release(f->bloom);
  mb_free(f->bloom);
  f->bloom = NULL;
}

/**
 * fib_bloom_rebuild_begin - start building the filter anew
 * @f: FIB whose hash is being (re)built
 *
 * Drops the old filter and, if the FIB is large enough and the filter is
 * active, allocates an empty one for twice the FIB's hash size (the most
 * entries it holds before its next rehash), or twice its entries if more,
 * and empty guards. The nodes are then fed by fib_bloom_rebuild_node():
 * fib_rehash() does it in its own walk, while each node is in cache
 * anyway. Returns whether there is a filter to feed, so that a rehash
 * without one (a table that only imports) calls nothing per node.
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
  fib_filter_alloc(&b->filter, f->fib_pool, cap, b->cf.counters, b->cf.hashes);
  fib_guards_init(&b->guards, f, &b->lengths);
  b->rebuilds++;
  b->rebuilding = 1;
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

  fib_filter_add_batched(&b->filter, fib_key_hash(a));
  fib_guards_account(&b->guards, f, a, 1);
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

  fib_filter_flush(&b->filter);
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

/* Enter @state, building or dropping the filter; the policy starts afresh.
 * The ROA index has candidates of its own and does not follow the filter:
 * it goes with `bloom off' only. */
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

  if (state == FIB_BLOOM_OFF)
    bloom_roa_free(b);
}

/**
 * fib_bloom_configure - apply a new accelerator configuration
 * @f: FIB
 * @c: new configuration
 *
 * Does nothing if @c equals the current configuration. Otherwise
 * `bloom off' drops the filter and the ROA index, enabling a disabled one
 * returns it to the policy (or to an active filter if pinned), and other
 * changes rebuild the filter from the nodes.
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
 * @b: accelerator
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
 * The filter's and the guards' share of an insert or delete, out of line:
 * inlined into fib_get() and fib_delete(), its registers made every update
 * of a FIB without a filter save and restore more registers.
 */
static __attribute__((noinline)) void
bloom_add_key(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  fib_filter_add(&b->filter, fib_key_hash(a));
  fib_guards_account(&b->guards, f, a, 1);
  if (fib_filter_overfull(&b->filter))
    fib_bloom_resize(f);
}

static __attribute__((noinline)) void
bloom_del_key(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  fib_filter_remove(&b->filter, fib_key_hash(a));
  fib_guards_account(&b->guards, f, a, 0);
}

/**
 * fib_bloom_add - account for a net inserted into the FIB
 * @f: FIB
 * @a: the inserted net
 *
 * Called by fib_get() for every new node: counts the prefix length and
 * the update for the policy, adds the key to an active filter and its
 * guards (out of line, bloom_add_key()) and ticks the policy.
 */
void
fib_bloom_add(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  fib_lengths_inc(&b->lengths, a->pxlen);
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
 * an active filter and its guards. fib_delete() calls this before its walk
 * (then nothing of it is live across the call: two registers fewer to save
 * per delete) and ticks the policy only once the node is gone, as the
 * policy may build the filter from the nodes.
 */
void
fib_bloom_del(struct fib *f, const net_addr *a)
{
  struct fib_bloom *b = f->bloom;
  fib_lengths_dec(&b->lengths, a->pxlen);
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
  struct fib_filter *fl = &b->filter;
  u64 h = fib_key_hash(a);

  fl->queries++;

  void *r = NULL;
  if (!fib_filter_test(fl, h))
    fl->negatives++;
  else if (!(r = fib_find_chain(f, a)))
    fl->false_pos++;

  fib_bloom_find_seen(b, !r);
  return r;
}


/*
 *	ROA index
 */

/**
 * fib_bloom_roa_attach - keep a ROA index for a table's ROA FIB
 * @f: the FIB of a roa4 or roa6 table (its nodes are nets)
 *
 * From then on the first check builds the index (fib_bloom_roa()).
 */
void
fib_bloom_roa_attach(struct fib *f)
{
  if (net_val_match(f->addr_type, NB_ROA))
    f->bloom->roa_nets = FIB_ROA_OWN;
}

/* A prefix with more ROAs than the index holds: the index is dropped for
 * good, and checks walk the filter and the chains (exact, only slower) */
static void
bloom_roa_give_up(struct fib_bloom *b, const net_addr *roa)
{
  log(L_WARN "ROA index dropped: more than %u ROAs of the prefix of %N; ROA checks walk the FIB instead",
      FIB_ROA_MAX_SHARED, roa);
  bloom_roa_free(b);
  b->roa_nets = FIB_ROA_NONE;
}

/**
 * fib_bloom_roa - the ROA index of an attached FIB, built if none
 * @f: ROA FIB
 *
 * Called by net_roa_check(), outside any FIB update. Returns the index, or
 * NULL if the FIB is not attached, has `bloom off' or its index was given
 * up.
 */
struct fib_roa *
fib_bloom_roa(struct fib *f)
{
  struct fib_bloom *b = f->bloom;
  const net_addr *over = NULL;

  if (!b->roa && fib_bloom_roa_own(b) && !(b->roa = fib_roa_new(f, &over)))
    bloom_roa_give_up(b, over);

  return b->roa;
}

/**
 * fib_bloom_roa_changed - a ROA net's valid route appeared or went
 * @f: ROA FIB of a table
 * @roa: the ROA net
 * @valid: it has a valid best route now (and had none), or the reverse
 *
 * Called by rt_lpm_net_changed() from rte_announce(); does nothing while
 * the FIB has no index.
 */
void
fib_bloom_roa_changed(struct fib *f, const net_addr *roa, int valid)
{
  struct fib_bloom *b = f->bloom;

  if (b->roa && !fib_roa_update(b->roa, f, roa, valid))
    bloom_roa_give_up(b, roa);
}
