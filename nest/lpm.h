/*
 *	bloombird -- Longest-prefix-match engines
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_LPM_H_
#define _BIRD_LPM_H_

#include "nest/bird.h"
#include "lib/net.h"
#include "lib/resource.h"

#include <signal.h>
#include <stdatomic.h>

/*
 * An LPM engine maps IPv4 or IPv6 prefixes to 32-bit values and answers,
 * for an address, the value of the longest prefix covering it. Engines are
 * plug-ins behind &lpm_class; a consumer (a table's own LPM, the exporter
 * protocol) sees only this header.
 *
 * Values: 0 .. %LPM_VALUE_MAX. A lookup that finds no covering prefix
 * answers %LPM_NONE. Engines may use the value's top bit internally.
 *
 * Exactness: every update is complete when the call returns; the next
 * lookup (in any thread, after the caller's own synchronisation) sees it,
 * and nothing is ever answered from a removed prefix.
 *
 * Concurrency: one writer (the BIRD thread) and any number of readers in
 * other threads. A reader brackets its lookups with lpm_read_begin() and
 * lpm_read_end(); it then sees, for each address, the answer before or after
 * any concurrent update, never a torn or garbage one. Engines write new
 * lookup memory before linking it (release stores) and retire memory that
 * readers may still see; it is reused only after every reader has been
 * outside a read section since it was retired (lpm_epoch_*, below).
 */

#define LPM_NONE	0xffffffffU
#define LPM_VALUE_MAX	0x7ffffffeU

/* Lookup code variants, chosen once per engine at creation (lpm_variant_select()) */
enum lpm_variant {
  LPM_VAR_SCALAR = 0,
  LPM_VAR_AVX2,
  LPM_VAR_AVX512,
  LPM_VAR_MAX,
  LPM_VAR_AUTO = 255,			/* Best the CPU has */
};

extern const char * const lpm_variant_names[LPM_VAR_MAX];

/*
 * The variants this build has: configure's --with-lpm-variants defines
 * CONFIG_LPM_AVX2 and CONFIG_LPM_AVX512 (x86 only) and CONFIG_LPM_X86 when
 * either is built. A class lists its variant functions through
 * LPM_IF_AVX2() and LPM_IF_AVX512(), which leave out what is not built.
 */
#ifdef CONFIG_LPM_AVX2
#define LPM_IF_AVX2(f)		f
#define LPM_BUILT_AVX2		(1U << LPM_VAR_AVX2)
#else
#define LPM_IF_AVX2(f)		NULL
#define LPM_BUILT_AVX2		0
#endif

#ifdef CONFIG_LPM_AVX512
#define LPM_IF_AVX512(f)	f
#define LPM_BUILT_AVX512	(1U << LPM_VAR_AVX512)
#else
#define LPM_IF_AVX512(f)	NULL
#define LPM_BUILT_AVX512	0
#endif

#define LPM_VARIANTS_BUILT	((1U << LPM_VAR_SCALAR) | LPM_BUILT_AVX2 | LPM_BUILT_AVX512)

struct lpm_engine;
struct cli;

/* Creation parameters */
struct lpm_params {
  u8 variant;				/* enum lpm_variant, LPM_VAR_AUTO by default */
  u8 levels;				/* dpcpe: IPv6 expansion levels, 0 = default */
  const char *shm_name;			/* Lookup memory as this POSIX shared-memory object (NULL: private) */
  u16 shm_mode;				/* Its permissions (0: 0600) */
  int shm_gid;				/* Its group (-1: bird's) */
};

/* One route of a whole-table build */
struct lpm_route {
  net_addr_union n;			/* NET_IP4 or NET_IP6, host bits clear */
  u32 value;
};

/*
 * One change of a batch (lpm_apply()): @value replaces the prefix's value,
 * or LPM_NONE removes the prefix. The engine fills in @old (the value before,
 * LPM_NONE if there was none) and @result (0, or -1 when memory ran out:
 * that change alone is not applied).
 */
struct lpm_change {
  net_addr_union n;			/* NET_IP4 or NET_IP6 */
  u32 value;
  u32 old;
  int result;
};

/* Counters every engine keeps; queryable at any time */
struct lpm_stats {
  u64 prefixes;				/* Prefixes held */
  u64 updates;				/* Adds, replaces and removes applied */
  u64 builds;				/* Whole-table builds */
  btime last_build;			/* When the last build finished */
  btime last_build_time;		/* How long it took */
  u64 mem_lookup;			/* Bytes readers touch (lookup structures) */
  u64 mem_control;			/* Bytes only the writer touches */
  u64 units;				/* Engine-specific unit count (rows, entries) */
  u64 retired;				/* Units waiting for readers to quiesce */
  u64 alloc_failures;			/* Updates refused for lack of memory */
  int region_errno;			/* Why a shared region could not grow, 0 if it could */
  int region_lost;			/* A shared region was truncated under bird */
};

