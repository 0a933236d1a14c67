/*
 *	bloombird -- `show fib': FIB and Bloom filter statistics
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include "nest/bird.h"
#include "nest/route.h"
#include "nest/cli.h"
#include "nest/fib-bloom.h"
#include "nest/fib-roa.h"
#include "nest/cli-codes.h"
#include "lib/string.h"


/* BIRD's printf has no %f: a fraction as "0.001234" (@digits decimals) */
static const char *
fib_show_frac(double v, uint digits)
{
  u64 scale = 1;
  for (uint i = 0; i < digits; i++)
    scale *= 10;

  u64 x = (u64) (v * scale + 0.5);
  return tmp_sprintf("%lu.%0*lu", x / scale, digits, x % scale);
}

/* "8-32 (25 used)", or a short list when the lengths are few */
static void
fib_show_lengths(struct cli *c, const struct fib_bloom *b)
{
  uint used = 0, lo = 0, hi = 0;

  for (uint l = 0; l <= FIB_MAX_PXLEN; l++)
    if (b->lengths.count[l])
    {
      if (!used++)
	lo = l;
      hi = l;
    }

  if (!used)
    cli_printf(c, -CLI_FIB, "  Prefix lengths:   none");
  else
    cli_printf(c, -CLI_FIB, "  Prefix lengths:   /%u-/%u, %u in use", lo, hi, used);
}

static void
fib_show_one(struct cli *c, rtable *t)
{
  struct fib *f = &t->fib;
  struct fib_bloom *b = f->bloom;

  cli_printf(c, -CLI_FIB, "Table %s (%s):", t->name, net_label[t->addr_type]);
  cli_printf(c, -CLI_FIB, "  Entries:          %u (hash order %u, %u buckets)",
	     f->entries, f->hash_order, f->hash_size);
  if (f->rehash_old)
    cli_printf(c, -CLI_FIB, "  Rehash:           from order %u, %u of %u old buckets moved",
	       f->hash_order - f->rehash_step, f->rehash_pos, f->rehash_old_size);

  static const char * const state[] = {
    [FIB_BLOOM_OFF] = "off",
    [FIB_BLOOM_DORMANT] = "dormant",
    [FIB_BLOOM_ACTIVE] = "active",
  };

  if (b->state == FIB_BLOOM_OFF)
    cli_printf(c, -CLI_FIB, "  Bloom filter:     off");
  else
  {
    cli_printf(c, -CLI_FIB, "  Bloom filter:     %s%s, %u hashes, %u counters/entry (built %u times by the policy, dropped %u times; fib_find %s it)",
	       state[b->state], b->pinned ? ", pinned" : "", b->cf.hashes, b->cf.counters,
	       b->activations, b->drops, fib_bloom_asked(b) ? "asks" : "does not ask");
    cli_printf(c, -CLI_FIB, "  Policy window:    %lu lookup misses, %lu updates (build at 4 x misses > entries / 2 + 2 x updates, drop at updates > entries / 2 + 4 x misses)",
	       b->pol_miss, b->pol_upd);
  }

  if (!fib_bloom_active(b))
  {
    if ((b->state != FIB_BLOOM_OFF) && (f->hash_order < FIB_BLOOM_MIN_ORDER))
      cli_printf(c, -CLI_FIB, "  Filter size:      none (FIBs get one from hash order %u)", FIB_BLOOM_MIN_ORDER);
  }
  else
  {
    const struct fib_filter *fl = &b->filter;
    const struct fib_guards *g = &b->guards;
    u64 pos = fl->queries - fl->negatives;
    u64 absent = fl->negatives + fl->false_pos;

    cli_printf(c, -CLI_FIB, "  Filter size:      %u bytes (%s B/entry), sized for %u entries",
	       fib_filter_size(fl), fib_show_frac((double) fib_filter_size(fl) / MAX(f->entries, 1), 1),
	       fl->capacity);
    cli_printf(c, -CLI_FIB, "  Guards:           %u bytes (head guard %s, length masks for %u bands of 8 lengths, cover table %s)",
	       fib_guards_size(g), g->head.cnt ? "on" : "off", fib_guards_bands(g), g->cover ? "on" : "off");
    cli_printf(c, -CLI_FIB, "  Fill:             %s%% of counters non-zero, %u saturated, built %u times",
	       fib_show_frac(100 * fib_filter_fill(fl), 2), fl->saturated, b->rebuilds);
    cli_printf(c, -CLI_FIB, "  Queries:          %lu (negatives %lu, positives %lu, false positives %lu)",
	       fl->queries, fl->negatives, pos, fl->false_pos);
    cli_printf(c, -CLI_FIB, "  False positives:  rate measured %s, predicted %s",
	       fib_show_frac(absent ? (double) fl->false_pos / absent : 0.0, 6),
	       fib_show_frac(fib_filter_fpr_predicted(fl), 6));
  }

  /* A ROA index has no need of the filter (fib-roa.c) */
  if (b->roa)
  {
    const struct fib_roa *r = b->roa;
    cli_printf(c, -CLI_FIB, "  ROA index:        %u prefixes with %u valid ROAs (%u prefixes with several), %u bytes%s",
	       r->groups, r->roas, r->shared, fib_roa_size(r), r->v6 ? ", block masks, /32 masks" : ", block masks");
    cli_printf(c, -CLI_FIB, "  ROA checks:       %lu through the index (%lu candidate prefixes looked up, %lu found)",
	       r->checks, r->probes, r->found);
  }

  fib_show_lengths(c, b);
}

void
fib_bloom_show(struct cli *c, struct rtable_config *tc)
{
  if (tc)
  {
    if (!tc->table)
      cf_error("Table %s is not running", tc->name);
    fib_show_one(c, tc->table);
  }
  else
  {
    rtable *t;
    int first = 1;
    node *n;
    WALK_LIST2(t, n, routing_tables, n)
    {
      if (!first)
	cli_printf(c, -CLI_FIB, "");
      first = 0;
      fib_show_one(c, t);
    }
  }

  cli_msg(0, "");
}
