# show route's sync marks while batched kernel writes are pending, and errors
# in the log when kernel protocols stop, patched bird against stock bird in
# a namespace (bt-krtm), kernel table 100, one bird at a time:
#   marks:   50,000 static IPv4 and 5,000 IPv6 routes enabled at once while
#            the patched bird's writer is slowed (tests/e2e/nlfault.c: every
#            batch 100 ms late; `scan slice 1 s` keeps the batches full).
#            `show route` while they are still pending (show protocols all
#            counts them before and after) marks every route `*`, as stock's
#            at the same point: no `!`. Routes the kernel refuses (one in the
#            way of a foreign route, two with an unknown congestion control,
#            one of them enabled behind the pending routes, `*` while it
#            waits) are `!` in both builds once answered.
#   errors:  start, `restart` of the kernel protocols, a reconfiguration that
#            renames one (the same table), `birdc down` and SIGTERM while
#            foreign routes come and go in the table (their notifications
#            arrive while the interfaces are gone and a flush runs): no <ERR>
#            that stock's same step lacks (tests/e2e/errlog.sh), the kernel
#            table as stock's after each step, none of bird's routes after
#            down.
# lane: side
. "$(dirname "$0")/../lib.sh"
. "$top/tests/e2e/errlog.sh"

[ "$(id -u)" = 0 ] || { echo "krt-marks: needs root (network namespaces)"; exit 1; }
NS=bt-krtm
N=50000
N6=5000
REFUSED="203.0.113.0/24 198.51.100.0/24 198.51.101.0/24"
SHIM=$WORK/nlfault.so
cc -shared -fPIC -o "$SHIM" "$top/tests/e2e/nlfault.c" -ldl || { bad "fault shim builds"; finish; }

ns_up() {
  ns_veth "$NS" 10.98.0.1/24 fd98::1/64
  # In the way of bird's 203.0.113.0/24: the kernel refuses bird's (File exists)
  ip -n "$NS" route add 203.0.113.0/24 via 10.98.0.2 dev d0 table 100 proto static metric 32
}
cleanup_ns() { ip netns del "$NS" 2>/dev/null; }
trap 'cleanup; cleanup_ns' EXIT