typedef void lpm_bulk4_fn(const struct lpm_engine *e, const ip4_addr *a, u32 *val, uint n);
typedef void lpm_bulk6_fn(const struct lpm_engine *e, const ip6_addr *a, u32 *val, uint n);

/*
 * The ops table of an engine. Return values: 0 on success, -1 when memory
 * ran out (the engine is unchanged and still answers as before the call).
 */
struct lpm_class {
  const char *name;			/* Configuration keyword: "simd", "dpcpe" */
  u32 variants;				/* Bit mask of enum lpm_variant it implements */
  u8 levels;				/* Takes `lpm levels' (&lpm_params.levels) */
  struct lpm_engine *(*create)(pool *p, uint net_type, const struct lpm_params *par);
  void (*free)(struct lpm_engine *e);
  int (*update)(struct lpm_engine *e, const net_addr *n, u32 value, u32 *old);	/* Add or replace; *old = LPM_NONE if new (@old may be NULL) */
  int (*remove)(struct lpm_engine *e, const net_addr *n, u32 *old);		/* *old = LPM_NONE if absent (@old may be NULL) */
  int (*build)(struct lpm_engine *e, const struct lpm_route *r, uint count);	/* Replace the whole contents */
  uint (*apply)(struct lpm_engine *e, struct lpm_change *c, uint count);	/* Optional: a batch in order; returns failures */
  u32 (*find)(const struct lpm_engine *e, const net_addr *n);			/* Exact prefix: its value, LPM_NONE if absent */
  /* The contents, at most @max routes, in no order, from position *@pos on
   * (0: the start), which is left where the next call goes on */
  uint (*dump)(const struct lpm_engine *e, struct lpm_route *r, uint max, u64 *pos);
  u32 (*lookup4)(const struct lpm_engine *e, ip4_addr a);
  u32 (*lookup6)(const struct lpm_engine *e, ip6_addr a);
  lpm_bulk4_fn *bulk4[LPM_VAR_MAX];	/* Batch lookups per variant; NULL: not implemented */
  lpm_bulk6_fn *bulk6[LPM_VAR_MAX];
  void (*stats)(const struct lpm_engine *e, struct lpm_stats *s);
  void (*show)(const struct lpm_engine *e, struct cli *c, int code);	/* Engine-specific detail lines */
};

/* Common head of every engine; engines embed it first */
struct lpm_engine {
  const struct lpm_class *class;
  pool *pool;
  uint net_type;			/* NET_IP4 or NET_IP6 */
  u8 variant;				/* Variant the batch lookups use */
  lpm_bulk4_fn *bulk4;			/* class->bulk4[variant] */
  lpm_bulk6_fn *bulk6;

  /* Reader epochs (nest/lpm.c) */
  _Atomic u64 epoch;			/* Advanced by the writer */
  list readers;				/* struct lpm_reader, under @readers_lock */
  void *readers_lock;			/* pthread mutex, from lpm_engine_init() */
};

/* A reader thread's registration with one engine */
struct lpm_reader {
  node n;
  _Atomic u64 seen;			/* Epoch at lpm_read_begin(); 0 outside */
};

/* Registry (nest/lpm.c): engines register their class at start-up */
const struct lpm_class *lpm_class_find(const char *name);
void lpm_class_register(const struct lpm_class *c);
const struct lpm_class *lpm_class_next(const struct lpm_class *c);	/* Iterate: NULL gives the first */

#define LPM_CLASS_REGISTER(cls) \
  static void __attribute__((constructor)) cls##_register(void) { lpm_class_register(&cls); }

/*
 * Variants: lpm_variant_select() is the one dispatch point. It asks what
 * can run here (lpm_variants_cpu(): built and supported by the CPU, asked
 * once), honours $BLOOMBIRD_LPM_VARIANT, and returns @want if that and
 * @mask allow it, the best available for %LPM_VAR_AUTO, or -1.
 */
int lpm_variant_select(uint want, u32 mask);
u32 lpm_variants_cpu(void);			/* nest/lpm-variant.c: bit mask that can run here */
u32 lpm_cpu_variants_x86(void);			/* sysdep/x86/cpu.c: what the x86 CPU has */
int lpm_variant_by_name(const char *name);	/* -1 if unknown */

/* Engines: creation, updates, lookups (thin wrappers of the class) */
struct lpm_engine *lpm_new(pool *p, const struct lpm_class *c, uint net_type, const struct lpm_params *par);
void lpm_free(struct lpm_engine *e);

