/*
 *	bloombird -- The dpcpe LPM engine: AVX2 batch lookups
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe AVX2 lookups
 *
 * The AVX-512 scheme (sysdep/x86/lpm-dpcpe-avx512.c) in 256-bit vectors:
 * eight addresses at a time, hashed in 32-bit lanes, filter words
 * gathered four 64-bit lanes at a time, masks by variable shifts; lanes
 * whose filter test passed probe the table one by one after all their
 * buckets were prefetched; the rest read the direct array by a masked
 * gather. Answers equal the scalar ones.
 */

#include "nest/bird.h"
#include "nest/lpm-dpcpe.h"

#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

TARGET static inline __m256i
fmix8(__m256i x)
{
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x85ebca6b));
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 13));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0xc2b2ae35));
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
  return x;
}

TARGET static inline __m256i
range8(__m256i x, u32 n)
{
  __m256i N = _mm256_set1_epi32(n);
  __m256i ev = _mm256_srli_epi64(_mm256_mul_epu32(x, N), 32);
  __m256i od = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), N);
  return _mm256_blend_epi32(ev, od, 0xAA);
}

/* Filter test of 4 lanes (64-bit): words @w, hash high halves @hb */
TARGET static inline uint
ftest4(__m256i w, __m128i hb, uint k)
{
  __m256i b = _mm256_cvtepu32_epi64(hb);
  __m256i c63 = _mm256_set1_epi64x(63);
  __m256i p = _mm256_and_si256(b, c63);
  __m256i s = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(b, 6), c63), _mm256_set1_epi64x(1));
  __m256i one = _mm256_set1_epi64x(1), m = _mm256_setzero_si256();

  for (uint i = 0; i < k; i++)
  {
    m = _mm256_or_si256(m, _mm256_sllv_epi64(one, _mm256_and_si256(p, c63)));
    p = _mm256_add_epi64(p, s);
  }

  __m256i eq = _mm256_cmpeq_epi64(_mm256_and_si256(w, m), m);
  return _mm256_movemask_pd(_mm256_castsi256_pd(eq));
}

TARGET static inline uint
filter8(const byte *base, const struct dpcpe_ldesc *l, __m256i ha, __m256i hb, uint active)
{
  __m256i idx = range8(ha, l->nw);
  const long long *f = (const long long *) (base + l->flt);
  __m256i w0 = _mm256_i32gather_epi64(f, _mm256_castsi256_si128(idx), 8);
  __m256i w1 = _mm256_i32gather_epi64(f, _mm256_extracti128_si256(idx, 1), 8);
  uint m0 = ftest4(w0, _mm256_castsi256_si128(hb), l->k);
  uint m1 = ftest4(w1, _mm256_extracti128_si256(hb, 1), l->k);
  return active & (m0 | (m1 << 4));
}

TARGET static inline void
prefetch_buckets(const byte *base, const struct dpcpe_ldesc *l, const u32 *hb, uint pos)
{
  for (uint m = pos; m; m &= m - 1)
  {
    uint j = __builtin_ctz(m);
    __builtin_prefetch(base + l->tab + (size_t) dpcpe_range(hb[j], l->nb) * DPCPE_BUCKET);
  }
}

/* Lanes of @mask as a vector mask (all ones where set) */
TARGET static inline __m256i
lanes8(uint mask)
{
  __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(mask), bit), bit);
}

TARGET static void
batch4(const byte *base, const struct dpcpe_dir *d, const u32 *a, u32 *val)
{
  __m256i A = _mm256_loadu_si256((const __m256i *) a);
  uint active = 0xff;
  u32 res[8] __attribute__((aligned(32))) = {};
  u32 ka[8] __attribute__((aligned(32))), kb[8] __attribute__((aligned(32))), kk[8] __attribute__((aligned(32)));

  for (uint i = 0; (i < d->nlevels) && active; i++)
  {
    const struct dpcpe_ldesc *l = &d->lv[i];
    __m256i K = _mm256_and_si256(A, _mm256_set1_epi32(l->mask[0]));
    __m256i ha = fmix8(_mm256_xor_si256(K, _mm256_set1_epi32(l->sa)));
    __m256i hb = fmix8(_mm256_xor_si256(K, _mm256_set1_epi32(l->sb)));

    uint pos = l->filter ? filter8(base, l, ha, hb, active) : active;
    if (!pos)
      continue;

    _mm256_store_si256((__m256i *) ka, ha);
    _mm256_store_si256((__m256i *) kb, hb);
    _mm256_store_si256((__m256i *) kk, K);
    prefetch_buckets(base, l, kb, pos);

    for (uint m = pos; m; m &= m - 1)
    {
      uint j = __builtin_ctz(m);
      u32 v = dpcpe_probe8(base, l, ((u64) kb[j] << 32) | ka[j], kk[j]);
      if (v)
      {
	res[j] = v;
	active &= ~(1U << j);
      }
    }
  }

  __m256i R = _mm256_load_si256((const __m256i *) res);
  if (active)
  {
    __m256i idx = _mm256_srlv_epi32(A, _mm256_set1_epi32(32 - d->dbits));
    R = _mm256_mask_i32gather_epi32(R, (const int *) (base + d->arr), idx, lanes8(active), 4);
  }
  _mm256_storeu_si256((__m256i *) val, _mm256_xor_si256(R, _mm256_set1_epi32(-1)));
}

