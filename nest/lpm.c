/*
 *	bloombird -- Longest-prefix-match engines: registry, variants, epochs
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: LPM engines
 *
 * An LPM engine (nest/lpm.h) holds prefixes with 32-bit values and answers
 * longest-prefix matches for single addresses and batches. Engines register
 * an &lpm_class; tables (`lpm engine' in the table block) and the exporter
 * protocol create them by name.
 *
 * Variants. Batch lookups come in CPU variants (scalar, AVX2, AVX-512); the
 * vector ones are kept in their own files under sysdep/ and built where the
 * architecture has them. lpm_variant_select() is the single place where a
 * variant is chosen: from what this build and the CPU can run
 * (lpm_variants_cpu(), nest/lpm-variant.c), what the engine implements, and a pin
 * from the configuration or from $BLOOMBIRD_LPM_VARIANT (for tests and
 * benchmarks). A pin the CPU cannot run is refused, never silently lowered.
 *
 * Readers in other threads. BIRD's own thread is the only writer. Engines
 * never modify lookup memory that a reader may be walking except by single
 * aligned stores of complete elements (release order, new memory written
 * before it is linked); memory unlinked by an update is retired, tagged with
 * lpm_epoch_retire(), and reused only once lpm_epoch_safe() says that every
 * registered reader has left the read sections that began before it was
 * retired. A reader publishes the epoch it saw at lpm_read_begin() and zero
 * at lpm_read_end(); the writer advances the epoch at every retirement, so
 * retired memory is safe once no reader shows an epoch at or below its tag.
 * A reader therefore sees, per address, the answer before or after each
 * update and never a row that was reused under it.
 */

#include "nest/bird.h"
#include "nest/lpm.h"
#include "lib/resource.h"
#include "lib/string.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

/*
 *	Registry
 */

#define LPM_MAX_CLASSES 4
static const struct lpm_class *lpm_classes[LPM_MAX_CLASSES];

/**
 * lpm_class_register - make an engine class known by name
 * @c: the class
 *
 * Registering a class twice is harmless; more than %LPM_MAX_CLASSES
 * classes is a bug.
 */
void
lpm_class_register(const struct lpm_class *c)
{
  for (uint i = 0; i < LPM_MAX_CLASSES; i++)
    if (!lpm_classes[i] || (lpm_classes[i] == c))
    {
      lpm_classes[i] = c;
      return;
    }

  bug("Too many LPM engine classes");
}

/**
 * lpm_class_find - look up an engine class by name
 * @name: the class's name, as in `lpm engine NAME'
 *
 * Returns the registered class, or NULL if none has that name.
 */
const struct lpm_class *
lpm_class_find(const char *name)
{
  for (uint i = 0; (i < LPM_MAX_CLASSES) && lpm_classes[i]; i++)
    if (!strcmp(lpm_classes[i]->name, name))
      return lpm_classes[i];

  return NULL;
}

/**
 * lpm_class_next - iterate over the registered engine classes
 * @c: the previous class, or NULL for the first
 *
 * Returns the class registered after @c, or NULL after the last.
 */
const struct lpm_class *
lpm_class_next(const struct lpm_class *c)
{
  if (!c)
    return lpm_classes[0];

  for (uint i = 0; i + 1 < LPM_MAX_CLASSES; i++)
    if (lpm_classes[i] == c)
      return lpm_classes[i + 1];

  return NULL;
}

/*
 *	Variants
 */

/**
 * lpm_variant_by_name - batch lookup variant by name
 * @name: "auto" or a variant's name
 *
 * Returns %LPM_VAR_AUTO for "auto", the variant's index for a known name
 * and -1 for anything else. Whether the variant can run here is decided
 * later, by lpm_variant_select().
 */
int
lpm_variant_by_name(const char *name)
{
  if (!strcmp(name, "auto"))
    return LPM_VAR_AUTO;

  for (uint i = 0; i < LPM_VAR_MAX; i++)
    if (!strcmp(lpm_variant_names[i], name))
      return i;

  return -1;
}

