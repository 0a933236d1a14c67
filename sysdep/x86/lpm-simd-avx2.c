/*
 *	bloombird -- The simd LPM engine: AVX2 batch lookups
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: simd LPM engine, AVX2 lookups
 *
 * The AVX-512 scheme (sysdep/x86/lpm-simd-avx512.c) with eight lanes per
 * vector and four vectors level by level (32 loads in flight; that fills
 * the sixteen registers), two at a time for shorter batches. AVX2 gathers take
 * their mask as a vector: a lane gathers while its element is a link, that
 * is while the element's top bit is clear, so the mask is the element
 * inverted. IPv6 addresses are transposed with 32- and 64-bit unpacks.
 * Batch ends run on a padded copy, masked.
 */

#include "nest/bird.h"

#ifdef CONFIG_LPM_AVX2	/* configure --with-lpm-variants */

#include "nest/lpm-simd.h"

#include <immintrin.h>

#define SIMD_AVX2 __attribute__((target("avx2")))
#define SIMD_WIDE 4		/* Vectors side by side in a wide batch (16 registers) */
#define SIMD_UNROLL _Pragma("GCC unroll 4")

SIMD_AVX2 static inline __m256i
simd_bits8(__m256i w, const struct simd_view *v, uint k)
{
  return _mm256_and_si256(_mm256_srl_epi32(w, _mm_cvtsi32_si128(v->shift[k])),
			  _mm256_set1_epi32(v->mask[k]));
}

/* Lanes to gather (top bit set): links within the lanes in use */
SIMD_AVX2 static inline __m256i
simd_links8(__m256i e, __m256i use)
{
  return _mm256_andnot_si256(e, use);
}

SIMD_AVX2 static inline int
simd_any8(__m256i k0, __m256i k1)
{
  return _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_or_si256(k0, k1)));
}

/* 16 IPv4 lookups; @u0/@u1 have the top bit set in lanes in use */
SIMD_AVX2 static inline void
simd_run4(const struct simd_view *v, __m256i a0, __m256i a1, __m256i u0, __m256i u1,
	 __m256i *r0, __m256i *r1)
{
  const int *m = (const int *) v->mem;
  const __m256i zero = _mm256_setzero_si256();
  __m256i e0 = _mm256_mask_i32gather_epi32(zero, m, simd_bits8(a0, v, 0), u0, 4);
  __m256i e1 = _mm256_mask_i32gather_epi32(zero, m, simd_bits8(a1, v, 0), u1, 4);
  __m256i k0 = simd_links8(e0, u0), k1 = simd_links8(e1, u1);

  for (uint l = 1; (l < v->levels) && simd_any8(k0, k1); l++)
  {
    __m256i x0 = _mm256_min_epu32(_mm256_add_epi32(e0, simd_bits8(a0, v, l)), _mm256_set1_epi32(v->last));
    __m256i x1 = _mm256_min_epu32(_mm256_add_epi32(e1, simd_bits8(a1, v, l)), _mm256_set1_epi32(v->last));
    e0 = _mm256_mask_i32gather_epi32(e0, m, x0, k0, 4);
    e1 = _mm256_mask_i32gather_epi32(e1, m, x1, k1, 4);
    k0 = simd_links8(e0, k0);
    k1 = simd_links8(e1, k1);
  }

  const __m256i bias = _mm256_set1_epi32(0x80000001);
  *r0 = _mm256_sub_epi32(e0, bias);
  *r1 = _mm256_sub_epi32(e1, bias);
}

/* 32 IPv4 lookups level by level: the gathers of a level are independent */
SIMD_AVX2 static inline void
simd_wide4(const struct simd_view *v, const ip4_addr *a, u32 *val)
{
  const int *m = (const int *) v->mem;
  const __m256i all = _mm256_set1_epi32(-1);
  __m256i x[SIMD_WIDE], e[SIMD_WIDE], k[SIMD_WIDE];
  int any = 0;

  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
  {
    x[j] = _mm256_loadu_si256((const void *) (a + 8 * j));
    e[j] = _mm256_i32gather_epi32(m, simd_bits8(x[j], v, 0), 4);
    k[j] = simd_links8(e[j], all);
    any |= _mm256_movemask_ps(_mm256_castsi256_ps(k[j]));
  }

  for (uint l = 1; (l < v->levels) && any; l++)
  {
    any = 0;
    SIMD_UNROLL
    for (uint j = 0; j < SIMD_WIDE; j++)
    {
      e[j] = _mm256_mask_i32gather_epi32(e[j], m, _mm256_min_epu32(_mm256_add_epi32(e[j], simd_bits8(x[j], v, l)), _mm256_set1_epi32(v->last)), k[j], 4);
      k[j] = simd_links8(e[j], k[j]);
      any |= _mm256_movemask_ps(_mm256_castsi256_ps(k[j]));
    }
  }

  const __m256i bias = _mm256_set1_epi32(0x80000001);
  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
    _mm256_storeu_si256((void *) (val + 8 * j), _mm256_sub_epi32(e[j], bias));
}

