/*
 *	bloombird -- How net_route() and net_roa_check() are answered
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Table lookups through the accelerator
 *
 * net_route() and net_roa_check() ask one function each before their own
 * code, and this file is the only place that chooses who answers. In
 * order: the table's LPM engine, if it has one and can answer the net
 * (rt-lpm.c, rt-lpm-roa.c); a ROA table's ROA index (fib-roa.c); the FIB
 * filter's length-skipping walk (fib-walk.c); or nobody, and stock's code
 * answers, with the table's trie if it has one or with its loop over every
 * covering length. An IP table with a trie and no engine goes to stock's
 * trie walk at once while its FIB has no active filter: there the trie is
 * the faster of the two (fib_bloom_trie_leads(), which also counts the
 * lookup for the filter's upkeep policy).
 *
 * Every way gives the same answer as stock's code (tests/check/fibdiff.sh
 * and the engines' differential tests compare them).
 */

#include "nest/bird.h"
#include "nest/rt-accel.h"

/**
 * rt_accel_route - net_route() through the accelerator
 * @tab: table
 * @n: net asked about
 * @done: set when the answer is final, cleared when stock's code answers
 *
 * Returns the longest net covering @n that has a valid route.
 */
net *
rt_accel_route(rtable *tab, const net_addr *n, int *done)
{
  if (tab->trie_walk && net_val_match(n->type, NB_IP) && fib_bloom_trie_leads(tab->fib.bloom))
  {
    *done = 0;
    return NULL;
  }

  net *best = rt_lpm_route(tab, n, done);
  if (*done)
    return best;

  return net_route_walk(tab, n, done);
}

/* The ROA index of @tab if it keeps one and can answer for @n: an IP net
 * of the table's family, within its length range and without host bits */
static struct fib_roa *
roa_index_for(rtable *tab, const net_addr *n)
{
  int v4 = (tab->addr_type == NET_ROA4) && (n->type == NET_IP4);
  int v6 = (tab->addr_type == NET_ROA6) && (n->type == NET_IP6);

  if ((!v4 && !v6) || !fib_bloom_roa_own(tab->fib.bloom) ||
      (n->pxlen > net_max_prefix_length[n->type]) || !fib_key_canonical(n))
    return NULL;

  return fib_bloom_roa(&tab->fib);
}

/**
 * rt_accel_roa_check - net_roa_check() through the accelerator
 * @tab: ROA table
 * @n: IP network to check
 * @asn: origin AS, 0 if unknown
 * @done: set when the answer is final, cleared when stock's code answers
 *
 * Returns ROA_VALID, ROA_INVALID or ROA_UNKNOWN, as stock does.
 */
int
rt_accel_roa_check(rtable *tab, const net_addr *n, u32 asn, int *done)
{
  if (tab->trie_walk && fib_bloom_trie_leads(tab->fib.bloom))
  {
    *done = 0;
    return ROA_UNKNOWN;
  }

  int res = rt_lpm_roa_check(tab, n, asn, done);
  if (*done)
    return res;

  /* A ROA table's index answers from the first check, filter or not */
  struct fib_roa *r = roa_index_for(tab, n);
  if (r)
  {
    const net_addr_union *u = (const void *) n;
    *done = 1;
    return (n->type == NET_IP4) ? fib_roa_check4(r, u->ip4.prefix, n->pxlen, asn) :
      fib_roa_check6(r, &u->ip6.prefix, n->pxlen, asn);
  }

  return net_roa_check_walk(tab, n, asn, done);
}
