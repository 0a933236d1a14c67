/*
 *	bloombird -- The structures BIRD's own headers embed
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_ACCEL_TYPES_H_
#define _BIRD_FIB_ACCEL_TYPES_H_

/*
 * nest/route.h includes this header and nothing else of ours: &fib points
 * to its accelerator and &rtable_config embeds the options below. The
 * accelerator's own headers are included only by the files that use them.
 */

struct fib_bloom;
struct rt_lpm;
struct lpm_class;

/* Table configuration (table block: bloom on|off, bloom hashes, bloom counters) */
struct fib_bloom_config {
  u8 enabled;
  u8 hashes;
  u8 counters;
};

/* Table configuration: `lpm engine <name>|off', `lpm variant', `lpm levels' */
struct rt_lpm_config {
  const struct lpm_class *class;	/* NULL: no engine (the default) */
  u8 variant;				/* enum lpm_variant, LPM_VAR_AUTO by default */
  u8 levels;				/* Engine parameter (dpcpe), 0 = default */
};

#endif
