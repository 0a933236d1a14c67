/*
 *	bloombird -- Mutated exports against the shared-memory reader
 *
 *	lpmr-fuzz NAME COUNT [SEED]
 *
 *	Copies the objects of bird's running export NAME (the touched part of
 *	each; the rest stays a hole of the same size), then COUNT times writes
 *	a mutated copy under another name and has the reader library open it
 *	and look random addresses up, singly and in batches of every variant
 *	the CPU runs, with the next-hop entry of every answer and the status.
 *	Mutations: random bytes in the exporter header, in a simd header or
 *	among the engine's elements; hostile fields (strides, levels, element
 *	counts and offsets, next-hop table bounds, region names); truncated
 *	objects. Every case must end in an error or in answers, within a time
 *	bound (SIGALRM kills a case that hangs); a crash ends the program.
 *	Prints the seed first, so a crash can be reproduced, and at the end how
 *	many copies were refused and how many read.
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#define _GNU_SOURCE			/* SEEK_DATA, SEEK_HOLE */

#include "tools/lpm-reader/lpm-reader.h"
#include "nest/lpm-simd.h"

#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define OBJS	3			/* "", ".ipv4", ".ipv6" */
static const char * const suffix[OBJS] = { "", ".ipv4", ".ipv6" };

struct obj {
  unsigned char *data;			/* The touched part */
  size_t len;				/* Its length */
  size_t size;				/* The object's size */
};

static uint64_t rng;

static uint64_t
rnd(void)
{
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return rng * 0x2545f4914f6cdd1dULL;
}

static size_t rnd_below(size_t n) { return n ? (size_t) (rnd() % n) : 0; }

static void
fail(const char *what)
{
  perror(what);
  exit(2);
}

/* The touched part of a sparse object: up to the end of its last data */
static void
obj_read(struct obj *o, const char *name)
{
  char path[256];
  snprintf(path, sizeof(path), "/dev/shm/%s", name);
  int fd = open(path, O_RDONLY);
  if (fd < 0)
  {
    o->data = NULL;
    o->len = o->size = 0;
    return;
  }

  struct stat st;
  if (fstat(fd, &st) < 0)
    fail("fstat");
  o->size = st.st_size;

  off_t end = 0, at = 0;
  for (;;)
  {
    off_t d = lseek(fd, at, SEEK_DATA);
    if (d < 0)
      break;
    off_t h = lseek(fd, d, SEEK_HOLE);
    if (h <= d)
      break;
    end = h;
    at = h;
  }

  o->len = end;
  o->data = malloc(o->len ? o->len : 1);
  if (o->len && (pread(fd, o->data, o->len, 0) != (ssize_t) o->len))
    fail("pread");
  close(fd);
}

static void
obj_write(const unsigned char *data, size_t len, size_t size, const char *name)
{
  int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    fail("shm_open");
  if ((len && (write(fd, data, len) != (ssize_t) len)) || (ftruncate(fd, size) < 0))
    fail("write");
  close(fd);
}

static void
on_alarm(int sig)
{
  (void) sig;
  static const char msg[] = "lpmr-fuzz: a case did not end within its time bound\n";
  write(2, msg, sizeof(msg) - 1);
  _exit(3);
}

/*
 * The copies are written once; a case changes them in place (pwrite(),
 * ftruncate()) and every change is undone after it: a case costs what it
 * changes, not the size of the regions.
 */
static struct obj base[OBJS];
static int fd[OBJS];

#define UNDO_MAX 1024
static struct undo { int o; uint64_t off; uint32_t len; unsigned char old[64]; int trunc; } undo[UNDO_MAX];
static int nundo;

/* Bytes @p at @off of object @o, the old ones kept */
static void
put(int o, uint64_t off, const void *p, uint32_t n)
{
  if (!base[o].size || (off >= base[o].size) || (n > 64) || (nundo >= UNDO_MAX))
    return;
  if (off + n > base[o].size)
    n = base[o].size - off;

  struct undo *u = &undo[nundo++];
  u->o = o; u->off = off; u->len = n; u->trunc = 0;
  for (uint32_t i = 0; i < n; i++)
    u->old[i] = (off + i < base[o].len) ? base[o].data[off + i] : 0;
  if (pwrite(fd[o], p, n, off) != (ssize_t) n)
    fail("pwrite");
}

static void put32(int o, uint64_t off, uint32_t v) { put(o, off, &v, 4); }
static void put64(int o, uint64_t off, uint64_t v) { put(o, off, &v, 8); }

