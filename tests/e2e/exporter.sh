#!/bin/bash
# End to end for the LPM exporter (`protocol lpm', proto/lpm) and its
# shared-memory reader (tools/lpm-reader), in the rig of e2e.sh: patched and
# stock bird side by side, each in its own namespace with identical
# addressing, each fed the same table by its own GoBGP and 300 OSPF external
# routes by its own FRR ospfd. The patched bird exports its best routes to
# kernel table 100 (looked up first by an ip rule in its namespace) and to
# `protocol lpm' with a shared-memory export. For some 3,600 addresses
# (inside table prefixes, inside prefixes the trace changes, inside OSPF
# routes, random, unrouted), after convergence, after the RIS trace replay,
# after a mass withdrawal and after the re-announcement, after session and
# neighbour flaps, and after a bird restart, four answers must be equal:
#   - the reader's (bird-lpm-reader lookup, from shared memory),
#   - the engine's over birdc (`show lpm lookup'),
#   - the kernel's (`ip route get' in the patched bird's namespace),
#   - stock bird's best route (`show route for' on the stock side).
# The reader watches while the trace is replayed (lookups per second and the
# time updates took to reach it), stays attached across the bird restart,
# and the protocol's feed of the full table (a protocol restart) is timed.
# Measurements are printed as METRIC lines, not asserted.
#
#   exporter.sh [ci|full]
#     ci:   RouteViews 2008 IPv4 (271k) + tier-1 IPv6 (160k)
#     full: tier-1 IPv4 (902k) + tier-1 IPv6 (160k)
set -uo pipefail
. "$(dirname "$0")/rig.sh"
. "$(dirname "$0")/errlog.sh"

SIZE=${1:-ci}
RUN=$RIG_TOP/build/e2e-exporter
BIN=$RIG_TOP/build/bin
SBIN=$RIG_TOP/build/stock/bin
READER=$BIN/bird-lpm-reader
SHM=bb-e2e-fwd
case "$SIZE" in
  ci)   V4=$RIG_DATA/ipv4/routeviews-2008.v4.origin.txt.xz ;;
  full) V4=$RIG_DATA/ipv4/tier1-2023.v4.txt.xz ;;
  *) echo "usage: $0 [ci|full]" >&2; exit 2 ;;
esac
V6=$RIG_DATA/ipv6/tier1-2023.v6.txt.xz
TRACE=$RIG_DATA/updates/ris-updates-20190101-0000.bgpdump-m.txt.gz
OSPF_ROUTES=300

