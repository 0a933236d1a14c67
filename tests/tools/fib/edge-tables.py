#!/usr/bin/env python3
"""edge-tables.py OUTDIR -- synthetic tables for the differential test.

Written as `prefix/len` lines, like the real tables:
  edge4 / edge6   the default route; /31+/32 (/127+/128) pairs in every
                  arrangement (the /32 at the pair's base, at its top, both,
                  neither); lone host routes; a covering /30 (/126); a few
                  /24 (/48) blocks around them
  hosts4 / hosts6 nothing but host routes (/32, /128; IPv6 in 2000::/3)
Deterministic (fixed seed), so stock and patched see the same tables.
"""
import ipaddress
import random
import sys

out = sys.argv[1]
rnd = random.Random(20261122)


def edge(v6, path):
    bits = 128 if v6 else 32
    base = (0x20010db8 << 96) if v6 else (10 << 24)
    span = 1 << (80 if v6 else 24)
    lines = ["::/0" if v6 else "0.0.0.0/0"]
    fmt = ipaddress.IPv6Address if v6 else ipaddress.IPv4Address
    for i in range(4000):
        x = base + (rnd.randrange(span) & ~1)
        case = i % 7
        pair = []
        if case in (0, 1, 2, 3):
            pair.append((x, bits - 1))
        if case in (0, 2, 4):
            pair.append((x, bits))
        if case in (1, 2, 5):
            pair.append((x + 1, bits))
        if case == 6:
            pair += [(x & ~3, bits - 2), (x, bits), (x + 1, bits - 1 + 1)]
        if i % 50 == 0:
            blk = bits - 8 if not v6 else 48
            pair.append((x & ~((1 << (bits - blk)) - 1), blk))
        for a, l in pair:
            lines.append(f"{fmt(a)}/{l}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def hosts(v6, path, n):
    fmt = ipaddress.IPv6Address if v6 else ipaddress.IPv4Address
    with open(path, "w") as f:
        for _ in range(n):
            a = ((0x2000 | rnd.randrange(0x2000)) << 112 | rnd.getrandbits(112)) if v6 else rnd.getrandbits(32)
            f.write(f"{fmt(a)}/{128 if v6 else 32}\n")


edge(False, f"{out}/edge4.txt")
edge(True, f"{out}/edge6.txt")
hosts(False, f"{out}/hosts4.txt", 120000)
hosts(True, f"{out}/hosts6.txt", 60000)
