/*
 *	bloombird -- The simd LPM engine: AVX-512 batch lookups
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: simd LPM engine, AVX-512 lookups
 *
 * Sixteen addresses per vector, and eight vectors (128 addresses) taken
 * level by level, so that the eight gathers of a level are independent and
 * up to 128 element loads are in flight: a lookup is a chain of dependent
 * loads, and what makes a batch fast is how many chains run side by side.
 * Each level is one masked gather per vector; a lane that reached a leaf
 * drops out of the mask and keeps its leaf without touching memory, a
 * vector whose lanes are all done skips its gather, and the loop ends when
 * every mask is empty. Shorter batches run two vectors at a time. IPv6 addresses are first
 * transposed (two permutes and two 128-bit shuffles per word) so that each
 * vector holds one 32-bit word of sixteen addresses.
 *
 * Batch ends that are not a multiple of 32 run the two-vector code with
 * the lanes beyond the end masked off (IPv6: on a padded copy).
 */

#include "nest/bird.h"

#ifdef CONFIG_LPM_AVX512	/* configure --with-lpm-variants */

#include "nest/lpm-simd.h"

#include <immintrin.h>

#define SIMD_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define SIMD_WIDE 8		/* Vectors processed side by side in a wide batch */
#define SIMD_UNROLL _Pragma("GCC unroll 8")	/* Keep them in registers */

static const u32 simd_tr01[16] = { 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29 };
static const u32 simd_tr23[16] = { 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31 };

SIMD_AVX512 static inline __m512i
simd_bits16(__m512i w, const struct simd_view *v, uint k)
{
  return _mm512_and_si512(_mm512_srl_epi32(w, _mm_cvtsi32_si128(v->shift[k])),
			  _mm512_set1_epi32(v->mask[k]));
}

/* 32 IPv4 lookups, lanes in @k0/@k1 only */
SIMD_AVX512 static inline void
simd_run4(const struct simd_view *v, __m512i a0, __m512i a1, __mmask16 k0, __mmask16 k1,
	 __m512i *r0, __m512i *r1)
{
  const int *m = (const int *) v->mem;
  const __m512i zero = _mm512_setzero_si512();
  __m512i e0 = _mm512_mask_i32gather_epi32(zero, k0, simd_bits16(a0, v, 0), m, 4);
  __m512i e1 = _mm512_mask_i32gather_epi32(zero, k1, simd_bits16(a1, v, 0), m, 4);
  k0 = _mm512_mask_cmpge_epi32_mask(k0, e0, zero);
  k1 = _mm512_mask_cmpge_epi32_mask(k1, e1, zero);

  for (uint l = 1; (l < v->levels) && (k0 | k1); l++)
  {
    __m512i x0 = _mm512_min_epu32(_mm512_add_epi32(e0, simd_bits16(a0, v, l)), _mm512_set1_epi32(v->last));
    __m512i x1 = _mm512_min_epu32(_mm512_add_epi32(e1, simd_bits16(a1, v, l)), _mm512_set1_epi32(v->last));
    e0 = _mm512_mask_i32gather_epi32(e0, k0, x0, m, 4);
    e1 = _mm512_mask_i32gather_epi32(e1, k1, x1, m, 4);
    k0 = _mm512_mask_cmpge_epi32_mask(k0, e0, zero);
    k1 = _mm512_mask_cmpge_epi32_mask(k1, e1, zero);
  }

  const __m512i bias = _mm512_set1_epi32(0x80000001);
  *r0 = _mm512_sub_epi32(e0, bias);
  *r1 = _mm512_sub_epi32(e1, bias);
}

/*
 * 128 IPv4 lookups level by level: the eight gathers of a level do not
 * depend on each other, so up to 128 loads are in flight.
 */
SIMD_AVX512 static inline void
simd_wide4(const struct simd_view *v, const ip4_addr *a, u32 *val)
{
  const int *m = (const int *) v->mem;
  const __m512i zero = _mm512_setzero_si512();
  __m512i x[SIMD_WIDE], e[SIMD_WIDE];
  __mmask16 k[SIMD_WIDE], any = 0;

  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
  {
    x[j] = _mm512_loadu_si512(a + 16 * j);
    e[j] = _mm512_i32gather_epi32(simd_bits16(x[j], v, 0), m, 4);
  }
  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
    any |= k[j] = _mm512_cmpge_epi32_mask(e[j], zero);

  for (uint l = 1; (l < v->levels) && any; l++)
  {
    SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
      if (k[j])
	e[j] = _mm512_mask_i32gather_epi32(e[j], k[j], _mm512_min_epu32(_mm512_add_epi32(e[j], simd_bits16(x[j], v, l)), _mm512_set1_epi32(v->last)), m, 4);
    any = 0;
    SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
      any |= k[j] = _mm512_mask_cmpge_epi32_mask(k[j], e[j], zero);
  }

  const __m512i bias = _mm512_set1_epi32(0x80000001);
  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
    _mm512_storeu_si512(val + 16 * j, _mm512_sub_epi32(e[j], bias));
}

