/*
 *	bloombird -- Reader of an LPM export in shared memory
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: LPM export reader
 *
 * Maps the objects of an export read-only and answers lookups with the
 * simd engine's lookup code itself: this file is compiled with BIRD's
 * headers (for its address types and the view layout of nest/lpm-simd.h)
 * and linked with nest/lpm-simd-scalar.c, nest/lpm-variant.c and, where
 * configure built them, the vector variants and the CPU detection of
 * sysdep/x86, unchanged, so bird and its readers cannot disagree about the
 * layout, the walk or the choice of a variant.
 *
 * Every batch runs between two reads of the header's reuse seqlock and is
 * repeated if the seqlock moved (proto/lpm/lpm-shm.c); batches are cut to
 * %LPMR_CHUNK addresses so a repetition stays cheap. The next-hop entries
 * of the answers are read later, by the caller: lpmr_stamp() and
 * lpmr_valid() give it the same seqlock around its lookups and reads, and
 * lpmr_route4() / lpmr_route6() do both for one address.
 */

#include "nest/bird.h"
#include "nest/lpm-simd.h"

#include "tools/lpm-reader/lpm-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define LPMR_CHUNK	256
#define LPMR_SILENT_NS	1000000000ULL	/* No heartbeat for this long: bird is gone */

typedef void lpmr_bulk4_fn(const struct simd_view *v, const ip4_addr *a, u32 *val, uint n);
typedef void lpmr_bulk6_fn(const struct simd_view *v, const ip6_addr *a, u32 *val, uint n);

static lpmr_bulk4_fn * const lpmr_bulk4[LPM_VAR_MAX] = { simd_bulk4_scalar, LPM_IF_AVX2(simd_bulk4_avx2), LPM_IF_AVX512(simd_bulk4_avx512) };
static lpmr_bulk6_fn * const lpmr_bulk6[LPM_VAR_MAX] = { simd_bulk6_scalar, LPM_IF_AVX2(simd_bulk6_avx2), LPM_IF_AVX512(simd_bulk6_avx512) };

struct lpmr_map {
  void *base;
  size_t size;
};

struct lpmr {
  char name[LPMX_NAME_MAX];
  long owner;				/* The uid trusted, -1: root, "bird", the caller */
  struct lpmr_map x, fam[2];
  const struct lpmx_header *h;
  const struct lpmx_nh *nh;
  u32 nh_max;				/* Entries of @nh, checked against the region at open */
  struct simd_view v[2];
  int has[2];
  int variant;
  u64 retries;
};

static u64
lpmr_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (u64) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Whether an object is bird's: anyone can create names in /dev/shm, so an
 * object is trusted only if its owner is one bird runs as and nobody else
 * may write it. Root is always trusted (bird runs as root unless -u).
 */
static int
lpmr_trusted(const struct stat *st, long owner, const char *obj, char *err, size_t errsize)
{
  uid_t bird = (uid_t) -1;
  if (owner < 0)
  {
    const struct passwd *pw = getpwnam("bird");
    if (pw)
      bird = pw->pw_uid;
  }

  if (!S_ISREG(st->st_mode))
    snprintf(err, errsize, "%s is not a regular file", obj);
  else if (st->st_mode & (S_IWGRP | S_IWOTH))
    snprintf(err, errsize, "%s is writable by others than its owner (mode %04o)", obj, (unsigned) (st->st_mode & 07777));
  else if ((st->st_uid != 0) &&
	   ((owner >= 0) ? (st->st_uid != (uid_t) owner) : ((st->st_uid != bird) && (st->st_uid != geteuid()))))
    snprintf(err, errsize, "%s is owned by uid %u, not by bird's user", obj, (unsigned) st->st_uid);
  else
    return 1;

  return 0;
}

