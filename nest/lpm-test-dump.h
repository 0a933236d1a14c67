/*
 *	bloombird -- LPM engine tests: a second engine fed in the first's dump order
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_LPM_TEST_DUMP_H_
#define _BIRD_LPM_TEST_DUMP_H_

#include "test/birdtest.h"
#include "nest/lpm.h"

/*
 * lpm_test_dump_order() fills engine @a with LPM_DUMP_N random IPv4
 * prefixes (/16-/32), feeds its lpm_dump() to the empty engine @b in that
 * order and fills @o: the prefixes dumped, the longest run of @b's prefix
 * table (@run, engine-specific) seen every 2,000 updates and at the end
 * (runs are longest just before a table grows), the prefixes where the two
 * engines answer or hold differently, and the prefixes at the same place
 * in both dumps (the slot orders must be unrelated). With one fixed hash
 * function, @b would get its keys sorted by home slot and pile them up in
 * runs while its table is smaller than @a's. Shared by the simd and the
 * dpcpe engine tests, which assert on @o.
 */
#define LPM_DUMP_N	200000

typedef u64 lpm_test_run_fn(struct lpm_engine *e);

struct lpm_dump_order {
  uint count;				/* Prefixes in @a's dump */
  u64 worst;				/* Longest run of @b while it was fed */
  uint bad;				/* Prefixes answered or held differently */
  uint same;				/* Prefixes at the same place in both dumps */
};

static inline void
lpm_test_dump_order(struct lpm_engine *a, struct lpm_engine *b, lpm_test_run_fn *run, struct lpm_dump_order *o)
{
  struct lpm_route *r = xmalloc(LPM_DUMP_N * sizeof(*r));
  struct lpm_route *r2 = xmalloc(LPM_DUMP_N * sizeof(*r2));
  memset(o, 0, sizeof(*o));

  for (uint i = 0; i < LPM_DUMP_N; i++)
  {
    uint len = 16 + bt_random_n(17);
    net_addr_ip4 n = NET_ADDR_IP4(ip4_from_u32(bt_random() & ~(len < 32 ? 0xffffffffU >> len : 0)), len);
    bt_assert(lpm_update(a, (net_addr *) &n, i % 1000, NULL) >= 0);
  }

  uint cnt = o->count = lpm_dump(a, r, LPM_DUMP_N);
  for (uint i = 0; i < cnt; i++)
  {
    bt_assert(lpm_update(b, &r[i].n.n, r[i].value, NULL) >= 0);
    if (!(i % 2000))
      o->worst = MAX(o->worst, run(b));
  }
  o->worst = MAX(o->worst, run(b));

  for (uint i = 0; i < cnt; i++)
  {
    ip4_addr x = net4_prefix(&r[i].n.n);
    o->bad += (lpm_lookup4(a, x) != lpm_lookup4(b, x)) || (lpm_find(b, &r[i].n.n) != r[i].value);
  }

  uint cnt2 = lpm_dump(b, r2, LPM_DUMP_N);
  bt_assert(cnt2 == cnt);
  for (uint i = 0; i < MIN(cnt, cnt2); i++)
    o->same += net_equal(&r[i].n.n, &r2[i].n.n);

  xfree(r2);
  xfree(r);
}

#endif
