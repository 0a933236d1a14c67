#!/bin/bash
# End-to-end: patched and stock bird side by side, each in its own network
# namespace with identical addressing, each fed by its own GoBGP (same table)
# and its own FRR ospfd neighbour (300 external routes), each exporting to
# kernel table 100 of its namespace. Compares everything birdc and the
# kernel show, replays a real update trace, churns, flaps, tries bad input,
# and prints measurements (not asserted). Then faults (tests/e2e/faults.sh):
# routes changed behind bird's back, refused by the kernel, lost
# notifications (ENOBUFS), bird killed in the middle of an install.
#
#   e2e.sh [ci|full|as3856]
#     ci:     RouteViews 2008 IPv4 (271k) + tier-1 IPv6 (160k)
#     full:   tier-1 IPv4 (902k) + tier-1 IPv6 (160k)
#     as3856: the BGP feed of AS3856 recorded in 2015 (578k) with its real AS paths and
#             next hops offered to GoBGP, + tier-1 IPv6
# Env: E2E_BENCH=1 also measures the CLI stall during kernel scans.
set -uo pipefail
. "$(dirname "$0")/rig.sh"
. "$(dirname "$0")/faults.sh"
. "$(dirname "$0")/errlog.sh"

SIZE=${1:-ci}
RUN=$RIG_TOP/build/e2e
BIN=$RIG_TOP/build/bin
SBIN=$RIG_TOP/build/stock/bin
NH4="-nh4 10.255.0.1"
case "$SIZE" in
  ci)   V4=$RIG_DATA/ipv4/routeviews-2008.v4.origin.txt.xz ;;
  full) V4=$RIG_DATA/ipv4/tier1-2023.v4.txt.xz ;;
  as3856) V4=$RIG_DATA/ipv4/as3856-feed-2015.v4.nh-aspath.txt.xz; NH4= ;;
  *) echo "usage: $0 [ci|full|as3856]" >&2; exit 2 ;;
esac
V6=$RIG_DATA/ipv6/tier1-2023.v6.txt.xz
TRACE=$RIG_DATA/updates/ris-updates-20190101-0000.bgpdump-m.txt.gz
OSPF_ROUTES=300

