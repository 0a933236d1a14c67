/*
 *	bloombird -- The ROA index of a table's ROA FIB
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_ROA_H_
#define _BIRD_FIB_ROA_H_

#include "nest/bird.h"
#include "lib/net.h"

struct fib;

/*
 * One slot per distinct ROA prefix (prefix and length) that has at least one
 * ROA with a valid route: its ROAs' origins and max lengths, inline for one
 * ROA, in an array for more. Open addressing with linear probing, at most
 * 3/4 full, home slot from the top bits of the prefix's key
 * (fib_key_ip4(), fib_key_ip6()). IPv4 tables use 16-byte
 * slots, IPv6 ones 32 (the prefix follows in @px6).
 */
#define FIB_ROA(asn, max)	(((u64) (asn) << 8) | (max))
#define FIB_ROA_ASN(e)		((u32) ((e) >> 8))
#define FIB_ROA_MAX(e)		((uint) ((e) & 0xff))
#define FIB_ROA_MAX_SHARED	0xffff	/* ROAs of one prefix a slot counts (@n: u16) */

struct fib_roa_slot {
  u16 n;				/* ROAs with a valid route; 0: free slot */
  u8 pxlen;
  u8 pad;
  u32 px4;				/* IPv4: the prefix */
  union {
    u64 one;				/* @n == 1: FIB_ROA() */
    u64 *many;				/* @n > 1: capacity, then @n FIB_ROA()s */
  };
  ip6_addr px6[];			/* IPv6: the prefix */
};

/*
 * Block masks: the candidate lengths of a check, kept beside the slots.
 * One word per /16 of the address space (block; IPv6: the top 16 bits), bit
 * L-1 for length L. Bits of lengths 1-16 are exact: set while the prefix of
 * that length covering the block has a slot. Bits of longer lengths say
 * that a prefix of that length may have one: set when a slot comes, left
 * set when it goes (@stale counts those) until the masks are recomputed.
 * IPv4: bits 17-32 of a word, prefixes inside the block. IPv6: a word per
 * /32, hashed (@blk6, bit L-17 for lengths 17-80; prefixes of 17-32 that
 * cover the /32, longer ones inside it), and @far for lengths 81-128
 * (bit L-81), one for the whole table. A /0 has @len0.
 */
#define FIB_ROA_BLOCK_BITS	16
#define FIB_ROA_BLOCKS		(1U << FIB_ROA_BLOCK_BITS)
#define FIB_ROA_BLOCK6_BITS	16
#define FIB_ROA_BLOCKS6		(1U << FIB_ROA_BLOCK6_BITS)
#define FIB_ROA_NEAR6		80	/* IPv6: longest length of @blk6 */

/* Word of @blk6 of the /32 whose top 32 bits are @top */
static inline u32
fib_roa_blk6(u32 top)
{ return (top * 0x9e3779b1U) >> (32 - FIB_ROA_BLOCK6_BITS); }

struct fib_roa {
  byte *slots;
  u32 *blk;				/* Block masks, %FIB_ROA_BLOCKS */
  u64 *blk6;				/* IPv6: masks per hashed /32, %FIB_ROA_BLOCKS6 */
  u64 far;				/* IPv6: lengths 81-128 */
  u32 order;				/* 2^order slots */
  u32 shift;				/* 64 - order: home slot = key >> shift */
  u32 mask;				/* 2^order - 1 */
  u8 v6;				/* 32-byte slots with @px6 */
  u8 len0;				/* The /0 has a slot */
  u32 stale;				/* Mask bits of slots gone, not yet cleared */
  u32 groups;				/* Slots in use */
  u32 roas;				/* ROAs with a valid route */
  u32 shared;				/* Groups of more than one ROA */
  u64 checks;				/* net_roa_check() calls answered */
  u64 probes, found;			/* Candidate lengths looked up, found */
};

static inline struct fib_roa_slot *
fib_roa_slot(const struct fib_roa *r, u32 i)
{ return (struct fib_roa_slot *) (r->slots + ((uintptr_t) i << (r->v6 ? 5 : 4))); }

/* The ROAs of a slot in use */
static inline const u64 *
fib_roa_entries(const struct fib_roa_slot *s)
{ return (s->n > 1) ? s->many + 1 : &s->one; }

/*
 * RFC 6483 for the ROAs of one covering prefix: 1 if one of them has origin
 * @asn (not 0) and allows length @pxlen
 */
static inline int
fib_roa_slot_valid(const struct fib_roa_slot *s, u32 asn, uint pxlen)
{
  if (!asn)
    return 0;

  const u64 *e = fib_roa_entries(s);
  for (uint i = 0; i < s->n; i++)
    if ((FIB_ROA_ASN(e[i]) == asn) && (FIB_ROA_MAX(e[i]) >= pxlen))
      return 1;

  return 0;
}

/*
 * Life cycle: the accelerator of a table's ROA FIB (fib-bloom.c) builds
 * the index at the first check, hands it every change of validity and
 * frees it with `bloom off' or when an update cannot be held
 */
struct fib_roa *fib_roa_new(struct fib *f, const net_addr **over);
void fib_roa_free(struct fib_roa *r);

/* RFC 6483 verdict (ROA_VALID, ...) of @px/@pxlen (no host bits) by origin @asn */
int fib_roa_check4(struct fib_roa *r, ip4_addr px, uint pxlen, u32 asn);
int fib_roa_check6(struct fib_roa *r, const ip6_addr *px, uint pxlen, u32 asn);

/* A ROA net's valid route appeared (@valid) or went; 0: drop the index */
int fib_roa_update(struct fib_roa *r, struct fib *f, const net_addr *roa, int valid);

/**
 * fib_roa_find4 - slot of an IPv4 ROA prefix in the index
 * @r: the index
 * @h: the prefix's filter key
 * @px: prefix
 * @pxlen: its length
 *
 * Probes linearly from the home slot that @h gives. Returns the prefix's
 * slot, or NULL if the index has none for it.
 */
static inline const struct fib_roa_slot *
fib_roa_find4(const struct fib_roa *r, u64 h, ip4_addr px, uint pxlen)
{
  u32 key = ip4_to_u32(px);
  for (u32 i = h >> r->shift; ; i = (i + 1) & r->mask)
  {
    const struct fib_roa_slot *s = fib_roa_slot(r, i);
    if (!s->n)
      return NULL;
    if ((s->px4 == key) && (s->pxlen == pxlen))
      return s;
  }
}

/**
 * fib_roa_find6 - slot of an IPv6 ROA prefix in the index
 * @r: the index
 * @h: the prefix's filter key
 * @px: prefix
 * @pxlen: its length
 *
 * As fib_roa_find4(), for IPv6 prefixes.
 */
static inline const struct fib_roa_slot *
fib_roa_find6(const struct fib_roa *r, u64 h, ip6_addr px, uint pxlen)
{
  for (u32 i = h >> r->shift; ; i = (i + 1) & r->mask)
  {
    const struct fib_roa_slot *s = fib_roa_slot(r, i);
    if (!s->n)
      return NULL;
    if ((s->pxlen == pxlen) && ip6_equal(s->px6[0], px))
      return s;
  }
}

int fib_roa_exact(const struct fib_roa *r, struct fib *f);		/* Equal to an index built from the nodes (tests) */
uint fib_roa_size(const struct fib_roa *r);	/* Bytes */

#endif
