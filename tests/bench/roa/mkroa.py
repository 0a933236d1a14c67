#!/usr/bin/env python3
# Prepares the data of tests/bench/roa-import from the shared tables:
#
#   roa4.conf, roa6.conf  static ROA routes ("route P max M as A;") for
#                         include inside a "protocol static" block
#   feed6.txt             the tier-1 IPv6 table for the feeder; prefixes that
#                         the RIS 2019 update trace announces get the AS path
#                         of their last announcement there (real origins)
#   expected.txt          verdict counts computed here, independently of BIRD,
#                         with BIRD's rule (net_roa_check) and the origin that
#                         BIRD will see (the feeder's parsing of the AS path,
#                         GoBGP's AS prepended on the eBGP session)
#   provenance.txt        where every ROA comes from, with counts
#
# Derived ROAs are labelled as such everywhere: they are not RPKI data.
# Part of bloombird. Can be freely distributed and used under the terms of
# the GNU GPL, version 2 or any later version.
import argparse
import gzip
import hashlib
import ipaddress
import lzma
import os
import re

UINT = re.compile(r"^[0-9]+$")


def opener(path):
    if path.endswith(".xz"):
        return lzma.open(path, "rt")
    if path.endswith(".gz"):
        return gzip.open(path, "rt")
    return open(path)


def feeder_origin(path_field, feeder_as):
    """The origin BIRD sees: the feeder keeps the tokens that parse as
    uint32 after trimming braces (multi-AS sets are dropped), GoBGP prepends
    its own AS, so an empty path ends in the feeder's AS."""
    last = None
    for tok in path_field.split():
        tok = tok.strip("{}")
        if UINT.match(tok) and int(tok) < 2 ** 32:
            last = int(tok)
    return feeder_as if last is None else last


def derived_maxlen(net, bits):
    """Deterministic max length for a derived ROA: 60% exact, 30% +1..+4,
    10% up to /24 (IPv4) or /48 (IPv6) when that is longer."""
    h = hashlib.md5(str(net).encode()).digest()
    r = h[0] % 100
    if r < 60:
        return net.prefixlen
    if r < 90:
        return min(bits, net.prefixlen + 1 + h[1] % 4)
    return max(net.prefixlen, 24 if bits == 32 else 48)


class RoaSet:
    """ROAs keyed like BIRD's ROA nets: (prefix, length, max length, ASN)."""

    def __init__(self, bits):
        self.bits = bits
        self.keys = set()
        self.by_net = {}         # (int prefix, len) -> [(maxlen, asn)]
        self.count = {}          # source label -> ROAs added (new keys only)

    def add(self, net, maxlen, asn, label):
        key = (int(net.network_address), net.prefixlen, maxlen, asn)
        if key in self.keys:
            return
        self.keys.add(key)
        self.by_net.setdefault(key[:2], []).append((maxlen, asn))
        self.count[label] = self.count.get(label, 0) + 1

    def verdict(self, net, origin):
        """net_roa_check(): valid if a covering ROA has this (non-zero) ASN and
        a max length >= the length, invalid if any ROA covers, else unknown."""
        addr, plen = int(net.network_address), net.prefixlen
        anything = False
        for l in range(plen, -1, -1):
            mask = ((1 << l) - 1) << (self.bits - l) if l else 0
            for maxlen, asn in self.by_net.get((addr & mask, l), ()):
                anything = True
                if origin and asn == origin and maxlen >= plen:
                    return "valid"
        return "invalid" if anything else "unknown"

    def write(self, path, af):
        with open(path, "w") as out:
            for addr, plen, maxlen, asn in sorted(self.keys):
                net = af((addr, plen))
                out.write("route %s max %d as %d;\n" % (net, maxlen, asn))


