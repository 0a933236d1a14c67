/*
 *	bloombird -- Reader of an LPM export in shared memory
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_LPM_READER_H_
#define _BIRD_LPM_READER_H_

/*
 * A data plane's view of the forwarding table that bird's `protocol lpm'
 * exports with `shm "NAME"' (layout: proto/lpm/lpm-shm.h; consistency
 * protocol: proto/lpm/lpm-shm.c). The reader maps the objects read-only
 * and looks addresses up with the simd engine's own lookup code (scalar,
 * AVX2, AVX-512), checking the reuse seqlock around every batch, so an
 * answer is always one the table held.
 *
 * Addresses are in host byte order: IPv4 as one uint32_t, IPv6 as four
 * uint32_t words, most significant first (bird's ip4_addr / ip6_addr).
 * Answers are next-hop indices (LPMR_NONE: no route); lpmr_nh() gives the
 * entry, which bird may reuse for another next-hop set once no prefix leads
 * to it any more: a batch's entries are read between lpmr_stamp() and
 * lpmr_valid(), a single address's with lpmr_route4() / lpmr_route6(). One
 * reader per thread; the functions are not thread-safe on one struct lpmr.
 */

#include <stddef.h>
#include <stdint.h>

#include "proto/lpm/lpm-shm.h"

#define LPMR_NONE	0xffffffffU

enum lpmr_error {
  LPMR_OK = 0,
  LPMR_ENOENT = -1,			/* No such export (yet) */
  LPMR_EVERSION = -2,			/* Layout version mismatch */
  LPMR_EFORMAT = -3,			/* Not an export, or not ready */
  LPMR_ESYS = -4,			/* System error (see errno) */
  LPMR_EOWNER = -5,			/* An object not bird's: wrong owner, writable by others */
};

struct lpmr;

struct lpmr_status {
  uint64_t instance;			/* Of the mapped export */
  uint32_t state;			/* enum lpmx_state */
  uint32_t pid;				/* bird's */
  uint64_t generation;			/* Updates bird had applied when asked */
  uint64_t update_age_ns;		/* Since bird applied the last update */
  uint64_t heartbeat_age_ns;		/* Since bird's last tick (> 1 s: bird is not running) */
  uint64_t retries;			/* Batches this reader repeated (reuse seqlock) */
  uint64_t prefixes[2];			/* IPv4, IPv6 */
  uint32_t nh_live;
  uint64_t mem[3];			/* Bytes touched: exporter region, IPv4, IPv6 regions */
};

/*
 * Map export @name. NULL on failure: *@code and @err tell why. Every object
 * must be a regular file that nobody but its owner may write, owned by root,
 * the user "bird" or the caller's effective user; lpmr_open_owner() names
 * the one owner to trust instead (bird run with -u). A following reader
 * (lpmr_check()) remaps only to objects that pass the same checks.
 */
struct lpmr *lpmr_open(const char *name, int *code, char *err, size_t errsize);
struct lpmr *lpmr_open_owner(const char *name, long owner, int *code, char *err, size_t errsize);
void lpmr_close(struct lpmr *r);

/* Variant of batch lookups: "auto", "scalar", "avx2", "avx512"; -1 if not here */
int lpmr_set_variant(struct lpmr *r, const char *variant);
const char *lpmr_variant(const struct lpmr *r);
int lpmr_has_variant(const char *variant);

/* Has a family? (bird has a channel for it) */
int lpmr_has4(const struct lpmr *r);
int lpmr_has6(const struct lpmr *r);

/* Batch lookups (any @n) */
void lpmr_lookup4(struct lpmr *r, const uint32_t *a, uint32_t *nh, unsigned n);
void lpmr_lookup6(struct lpmr *r, const uint32_t (*a)[4], uint32_t *nh, unsigned n);

/*
 * One address answered as text, lookup and entry read consistently: the
 * next hops (lpmx_nh_format()) or "-". Returns the next-hop index.
 */
uint32_t lpmr_answer4(struct lpmr *r, uint32_t a, char *buf, unsigned size);
uint32_t lpmr_answer6(struct lpmr *r, const uint32_t a[4], char *buf, unsigned size);

/*
 * One address looked up and its entry copied into *@nh, both read under one
 * stamp (repeated if bird reused entries meanwhile), so the entry is the one
 * the index stood for: the index, or LPMR_NONE with *@nh zeroed if there is
 * no route.
 */
uint32_t lpmr_route4(struct lpmr *r, uint32_t a, struct lpmx_nh *nh);
uint32_t lpmr_route6(struct lpmr *r, const uint32_t a[4], struct lpmx_nh *nh);

/*
 * The entry of an index from a lookup, in the mapping itself (NULL for an
 * index beyond the table). bird reuses an entry for another next-hop set a
 * tick after its last prefix went (proto/lpm/lpm-shm.c), and nothing tells
 * a caller that reads it after the lookup: read the entries of a batch's
 * answers between lpmr_stamp() and lpmr_valid() below.
 */
const struct lpmx_nh *lpmr_nh(const struct lpmr *r, uint32_t i);

/*
 * Reading entries consistently with the lookups that led to them: take a
 * stamp before the batch, look up, read (copy) the entries needed, then ask
 * lpmr_valid(). 1: no entry can have been reused since the stamp, so what
 * was read is what the answers meant; 0: bird may have reused some (counted
 * as a repeated batch in lpmr_status()), look up and read again. bird moves
 * the stamp at most once a tick (the header's tick_ms, 10 ms), and only in
 * ticks after changes, so a span far shorter than a tick is almost never
 * repeated; a longer one may be repeated for as long as routes change.
 * Use a copy only after lpmr_valid() said 1. A stamp belongs to the
 * mapping: after lpmr_check() remapped (returned 1), pointers from
 * lpmr_nh() are gone and a stamp taken before means nothing.
 */
uint64_t lpmr_stamp(const struct lpmr *r);
int lpmr_valid(struct lpmr *r, uint64_t stamp);

void lpmr_status(const struct lpmr *r, struct lpmr_status *s);

/*
 * Freshness, cheap enough to ask after every batch: the generation (updates,
 * or batches of route changes, bird had applied) and, in *@updated_ns, when
 * the oldest change of the last batch reached bird's protocol (so the time
 * it waited in bird's queue counts; CLOCK_MONOTONIC, comparable with
 * lpmr_now_ns()).
 */
uint64_t lpmr_generation(const struct lpmr *r, uint64_t *updated_ns);
uint64_t lpmr_now_ns(void);

/*
 * Follow bird across restarts: returns 0 if the mapped instance is current,
 * 1 if it remapped to a new one, LPMR_ENOENT (or another error) if the
 * mapped one is closed or silent and no new one is there yet (the old
 * mapping stays usable, stale).
 */
int lpmr_check(struct lpmr *r, char *err, size_t errsize);

#endif
