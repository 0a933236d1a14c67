/*
 *	bloombird -- The CPU variants of LPM lookups this build and CPU can run
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: LPM lookup variants
 *
 * Which batch lookup variants exist is decided twice: configure decides
 * which ones are built (`--with-lpm-variants', by default every variant the
 * host architecture has: AVX2 and AVX-512 on x86, none but scalar
 * elsewhere), and the CPU decides which of those can run. This file
 * combines both answers; it is linked by bird, its tests and the reader,
 * and needs nothing of BIRD but its headers.
 *
 * $BLOOMBIRD_CPU_DISABLE (a comma-separated list: avx2, avx512) hides
 * variants the CPU has, so that tests can show what an older CPU or another
 * architecture gets: a configuration error for a pinned variant, the next
 * best for auto.
 */

#include "nest/bird.h"
#include "nest/lpm.h"

#include <stdlib.h>
#include <string.h>

const char * const lpm_variant_names[LPM_VAR_MAX] = {
  [LPM_VAR_SCALAR] = "scalar",
  [LPM_VAR_AVX2] = "avx2",
  [LPM_VAR_AVX512] = "avx512",
};

/**
 * lpm_variants_cpu - the variants that can run here
 *
 * Returns a bit mask of &lpm_variant: scalar always, and each variant this
 * build has and the CPU supports, less those hidden by
 * $BLOOMBIRD_CPU_DISABLE. The CPU is asked once.
 */
u32
lpm_variants_cpu(void)
{
  static u32 mask;

  if (mask)
    return mask;

  u32 m = 1U << LPM_VAR_SCALAR;
#ifdef CONFIG_LPM_X86
  m |= lpm_cpu_variants_x86() & LPM_VARIANTS_BUILT;
#endif

  const char *off = getenv("BLOOMBIRD_CPU_DISABLE");
  for (uint v = LPM_VAR_SCALAR + 1; off && (v < LPM_VAR_MAX); v++)
    if (strstr(off, lpm_variant_names[v]))
      m &= ~(1U << v);

  return mask = m;
}
