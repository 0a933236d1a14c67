/*
 *	bloombird -- LPM exporter: next-hop sets as text
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: LPM exporter next-hop text
 *
 * One formatter for bird's `show lpm lookup' and for readers in other
 * processes (tools/lpm-reader compiles this file too), so that their
 * answers can be compared as text. Plain C: no BIRD headers.
 */

#include "proto/lpm/lpm-shm.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static void
lpmx_gw_format(char *buf, const struct lpmx_path *p)
{
  if (p->gw_family == 4)
  {
    uint32_t a = htonl(p->gw[3]);
    inet_ntop(AF_INET, &a, buf, INET6_ADDRSTRLEN);
  }
  else
  {
    uint32_t a[4];
    for (int i = 0; i < 4; i++)
      a[i] = htonl(p->gw[i]);
    inet_ntop(AF_INET6, a, buf, INET6_ADDRSTRLEN);
  }
}

/**
 * lpmx_nh_format - write a next-hop set as text
 * @buf: output buffer
 * @size: its size
 * @nh: the next-hop set
 *
 * Writes the set as `show route' would: "blackhole", "unreachable" or
 * "prohibit", else each path as "via GW on IFACE" or "dev IFACE" (with
 * "onlink", and a weight when there are several), separated by "; ".
 * Returns the length of the full text, which may exceed @size as with
 * snprintf().
 */
int
lpmx_nh_format(char *buf, unsigned size, const struct lpmx_nh *nh)
{
  static const char * const kind[] = {
    [LPMX_BLACKHOLE] = "blackhole",
    [LPMX_UNREACHABLE] = "unreachable",
    [LPMX_PROHIBIT] = "prohibit",
  };
  unsigned len = 0;

  if (size)
    buf[0] = 0;

  if (nh->dest != LPMX_UNICAST)
    return snprintf(buf, size, "%s", ((nh->dest < 5) && kind[nh->dest]) ? kind[nh->dest] : "?");

  for (unsigned i = 0; (i < nh->paths) && (i < LPMX_PATHS); i++)
  {
    const struct lpmx_path *p = &nh->path[i];
    char gw[INET6_ADDRSTRLEN], ifname[LPMX_IFNAME + 1], weight[16] = "";

    memcpy(ifname, p->ifname, LPMX_IFNAME);
    ifname[LPMX_IFNAME] = 0;
    if (nh->paths > 1)
      snprintf(weight, sizeof(weight), " weight %d", p->weight + 1);

    char *at = buf + ((len < size) ? len : size);
    unsigned room = (len < size) ? size - len : 0;
    const char *sep = i ? "; " : "";

    if (p->gw_family)
    {
      lpmx_gw_format(gw, p);
      len += snprintf(at, room, "%svia %s on %s%s%s", sep, gw, ifname, p->onlink ? " onlink" : "", weight);
    }
    else
      len += snprintf(at, room, "%sdev %s%s", sep, ifname, p->onlink ? " onlink" : "");	/* No weight, like `show route' */
  }

  return len;
}