/**
 * lpm_variant_select - choose the batch lookup variant
 * @want: a variant, or %LPM_VAR_AUTO
 * @mask: variants the engine implements
 *
 * The environment variable BLOOMBIRD_LPM_VARIANT, if set, takes the place of
 * @want %LPM_VAR_AUTO (a configured pin wins over it). Returns the variant,
 * or -1 if @want cannot run here (unknown, not implemented, or missing
 * from the CPU).
 */
int
lpm_variant_select(uint want, u32 mask)
{
  u32 ok = mask & lpm_variants_cpu();

  if (want == LPM_VAR_AUTO)
  {
    const char *env = getenv("BLOOMBIRD_LPM_VARIANT");
    if (env && *env)
      want = lpm_variant_by_name(env);
  }

  if (want == LPM_VAR_AUTO)
  {
    for (int v = LPM_VAR_MAX - 1; v >= 0; v--)
      if (ok & (1U << v))
	return v;
    return -1;
  }

  return ((want < LPM_VAR_MAX) && (ok & (1U << want))) ? (int) want : -1;
}

/*
 *	Engines
 */

/**
 * lpm_new - create an engine of a class
 * @p: pool to create it in
 * @c: engine class
 * @net_type: %NET_IP4 or %NET_IP6
 * @par: parameters, or NULL for the defaults (variant chosen automatically)
 *
 * Returns the class's new engine, or NULL if the class refuses the net
 * type or the parameters.
 */
struct lpm_engine *
lpm_new(pool *p, const struct lpm_class *c, uint net_type, const struct lpm_params *par)
{
  struct lpm_params def = { .variant = LPM_VAR_AUTO };
  return c->create(p, net_type, par ?: &def);
}

/**
 * lpm_free - free an engine
 * @e: the engine, or NULL
 *
 * Frees it through its class; NULL is ignored.
 */
void
lpm_free(struct lpm_engine *e)
{
  if (e)
    e->class->free(e);
}

/**
 * lpm_match - longest-prefix match by exact lookups of the prefixes
 * @e: engine
 * @n: address as a net of full length (NET_IP4 or NET_IP6)
 * @px: the matching prefix is put here
 *
 * See nest/lpm.h. Returns the value of the longest prefix held that covers
 * @n, or %LPM_NONE (@px then undefined).
 */
u32
lpm_match(const struct lpm_engine *e, const net_addr *n, net_addr *px)
{
  for (int len = n->pxlen; len >= 0; len--)
  {
    if (n->type == NET_IP4)
      net_fill_ip4(px, ip4_and(net4_prefix(n), ip4_mkmask(len)), len);
    else
      net_fill_ip6(px, ip6_and(net6_prefix(n), ip6_mkmask(len)), len);

    u32 v = lpm_find(e, px);
    if (v != LPM_NONE)
      return v;
  }

  return LPM_NONE;
}

/**
 * lpm_apply - apply a batch of changes
 * @e: the engine
 * @c: the changes, applied in order; @old and @result filled in
 * @count: how many
 *
 * Returns the number of changes that failed for lack of memory. Engines
 * without a batch operation get one lpm_update() or lpm_remove() per change.
 */
uint
lpm_apply(struct lpm_engine *e, struct lpm_change *c, uint count)
{
  if (e->class->apply)
    return e->class->apply(e, c, count);

  uint failed = 0;
  for (uint i = 0; i < count; i++)
    failed += (lpm_apply_one(e, &c[i]) < 0);
  return failed;
}

/**
 * lpm_engine_init - initialize the common part of an engine
 * @e: the engine
 * @c: its class
 * @p: its pool
 * @net_type: %NET_IP4 or %NET_IP6
 * @variant: batch lookup variant, already chosen
 *
 * Called by every class's create hook: sets the batch lookups of the
 * variant, the first epoch and an empty list of readers with its lock.
 */
