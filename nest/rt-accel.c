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
 * filter's length-skipping walk (fib-lpm.c); or nobody, and stock's code
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

  return net_route_bloom(tab, n, done);
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

  return net_roa_check_bloom(tab, n, asn, done);
}
