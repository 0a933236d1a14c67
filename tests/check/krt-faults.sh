# bloombird's own Netlink sockets misbehaving, without GoBGP: a kernel
# protocol exports 30,000 static routes to kernel table 100 of a namespace
# (bt-krtf), patched bird against stock bird's table for the same
# configurations. With tests/e2e/nlfault.c preloaded:
#   garbage:  answers and dumps interleaved with messages of an unknown type,
#             foreign sequence numbers and trailing garbage are logged and
#             skipped, never a crash;
#   failing:  the write socket's sendmsg() fails outright: BIRD falls back to
#             stock's synchronous writes with an error in the log.
#   tiny:     `netlink queue 16; netlink batch 4`: back-pressure on every few
#             routes, IPv6 dumps draining their held queue again and again;
#   inloop:   `netlink thread off`: the writes in BIRD's loop;
#   mixed:    k4 writes in BIRD's loop, k6 through the writer thread: one
#             protocol's synchronous batch waits for and collects the other's
#             batch from the thread, which must still go on (its flush ends,
#             its dumps are requested, its corks released).
# Each time (30,000 IPv4 and 6,000 IPv6 routes): install, a restart of the
# kernel protocols (flush, install), a reconfiguration that withdraws and
# changes routes, and `down` (flush) end with the kernel tables stock ends
# with; an out-of-range option given to the running daemon is rejected with
# file:line and the configuration kept. Each of these steps logs no <ERR>
# that stock's same step does not (tests/e2e/errlog.sh), but for the
# fallback that `failing` provokes.
# lane: side
. "$(dirname "$0")/../lib.sh"
. "$top/tests/e2e/errlog.sh"

[ "$(id -u)" = 0 ] || { echo "krt-faults: needs root (network namespaces)"; exit 1; }
NS=bt-krtf
N=30000
N6=6000
KOPTS=""		# options added to the patched bird's kernel protocols
KOPTS4=""		# ... to k4 only
SHIM=$WORK/nlfault.so
cc -shared -fPIC -o "$SHIM" "$top/tests/e2e/nlfault.c" -ldl || { bad "fault shim builds"; finish; }

ns_up() {
  ns_veth "$NS" 10.99.0.1/24 fd99::1/64
}
cleanup_ns() { ip netns del "$NS" 2>/dev/null; }
trap 'cleanup; cleanup_ns' EXIT

