# Kernel next-hop objects (`netlink nexthop objects`), without GoBGP: static
# routes of every kind a kernel protocol exports (single next hops, 4- and
# 16-path ECMP with and without weights, device routes, blackhole and
# unreachable) in kernel table 100 of a namespace (bt-nhobj), patched bird
# writing them through objects against stock bird writing them the old way.
# Tables are compared as forwarding (tests/tools/kfib.py resolves a route's
# nhid to the object's next hops), after: the install; bird killed and
# started again (the routes of the earlier run rewritten, its objects
# deleted); a reconfiguration that withdraws and moves routes; `birdc
# configure` turning the option off and on again with the table installed
# (polled meanwhile: never a route missing); an object deleted, and one
# changed, behind bird's back; the link losing carrier for a while; a restart with the option off after a crash
# with it on. Objects of other protocols, and of other ids, are never
# touched; unused objects of bird's are deleted; a bad value is rejected
# with file:line. All of it with the kernel's nexthop_compat_mode on and off.
# lane: side
. "$(dirname "$0")/../lib.sh"
. "$top/tests/e2e/errlog.sh"

[ "$(id -u)" = 0 ] || { echo "krt-nhobj: needs root (network namespaces)"; exit 1; }
NS=bt-nhobj
N=20000
N6=4000
KFIB="python3 $top/tests/tools/kfib.py"
BASE=$((0xb1d00000))

ns_up() {
  ns_veth "$NS" 10.99.0.1/24 fd99::1/64
  ip netns exec "$NS" sysctl -qw net.ipv4.nexthop_compat_mode="${COMPAT:-1}"
  # Somebody else's objects, on a link of their own: one in bird's id range, one outside it
  ip -n "$NS" link add d2 type veth peer name d3
  ip -n "$NS" link set d2 up; ip -n "$NS" link set d3 up
  ip -n "$NS" addr add 10.98.0.1/24 dev d2
  ip -n "$NS" nexthop add id $((BASE + 5)) via 10.98.0.250 dev d2 proto zebra
  ip -n "$NS" nexthop add id 77 via 10.98.0.251 dev d2 proto zebra
}
cleanup_ns() { ip netns del "$NS" 2>/dev/null; }
trap '[ "$nfail" = 0 ] || { echo "--- bird log"; tail -n 30 "$WORK/f.log"; }; cleanup; cleanup_ns' EXIT

