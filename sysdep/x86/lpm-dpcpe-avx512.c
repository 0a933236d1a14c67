/*
 *	bloombird -- The dpcpe LPM engine: AVX-512 batch lookups
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe AVX-512 lookups
 *
 * Sixteen addresses at a time, one 32-bit lane each. Per level, longest
 * first, for the lanes still unanswered: mask the addresses to the level,
 * hash them (both 32-bit halves of the hash, the same multiply-xorshift
 * rounds as the scalar dpcpe_hash()), pick the filter words (multiply-shift
 * of the low half, in even and odd 64-bit products), gather them in two
 * 8 x 64-bit gathers, build the k-bit masks from the high half by double
 * hashing with variable shifts, and compare. Only lanes whose filter test
 * passed probe the table, one by one with the scalar probe after the
 * buckets of all of them have been prefetched, so their cache misses
 * overlap. Lanes left after the last level gather their value from the
 * direct array. Needs AVX-512F (gathers, masks, 32-bit multiplies) only.
 *
 * Answers are those of the scalar lookups by construction (same hash, same
 * probes); the tests compare them on every step of their churn.
 */

#include "nest/bird.h"
#include "nest/lpm-dpcpe.h"

#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

TARGET static inline __m512i
fmix16(__m512i x)
{
  x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
  x = _mm512_mullo_epi32(x, _mm512_set1_epi32(0x85ebca6b));
  x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 13));
  x = _mm512_mullo_epi32(x, _mm512_set1_epi32(0xc2b2ae35));
  x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
  return x;
}

/* (x * n) >> 32 per 32-bit lane */
TARGET static inline __m512i
range16(__m512i x, u32 n)
{
  __m512i N = _mm512_set1_epi32(n);
  __m512i ev = _mm512_srli_epi64(_mm512_mul_epu32(x, N), 32);
  __m512i od = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), N);
  return _mm512_mask_blend_epi32(0xAAAA, ev, od);
}

/* Filter test of 8 lanes (64-bit): words @w, hash high halves @hb */
TARGET static inline __mmask8
ftest8(__m512i w, __m256i hb, uint k)
{
  __m512i b = _mm512_cvtepu32_epi64(hb);
  __m512i p = _mm512_and_si512(b, _mm512_set1_epi64(63));
  __m512i s = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi64(b, 6), _mm512_set1_epi64(63)), _mm512_set1_epi64(1));
  __m512i one = _mm512_set1_epi64(1), m = _mm512_setzero_si512();

  for (uint i = 0; i < k; i++)
  {
    m = _mm512_or_si512(m, _mm512_sllv_epi64(one, _mm512_and_si512(p, _mm512_set1_epi64(63))));
    p = _mm512_add_epi64(p, s);
  }

  return _mm512_cmpeq_epi64_mask(_mm512_and_si512(w, m), m);
}

TARGET static inline __mmask16
filter16(const byte *base, const struct dpcpe_ldesc *l, __m512i ha, __m512i hb, __mmask16 active)
{
  __m512i idx = range16(ha, l->nw);
  const long long *f = (const long long *) (base + l->flt);
  __m512i w0 = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), (__mmask8) active,
					   _mm512_castsi512_si256(idx), f, 8);
  __m512i w1 = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), (__mmask8) (active >> 8),
					   _mm512_extracti64x4_epi64(idx, 1), f, 8);
  __mmask8 m0 = ftest8(w0, _mm512_castsi512_si256(hb), l->k);
  __mmask8 m1 = ftest8(w1, _mm512_extracti64x4_epi64(hb, 1), l->k);
  return active & (m0 | ((__mmask16) m1 << 8));
}

/* Prefetch the home buckets of the lanes in @pos */
TARGET static inline void
prefetch_buckets(const byte *base, const struct dpcpe_ldesc *l, const u32 *hb, __mmask16 pos)
{
  for (u32 m = pos; m; m &= m - 1)
  {
    uint j = __builtin_ctz(m);
    __builtin_prefetch(base + l->tab + (size_t) dpcpe_range(hb[j], l->nb) * DPCPE_BUCKET);
  }
}