static int
lpmr_map(struct lpmr_map *m, const char *obj, long owner, char *err, size_t errsize)
{
  int fd = shm_open(obj, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
  {
    snprintf(err, errsize, "no shared memory %s: %s", obj, strerror(errno));
    return (errno == ENOENT) ? LPMR_ENOENT : LPMR_ESYS;
  }

  struct stat st;
  if (fstat(fd, &st) < 0)
  {
    snprintf(err, errsize, "%s: %s", obj, strerror(errno));
    close(fd);
    return LPMR_ESYS;
  }
  if (!lpmr_trusted(&st, owner, obj, err, errsize))
  {
    close(fd);
    return LPMR_EOWNER;
  }

  m->size = st.st_size;
  m->base = m->size ? mmap(NULL, m->size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);
  if (m->base == MAP_FAILED)
  {
    snprintf(err, errsize, "cannot map %s (%zu bytes): %s", obj, m->size, strerror(errno));
    m->base = NULL;
    return LPMR_ESYS;
  }

  /* The lookup rows are spread over the whole region: map bird's huge pages
     as huge ones where the kernel keeps shared memory in them
     (transparent_hugepage/shmem_enabled); a no-op otherwise */
  madvise(m->base, m->size, MADV_HUGEPAGE);
  return LPMR_OK;
}

static void
lpmr_unmap(struct lpmr_map *m)
{
  if (m->base)
    munmap(m->base, m->size);
  m->base = NULL;
}

/**
 * lpmr_close - unmap an export and free the reader
 * @r: reader, or NULL
 *
 * Unmaps the header and both families' regions; pointers from lpmr_nh()
 * are invalid afterwards. NULL is ignored.
 */
void
lpmr_close(struct lpmr *r)
{
  if (!r)
    return;
  lpmr_unmap(&r->x);
  lpmr_unmap(&r->fam[0]);
  lpmr_unmap(&r->fam[1]);
  free(r);
}

/**
 * lpmr_open - map an export
 * @name: export name (bird's `shm "NAME"')
 * @code: set to an &lpmr_error
 * @err: buffer for a message
 * @errsize: its size
 */
struct lpmr *
lpmr_open(const char *name, int *code, char *err, size_t errsize)
{
  return lpmr_open_owner(name, -1, code, err, errsize);
}

/**
 * lpmr_open_owner - map an export whose objects belong to a given user
 * @name: export name
 * @owner: the uid to trust besides root, -1 for the default of lpmr_open()
 * @code: set to an &lpmr_error
 * @err: buffer for a message
 * @errsize: its size
 */
struct lpmr *
lpmr_open_owner(const char *name, long owner, int *code, char *err, size_t errsize)
{
  struct lpmr *r = calloc(1, sizeof(struct lpmr));
  char obj[LPMX_NAME_MAX + 2];

  snprintf(r->name, sizeof(r->name), "%s", name);
  r->owner = owner;
  snprintf(obj, sizeof(obj), "/%s", name);
  if ((*code = lpmr_map(&r->x, obj, owner, err, errsize)) < 0)
    goto fail;

  const struct lpmx_header *h = r->h = r->x.base;
  if ((r->x.size < LPMX_HEADER_SIZE) || (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != LPMX_MAGIC))
  {
    snprintf(err, errsize, "/dev/shm/%s is not an LPM export (or is being created)", name);
    *code = ((r->x.size >= LPMX_HEADER_SIZE) && h->magic) ? LPMR_EFORMAT : LPMR_ENOENT;
    goto fail;
  }
  if (h->version != LPMX_VERSION)
  {
    snprintf(err, errsize, "layout version mismatch: /dev/shm/%s has layout version %u, this reader reads version %u",
	     name, h->version, LPMX_VERSION);
    *code = LPMR_EVERSION;
    goto fail;
  }
  if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != LPMX_RUNNING)
  {
    snprintf(err, errsize, "/dev/shm/%s is %s", name, h->state ? "closed" : "not ready yet");
    *code = LPMR_ENOENT;
    goto fail;
  }
  if ((h->nh_size != sizeof(struct lpmx_nh)) || (h->nh_offset % _Alignof(struct lpmx_nh)) ||
      ((u64) h->nh_offset + (u64) h->nh_max * h->nh_size > r->x.size))
  {
    snprintf(err, errsize, "/dev/shm/%s: next-hop table does not fit its region", name);
    *code = LPMR_EFORMAT;
    goto fail;
  }
  r->nh = (const void *) ((const char *) h + h->nh_offset);
  r->nh_max = h->nh_max;		/* The header is bird's to change: read once */

  for (uint i = 0; i < 2; i++)
  {
    char region[LPMX_NAME_MAX];
    memcpy(region, h->fam[i].region, LPMX_NAME_MAX);
    region[LPMX_NAME_MAX - 1] = 0;
    if (!region[0])
      continue;

    /* The export's own objects only, whatever its header names */
    char want[LPMX_NAME_MAX + 8];
    snprintf(want, sizeof(want), "/%s.%s", name, i ? "ipv6" : "ipv4");
    if (strcmp(region, want))
    {
      snprintf(err, errsize, "/dev/shm/%s names region %s, not %s", name, region, want);
      *code = LPMR_EFORMAT;
      goto fail;
    }

    if ((*code = lpmr_map(&r->fam[i], region, owner, err, errsize)) < 0)
      goto fail;

    const struct simd_header *s = r->fam[i].base;
    if ((r->fam[i].size < SIMD_HEADER_SIZE) || (s->magic != SIMD_MAGIC))
    {
      snprintf(err, errsize, "%s is not a simd engine region", region);
      *code = LPMR_EFORMAT;
      goto fail;
    }
    if (s->version != SIMD_VERSION)
    {
      snprintf(err, errsize, "layout version mismatch: %s has simd layout version %u, this reader reads version %u",
	       region, s->version, SIMD_VERSION);
      *code = LPMR_EVERSION;
      goto fail;
    }
    if ((simd_view_init(&r->v[i], r->fam[i].base) < 0) ||
	(s->elements_offset > r->fam[i].size) ||
	(s->elements_max > (r->fam[i].size - s->elements_offset) / 4))
    {
      snprintf(err, errsize, "%s: unreadable simd header", region);
      *code = LPMR_EFORMAT;
      goto fail;
    }
    r->has[i] = 1;
  }

  lpmr_set_variant(r, "auto");
  *code = LPMR_OK;
  return r;

fail:
  lpmr_close(r);
  return NULL;
}