/**
 * simd_bulk4_avx512 - batch lookup of IPv4 addresses in a view (AVX-512)
 * @v: the view
 * @a: addresses
 * @val: answers, one per address
 * @n: number of addresses
 *
 * Stores in @val[i] the value of the longest prefix covering @a[i], or
 * %LPM_NONE. Gathers sixteen lanes per vector, several vectors at a
 * time; built only with the AVX-512 variant.
 */
SIMD_AVX512 void
simd_bulk4_avx512(const struct simd_view *v, const ip4_addr *a, u32 *val, uint n)
{
  __m512i r0, r1;
  uint i = 0;

  for (; i + 16 * SIMD_WIDE <= n; i += 16 * SIMD_WIDE)
    simd_wide4(v, a + i, val + i);

  for (; i + 32 <= n; i += 32)
  {
    simd_run4(v, _mm512_loadu_si512(a + i), _mm512_loadu_si512(a + i + 16), 0xffff, 0xffff, &r0, &r1);
    _mm512_storeu_si512(val + i, r0);
    _mm512_storeu_si512(val + i + 16, r1);
  }

  if (i < n)
  {
    uint c = n - i;
    __mmask16 k0 = (c >= 16) ? 0xffff : (1U << c) - 1;
    __mmask16 k1 = (c > 16) ? (1U << (c - 16)) - 1 : 0;
    __m512i a0 = _mm512_maskz_loadu_epi32(k0, a + i);
    __m512i a1 = _mm512_maskz_loadu_epi32(k1, a + i + 16);
    simd_run4(v, a0, a1, k0, k1, &r0, &r1);
    _mm512_mask_storeu_epi32(val + i, k0, r0);
    _mm512_mask_storeu_epi32(val + i + 16, k1, r1);
  }
}

/* Words 0..3 of 16 IPv6 addresses, one vector per word */
SIMD_AVX512 static inline void
simd_words16(const ip6_addr *a, __m512i w[4])
{
  const __m512i i01 = _mm512_loadu_si512(simd_tr01), i23 = _mm512_loadu_si512(simd_tr23);
  __m512i q0 = _mm512_loadu_si512(a), q1 = _mm512_loadu_si512(a + 4);
  __m512i q2 = _mm512_loadu_si512(a + 8), q3 = _mm512_loadu_si512(a + 12);

  __m512i t0 = _mm512_permutex2var_epi32(q0, i01, q1);	/* Words 0 | 1 of addresses 0-7 */
  __m512i t1 = _mm512_permutex2var_epi32(q0, i23, q1);	/* Words 2 | 3 */
  __m512i t2 = _mm512_permutex2var_epi32(q2, i01, q3);	/* The same of 8-15 */
  __m512i t3 = _mm512_permutex2var_epi32(q2, i23, q3);

  w[0] = _mm512_shuffle_i64x2(t0, t2, 0x44);
  w[1] = _mm512_shuffle_i64x2(t0, t2, 0xee);
  w[2] = _mm512_shuffle_i64x2(t1, t3, 0x44);
  w[3] = _mm512_shuffle_i64x2(t1, t3, 0xee);
}

