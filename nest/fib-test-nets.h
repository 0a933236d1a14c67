/*
 *	bloombird -- Random nets of every type for FIB tests
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_FIB_TEST_NETS_H_
#define _BIRD_FIB_TEST_NETS_H_

#include "test/birdtest.h"
#include "lib/net.h"

/*
 * fib_test_fill_net() makes a net of @type from the prefixes @a4/@l4 and
 * @a6/@l6 (already masked), drawing the rest at random from small ranges
 * (route distinguishers, ROA max lengths and ASNs, flow data, SADR sources,
 * MPLS labels, ASPA customers), so that nets of one type collide and nest.
 * Shared by the FIB Bloom filter and the FIB rehash tests.
 */
static inline void
fib_test_fill_net(net_addr *n, int type, ip4_addr a4, uint l4, ip6_addr a6, uint l6)
{
  byte fd[3] = { 1, (byte) bt_random_n(3), 0x81 };
  ip6_addr src;

  switch (type)
  {
  case NET_IP4:		net_fill_ip4(n, a4, l4); break;
  case NET_IP6:		net_fill_ip6(n, a6, l6); break;
  case NET_VPN4:	net_fill_vpn4(n, a4, l4, (vpn_rd) { .hi = 0, .lo = bt_random_n(3) }); break;
  case NET_VPN6:	net_fill_vpn6(n, a6, l6, (vpn_rd) { .hi = 0, .lo = bt_random_n(3) }); break;
  case NET_ROA4:	net_fill_roa4(n, a4, l4, l4 + bt_random_n(IP4_MAX_PREFIX_LENGTH - l4 + 1), 64500 + bt_random_n(3)); break;
  case NET_ROA6:	net_fill_roa6(n, a6, l6, l6 + bt_random_n(IP6_MAX_PREFIX_LENGTH - l6 + 1), 64500 + bt_random_n(3)); break;
  case NET_FLOW4:	net_fill_flow4(n, a4, l4, fd, sizeof(fd)); break;
  case NET_FLOW6:	net_fill_flow6(n, a6, l6, fd, sizeof(fd)); break;
  case NET_IP6_SADR:
    src = ip6_and(ip6_build(0x20010000 | bt_random_n(4), bt_random(), bt_random(), bt_random()), ip6_mkmask(48));
    net_fill_ip6_sadr(n, a6, l6, src, 48 - 16 * bt_random_n(3));
    break;
  case NET_MPLS:	net_fill_mpls(n, bt_random_n(1 << 20)); break;
  case NET_ASPA:	net_fill_aspa(n, bt_random()); break;
  default:		bug("type");
  }
}

#endif