mkconf() {  # mkconf FILE A|B OPTION -- B withdraws every third route and moves every fifth
  python3 - "$2" "$N" "$N6" "$3" > "$1" <<'PY'
import sys
v, n, n6, opt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print("log stderr all;\nrouter id 10.99.0.1;\nprotocol device {}")
for f in (4, 6):
    print("protocol kernel k%d { kernel table 100; learn off; scan time 5; %s ipv%d { export all; }; }" % (f, opt, f))
def gw(f, i):
    return ("10.99.0.%d" if f == 4 else "fd99::%x") % (2 + i % 32)
for f, cnt, net in ((4, n, "100.%d.%d.0/24"), (6, n6, "2001:db8:%x:%x::/64")):
    print("protocol static s%d { ipv%d;" % (f, f))
    for i in range(cnt):
        if v == "B" and i % 3 == 0:
            continue
        s = (i + (v == "B" and i % 5 == 1)) % 64
        p = net % (i // 256, i % 256)
        k = i % 8
        if k < 3:
            r = "via %s" % gw(f, s)
        elif k == 3:
            r = " ".join("via %s" % gw(f, s + j * 7) for j in range(4))
        elif k == 4:
            r = " ".join("via %s weight %d" % (gw(f, s + j * 3), 1 + j % 3) for j in range(4))
        elif k == 5:
            r = " ".join("via %s" % gw(f, s + j) for j in range(16))
        elif k == 6:
            r = 'via "d0"'
        else:
            r = "blackhole" if f == 4 else "unreachable"
        print("  route %s %s;" % (p, r))
    print("}")
PY
}
ON="netlink nexthop objects on;"
mkconf "$WORK/A.stock" A ""; mkconf "$WORK/B.stock" B ""
mkconf "$WORK/A.on" A "$ON"; mkconf "$WORK/B.on" B "$ON"
mkconf "$WORK/A.off" A "netlink nexthop objects off;"; mkconf "$WORK/B.off" B "netlink nexthop objects off;"

fib() { $KFIB "$NS" 100; }
count() { ip -n "$NS" route show table 100 | grep -vc "^[[:space:]]"; ip -n "$NS" -6 route show table 100 | grep -vc "^[[:space:]]"; }
routes() { count | awk '{n += $1} END {print n}'; }
C() { "$CUR/birdc" -s "$WORK/f.ctl" "$@"; }
# settle EXPECTED -- until the forwarding view equals the file (scans repair within 5 s)
settle() { for _ in $(seq 100); do fib > "$WORK/now" 2>/dev/null && cmp -s "$WORK/now" "$1" && return 0; sleep 0.3; done; diff "$1" "$WORK/now" | head -5; return 1; }
# bird's objects in the kernel, and those routes name (directly or as members of a group)
ours() { ip -n "$NS" -j nexthop show | python3 -c "
import json, sys
print(sum(1 for o in json.load(sys.stdin) if o.get('protocol') == 'bird'))"; }
nhroutes() { ip -n "$NS" route show table 100 | grep -c nhid; }
# none -- until bird has no object in the kernel and no route names one
none() { for _ in $(seq 40); do [ "$(ours)" = 0 ] && [ "$(nhroutes)" = 0 ] && return 0; sleep 0.5; done; return 1; }
unused() { { ip -n "$NS" -j nexthop show; echo; ip -n "$NS" -j route show table 100; echo; ip -n "$NS" -6 -j route show table 100; } | python3 -c "
import json, sys
objs, r4, r6 = [json.loads(l) for l in sys.stdin.read().split('\n') if l.strip()]
used = set()
def use(i):
    used.add(i)
    for m in next((o for o in objs if o['id'] == i), {}).get('group', []):
        use(m['id'])
for r in r4 + r6:
    if 'nhid' in r: use(r['nhid'])
print(sum(1 for o in objs if o.get('protocol') == 'bird' and o['id'] not in used))"; }
# swept -- until bird's unused objects are gone (kept 5 s after their last route)
swept() { for _ in $(seq 40); do [ "$(unused)" = 0 ] && return 0; sleep 0.5; done; return 1; }
foreign() { ip -n "$NS" nexthop show id $((BASE + 5)) | grep -q "10.98.0.250" && ip -n "$NS" nexthop show id 77 | grep -q "10.98.0.251"; }

run_bird() {  # run_bird BINDIR CONF
  CUR=$1
  cp "$2" "$WORK/f.conf"
  [ -f "$WORK/f.log" ] && cat "$WORK/f.log" >> "$WORK/f.log.old"
  : > "$WORK/f.log"
  ip netns exec "$NS" "$CUR/bird" -f -c "$WORK/f.conf" -s "$WORK/f.ctl" >> "$WORK/f.log" 2>&1 &
  PID=$!
  BIRD_PIDS+=($PID)
  for _ in $(seq 100); do C show status >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}
gone() { for _ in $(seq 300); do kill -0 "$PID" 2>/dev/null || return 0; sleep 0.1; done; return 1; }
configure() { cp "$1" "$WORK/f.conf"; C configure > "$WORK/configure.out" 2>&1; grep -q "Reconfigured" "$WORK/configure.out"; }

# Stock: the forwarding to expect
ns_up
run_bird "$STOCK_BIN" "$WORK/A.stock" || { bad "stock bird starts"; finish; }
for _ in $(seq 100); do [ "$(routes)" -ge "$((N + N6))" ] && break; sleep 0.2; done
sleep 6; fib > "$WORK/fib.A"
configure "$WORK/B.stock"; sleep 6; fib > "$WORK/fib.B"
C down >/dev/null; gone
check "stock: table A has $N + $N6 routes" [ "$(wc -l < "$WORK/fib.A")" = "$((N + N6))" ]
check "stock: table B differs from A" [ "$(cat "$WORK/fib.A")" != "$(cat "$WORK/fib.B")" ]
check "stock: table A has 16-path routes" grep -qE "( [^ ]+@d0/w1){16}$" "$WORK/fib.A"

# Patched, objects on; with the kernel's nexthop_compat_mode on (routes are
# dumped with their object's next hops too) and off (with the object's id alone)
phase() {
COMPAT=$1
ns_up
run_bird "$BIN" "$WORK/A.on" || { bad "patched bird starts"; cat "$WORK/f.log"; finish; }
check "[compat $COMPAT] install: forwarding as stock's" settle "$WORK/fib.A"
nh=$(ip -n "$NS" route show table 100 | grep -c "nhid"); nh6=$(ip -n "$NS" -6 route show table 100 | grep -c "nhid")
check "[compat $COMPAT] install: every unicast route names an object ($nh IPv4, $nh6 IPv6)" [ "$nh" = $((N * 7 / 8)) ] && [ "$nh6" = $((N6 * 7 / 8)) ]
check "[compat $COMPAT] install: blackhole and unreachable routes written the old way" [ "$(ip -n "$NS" route show table 100 | grep -c "^blackhole")" = $((N / 8)) ]
C show protocols all k4 > "$WORK/info"; grep -E "Next-hop objects|Objects:" "$WORK/info"
check "[compat $COMPAT] show protocols all counts the routes via objects" grep -q "$((N * 7 / 8)) routes via objects" "$WORK/info"
echo "    bird's objects in the kernel: $(ours)"
check "[compat $COMPAT] install: bird's objects are all in use" [ "$(unused)" = 0 ]
check "[compat $COMPAT] install: the other objects untouched" foreign

kill -9 "$PID"; gone
run_bird "$BIN" "$WORK/A.on" || bad "patched bird starts after a crash"
check "[compat $COMPAT] after a crash and a start: forwarding as stock's" settle "$WORK/fib.A"
check "[compat $COMPAT] after a crash and a start: the earlier run's objects deleted" swept
grep -E "next-hop objects of an earlier run" "$WORK/f.log" | sed 's/^/    /'

configure "$WORK/B.on" || bad "configure B"
check "[compat $COMPAT] reconfigured (routes withdrawn and moved): forwarding as stock's" settle "$WORK/fib.B"
check "[compat $COMPAT] reconfigured: unused objects deleted" swept

# Option off and on with the table installed: poll the route count meanwhile
toggle() {  # toggle CONF -- configure, polling the table until it is rewritten; prints the least count seen
  local least=999999 c
  cp "$1" "$WORK/f.conf"; C configure > "$WORK/configure.out" 2>&1 &
  for _ in $(seq 60); do c=$(routes); [ "$c" -lt "$least" ] && least=$c; sleep 0.05; done
  wait; echo "$least"
}
want=$(wc -l < "$WORK/fib.B")
least=$(toggle "$WORK/B.off")
check "[compat $COMPAT] option off: no route missing meanwhile (least $least of $want)" [ "$least" -ge "$want" ]
check "[compat $COMPAT] option off: forwarding as stock's" settle "$WORK/fib.B"
check "[compat $COMPAT] option off: routes rewritten the old way, bird's objects deleted" none
least=$(toggle "$WORK/B.on")
check "[compat $COMPAT] option on again: no route missing meanwhile (least $least of $want)" [ "$least" -ge "$want" ]
check "[compat $COMPAT] option on again: forwarding as stock's" settle "$WORK/fib.B"
check "[compat $COMPAT] option on again: routes name objects" [ "$(ip -n "$NS" route show table 100 | grep -c nhid)" -gt 0 ]

# Behind bird's back: an object deleted (the kernel drops its routes), one changed
id=$(ip -n "$NS" route show table 100 | sed -nE 's/^100\.0\.1\.0\/24 nhid ([0-9]+) .*/\1/p')
gone_routes=$(ip -n "$NS" route show table 100 | grep -c "nhid $id ")
ip -n "$NS" nexthop del id "$id"
check "[compat $COMPAT] object deleted behind bird's back ($gone_routes routes went with it): forwarding restored" settle "$WORK/fib.B"
id=$(ip -n "$NS" route show table 100 | sed -nE 's/^100\.0\.2\.0\/24 nhid ([0-9]+) .*/\1/p')
ip -n "$NS" nexthop replace id "$id" via 10.99.0.200 dev d0 proto bird
check "[compat $COMPAT] object changed behind bird's back: forwarding restored" settle "$WORK/fib.B"
grep -E "behind our back" "$WORK/f.log" | head -2 | sed 's/^/    /'

# The link loses carrier: the kernel drops the objects through it, and the
# routes naming them, telling nobody (stock's routes stay, marked linkdown)
ip -n "$NS" link set d1 down; sleep 2; ip -n "$NS" link set d1 up
check "[compat $COMPAT] carrier lost and back: forwarding restored" settle "$WORK/fib.B"
grep -E "Interface .* is back" "$WORK/f.log" | head -1 | sed 's/^/    /'

# Bad input: file:line, the running configuration kept
sed 's/netlink nexthop objects on;/netlink nexthop objects maybe;/' "$WORK/B.on" > "$WORK/f.conf"
out=$(C configure 2>&1)
check "[compat $COMPAT] 'netlink nexthop objects maybe' rejected with file:line" grep -qE "f.conf:[0-9]+:" <<< "$out"
cp "$WORK/B.on" "$WORK/f.conf"
check "[compat $COMPAT] ... the running configuration kept" settle "$WORK/fib.B"

# A crash with objects on, a start with them off
kill -9 "$PID"; gone
run_bird "$BIN" "$WORK/B.off" || bad "patched bird starts with objects off"
check "[compat $COMPAT] crash, then objects off: forwarding as stock's" settle "$WORK/fib.B"
check "[compat $COMPAT] crash, then objects off: routes rewritten the old way, bird's objects deleted" none
check "[compat $COMPAT] the other objects untouched throughout" foreign
C down >/dev/null; gone
check "[compat $COMPAT] down: table flushed" [ "$(routes)" = 0 ]
check "[compat $COMPAT] no crash" bash -c "! grep -qiE 'segmentation|assertion|bug|crash' $WORK/f.log $WORK/f.log.old"
grep -h "<ERR>\|<WARN>\|<BUG>" "$WORK/f.log.old" "$WORK/f.log" | sed -E 's/^[0-9-]+ [0-9:.]+ //' | sort | uniq -c | sort -rn | head -8
}
phase 1
phase 0
finish
