/*
 *	bloombird -- The dpcpe LPM engine: AVX-512 batch lookups
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: dpcpe AVX-512 lookups
 *
 * Stages 0, A and B of the batch pipeline (nest/lpm-dpcpe.h) in 512-bit
 * vectors, sixteen addresses per vector, four vectors per group of 64.
 * Stage 0 tests the group's 64 hint bytes against a level's bit in one
 * instruction (the lanes that level is asked for); stage A masks those
 * lanes' addresses to the level and hashes them in 32-bit
 * lanes (both halves of the hash, the multiply-xorshift rounds of the
 * scalar dpcpe_hash()); stage B picks the filter words (multiply-shift of
 * the low half, from even and odd 32x32-bit products), gathers them, eight
 * 64-bit lanes at a time, builds each key's k-bit mask from the high half
 * by double hashing with variable shifts, and compares. The probes of
 * stage C and the order of the levels are the scalar ones, so the answers
 * are too; the tests compare them at every checkpoint of their churn.
 * Needs AVX-512F (gathers, mask registers, 32-bit multiplies) and BW (byte tests).
 */

#include "nest/bird.h"

#ifdef CONFIG_LPM_AVX512	/* configure --with-lpm-variants */

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
  __m512i c63 = _mm512_set1_epi64(63);
  __m512i p = _mm512_and_si512(b, c63);
  __m512i s = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi64(b, 6), c63), _mm512_set1_epi64(1));
  __m512i one = _mm512_set1_epi64(1), m = _mm512_setzero_si512();

  for (uint i = 0; i < k; i++)
  {
    m = _mm512_or_si512(m, _mm512_sllv_epi64(one, _mm512_and_si512(p, c63)));
    p = _mm512_add_epi64(p, s);
  }

  return _mm512_cmpeq_epi64_mask(_mm512_and_si512(w, m), m);
}

/* Stage 0: lanes whose hint byte has the level's bit, 64 at once */
TARGET static inline u64
lanes64(const struct dpcpe_group *g, uint bit)
{
  return _mm512_test_epi8_mask(_mm512_load_si512(g->hint), _mm512_set1_epi8((char) bit));
}

/* Stage A for one level: hash the vectors that have lanes to test */
TARGET static inline void
hash_level(const struct dpcpe_ldesc *l, struct dpcpe_group *g, uint li, u64 lanes)
{
  for (uint v = 0; v < DPCPE_GROUP; v += 16)
  {
    if (!(u16) (lanes >> v))
      continue;

    __m512i ha = _mm512_set1_epi32(l->sa), hb = _mm512_set1_epi32(l->sb);
    for (uint j = 0; j < l->words; j++)
    {
      __m512i K = _mm512_and_si512(_mm512_load_si512(&g->w[j][v]), _mm512_set1_epi32(l->mask[j]));
      ha = fmix16(_mm512_xor_si512(ha, K));
      hb = fmix16(_mm512_xor_si512(hb, K));
    }
    _mm512_store_si512(&g->ha[li][v], ha);
    _mm512_store_si512(&g->hb[li][v], hb);
  }
}

/* Stage B for one level: lanes whose filter test passes */
TARGET static inline u64
filter_level(const byte *base, const struct dpcpe_ldesc *l, struct dpcpe_group *g, uint li)
{
  const long long *f = (const long long *) (base + l->flt);
  u64 pos = 0;

  for (uint v = 0; v < DPCPE_GROUP; v += 16)
  {
    __mmask16 act = g->lm[li] >> v;
    if (!act)
      continue;

    __m512i ha = _mm512_load_si512(&g->ha[li][v]), hb = _mm512_load_si512(&g->hb[li][v]);
    __m512i idx = range16(ha, l->nw);
    __m512i w0 = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), (__mmask8) act,
					     _mm512_castsi512_si256(idx), f, 8);
    __m512i w1 = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), (__mmask8) (act >> 8),
					     _mm512_extracti64x4_epi64(idx, 1), f, 8);
    __mmask8 m0 = ftest8(w0, _mm512_castsi512_si256(hb), l->k);
    __mmask8 m1 = ftest8(w1, _mm512_extracti64x4_epi64(hb, 1), l->k);
    pos |= (u64) (act & (m0 | ((__mmask16) m1 << 8))) << v;
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
dpcpe_bulk4_avx512(const struct lpm_engine *e, const ip4_addr *a, u32 *val, uint n)
{
  dpcpe_bulk_run(e, (const u32 *) a, val, n, 1, group);
}

TARGET void
dpcpe_bulk6_avx512(const struct lpm_engine *e, const ip6_addr *a, u32 *val, uint n)
{
  dpcpe_bulk_run(e, (const u32 *) a, val, n, 4, group);
}

#endif