npass=0 nfail=0
ok()  { npass=$((npass + 1)); echo "ok   $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
metric() { printf 'METRIC %-36s %14s %14s\n' "$1" "$2" "$3"; }
# errs_same TAG -- no <ERR> in the patched bird's log since the last call that
# stock's lacks (tests/e2e/errlog.sh)
errs_same() {
  errlog_new "$RUN/errs.new" "$RUN/p/bird.log" "$RUN/s/bird.log"
  check "[$1] no error in the patched bird's log that stock's lacks" [ ! -s "$RUN/errs.new" ]
  head -10 "$RUN/errs.new" | sed 's/^/    /'
}

cleanup() { rig_teardown "$RUN"; }
trap cleanup EXIT
trap 'exit 130' INT TERM   # cleanup runs once, on the way out

[ "$(id -u)" = 0 ] || { echo "e2e: needs root (network namespaces)" >&2; exit 1; }
for f in "$V4" "$V6" "$TRACE"; do [ -f "$f" ] || { echo "e2e: missing $f" >&2; exit 1; }; done
rm -rf "$RUN"; mkdir -p "$RUN"
rig_teardown "$RUN"
rig_build_feeder || exit 1

# ------------------------------------------------------------------ the rig
side_up() {  # side_up X   (p: patched, s: stock)
  local x=$1
  rig_ns "bb-feed-$x" "bb-dut-$x" "bb-ospf-$x"
  rig_link "bb-feed-$x" bb-down 10.255.0.1/30 fdbb::1/64 "bb-dut-$x" bb-up 10.255.0.2/30 fdbb::2/64
  rig_link "bb-ospf-$x" bb-core 10.255.3.1/30 fdbb:3::1/64 "bb-dut-$x" bb-ospf 10.255.3.2/30 fdbb:3::2/64
  for i in $(seq 0 $((OSPF_ROUTES - 1))); do
    echo "addr add 172.$((20 + i / 256)).$((i % 256)).1/24 dev lo"
  done | ip -n "bb-ospf-$x" -batch -
  mkdir -p "$RUN/$x"
  rig_gobgpd "bb-feed-$x" "$RUN/$x" 65001 10.255.0.1 10.255.0.2 65002 fdbb::2 65002
}

frr_up() {  # frr_up X -- zebra + ospfd as user frr, sockets in the test dir
  local x=$1 d=$RUN/$x/frr
  mkdir -p "$d"
  printf 'hostname nb-%s\n' "$x" > "$d/zebra.conf"
  cat > "$d/ospfd.conf" <<EOF
hostname nb-$x
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
    ns "bb-ospf-$x" /usr/lib/frr/$dmn -d -u frr -g frr -f "$d/$dmn.conf" -i "$d/$dmn.pid" \
      -z "$d/zserv.api" --vty_socket "$d" -A 127.0.0.1 -P 0 --log "file:$d/$dmn.log" || return 1
    for _ in $(seq 50); do [ -s "$d/$dmn.pid" ] && break; sleep 0.1; done
    cp "$d/$dmn.pid" "$RUN/$x/frr-$dmn.pid"
  done
}

bird_conf() {
  cat <<'EOF'
log stderr all;
router id 10.255.0.2;
protocol device { scan time 10; }
protocol direct { ipv4; ipv6; interface "bb-*"; }
protocol kernel kernel4 { kernel table 100; learn off; scan time 20; debug { events }; ipv4 { export all; }; }
protocol kernel kernel6 { kernel table 100; learn off; scan time 20; debug { events }; ipv6 { export all; }; }
template bgp feeder { local as 65002; hold time 240; connect retry time 1; }
protocol bgp feeder4 from feeder { neighbor 10.255.0.1 as 65001; ipv4 { import all; export none; }; }
protocol bgp feeder6 from feeder { neighbor fdbb::1 as 65001; ipv6 { import all; export none; }; }
protocol ospf v2 ospf4 {
  ipv4 { import all; export none; };
  area 0 { interface "bb-ospf" { type ptp; hello 1; dead 4; }; };
}
EOF
}

bin_of() { [ "$1" = p ] && echo "$BIN" || echo "$SBIN"; }
cli() { local x=$1; shift; "$(bin_of "$x")/birdc" -s "$RUN/$x/bird.ctl" "$@"; }

# expected = GoBGP's RIB + OSPF externals + the link + direct
want_routes() {
  local x=$1
  echo $(( $(rig_rib_count "bb-feed-$x" ipv4) + $(rig_rib_count "bb-feed-$x" ipv6) ))
}
bgp_routes() { rig_routes "$(bin_of "$1")" "$RUN/$1/bird.ctl" protocol feeder4; }
all_bgp() { echo $(( $(rig_routes "$(bin_of "$1")" "$RUN/$1/bird.ctl" protocol feeder4) + $(rig_routes "$(bin_of "$1")" "$RUN/$1/bird.ctl" protocol feeder6) )); }
ospf_routes() { rig_routes "$(bin_of "$1")" "$RUN/$1/bird.ctl" protocol ospf4; }

# wait_converged X TIMEOUT -- BGP count = GoBGP's, OSPF has its routes, stable 3 s
wait_converged() {
  local x=$1 t0=$SECONDS want last=-1 stable=0 n o
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

# IPv4 prefixes in kernel table 100 (the kernel's own counter: cheap to poll)
kernel_prefixes4() { ns "bb-dut-$1" cat /proc/net/fib_triestat 2>/dev/null | awk '/^Id 100:/ {t = 1} t && /Prefixes:/ {print $2; exit}' | awk '{print $1 + 0}'; }
kernel_routes6() { local v; v=$(ns "bb-dut-$1" cat /proc/net/rt6_stats | cut -d' ' -f4); echo $((16#$v)); }

# ------------------------------------------------------------------ bring up
echo "== e2e ($SIZE): $(basename "$V4") + $(basename "$V6")"
for x in p s; do side_up "$x" || exit 1; frr_up "$x" || { echo "FRR failed"; cat "$RUN/$x/frr/"*.log; exit 1; }; done

# feed X FILE OUT ARGS -- once more if the first attempt dies, with diagnostics
feed() {
  local x=$1 f=$2 out=$3; shift 3
  rig_feed "bb-feed-$x" "$f" "$@" > "$out" && return 0
  echo "e2e: feeding $(basename "$f") into $x failed; gobgpd log and kernel messages:" >&2
  tail -n 20 "$RUN/$x/gobgpd.log" >&2; dmesg 2>/dev/null | tail -n 5 >&2
  rig_feed "bb-feed-$x" "$f" "$@" > "$out"
}

rig_log "feeding both GoBGP instances"
for x in p s; do
  feed "$x" "$V4" "$RUN/$x/feed4.out" $NH4 || exit 1
  feed "$x" "$V6" "$RUN/$x/feed6.out" -nh6 fdbb::1 || exit 1
done
sent4=$(awk '{print $3}' "$RUN/p/feed4.out"); sent6=$(awk '{print $5}' "$RUN/p/feed6.out")
uniq4=$(xz -dc "$V4" | cut -f1 | sort -u | wc -l); uniq6=$(xz -dc "$V6" | cut -f1 | sort -u | wc -l)
for x in p s; do
  check "$x feeder: GoBGP holds every IPv4 prefix of the table ($uniq4 unique of $sent4 sent)" [ "$(rig_rib_count "bb-feed-$x" ipv4)" = "$uniq4" ]
  check "$x feeder: GoBGP holds every IPv6 prefix of the table ($uniq6)" [ "$(rig_rib_count "bb-feed-$x" ipv6)" = "$uniq6" ]
done

bird_conf > "$RUN/bird.conf"
declare -A T_FULL T_KERNEL CPU RSS LAT STALL DROPS
for x in p s; do
  cp "$RUN/bird.conf" "$RUN/$x/bird.conf"
  rig_log "starting $x bird"
  t0=$(date +%s%N)
  rig_bird bird "bb-dut-$x" "$(bin_of "$x")" "$RUN/$x/bird.conf" "$RUN/$x" || exit 1
  for _ in $(seq 300); do
    [ "$(cli "$x" show protocols '"feeder*"' | grep -c Established)" = 2 ] && break
    sleep 0.1
  done
  t_est=$(date +%s%N)
  if wait_converged "$x" 900; then
    ok "$x bird converged: $(all_bgp "$x") BGP routes, $(ospf_routes "$x") OSPF routes"
  else
    bad "$x bird converged"
  fi
  T_FULL[$x]=$(( ($(date +%s%N) - t_est) / 1000000 ))
  # kernel table complete: its IPv4 prefix count covers bird's IPv4 routes
  want_k=$(( $(bgp_routes "$x") + OSPF_ROUTES ))
  for _ in $(seq 6000); do
    [ "$(kernel_prefixes4 "$x")" -ge "$want_k" ] && break
    sleep 0.1
  done
  T_KERNEL[$x]=$(( ($(date +%s%N) - t0) / 1000000 ))
  CPU[$x]=$(awk '{printf "%.1f", ($14 + $15) / 100}' "/proc/$(cat "$RUN/$x/bird.pid")/stat")
  RSS[$x]=$(awk '/VmRSS/ {print $2}' "/proc/$(cat "$RUN/$x/bird.pid")/status")
done

# ------------------------------------------------------------------ compare
# Fields that legitimately differ: the version in birdc's banner, route and
# protocol timestamps, and the order of networks whose 32-bit FIB hashes are
# equal (it follows arrival order, which GoBGP does not fix).
normalize_routes() {
  sed -E '/^BIRD .* ready\.$/d; s/ [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}\]/]/; s/\[([a-z0-9_]+) [0-9-]+\]/[\1]/'
}
normalize_protocols() { sed -E '/^BIRD .* ready\.$/d; s/[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}/TIME/g; s/[0-9]{4}-[0-9]{2}-[0-9]{2}/DATE/g'; }
sort_blocks() {  # one line per network (with its table), sorted
  awk '/^Table / {t = $2; next} /^[^ \t]/ {if (b != "") print b; b = t " " $0; next} {b = b "|" $0} END {if (b != "") print b}' | LC_ALL=C sort
}

# Addresses for show route for: inside table prefixes, random, unrouted
make_addrs() {
  python3 - "$V4" "$V6" <<'EOF'
import ipaddress, lzma, random, sys
r = random.Random(20190101)
def load(f):
    with lzma.open(f, "rt") as fh:
        return [l.split("\t")[0].strip() for l in fh if "/" in l]
for f, n in ((sys.argv[1], 1200), (sys.argv[2], 600)):
    nets = [ipaddress.ip_network(p, strict=False) for p in r.sample(load(f), n)]
    for net in nets:
        print(net[r.randrange(net.num_addresses)] if net.num_addresses > 1 else net[0])
for _ in range(600):
    print(ipaddress.IPv4Address(r.getrandbits(32)))
for _ in range(300):
    print(ipaddress.IPv6Address((0x2 << 125) | r.getrandbits(125)))
for _ in range(150):   # unrouted: class E, documentation, ULA outside the rig
    print(ipaddress.IPv4Address((240 << 24) | r.getrandbits(24)))
    print(ipaddress.IPv6Address((0xfdee << 112) | r.getrandbits(112)))
EOF
}
make_addrs > "$RUN/addrs" || { bad "address list"; }
nad=$(wc -l < "$RUN/addrs")

compare_all() {  # compare_all TAG
  local tag=$1
  for x in p s; do
    cli "$x" show route count | normalize_routes > "$RUN/$x/count.$tag"
    cli "$x" show route all > "$RUN/$x/all.raw.$tag"
    normalize_routes < "$RUN/$x/all.raw.$tag" | sort_blocks > "$RUN/$x/all.$tag"
    sed 's/^/show route for /' "$RUN/addrs" | "$(bin_of "$x")/birdcl" -s "$RUN/$x/bird.ctl" 2>&1 | normalize_routes > "$RUN/$x/for.$tag"
    cli "$x" show protocols | normalize_protocols > "$RUN/$x/proto.$tag"
    { ns "bb-dut-$x" ip -4 route show table 100; ns "bb-dut-$x" ip -6 route show table 100; } | sort > "$RUN/$x/kernel.$tag"
  done
  local nroutes; nroutes=$(wc -l < "$RUN/p/all.$tag")
  check "[$tag] show route count identical" cmp -s "$RUN/p/count.$tag" "$RUN/s/count.$tag"
  check "[$tag] show route all identical ($nroutes networks, normalised timestamps)" cmp -s "$RUN/p/all.$tag" "$RUN/s/all.$tag"
  check "[$tag] show route for on $nad addresses identical" cmp -s "$RUN/p/for.$tag" "$RUN/s/for.$tag"
  check "[$tag] show protocols identical (times normalised)" cmp -s "$RUN/p/proto.$tag" "$RUN/s/proto.$tag"
  check "[$tag] kernel table 100 identical ($(wc -l < "$RUN/p/kernel.$tag") routes)" cmp -s "$RUN/p/kernel.$tag" "$RUN/s/kernel.$tag"
  for f in all for kernel; do
    cmp -s "$RUN/p/$f.$tag" "$RUN/s/$f.$tag" || diff "$RUN/s/$f.$tag" "$RUN/p/$f.$tag" | head -10
  done
  check "[$tag] show route for found routes" grep -q "via 10.255.0.1" "$RUN/p/for.$tag"
  check "[$tag] show route for had unrouted answers" grep -q "Network not found" "$RUN/p/for.$tag"
}

wait_both() {
  local r=0
  for x in p s; do wait_converged "$x" "${1:-600}" || r=1; done
  return $r
}
wait_kernel_equal() {  # until both kernel tables hold what bird exports (polling counters)
  for _ in $(seq 300); do
    local now="$(kernel_prefixes4 p) $(kernel_routes6 p)"
    [ "$now" = "$(kernel_prefixes4 s) $(kernel_routes6 s)" ] && [ "$now" = "${prev:-}" ] && return 0
    prev=$now
    sleep 1
  done
  return 1
}

wait_kernel_equal
compare_all initial
errs_same start

# ------------------------------------------------------------------ churn
rig_log "replaying $(basename "$TRACE") onto one session per family"
zcat "$TRACE" | awk -F'|' '$3 == "A" { printf "A\t%s\t\t%s\n", $6, $7 } $3 == "W" { printf "W\t%s\n", $6 }' > "$RUN/trace.ops"
for x in p s; do rig_feed "bb-feed-$x" "$RUN/trace.ops" -ops -nh4 10.255.0.1 -nh6 fdbb::1 > "$RUN/$x/trace.out" || bad "trace replay into $x feeder"; done
cat "$RUN/p/trace.out"
check "trace replayed into both feeders" [ "$(rig_rib_count bb-feed-p ipv4)" = "$(rig_rib_count bb-feed-s ipv4)" ]
wait_both 600 && ok "converged after the trace" || bad "converged after the trace"

rig_log "withdrawing every third prefix of the table, then re-announcing them"
xz -dc "$V4" | awk 'NR % 3 == 0' > "$RUN/third4"; xz -dc "$V6" | awk 'NR % 3 == 0' > "$RUN/third6"
for x in p s; do
  rig_feed "bb-feed-$x" "$RUN/third4" -withdraw >/dev/null; rig_feed "bb-feed-$x" "$RUN/third6" -withdraw >/dev/null
done
wait_both 600 && ok "converged after mass withdrawal" || bad "converged after mass withdrawal"
wait_kernel_equal
compare_all withdrawn
for x in p s; do
  rig_feed "bb-feed-$x" "$RUN/third4" $NH4 >/dev/null; rig_feed "bb-feed-$x" "$RUN/third6" -nh6 fdbb::1 >/dev/null
done
wait_both 600 && ok "converged after re-announcement" || bad "converged after re-announcement"

rig_log "flapping the BGP sessions and the OSPF neighbour"
for x in p s; do
  ns "bb-feed-$x" gobgp neighbor 10.255.0.2 reset >/dev/null; ns "bb-feed-$x" gobgp neighbor fdbb::2 reset >/dev/null
  ns "bb-ospf-$x" ip link set bb-core down
done
sleep 6
for x in p s; do ns "bb-ospf-$x" ip link set bb-core up; done
sleep 3
wait_both 900 && ok "converged after flaps" || bad "converged after flaps"
wait_kernel_equal
compare_all churned
errs_same churn

# ------------------------------------------------------------------ faults
T_RESYNC=-
fault_phases

# ------------------------------------------------------------------ bad input
rig_log "bad input against the loaded patched bird"
before=$(cli p show route count); fib_before=$(cli p show fib master4 | grep -E "Bloom filter|Entries")
for opt in "bloom hashes 0" "bloom hashes 10" "bloom counters 3" "bloom counters 65" "bloom maybe"; do
  { echo "ipv4 table master4 { $opt; };"; cat "$RUN/bird.conf"; } > "$RUN/p/bird.conf"
  out=$(cli p configure 2>&1)
  check "configure with '$opt' is rejected with file:line" grep -q "$RUN/p/bird.conf:1:" <<< "$out"
done
cp "$RUN/bird.conf" "$RUN/p/bird.conf"
for opt in "netlink batch 0" "netlink batch 16385" "netlink queue 0" "scan slice 50 us" "scan slice 3 s" "netlink async perhaps"; do
  kernel_conf "$opt;" > "$RUN/p/bird.conf"
  out=$(cli p configure 2>&1)
  check "configure with kernel option '$opt' is rejected with file:line" grep -qE "$RUN/p/bird.conf:[0-9]+:" <<< "$out"
done
cp "$RUN/bird.conf" "$RUN/p/bird.conf"
check "running configuration kept: same routes" [ "$before" = "$(cli p show route count)" ]
check "running configuration kept: same filter" [ "$fib_before" = "$(cli p show fib master4 | grep -E "Bloom filter|Entries")" ]
for cmd in "show fib nosuchtable" "show fib 10.0.0.1" "show route for 999.1.1.1" "show fib master4 master6"; do
  out=$(cli p $cmd 2>&1)
  check "'$cmd' gets an error" grep -qiE "syntax error|invalid|expected" <<< "$out"
done
check "patched bird is still up with all routes" [ "$before" = "$(cli p show route count)" ]
errs_same "bad input"

# ------------------------------------------------------------------ measurements
echo
echo "== measurements ($SIZE table; printed, not asserted; p = bloombird, s = stock)"
printf 'METRIC %-36s %14s %14s\n' metric bloombird stock
metric "Established to full table (ms)" "${T_FULL[p]}" "${T_FULL[s]}"
metric "start to full kernel table 100 (ms)" "${T_KERNEL[p]}" "${T_KERNEL[s]}"
metric "bird CPU s at full table" "${CPU[p]}" "${CPU[s]}"
metric "bird RSS KiB at full table" "${RSS[p]}" "${RSS[s]}"
for x in p s; do cli "$x" show memory > "$RUN/$x/memory"; done
metric "show memory: routing tables" "$(awk '/Routing tables/ {print $3 $4}' "$RUN/p/memory")" "$(awk '/Routing tables/ {print $3 $4}' "$RUN/s/memory")"
metric "show memory: total" "$(awk '/^Total/ {print $2 $3}' "$RUN/p/memory")" "$(awk '/^Total/ {print $2 $3}' "$RUN/s/memory")"
# show route for latency over the control socket: one birdcl session, all addresses
for x in p s; do
  t0=$(date +%s%N)
  for _ in 1 2 3; do sed 's/^/show route for /' "$RUN/addrs" | "$(bin_of "$x")/birdcl" -s "$RUN/$x/bird.ctl" > /dev/null; done
  LAT[$x]=$(( ($(date +%s%N) - t0) / 3000 / nad ))
done
metric "show route for latency (us/cmd)" "${LAT[p]}" "${LAT[s]}"
metric "ENOBUFS fault: deleted routes restored after (s)" "$T_RESYNC" "-"
for x in p s; do DROPS[$x]=$(grep -c "Kernel dropped some netlink messages" "$RUN/$x/bird.log"); done
metric "dropped-message warnings (last bird run)" "${DROPS[p]}" "${DROPS[s]}"
if [ "${E2E_BENCH:-0}" = 1 ]; then
  for x in p s; do
    max=0
    end=$((SECONDS + 45))
    while [ $SECONDS -lt $end ]; do
      t0=$(date +%s%N); cli "$x" show route for 8.8.8.8 >/dev/null; dt=$(( ($(date +%s%N) - t0) / 1000000 ))
      [ $dt -gt $max ] && max=$dt
      sleep 0.05
    done
    STALL[$x]=$max
  done
  metric "worst CLI stall over 45 s of kernel scans (ms)" "${STALL[p]}" "${STALL[s]}"
fi

echo
echo "$npass passed, $nfail failed"
[ "$nfail" = 0 ]
