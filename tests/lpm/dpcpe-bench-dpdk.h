/*
 *	bloombird -- dpcpe benchmark: the DPDK side, plain C interface
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _DPCPE_BENCH_DPDK_H_
#define _DPCPE_BENCH_DPDK_H_

#include <stddef.h>
#include <stdint.h>

/* Returns -1 if the EAL cannot start. Values not found are 0xffffffff. */
int bdpdk_init(int core);

void *bdpdk_lpm4_build(const uint32_t *pfx, const uint8_t *len, const uint32_t *val, unsigned n, double *secs, size_t *mem);
void bdpdk_lpm4_lookup(void *h, const uint32_t *a, uint32_t *val, unsigned n);
void bdpdk_lpm4_free(void *h);

void *bdpdk_lpm6_build(const uint8_t (*pfx)[16], const uint8_t *len, const uint32_t *val, unsigned n, double *secs, size_t *mem);
void bdpdk_lpm6_lookup(void *h, const uint8_t (*a)[16], uint32_t *val, unsigned n);
void bdpdk_lpm6_free(void *h);

#endif
