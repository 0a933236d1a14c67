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
 * as it does, and removed when the protocol stops; a second bird (or
 * protocol) asking for N is refused when the protocol starts. The owner
 * removes stale objects of a predecessor (a crashed bird) and creates all
 * of them afresh (O_EXCL), never writing into an object that a reader may
 * still have mapped: readers of an old instance keep a consistent, if
 * stale, copy until they remap.
 *
 * Safety on a shared host. /dev/shm is writable by every local user, so
 * anything there under an export's names may be someone else's: a symbolic
 * link to a file of root's, a FIFO that blocks whoever opens it, a lock
 * file flock()ed by another user, a forged region. bird opens nothing
 * there but what it creates itself or has checked to be its own: names are
 * created exclusively and never through a symbolic link (O_EXCL,
 * O_NOFOLLOW), an existing lock is opened without blocking and accepted
 * only as a regular file of bird's effective user with one link, and a
 * stale object is removed only if it is bird's. Reading the configuration
 * opens nothing: it only looks at what is there (lpmx_shm_check()), so that
 * `bird -p` and `birdc configure` can neither block nor be fooled, and a
 * name that another user holds is a configuration error with file and line.
 * Objects are created readable by bird alone and given the configured mode
 * and group (0640, bird's group, by default); readers check owner and mode
 * before they map (tools/lpm-reader).
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
 *     that follows updates or retirements, bird increments @reuse_seq in the
 *     header (sequentially consistent, then a release fence, so that on a
 *     weakly ordered CPU no store of a reuse is seen before the increment)
 *     and only then makes reusable what
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
#include <sys/stat.h>

/**
 * lpmx_now_ns - monotonic time in nanoseconds
 *
 * Reads CLOCK_MONOTONIC, the clock of the exporter header's heartbeat.
 */
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

/* glibc's shm_open() names an object "/N" as this file */
#define LPMX_SHM_DIR	"/dev/shm"

static const char * const lpmx_shm_suffix[] = { ".lock", "", ".ipv4", ".ipv6" };

static void
lpmx_shm_path(char *buf, uint size, const char *name, const char *suffix)
{
  bsnprintf(buf, size, LPMX_SHM_DIR "/%s%s", name, suffix);
}

static int
lpmx_lock_pid(int fd)
{
  char b[16] = {};
  if (pread(fd, b, sizeof(b) - 1, 0) <= 0)
    return -1;
  return atoi(b);
}

/* Whether @st (of @path) is bird's own: a regular file of its user, one link */
static int
lpmx_shm_ours(const struct stat *st, const char *path, char *err, uint errsize)
{
  const char *what =
    S_ISLNK(st->st_mode) ? "a symbolic link" :
    S_ISFIFO(st->st_mode) ? "a FIFO" :
    S_ISDIR(st->st_mode) ? "a directory" :
    !S_ISREG(st->st_mode) ? "not a regular file" : NULL;

  if (what)
    bsnprintf(err, errsize, "%s is %s, not bird's", path, what);
  else if (st->st_uid != geteuid())
    bsnprintf(err, errsize, "%s is owned by uid %u, not by bird's user (uid %u)", path, (uint) st->st_uid, (uint) geteuid());
  else if (st->st_nlink != 1)
    bsnprintf(err, errsize, "%s has %u links", path, (uint) st->st_nlink);
  else
    return 1;

  return 0;
}

/**
 * lpmx_shm_check - can bird own an export name safely?
 * @name: valid export name
 * @err: buffer for the reason if not
 * @errsize: its size
 *
 * Looks at the lock and the objects of @name (lstat(), nothing is opened,
 * so nothing blocks and no link is followed): each must be absent or a
 * regular file of bird's effective user. Whether another bird holds the
 * name is left to the start of the protocol: `bird -p' of the running
 * configuration must pass while the running bird holds it.
 */
int
lpmx_shm_check(const char *name, char *err, uint errsize)
{
  char path[128];
  struct stat st;

  for (uint i = 0; i < ARRAY_SIZE(lpmx_shm_suffix); i++)
  {
    lpmx_shm_path(path, sizeof(path), name, lpmx_shm_suffix[i]);
    if (lstat(path, &st) < 0)
    {
      if (errno == ENOENT)
	continue;
      bsnprintf(err, errsize, "cannot look at %s: %m", path);
      return 0;
    }
    if (!lpmx_shm_ours(&st, path, err, errsize))
      return 0;
  }

  return 1;
}

/*
 * Take the lock of @name: created exclusively, or an existing one that is
 * bird's. The bird before may have removed the name while we opened it
 * (it unlinks the lock when it stops): a lock taken on a file that no
 * longer has the name is no lock, so the name is opened again.
 */
static int
lpmx_lock_take(const char *name, u64 *ino, char *err, uint errsize)
{
  char path[128];
  lpmx_shm_path(path, sizeof(path), name, ".lock");

  for (uint tries = 0; tries < 4; tries++)
  {
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if ((fd < 0) && (errno == EEXIST))
      fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

    struct stat st, now;
    if (fd < 0)
    {
      if ((errno == ENOENT) || (errno == EEXIST))
	continue;			/* Removed or created meanwhile */
      if (!lstat(path, &st) && !lpmx_shm_ours(&st, path, err, errsize))
	return -1;
      bsnprintf(err, errsize, "cannot open %s: %m", path);
      return -1;
    }

    if ((fstat(fd, &st) < 0) || !lpmx_shm_ours(&st, path, err, errsize))
    {
      close(fd);
      return -1;
    }

    if (flock(fd, LOCK_EX | LOCK_NB) < 0)
    {
      bsnprintf(err, errsize, "shared memory %s is owned by another bird (pid %d)", name, lpmx_lock_pid(fd));
      close(fd);
      return -1;
    }

    if (!lstat(path, &now) && (now.st_ino == st.st_ino) && (now.st_dev == st.st_dev))
    {
      *ino = st.st_ino;
      return fd;
    }
    close(fd);
  }

  bsnprintf(err, errsize, "%s keeps changing under bird", path);
  return -1;
}

static void
lpmx_export_free(resource *r)
{
  struct lpmx_export *x = (void *) r;

  /* The name goes with the lock, unless it names another file by then */
  if (x->lock_fd >= 0)
  {
    char path[128];
    struct stat st;
    lpmx_shm_path(path, sizeof(path), x->name, ".lock");
    if (!lstat(path, &st) && ((u64) st.st_ino == x->lock_ino))
      unlink(path);
    close(x->lock_fd);		/* Releases the name */
  }
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
 * @cf: the protocol's configuration: export name (NULL for a private
 * region, no shared memory), mode and group of the objects
 * @proto: protocol name, for the header
 * @err: buffer for the reason of a failure
 * @errsize: its size
 *
 * Returns the export with its header filled but not yet %LPMX_RUNNING
 * (the caller adds the engine regions first), or NULL.
 */
struct lpmx_export *
lpmx_export_open(pool *p, const struct lpmx_config *cf, const char *proto, char *err, uint errsize)
{
  const char *name = cf->shm;
  size_t size = LPMX_HEADER_SIZE + (size_t) LPMX_NH_MAX * sizeof(struct lpmx_nh);
  struct lpmx_export *x = ralloc(p, &lpmx_export_class);
  x->lock_fd = -1;

  if (!name)
  {
    if (!(x->reg = lpm_region_new(p, size)))
    {
      bsnprintf(err, errsize, "cannot map %lu bytes: %m", (ulong) size);
      goto fail;
    }
    goto header;
  }

  char path[128];
  struct stat st;
  if ((x->lock_fd = lpmx_lock_take(name, &x->lock_ino, err, errsize)) < 0)
    goto fail;

  x->name = mb_alloc(p, strlen(name) + 1);
  strcpy(x->name, name);

  /* The lock is bird's own file: its contents are ours to replace */
  char pid[16];
  int len = bsnprintf(pid, sizeof(pid), "%d\n", (int) getpid());
  if (ftruncate(x->lock_fd, 0) < 0 || pwrite(x->lock_fd, pid, len, 0) != len)
    log(L_WARN "LPM export %s: cannot write its lock: %m", name);

  /* Stale objects of a predecessor: readers keep their mappings. Only
   * bird's own are removed; another user's under the name is an error. */
  for (uint i = 1; i < ARRAY_SIZE(lpmx_shm_suffix); i++)
  {
    lpmx_shm_path(path, sizeof(path), name, lpmx_shm_suffix[i]);
    if (lstat(path, &st) < 0)
      continue;
    if (!lpmx_shm_ours(&st, path, err, errsize))
      goto fail;
    bsnprintf(path, sizeof(path), "/%s%s", name, lpmx_shm_suffix[i]);
    shm_unlink(path);
  }

  bsnprintf(path, sizeof(path), "/%s", name);
  if (!(x->reg = lpm_region_new_shm(p, path, size, cf->shm_mode, cf->shm_gid)))
  {
    bsnprintf(err, errsize, "cannot create shared memory %s: %m", path);
    goto fail;
  }

header:
  if (lpm_region_reserve(x->reg, LPMX_HEADER_SIZE) < 0)
  {
    bsnprintf(err, errsize, "cannot allocate shared memory %s: %m", x->reg->shm_name);
    rfree(x->reg);		/* Unlinks it */
    goto fail;
  }

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

fail:
  rfree(x);			/* The name goes with it */
  return NULL;
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