/**
 * lpm_update - add a prefix or replace its value
 * @e: engine
 * @n: prefix (NET_IP4 or NET_IP6, host bits clear)
 * @v: its value
 * @old: set to the value before, %LPM_NONE if the prefix is new; may be NULL
 *
 * Returns 0, or -1 when memory ran out: the engine is then unchanged and
 * answers as before.
 */
static inline int lpm_update(struct lpm_engine *e, const net_addr *n, u32 v, u32 *old)
{ return e->class->update(e, n, v, old); }

/**
 * lpm_remove - remove a prefix
 * @e: engine
 * @n: prefix
 * @old: set to its value, %LPM_NONE if it was absent; may be NULL
 *
 * Returns 0, or -1 when memory ran out (the engine is unchanged).
 */
static inline int lpm_remove(struct lpm_engine *e, const net_addr *n, u32 *old)
{ return e->class->remove(e, n, old); }

/*
 * lpm_apply() applies a batch of changes in order, exactly as the same
 * sequence of lpm_update() and lpm_remove() calls would, and returns how
 * many failed. Engines that implement it fetch the memory of the next
 * changes while applying one: a change of a big table otherwise waits on
 * a few cache misses in turn, which dominates a full-table convergence.
 */
uint lpm_apply(struct lpm_engine *e, struct lpm_change *c, uint count);

/**
 * lpm_apply_one - apply one change of a batch alone
 * @e: engine
 * @c: the change
 *
 * A single lpm_update(), or lpm_remove() for the value %LPM_NONE, filling
 * in @c's old value; sets and returns @c's result. lpm_apply() uses it
 * for classes without a batch hook, engines for changes they apply one at
 * a time.
 */
static inline int lpm_apply_one(struct lpm_engine *e, struct lpm_change *c)
{
  return c->result = (c->value == LPM_NONE) ?
    lpm_remove(e, &c->n.n, &c->old) : lpm_update(e, &c->n.n, c->value, &c->old);
}

/**
 * lpm_find - value of exactly this prefix
 * @e: engine
 * @n: prefix, host bits clear
 *
 * Returns its value, or %LPM_NONE if the engine does not hold it. No
 * longest-prefix match: see lpm_match() and the lookups.
 */
static inline u32 lpm_find(const struct lpm_engine *e, const net_addr *n)
{ return e->class->find(e, n); }

/*
 * lpm_match() answers an address (a net of full length) from the prefixes
 * themselves, longest first, by lpm_find(): the prefix in @px and its value,
 * or LPM_NONE. Slow (one exact lookup per length), for the CLI and for
 * cross-checks of the lookup structures, which must answer the same.
 */
u32 lpm_match(const struct lpm_engine *e, const net_addr *n, net_addr *px);

/**
 * lpm_dump - all prefixes held and their values
 * @e: engine
 * @r: output
 * @max: room in @r
 *
 * Writes at most @max of them (lpm_stats() tells how many there are) and
 * returns how many were written.
 */
static inline uint lpm_dump(const struct lpm_engine *e, struct lpm_route *r, uint max)
{ u64 pos = 0; return e->class->dump(e, r, max, &pos); }

/**
 * lpm_dump_from - a dump in parts
 * @e: engine
 * @r: output
 * @max: room in @r
 * @pos: where to go on; 0 for the first part, advanced by the call
 *
 * For dumps in slices (CLI benchmarks): a part with fewer than @max
 * prefixes is the last. Returns how many were written.
 */
static inline uint lpm_dump_from(const struct lpm_engine *e, struct lpm_route *r, uint max, u64 *pos)
{ return e->class->dump(e, r, max, pos); }

/**
 * lpm_build - replace the whole contents of an engine
 * @e: engine
 * @r: prefixes and values
 * @count: number of them
 *
 * Returns 0, or -1 when memory ran out (the engine keeps its contents).
 */
static inline int lpm_build(struct lpm_engine *e, const struct lpm_route *r, uint count)
{ return e->class->build(e, r, count); }

/**
 * lpm_lookup4 - longest-prefix match of one IPv4 address
 * @e: engine
 * @a: address
 *
 * Returns the value of the longest prefix covering @a, or %LPM_NONE.
 */
static inline u32 lpm_lookup4(const struct lpm_engine *e, ip4_addr a)
{ return e->class->lookup4(e, a); }

/**
 * lpm_lookup6 - longest-prefix match of one IPv6 address
 * @e: engine
 * @a: address
 *
 * Returns the value of the longest prefix covering @a, or %LPM_NONE.
 */
static inline u32 lpm_lookup6(const struct lpm_engine *e, ip6_addr a)
{ return e->class->lookup6(e, a); }