TARGET static void
batch4(const byte *base, const struct dpcpe_dir *d, const u32 *a, u32 *val)
{
  __m512i A = _mm512_loadu_si512(a);
  __mmask16 active = 0xffff;
  u32 res[16] __attribute__((aligned(64))) = {};
  u32 ka[16] __attribute__((aligned(64))), kb[16] __attribute__((aligned(64))), kk[16] __attribute__((aligned(64)));

  for (uint i = 0; (i < d->nlevels) && active; i++)
  {
    const struct dpcpe_ldesc *l = &d->lv[i];
    __m512i K = _mm512_and_si512(A, _mm512_set1_epi32(l->mask[0]));
    __m512i ha = fmix16(_mm512_xor_si512(K, _mm512_set1_epi32(l->sa)));
    __m512i hb = fmix16(_mm512_xor_si512(K, _mm512_set1_epi32(l->sb)));

    __mmask16 pos = l->filter ? filter16(base, l, ha, hb, active) : active;
    if (!pos)
      continue;

    _mm512_store_si512(ka, ha);
    _mm512_store_si512(kb, hb);
    _mm512_store_si512(kk, K);
    prefetch_buckets(base, l, kb, pos);

    for (u32 m = pos; m; m &= m - 1)
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

  __m512i R = _mm512_load_si512(res);
  if (active)
  {
    __m512i idx = _mm512_srlv_epi32(A, _mm512_set1_epi32(32 - d->dbits));
    R = _mm512_mask_i32gather_epi32(R, active, idx, base + d->arr, 4);
  }
  _mm512_storeu_si512(val, _mm512_xor_si512(R, _mm512_set1_epi32(-1)));
}

TARGET void
dpcpe_bulk4_avx512(const struct lpm_engine *e, const ip4_addr *a, u32 *val, uint n)
{
  const byte *base = ((const struct dpcpe *) e)->base;
  uint i = 0;

  for (; i + 16 <= n; i += 16)
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
  __m512i stride = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60);
  __m512i W[4];
  for (uint j = 0; j < 4; j++)
    W[j] = _mm512_i32gather_epi32(_mm512_add_epi32(stride, _mm512_set1_epi32(j)), a, 4);

  __mmask16 active = 0xffff;
  u32 res[16] __attribute__((aligned(64))) = {};
  u32 ka[16] __attribute__((aligned(64))), kb[16] __attribute__((aligned(64)));

  for (uint i = 0; (i < d->nlevels) && active; i++)
  {
    const struct dpcpe_ldesc *l = &d->lv[i];
    __m512i ha = _mm512_set1_epi32(l->sa), hb = _mm512_set1_epi32(l->sb);
    for (uint j = 0; j < l->words; j++)
    {
      __m512i K = _mm512_and_si512(W[j], _mm512_set1_epi32(l->mask[j]));
      ha = fmix16(_mm512_xor_si512(ha, K));
      hb = fmix16(_mm512_xor_si512(hb, K));
    }

    __mmask16 pos = l->filter ? filter16(base, l, ha, hb, active) : active;
    if (!pos)
      continue;

    _mm512_store_si512(ka, ha);
    _mm512_store_si512(kb, hb);
    prefetch_buckets(base, l, kb, pos);

    for (u32 m = pos; m; m &= m - 1)
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

  __m512i R = _mm512_load_si512(res);
  if (active)
  {
    __m512i idx = _mm512_srlv_epi32(W[0], _mm512_set1_epi32(32 - d->dbits));
    R = _mm512_mask_i32gather_epi32(R, active, idx, base + d->arr, 4);
  }
  _mm512_storeu_si512(val, _mm512_xor_si512(R, _mm512_set1_epi32(-1)));
}

TARGET void
dpcpe_bulk6_avx512(const struct lpm_engine *e, const ip6_addr *a, u32 *val, uint n)
{
  const byte *base = ((const struct dpcpe *) e)->base;
  uint i = 0;

  for (; i + 16 <= n; i += 16)
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