/**
 * simd_bulk4_avx2 - batch lookup of IPv4 addresses in a view (AVX2)
 * @v: the view
 * @a: addresses
 * @val: answers, one per address
 * @n: number of addresses
 *
 * Stores in @val[i] the value of the longest prefix covering @a[i], or
 * %LPM_NONE. Gathers eight lanes per vector, several vectors at a time;
 * built only with the AVX2 variant.
 */
SIMD_AVX2 void
simd_bulk4_avx2(const struct simd_view *v, const ip4_addr *a, u32 *val, uint n)
{
  const __m256i all = _mm256_set1_epi32(-1);
  __m256i r0, r1;
  uint i = 0;

  for (; i + 8 * SIMD_WIDE <= n; i += 8 * SIMD_WIDE)
    simd_wide4(v, a + i, val + i);

  for (; i + 16 <= n; i += 16)
  {
    simd_run4(v, _mm256_loadu_si256((const void *) (a + i)), _mm256_loadu_si256((const void *) (a + i + 8)),
	     all, all, &r0, &r1);
    _mm256_storeu_si256((void *) (val + i), r0);
    _mm256_storeu_si256((void *) (val + i + 8), r1);
  }

  if (i < n)
  {
    uint c = n - i;
    ip4_addr pad[16] = {};
    u32 out[16];
    memcpy(pad, a + i, c * sizeof(ip4_addr));
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i u0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(c), lane);
    __m256i u1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(c), _mm256_add_epi32(lane, _mm256_set1_epi32(8)));
    simd_run4(v, _mm256_loadu_si256((const void *) pad), _mm256_loadu_si256((const void *) (pad + 8)),
	     u0, u1, &r0, &r1);
    _mm256_storeu_si256((void *) out, r0);
    _mm256_storeu_si256((void *) (out + 8), r1);
    memcpy(val + i, out, c * sizeof(u32));
  }
}

/* Words 0..3 of 8 IPv6 addresses, one vector per word */
SIMD_AVX2 static inline void
simd_words8(const ip6_addr *a, __m256i w[4])
{
#define SIMD_PAIR(x, y) _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const void *) (a + x))), \
					       _mm_loadu_si128((const void *) (a + y)), 1)
  __m256i q0 = SIMD_PAIR(0, 4), q1 = SIMD_PAIR(1, 5), q2 = SIMD_PAIR(2, 6), q3 = SIMD_PAIR(3, 7);
#undef SIMD_PAIR

  __m256i t0 = _mm256_unpacklo_epi32(q0, q1);		/* a0w0 a1w0 a0w1 a1w1 | a4.. a5.. */
  __m256i t1 = _mm256_unpacklo_epi32(q2, q3);
  __m256i t2 = _mm256_unpackhi_epi32(q0, q1);		/* Words 2 and 3 */
  __m256i t3 = _mm256_unpackhi_epi32(q2, q3);

  w[0] = _mm256_unpacklo_epi64(t0, t1);
  w[1] = _mm256_unpackhi_epi64(t0, t1);
  w[2] = _mm256_unpacklo_epi64(t2, t3);
  w[3] = _mm256_unpackhi_epi64(t2, t3);
}

