/*
 *	bloombird -- The dpcpe LPM engine: AVX2 batch lookups
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe AVX2 lookups
 *
 * Stages 0 (lane masks from the hint bytes), A and B of the batch
 * pipeline (nest/lpm-dpcpe.h) as in the AVX-512 variant
 * (sysdep/x86/lpm-dpcpe-avx512.c), in 256-bit vectors:
 * eight addresses per vector, hashes in 32-bit lanes, filter words
 * gathered four 64-bit lanes at a time, masks by variable shifts. Stage C
 * is the shared scalar one, so the answers equal the scalar ones.
 */

#include "nest/bird.h"

#ifdef CONFIG_LPM_AVX2	/* configure --with-lpm-variants */

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

/* Stage 0: lanes whose hint byte has the level's bit, 32 at a time */
TARGET static inline u64
lanes64(const struct dpcpe_group *g, uint bit)
{
  __m256i b = _mm256_set1_epi8((char) bit);
  __m256i h0 = _mm256_and_si256(_mm256_load_si256((const __m256i *) g->hint), b);
  __m256i h1 = _mm256_and_si256(_mm256_load_si256((const __m256i *) (g->hint + 32)), b);
  u32 m0 = _mm256_movemask_epi8(_mm256_cmpeq_epi8(h0, _mm256_setzero_si256()));
  u32 m1 = _mm256_movemask_epi8(_mm256_cmpeq_epi8(h1, _mm256_setzero_si256()));
  return ~((u64) m1 << 32 | m0);
}

/* 64-bit lane mask of the low four bits of @act */
TARGET static inline __m256i
mask4(uint act)
{
  __m256i bits = _mm256_set_epi64x(8, 4, 2, 1);
  return _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x(act), bits), bits);
}

/* Stage A for one level: hash the vectors that have lanes to test */
TARGET static inline void
hash_level(const struct dpcpe_ldesc *l, struct dpcpe_group *g, uint li, u64 lanes)
{
  for (uint v = 0; v < DPCPE_GROUP; v += 8)
  {
    if (!(u8) (lanes >> v))
      continue;

    __m256i ha = _mm256_set1_epi32(l->sa), hb = _mm256_set1_epi32(l->sb);
    for (uint j = 0; j < l->words; j++)
    {
      __m256i K = _mm256_and_si256(_mm256_load_si256((const __m256i *) &g->w[j][v]), _mm256_set1_epi32(l->mask[j]));
      ha = fmix8(_mm256_xor_si256(ha, K));
      hb = fmix8(_mm256_xor_si256(hb, K));
    }
    _mm256_store_si256((__m256i *) &g->ha[li][v], ha);
    _mm256_store_si256((__m256i *) &g->hb[li][v], hb);
  }
}

/* Stage B for one level: lanes whose filter test passes */
TARGET static inline u64
filter_level(const byte *base, const struct dpcpe_ldesc *l, struct dpcpe_group *g, uint li)
{
  const long long *f = (const long long *) (base + l->flt);
  u64 pos = 0;

  for (uint v = 0; v < DPCPE_GROUP; v += 8)
  {
    uint act = (g->lm[li] >> v) & 0xff;
    if (!act)
      continue;

    __m256i ha = _mm256_load_si256((const __m256i *) &g->ha[li][v]);
    __m256i hb = _mm256_load_si256((const __m256i *) &g->hb[li][v]);
    __m256i idx = range8(ha, l->nw);
    __m256i z = _mm256_setzero_si256();
    __m256i w0 = _mm256_mask_i32gather_epi64(z, f, _mm256_castsi256_si128(idx), mask4(act), 8);
    __m256i w1 = _mm256_mask_i32gather_epi64(z, f, _mm256_extracti128_si256(idx, 1), mask4(act >> 4), 8);
    uint m0 = ftest4(w0, _mm256_castsi256_si128(hb), l->k);
    uint m1 = ftest4(w1, _mm256_extracti128_si256(hb, 1), l->k);
    pos |= (u64) (act & (m0 | (m1 << 4))) << v;
  }

  return pos;
}

TARGET static void
group(const byte *base, const struct dpcpe_dir *d, struct dpcpe_group *g)
{
  for (uint w0 = 0; (w0 < d->nlevels) && g->active; w0 += DPCPE_WIN)
  {
    uint nw = MIN(DPCPE_WIN, d->nlevels - w0);

    for (uint i = 0; i < nw; i++)
    {
      g->lm[i] = g->active & lanes64(g, d->lv[w0 + i].hbit);
      if (!g->lm[i])
	continue;
      hash_level(&d->lv[w0 + i], g, i, g->lm[i]);
      dpcpe_group_prefetch(base, &d->lv[w0 + i], g, i);
    }

    for (uint i = 0; i < nw; i++)
      g->pos[i] = (g->lm[i] && d->lv[w0 + i].filter) ? filter_level(base, &d->lv[w0 + i], g, i) : g->lm[i];

    dpcpe_group_probe(base, d, g, w0, nw);
  }
}

TARGET void
dpcpe_bulk4_avx2(const struct lpm_engine *e, const ip4_addr *a, u32 *val, uint n)
{
  dpcpe_bulk_run(e, (const u32 *) a, val, n, 1, group);
}

TARGET void
dpcpe_bulk6_avx2(const struct lpm_engine *e, const ip6_addr *a, u32 *val, uint n)
{
  dpcpe_bulk_run(e, (const u32 *) a, val, n, 4, group);
}

#endif
