/*
 *	bloombird -- LPM exporter: layout of the shared-memory export
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_LPM_SHM_H_
#define _BIRD_LPM_SHM_H_

/*
 * This header is shared by bird (proto/lpm) and readers in other processes
 * (tools/lpm-reader): plain C types only, no BIRD headers.
 *
 * An export named N consists of POSIX shared-memory objects:
 *   /N		the exporter region: &lpmx_header, then the next-hop table
 *   /N.ipv4	the simd engine's lookup region for IPv4 (nest/lpm-simd.h)
 *   /N.ipv6	the same for IPv6
 *   /N.lock	held (flock) by the bird that owns the name, for its lifetime
 *
 * An engine lookup answers a next-hop index (or none); the index selects a
 * &lpmx_nh in the next-hop table. Consistency protocol: proto/lpm/lpm-shm.c.
 */

#include <stdint.h>

#define LPMX_MAGIC		0x584d504cU	/* "LPMX" */
#define LPMX_VERSION		1		/* Any change of this file's structures bumps it */
#define LPMX_HEADER_SIZE	4096
#define LPMX_NH_MAX		65536		/* Next-hop entries in the table */
#define LPMX_PATHS		8		/* Paths of an ECMP entry, at most */
#define LPMX_NAME_MAX		64		/* Export names, including the NUL */
#define LPMX_IFNAME		16

enum lpmx_state {
  LPMX_RUNNING = 1,			/* The owning bird keeps it */
  LPMX_CLOSED = 2,			/* Given up: remap by name (a new instance may be there) */
};

/* Next-hop kinds (bird's RTD_* values) */
enum lpmx_dest {
  LPMX_UNICAST = 1,
  LPMX_BLACKHOLE = 2,
  LPMX_UNREACHABLE = 3,
  LPMX_PROHIBIT = 4,
};

struct lpmx_path {
  uint32_t gw[4];			/* bird's ip_addr: IPv4 as ::ffff:a.b.c.d, host order words */
  uint32_t ifindex;
  uint8_t gw_family;			/* 0: no gateway (device route), 4 or 6 */
  uint8_t weight;			/* bird's weight - 1 (0..255); 0 for a single path */
  uint8_t onlink;
  uint8_t reserved;
  char ifname[LPMX_IFNAME];		/* Interface name when the entry was made */
};

/* One next-hop set; never changed while an engine element refers to it */
struct lpmx_nh {
  uint32_t dest;			/* enum lpmx_dest, 0 for a free entry */
  uint32_t paths;			/* Entries of @path in use (unicast) */
  struct lpmx_path path[LPMX_PATHS];
};

struct lpmx_family {
  char region[LPMX_NAME_MAX];		/* Engine region name ("/N.ipv4"), empty: no channel */
  uint64_t prefixes;			/* Held by the engine */
  uint64_t rejected;			/* Routes left out: next hop not representable */
};

/* At offset 0 of the exporter region */
struct lpmx_header {
  uint32_t magic;			/* LPMX_MAGIC */
  uint32_t version;			/* LPMX_VERSION */
  uint64_t instance;			/* Differs for every region bird creates */
  uint32_t state;			/* enum lpmx_state */
  uint32_t pid;				/* Owning bird */
  uint32_t nh_offset;			/* Bytes from the start to the next-hop table */
  uint32_t nh_size;			/* sizeof(struct lpmx_nh) */
  uint32_t nh_max;			/* Entries the table holds */
  uint32_t nh_used;			/* Highest entry ever used + 1 */
  uint32_t nh_live;			/* Entries referenced now */
  uint32_t tick_ms;			/* Grace tick of the writer */

  /* Seqlock of reuse: bumped before any retired row or entry is reused */
  uint64_t reuse_seq;
  uint64_t generation;			/* Updates or batches of them applied, ever (this instance) */
  uint64_t updated_ns;			/* CLOCK_MONOTONIC: the oldest change of the last batch reached bird */
  uint64_t heartbeat_ns;		/* CLOCK_MONOTONIC, written every tick while bird runs */

  char name[LPMX_NAME_MAX];		/* Export name N */
  char proto[LPMX_NAME_MAX];		/* Protocol name in bird's configuration */
  char engine[16];			/* "simd" */
  char variant[16];			/* Variant bird uses */
  struct lpmx_family fam[2];		/* [0] IPv4, [1] IPv6 */
};

/*
 * The text of a next-hop set, the same in bird (`show lpm lookup') and in
 * readers: "via GW on IF[ onlink][ weight W]" or "dev IF[ onlink]" per path
 * (weights only for several paths and gateways, as `show route' prints),
 * joined by "; ", or "blackhole", "unreachable", "prohibit".
 * proto/lpm/lpm-format.c; returns the length snprintf() would.
 */
int lpmx_nh_format(char *buf, unsigned size, const struct lpmx_nh *nh);

#endif
