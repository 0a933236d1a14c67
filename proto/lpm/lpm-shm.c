/*
 *	bloombird -- LPM exporter: the shared-memory export
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: LPM exporter shared memory and its consistency protocol
 *
 * An export named N is a few POSIX shared-memory objects (layout in
 * proto/lpm/lpm-shm.h): /N, the exporter region (a header and the
 * next-hop table), and /N.ipv4, /N.ipv6, the simd engine's lookup regions
 * (position-independent: element indices, no pointers). Readers map them
 * read-only and run the engine's own lookup code on them
 * (tools/lpm-reader). bird is the only writer.
 *
 * Ownership. /N.lock is flock()ed by the bird that exports N for as long
 * as it does; a second bird (or protocol) asking for N is refused, at
 * configuration time if the lock is held then, else when the protocol
 * starts. The owner removes stale objects of a predecessor (a crashed bird)
 * and creates all of them afresh (O_EXCL), never writing into an object
 * that a reader may still have mapped: readers of an old instance keep a
 * consistent, if stale, copy until they remap.
 *
 * What a reader may see. Lookups read engine elements and then one
 * next-hop entry, while bird goes on writing:
 *   - Engine elements change only by single aligned 4-byte stores of
 *     complete elements (release order); a new row is complete before the
 *     element linking it is stored. So every lookup ends at a leaf that
 *     was the answer before or after each concurrent update.
 *   - A next-hop entry is written completely before the engine stores its
 *     index, and never written while an element refers to it.
 *   - Memory that an update unlinks (engine rows, entries whose last
 *     prefix went) is not reused at once: bird does not know its readers,
 *     so it uses a grace period of its own making. Every tick (%LPMX_TICK)
 *     in which something was retired, bird increments @reuse_seq in the
 *     header (sequentially consistent) and only then makes reusable what
 *     was retired before that increment: for the engine through a reader
 *     registration (&lpmx_fam.proxy) whose epoch it moves to the current
 *     one, for entries through their retirement tick (lpmx_nh_reclaim()).
 *   - A reader reads @reuse_seq (acquire) before a lookup or a batch and
 *     again after it (after an acquire fence); if it changed, the batch may
 *     have read reused memory and is repeated. A lookup that began after an
 *     increment cannot reach memory unlinked before it. So an answer a
 *     reader accepts is always one that the table held, and batches far
 *     shorter than a tick are almost never repeated. It is a seqlock whose
 *     writer side is only the reuse of memory, not every update.
 *   - Freshness: @generation counts updates (route changes are applied in
 *     batches, one generation each) and @updated_ns tells when the oldest
 *     change of the last batch reached the protocol, so that staleness
 *     includes the time it was queued; @heartbeat_ns is written every tick, so a
 *     reader can tell how stale its view may be and whether bird still runs.
 *
 * Restarts. When the protocol stops, bird sets @state to %LPMX_CLOSED and
 * unlinks the names; a reader that sees that, or a heartbeat that stopped,
 * or an @instance different from the one behind the name, remaps by name.
 * A reader that starts first waits for the names to appear.
 */

#include "nest/bird.h"
#include "lib/resource.h"
#include "lib/string.h"

#include "proto/lpm/lpm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>

static list lpmx_held;			/* struct lpmx_export: names this bird owns */

u64
lpmx_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (u64) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/**
 * lpmx_shm_name_valid - check an export name
 * @name: the name, without a slash
 *
 * Letters, digits, '.', '_' and '-', 1 to %LPMX_SHM_NAME_MAX - 1
 * characters, not starting with a dot.
 */
int
lpmx_shm_name_valid(const char *name)
{
  uint n = strlen(name);
  if (!n || (n >= LPMX_SHM_NAME_MAX) || (name[0] == '.'))
    return 0;

  for (const char *c = name; *c; c++)
    if (!(((*c >= 'a') && (*c <= 'z')) || ((*c >= 'A') && (*c <= 'Z')) ||
	  ((*c >= '0') && (*c <= '9')) || (*c == '.') || (*c == '_') || (*c == '-')))
      return 0;

  return 1;
}

static void
lpmx_lock_path(char *buf, uint size, const char *name)
{
  bsnprintf(buf, size, "/dev/shm/%s.lock", name);
}

static int
lpmx_lock_pid(int fd)
{
  char b[16] = {};
  if (pread(fd, b, sizeof(b) - 1, 0) <= 0)
    return -1;
  return atoi(b);
}

/**
 * lpmx_shm_owner - who owns an export name
 * @name: valid export name
 *
 * Returns 0 if nobody or this bird owns it, else the owner's pid (-1 if
 * unknown).
 */