void
lpm_engine_init(struct lpm_engine *e, const struct lpm_class *c, pool *p, uint net_type, uint variant)
{
  ASSERT(variant < LPM_VAR_MAX);
  e->class = c;
  e->pool = p;
  e->net_type = net_type;
  e->variant = variant;
  e->bulk4 = c->bulk4[variant];
  e->bulk6 = c->bulk6[variant];
  atomic_store_explicit(&e->epoch, 1, memory_order_relaxed);
  init_list(&e->readers);

  pthread_mutex_t *m = mb_alloc(p, sizeof(pthread_mutex_t));
  pthread_mutex_init(m, NULL);
  e->readers_lock = m;
}

/**
 * lpm_engine_fini - release the common part of an engine
 * @e: the engine
 *
 * Called by the class's free hook; every reader must have been removed.
 */
void
lpm_engine_fini(struct lpm_engine *e)
{
  ASSERT_DIE(EMPTY_LIST(e->readers));
  pthread_mutex_destroy(e->readers_lock);
  mb_free(e->readers_lock);
}

/*
 *	Reader epochs
 */

/**
 * lpm_reader_add - register a reader thread
 * @e: engine
 * @r: the reader's state
 *
 * From then on lpm_epoch_safe() waits for @r's read sections. @r starts
 * outside any read section.
 */
void
lpm_reader_add(struct lpm_engine *e, struct lpm_reader *r)
{
  atomic_store_explicit(&r->seen, 0, memory_order_relaxed);
  pthread_mutex_lock(e->readers_lock);
  add_tail(&e->readers, &r->n);
  pthread_mutex_unlock(e->readers_lock);
}

/**
 * lpm_reader_remove - unregister a reader thread
 * @e: engine
 * @r: the reader's state, outside a read section
 *
 * After this, lpm_epoch_safe() no longer waits for @r.
 */
void
lpm_reader_remove(struct lpm_engine *e, struct lpm_reader *r)
{
  pthread_mutex_lock(e->readers_lock);
  rem_node(&r->n);
  pthread_mutex_unlock(e->readers_lock);
}

/**
 * lpm_read_begin - enter a read section
 * @e: engine
 * @r: the reader's state
 *
 * Publishes the engine's current epoch as the one @r saw, before any
 * lookup load: memory retired from then on stays until lpm_read_end().
 */
void
lpm_read_begin(struct lpm_engine *e, struct lpm_reader *r)
{
  /* Publish the epoch before any lookup load (seq_cst store + load) */
  u64 ep = atomic_load_explicit(&e->epoch, memory_order_acquire);
  atomic_store_explicit(&r->seen, ep, memory_order_seq_cst);
  atomic_thread_fence(memory_order_seq_cst);
}

/**
 * lpm_read_end - leave a read section
 * @r: the reader's state
 *
 * Publishes that @r reads nothing any more (epoch zero).
 */
void
lpm_read_end(struct lpm_reader *r)
{
  atomic_store_explicit(&r->seen, 0, memory_order_release);
}

/**
 * lpm_epoch_retire - tag memory being retired
 * @e: engine
 *
 * Advances the engine's epoch and returns the old one: memory unlinked
 * before this call may be seen by readers that saw epochs up to the tag,
 * and is reused only once lpm_epoch_safe() says so.
 */
u64
lpm_epoch_retire(struct lpm_engine *e)
{
  /* Memory retired now may be seen by readers that saw epochs up to this */
  return atomic_fetch_add_explicit(&e->epoch, 1, memory_order_seq_cst);
}

/**
 * lpm_epoch_safe - whether memory retired with a tag can be reused
 * @e: engine
 * @retired: tag from lpm_epoch_retire()
 *
 * Returns 1 if no registered reader is in a read section that began at
 * an epoch up to @retired, 0 otherwise. Without readers, always 1.
 */
int
lpm_epoch_safe(struct lpm_engine *e, u64 retired)
{
  int safe = 1;

  if (EMPTY_LIST(e->readers))
    return 1;

  atomic_thread_fence(memory_order_seq_cst);
  pthread_mutex_lock(e->readers_lock);
  struct lpm_reader *r;
  WALK_LIST(r, e->readers)
  {
    u64 s = atomic_load_explicit(&r->seen, memory_order_acquire);
    if (s && (s <= retired))
    {
      safe = 0;
      break;
    }
  }
  pthread_mutex_unlock(e->readers_lock);

  return safe;
}
