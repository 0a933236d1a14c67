#!/usr/bin/env python3
# kfib.py NS TABLE -- the forwarding view of a kernel table: one line per
# route (family, prefix, type, metric, protocol, scope, preferred source) with
# its next hops sorted, a route naming a next-hop object (nhid) resolved to
# the object's next hops (a group to its members' with their weights), so
# that a table written through objects and one written the old way compare
# equal when they forward alike. Exits 1 if a route names an object the
# kernel does not have.
import json, subprocess, sys

ns, table = sys.argv[1], sys.argv[2]

def ipj(*args):
    out = subprocess.run(["ip", "-n", ns, "-d", "-j"] + list(args),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out) if out.strip() else []

objs = {o["id"]: o for o in ipj("nexthop", "show")}

def hop(gw, dev, weight, flags):
    return "%s@%s/w%d%s" % (gw or "-", dev or "-", weight, "/onlink" if "onlink" in (flags or []) else "")

def resolve(nhid):
    o = objs.get(nhid)
    if o is None:
        raise KeyError(nhid)
    if "group" in o:
        hops = []
        for m in o["group"]:
            mo = objs.get(m["id"])
            if mo is None:
                raise KeyError(m["id"])
            hops.append(hop(mo.get("gateway"), mo.get("dev"), m.get("weight", 1), mo.get("flags")))
        return hops
    return [hop(o.get("gateway"), o.get("dev"), 1, o.get("flags"))]

bad = 0
lines = []
for fam in ("-4", "-6"):
    for r in ipj(fam, "route", "show", "table", table):
        if "nhid" in r:
            try:
                hops = resolve(r["nhid"])
            except KeyError as e:
                print("route %s names missing object %s" % (r.get("dst"), e), file=sys.stderr)
                bad = 1
                continue
        elif "nexthops" in r:
            hops = [hop(h.get("gateway"), h.get("dev"), h.get("weight", 1), h.get("flags")) for h in r["nexthops"]]
        elif r.get("type", "unicast") == "unicast":
            hops = [hop(r.get("gateway"), r.get("dev"), 1, r.get("flags"))]
        else:
            hops = []
        if len(hops) == 1:   # a single path's weight means nothing
            hops = [h.replace("/w%s" % h.split("/w")[1].split("/")[0], "/w1") for h in hops]
        lines.append("%s %s %s metric %s proto %s scope %s src %s %s" % (
            fam, r.get("dst"), r.get("type", "unicast"), r.get("metric", 0), r.get("protocol", "-"),
            r.get("scope", "-"), r.get("prefsrc", "-"), " ".join(sorted(hops))))
print("\n".join(sorted(lines)))
sys.exit(bad)