/**
 * lpmr_has_variant - whether a batch lookup variant runs here
 * @variant: "auto", "scalar", "avx2" or "avx512"
 *
 * Returns the variant's index if this build and this CPU can run it, -1
 * otherwise (or for an unknown name). "auto" gives the best variant the
 * CPU has.
 */
int
lpmr_has_variant(const char *variant)
{
  int v = -1;
  if (!strcmp(variant, "auto"))
    v = LPM_VAR_AUTO;
  for (uint i = 0; i < LPM_VAR_MAX; i++)
    if (!strcmp(variant, lpm_variant_names[i]))
      v = i;
  if (v < 0)
    return -1;

  u32 cpu = lpm_variants_cpu();
  if (v == LPM_VAR_AUTO)
  {
    for (v = LPM_VAR_MAX - 1; v > 0; v--)
      if (cpu & (1U << v))
	break;
    return v;
  }
  return (cpu & (1U << v)) ? v : -1;
}

/**
 * lpmr_set_variant - choose the batch lookup variant of a reader
 * @r: reader
 * @variant: a name lpmr_has_variant() accepts
 *
 * Returns the variant's index, or -1 (and the reader keeps its variant)
 * if it cannot run here.
 */
int
lpmr_set_variant(struct lpmr *r, const char *variant)
{
  int v = lpmr_has_variant(variant);
  if (v >= 0)
    r->variant = v;
  return v;
}

/**
 * lpmr_variant - name of a reader's batch lookup variant
 * @r: reader
 *
 * The variant in use: the one lpmr_set_variant() chose last; lpmr_open()
 * chooses "auto", the best one the CPU has.
 */
