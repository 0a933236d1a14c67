#!/usr/bin/env python3
# tests/bench/ecmp-sets.py -- the ECMP next-hop sets of tests/bench/nlfill.c
# as bird static routes
#
# Can be freely distributed and used under the terms of the GNU GPL,
# version 2 or any later version.
#
#   ecmp-sets.py TABLE K GATEWAY
#
# TABLE: one prefix per line (anything after the prefix on a line is
# ignored; .xz read as such), K: paths per route (1..32), GATEWAY: the first
# of the pool of 32 gateways (GATEWAY, GATEWAY + 1, ..., GATEWAY + 31).
# Prints, in the table's order, one static route per prefix with the same
# next hops as `nlfill -k K ... GATEWAY ...` installs for it:
#
#   route P via G1 via G2 ...;
#
# the gateways in pool order, and on stderr the number of prefixes and of
# distinct sets. The sets (the same rule as nlfill's nh_set(); change both
# or neither):
#
#   h     = FNV-1a, 32 bits, over the prefix's address in network order
#           (4 or 16 bytes, as written) and then its length (one byte)
#   s     = h mod 64
#   start = s mod 32, step = 1 + 2 * (s div 32)
#   set   = pool members (start + j * step) mod 32, j = 0 .. K-1
#
# Self-check: every set has K distinct members, and there are no more
# distinct sets than set indices (64); exits 1 otherwise.

import ipaddress
import lzma
import sys

POOL = 32
NSETS = 64


def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def nh_set(addr, length, k):
    """Pool indices (ascending) of the next hops of prefix addr/length"""
    s = fnv1a(addr.packed + bytes([length])) % NSETS
    start, step = s % POOL, 1 + 2 * (s // POOL)
    return sorted({(start + j * step) % POOL for j in range(k)})


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: ecmp-sets.py TABLE K GATEWAY")
    table, k, gw = sys.argv[1:]
    try:
        k = int(k)
        base = ipaddress.ip_address(gw)
    except ValueError as e:
        sys.exit("ecmp-sets.py: %s" % e)
    if not 1 <= k <= POOL:
        sys.exit("ecmp-sets.py: K must be 1..%d" % POOL)
    pool = [base + i for i in range(POOL)]

    opener = lzma.open if table.endswith(".xz") else open
    seen, n, out = set(), 0, []
    with opener(table, "rt") as f:
        for line in f:
            w = line.split()
            if not w or "/" not in w[0]:
                continue
            a, l = w[0].split("/", 1)
            try:
                addr, length = ipaddress.ip_address(a), int(l)
            except ValueError as e:
                sys.exit("ecmp-sets.py: bad prefix %s: %s" % (w[0], e))
            if addr.version != base.version or not 0 <= length <= addr.max_prefixlen:
                sys.exit("ecmp-sets.py: bad prefix %s" % w[0])
            m = nh_set(addr, length, k)
            if len(m) != k:
                sys.exit("ecmp-sets.py: self-check: %s has %d next hops, not %d" % (w[0], len(m), k))
            seen.add(tuple(m))
            n += 1
            out.append("route %s/%d%s;\n" % (addr, length, "".join(" via %s" % pool[i] for i in m)))
    sys.stdout.writelines(out)
    if len(seen) > NSETS:
        sys.exit("ecmp-sets.py: self-check: %d distinct sets, more than %d" % (len(seen), NSETS))
    print("ecmp-sets.py: %d prefixes, %d distinct sets of next hops" % (n, len(seen)), file=sys.stderr)


if __name__ == "__main__":
    main()
