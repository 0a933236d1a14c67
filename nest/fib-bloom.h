/*
 *	bloombird -- The FIB accelerator: a FIB's filter, guards, counts and ROA index
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_BLOOM_H_
#define _BIRD_FIB_BLOOM_H_

#include "nest/bird.h"
#include "nest/fib-accel-types.h"
#include "nest/fib-key.h"
#include "nest/fib-lengths.h"
#include "nest/fib-filter.h"
#include "nest/fib-guard.h"

struct fib;
struct fib_roa;
struct rtable_config;
struct cli;

#define FIB_BLOOM_MIN_ORDER	11	/* No filter below this FIB hash order */
#define FIB_BLOOM_HEADROOM(n)	((n) * 2)	/* Capacity built for n entries */

void fib_bloom_config_default(struct fib_bloom_config *c);

/* Upkeep policy (fib-bloom.c, DOC "Upkeep policy") */
enum fib_bloom_state {
  FIB_BLOOM_OFF = 0,			/* `bloom off': stock code paths */
  FIB_BLOOM_DORMANT,			/* No filter; lookups and updates are counted */
  FIB_BLOOM_ACTIVE,			/* Filter and guards kept up to date */
};

#define FIB_BLOOM_POLICY_EVERY	256	/* Events between policy checks */

/*
 * Bits of struct fib's find_gate. While none is set, fib_find() is stock's
 * walk of one hash table, inline; each bit belongs to the code that sets
 * and clears it through fib_find_gate().
 */
#define FIB_FIND_FILTER		1	/* fib_find() asks the filter (fib-bloom.c) */
#define FIB_FIND_REHASH		2	/* A rehash is in progress (fib-rehash.c) */

void fib_find_gate(struct fib *f, uint set, uint clear);

#define FIB_BLOOM_REASK		32	/* Misses that make fib_find() ask an active filter again */
#define FIB_BLOOM_REASK_MAX	4096	/* ... after windows that asked again in vain, at most */

/* What ROA index a FIB keeps (@roa_nets) */
enum fib_roa_attached {
  FIB_ROA_NONE = 0,			/* None: not a table's ROA FIB, or given up */
  FIB_ROA_OWN,				/* From the first check, with its own block masks */
};

/*
 * The accelerator of one FIB, its one hook (&fib.bloom): the per-length
 * counts (always), the filter and the guards (while the policy keeps
 * them), a ROA table's ROA index, and the policy's counters. Only
 * fib-bloom.c builds, updates and frees its parts; lookups read them.
 * Allocated from the FIB's pool.
 */
struct fib_bloom {
  struct fib *fib;			/* The FIB this belongs to */
  struct fib_bloom_config cf;		/* Configured shape */
  u8 state;				/* enum fib_bloom_state */
  u8 pinned;				/* Kept active whatever the policy says (tests, tools) */
  u8 rebuilding;			/* Between rebuild_begin() and rebuild_end() */
  u8 reasked;				/* This window asks because of misses */
  u8 roa_nets;				/* enum fib_roa_attached */
  u32 pol_countdown;			/* Events until the next policy check */
  u32 find_left, find_miss;		/* fib_find() calls left in this window, misses in it */
  u32 reask;				/* Misses that make fib_find() ask the filter again */
  u64 pol_miss;				/* Chain probes that found nothing (decayed) */
  u64 pol_upd;				/* Inserts and deletes (decayed) */
  struct fib_filter filter;		/* The filter (fib-filter.c) */
  u32 rebuilds;				/* Times the filter was (re)built */
  u32 activations, drops;		/* Policy decisions taken */
  struct fib_roa *roa;			/* ROA index (fib-roa.c); NULL: none */
  struct fib_guards guards;		/* LPM guards, with the filter (fib-guard.c) */
  struct fib_lengths lengths;		/* Prefixes per length (fib-lengths.h) */
};