mkconf() {  # mkconf FILE A|B -- B withdraws every third route and moves every fifth
  python3 - "$2" "$N" "$N6" > "$1" <<'EOF'
import sys
v, n, n6 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print("log stderr all;\nrouter id 10.99.0.1;\nprotocol device {}")
print("protocol kernel k4 { kernel table 100; learn off; scan time 5; ipv4 { export all; }; }")
print("protocol kernel k6 { kernel table 100; learn off; scan time 5; ipv6 { export all; }; }")
# (family, count, net, gateways A / B, the residue B withdraws and moves)
for fam, cnt, net, gws, r in ((4, n, "100.%d.%d.0/24", ("10.99.0.2", "10.99.0.3"), 0),
                              (6, n6, "2001:db8:%x:%x::/64", ("fd99::2", "fd99::3"), 1)):
    print("protocol static s%d { ipv%d;" % (fam, fam))
    for i in range(cnt):
        if v == "B" and i % 3 == r:
            continue
        gw = gws[v == "B" and i % 5 == r]
        print("  route %s via %s;" % (net % (i // 256, i % 256), gw))
    print("}")
EOF
}
mkconf "$WORK/A.conf" A
mkconf "$WORK/B.conf" B

absent() { ! grep -qiE "$@"; }
table() { { ip -n "$NS" route show table 100; ip -n "$NS" -6 route show table 100; } | sort; }
count() { table | wc -l; }
# use FILE -- the configuration FILE as f.conf, $KOPTS added to the kernel protocols
use() { sed -e "/kernel k4/s/kernel table 100;/kernel table 100; $KOPTS4/" -e "s/kernel table 100;/kernel table 100; $KOPTS/" "$1" > "$WORK/f.conf"; }
C() { "$CUR/birdc" -s "$WORK/f.ctl" "$@"; }

# run_bird BINDIR [ENV=VALUE...] -- bird on A.conf in the namespace; the
# runs before in f.log.old, and the errors are looked at from here on
run_bird() {
  CUR=$1; shift
  use "$WORK/A.conf"
  [ -f "$WORK/f.log" ] && cat "$WORK/f.log" >> "$WORK/f.log.old"
  : > "$WORK/f.log"
  errlog_mark "$WORK/f.log"
  ip netns exec "$NS" env "$@" "$CUR/bird" -f -c "$WORK/f.conf" -s "$WORK/f.ctl" >> "$WORK/f.log" 2>&1 &
  PID=$!
  BIRD_PIDS+=($PID)
  for _ in $(seq 100); do C show status >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}
# settle EXPECTED_FILE -- until the table equals it (a scan repairs within 5 s)
settle() { for _ in $(seq 150); do [ "$(table)" = "$(cat "$1")" ] && return 0; sleep 0.2; done; return 1; }
# fds -- bird's open descriptors, the least of five looks (a scan's dump socket comes and goes)
fds() { local m=100000 n; for _ in 1 2 3 4 5; do n=$(ls "/proc/$PID/fd" | wc -l); [ "$n" -lt "$m" ] && m=$n; sleep 0.1; done; echo "$m"; }
gone() { for _ in $(seq 300); do kill -0 "$PID" 2>/dev/null || return 0; sleep 0.1; done; return 1; }
# stock_errs STEP -- stock's <ERR> messages of STEP (since the last step)
stock_errs() { errlog_since "$WORK/f.log" > "$WORK/err.stock.$1"; errlog_mark "$WORK/f.log"; }
# errs_same PHASE STEP -- STEP of PHASE logged no <ERR> that stock's STEP did
# not, but what $ERR_ALLOW (extended regex) expects
errs_same() {
  errlog_since "$WORK/f.log" > "$WORK/err.$1.$2"; errlog_mark "$WORK/f.log"
  local new; new=$(errlog_extra "$WORK/err.$1.$2" "$WORK/err.stock.$2" "${ERR_ALLOW:-}")
  check "$1: $2 logged no error that stock's $2 did not" [ -z "$new" ]
  [ -z "$new" ] || head -5 <<< "$new" | sed 's/^/    /'
}

# Stock: the tables to expect, and the errors each step logs
ns_up
run_bird "$STOCK_BIN" || { bad "stock bird starts"; finish; }
for _ in $(seq 150); do [ "$(count)" -ge "$((N + N6))" ] && break; sleep 0.2; done
sleep 6; table > "$WORK/stock.A"
stock_errs install
C restart k4 >/dev/null; C restart k6 >/dev/null
sleep 1
check "stock: after restart of the kernel protocols, table A again" settle "$WORK/stock.A"
sleep 6
stock_errs restart
cp "$WORK/B.conf" "$WORK/f.conf"; C configure >/dev/null
sleep 6; table > "$WORK/stock.B"
sed 's/kernel table 100;/kernel table 100; netlink queue 0;/' "$WORK/B.conf" > "$WORK/f.conf"
C configure >/dev/null 2>&1
cp "$WORK/B.conf" "$WORK/f.conf"
stock_errs reconfigure
C down >/dev/null; gone
stock_errs down
check "stock: table A has $N + $N6 routes" [ "$(wc -l < "$WORK/stock.A")" = "$((N + N6))" ]
check "stock: table B differs from A" [ "$(cat "$WORK/stock.A")" != "$(cat "$WORK/stock.B")" ]
check "stock: table empty after down" [ "$(count)" = 0 ]
cat "$WORK"/err.stock.*

phase() {  # phase NAME ENV=VALUE...
  local name=$1; shift
  ns_up
  run_bird "$BIN" LD_PRELOAD="$SHIM" "$@" || { bad "$name: patched bird starts"; cat "$WORK/f.log"; return; }
  check "$name: table A as stock's" settle "$WORK/stock.A"
  errs_same "$name" install
  local fd0 fd1; fd0=$(fds)
  C restart k4 >/dev/null; C restart k6 >/dev/null
  sleep 1
  check "$name: after restart of the kernel protocols, table A as stock's" settle "$WORK/stock.A"
  sleep 6; fd1=$(fds)	# a scan of each after the restart
  check "$name: the restarts left no socket behind (bird's descriptors $fd0 -> $fd1)" [ "$fd1" -le "$fd0" ]
  errs_same "$name" restart
  use "$WORK/B.conf"; C configure >/dev/null
  check "$name: after reconfiguration, table B as stock's" settle "$WORK/stock.B"
  check "$name: bird still answers" grep -q "Daemon is up" <<< "$(C show status)"
  C show protocols all '"k*"' > "$WORK/$name.info"
  grep -E "^k[46]|Sliced scans|Last scan|Netlink" "$WORK/$name.info"
  # Out-of-range options on the running daemon: file:line, configuration kept
  sed 's/kernel table 100;/kernel table 100; netlink queue 0;/' "$WORK/B.conf" > "$WORK/f.conf"
  out=$(C configure 2>&1)
  check "$name: configure with 'netlink queue 0' rejected with file:line" grep -q "f.conf:4:.*Netlink queue must be in range" <<< "$out"
  table > "$WORK/kept"
  check "$name: running configuration kept (table B)" cmp -s "$WORK/kept" "$WORK/stock.B"
  check "$name: ... and the kernel protocol still up" grep -qE "^k4 +Kernel +master4 +up" <<< "$(C show protocols k4)"
  use "$WORK/B.conf"
  errs_same "$name" reconfigure
  C down >/dev/null
  check "$name: bird went down cleanly" gone
  check "$name: table empty after down (flushed)" [ "$(count)" = 0 ]
  errs_same "$name" down
  check "$name: no crash" absent "segmentation|assertion|bug|crash" "$WORK/f.log"
  sed -n '1,200p' "$WORK/f.log" | grep -vE "^$" | sort | uniq -c | sort -rn | head -8
}

phase garbage NLF_GARBAGE=2
check "garbage: unknown message types logged" grep -q "Unexpected Netlink message type" "$WORK/f.log"
check "garbage: foreign sequence numbers logged" grep -qE "unexpected sequence number|out of sequence" "$WORK/f.log"
check "garbage: remnants logged" grep -q "remnant" "$WORK/f.log"

ERR_ALLOW="KRT: Netlink write socket failed: .*; falling back to synchronous writes" phase failing NLF_SEND_FAIL=3
check "failing: the failure is logged as an error with the fallback" grep -q "Netlink write socket failed.*falling back to synchronous writes" "$WORK/f.log"
check "failing: show protocols all says so" grep -q "synchronous (batched writes failed)" "$WORK/failing.info"

KOPTS="netlink queue 16; netlink batch 4;" phase tiny
check "tiny: back-pressure counted" grep -qE "back-pressure [1-9]" "$WORK/tiny.info"

KOPTS="netlink thread off;" phase inloop
check "inloop: writes in BIRD's loop, batched" grep -q "Netlink writes:   batched" "$WORK/inloop.info"

KOPTS4="netlink thread off;" phase mixed
check "mixed: both protocols' writes batched" [ "$(grep -c "Netlink writes:   batched" "$WORK/mixed.info")" = 2 ]
check "mixed: k4 configured to write in BIRD's loop" grep -q "kernel k4.*netlink thread off;" "$WORK/f.conf"
finish