SIMD_AVX512 static inline void
simd_run6(const struct simd_view *v, const ip6_addr *a, __mmask16 k0, __mmask16 k1,
	 __m512i *r0, __m512i *r1)
{
  const int *m = (const int *) v->mem;
  const __m512i zero = _mm512_setzero_si512();
  __m512i w0[4], w1[4];

  simd_words16(a, w0);
  simd_words16(a + 16, w1);

  __m512i e0 = _mm512_mask_i32gather_epi32(zero, k0, simd_bits16(w0[0], v, 0), m, 4);
  __m512i e1 = _mm512_mask_i32gather_epi32(zero, k1, simd_bits16(w1[0], v, 0), m, 4);
  k0 = _mm512_mask_cmpge_epi32_mask(k0, e0, zero);
  k1 = _mm512_mask_cmpge_epi32_mask(k1, e1, zero);

  for (uint l = 1; (l < v->levels) && (k0 | k1); l++)
  {
    uint wd = v->word[l];
    __m512i x0 = _mm512_min_epu32(_mm512_add_epi32(e0, simd_bits16(w0[wd], v, l)), _mm512_set1_epi32(v->last));
    __m512i x1 = _mm512_min_epu32(_mm512_add_epi32(e1, simd_bits16(w1[wd], v, l)), _mm512_set1_epi32(v->last));
    e0 = _mm512_mask_i32gather_epi32(e0, k0, x0, m, 4);
    e1 = _mm512_mask_i32gather_epi32(e1, k1, x1, m, 4);
    k0 = _mm512_mask_cmpge_epi32_mask(k0, e0, zero);
    k1 = _mm512_mask_cmpge_epi32_mask(k1, e1, zero);
  }

  const __m512i bias = _mm512_set1_epi32(0x80000001);
  *r0 = _mm512_sub_epi32(e0, bias);
  *r1 = _mm512_sub_epi32(e1, bias);
}

/* 128 IPv6 lookups level by level, as simd_wide4() */
SIMD_AVX512 static inline void
simd_wide6(const struct simd_view *v, const ip6_addr *a, u32 *val)
{
  const int *m = (const int *) v->mem;
  const __m512i zero = _mm512_setzero_si512();
  __m512i w[SIMD_WIDE][4], e[SIMD_WIDE];
  __mmask16 k[SIMD_WIDE], any = 0;

  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
  {
    simd_words16(a + 16 * j, w[j]);
    e[j] = _mm512_i32gather_epi32(simd_bits16(w[j][0], v, 0), m, 4);
  }
  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
    any |= k[j] = _mm512_cmpge_epi32_mask(e[j], zero);

  for (uint l = 1; (l < v->levels) && any; l++)
  {
    uint wd = v->word[l];
    SIMD_UNROLL
    for (uint j = 0; j < SIMD_WIDE; j++)
      if (k[j])
	e[j] = _mm512_mask_i32gather_epi32(e[j], k[j], _mm512_min_epu32(_mm512_add_epi32(e[j], simd_bits16(w[j][wd], v, l)), _mm512_set1_epi32(v->last)), m, 4);
    any = 0;
    SIMD_UNROLL
    for (uint j = 0; j < SIMD_WIDE; j++)
      any |= k[j] = _mm512_mask_cmpge_epi32_mask(k[j], e[j], zero);
  }

  const __m512i bias = _mm512_set1_epi32(0x80000001);
  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
    _mm512_storeu_si512(val + 16 * j, _mm512_sub_epi32(e[j], bias));
}

/**
 * simd_bulk6_avx512 - batch lookup of IPv6 addresses in a view (AVX-512)
 * @v: the view
 * @a: addresses
 * @val: answers, one per address
 * @n: number of addresses
 *
 * Stores in @val[i] the value of the longest prefix covering @a[i], or
 * %LPM_NONE. Gathers sixteen lanes per vector, several vectors at a
 * time; built only with the AVX-512 variant.
 */
SIMD_AVX512 void
simd_bulk6_avx512(const struct simd_view *v, const ip6_addr *a, u32 *val, uint n)
{
  __m512i r0, r1;
  uint i = 0;

  for (; i + 16 * SIMD_WIDE <= n; i += 16 * SIMD_WIDE)
    simd_wide6(v, a + i, val + i);

  for (; i + 32 <= n; i += 32)
  {
    simd_run6(v, a + i, 0xffff, 0xffff, &r0, &r1);
    _mm512_storeu_si512(val + i, r0);
    _mm512_storeu_si512(val + i + 16, r1);
  }

  if (i < n)
  {
    uint c = n - i;
    ip6_addr pad[32] = {};
    memcpy(pad, a + i, c * sizeof(ip6_addr));
    __mmask16 k0 = (c >= 16) ? 0xffff : (1U << c) - 1;
    __mmask16 k1 = (c > 16) ? (1U << (c - 16)) - 1 : 0;
    simd_run6(v, pad, k0, k1, &r0, &r1);
    _mm512_mask_storeu_epi32(val + i, k0, r0);
    _mm512_mask_storeu_epi32(val + i + 16, k1, r1);
  }
}

#endif
