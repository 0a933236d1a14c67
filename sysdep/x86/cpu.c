/*
 *	bloombird -- CPU features for the LPM lookup variants (x86)
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: CPU detection (x86)
 *
 * The only place in bloombird that asks the CPU what it can do. Engines
 * never test CPU features themselves: lpm_variants_cpu() (nest/lpm-variant.c)
 * keeps what this build has of this mask, and lpm_variant_select()
 * (nest/lpm.c) combines that with what an engine implements and what the
 * configuration pins.
 *
 * AVX-512 lookups need AVX-512F (gathers, masks), AVX-512BW/VL (byte
 * shuffles on 512-bit vectors) and AVX-512DQ (the simd engine's lookups
 * are compiled for it); AVX2 lookups need AVX2.
 */

#include "nest/bird.h"
#include "nest/lpm.h"

/**
 * lpm_cpu_variants_x86 - the vector variants the CPU supports
 *
 * Returns a bit mask of &lpm_variant (without scalar), whether built or not.
 */
u32
lpm_cpu_variants_x86(void)
{
  u32 m = 0;

  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2"))
    m |= 1U << LPM_VAR_AVX2;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    m |= 1U << LPM_VAR_AVX512;

  return m;
}
