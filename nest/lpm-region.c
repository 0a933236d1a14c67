/*
 *	bloombird -- LPM engines' lookup memory regions
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: LPM lookup memory regions
 *
 * An engine's lookup memory is one contiguous mapping, reserved at its
 * largest size, so that it never moves and everything in it is addressed by
 * index (nest/lpm.h). A shared one is a sparse file in /dev/shm, and two
 * things that a private mapping never does can happen to a file: its file
 * system can be full when a page is first written, and another process with
 * the right (root) can truncate it. Either makes the write, or a read, a
 * SIGBUS, which would kill bird for something that concerns one protocol.
 *
 * So pages of a shared region are allocated in the file before they are
 * first written (lpm_region_reserve(): the update that needs them is refused
 * when they cannot be had), and a SIGBUS inside a shared region is caught:
 * the handler maps private zero pages over the rest of that region, so the
 * access that faulted and all later ones go on harmlessly, and marks the
 * region lost (lpm_region_lost()); its owner stops using it and starts over
 * with a new one. A SIGBUS anywhere else is left to the default action.
 */

#define _GNU_SOURCE			/* fallocate() */

#include "nest/bird.h"
#include "nest/lpm.h"
#include "lib/resource.h"
#include "lib/string.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

/*
 * Shared regions the SIGBUS handler knows: slots written by BIRD's thread,
 * read by the handler in any thread. A slot is filled before it is marked
 * in use and unmarked before its mapping goes.
 */
#define LPM_GUARD_SLOTS	64

static struct lpm_guard {
  _Atomic(struct lpm_region *) reg;
  uintptr_t from, to;
} lpm_guards[LPM_GUARD_SLOTS];

static struct sigaction lpm_guard_old;
static int lpm_guard_installed;

static void
lpm_guard_sigbus(int sig, siginfo_t *si, void *uc)
{
  uintptr_t a = (uintptr_t) si->si_addr;

  for (uint i = 0; i < LPM_GUARD_SLOTS; i++)
  {
    struct lpm_guard *g = &lpm_guards[i];
    struct lpm_region *r = atomic_load_explicit(&g->reg, memory_order_acquire);
    if (!r || (a < g->from) || (a >= g->to))
      continue;

    /* The rest of the region from the faulting page becomes private zeros */
    uintptr_t pg = a & ~(uintptr_t) 4095;
    if (mmap((void *) pg, g->to - pg, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
      break;
    r->lost = 1;
    return;
  }

  /* Not ours: what would have happened without us */
  sigaction(SIGBUS, &lpm_guard_old, NULL);
  if (!(lpm_guard_old.sa_flags & SA_SIGINFO) &&
      (lpm_guard_old.sa_handler != SIG_DFL) && (lpm_guard_old.sa_handler != SIG_IGN))
    lpm_guard_old.sa_handler(sig);
  else if ((lpm_guard_old.sa_flags & SA_SIGINFO) && lpm_guard_old.sa_sigaction)
    lpm_guard_old.sa_sigaction(sig, si, uc);
}

static void
lpm_guard_add(struct lpm_region *r)
{
  if (!lpm_guard_installed)
  {
    struct sigaction sa = { .sa_sigaction = lpm_guard_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER };
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &lpm_guard_old) < 0)
      return;
    lpm_guard_installed = 1;
  }

  for (uint i = 0; i < LPM_GUARD_SLOTS; i++)
    if (!atomic_load_explicit(&lpm_guards[i].reg, memory_order_relaxed))
    {
      lpm_guards[i].from = (uintptr_t) r->base;
      lpm_guards[i].to = (uintptr_t) r->base + r->size;
      atomic_store_explicit(&lpm_guards[i].reg, r, memory_order_release);
      return;
    }

  log(L_WARN "LPM: more than %u shared regions, %s is not guarded against truncation",
      LPM_GUARD_SLOTS, r->shm_name);
}

static void
lpm_guard_remove(struct lpm_region *r)
{
  for (uint i = 0; i < LPM_GUARD_SLOTS; i++)
    if (atomic_load_explicit(&lpm_guards[i].reg, memory_order_relaxed) == r)
      atomic_store_explicit(&lpm_guards[i].reg, NULL, memory_order_release);
}


static void
lpm_region_free(resource *r)
{
  struct lpm_region *g = (void *) r;
  if (g->fd >= 0)
    lpm_guard_remove(g);
  munmap(g->base, g->size);

  if (g->fd < 0)
    return;

  /* Readers keep their mappings; the name goes, unless it is not ours any more */
  struct stat st;
  char path[256];
  bsnprintf(path, sizeof(path), "/dev/shm%s", g->shm_name);
  if (!lstat(path, &st) && ((u64) st.st_ino == g->shm_ino))
    shm_unlink(g->shm_name);
  close(g->fd);
}

static void
lpm_region_dump(struct dump_request *dreq, resource *r)
{
  struct lpm_region *g = (void *) r;
  RDUMP("(base %p, reserved %lu, used %lu, shm %s)\n", g->base, (ulong) g->size, (ulong) g->used,
	g->shm_name ?: "none");
}

