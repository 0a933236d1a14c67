/*
 *	bloombird -- The reader's stamps and single routes against a live export
 *
 *	lpmr-stamp NAME ADDR [CHURN-ADDR [SECONDS]]
 *
 *	Opens bird's running export NAME with the reader library and checks,
 *	while bird's routes change (the caller makes them change, so that bird
 *	retires next-hop entries and moves the header's reuse_seq):
 *	  - lpmr_stamp() is the header's reuse_seq (read between two direct
 *	    reads of it);
 *	  - a stamp taken before reuse_seq moved is invalid (lpmr_valid() 0,
 *	    counted as a repeated batch), a fresh one valid (1) unless the
 *	    header moved again meanwhile;
 *	  - lpmr_route4(ADDR) answers the index of lpmr_lookup4(ADDR) and a
 *	    copy equal to *lpmr_nh() of it, the two read under one valid stamp
 *	    (ADDR must have a route that does not change);
 *	  - for SECONDS (default 2), CHURN-ADDR, whose route changes: every
 *	    lpmr_route4() answer is a live entry (never a freed one), and so is
 *	    every entry of a batch accepted by lpmr_valid().
 *	Prints each check; exits 0 if all passed, 1 if one failed, 2 if the
 *	export cannot be opened.
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include "tools/lpm-reader/lpm-reader.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

static int failed;

static void
check(int ok, const char *what)
{
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  fflush(stdout);
  if (!ok)
    failed++;
}

static const struct lpmx_header *hdr;	/* Mapped here too, to read reuse_seq directly */

static uint64_t
seq_now(void)
{
  return __atomic_load_n(&hdr->reuse_seq, __ATOMIC_ACQUIRE);
}

static uint64_t
retries(struct lpmr *r)
{
  struct lpmr_status s;
  lpmr_status(r, &s);
  return s.retries;
}

static uint32_t
parse4(const char *s)
{
  struct in_addr a;
  if (inet_pton(AF_INET, s, &a) != 1)
  {
    fprintf(stderr, "lpmr-stamp: not an IPv4 address: %s\n", s);
    exit(2);
  }
  return ntohl(a.s_addr);
}