SIMD_AVX2 static inline void
simd_run6(const struct simd_view *v, const ip6_addr *a, __m256i u0, __m256i u1, __m256i *r0, __m256i *r1)
{
  const int *m = (const int *) v->mem;
  const __m256i zero = _mm256_setzero_si256();
  __m256i w0[4], w1[4];

  simd_words8(a, w0);
  simd_words8(a + 8, w1);

  __m256i e0 = _mm256_mask_i32gather_epi32(zero, m, simd_bits8(w0[0], v, 0), u0, 4);
  __m256i e1 = _mm256_mask_i32gather_epi32(zero, m, simd_bits8(w1[0], v, 0), u1, 4);
  __m256i k0 = simd_links8(e0, u0), k1 = simd_links8(e1, u1);

  for (uint l = 1; (l < v->levels) && simd_any8(k0, k1); l++)
  {
    uint wd = v->word[l];
    __m256i x0 = _mm256_min_epu32(_mm256_add_epi32(e0, simd_bits8(w0[wd], v, l)), _mm256_set1_epi32(v->last));
    __m256i x1 = _mm256_min_epu32(_mm256_add_epi32(e1, simd_bits8(w1[wd], v, l)), _mm256_set1_epi32(v->last));
    e0 = _mm256_mask_i32gather_epi32(e0, m, x0, k0, 4);
    e1 = _mm256_mask_i32gather_epi32(e1, m, x1, k1, 4);
    k0 = simd_links8(e0, k0);
    k1 = simd_links8(e1, k1);
  }

  const __m256i bias = _mm256_set1_epi32(0x80000001);
  *r0 = _mm256_sub_epi32(e0, bias);
  *r1 = _mm256_sub_epi32(e1, bias);
}

/* 32 IPv6 lookups level by level */
SIMD_AVX2 static inline void
simd_wide6(const struct simd_view *v, const ip6_addr *a, u32 *val)
{
  const int *m = (const int *) v->mem;
  const __m256i all = _mm256_set1_epi32(-1);
  __m256i w[SIMD_WIDE][4], e[SIMD_WIDE], k[SIMD_WIDE];
  int any = 0;

  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
  {
    simd_words8(a + 8 * j, w[j]);
    e[j] = _mm256_i32gather_epi32(m, simd_bits8(w[j][0], v, 0), 4);
    k[j] = simd_links8(e[j], all);
    any |= _mm256_movemask_ps(_mm256_castsi256_ps(k[j]));
  }

  for (uint l = 1; (l < v->levels) && any; l++)
  {
    uint wd = v->word[l];
    any = 0;
    SIMD_UNROLL
    for (uint j = 0; j < SIMD_WIDE; j++)
    {
      e[j] = _mm256_mask_i32gather_epi32(e[j], m, _mm256_min_epu32(_mm256_add_epi32(e[j], simd_bits8(w[j][wd], v, l)), _mm256_set1_epi32(v->last)), k[j], 4);
      k[j] = simd_links8(e[j], k[j]);
      any |= _mm256_movemask_ps(_mm256_castsi256_ps(k[j]));
    }
  }

  const __m256i bias = _mm256_set1_epi32(0x80000001);
  SIMD_UNROLL
  for (uint j = 0; j < SIMD_WIDE; j++)
    _mm256_storeu_si256((void *) (val + 8 * j), _mm256_sub_epi32(e[j], bias));
}

/**
 * simd_bulk6_avx2 - batch lookup of IPv6 addresses in a view (AVX2)
 * @v: the view
 * @a: addresses
 * @val: answers, one per address
 * @n: number of addresses
 *
 * Stores in @val[i] the value of the longest prefix covering @a[i], or
 * %LPM_NONE. Gathers eight lanes per vector, several vectors at a time;
 * built only with the AVX2 variant.
 */
SIMD_AVX2 void
simd_bulk6_avx2(const struct simd_view *v, const ip6_addr *a, u32 *val, uint n)
{
  const __m256i all = _mm256_set1_epi32(-1);
  __m256i r0, r1;
  uint i = 0;

  for (; i + 8 * SIMD_WIDE <= n; i += 8 * SIMD_WIDE)
    simd_wide6(v, a + i, val + i);

  for (; i + 16 <= n; i += 16)
  {
    simd_run6(v, a + i, all, all, &r0, &r1);
    _mm256_storeu_si256((void *) (val + i), r0);
    _mm256_storeu_si256((void *) (val + i + 8), r1);
  }

  if (i < n)
  {
    uint c = n - i;
    ip6_addr pad[16] = {};
    u32 out[16];
    memcpy(pad, a + i, c * sizeof(ip6_addr));
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i u0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(c), lane);
    __m256i u1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(c), _mm256_add_epi32(lane, _mm256_set1_epi32(8)));
    simd_run6(v, pad, u0, u1, &r0, &r1);
    _mm256_storeu_si256((void *) out, r0);
    _mm256_storeu_si256((void *) (out + 8), r1);
    memcpy(val + i, out, c * sizeof(u32));
  }
}

#endif