static struct resmem
lpm_region_memsize(resource *r)
{
  struct lpm_region *g = (void *) r;
  return (struct resmem) {
    .effective = g->used,
    .overhead = sizeof(struct lpm_region),
  };
}

static struct resclass lpm_region_class = {
  .name = "LPM region",
  .size = sizeof(struct lpm_region),
  .free = lpm_region_free,
  .dump = lpm_region_dump,
  .memsize = lpm_region_memsize,
};

/* A region for @base (ralloc() zeroes the rest): a private one counts as reserved */
static struct lpm_region *
lpm_region_alloc(pool *p, void *base, size_t size, int fd)
{
  struct lpm_region *g = ralloc(p, &lpm_region_class);
  g->base = base;
  g->size = size;
  g->reserved = (fd < 0) ? size : 0;
  g->fd = fd;
  return g;
}

/**
 * lpm_region_new - reserve lookup memory
 * @p: pool to own it
 * @size: bytes to reserve (the most the engine may ever use)
 *
 * Returns NULL if the address space cannot be reserved. Pages are zero
 * until written.
 */
struct lpm_region *
lpm_region_new(pool *p, size_t size)
{
  size = (size + 4095) & ~(size_t) 4095;
  void *base = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    return NULL;

  return lpm_region_alloc(p, base, size, -1);
}

/**
 * lpm_region_new_shm - reserve lookup memory as a named shared-memory object
 * @p: pool to own it
 * @name: object name, with the leading slash ("/bird-lpm.ipv4")
 * @size: bytes to reserve
 * @mode: its permissions (0: 0600)
 * @gid: its group, -1 to keep bird's
 *
 * Like lpm_region_new(), but the region is the POSIX shared-memory object
 * @name, created exclusively (O_EXCL: the caller removes a stale one first;
 * shm_open() never follows a symbolic link) and sized sparsely, so other
 * processes can map it. It is created readable by bird alone and given
 * @mode and @gid through its descriptor once it is bird's. Returns NULL and
 * sets errno on failure.
 */
struct lpm_region *
lpm_region_new_shm(pool *p, const char *name, size_t size, uint mode, int gid)
{
  size = (size + 4095) & ~(size_t) 4095;
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return NULL;

  if (((gid >= 0) && (fchown(fd, -1, gid) < 0)) || (fchmod(fd, mode ?: 0600) < 0))
  {
    int err = errno;
    shm_unlink(name);
    close(fd);
    errno = err;
    return NULL;
  }

  struct stat st;
  void *base = MAP_FAILED;
  if (!ftruncate(fd, size) && !fstat(fd, &st))
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);

  if (base == MAP_FAILED)
  {
    int err = errno;
    shm_unlink(name);
    close(fd);
    errno = err;
    return NULL;
  }

  struct lpm_region *g = lpm_region_alloc(p, base, size, fd);
  g->shm_name = mb_alloc(p, strlen(name) + 1);
  strcpy(g->shm_name, name);
  g->shm_ino = st.st_ino;
  lpm_guard_add(g);
  return g;
}

/**
 * lpm_region_discard - give back a region's pages from an offset on
 * @g: region
 * @from: offset, rounded up to a page
 *
 * Drops the contents of the pages from @from to the end of the region, so
 * that they take no memory until written again. Pages of a shared-memory
 * object are punched out of the file (they would keep their contents under
 * MADV_DONTNEED), and its reservation shrinks to @from.
 */
void
lpm_region_discard(struct lpm_region *g, size_t from)
{
  from = (from + 4095) & ~(size_t) 4095;
  if (from >= g->size)
    return;

  /* Shared pages keep their contents under MADV_DONTNEED: punch them out */
  if (g->fd >= 0)
  {
    fallocate(g->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from, g->size - from);
    g->reserved = MIN(g->reserved, from);
  }
  else
    madvise((char *) g->base + from, g->size - from, MADV_DONTNEED);
}

/* Reservations grow by this much at least: a few fallocate() calls per full table */
#define LPM_RESERVE_STEP	(4 << 20)

/**
 * lpm_region_reserve - back the start of a region before writing it
 * @g: region
 * @bytes: the region's first @bytes will be written
 *
 * Returns 0 when they are backed (always for a private region), or -1 with
 * errno set (ENOSPC: the file system is full) and @g->reserve_errno
 * remembering it; then nothing beyond the part reserved before may be
 * written.
 */
int
lpm_region_reserve(struct lpm_region *g, size_t bytes)
{
  if (bytes <= g->reserved)
    return 0;

  if (bytes > g->size)
  {
    errno = g->reserve_errno = ENOMEM;
    return -1;
  }

  size_t to = MIN(MAX(bytes, g->reserved + LPM_RESERVE_STEP), g->size);
  to = (to + 4095) & ~(size_t) 4095;
  int rv;
  while (((rv = fallocate(g->fd, FALLOC_FL_KEEP_SIZE, g->reserved, to - g->reserved)) < 0) && (errno == EINTR))
    ;
  if (rv < 0)
  {
    g->reserve_errno = errno;
    return -1;
  }

  g->reserved = to;
  return 0;
}