static void
truncate_to(int o, uint64_t size)
{
  if (nundo >= UNDO_MAX)
    return;
  struct undo *u = &undo[nundo++];
  u->o = o; u->off = size; u->len = 0; u->trunc = 1;
  if (ftruncate(fd[o], size) < 0)
    fail("ftruncate");
}

static void
undo_all(void)
{
  while (nundo)
  {
    struct undo *u = &undo[--nundo];
    struct obj *b = &base[u->o];
    if (!u->trunc)
    {
      if (pwrite(fd[u->o], u->old, u->len, u->off) != (ssize_t) u->len)
	fail("pwrite");
      continue;
    }

    /* The cut part back: the touched bytes beyond the cut, then the size */
    if (ftruncate(fd[u->o], b->size) < 0)
      fail("ftruncate");
    if ((u->off < b->len) && (pwrite(fd[u->o], b->data + u->off, b->len - u->off, u->off) != (ssize_t) (b->len - u->off)))
      fail("pwrite");
  }
}

#define HDR(o, field)	((uint64_t) offsetof(struct o, field))

/* One of the mutations */
static const char *
mutate(const char *fuzz)
{
  int f = 1 + rnd_below(2);		/* An engine region */
  if (!base[f].len)
    f = 3 - f;
  const struct simd_header *s = (const void *) base[f].data;

  switch (rnd_below(9))
  {
  case 0:				/* Random bytes in the exporter header */
    for (int i = 1 + rnd_below(8); i; i--)
    {
      unsigned char c = rnd();
      put(0, rnd_below(LPMX_HEADER_SIZE), &c, 1);
    }
    return "exporter header bytes";

  case 1:				/* Random bytes in a simd header */
    for (int i = 1 + rnd_below(4); i; i--)
    {
      unsigned char c = rnd();
      put(f, rnd_below(sizeof(struct simd_header)), &c, 1);
    }
    return "simd header bytes";

  case 2:				/* Links anywhere among the elements */
  {
    uint64_t n = (base[f].len - s->elements_offset) / 4;
    for (int i = 1 + rnd_below(64); n && i; i--)
      put32(f, s->elements_offset + 4 * rnd_below(n),
	    (rnd() & 1) ? (uint32_t) rnd() & 0x7fffffff : (uint32_t) (n - 1 - rnd_below(16)));
    return "element links";
  }

  case 3:				/* Hostile strides and levels */
  {
    unsigned char st = (rnd() & 1) ? 32 : rnd_below(40);
    put(f, HDR(simd_header, stride) + rnd_below(SIMD_MAX_LEVELS), &st, 1);
    if (rnd() & 1)
      put32(f, HDR(simd_header, levels), rnd_below(SIMD_MAX_LEVELS + 3));
    return "strides and levels";
  }

  case 4:				/* Element counts and offsets */
    if (rnd() & 1)
      put64(f, HDR(simd_header, elements_max), (rnd() & 1) ? rnd() : (uint64_t) 1 << rnd_below(34));
    else
      put32(f, HDR(simd_header, elements_offset), (rnd() & 1) ? rnd() : rnd_below(base[f].size + 8192));
    return "element counts and offsets";

  case 5:				/* Next-hop table bounds */
    switch (rnd_below(3))
    {
    case 0: put32(0, HDR(lpmx_header, nh_max), rnd()); break;
    case 1: put32(0, HDR(lpmx_header, nh_offset), rnd_below(base[0].size + 4096)); break;
    default: put32(0, HDR(lpmx_header, nh_used), rnd()); break;
    }
    return "next-hop table bounds";

  case 6:				/* Region names */
  {
    char r[LPMX_NAME_MAX];
    switch (rnd_below(3))
    {
    case 0: memset(r, 'A', LPMX_NAME_MAX); break;
    case 1: snprintf(r, LPMX_NAME_MAX, "/%s.ipv%d", fuzz, (rnd() & 1) ? 4 : 6); break;
    default: snprintf(r, LPMX_NAME_MAX, "/%s", fuzz); break;
    }
    put(0, HDR(lpmx_header, fam) + rnd_below(2) * sizeof(struct lpmx_family), r, LPMX_NAME_MAX);
    return "region names";
  }

  case 7:				/* Truncated objects: engine regions seldom (they cost their size to restore) */
  {
    int o = (rnd_below(16) == 0) ? f : 0;
    truncate_to(o, (rnd() & 1) ? rnd_below(base[o].len + 1) : rnd_below(base[o].size + 1));
    return "truncated object";
  }

  default:				/* Random bytes anywhere in what was touched */
  {
    int o = rnd_below(OBJS);
    for (int i = 1 + rnd_below(256); base[o].len && i; i--)
    {
      unsigned char c = rnd();
      put(o, rnd_below(base[o].len), &c, 1);
    }
    return "random bytes";
  }
  }
}

