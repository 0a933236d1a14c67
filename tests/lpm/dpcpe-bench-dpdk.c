/*
 *	bloombird -- dpcpe benchmark: the DPDK side (rte_lpm, rte_lpm6)
 *
 *	Compiled apart from BIRD's headers (DPDK's and BIRD's macros clash);
 *	dpcpe-bench.c calls it through the plain functions below.
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>

#include "dpcpe-bench-dpdk.h"

static double
now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t
heap_used(void)
{
  struct rte_malloc_socket_stats st;
  if (rte_malloc_get_socket_stats(0, &st) < 0)
    return 0;
  return st.heap_allocsz_bytes;
}

int
bdpdk_init(int core)
{
  char lcore[16];
  snprintf(lcore, sizeof(lcore), "%d", core);
  char *argv[] = { "dpcpe-bench", "--no-huge", "--no-pci", "-m", "3072", "-l", lcore,
		   "--log-level=lib.eal:error", "--no-telemetry", NULL };
  int argc = sizeof(argv) / sizeof(argv[0]) - 1;
  return rte_eal_init(argc, argv) < 0 ? -1 : 0;
}

void *
bdpdk_lpm4_build(const uint32_t *pfx, const uint8_t *len, const uint32_t *val, unsigned n,
		 double *secs, size_t *mem)
{
  /* tbl8 groups: one per /24 that holds longer prefixes, twice that */
  unsigned groups = 256;
  for (unsigned i = 0; i < n; i++)
    groups += (len[i] > 24);
  groups *= 2;

  size_t m0 = heap_used();
  double t0 = now();
  struct rte_lpm_config cf = { .max_rules = n + 16, .number_tbl8s = groups };
  struct rte_lpm *l = rte_lpm_create("dpcpe-bench4", 0, &cf);
  if (!l)
    return NULL;

  for (unsigned i = 0; i < n; i++)
    if (rte_lpm_add(l, pfx[i], len[i], val[i]) < 0)
    {
      fprintf(stderr, "rte_lpm_add failed at %u\n", i);
      rte_lpm_free(l);
      return NULL;
    }

  *secs = now() - t0;
  *mem = heap_used() - m0;
  return l;
}

void
bdpdk_lpm4_lookup(void *h, const uint32_t *a, uint32_t *val, unsigned n)
{
  struct rte_lpm *l = h;
  for (unsigned i = 0; i < n; i += 64)
  {
    unsigned m = (n - i < 64) ? n - i : 64;
    rte_lpm_lookup_bulk(l, a + i, val + i, m);
    for (unsigned j = i; j < i + m; j++)
      val[j] = (val[j] & RTE_LPM_LOOKUP_SUCCESS) ? (val[j] & 0x00ffffff) : 0xffffffff;
  }
}

void
bdpdk_lpm4_free(void *h)
{
  rte_lpm_free(h);
}

void *
bdpdk_lpm6_build(const uint8_t (*pfx)[16], const uint8_t *len, const uint32_t *val, unsigned n,
		 double *secs, size_t *mem)
{
  for (unsigned groups = 1 << 16; groups <= (1 << 22); groups *= 2)
  {
    size_t m0 = heap_used();
    double t0 = now();
    struct rte_lpm6_config cf = { .max_rules = n + 16, .number_tbl8s = groups };
    struct rte_lpm6 *l = rte_lpm6_create("dpcpe-bench6", 0, &cf);
    if (!l)
      return NULL;

    unsigned i;
    for (i = 0; i < n; i++)
      if (rte_lpm6_add(l, pfx[i], len[i], val[i]) < 0)
	break;

    if (i == n)
    {
      *secs = now() - t0;
      *mem = heap_used() - m0;
      return l;
    }
    rte_lpm6_free(l);
  }
  return NULL;
}

void
bdpdk_lpm6_lookup(void *h, const uint8_t (*a)[16], uint32_t *val, unsigned n)
{
  struct rte_lpm6 *l = h;
  int32_t nh[64];
  for (unsigned i = 0; i < n; i += 64)
  {
    unsigned m = (n - i < 64) ? n - i : 64;
    rte_lpm6_lookup_bulk_func(l, (uint8_t (*)[16]) a[i], nh, m);
    for (unsigned j = 0; j < m; j++)
      val[i + j] = (nh[j] < 0) ? 0xffffffff : (uint32_t) nh[j];
  }
}

void
bdpdk_lpm6_free(void *h)
{
  rte_lpm6_free(h);
}