# mkconf FILE SCAN_TIME DISABLED K4NAME -- the routes of s4 and s6 (DISABLED:
# "disabled;" or empty), kernel protocols K4NAME and k6; @KOPTS@ for options
mkconf() {
  python3 - "$2" "$3" "$4" "$N" "$N6" > "$1" <<'EOF'
import sys
scan, dis, k4, n, n6 = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
print("log stderr all;\nrouter id 10.98.0.1;\nprotocol device {}")
print("protocol kernel %s { kernel table 100; learn off; scan time %s; debug { events }; @KOPTS@ ipv4 { export all; }; }" % (k4, scan))
print("protocol kernel k6 { kernel table 100; learn off; scan time %s; debug { events }; @KOPTS@ ipv6 { export all; }; }" % scan)
print("protocol static refused { ipv4;")
print("  route 203.0.113.0/24 via 10.98.0.2;")
print("  route 198.51.100.0/24 via 10.98.0.2 { krt_congctl = \"nosuchcc\"; };\n}")
print("protocol static late { disabled; ipv4;")
print("  route 198.51.101.0/24 via 10.98.0.2 { krt_congctl = \"nosuchcc\"; };\n}")
print("protocol static s4 { %s ipv4;" % dis)
for i in range(n):
    print("  route 100.%d.%d.0/24 via 10.98.0.2;" % (i // 256, i % 256))
print("}\nprotocol static s6 { %s ipv6;" % dis)
for i in range(n6):
    print("  route 2001:db8:%x:%x::/64 via fd98::2;" % (i // 256, i % 256))
print("}")
EOF
}
mkconf "$WORK/marks.conf" 60 "disabled;" k4
mkconf "$WORK/errors.conf" 10 "" k4
mkconf "$WORK/rename.conf" 10 "" k4b

C() { "$CUR/birdc" -s "$WORK/b.ctl" "$@"; }
# run_bird BINDIR CONF KOPTS [ENV=VALUE...] -- bird in the namespace on CONF
# with KOPTS in its kernel protocols; its log b.log (runs before in b.log.old)
run_bird() {
  CUR=$1; sed "s/@KOPTS@/$3/" "$2" > "$WORK/b.conf"; shift 3
  [ -f "$WORK/b.log" ] && cat "$WORK/b.log" >> "$WORK/b.log.old"
  : > "$WORK/b.log"
  errlog_mark "$WORK/b.log"
  ip netns exec "$NS" env "$@" "$CUR/bird" -f -c "$WORK/b.conf" -s "$WORK/b.ctl" >> "$WORK/b.log" 2>&1 &
  PID=$!
  BIRD_PIDS+=($PID)
  for _ in $(seq 100); do C show status >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}
gone() { for _ in $(seq 600); do kill -0 "$PID" 2>/dev/null || return 0; sleep 0.1; done; return 1; }
patched() { [ "$CUR" = "$BIN" ]; }

# marks [FILE] -- "network mark" of each best route in show route's output
marks() { sed -nE 's/^([0-9a-f.:/]+) +[a-z]+ +\[[^]]*\] ([*!]) .*/\1 \2/p' "$@" | LC_ALL=C sort; }
# refused_marks FILE -- the marks of the routes the kernel refuses
refused_marks() { grep -E "^($(echo "$REFUSED" | sed 's/ /|/g')) " "$1"; }
# bangs FILE -- routes marked '!' but those of protocol refused (failed before)
bangs() { grep -vE "^(203\.0\.113\.0/24|198\.51\.100\.0/24) " "$1" | grep -c " !$"; }
# waiting -- routes of both kernel protocols pending or being written (patched)
waiting() {
  { C show protocols all k4; C show protocols all k6; } |
    sed -nE 's/.*batched, ([0-9]+) pending, ([0-9]+) being written.*/\1 \2/p' | awk '{ n += $1 + $2 } END { print n + 0 }'
}
table() { { ip -n "$NS" route show table 100; ip -n "$NS" -6 route show table 100; } | sort; }
ours() { table | grep -c "proto bird"; }
# settle COUNT -- until the kernel has COUNT of bird's routes in table 100
settle() { for _ in $(seq 300); do [ "$(ours)" = "$1" ] && return 0; sleep 0.2; done; return 1; }
# ready -- the kernel protocols have scanned once (patched: the sliced scans
# done), the refused routes have failed
ready() {
  [ "$(C show route protocol refused | marks | grep -c ' !$')" = 2 ] || return 1
  patched || return 0
  for k in k4 k6; do C show protocols all $k | grep -qE "Sliced scans: +[1-9]" || return 1; done
}

# ------------------------------------------------------------------ marks
# run_marks TAG BINDIR KOPTS [ENV=VALUE...]
run_marks() {
  local tag=$1 b=$2 kopts=$3; shift 3
  ns_up
  run_bird "$b" "$WORK/marks.conf" "$kopts" "$@" || { bad "$tag: bird starts"; cat "$WORK/b.log"; return 1; }
  for _ in $(seq 100); do ready && break; sleep 0.2; done
  check "$tag: the kernel protocols scanned, the refused routes failed" ready
  sleep 1
  # The same point in both builds: right after the enable
  C enable s4 >/dev/null; C enable s6 >/dev/null
  patched && W0=$(waiting)
  C show route > "$WORK/$tag.routes"
  patched && W1=$(waiting)
  marks "$WORK/$tag.routes" > "$WORK/$tag.marks"
  C enable late >/dev/null
  C show route protocol late | marks > "$WORK/$tag.late"
  patched && W2=$(waiting)
  check "$tag: show route listed every route" [ "$(wc -l < "$WORK/$tag.marks")" = "$((N + N6 + 2))" ]
  check "$tag: the kernel refused its routes, installed all others" settle "$((N + N6))"
  sleep 1
  C show route | marks > "$WORK/$tag.done"
  table > "$WORK/$tag.table"
  C down >/dev/null
  check "$tag: bird went down" gone
  check "$tag: none of bird's routes left after down" [ "$(ours)" = 0 ]
}

run_marks s "$STOCK_BIN" "" || finish
cp "$WORK/b.log" "$WORK/marks.stock.log"
errlog_since "$WORK/b.log" > "$WORK/err.stock.marks"
check "stock: no route of s4 and s6 is '!' right after the enable" [ "$(bangs "$WORK/s.marks")" = 0 ]
check "stock: the refused routes are '!'" [ "$(refused_marks "$WORK/s.done" | grep -c ' !$')" = 3 ]
check "stock: the late refused route was '!' at once" grep -q " !$" "$WORK/s.late"

run_marks p "$BIN" "scan slice 1 s;" LD_PRELOAD="$SHIM" NLF_SEND_DELAY_US=100000 || finish
echo "  p: routes waiting for the kernel: ${W0:-?} before show route, ${W1:-?} after, ${W2:-?} after enabling late"
check "p: the writes were still pending when show route had listed all routes" [ "${W1:-0}" -gt 0 ]
check "p: no pending route marked '!' ($(bangs "$WORK/p.marks") are)" [ "$(bangs "$WORK/p.marks")" = 0 ]
check "p: show route's marks while the writes were pending are stock's" cmp -s "$WORK/p.marks" "$WORK/s.marks"
cmp -s "$WORK/p.marks" "$WORK/s.marks" || diff "$WORK/s.marks" "$WORK/p.marks" | head -5
late_waited() { [ "${W2:-0}" -gt 0 ] && grep -q " \*$" "$WORK/p.late"; }
check "p: the late refused route '*' while its write waited" late_waited
check "p: the refused routes are '!' once answered" [ "$(refused_marks "$WORK/p.done" | grep -c ' !$')" = 3 ]
check "p: marks once the writes are answered are stock's" cmp -s "$WORK/p.done" "$WORK/s.done"
check "p: kernel table once the writes are answered is stock's" cmp -s "$WORK/p.table" "$WORK/s.table"
check "p: the refusals are logged with the route" grep -q "Netlink: Invalid argument.*198.51.101.0/24" "$WORK/b.log"
errlog_since "$WORK/b.log" > "$WORK/err.p.marks"
new=$(errlog_extra "$WORK/err.p.marks" "$WORK/err.stock.marks")
check "p: the marks run logged no error that stock's did not" [ -z "$new" ]
[ -z "$new" ] || head -5 <<< "$new" | sed 's/^/    /'

# ------------------------------------------------------------------ errors
# Foreign routes via d0 come and go in table 100 while a bird stops: their
# notifications arrive after the device protocol has dropped the interfaces
: > "$WORK/fadd4"; : > "$WORK/fadd6"
for i in $(seq 0 499); do
  echo "route add 198.18.$((i / 256)).$((i % 256))/32 dev d0 table 100 proto static" >> "$WORK/fadd4"
  printf 'route add 2001:db8:ff00:%x::/64 dev d0 table 100 proto static\n' "$i" >> "$WORK/fadd6"
done
sed 's/^route add/route del/' "$WORK/fadd4" > "$WORK/fdel4"; sed 's/^route add/route del/' "$WORK/fadd6" > "$WORK/fdel6"
churn_start() {
  rm -f "$WORK/churn.stop"
  ( while [ ! -e "$WORK/churn.stop" ]; do
      ip -n "$NS" -force -batch "$WORK/fadd4"; ip -n "$NS" -6 -force -batch "$WORK/fadd6"
      ip -n "$NS" -force -batch "$WORK/fdel4"; ip -n "$NS" -6 -force -batch "$WORK/fdel6"
    done ) >/dev/null 2>&1 &
  CHURN=$!
}
churn_stop() {
  touch "$WORK/churn.stop"; wait "$CHURN" 2>/dev/null
  ip -n "$NS" -force -batch "$WORK/fdel4" >/dev/null 2>&1; ip -n "$NS" -6 -force -batch "$WORK/fdel6" >/dev/null 2>&1
}
# step TAG STEP -- the step's errors (and kernel table) kept; patched: compared with stock's
step() {
  local tag=$1 st=$2 new
  errlog_since "$WORK/b.log" > "$WORK/err.$tag.$st"; errlog_mark "$WORK/b.log"
  table > "$WORK/table.$tag.$st"
  [ "$tag" = p ] || return 0
  new=$(errlog_extra "$WORK/err.p.$st" "$WORK/err.s.$st")
  check "p: $st logged no error that stock's $st did not" [ -z "$new" ]
  [ -z "$new" ] || head -5 <<< "$new" | sed 's/^/    /'
  check "p: kernel table after $st is stock's" cmp -s "$WORK/table.p.$st" "$WORK/table.s.$st"
}

# run_errors TAG BINDIR
run_errors() {
  local tag=$1 b=$2
  ns_up
  run_bird "$b" "$WORK/errors.conf" "" || { bad "$tag: bird starts"; cat "$WORK/b.log"; return 1; }
  check "$tag: routes installed" settle "$((N + N6))"
  sleep 2; step "$tag" start
  C restart k4 >/dev/null; C restart k6 >/dev/null
  sleep 1
  check "$tag: routes installed again after restart" settle "$((N + N6))"
  sleep 2; step "$tag" restart
  sed "s/@KOPTS@//" "$WORK/rename.conf" > "$WORK/b.conf"; C configure >/dev/null
  sleep 1
  check "$tag: routes installed by the renamed protocol" settle "$((N + N6))"
  check "$tag: the renamed protocol is up" grep -qE "^k4b +Kernel +master4 +up" <<< "$(C show protocols k4b)"
  sleep 2; step "$tag" rename
  churn_start
  C down >/dev/null
  check "$tag: bird went down (birdc down)" gone
  churn_stop
  check "$tag: none of bird's routes left after down" [ "$(ours)" = 0 ]
  step "$tag" down
  run_bird "$b" "$WORK/errors.conf" "" || { bad "$tag: bird starts again"; return 1; }
  check "$tag: routes installed (before SIGTERM)" settle "$((N + N6))"
  sleep 2; errlog_mark "$WORK/b.log"
  churn_start
  kill -TERM "$PID"
  check "$tag: bird went down (SIGTERM)" gone
  churn_stop
  check "$tag: none of bird's routes left after SIGTERM" [ "$(ours)" = 0 ]
  step "$tag" sigterm
}

run_errors s "$STOCK_BIN"
cat "$WORK"/err.s.* 2>/dev/null
run_errors p "$BIN"
grep -h "Flush done" "$WORK/b.log.old" "$WORK/b.log" 2>/dev/null | tail -n 4
finish
