/*
 *	bloombird -- CPU features for the LPM lookup variants (x86)
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: CPU detection
 *
 * The only place in bloombird that asks the CPU what it can do. Engines
 * never test CPU features themselves: lpm_variant_select() (nest/lpm.c)
 * combines this mask with what an engine implements and what the
 * configuration pins. The answer is read once and kept.
 *
 * AVX-512 lookups need AVX-512F (gathers, masks) and AVX-512BW/VL (byte
 * shuffles on 512-bit vectors); AVX2 lookups need AVX2.
 *
 * $BLOOMBIRD_CPU_DISABLE (a comma-separated list: avx2, avx512) hides
 * features the CPU has, so that tests can show what an older CPU gets (a
 * configuration error for a pinned variant it lacks, the next best for auto).
 */

#include "nest/bird.h"
#include "nest/lpm.h"

#include <stdlib.h>
#include <string.h>

u32
lpm_variants_cpu(void)
{
  static u32 mask;

  if (mask)
    return mask;

  u32 m = 1U << LPM_VAR_SCALAR;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2"))
    m |= 1U << LPM_VAR_AVX2;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    m |= 1U << LPM_VAR_AVX512;
#endif

  const char *off = getenv("BLOOMBIRD_CPU_DISABLE");
  for (uint v = LPM_VAR_SCALAR + 1; off && (v < LPM_VAR_MAX); v++)
    if (strstr(off, lpm_variant_names[v]))
      m &= ~(1U << v);

  return mask = m;
}