int
lpmx_shm_owner(const char *name)
{
  struct lpmx_export *x;
  node *n;

  if (!lpmx_held.head)
    init_list(&lpmx_held);

  WALK_LIST2(x, n, lpmx_held, held)
    if (!strcmp(x->name, name))
      return 0;

  char path[128];
  lpmx_lock_path(path, sizeof(path), name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;

  int pid = 0;
  if ((flock(fd, LOCK_EX | LOCK_NB) < 0) && (errno == EWOULDBLOCK))
    pid = lpmx_lock_pid(fd) ?: -1;
  close(fd);			/* Drops our lock if we took it */
  return pid;
}

static void
lpmx_export_free(resource *r)
{
  struct lpmx_export *x = (void *) r;

  if (x->held.next)
    rem_node(&x->held);
  if (x->lock_fd >= 0)
    close(x->lock_fd);		/* Releases the name */
}

static void
lpmx_export_dump(struct dump_request *dreq, resource *r)
{
  struct lpmx_export *x = (void *) r;
  RDUMP("(name %s, lock fd %d)\n", x->name ?: "none", x->lock_fd);
}

static struct resclass lpmx_export_class = {
  .name = "LPM export",
  .size = sizeof(struct lpmx_export),
  .free = lpmx_export_free,
  .dump = lpmx_export_dump,
  .memsize = NULL,
};

/**
 * lpmx_export_open - own an export name and create its exporter region
 * @p: pool (the protocol's)
 * @name: export name, NULL for a private region (no shared memory)
 * @proto: protocol name, for the header
 * @err: buffer for the reason of a failure
 * @errsize: its size
 *
 * Returns the export with its header filled but not yet %LPMX_RUNNING
 * (the caller adds the engine regions first), or NULL.
 */
struct lpmx_export *
lpmx_export_open(pool *p, const char *name, const char *proto, char *err, uint errsize)
{
  size_t size = LPMX_HEADER_SIZE + (size_t) LPMX_NH_MAX * sizeof(struct lpmx_nh);
  struct lpmx_export *x = ralloc(p, &lpmx_export_class);
  x->lock_fd = -1;

  if (!lpmx_held.head)
    init_list(&lpmx_held);

  if (!name)
  {
    if (!(x->reg = lpm_region_new(p, size)))
    {
      bsnprintf(err, errsize, "cannot map %lu bytes: %m", (ulong) size);
      return NULL;
    }
    goto header;
  }

  char path[128];
  lpmx_lock_path(path, sizeof(path), name);
  x->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (x->lock_fd < 0)
  {
    bsnprintf(err, errsize, "cannot open %s: %m", path);
    return NULL;
  }
  if (flock(x->lock_fd, LOCK_EX | LOCK_NB) < 0)
  {
    int pid = lpmx_lock_pid(x->lock_fd);
    bsnprintf(err, errsize, "shared memory %s is owned by another bird (pid %d)", name, pid);
    close(x->lock_fd);
    x->lock_fd = -1;
    return NULL;
  }

  char pid[16];
  int len = bsnprintf(pid, sizeof(pid), "%d\n", (int) getpid());
  if (ftruncate(x->lock_fd, 0) < 0 || pwrite(x->lock_fd, pid, len, 0) != len)
    log(L_WARN "LPM export %s: cannot write %s: %m", name, path);

  x->name = mb_alloc(p, strlen(name) + 1);
  strcpy(x->name, name);
  add_tail(&lpmx_held, &x->held);

  /* Stale objects of a predecessor: readers keep their mappings */
  static const char * const sfx[] = { "", ".ipv4", ".ipv6" };
  for (uint i = 0; i < ARRAY_SIZE(sfx); i++)
  {
    bsnprintf(path, sizeof(path), "/%s%s", name, sfx[i]);
    shm_unlink(path);
  }

  bsnprintf(path, sizeof(path), "/%s", name);
  if (!(x->reg = lpm_region_new_shm(p, path, size)))
  {
    bsnprintf(err, errsize, "cannot create shared memory %s: %m", path);
    return NULL;
  }

header:;
  struct lpmx_header *h = x->hdr = x->reg->base;
  x->reg->used = LPMX_HEADER_SIZE;
  h->version = LPMX_VERSION;
  h->instance = lpmx_now_ns() ^ ((u64) getpid() << 40) ^ (u64) random_u32();
  h->pid = getpid();
  h->nh_offset = LPMX_HEADER_SIZE;
  h->nh_size = sizeof(struct lpmx_nh);
  h->nh_max = LPMX_NH_MAX;
  h->tick_ms = LPMX_TICK / (1 MS);
  h->heartbeat_ns = lpmx_now_ns();
  if (name)
    strncpy(h->name, name, LPMX_NAME_MAX - 1);
  strncpy(h->proto, proto, LPMX_NAME_MAX - 1);
  __atomic_store_n(&h->magic, LPMX_MAGIC, __ATOMIC_RELEASE);
  return x;
}

/**
 * lpmx_export_close - tell readers that this instance is gone
 * @x: export
 *
 * The objects are unlinked and unmapped when the protocol's pool is freed.
 */
void
lpmx_export_close(struct lpmx_export *x)
{
  __atomic_store_n(&x->hdr->state, LPMX_CLOSED, __ATOMIC_SEQ_CST);
}
