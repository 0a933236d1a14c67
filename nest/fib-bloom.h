/*
 *	bloombird -- Counting Bloom filters beside BIRD FIBs
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_BLOOM_H_
#define _BIRD_FIB_BLOOM_H_

#include "nest/bird.h"
#include "lib/net.h"
#include "lib/string.h"
#include "nest/fib-accel-types.h"

struct fib;
struct fib_roa;
struct rtable;
struct rtable_config;
struct cli;

#define FIB_BLOOM_MAX_PXLEN	128	/* Prefix lengths 0..128 are counted */
#define FIB_BLOOM_BLOCK_SLOTS	128	/* 4-bit counters in one 64-byte block */
#define FIB_BLOOM_CMAX		15	/* Saturated (sticky) counter value */

#define FIB_BLOOM_DEF_HASHES	5
#define FIB_BLOOM_DEF_COUNTERS	10	/* Counters per entry when the filter is full */
#define FIB_BLOOM_MIN_ORDER	11	/* No filter below this FIB hash order */
#define FIB_BLOOM_HEADROOM(n)	((n) * 2)	/* Capacity built for n entries */
#define FIB_BLOOM_BATCH		32	/* Keys per prefetch batch when rebuilding */

void fib_bloom_config_default(struct fib_bloom_config *c);

/*
 * Guards tell a longest-prefix match which lengths it need not test at all.
 * The head guard at the shortest used length g counts the prefixes of
 * length >= g by the hash of their first g bits: a query whose first g bits
 * hit a zero counter has no covering prefix at all (random addresses outside
 * any routed block stop there). Then lengths go in bands of eight (band j:
 * lengths 8j to 8j+7), and each band holding prefixes keeps a length mask
 * per region: for the first 8j bits of a prefix (by their value for short
 * bases, by their hash for long ones) the lengths of the band at which
 * prefixes inside that region exist. A covering prefix of the band lies in
 * the query's own region, so one read of its mask rules out the band's
 * other lengths: a few mask reads leave a ROA check a small part of its
 * candidate lengths, so it hashes, tests and walks far fewer of them.
 * Each slot counts its prefixes (sticky at 255) and clears its mask when
 * the count drops to zero; a length whose prefixes left a slot that still
 * holds others stays set until the next rebuild. Masks may so claim too
 * much, never too little: a claimed length is tested as before.
 */
#define FIB_GUARD_MIN_HEAD	12	/* Shorter heads have too few roots to tell */
#define FIB_BAND_SHIFT		3	/* Eight lengths to a band */
#define FIB_BANDS		((FIB_BLOOM_MAX_PXLEN >> FIB_BAND_SHIFT) + 1)
#define FIB_BAND_DIRECT		16	/* Regions of up to 16 bits index their slots directly */
#define FIB_BAND_MAX_BITS	16	/* At most 64K slots (128 KB) a band */

/*
 * IPv4 (IP and ROA) FIBs replace band 1's masks (and len_map's word on
 * band 0) by an exact cover table: for each /16, bit L set iff a prefix of
 * length L < 16 covers it (a /8 sets its bit in 256 entries, a default
 * route in all).
 * These lengths then need no filter test and yield no false candidate:
 * the /8 band's mask is for the whole /8, and in a busy /8 it claims most
 * of its lengths for any query, most of them false candidates. Kept exact
 * on delete: a bit is cleared when the last node with that prefix leaves
 * (ROA tables hold one node per ROA).
 */
#define FIB_COVER_LENGTHS	16	/* Lengths 0..15, indexed by the first 16 bits */

struct fib_guard {
  u16 *cnt;				/* Counters, sticky at 0xffff; NULL: unused */
  u32 bits;				/* log2 of their number */
  u32 len;				/* g */
};

/* Length masks of one band: slot = mask of lengths | prefix count << 8 */
#define FIB_BAND_CMAX		255	/* Sticky count */

struct fib_band {
  u16 *slot;				/* NULL: no masks, every length of the band is a candidate */
  u8 bits;				/* log2 of the number of slots */
  u8 direct;				/* Indexed by the region's bits, not their hash */
};

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

/* Per-FIB state: the filter (when it pays), the per-length prefix counts
 * (always) and the policy's counters. Allocated from the FIB's pool. */
