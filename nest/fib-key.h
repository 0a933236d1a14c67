/*
 *	bloombird -- The keys of a FIB's nets, shared by the accelerator's parts
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_KEY_H_
#define _BIRD_FIB_KEY_H_

#include "nest/bird.h"
#include "lib/net.h"
#include "lib/string.h"

/*
 * The filter, the guards, the ROA index and the longest-prefix walk all
 * find a net by the same 64-bit key: a mix of the parts of the &net_addr
 * that BIRD's own chain hash uses. ROA, flow and SADR nets are keyed by
 * (dst) prefix and length only, so ROA checks can ask for a prefix without
 * knowing its ASN or max length. A walk makes the keys of a query trimmed
 * to each candidate length: fib_key_trimmed() gives the key of the trimmed
 * net without building it.
 */

#define FIB_MAX_PXLEN		128	/* Prefix lengths 0..128 */

/**
 * fib_key_mix - the key hash's finalizer
 * @h: the words of a key, combined
 *
 * Every bit of the result depends on every bit of @h: filters and guards
 * slice it into indices, so no slice may be weaker than another.
 */
static inline u64
fib_key_mix(u64 h)
{
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

static inline u64
fib_key_ip4(ip4_addr px, uint pxlen)
{ return fib_key_mix(((u64) ip4_to_u32(px) << 8) | pxlen); }

/*
 * Both halves multiplied by odd constants (each product is a bijection of
 * its half, and the two run in parallel), then one mix: a lookup waits for
 * one mix's latency, not two in a row. The halves are read as they lie in
 * memory, one load each (their word order is the host's, which a key may
 * have); a longest-prefix walk trims them to each candidate length with
 * one mask apiece, the mask put in the same order (fib_key_ip6_order()).
 */
static inline u64
fib_key_ip6_halves(u64 hi, u64 lo, uint pxlen)
{ return fib_key_mix((hi * 0x9fb21c651e98df25ULL) ^ (lo * 0xd6e8feb86659fd93ULL) ^ pxlen); }

static inline u64
fib_key_ip6(const ip6_addr *px, uint pxlen)
{
  u64 hi, lo;
  memcpy(&hi, &px->addr[0], sizeof(hi));
  memcpy(&lo, &px->addr[2], sizeof(lo));
  return fib_key_ip6_halves(hi, lo, pxlen);
}

/* A 64-bit number whose high half is addr[0] (or addr[2]) of an ip6_addr,
 * in the order of a 64-bit load of that half (identity on big endian) */
static inline u64
fib_key_ip6_order(u64 x)
{
#ifdef CPU_BIG_ENDIAN
  return x;
#else
  return (x << 32) | (x >> 32);
#endif
}

static inline u64
fib_key_rd(vpn_rd rd)
{ return fib_key_mix(rd_to_u64(rd) + 1); }

/**
 * fib_key_hash - the key of a net
 * @a: net of any type
 *
 * IP, ROA and flow nets by prefix and length, VPN nets with their RD,
 * MPLS and ASPA nets by label and ASN.
 */
static inline __attribute__((always_inline)) u64
fib_key_hash(const net_addr *a)
{
  const net_addr_union *u = (const void *) a;

  /* The common types before the jump table: two compares, not five steps */
  if (a->type == NET_IP4)
    return fib_key_ip4(u->ip4.prefix, a->pxlen);

  if (a->type == NET_IP6)
    return fib_key_ip6(&u->ip6.prefix, a->pxlen);

  switch (a->type)
  {
  case NET_ROA4:
  case NET_FLOW4:
    return fib_key_ip4(u->ip4.prefix, a->pxlen);

  case NET_ROA6:
  case NET_FLOW6:
  case NET_IP6_SADR:
    return fib_key_ip6(&u->ip6.prefix, a->pxlen);

  case NET_VPN4:
    return fib_key_ip4(u->vpn4.prefix, a->pxlen) ^ fib_key_rd(u->vpn4.rd);

  case NET_VPN6:
    return fib_key_ip6(&u->vpn6.prefix, a->pxlen) ^ fib_key_rd(u->vpn6.rd);

  case NET_MPLS:
    return fib_key_mix(((u64) u->mpls.label << 8) | 0x5a);

  default: /* NET_ASPA */
    return fib_key_mix(((u64) u->aspa.asn << 8) | 0xa5);
  }
}

/*
 * The netmask of IPv6 length @len (0-128) as two numbers, the top half
 * (addr[0], addr[1]) and the bottom one: ip6_mkmask() without its loop, for
 * lookups that trim a prefix per candidate length
 */
static inline u64
fib_key_mask6_hi(uint len)
{ return (len >= 64) ? ~0ULL : ~(~0ULL >> len); }

static inline u64
fib_key_mask6_lo(uint len)
{ return (len <= 64) ? 0 : fib_key_mask6_hi(len - 64); }

/* ip4_mkmask(len) without its branch (u32_mkmask() is out of line): per candidate */
static inline ip4_addr
fib_key_mask4(uint len)
{ return ip4_from_u32((u32) (~0ULL << (32 - len))); }

/* ip6_and(a, ip6_mkmask(len)) as two masks, no loop: it runs per candidate */
static inline ip6_addr
fib_key_ip6_trim(ip6_addr a, uint len)
{
  u64 hi = (((u64) a.addr[0] << 32) | a.addr[1]) & fib_key_mask6_hi(len);
  u64 lo = (((u64) a.addr[2] << 32) | a.addr[3]) & fib_key_mask6_lo(len);
  return ip6_build(hi >> 32, (u32) hi, lo >> 32, (u32) lo);
}

/**
 * fib_key_canonical - whether a net has no host bits
 * @n: an IP-like net (IP, VPN, ROA, flow) within its length range
 *
 * The filter walk, the ROA index and the LPM engines look at the query's
 * address trimmed to each length; stock's loops clear one bit per length
 * from the query's own, so there a net with host bits set never matches.
 * No route or CLI argument is such a net (both are rejected first), but
 * for any input the answer must be stock's: these go to its code.
 * (net_validate_px6() would say the same, with ip6_mkmask() out of line on
 * every lookup.)
 */
static inline int
fib_key_canonical(const net_addr *n)
{
  const net_addr_union *u = (const void *) n;
  uint len = n->pxlen;

  if (net_val_match(n->type, NB_IP4 | NB_VPN4 | NB_ROA4 | NB_FLOW4))
    return !(ip4_to_u32(u->ip4.prefix) & (u32) ~(~0ULL << (32 - len)));

  u64 hi = ((u64) u->ip6.prefix.addr[0] << 32) | u->ip6.prefix.addr[1];
  u64 lo = ((u64) u->ip6.prefix.addr[2] << 32) | u->ip6.prefix.addr[3];
  return !(hi & ~fib_key_mask6_hi(len)) && !(lo & ~fib_key_mask6_lo(len));
}

/**
 * fib_key_family - the family of an IP-like net, for fib_key_trimmed()
 * @n: net
 * @v6: set for IPv6 prefixes
 * @rdh: set to the key of a VPN net's RD, else 0
 *
 * Returns 0 for nets without a longest-prefix match (MPLS, ASPA, SADR).
 */
static inline int
fib_key_family(const net_addr *n, int *v6, u64 *rdh)
{
  const net_addr_union *u = (const void *) n;
  *rdh = 0;

  switch (n->type)
  {
  case NET_VPN4:
    *rdh = fib_key_rd(u->vpn4.rd);
    /* fall through */
  case NET_IP4:
  case NET_ROA4:
  case NET_FLOW4:
    *v6 = 0;
    return 1;

  case NET_VPN6:
    *rdh = fib_key_rd(u->vpn6.rd);
    /* fall through */
  case NET_IP6:
  case NET_ROA6:
  case NET_FLOW6:
    *v6 = 1;
    return 1;

  default:
    return 0;
  }
}

/**
 * fib_key_trimmed - the key of a net trimmed to a shorter length
 * @u: IP-like net
 * @v6: its family (fib_key_family())
 * @rdh: its RD's key (fib_key_family())
 * @len: length to trim to, at most the net's
 *
 * Equals fib_key_hash() of @u with its prefix cut to @len bits, without
 * building that net.
 */
static inline u64
fib_key_trimmed(const net_addr_union *u, int v6, u64 rdh, uint len)
{
  if (!v6)
    return fib_key_ip4(ip4_and(u->ip4.prefix, fib_key_mask4(len)), len) ^ rdh;

  /* fib_key_ip6() of the trimmed address: its halves as loaded, masked */
  u64 hi, lo;
  memcpy(&hi, &u->ip6.prefix.addr[0], sizeof(hi));
  memcpy(&lo, &u->ip6.prefix.addr[2], sizeof(lo));
  return fib_key_ip6_halves(hi & fib_key_ip6_order(fib_key_mask6_hi(len)),
			    lo & fib_key_ip6_order(fib_key_mask6_lo(len)), len) ^ rdh;
}

#endif