/**
 * lpm_lookup4_bulk - longest-prefix match of a batch of IPv4 addresses
 * @e: engine
 * @a: addresses
 * @v: values, one per address (%LPM_NONE: no match)
 * @n: number of addresses
 *
 * Runs the batch lookup of the variant chosen when the engine was
 * created.
 */
static inline void lpm_lookup4_bulk(const struct lpm_engine *e, const ip4_addr *a, u32 *v, uint n)
{ e->bulk4(e, a, v, n); }

/**
 * lpm_lookup6_bulk - longest-prefix match of a batch of IPv6 addresses
 * @e: engine
 * @a: addresses
 * @v: values, one per address (%LPM_NONE: no match)
 * @n: number of addresses
 *
 * Runs the batch lookup of the variant chosen when the engine was
 * created.
 */
static inline void lpm_lookup6_bulk(const struct lpm_engine *e, const ip6_addr *a, u32 *v, uint n)
{ e->bulk6(e, a, v, n); }

/**
 * lpm_stats - counters of an engine
 * @e: engine
 * @s: filled with them
 *
 * Prefixes, updates, builds, memory and allocation failures; may be asked
 * at any time.
 */
static inline void lpm_stats(const struct lpm_engine *e, struct lpm_stats *s)
{ e->class->stats(e, s); }

/* For engines: fill the common head (called by class->create) */
void lpm_engine_init(struct lpm_engine *e, const struct lpm_class *c, pool *p, uint net_type, uint variant);
void lpm_engine_fini(struct lpm_engine *e);

/*
 * Reader epochs. Readers: lpm_reader_add() once per thread, then
 * lpm_read_begin()/lpm_read_end() around lookups. Writer: lpm_epoch_retire()
 * returns the epoch to tag retired memory with; lpm_epoch_safe() tells
 * whether every reader has left the read sections that could see it.
 */
void lpm_reader_add(struct lpm_engine *e, struct lpm_reader *r);
void lpm_reader_remove(struct lpm_engine *e, struct lpm_reader *r);
void lpm_read_begin(struct lpm_engine *e, struct lpm_reader *r);
void lpm_read_end(struct lpm_reader *r);
u64 lpm_epoch_retire(struct lpm_engine *e);
int lpm_epoch_safe(struct lpm_engine *e, u64 retired);

/*
 * Lookup memory: one contiguous anonymous mapping, reserved at its largest
 * size (the kernel backs only the pages that are touched), so it never
 * moves and everything in it can be addressed by index. A BIRD resource in
 * the engine's pool: freed with it, counted by `show memory'.
 *
 * lpm_region_new_shm() makes the same region a named POSIX shared-memory
 * object (a sparse file in /dev/shm) that other processes map read-only,
 * with the permissions and group given (readers need no more than read
 * access). The name must not exist: it is created exclusively and never
 * through a symbolic link, so nothing that another user put under the name
 * is opened or written. It is unlinked when the region is freed, unless it
 * names another object by then.
 *
 * A page of a shared-memory object that the file system cannot back (a full
 * tmpfs) is not an error at write time but a SIGBUS: whoever writes a part
 * of a shared region not written before reserves it first with
 * lpm_region_reserve(), which allocates its pages in the file (fallocate())
 * and fails, with errno, where a write would have killed bird. Private
 * regions need no reservation (the whole mapping counts as reserved). A
 * shared region truncated under bird is caught as it faults: it reads and
 * writes private zero pages from then on and lpm_region_lost() says so, and
 * its owner starts over with a new one (nest/lpm-region.c).
 */
struct lpm_region {
  resource r;
  void *base;
  size_t size;				/* Bytes of address space */
  size_t used;				/* High-water mark set by the engine */
  size_t reserved;			/* Bytes from the start backed by the file system */
  int reserve_errno;			/* Why the last reservation failed, 0 if none did */
  volatile sig_atomic_t lost;		/* Truncated under bird (SIGBUS caught): start over */
  int fd;				/* Shared-memory object, -1 if private */
  char *shm_name;			/* Its name ("/name"), NULL if private */
  u64 shm_ino;				/* Its inode, to unlink only our own */
};

struct lpm_region *lpm_region_new(pool *p, size_t size);
struct lpm_region *lpm_region_new_shm(pool *p, const char *name, size_t size, uint mode, int gid);
void lpm_region_discard(struct lpm_region *r, size_t from);	/* Give pages from @from back */
int lpm_region_reserve(struct lpm_region *r, size_t bytes);
/**
 * lpm_region_lost - whether a shared region was truncated under bird
 * @r: region
 *
 * Set when a SIGBUS on the region was caught: the engine must start
 * over.
 */
static inline int lpm_region_lost(const struct lpm_region *r) { return r->lost; }

#endif