const char *
lpmr_variant(const struct lpmr *r)
{
  return lpm_variant_names[r->variant];
}

/**
 * lpmr_has4 - whether the export has an IPv4 table
 * @r: reader
 *
 * Non-zero if bird exports IPv4 (its exporter has a channel for it);
 * without one, IPv4 lookups answer %LPMR_NONE.
 */
int lpmr_has4(const struct lpmr *r) { return r->has[0]; }

/**
 * lpmr_has6 - whether the export has an IPv6 table
 * @r: reader
 *
 * As lpmr_has4(), for IPv6.
 */
int lpmr_has6(const struct lpmr *r) { return r->has[1]; }

static inline u64
lpmr_seq_begin(const struct lpmr *r)
{
  return __atomic_load_n(&r->h->reuse_seq, __ATOMIC_ACQUIRE);
}

static inline int
lpmr_seq_retry(struct lpmr *r, u64 s)
{
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (__atomic_load_n(&r->h->reuse_seq, __ATOMIC_RELAXED) == s)
    return 0;
  r->retries++;
  return 1;
}

/**
 * lpmr_lookup4 - batch lookup of IPv4 addresses
 * @r: reader
 * @a: addresses, host order
 * @nh: next-hop indices, one per address
 * @n: number of addresses (any)
 *
 * Looks the addresses up in chunks with the reader's variant; a chunk is
 * looked up again if bird reused next-hop entries meanwhile. Without an
 * IPv4 channel every answer is %LPMR_NONE.
 */
void
lpmr_lookup4(struct lpmr *r, const uint32_t *a, uint32_t *nh, unsigned n)
{
  if (!r->has[0])
  {
    memset(nh, 0xff, n * sizeof(u32));
    return;
  }

  lpmr_bulk4_fn *f = lpmr_bulk4[r->variant];
  for (unsigned i = 0; i < n; i += LPMR_CHUNK)
  {
    unsigned k = MIN(LPMR_CHUNK, n - i);
    u64 s;
    do {
      s = lpmr_seq_begin(r);
      f(&r->v[0], (const ip4_addr *) (a + i), nh + i, k);
    } while (lpmr_seq_retry(r, s));
  }
}

/**
 * lpmr_lookup6 - batch lookup of IPv6 addresses
 * @r: reader
 * @a: addresses, as four host-order words each
 * @nh: next-hop indices, one per address
 * @n: number of addresses (any)
 *
 * As lpmr_lookup4(), for the IPv6 table.
 */
void
lpmr_lookup6(struct lpmr *r, const uint32_t (*a)[4], uint32_t *nh, unsigned n)
{
  if (!r->has[1])
  {
    memset(nh, 0xff, n * sizeof(u32));
    return;
  }

  lpmr_bulk6_fn *f = lpmr_bulk6[r->variant];
  for (unsigned i = 0; i < n; i += LPMR_CHUNK)
  {
    unsigned k = MIN(LPMR_CHUNK, n - i);
    u64 s;
    do {
      s = lpmr_seq_begin(r);
      f(&r->v[1], (const ip6_addr *) (a + i), nh + i, k);
    } while (lpmr_seq_retry(r, s));
  }
}

/**
 * lpmr_nh - the next-hop entry of an index
 * @r: reader
 * @i: next-hop index from a lookup
 *
 * Returns the entry in the mapping itself, or NULL for an index beyond
 * the table (%LPMR_NONE among them). bird may reuse the entry: read it
 * between lpmr_stamp() and lpmr_valid().
 */
const struct lpmx_nh *
lpmr_nh(const struct lpmr *r, uint32_t i)
{
  return (i < r->nh_max) ? &r->nh[i] : NULL;
}

/**
 * lpmr_stamp - a stamp to take before a batch whose entries will be read
 * @r: reader
 *
 * The reuse seqlock as it is now (acquire: the lookups and entry reads
 * that follow cannot be done before it). See lpmr_valid().
 */
uint64_t
lpmr_stamp(const struct lpmr *r)
{
  return lpmr_seq_begin(r);
}