TARGET void
dpcpe_bulk4_avx2(const struct lpm_engine *e, const ip4_addr *a, u32 *val, uint n)
{
  const byte *base = ((const struct dpcpe *) e)->base;
  uint i = 0;

  for (; i + 8 <= n; i += 8)
  {
    u64 s;
    do {
      s = dpcpe_read_start(base);
      batch4(base, dpcpe_dir_get(base), (const u32 *) (a + i), val + i);
    } while (!dpcpe_read_ok(base, s));
  }

  if (i < n)
    dpcpe_bulk4_scalar(e, a + i, val + i, n - i);
}

TARGET static void
batch6(const byte *base, const struct dpcpe_dir *d, const u32 *a, u32 *val)
{
  __m256i stride = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  __m256i W[4];
  for (uint j = 0; j < 4; j++)
    W[j] = _mm256_i32gather_epi32((const int *) a, _mm256_add_epi32(stride, _mm256_set1_epi32(j)), 4);

  uint active = 0xff;
  u32 res[8] __attribute__((aligned(32))) = {};
  u32 ka[8] __attribute__((aligned(32))), kb[8] __attribute__((aligned(32)));

  for (uint i = 0; (i < d->nlevels) && active; i++)
  {
    const struct dpcpe_ldesc *l = &d->lv[i];
    __m256i ha = _mm256_set1_epi32(l->sa), hb = _mm256_set1_epi32(l->sb);
    for (uint j = 0; j < l->words; j++)
    {
      __m256i K = _mm256_and_si256(W[j], _mm256_set1_epi32(l->mask[j]));
      ha = fmix8(_mm256_xor_si256(ha, K));
      hb = fmix8(_mm256_xor_si256(hb, K));
    }

    uint pos = l->filter ? filter8(base, l, ha, hb, active) : active;
    if (!pos)
      continue;

    _mm256_store_si256((__m256i *) ka, ha);
    _mm256_store_si256((__m256i *) kb, hb);
    prefetch_buckets(base, l, kb, pos);

    for (uint m = pos; m; m &= m - 1)
    {
      uint j = __builtin_ctz(m);
      u32 v = dpcpe_probe_lane6(base, l, ((u64) kb[j] << 32) | ka[j], a + 4 * j);
      if (v)
      {
	res[j] = v;
	active &= ~(1U << j);
      }
    }
  }

  __m256i R = _mm256_load_si256((const __m256i *) res);
  if (active)
  {
    __m256i idx = _mm256_srlv_epi32(W[0], _mm256_set1_epi32(32 - d->dbits));
    R = _mm256_mask_i32gather_epi32(R, (const int *) (base + d->arr), idx, lanes8(active), 4);
  }
  _mm256_storeu_si256((__m256i *) val, _mm256_xor_si256(R, _mm256_set1_epi32(-1)));
}

TARGET void
dpcpe_bulk6_avx2(const struct lpm_engine *e, const ip6_addr *a, u32 *val, uint n)
{
  const byte *base = ((const struct dpcpe *) e)->base;
  uint i = 0;

  for (; i + 8 <= n; i += 8)
  {
    u64 s;
    do {
      s = dpcpe_read_start(base);
      batch6(base, dpcpe_dir_get(base), (const u32 *) (a + i), val + i);
    } while (!dpcpe_read_ok(base, s));
  }

  if (i < n)
    dpcpe_bulk6_scalar(e, a + i, val + i, n - i);
}