int
main(int argc, char **argv)
{
  char err[512], text[1024], what[1536];
  int code;

  if ((argc < 3) || (argc > 5))
  {
    fprintf(stderr, "usage: lpmr-stamp NAME ADDR [CHURN-ADDR [SECONDS]]\n");
    return 2;
  }
  uint32_t addr = parse4(argv[2]);
  uint32_t churn = (argc > 3) ? parse4(argv[3]) : 0;
  double seconds = (argc > 4) ? atof(argv[4]) : 2;

  struct lpmr *r = lpmr_open(argv[1], &code, err, sizeof(err));
  if (!r)
  {
    fprintf(stderr, "lpmr-stamp: %s\n", err);
    return 2;
  }

  char obj[LPMX_NAME_MAX + 2];
  snprintf(obj, sizeof(obj), "/%s", argv[1]);
  int fd = shm_open(obj, O_RDONLY, 0);
  hdr = (fd < 0) ? MAP_FAILED : mmap(NULL, LPMX_HEADER_SIZE, PROT_READ, MAP_SHARED, fd, 0);
  if (hdr == MAP_FAILED)
  {
    perror(obj);
    return 2;
  }
  close(fd);

  /* The stamp is the header's reuse_seq */
  uint64_t d0 = seq_now(), st = lpmr_stamp(r), d1 = seq_now();
  snprintf(what, sizeof(what), "lpmr_stamp() %llu is reuse_seq (read between %llu and %llu)",
	   (unsigned long long) st, (unsigned long long) d0, (unsigned long long) d1);
  check((d0 <= st) && (st <= d1), what);

  /* A stamp from before reuse_seq moved is invalid */
  uint64_t old = lpmr_stamp(r), t0 = lpmr_now_ns();
  while ((seq_now() == old) && (lpmr_now_ns() - t0 < 5000000000ULL))
    usleep(1000);
  uint64_t waited = lpmr_now_ns() - t0, moved = seq_now();
  snprintf(what, sizeof(what), "reuse_seq moved within 5 s (%llu -> %llu after %.1f ms)",
	   (unsigned long long) old, (unsigned long long) moved, waited / 1e6);
  check(moved != old, what);

  uint64_t r0 = retries(r);
  int v = lpmr_valid(r, old);
  uint64_t r1 = retries(r);
  snprintf(what, sizeof(what), "lpmr_valid() of the stamp from before is %d (want 0), repeated batches %llu -> %llu (want +1)",
	   v, (unsigned long long) r0, (unsigned long long) r1);
  check((moved != old) && (v == 0) && (r1 == r0 + 1), what);

  /* A fresh stamp is valid, unless reuse_seq really moved in between */
  int tries = 0, fresh_ok = 0, wrong = 0;
  while (!fresh_ok && !wrong && (tries < 1000))
  {
    tries++;
    uint64_t s = lpmr_stamp(r);
    if (lpmr_valid(r, s))
      fresh_ok = 1;
    else if (seq_now() == s)
      wrong = 1;			/* Said 0 with reuse_seq where it was */
  }
  snprintf(what, sizeof(what), "lpmr_valid() of a fresh stamp is 1 (after %d tr%s%s)",
	   tries, (tries == 1) ? "y" : "ies", wrong ? "; said 0 though reuse_seq had not moved" : "");
  check(fresh_ok && !wrong, what);

  /* lpmr_route4() answers what a stamped lookup and lpmr_nh() read */
  int agreed = 0, same = 1;
  uint32_t i = LPMR_NONE, j = LPMR_NONE;
  for (tries = 0; !agreed && (tries < 1000); tries++)
  {
    struct lpmx_nh e, x;
    uint64_t s = lpmr_stamp(r);
    lpmr_lookup4(r, &addr, &i, 1);
    const struct lpmx_nh *p = lpmr_nh(r, i);
    if (p)
      memcpy(&e, p, sizeof(e));
    else
      memset(&e, 0, sizeof(e));
    j = lpmr_route4(r, addr, &x);
    if (!lpmr_valid(r, s))
      continue;
    agreed = 1;
    same = (i == j) && !memcmp(&e, &x, sizeof(e));
    lpmx_nh_format(text, sizeof(text), &x);
  }
  snprintf(what, sizeof(what), "%s: lpmr_lookup4() %d, lpmr_route4() %d (%s), entries %s, under one valid stamp (%d tr%s)",
	   argv[2], (int) i, (int) j, agreed ? text : "-", same ? "equal" : "DIFFERENT", tries, (tries == 1) ? "y" : "ies");
  check(agreed && (i != LPMR_NONE) && same, what);

  struct lpmx_nh none;
  uint32_t k = lpmr_route4(r, 0, &none);	/* 0.0.0.0: no default route in the test */
  static const struct lpmx_nh zero;
  if (k == LPMR_NONE)
    check(!memcmp(&none, &zero, sizeof(zero)), "0.0.0.0: no route, lpmr_route4() zeroed the entry");

  /* Under churn: every answer of lpmr_route4() is a live entry, and so is
     every entry of a batch that lpmr_valid() accepted */
  if (argc > 3)
  {
    uint64_t routes = 0, batches = 0, repeated = 0, dead = 0, dead_batch = 0, none_seen = 0;
    uint32_t seen[8], nseen = 0;
    uint32_t a2[2] = { addr, churn }, nh2[2];
    uint64_t g0, g1, up, end = lpmr_now_ns() + (uint64_t) (seconds * 1e9);

    g0 = lpmr_generation(r, &up);
    while (lpmr_now_ns() < end)
    {
      struct lpmx_nh x;
      uint32_t c = lpmr_route4(r, churn, &x);
      routes++;
      if (c == LPMR_NONE)
	none_seen++;
      else if (!x.dest)
	dead++;
      else
      {
	uint32_t n;
	for (n = 0; (n < nseen) && (seen[n] != c); n++)
	  ;
	if ((n == nseen) && (nseen < 8))
	  seen[nseen++] = c;
      }

      uint32_t dest[2];
      uint64_t s = lpmr_stamp(r);
      lpmr_lookup4(r, a2, nh2, 2);
      for (int m = 0; m < 2; m++)
      {
	const struct lpmx_nh *p = lpmr_nh(r, nh2[m]);
	dest[m] = p ? p->dest : 1;
      }
      if (!lpmr_valid(r, s))
	repeated++;
      else
      {
	batches++;
	dead_batch += !dest[0] + !dest[1];
      }
    }
    g1 = lpmr_generation(r, &up);

    snprintf(what, sizeof(what), "%s under churn for %.1f s (generation %llu -> %llu): %llu lpmr_route4() answers, "
	     "%u different indices, %llu without a route, %llu of a freed entry (want 0)",
	     argv[3], seconds, (unsigned long long) g0, (unsigned long long) g1, (unsigned long long) routes,
	     nseen, (unsigned long long) none_seen, (unsigned long long) dead);
    check(!dead && (routes > none_seen), what);
    snprintf(what, sizeof(what), "%s and %s in stamped batches: %llu accepted, %llu invalid (repeated), "
	     "%llu entries of accepted ones freed (want 0)",
	     argv[2], argv[3], (unsigned long long) batches, (unsigned long long) repeated, (unsigned long long) dead_batch);
    check(batches && !dead_batch, what);
  }

  printf("repeated batches counted: %llu\n", (unsigned long long) retries(r));
  printf("%s\n", failed ? "lpmr-stamp: FAILED" : "lpmr-stamp: all checks passed");
  lpmr_close(r);
  return failed ? 1 : 0;
}