struct fib_bloom {
  struct fib *fib;			/* The FIB this belongs to */
  u64 *blocks;				/* 64-byte blocks of 128 4-bit counters; NULL: no filter */
  u64 *bits;				/* Query plane: 128 bits per block, set iff the counter is non-zero */
  void *mem;				/* Allocation behind @blocks and @bits */
  u32 nblocks;				/* Number of blocks */
  u32 capacity;				/* Entries the filter was sized for; rebuilt beyond */
  struct fib_bloom_config cf;		/* Configured shape */
  u8 state;				/* enum fib_bloom_state */
  u8 pinned;				/* Kept active whatever the policy says (tests, tools) */
  u8 rebuilding;			/* Between rebuild_begin() and rebuild_end() */
  u32 items;				/* Keys currently counted in the filter */
  u32 saturated;			/* Counters stuck at FIB_BLOOM_CMAX */
  u32 rebuilds;				/* Times the filter was (re)built */
  u32 activations, drops;		/* Policy decisions taken */
  u32 pol_countdown;			/* Events until the next policy check */
  u32 find_left, find_miss;		/* fib_find() calls left in this window, misses in it */
  u32 reask;				/* Misses that make fib_find() ask the filter again */
  u8 reasked;				/* This window asks because of them */
  u64 pol_miss;				/* Chain probes that found nothing (decayed) */
  u64 pol_upd;				/* Inserts and deletes (decayed) */
  u64 queries;				/* Filter tests */
  u64 negatives;			/* Tests answered "absent" */
  u64 false_pos;			/* Tests answered "maybe" where the chain had nothing */
  u8 batch_n;				/* Keys in @batch */
  u64 batch[FIB_BLOOM_BATCH];		/* Hashes waiting for their blocks */
  struct fib_guard head;		/* LPM head guard, with the filter */
  struct fib_band band[FIB_BANDS];	/* LPM length masks, with the filter */
  u16 *cover;				/* IPv4 lengths 0..15 covering each /16; NULL: none */
  struct fib_roa *roa;			/* ROA index (fib-roa.c); NULL: none */
  u8 roa_nets;				/* A table's ROA FIB: keep a ROA index (fib_roa_attach(), enum fib_roa_attached) */
  u64 len_map[3];			/* Bit L set iff len_count[L] > 0 */
  u32 len_count[FIB_BLOOM_MAX_PXLEN + 1];	/* Prefixes per length */
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

/* The 64-bit key hash; for ROA, flow and SADR nets only the (dst) prefix
 * and length are hashed, as in the FIB's own chain hash. */
static inline u64
fib_bloom_mix(u64 h)
{
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

static inline u64
fib_bloom_key_ip4(ip4_addr px, uint pxlen)
{ return fib_bloom_mix(((u64) ip4_to_u32(px) << 8) | pxlen); }

/*
 * Both halves multiplied by odd constants (each product is a bijection of
 * its half, and the two run in parallel), then one mix: a lookup waits for
 * one mix's latency, not two in a row. The halves are read as they lie in
 * memory, one load each (their word order is the host's, which a key may
 * have); a longest-prefix walk trims them to each candidate length with
 * one mask apiece, the mask put in the same order (fib_bloom_ip6_order()).
 */
static inline u64
fib_bloom_key_ip6_halves(u64 hi, u64 lo, uint pxlen)
{ return fib_bloom_mix((hi * 0x9fb21c651e98df25ULL) ^ (lo * 0xd6e8feb86659fd93ULL) ^ pxlen); }

static inline u64
fib_bloom_key_ip6(const ip6_addr *px, uint pxlen)
{
  u64 hi, lo;
  memcpy(&hi, &px->addr[0], sizeof(hi));
  memcpy(&lo, &px->addr[2], sizeof(lo));
  return fib_bloom_key_ip6_halves(hi, lo, pxlen);
}

/* A 64-bit number whose high half is addr[0] (or addr[2]) of an ip6_addr,
 * in the order of a 64-bit load of that half (identity on big endian) */
static inline u64
fib_bloom_ip6_order(u64 x)
{
#ifdef CPU_BIG_ENDIAN
  return x;
#else
  return (x << 32) | (x >> 32);
#endif
}

static inline u64
fib_bloom_key_rd(vpn_rd rd)
{ return fib_bloom_mix(rd_to_u64(rd) + 1); }

static inline __attribute__((always_inline)) u64
fib_bloom_hash(const net_addr *a)
{
  const net_addr_union *u = (const void *) a;

  /* The common types before the jump table: two compares, not five steps */
  if (a->type == NET_IP4)
    return fib_bloom_key_ip4(u->ip4.prefix, a->pxlen);

  if (a->type == NET_IP6)
    return fib_bloom_key_ip6(&u->ip6.prefix, a->pxlen);

  switch (a->type)
  {
  case NET_ROA4:
  case NET_FLOW4:
    return fib_bloom_key_ip4(u->ip4.prefix, a->pxlen);

  case NET_ROA6:
  case NET_FLOW6:
  case NET_IP6_SADR:
    return fib_bloom_key_ip6(&u->ip6.prefix, a->pxlen);

  case NET_VPN4:
    return fib_bloom_key_ip4(u->vpn4.prefix, a->pxlen) ^ fib_bloom_key_rd(u->vpn4.rd);

  case NET_VPN6:
    return fib_bloom_key_ip6(&u->vpn6.prefix, a->pxlen) ^ fib_bloom_key_rd(u->vpn6.rd);

  case NET_MPLS:
    return fib_bloom_mix(((u64) u->mpls.label << 8) | 0x5a);

  default: /* NET_ASPA */
    return fib_bloom_mix(((u64) u->aspa.asn << 8) | 0xa5);
  }
}

static inline int fib_bloom_active(const struct fib_bloom *b)
{ return b->blocks != NULL; }

/* What ROA index a FIB keeps (@roa_nets; fib-roa.h) */
enum fib_roa_attached {
  FIB_ROA_NONE = 0,			/* None: not a table's ROA FIB, or given up */
  FIB_ROA_OWN,				/* From the first check, with its own block masks */
};

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
 * measured faster than the trie walk for every query kind), without one the
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

static inline u32 fib_bloom_index(const struct fib_bloom *b, u64 h)
{ return ((h >> 32) * (u64) b->nblocks) >> 32; }

/* The counters of a key's block (updates) */
static inline const u64 *fib_bloom_block(const struct fib_bloom *b, u64 h)
{ return b->blocks + 8 * fib_bloom_index(b, h); }

/* The query-plane bits of a key's block (tests): a quarter of a line */
static inline const u64 *fib_bloom_qblock(const struct fib_bloom *b, u64 h)
{ return b->bits + 2 * fib_bloom_index(b, h); }

/*
 * Slots of a key inside its block: successive 6-bit slices of an
 * odd-multiplier product of the hash (whose top bits depend on all of @h),
 * slot i in the block's half i mod 2 (counters 0-63 or 64-127, query-plane
 * word 0 or 1), so at most 9 slots per key (FIB_BLOOM_MAX_HASHES).
 * Independent slots: double hashing inside a 128-slot block made keys whose
 * slot sequences are shifts of each other, and measured a far higher
 * false-positive rate than independent ones. Fixed halves: a test builds one
 * mask per query-plane word (three instructions a slot) and compares each
 * word once, where a slot free to land in either word needed eight to pick
 * its word and bit; the uneven split (3 and 2 slots of the default 5)
 * costs a few percent of false positives (fib_bloom_fpr_predicted() models
 * it), the test cost halved.
 */
#define FIB_BLOOM_MAX_HASHES	9
#define FIB_BLOOM_SLOTS(h)	((h) * 0x9e3779b97f4a7c15ULL)
#define FIB_BLOOM_SLOT_BIT(x, i)	((uint) ((x) >> (58 - 6 * (i))) & 63)
#define FIB_BLOOM_SLOT(x, i)	((((i) & 1) << 6) | FIB_BLOOM_SLOT_BIT(x, i))

static inline uint
fib_bloom_counter(const u64 *blk, uint pos)
{ return (blk[pos >> 4] >> ((pos & 15) * 4)) & 15; }

static inline uint
fib_bloom_bit(const u64 *qblk, uint pos)
{ return (qblk[pos >> 6] >> (pos & 63)) & 1; }

/* Whether @k bits of @qblk from slots @x are all set; @k is a constant at
 * the call for the default shape, so the loop unrolls */
static inline __attribute__((always_inline)) int
fib_bloom_test_slots(const u64 *qblk, u64 x, uint k)
{
  u64 m0 = 0, m1 = 0;

#pragma GCC unroll 5
  for (uint i = 0; i < k; i += 2)
  {
    m0 |= 1ULL << FIB_BLOOM_SLOT_BIT(x, i);
    if (i + 1 < k)
      m1 |= 1ULL << FIB_BLOOM_SLOT_BIT(x, i + 1);
  }

  return ((qblk[0] & m0) == m0) & ((qblk[1] & m1) == m1);
}

/*
 * Pure filter test: 0 means the key is certainly absent. It reads the
 * query plane, not the counters: a quarter of their memory, so a full
 * table's filter stays in L2 and L3 where its counters would not (see the
 * DOC section). No early exit: the slots share one cache line, and a
 * branch-free test keeps the hit path short enough for consecutive
 * lookups to overlap their misses.
 */
static inline int
fib_bloom_test_hash(const struct fib_bloom *b, u64 h)
{
  const u64 *qblk = fib_bloom_qblock(b, h);
  u64 x = FIB_BLOOM_SLOTS(h);

  if (b->cf.hashes == FIB_BLOOM_DEF_HASHES)
    return fib_bloom_test_slots(qblk, x, FIB_BLOOM_DEF_HASHES);

  return fib_bloom_test_slots(qblk, x, b->cf.hashes);
}

/*
 * Longest-prefix match walk (fib-lpm.c): fib_lpm_init() lists the lengths
 * not longer than @n and not shorter than @lo that hold prefixes and that
 * the guards admit (longest first), hashes them and prefetches their
 * filter blocks and the first candidates' hash buckets (those of the cover
 * table, which exist, need neither), so the cache misses overlap; then it
 * tests candidates until @ahead of them are
 * admitted and prefetches those admitted candidates' first nodes.
 * fib_lpm_next() returns the next admitted length (testing the rest
 * lazily), or -1, and leaves its chain hash in @chash (fib_slot() finds the
 * bucket, in either table during a rehash). Callers stop at their first
 * answer, so the lines of shorter lengths are rarely waited for.
 */
struct fib_lpm {
  uint n, i, tested;			/* Candidates, next one, candidates tested in init */
  uint exact;				/* Candidates from here on exist (cover table): not tested */
  u8 active;				/* Filter present */
  u8 len[FIB_BLOOM_MAX_PXLEN + 1];	/* Candidate lengths, longest first */
  u8 adm[FIB_BLOOM_MAX_PXLEN + 1];	/* Tested in init: admitted */
  u32 chash[FIB_BLOOM_MAX_PXLEN + 1];	/* Chain hash (net_hash()), for admitted candidates */
  u64 hash[FIB_BLOOM_MAX_PXLEN + 1];	/* Filter key */
};

/*
 * The netmask of IPv6 length @len (0-128) as two numbers, the top half
 * (addr[0], addr[1]) and the bottom one: ip6_mkmask() without its loop, for
 * lookups that trim a prefix per candidate length
 */
static inline u64
fib_lpm_mask6_hi(uint len)
{ return (len >= 64) ? ~0ULL : ~(~0ULL >> len); }

static inline u64
fib_lpm_mask6_lo(uint len)
{ return (len <= 64) ? 0 : fib_lpm_mask6_hi(len - 64); }

/*
 * No host bits past @n's length, for an IP-like net (IP, VPN, ROA, flow)
 * within its length range. The filter walk and the LPM engines look at the
 * query's address trimmed to each length; stock's loops clear one bit per
 * length from the query's own, so there a net with host bits set never
 * matches. No route or CLI argument is such a net (both are rejected
 * first), but for any input the answer must be stock's: these go to its code.
 * (net_validate_px6() would say the same, with ip6_mkmask() out of line on
 * every lookup.)
 */
static inline int
fib_lpm_canonical(const net_addr *n)
{
  const net_addr_union *u = (const void *) n;
  uint len = n->pxlen;

  if (net_val_match(n->type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4))
    return !(ip4_to_u32(u->ip4.prefix) & (u32) ~(~0ULL << (32 - len)));

  u64 hi = ((u64) u->ip6.prefix.addr[0] << 32) | u->ip6.prefix.addr[1];
  u64 lo = ((u64) u->ip6.prefix.addr[2] << 32) | u->ip6.prefix.addr[3];
  return !(hi & ~fib_lpm_mask6_hi(len)) && !(lo & ~fib_lpm_mask6_lo(len));
}

void fib_lpm_init(struct fib *f, const net_addr *n, struct fib_lpm *s, uint ahead, uint lo);
int fib_lpm_next(struct fib *f, const net_addr *n, struct fib_lpm *s);
int fib_lpm_supported(const struct fib *f, const net_addr *n);

/* Guards (fib-lpm.c): built with the filter, kept by adds and deletes */
void fib_lpm_guards_init(struct fib *f);
void fib_lpm_guards_free(struct fib_bloom *b);
void fib_lpm_guards_account(struct fib_bloom *b, const net_addr *a, int add);
int fib_lpm_guards_cover(struct fib *f);	/* Every node admitted by its guards (tests) */
uint fib_lpm_guards_size(const struct fib_bloom *b);	/* Bytes of guards and masks */
uint fib_lpm_bands(const struct fib_bloom *b);		/* Bands with length masks */

/* Accelerated LPM paths (rt-fib.c / rt-table.c call them) */
void *fib_bloom_route(struct fib *f, const net_addr *n);
struct network *net_route_bloom(struct rtable *tab, const net_addr *n, int *done);
int net_roa_check_bloom(struct rtable *tab, const net_addr *n, u32 asn, int *done);

/* Predicted false-positive rate of a filter at its current load */
double fib_bloom_fpr_predicted(const struct fib_bloom *b);
double fib_bloom_fill(const struct fib_bloom *b);
uint fib_bloom_size(const struct fib_bloom *b);	/* Bytes: counters and query plane */
int fib_bloom_bits_exact(const struct fib_bloom *b);	/* Query plane matches the counters (tests) */

/* CLI: show fib [<table>] */
void fib_bloom_show(struct cli *c, struct rtable_config *tc);

#endif
