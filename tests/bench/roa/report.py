#!/usr/bin/env python3
# Summary of tests/bench/roa-import: medians per build and variant, ratios
# measured in the same run, and the verdict checks (stock = bloombird, every
# run and variant alike, import-time marks = show-time roa_check(), and both
# = the independent computation of mkroa.py). Prints the summary, writes it
# as markdown, exits 1 on any verdict mismatch or missing run.
# Part of bloombird. Can be freely distributed and used under the terms of
# the GNU GPL, version 2 or any later version.
import argparse
import os
import statistics
import time

BUILDS = ("stock", "bloombird")
VNAME = {"none": "no check (baseline)", "off": "roa_check, trie off", "on": "roa_check, trie on",
         "lpm": "roa_check, lpm engine simd (stock: trie off)"}


def load_rows(path, want):
    rows = []
    with open(path) as f:
        for line in f:
            r = dict(kv.split("=", 1) for kv in line.split())
            for k in ("load", "up4", "imp4", "up6", "imp6"):
                r[k] = int(r[k]) / 1000
            for k in ("cpu4", "cpu6", "walkplain4", "walkroa4", "walkplain6", "walkroa6", "foreign", "niced"):
                r[k] = float(r[k])
            r["run"] = int(r["run"])
            for k in ("instr4", "instr6"):   # ROA_CALLGRIND runs: instructions in bgp_rx()
                if k in r:
                    r[k] = int(r[k])
            r["rss"] = int(r["rss"]) / 1024
            r["imp"] = r["imp4"] + r["imp6"]
            r["cpu"] = r["cpu4"] + r["cpu6"]
            for af in ("4", "6"):     # ns per roa_check at show time, over a plain walk
                r["ns" + af] = (r["walkroa" + af] - r["walkplain" + af]) * 1e9 / want["ipv" + af]
            rows.append(r)
    return rows