def load_vrps(path, roas, label):
    for line in opener(path):
        f = line.split()
        if len(f) != 3:
            continue
        roas.add(ipaddress.ip_network(f[0], strict=False), int(f[1]), int(f[2]), label)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--feeder-as", type=int, default=4200000001)
    a = ap.parse_args()
    d = a.data
    vrp4 = d + "/roa/rpki-global-2017-06-01.v4.tsv.xz"
    vrp6 = d + "/roa/rpki-global-2017-06-01.v6.tsv.xz"
    rv08 = d + "/ipv4/routeviews-2008.v4.origin.txt.xz"
    feed4 = d + "/ipv4/as3856-feed-2015.v4.nh-aspath.txt.xz"
    tier6 = d + "/ipv6/tier1-2023.v6.txt.xz"
    ris19 = d + "/updates/ris-updates-20190101-0000.bgpdump-m.txt.gz"

    r4, r6 = RoaSet(32), RoaSet(128)
    load_vrps(vrp4, r4, "real: RPKI 2017-06-01 VRPs (IPv4)")
    load_vrps(vrp6, r6, "real: RPKI 2017-06-01 VRPs (IPv6)")

    # IPv4 derived: one ROA per prefix and origin of RouteViews 2008
    for line in opener(rv08):
        f = line.split()
        if len(f) == 2 and UINT.match(f[1]):
            net = ipaddress.IPv4Network(f[0], strict=False)
            r4.add(net, derived_maxlen(net, 32), int(f[1]),
                   "derived: RouteViews 2008 prefix + origin AS (IPv4)")

    # IPv6 real origins: the last announcement per IPv6 prefix in the RIS trace
    path6 = {}
    for line in opener(ris19):
        f = line.split("|")
        if len(f) > 6 and f[2] == "A" and ":" in f[5]:
            path6[str(ipaddress.IPv6Network(f[5], strict=False))] = f[6]
    for p, path in sorted(path6.items()):
        origin = feeder_origin(path, 0)
        if origin:
            net = ipaddress.IPv6Network(p)
            r6.add(net, derived_maxlen(net, 128), origin,
                   "derived: RIS 2019-01-01 update trace prefix + origin AS (IPv6)")

    os.makedirs(a.out, exist_ok=True)
    r4.write(a.out + "/roa4.conf.tmp", lambda t: ipaddress.IPv4Network(t))
    r6.write(a.out + "/roa6.conf.tmp", lambda t: ipaddress.IPv6Network(t))

    # Expected verdicts, per unique prefix (GoBGP keeps the last line of each)
    last4 = {}
    for line in opener(feed4):
        f = line.rstrip("\n").split("\t")
        if f and "/" in f[0]:
            last4[str(ipaddress.IPv4Network(f[0], strict=False))] = f[2] if len(f) > 2 else ""
    v4 = {"valid": 0, "invalid": 0, "unknown": 0}
    with open(a.out + "/queries4.txt.tmp", "w") as q4:   # for fibtool roa (tests/bench/roa-checks)
        for p, path in last4.items():
            origin = feeder_origin(path, a.feeder_as)
            v4[r4.verdict(ipaddress.IPv4Network(p), origin)] += 1
            q4.write("%s %d\n" % (p, origin))

    v6 = {"valid": 0, "invalid": 0, "unknown": 0}
    seen6, with_path = set(), 0
    with open(a.out + "/feed6.txt.tmp", "w") as out, open(a.out + "/queries6.txt.tmp", "w") as q6:
        for line in opener(tier6):
            p = line.strip()
            if "/" not in p:
                continue
            key = str(ipaddress.IPv6Network(p, strict=False))
            path = path6.get(key, "")
            with_path += path != ""
            out.write("%s\t\t%s\n" % (p, path))
            if key not in seen6:
                seen6.add(key)
                origin = feeder_origin(path, a.feeder_as)
                v6[r6.verdict(ipaddress.IPv6Network(key), origin)] += 1
                q6.write("%s %d\n" % (key, origin))

    with open(a.out + "/expected.txt.tmp", "w") as out:
        for af, v in (("ipv4", v4), ("ipv6", v6)):
            out.write("%s %d %d %d\n" % (af, v["valid"], v["invalid"], v["unknown"]))
    with open(a.out + "/provenance.txt.tmp", "w") as out:
        for roas, af in ((r4, "IPv4"), (r6, "IPv6")):
            out.write("%s ROA table: %d ROAs\n" % (af, len(roas.keys)))
            for label, n in roas.count.items():
                out.write("  %7d  %s\n" % (n, label))
        out.write("IPv4 feed: AS3856's BGP feed recorded 2015-10-23, %d prefixes, real AS paths "
                  "(origin = last AS; GoBGP's AS %d when the path is empty)\n"
                  % (len(last4), a.feeder_as))
        out.write("IPv6 feed: tier-1 2023 table, %d prefixes, no origins of its own; "
                  "%d get the real AS path of their last announcement in the RIS "
                  "2019-01-01 trace, the rest end in GoBGP's AS %d\n"
                  % (len(seen6), with_path, a.feeder_as))
        out.write("Derived max lengths: 60% exact, 30% +1..+4, 10% up to /24 (IPv6 /48), "
                  "chosen by a hash of the prefix\n")
    for f in ("roa4.conf", "roa6.conf", "feed6.txt", "queries4.txt", "queries6.txt", "expected.txt",
              "provenance.txt"):
        os.replace(a.out + "/" + f + ".tmp", a.out + "/" + f)


if __name__ == "__main__":
    main()