/* Life cycle, called from rt-fib.c */
void fib_bloom_init(struct fib *f);
void fib_bloom_free(struct fib *f);
void fib_bloom_resize(struct fib *f);		/* Rebuild from the nodes */

/* fib_rehash() rebuilds the filter in its own walk over the nodes */
int fib_bloom_rebuild_begin(struct fib *f);	/* 0: no filter to feed */
void fib_bloom_rebuild_node(struct fib *f, const net_addr *a);
void fib_bloom_rebuild_end(struct fib *f);
void fib_bloom_add(struct fib *f, const net_addr *a);	/* After an insert */
void fib_bloom_del(struct fib *f, const net_addr *a);	/* Before a delete; fib_bloom_tick() after it */
void fib_bloom_configure(struct fib *f, const struct fib_bloom_config *c);
void fib_bloom_pin(struct fib *f, int pin);	/* Keep the filter active (tests, tools) */
void fib_bloom_policy(struct fib *f);		/* Periodic upkeep decision */
void *fib_bloom_find(struct fib *f, const net_addr *a);	/* fib_find() through the filter */

/* A table's ROA index (fib-roa.c), kept by the accelerator */
void fib_bloom_roa_attach(struct fib *f);
struct fib_roa *fib_bloom_roa(struct fib *f);
void fib_bloom_roa_changed(struct fib *f, const net_addr *roa, int valid);

static inline int fib_bloom_active(const struct fib_bloom *b)
{ return fib_filter_present(&b->filter); }

/* A ROA FIB of a table: its ROA index answers checks, filter or not */
static inline int fib_bloom_roa_own(const struct fib_bloom *b)
{ return (b->roa_nets == FIB_ROA_OWN) && (b->state != FIB_BLOOM_OFF); }

int fib_bloom_asked(const struct fib_bloom *b);	/* fib_find() asks the filter */

/* One event for the policy: a lookup call or an update */
static inline void
fib_bloom_tick(struct fib_bloom *b)
{
  if (!--b->pol_countdown)
    fib_bloom_policy(b->fib);
}

/*
 * A lookup in a table with a trie (net_route(), net_roa_check()): with a
 * filter its walk leads (the guards' masks leave a few lengths to test, and
 * it is faster than the trie walk for every query kind), without one the
 * trie does, and the lookup counts as a probe missed, so that the policy
 * builds the filter once such lookups come often enough to pay for it.
 * A ROA table's checks go to its ROA index (fib-roa.c), filter or not.
 */
static inline int
fib_bloom_trie_leads(struct fib_bloom *b)
{
  if (fib_bloom_active(b) || fib_bloom_roa_own(b))
    return 0;

  if (b->state == FIB_BLOOM_DORMANT)
  {
    b->pol_miss++;
    fib_bloom_tick(b);
  }
  return 1;
}

/* A chain probe of a lookup found nothing (the filter could have said so) */
static inline void
fib_bloom_probe_missed(struct fib_bloom *b)
{ b->pol_miss++; }

void fib_bloom_find_window(struct fib_bloom *b);
void fib_bloom_find_missed(struct fib *f);	/* fib_find() without the filter found nothing */

/* fib_find() through the filter: calls and misses counted in windows */
static inline void
fib_bloom_find_seen(struct fib_bloom *b, int miss)
{
  if (miss)
  {
    b->find_miss++;
    b->pol_miss++;
  }

  if (!--b->find_left)
    fib_bloom_find_window(b);
}

/**
 * fib_bloom_test - a filter test of a lookup
 * @b: accelerator with an active filter
 * @h: key
 *
 * Counts the test for the statistics, and a negative as a probe that would
 * have missed for the policy.
 */
static inline int
fib_bloom_test(struct fib_bloom *b, u64 h)
{
  b->filter.queries++;
  if (fib_filter_test(&b->filter, h))
    return 1;

  b->filter.negatives++;
  b->pol_miss++;
  return 0;
}

/* CLI: show fib [<table>] */
void fib_bloom_show(struct cli *c, struct rtable_config *tc);

#endif