int
main(int argc, char **argv)
{
  if (argc < 3)
  {
    fprintf(stderr, "usage: lpmr-fuzz NAME COUNT [SEED]\n");
    return 2;
  }

  const char *name = argv[1];
  unsigned long count = strtoul(argv[2], NULL, 10);
  rng = (argc > 3) ? strtoull(argv[3], NULL, 0) : (uint64_t) time(NULL) * 0x9e3779b97f4a7c15ULL;
  rng |= 1;
  printf("seed 0x%llx\n", (unsigned long long) rng);
  fflush(stdout);

  char fuzz[LPMX_NAME_MAX - 8], obj[OBJS][LPMX_NAME_MAX + 8];
  snprintf(fuzz, sizeof(fuzz), "bbfuzz-%d", (int) getpid());

  /* The real export, once through the reader: it must be readable */
  int code;
  char err[512];
  struct lpmr *r = lpmr_open(name, &code, err, sizeof(err));
  if (!r)
  {
    fprintf(stderr, "lpmr-fuzz: %s\n", err);
    return 2;
  }
  lpmr_close(r);

  for (int i = 0; i < OBJS; i++)
  {
    char n[LPMX_NAME_MAX + 8];
    snprintf(n, sizeof(n), "%s%s", name, suffix[i]);
    obj_read(&base[i], n);
    snprintf(obj[i], sizeof(obj[i]), "/%s%s", fuzz, suffix[i]);
  }
  if ((base[0].len < LPMX_HEADER_SIZE) || (!base[1].len && !base[2].len))
  {
    fprintf(stderr, "lpmr-fuzz: export %s has no engine region\n", name);
    return 2;
  }

  /* The copies name their own regions */
  struct lpmx_header *bh = (void *) base[0].data;
  for (int i = 0; i < 2; i++)
    if (bh->fam[i].region[0])
      snprintf(bh->fam[i].region, LPMX_NAME_MAX, "%s", obj[1 + i]);

  for (int i = 0; i < OBJS; i++)
    if (base[i].size)
    {
      obj_write(base[i].data, base[i].len, base[i].size, obj[i]);
      if ((fd[i] = shm_open(obj[i], O_RDWR, 0)) < 0)
	fail("shm_open");
    }

  signal(SIGALRM, on_alarm);
  const char *variants[] = { "scalar", "avx2", "avx512" };
  unsigned long opened = 0, refused = 0, answers = 0, entries = 0;
  uint32_t a4[256], a6[256][4], nh[256];
  for (unsigned long it = 0; it < count; it++)
  {
    mutate(fuzz);
    if (rnd_below(4) == 0)
      mutate(fuzz);

    alarm(5);
    r = lpmr_open(fuzz, &code, err, sizeof(err));
    if (!r)
    {
      refused++;
      alarm(0);
      undo_all();
      continue;
    }
    opened++;

    for (int i = 0; i < 256; i++)
    {
      a4[i] = rnd();
      for (int w = 0; w < 4; w++)
	a6[i][w] = rnd();
    }

    char buf[1024];
    for (unsigned v = 0; v < sizeof(variants) / sizeof(variants[0]); v++)
    {
      if (lpmr_set_variant(r, variants[v]) < 0)
	continue;
      lpmr_lookup4(r, a4, nh, 256);
      lpmr_lookup6(r, (const uint32_t (*)[4]) a6, nh + 128, 128);
      for (int i = 0; i < 256; i++)
	if (nh[i] != LPMR_NONE)
	{
	  answers++;
	  const struct lpmx_nh *e = lpmr_nh(r, nh[i]);
	  if (e)
	  {
	    entries++;
	    lpmx_nh_format(buf, sizeof(buf), e);
	  }
	}
    }
    for (int i = 0; i < 16; i++)
    {
      lpmr_answer4(r, a4[i], buf, sizeof(buf));
      lpmr_answer6(r, a6[i], buf, sizeof(buf));
    }

    struct lpmr_status st;
    lpmr_status(r, &st);
    lpmr_close(r);
    alarm(0);
    undo_all();
  }

  for (int i = 0; i < OBJS; i++)
    shm_unlink(obj[i]);

  printf("%lu mutated exports: %lu refused, %lu read (%lu answers, %lu with a next-hop entry); no crash, no hang\n",
	 count, refused, opened, answers, entries);
  return 0;
}