npass=0 nfail=0
ok()  { npass=$((npass + 1)); echo "ok   $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
metric() { printf 'METRIC %-48s %s\n' "$1" "$2"; }

cleanup() { rig_teardown "$RUN"; rm -f /dev/shm/$SHM /dev/shm/$SHM.*; }
trap cleanup EXIT
trap 'exit 1' INT TERM

[ "$(id -u)" = 0 ] || { echo "exporter e2e: needs root (network namespaces)" >&2; exit 1; }
for f in "$V4" "$V6" "$TRACE" "$READER"; do [ -e "$f" ] || { echo "exporter e2e: missing $f" >&2; exit 1; }; done
rm -rf "$RUN"; mkdir -p "$RUN"
rig_teardown "$RUN"
rm -f /dev/shm/$SHM /dev/shm/$SHM.*
rig_build_feeder || exit 1
cpu=$(grep -o -w 'avx512bw\|avx2' /proc/cpuinfo | sort -u | sed 's/avx512bw/avx512/' | tr '\n' ' ')
echo "CPU variants here: scalar $cpu (bird and the reader use the best: variant auto)"

# ------------------------------------------------------------------ the rig
side_up() {  # side_up X   (p: patched, s: stock)
  local x=$1
  rig_ns "bb-lx-feed-$x" "bb-lx-dut-$x" "bb-lx-ospf-$x"
  rig_link "bb-lx-feed-$x" bb-down 10.255.0.1/30 fdbb::1/64 "bb-lx-dut-$x" bb-up 10.255.0.2/30 fdbb::2/64
  rig_link "bb-lx-ospf-$x" bb-core 10.255.3.1/30 fdbb:3::1/64 "bb-lx-dut-$x" bb-ospf 10.255.3.2/30 fdbb:3::2/64
  for i in $(seq 0 $((OSPF_ROUTES - 1))); do
    echo "addr add 172.$((20 + i / 256)).$((i % 256)).1/24 dev lo"
  done | ip -n "bb-lx-ospf-$x" -batch -
  # The kernel's answer is table 100's (bird's), then main (the links only)
  ns "bb-lx-dut-$x" ip -4 rule add pref 100 lookup 100
  ns "bb-lx-dut-$x" ip -6 rule add pref 100 lookup 100
  mkdir -p "$RUN/$x"
  rig_gobgpd "bb-lx-feed-$x" "$RUN/$x" 65001 10.255.0.1 10.255.0.2 65002 fdbb::2 65002
}

frr_up() {  # frr_up X -- zebra + ospfd as user frr, sockets in the test dir
  local x=$1 d=$RUN/$x/frr
  mkdir -p "$d"
  printf 'hostname lx-%s\n' "$x" > "$d/zebra.conf"
  cat > "$d/ospfd.conf" <<EOF
hostname lx-$x
interface bb-core
 ip ospf network point-to-point
 ip ospf hello-interval 1
 ip ospf dead-interval 4
router ospf
 ospf router-id 10.255.3.1
 network 10.255.3.0/30 area 0
 redistribute connected
EOF
  chown -R frr:frr "$d"
  for dmn in zebra ospfd; do
    ns "bb-lx-ospf-$x" /usr/lib/frr/$dmn -d -u frr -g frr -f "$d/$dmn.conf" -i "$d/$dmn.pid" \
      -z "$d/zserv.api" --vty_socket "$d" -A 127.0.0.1 -P 0 --log "file:$d/$dmn.log" || return 1
    for _ in $(seq 50); do [ -s "$d/$dmn.pid" ] && break; sleep 0.1; done
    cp "$d/$dmn.pid" "$RUN/$x/frr-$dmn.pid"
  done
}

bird_conf() {  # bird_conf X
  cat <<'EOF'
router id 10.255.0.2;
protocol device { scan time 10; }
protocol direct { ipv4; ipv6; interface "bb-*"; }
protocol kernel kernel4 { kernel table 100; learn off; scan time 20; ipv4 { export all; }; }
protocol kernel kernel6 { kernel table 100; learn off; scan time 20; ipv6 { export all; }; }
template bgp feeder { local as 65002; hold time 240; connect retry time 1; }
protocol bgp feeder4 from feeder { neighbor 10.255.0.1 as 65001; ipv4 { import all; export none; }; }
protocol bgp feeder6 from feeder { neighbor fdbb::1 as 65001; ipv6 { import all; export none; }; }
protocol ospf v2 ospf4 {
  ipv4 { import all; export none; };
  area 0 { interface "bb-ospf" { type ptp; hello 1; dead 4; }; };
}
EOF
  [ "$1" = p ] && cat <<EOF
protocol lpm fwd {
  ipv4 { table master4; export all; };
  ipv6 { table master6; export all; };
  engine simd;
  variant auto;
  shm "$SHM";
}
EOF
}

bin_of() { [ "$1" = p ] && echo "$BIN" || echo "$SBIN"; }
cli() { local x=$1; shift; "$(bin_of "$x")/birdc" -s "$RUN/$x/bird.ctl" "$@"; }
all_bgp() { echo $(( $(rig_routes "$(bin_of "$1")" "$RUN/$1/bird.ctl" protocol feeder4) + $(rig_routes "$(bin_of "$1")" "$RUN/$1/bird.ctl" protocol feeder6) )); }
ospf_routes() { rig_routes "$(bin_of "$1")" "$RUN/$1/bird.ctl" protocol ospf4; }
want_routes() { echo $(( $(rig_rib_count "bb-lx-feed-$1" ipv4) + $(rig_rib_count "bb-lx-feed-$1" ipv6) )); }

# wait_converged X TIMEOUT -- BGP count = GoBGP's, OSPF has its routes, stable 3 s
wait_converged() {
  local x=$1 t0=$SECONDS want last=-1 stable=0 n=0 o=0
  want=$(want_routes "$x")
  while [ $((SECONDS - t0)) -lt "$2" ]; do
    n=$(all_bgp "$x"); o=$(ospf_routes "$x")
    if [ "$n" = "$want" ] && [ "$o" -ge "$OSPF_ROUTES" ] && [ "$n" = "$last" ]; then
      stable=$((stable + 1)); [ $stable -ge 3 ] && return 0
    else
      stable=0
    fi
    last=$n
    sleep 1
  done
  echo "  $x: BGP routes $n of $want, OSPF $o" >&2
  return 1
}
wait_both() { local r=0; for x in p s; do wait_converged "$x" "${1:-600}" || r=1; done; return $r; }

# The exporter holds what the table holds: its prefix counts = bird's route counts
lpm_prefixes() { cli p show protocols all fwd | awk '/^  IPv[46]: / {n += $2} END {print n + 0}'; }
table_nets() { cli p show route count | sed -nE 's/.* for ([0-9]+) networks in table .*/\1/p' | awk '{n += $1} END {print n + 0}'; }
wait_exporter() {
  for _ in $(seq 300); do
    [ "$(lpm_prefixes)" = "$(table_nets)" ] && [ "$(lpm_prefixes)" -gt 0 ] && return 0
    sleep 0.2
  done
  echo "  exporter: $(lpm_prefixes) prefixes, table: $(table_nets) networks" >&2
  return 1
}
# The kernel holds what bird exports: table 100's counts stop moving
kernel_count() { ns bb-lx-dut-p ip -4 route show table 100 | wc -l; ns bb-lx-dut-p ip -6 route show table 100 | wc -l; }
wait_kernel() {
  local prev= now
  for _ in $(seq 300); do
    now=$(kernel_count | tr '\n' ' ')
    [ "$now" = "$prev" ] && return 0
    prev=$now
    sleep 1
  done
  return 1
}

# ------------------------------------------------------------------ bring up
echo "== exporter e2e ($SIZE): $(basename "$V4") + $(basename "$V6")"
for x in p s; do side_up "$x" || exit 1; frr_up "$x" || { echo "FRR failed"; cat "$RUN/$x/frr/"*.log; exit 1; }; done

rig_log "feeding both GoBGP instances"
for x in p s; do
  rig_feed "bb-lx-feed-$x" "$V4" -nh4 10.255.0.1 > "$RUN/$x/feed4.out" || { bad "feed IPv4 into $x"; exit 1; }
  rig_feed "bb-lx-feed-$x" "$V6" -nh6 fdbb::1 > "$RUN/$x/feed6.out" || { bad "feed IPv6 into $x"; exit 1; }
done

declare -A CPU
for x in p s; do
  bird_conf "$x" > "$RUN/$x/bird.conf"
  rig_log "starting $x bird"
  rig_bird bird "bb-lx-dut-$x" "$(bin_of "$x")" "$RUN/$x/bird.conf" "$RUN/$x" || exit 1
done
for x in p s; do
  if wait_converged "$x" 900; then
    ok "$x bird converged: $(all_bgp "$x") BGP routes, $(ospf_routes "$x") OSPF routes"
  else
    bad "$x bird converged"
  fi
  CPU[$x]=$(awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$(cat "$RUN/$x/bird.pid")/stat")
done
check "the exporter holds every network of the tables" wait_exporter
wait_kernel
info=$(cli p show protocols all fwd); echo "$info" | sed -n '2,14p'

# ------------------------------------------------------------------ addresses
# Inside table prefixes, inside prefixes the trace touches, inside the OSPF
# routes, uniformly random (IPv4 without 0/8, 10/8, 127/8, 224/3; IPv6 in
# 2000::/3), unrouted (240/4, fdee::/16); none in the rig's own links.
zcat "$TRACE" | awk -F'|' '$3 == "A" { printf "A\t%s\t\t%s\n", $6, $7 } $3 == "W" { printf "W\t%s\n", $6 }' > "$RUN/trace.ops"
python3 - "$V4" "$V6" "$RUN/trace.ops" "$OSPF_ROUTES" > "$RUN/addrs" <<'EOF'
import ipaddress, lzma, random, sys
r = random.Random(20261123)
def load(f):
    with lzma.open(f, "rt") as fh:
        return [l.split("\t")[0].strip() for l in fh if "/" in l]
def inside(p):
    net = ipaddress.ip_network(p, strict=False)
    return net[r.randrange(net.num_addresses)] if net.num_addresses > 1 else net[0]
out = []
for f, n in ((sys.argv[1], 1200), (sys.argv[2], 600)):
    out += [inside(p) for p in r.sample(load(f), n)]
trace = sorted({l.split("\t")[1].strip() for l in open(sys.argv[3]) if "/" in l})
out += [inside(p) for p in r.sample(trace, 400)]
out += [ipaddress.IPv4Address("172.%d.%d.%d" % (20 + i // 256, i % 256, r.randrange(1, 255)))
        for i in r.sample(range(int(sys.argv[4])), 100)]
while len(out) < 2900:
    a = ipaddress.IPv4Address(r.getrandbits(32))
    if a.packed[0] not in (0, 10, 127) and a.packed[0] < 224:
        out.append(a)
for _ in range(300):
    out.append(ipaddress.IPv6Address((0x2 << 125) | r.getrandbits(125)))
for _ in range(150):
    out.append(ipaddress.IPv4Address((240 << 24) | r.getrandbits(24)))
    out.append(ipaddress.IPv6Address((0xfdee << 112) | r.getrandbits(112)))
for a in out:
    print(a)
EOF
nad=$(wc -l < "$RUN/addrs")
echo "$nad addresses"

# ------------------------------------------------------------------ answers
# Every source prints "ADDR NEXT-HOPS" with the reader's text: "via GW on IF",
# "dev IF", or "-" for no route.
ans_reader() { "$READER" "$SHM" lookup "$RUN/addrs"; }
ans_birdc() {  # show lpm lookup fwd ADDR -> ADDR PREFIX NEXT-HOPS; the prefix dropped
  sed 's/^/show lpm lookup fwd /' "$RUN/addrs" | "$BIN/birdcl" -s "$RUN/p/bird.ctl" 2>&1 |
    sed -nE 's/^(bird> )*//; /^[0-9a-f:.]+ ([0-9a-f:.]+\/[0-9]+|-|\?) /p' | tee "$RUN/birdc.full" |
    sed -E 's/^(\S+) \S+ /\1 /'
}
ans_kernel() {  # ip route get in the patched bird's namespace, one batch
  sed 's/^/route get /' "$RUN/addrs" | ns bb-lx-dut-p stdbuf -o0 -e0 ip -force -batch - 2>&1 | python3 -c '
import sys, re
addrs = [l.strip() for l in open(sys.argv[1])]
failed, got = set(), {}
for line in sys.stdin:
    m = re.match(r"Command failed -:(\d+)", line)
    if m:
        failed.add(int(m.group(1)) - 1); continue
    if not line.strip() or line[0].isspace() or line.startswith(("RTNETLINK", "Error")):
        continue
    f = line.split()
    if f[0] in ("unreachable", "blackhole", "prohibit", "local", "broadcast", "multicast"):
        got[f[1]] = "-" if f[0] == "unreachable" else f[0]; continue
    via = f[f.index("via") + 1] if "via" in f else None
    dev = f[f.index("dev") + 1] if "dev" in f else "?"
    got[f[0]] = ("via %s on %s" % (via, dev)) if via else ("dev %s" % dev)
for i, a in enumerate(addrs):
    print(a, "-" if i in failed else got.get(a, "?"))
' "$RUN/addrs"
}
ans_stock() {  # best route of show route for on the stock side (the first route shown)
  sed 's/^/show route for /' "$RUN/addrs" | "$SBIN/birdcl" -s "$RUN/s/bird.ctl" 2>&1 | python3 -c '
import sys, re
out, cur = [], None
def flush():
    if cur is not None:
        out.append("%s %s" % (cur, kind if kind else ("; ".join(hops) if hops else "-")))
for line in sys.stdin:
    line = line.rstrip("\n")
    m = re.match(r"(?:bird> )+show route for (\S+)", line)
    if m:
        flush(); cur, hops, kind, routes = m.group(1), [], None, 0; continue
    if cur is None: continue
    m = re.match(r"^\S*\s+(unicast|blackhole|unreachable|prohibited) \[", line)
    if m:
        routes += 1
        if routes == 1 and m.group(1) != "unicast":
            kind = m.group(1).replace("prohibited", "prohibit")
        continue
    if routes == 1 and re.match(r"\t(via|dev) ", line):
        hops.append(line.strip())
flush()
print("\n".join(out))
'
}

compare_all() {  # compare_all TAG
  local t=$1 d=$RUN/cmp.$1
  mkdir -p "$d"
  ans_reader > "$d/reader"; ans_birdc > "$d/birdc"; ans_kernel > "$d/kernel"; ans_stock > "$d/stock"
  cp "$RUN/birdc.full" "$d/birdc.full"
  local routed; routed=$(grep -vc ' -$' "$d/reader")
  check "[$t] reader answered all $nad addresses ($routed routed, $(grep -c ' -$' "$d/reader") unrouted)" \
    [ "$(wc -l < "$d/reader")" = "$nad" ]
  check "[$t] show lpm lookup: no mismatch with the exported prefixes" bash -c "! grep -q MISMATCH '$d/birdc.full'"
  for src in birdc kernel stock; do
    check "[$t] reader = $src for $nad addresses" cmp -s "$d/reader" "$d/$src"
    cmp -s "$d/reader" "$d/$src" || diff "$d/$src" "$d/reader" | head -6
  done
  check "[$t] answers include BGP next hops (v4 and v6) and OSPF ones" \
    bash -c "grep -q 'via 10.255.0.1 on bb-up' '$d/reader' && grep -q 'via fdbb::1 on bb-up' '$d/reader' && grep -q 'via 10.255.3.1 on bb-ospf' '$d/reader'"
}

compare_all initial

# ------------------------------------------------------------------ feed of a full table
rig_log "restarting the exporter: the feed of the full table"
cli p restart fwd > /dev/null; sleep 0.5
feeds_done() { [ "$(cli p show protocols all fwd | grep -cE 'IPv[46] feed: +[0-9]+ prefixes in')" = 2 ]; }
for _ in $(seq 300); do sleep 0.2; feeds_done && break; done
check "the exporter's restart refilled it" wait_exporter
info=$(cli p show protocols all fwd)
grep "feed:" <<< "$info"
check "the feed of the full table was one engine build per family" \
  [ "$(grep -cE 'IPv[46] feed: +[1-9][0-9]* prefixes in .*one engine build' <<< "$info")" = 2 ]
FEED4=$(sed -nE 's/.*IPv4 feed: +([0-9]+) prefixes in ([0-9.]+) s, of which one engine build ([0-9.]+) s.*/\1 prefixes: \2 s, build \3 s/p' <<< "$info")
FEED6=$(sed -nE 's/.*IPv6 feed: +([0-9]+) prefixes in ([0-9.]+) s, of which one engine build ([0-9.]+) s.*/\1 prefixes: \2 s, build \3 s/p' <<< "$info")
compare_all refed

# ------------------------------------------------------------------ trace, reader watching
rig_log "replaying $(basename "$TRACE") while the reader looks up without pause"
taskset -c 0 "$READER" "$SHM" watch 900 "$RUN/addrs" > "$RUN/watch.out" 2>&1 &
wpid=$!
sleep 1
gen0=$("$READER" "$SHM" status | sed -nE 's/^generation ([0-9]+).*/\1/p')
for x in p s; do rig_feed "bb-lx-feed-$x" "$RUN/trace.ops" -ops -nh4 10.255.0.1 -nh6 fdbb::1 > "$RUN/$x/trace.out" || bad "trace replay into $x"; done
cat "$RUN/p/trace.out"
wait_both 600 && ok "converged after the trace" || bad "converged after the trace"
kill -TERM "$wpid"; wait "$wpid"
cat "$RUN/watch.out"
gen1=$("$READER" "$SHM" status | sed -nE 's/^generation ([0-9]+).*/\1/p')
check "the trace reached the reader: generation $gen0 -> $gen1" [ "$gen1" -gt "$gen0" ]
check "the reader saw the updates while looking up" grep -qE "update -> reader latency" "$RUN/watch.out"
wait_exporter; wait_kernel
compare_all trace

rig_log "withdrawing every third prefix of the table, then re-announcing them"
xz -dc "$V4" | awk 'NR % 3 == 0' > "$RUN/third4"; xz -dc "$V6" | awk 'NR % 3 == 0' > "$RUN/third6"
for x in p s; do
  rig_feed "bb-lx-feed-$x" "$RUN/third4" -withdraw > /dev/null; rig_feed "bb-lx-feed-$x" "$RUN/third6" -withdraw > /dev/null
done
wait_both 600 && ok "converged after the mass withdrawal" || bad "converged after the mass withdrawal"
wait_exporter; wait_kernel
compare_all withdrawn
for x in p s; do
  rig_feed "bb-lx-feed-$x" "$RUN/third4" -nh4 10.255.0.1 > /dev/null; rig_feed "bb-lx-feed-$x" "$RUN/third6" -nh6 fdbb::1 > /dev/null
done
wait_both 600 && ok "converged after the re-announcement" || bad "converged after the re-announcement"
wait_exporter; wait_kernel
compare_all reannounced

rig_log "flapping the BGP sessions and the OSPF neighbour"
for x in p s; do
  ns "bb-lx-feed-$x" gobgp neighbor 10.255.0.2 reset > /dev/null; ns "bb-lx-feed-$x" gobgp neighbor fdbb::2 reset > /dev/null
  ns "bb-lx-ospf-$x" ip link set bb-core down
done
sleep 6
for x in p s; do ns "bb-lx-ospf-$x" ip link set bb-core up; done
sleep 3
wait_both 900 && ok "converged after the flaps" || bad "converged after the flaps"
wait_exporter; wait_kernel
compare_all flapped

# ------------------------------------------------------------------ bird restart, reader attached
FOLLOW=${LPM_E2E_FOLLOW:-$([ "$SIZE" = full ] && echo 150 || echo 60)}
rig_log "restarting the patched bird under a reader that stays attached ($FOLLOW s)"
"$READER" -w 30 "$SHM" follow "$FOLLOW" "$RUN/addrs" > "$RUN/follow.out" 2>&1 &
fpid=$!
t_follow=$SECONDS
sleep 1
cli p down > /dev/null
for _ in $(seq 100); do kill -0 "$(cat "$RUN/p/bird.pid")" 2>/dev/null || break; sleep 0.1; done
check "bird's exit closed the export (the names are gone)" bash -c "! ls /dev/shm/$SHM /dev/shm/$SHM.ipv4 2>/dev/null"
rig_bird bird bb-lx-dut-p "$BIN" "$RUN/p/bird.conf" "$RUN/p" || bad "bird starts again"
wait_converged p 600 && ok "the restarted bird converged" || bad "the restarted bird converged"
wait_exporter; wait_kernel
[ $((SECONDS - t_follow)) -lt "$FOLLOW" ] || bad "convergence took longer than the reader's follow window ($FOLLOW s)"
wait "$fpid"
head -3 "$RUN/follow.out"
check "the reader noticed the restart and reattached to the new instance" grep -q "^reattached: instance" "$RUN/follow.out"
grep -v '^attached\|^reattached\|^stale' "$RUN/follow.out" > "$RUN/follow.ans"
compare_all restarted
check "[restarted] the reader that stayed attached answers like a fresh one" cmp -s "$RUN/follow.ans" "$RUN/cmp.restarted/reader"
# the whole run, the patched bird's `down` (a kernel flush) included
errlog_new "$RUN/errs.new" "$RUN/p/bird.log" "$RUN/s/bird.log"
check "no error in the patched bird's log that stock's lacks" [ ! -s "$RUN/errs.new" ]
head -10 "$RUN/errs.new" | sed 's/^/    /'

# ------------------------------------------------------------------ measurements
st=$("$READER" "$SHM" status); echo "$st"
echo
echo "== measurements ($SIZE table; printed, not asserted)"
metric "exporter feed of the full IPv4 table (restart)" "$FEED4"
metric "exporter feed of the full IPv6 table (restart)" "$FEED6"
metric "reader during the trace: lookups" "$(sed -nE 's/^watch: [0-9]+ lookups in .*: ([0-9.]+ Mlps.*)/\1/p' "$RUN/watch.out")"
metric "reader during the trace: updates seen" "$(sed -nE 's/^watch: generation ([0-9]+) -> ([0-9]+), ([0-9]+) updates in ([0-9]+) polls.*/\3 updates, \4 polls saw new ones/p' "$RUN/watch.out")"
metric "update -> reader latency during the trace" "$(sed -nE 's/^watch: update -> reader latency: (.*)/\1/p' "$RUN/watch.out")"
metric "reader: batches repeated" "$(sed -nE 's/^watch: batches repeated \(reuse seqlock\): ([0-9]+)/\1/p' "$RUN/watch.out")"
metric "region memory (resident)" "$(sed -nE 's/^memory: (.*)/\1/p' <<< "$st")"
metric "bird CPU s at convergence, bloombird + exporter" "${CPU[p]}"
metric "bird CPU s at convergence, stock" "${CPU[s]}"

echo
echo "$npass passed, $nfail failed"
[ "$nfail" = 0 ]
