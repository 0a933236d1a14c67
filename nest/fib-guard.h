/*
 *	bloombird -- Length guards of a FIB's longest-prefix walk
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_GUARD_H_
#define _BIRD_FIB_GUARD_H_

#include "nest/fib-key.h"
#include "nest/fib-lengths.h"

struct fib;

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
 * holds others stays set until the guards are built again. Masks may so
 * claim too much, never too little: a claimed length is tested as before.
 */
#define FIB_GUARD_MIN_HEAD	12	/* Shorter heads have too few roots to tell */
#define FIB_BAND_SHIFT		3	/* Eight lengths to a band (fib_lengths_octet()) */
#define FIB_BANDS		((FIB_MAX_PXLEN >> FIB_BAND_SHIFT) + 1)
#define FIB_BAND_DIRECT		16	/* Regions of up to 16 bits index their slots directly */
#define FIB_BAND_MAX_BITS	16	/* At most 64K slots (128 KB) a band */
#define FIB_BAND_CMAX		255	/* Sticky count of a slot */

/*
 * IPv4 (IP and ROA) FIBs replace band 1's masks (and the lengths' word on
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
struct fib_band {
  u16 *slot;				/* NULL: no masks, every length of the band is a candidate */
  u8 bits;				/* log2 of the number of slots */
  u8 direct;				/* Indexed by the region's bits, not their hash */
};

struct fib_guards {
  struct fib_guard head;		/* Head guard */
  struct fib_band band[FIB_BANDS];	/* Length masks */
  u16 *cover;				/* IPv4 lengths 0..15 covering each /16; NULL: none */
};

void fib_guards_init(struct fib_guards *g, struct fib *f, const struct fib_lengths *l);
void fib_guards_free(struct fib_guards *g);
void fib_guards_account(struct fib_guards *g, struct fib *f, const net_addr *a, int add);
int fib_guards_valid(const struct fib_guards *g, struct fib *f);
uint fib_guards_size(const struct fib_guards *g);
uint fib_guards_bands(const struct fib_guards *g);

/* The head guard's counter index of a net (fib_key_family() gives @v6, @rdh) */
static inline u32
fib_guard_index(const struct fib_guard *hd, const net_addr_union *u, int v6, u64 rdh)
{ return fib_key_trimmed(u, v6, rdh, hd->len) >> (64 - hd->bits); }

/* Slot of @u's region in band @j (its first 8j bits, j > 0) */
static inline u32
fib_band_index(const struct fib_band *bd, uint j, const net_addr_union *u, int v6, u64 rdh)
{
  uint base = j << FIB_BAND_SHIFT;
  if (bd->direct)
    return (v6 ? u->ip6.prefix.addr[0] : ip4_to_u32(u->ip4.prefix)) >> (32 - base);

  return (u32) fib_key_trimmed(u, v6, rdh, base) & ((1U << bd->bits) - 1);
}

/* Nets of @type have their short IPv4 lengths in a cover table */
static inline int
fib_cover_type(uint type)
{ return (type == NET_IP4) || (type == NET_ROA4); }

#endif