/**
 * lpmr_valid - may what was read since a stamp be used?
 * @r: reader
 * @stamp: from lpmr_stamp() before the lookups
 *
 * After the caller has read the entries it needs: 1 if bird cannot have
 * reused any entry since @stamp, 0 (counted as a repeated batch) if the
 * caller must look up and read again. The check is the one every batch of
 * this file ends with, the reads before it ordered by an acquire fence.
 */
int
lpmr_valid(struct lpmr *r, uint64_t stamp)
{
  return !lpmr_seq_retry(r, stamp);
}

/*
 * One address looked up and its entry copied into *@nh, under the seqlock:
 * the index as the engine answered it, *@nh zeroed unless that is an entry
 * of the table. The one loop behind lpmr_route*() and lpmr_answer*().
 */
static u32
lpmr_route(struct lpmr *r, int v6, const uint32_t *a, struct lpmx_nh *nh)
{
  u32 v;
  u64 s;

  do {
    s = lpmr_seq_begin(r);
    if (!r->has[v6])
      v = LPMR_NONE;
    else if (v6)
      v = simd_view_lookup6(&r->v[1], (const ip6_addr *) a);
    else
      v = simd_view_lookup4(&r->v[0], *a);

    if ((v != LPMR_NONE) && (v < r->nh_max))
      memcpy(nh, &r->nh[v], sizeof(*nh));
    else
      memset(nh, 0, sizeof(*nh));
  } while (lpmr_seq_retry(r, s));

  return v;
}

static inline int
lpmr_nh_in(const struct lpmr *r, u32 v)
{
  return (v != LPMR_NONE) && (v < r->nh_max);
}

/**
 * lpmr_route4 - one IPv4 address and its entry, read consistently
 * @r: reader
 * @a: address
 * @nh: set to a copy of the entry, zeroed if there is none
 *
 * Returns the next-hop index, or %LPMR_NONE if there is no route (an index
 * beyond the table, from a damaged export, counts as none).
 */
uint32_t
lpmr_route4(struct lpmr *r, uint32_t a, struct lpmx_nh *nh)
{
  u32 v = lpmr_route(r, 0, &a, nh);
  return lpmr_nh_in(r, v) ? v : LPMR_NONE;
}

/**
 * lpmr_route6 - one IPv6 address and its entry, read consistently
 * @r: reader
 * @a: address
 * @nh: set to a copy of the entry, zeroed if there is none
 *
 * As lpmr_route4().
 */
uint32_t
lpmr_route6(struct lpmr *r, const uint32_t a[4], struct lpmx_nh *nh)
{
  u32 v = lpmr_route(r, 1, a, nh);
  return lpmr_nh_in(r, v) ? v : LPMR_NONE;
}

static uint32_t
lpmr_answer(struct lpmr *r, int v6, const uint32_t *a, char *buf, unsigned size)
{
  struct lpmx_nh e;
  u32 v = lpmr_route(r, v6, a, &e);

  if (lpmr_nh_in(r, v))
    lpmx_nh_format(buf, size, &e);
  else
    snprintf(buf, size, "-");

  return v;
}

/**
 * lpmr_answer4 - one IPv4 address answered as text
 * @r: reader
 * @a: address
 * @buf: output buffer
 * @size: its size
 *
 * Looks @a up and reads its entry consistently (lpmr_route4()), then
 * writes the next hops as lpmx_nh_format() does, or "-" without a route.
 * Returns the next-hop index.
 */
uint32_t
lpmr_answer4(struct lpmr *r, uint32_t a, char *buf, unsigned size)
{
  return lpmr_answer(r, 0, &a, buf, size);
}

/**
 * lpmr_answer6 - one IPv6 address answered as text
 * @r: reader
 * @a: address, four host-order words
 * @buf: output buffer
 * @size: its size
 *
 * As lpmr_answer4(), for the IPv6 table.
 */