def main():
    ap = argparse.ArgumentParser()
    for o in ("--results", "--data", "--variants", "--runs", "--out", "--cpu"):
        ap.add_argument(o, required=True)
    a = ap.parse_args()
    variants = a.variants.split()

    expected, want = {}, {}
    with open(a.data + "/expected.txt") as f:
        for line in f:
            af, v, i, u = line.split()
            expected[af] = "%s/%s/%s" % (v, i, u)
            want[af] = int(v) + int(i) + int(u)
    provenance = open(a.data + "/provenance.txt").read().rstrip("\n")
    rows = load_rows(a.results, want) if os.path.exists(a.results) else []

    fails = []
    for v in variants:
        for b in BUILDS:
            n = sum(1 for r in rows if r["variant"] == v and r["build"] == b)
            if n != int(a.runs):
                fails.append("%s %s: %d of %s runs completed" % (b, v, n, a.runs))
    for r in rows:
        tag = "run %d %s %s" % (r["run"], r["build"], r["variant"])
        for af in ("4", "6"):
            m, s = r["mark" + af], r["show" + af]
            if s != expected["ipv" + af]:
                fails.append("%s: IPv%s verdicts %s (show-time roa_check), expected %s (mkroa.py)"
                             % (tag, af, s, expected["ipv" + af]))
            if r["variant"] != "none" and m != s:
                fails.append("%s: IPv%s import-time marks %s differ from show-time roa_check %s" % (tag, af, m, s))
    for v in variants:
        seen = {}
        for r in rows:
            if r["variant"] == v:
                seen.setdefault("IPv4 %s, IPv6 %s" % (r["show4"], r["show6"]), set()).add(r["build"])
        if len(seen) > 1:
            fails.append("variant %s: stock and bloombird (or runs) give different verdict counts: %s" %
                         (v, "; ".join("%s by %s" % (k, ",".join(sorted(b))) for k, b in seen.items())))

    def med(v, b, key):
        xs = [r[key] for r in rows if r["variant"] == v and r["build"] == b and key in r]
        return statistics.median(xs) if xs else None

    def rng(v, b, key):
        xs = [r[key] for r in rows if r["variant"] == v and r["build"] == b]
        return "%.2f-%.2f" % (min(xs), max(xs)) if xs else "-"

    def ratio(v, key):
        s, p = med(v, "stock", key), med(v, "bloombird", key)
        return "%.2fx" % (s / p) if s and p and p > 0 else "-"

    out = []
    out.append("# ROA validation at import: stock BIRD vs bloombird")
    out.append("")
    out.append("`tests/bench/roa-import %s` on %s, %s. GoBGP offers the full IPv4 table (AS3856 2015, %d "
               "routes, real AS paths) and the tier-1 IPv6 table (%d); bird (pinned to one CPU, started afresh "
               "for every run) imports IPv4, then IPv6, through an import filter that marks roa_check()'s "
               "verdict. Medians of %s alternated runs per build and variant. Wall time and /proc CPU time "
               "(utime + stime, 10 ms ticks); the VM exposes no hardware counters. Ratios are stock / "
               "bloombird (above 1: bloombird cheaper)."
               % (a.runs, time.strftime("%Y-%m-%d %H:%M"), a.cpu, want["ipv4"], want["ipv6"], a.runs))
    out.append("")
    out.append("| ROA tables, import filter | build | IPv4 import s | IPv4 CPU s | IPv6 import s | IPv6 CPU s "
               "| RSS MiB | roa_check ns (show) v4 / v6 | IPv4 valid/invalid/unknown | IPv6 valid/invalid/unknown |")
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    summary = []
    for v in variants:
        for b in BUILDS:
            vr = [r for r in rows if r["variant"] == v and r["build"] == b]
            if not vr:
                continue
            cells = (VNAME[v], b, med(v, b, "imp4"), med(v, b, "cpu4"), med(v, b, "imp6"), med(v, b, "cpu6"),
                     med(v, b, "rss"), med(v, b, "ns4"), med(v, b, "ns6"), vr[0]["show4"], vr[0]["show6"])
            summary.append(cells)
            out.append("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f | %.0f / %.0f | %s | %s |" % cells)
    out.append("")
    out.append("| ROA tables, import filter | IPv4 CPU | IPv6 CPU | IPv4 import | IPv6 import | roa_check (show) v4 / v6 "
               "| ROA check CPU in the import, s (variant - baseline), stock -> bloombird, v4 / v6 |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    ratios = []
    for v in variants:
        extra = "-"
        if v != "none" and "none" in variants:
            d = {}
            for b in BUILDS:
                for af in ("4", "6"):
                    x, base = med(v, b, "cpu" + af), med("none", b, "cpu" + af)
                    d[b + af] = x - base if x is not None and base is not None else float("nan")
            extra = "%.2f -> %.2f / %.2f -> %.2f" % (d["stock4"], d["bloombird4"], d["stock6"], d["bloombird6"])
        cells = (VNAME[v], ratio(v, "cpu4"), ratio(v, "cpu6"), ratio(v, "imp4"), ratio(v, "imp6"),
                 "%s / %s" % (ratio(v, "ns4"), ratio(v, "ns6")), extra)
        ratios.append(cells)
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % cells)
    out.append("")
    out.append("`roa_check ns (show)`: bird's CPU for one `show route table master4|6 where roa_check(...) = ROA_x "
               "count` walk minus one walk testing the import mark (`preference = 10x`; least of three walks each), "
               "per route: the cost of one roa_check() in a filter at full table, CPU-bound and not paced by "
               "anything. The import figures are paced by GoBGP (bird is mostly idle waiting for it), so their "
               "wall time says more about GoBGP than about bird, and bird's CPU for the import varies with how "
               "the updates arrive. CPU times are from /proc/PID/task/*/schedstat (ns).")
    counted = [r for r in rows if "instr4" in r]
    if counted:
        out.append("")
        out.append("Counted (`ROA_CALLGRIND=1`: bird under callgrind, every instruction executed inside "
                   "`bgp_rx()`: decoding the UPDATEs, the import filter and its roa_check(), rte_update(), the "
                   "tables; exact, the same in every run of a build and variant). Per route: the family's count "
                   "over its routes (IPv4 %d, IPv6 %d). `ROA check per route`: the variant's count minus the "
                   "baseline's (same build), the cost of the roa_check() calls in the import. Ratios are stock / "
                   "bloombird (above 1: bloombird executes fewer)." % (want["ipv4"], want["ipv6"]))
        out.append("")
        out.append("| ROA tables, import filter | build | IPv4 instructions (10^6) | per route | IPv6 instructions "
                   "(10^6) | per route | ROA check per route v4 / v6 | runs (10^6, v4 / v6) |")
        out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for v in variants:
            for b in BUILDS:
                vr = [r for r in counted if r["variant"] == v and r["build"] == b]
                if not vr:
                    continue
                i4, i6 = med(v, b, "instr4"), med(v, b, "instr6")
                roa = "-"
                if v != "none" and med("none", b, "instr4"):
                    roa = "%.0f / %.0f" % ((i4 - med("none", b, "instr4")) / want["ipv4"],
                                           (i6 - med("none", b, "instr6")) / want["ipv6"])
                out.append("| %s | %s | %.1f | %.0f | %.1f | %.0f | %s | %s |" % (
                    VNAME[v], b, i4 / 1e6, i4 / want["ipv4"], i6 / 1e6, i6 / want["ipv6"], roa,
                    ", ".join("%.1f / %.1f" % (r["instr4"] / 1e6, r["instr6"] / 1e6) for r in vr)))
        out.append("")
        out.append("| ROA tables, import filter | IPv4 instructions, stock / bloombird | IPv6 | both families |")
        out.append("| --- | ---: | ---: | ---: |")
        for v in variants:
            s4, p4, s6, p6 = (med(v, "stock", "instr4"), med(v, "bloombird", "instr4"),
                              med(v, "stock", "instr6"), med(v, "bloombird", "instr6"))
            if None in (s4, p4, s6, p6):
                continue
            out.append("| %s | %.3fx | %.3fx | %.3fx |" % (VNAME[v], s4 / p4, s6 / p6, (s4 + s6) / (p4 + p6)))
    rep = a.results.rsplit("/", 1)[0] + "/repeated.txt"
    if os.path.exists(rep):
        lines = open(rep).read().split("\n")
        lines = [l for l in lines if l]
        out.append("")
        out.append("Repeated once because other processes ran on bird's CPU (first attempt discarded): "
                   + "; ".join(lines) + ".")
    out.append("")
    out.append("Verdicts: %s." % ("identical in every run, build and variant; import-time marks = show-time "
                                  "roa_check() = the independent computation of mkroa.py"
                                  if not fails else "**FAIL**, see below"))
    for f in fails:
        out.append("- FAIL " + f)
    out.append("")
    out.append("## ROA data (which ROAs are real, which derived)")
    out.append("")
    out.append("```")
    out.append(provenance)
    out.append("```")
    out.append("")
    out.append("## Runs")
    out.append("")
    out.append("| run | build | variant | ROA load s | IPv4 import s | IPv4 CPU s | IPv6 import s | IPv6 CPU s "
               "| RSS MiB | walk plain / roa_check v4, s | v6, s | on bird's CPU: other / niced processes, CPU s |")
    out.append("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        out.append("| %d | %s | %s | %.2f | %.2f | %.3f | %.2f | %.3f | %.0f | %.3f / %.3f | %.3f / %.3f | %.2f / %.2f |" % (
            r["run"], r["build"], r["variant"], r["load"], r["imp4"], r["cpu4"], r["imp6"], r["cpu6"], r["rss"],
            r["walkplain4"], r["walkroa4"], r["walkplain6"], r["walkroa6"], r["foreign"], r["niced"]))
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out + ".tmp", "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(a.out + ".tmp", a.out)

    print("== ROA validation: medians of %s runs (also in %s)" % (a.runs, a.out))
    print("%-21s %-9s %8s %7s %8s %7s %7s %13s  %-26s %s" % (
        "variant", "build", "v4 imp s", "v4 CPU", "v6 imp s", "v6 CPU", "RSS MiB", "ns/check v4/6",
        "IPv4 valid/invalid/unknown", "IPv6 valid/invalid/unknown"))
    for c in summary:
        print("%-21s %-9s %8.2f %7.2f %8.2f %7.2f %7.0f %6.0f/%-6.0f  %-26s %s" % c)
    print("ratios stock/bloombird: %-21s %7s %7s %8s %8s %15s  %s" % (
        "", "v4 CPU", "v6 CPU", "v4 imp", "v6 imp", "ns/check v4/6", "ROA check CPU s in import, stock -> bloombird v4 / v6"))
    for c in ratios:
        print("ratio %-39s %7s %7s %8s %8s %15s  %s" % c)
    for v in variants:
        for b in BUILDS:
            print("range %-21s %-9s v4 CPU %s  v6 CPU %s  v4 import %s  v6 import %s  ns/check v4 %s v6 %s  "
                  "other CPU %s niced %s" % (VNAME[v], b, rng(v, b, "cpu4"), rng(v, b, "cpu6"), rng(v, b, "imp4"),
                                    rng(v, b, "imp6"), rng(v, b, "ns4"), rng(v, b, "ns6"), rng(v, b, "foreign"),
                                    rng(v, b, "niced")))
    for v in variants:
        for b in BUILDS:
            i4, i6 = med(v, b, "instr4"), med(v, b, "instr6")
            if i4 is not None and i6 is not None:
                print("instructions in bgp_rx() %-21s %-9s IPv4 %8.1f M (%5.0f per route)  IPv6 %8.1f M (%5.0f per route)" % (
                    VNAME[v], b, i4 / 1e6, i4 / want["ipv4"], i6 / 1e6, i6 / want["ipv6"]))
    for f in fails:
        print("FAIL " + f)
    if not fails:
        print("ok   verdict counts identical: stock = bloombird in every run and variant, import marks = "
              "show-time roa_check() = mkroa.py (IPv4 %s, IPv6 %s)" % (expected["ipv4"], expected["ipv6"]))
    return 1 if fails else 0


if __name__ == "__main__":
    raise SystemExit(main())