uint32_t
lpmr_answer6(struct lpmr *r, const uint32_t a[4], char *buf, unsigned size)
{
  return lpmr_answer(r, 1, a, buf, size);
}

/**
 * lpmr_status - state of the mapped export
 * @r: reader
 * @s: filled with the status
 *
 * Fills @s with the export's instance, state and bird's pid, the
 * generation, the ages of the last update and of bird's last tick, the
 * reader's repeated batches, the prefix and live next-hop counts and the
 * memory of the next-hop table and of each family's region.
 */
void
lpmr_status(const struct lpmr *r, struct lpmr_status *s)
{
  const struct lpmx_header *h = r->h;
  u64 now = lpmr_now();
  u64 up = __atomic_load_n(&h->updated_ns, __ATOMIC_RELAXED);
  u64 hb = __atomic_load_n(&h->heartbeat_ns, __ATOMIC_RELAXED);

  memset(s, 0, sizeof(*s));
  s->instance = h->instance;
  s->state = __atomic_load_n(&h->state, __ATOMIC_RELAXED);
  s->pid = h->pid;
  s->generation = __atomic_load_n(&h->generation, __ATOMIC_ACQUIRE);
  s->update_age_ns = (up && now > up) ? now - up : 0;
  s->heartbeat_age_ns = (now > hb) ? now - hb : 0;
  s->retries = r->retries;
  s->prefixes[0] = h->fam[0].prefixes;
  s->prefixes[1] = h->fam[1].prefixes;
  s->nh_live = h->nh_live;
  s->mem[0] = h->nh_offset + (u64) h->nh_used * h->nh_size;
  for (uint i = 0; i < 2; i++)
    if (r->has[i])
    {
      struct stat st;
      char obj[LPMX_NAME_MAX + 16];
      snprintf(obj, sizeof(obj), "/dev/shm%s", h->fam[i].region);
      if (!stat(obj, &st))
	s->mem[1 + i] = (u64) st.st_blocks * 512;
    }
}

/**
 * lpmr_generation - how fresh the mapped table is
 * @r: reader
 * @updated_ns: set to the time the oldest change of the last batch reached bird
 *
 * The generation is read after the time (acquire), so the time belongs to
 * that generation or a later one.
 */
uint64_t
lpmr_generation(const struct lpmr *r, uint64_t *updated_ns)
{
  u64 g = __atomic_load_n(&r->h->generation, __ATOMIC_ACQUIRE);
  *updated_ns = __atomic_load_n(&r->h->updated_ns, __ATOMIC_RELAXED);
  return g;
}

/**
 * lpmr_now_ns - monotonic time in nanoseconds
 *
 * CLOCK_MONOTONIC, comparable with the times lpmr_generation() and
 * lpmr_status() report.
 */
uint64_t
lpmr_now_ns(void)
{
  return lpmr_now();
}

/**
 * lpmr_check - follow bird across restarts
 * @r: reader
 * @err: message buffer
 * @errsize: its size
 */
int
lpmr_check(struct lpmr *r, char *err, size_t errsize)
{
  u32 state = __atomic_load_n(&r->h->state, __ATOMIC_ACQUIRE);
  u64 hb = __atomic_load_n(&r->h->heartbeat_ns, __ATOMIC_RELAXED);
  u64 now = lpmr_now();

  if ((state == LPMX_RUNNING) && (now < hb + LPMR_SILENT_NS))
    return 0;

  int code;
  struct lpmr *n = lpmr_open_owner(r->name, r->owner, &code, err, errsize);
  if (!n)
    return code;

  if (n->h->instance == r->h->instance)
  {
    snprintf(err, errsize, "/dev/shm/%s: bird (pid %u) is silent", r->name, r->h->pid);
    lpmr_close(n);
    return LPMR_ENOENT;
  }

  /* Swap the new mapping in, keep the reader's variant and counters */
  n->variant = r->variant;
  n->retries = r->retries;
  struct lpmr old = *r;
  *r = *n;
  *n = old;
  lpmr_close(n);
  return 1;
}
