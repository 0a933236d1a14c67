#!/bin/bash
# ROA validation as route servers use it: bird imports full IPv4 and IPv6
# tables from GoBGP through an import filter that calls roa_check() against
# ROA tables of real size, stock and bloombird alternated, with and without
# "trie on" in the ROA tables, with "lpm engine simd" in bloombird's (and a
# baseline that loads the ROA tables but does not check). Prints medians and writes build/bench/roa.md.
#
#   tests/e2e/roa-bench.sh [runs]        as root, after make && make stock
#
# Env: ROA_RUNS       runs per build and variant (default 3; the argument wins)
#      ROA_VARIANTS   any of "none off on lpm" (default all four; lpm: the ROA
#                     tables with "lpm engine simd" in bloombird, stock as off)
#      ROA_CPU        CPU for bird (default 1; the rig and GoBGP get the other)
#      ROA_PERF       1: profile bird over each IPv4 import (perf record, cpu-clock
#                     samples with call graphs) into RUN/DIR/perf4.data and print
#                     its top symbols (for finding where CPU time goes, not for
#                     the figures: sampling costs bird a little CPU)
#      ROA_CALLGRIND  1: bird runs under callgrind, counting the instructions
#                     it executes inside bgp_rx() (decoding the UPDATEs, the
#                     import filter with its roa_check(), rte_update(), the
#                     tables): an exact count of the import's work, the same
#                     in every run, where this VM has no hardware counters.
#                     Dumped after each family (IPv4, IPv6) and printed per
#                     route; wall and CPU times of such runs are valgrind's
#      ROA_MAX_OTHER  a run during which other processes (not niced ones) took
#                     more CPU seconds than this on bird's CPU is repeated once
#                     (default 1.0); niced ones are reported
#
# The rig: namespaces bb-roa-feed (gobgpd, fed once by tests/e2e/feeder) and
# bb-roa-dut (bird, started afresh for every run, same addresses for both
# builds). Per run: bird loads the ROA tables from a generated static
# configuration, then its BGP sessions are enabled; measured are the time
# from both sessions Established to both full tables, bird's CPU seconds over
# that interval (/proc/PID/stat utime + stime), its RSS at full table, and
# the verdict counts. The verdicts are checked, not measured: identical
# between the builds, the runs, the variants, the import-time marks and a
# show-time roa_check(), and equal to an independent computation
# (tests/e2e/roa/mkroa.py). Data provenance: tests/e2e/roa/mkroa.py and the
# "ROA data" section of the output.
#
# Part of bloombird. Can be freely distributed and used under the terms of
# the GNU GPL, version 2 or any later version.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rig.sh"
. "$HERE/roa/bird.conf.sh"

RUNS=${1:-${ROA_RUNS:-3}}
VARIANTS=${ROA_VARIANTS:-none off on lpm}
BIRD_CPU=${ROA_CPU:-1}
NCPU=$(nproc)   # before the rig pins itself
MAX_OTHER=${ROA_MAX_OTHER:-1.0}
PERF=${ROA_PERF:-0}
CALLGRIND=${ROA_CALLGRIND:-0}
RUN=$RIG_TOP/build/roa-bench
DATA=$RUN/data
OUT=$RIG_TOP/build/bench/roa.md
BIN=$RIG_TOP/build/bin
SBIN=$RIG_TOP/build/stock/bin
FEED=bb-roa-feed
DUT=bb-roa-dut
V4=$RIG_DATA/ipv4/as3856-feed-2015.v4.nh-aspath.txt.xz
HZ=$(getconf CLK_TCK)
# Private 4-byte ASes found in no path of the data: with the rig's 65002 bird
# would drop 17 AS3856 routes whose real paths hold 65002 (AS loop).
FEED_AS=4200000001
BIRD_AS=4200000002

case "$RUNS" in ''|*[!0-9]*|0) echo "usage: $0 [runs]  (runs >= 1)" >&2; exit 2 ;; esac
for v in $VARIANTS; do
  case "$v" in none|off|on|lpm) ;; *) echo "roa-bench: unknown variant '$v' (none, off, on, lpm)" >&2; exit 2 ;; esac
done
[ "$(id -u)" = 0 ] || { echo "roa-bench: needs root (network namespaces)" >&2; exit 1; }
for b in "$BIN" "$SBIN"; do
  [ -x "$b/bird" ] && [ -x "$b/birdc" ] || { echo "roa-bench: no $b/bird: run make && make stock" >&2; exit 1; }
done
for f in "$V4" "$RIG_DATA"/roa/rpki-global-2017-06-01.v{4,6}.tsv.xz "$RIG_DATA/ipv4/routeviews-2008.v4.origin.txt.xz" \
  "$RIG_DATA/ipv6/tier1-2023.v6.txt.xz" "$RIG_DATA/updates/ris-updates-20190101-0000.bgpdump-m.txt.gz"; do
  [ -f "$f" ] || { echo "roa-bench: missing $f" >&2; exit 1; }
done

# Only our own processes and namespaces: the rig's teardown would take every bb-*.
cleanup() {
  local pf n
  for pf in "$RUN"/*.pid "$RUN"/*/*.pid; do
    [ -f "$pf" ] || continue
    kill "$(cat "$pf")" 2>/dev/null; sleep 0.2; kill -9 "$(cat "$pf")" 2>/dev/null; rm -f "$pf"
  done
  for n in "$FEED" "$DUT"; do
    ip netns list 2>/dev/null | grep -q "^$n\b" || continue
    ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$n" 2>/dev/null
  done
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$RUN"
cleanup
find "$RUN" -mindepth 1 -maxdepth 1 ! -name data -exec rm -rf {} +
if [ "$NCPU" -gt 1 ]; then   # the rig, birdc and GoBGP off bird's CPU
  taskset -pc "$( [ "$BIRD_CPU" = 0 ] && echo 1 || echo 0 )" $$ >/dev/null || exit 1
fi

# ------------------------------------------------------------------ data
if [ ! -s "$DATA/expected.txt" ] || [ "$HERE/roa/mkroa.py" -nt "$DATA/expected.txt" ]; then
  rig_log "deriving ROA tables, the IPv6 feed and the expected verdicts (tests/e2e/roa/mkroa.py)"
  python3 "$HERE/roa/mkroa.py" --data "$RIG_DATA" --out "$DATA" --feeder-as "$FEED_AS" || exit 1
fi
read -r _ X4V X4I X4U < <(grep '^ipv4 ' "$DATA/expected.txt")
read -r _ X6V X6I X6U < <(grep '^ipv6 ' "$DATA/expected.txt")
WANT4=$((X4V + X4I + X4U)) WANT6=$((X6V + X6I + X6U))
NROA4=$(wc -l < "$DATA/roa4.conf") NROA6=$(wc -l < "$DATA/roa6.conf")
echo "== ROA data"
cat "$DATA/provenance.txt"

# ------------------------------------------------------------------ rig
rig_build_feeder || exit 1
rig_ns "$FEED" "$DUT"
rig_link "$FEED" bb-down 10.255.0.1/30 fdbb::1/64 "$DUT" bb-up 10.255.0.2/30 fdbb::2/64
rig_gobgpd "$FEED" "$RUN" "$FEED_AS" 10.255.0.1 10.255.0.2 "$BIRD_AS" fdbb::2 "$BIRD_AS" || exit 1
rig_log "feeding GoBGP: $(basename "$V4") ($WANT4) and the tier-1 IPv6 table ($WANT6)"
rig_feed "$FEED" "$V4" -nh4 10.255.0.1 > "$RUN/feed4.out" || { echo "roa-bench: IPv4 feed failed" >&2; exit 1; }
rig_feed "$FEED" "$DATA/feed6.txt" -nh6 fdbb::1 > "$RUN/feed6.out" || { echo "roa-bench: IPv6 feed failed" >&2; exit 1; }
for fam in ipv4:$WANT4 ipv6:$WANT6; do
  n=$(rig_rib_count "$FEED" "${fam%:*}")
  [ "$n" = "${fam#*:}" ] || { echo "FAIL GoBGP holds $n ${fam%:*} prefixes, want ${fam#*:}" >&2; exit 1; }
done

# ------------------------------------------------------------------ one run
cli() { "$CUR_BIN/birdc" -s "$CUR_DIR/bird.ctl" "$@" 2>/dev/null; }
# Polled, so cheap on the rig's CPU: bash builtins only.
# cpu_ns PID -- CPU time of all threads of PID, ns (schedstat: exact, not ticks)
cpu_ns() { local f a s=0; for f in /proc/"$1"/task/*/schedstat; do read -r a _ < "$f"; s=$((s + a)); done; echo $s; }
# busy_ns CPU -- "<user + system> <nice>": time CPU spent in processes at
# nice 0 or below and in niced ones (not irq, softirq, idle), ns (/proc/stat)
busy_ns() { local c u n y; while read -r c u n y _; do
  [ "$c" = "cpu$1" ] && { echo "$(( (u + y) * 1000000000 / HZ )) $(( n * 1000000000 / HZ ))"; return; }; done < /proc/stat; }
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
ns_s() { awk -v n="$1" 'BEGIN {printf "%.3f", n / 1e9}'; }

# feeder_state FAMILY -- "<1 if Established> <routes imported>" in one CLI call
feeder_state() {
  cli show protocols all "feeder$1" | awk '
    /^feeder/ { e = ($0 ~ /Established/) }
    /Routes:/ { r = $2 }
    END { printf "%d %d\n", e, r }'
}
static_routes() { cli show protocols all "$1" | awk '/Routes:/ {print $2; exit}'; }
# route_count TABLE EXPR -- routes of TABLE for which EXPR holds
route_count() { cli show route table "$1" where "$2" count | sed -nE 's/^([0-9]+) of .*/\1/p' | awk '{print $1 + 0}'; }
ms_s() { awk -v m="$1" 'BEGIN {printf "%.2f", m / 1000}'; }

# import_family FAMILY WANT -- enables feeder<FAMILY>, waits for Established and for
# WANT routes; sets up_ms, imp_ms, imp_cpu (CPU seconds over the import)
import_family() {
  local f=$1 want=$2 t_en t_est c_est e n last="" still=0
  t_en=$(now_ms)
  cli enable "feeder$f" >/dev/null
  for _ in $(seq 1200); do
    read -r e n < <(feeder_state "$f")
    [ "$e" = 1 ] && break
    sleep 0.05
  done
  [ "$e" = 1 ] || { echo "FAIL $CUR_TAG: feeder$f not Established in 60 s" >&2; return 1; }
  t_est=$(now_ms); c_est=$(cpu_ns "$CUR_PID")
  up_ms=$((t_est - t_en))
  for _ in $(seq 6000); do
    read -r e n < <(feeder_state "$f")
    echo "$f $(( $(now_ms) - t_est )) $n $(( $(cpu_ns "$CUR_PID") - c_est ))" >> "$CUR_DIR/progress"
    [ "$n" -ge "$want" ] && break
    if [ "$n" = "$last" ]; then still=$((still + 1)); [ $still -ge 150 ] && break; else still=0; fi
    last=$n
    sleep 0.1
  done
  imp_ms=$(( $(now_ms) - t_est )); imp_cpu=$(ns_s $(( $(cpu_ns "$CUR_PID") - c_est )))
  [ "$n" = "$want" ] || { echo "FAIL $CUR_TAG: bird imported $n IPv$f routes, GoBGP holds $want" >&2; return 1; }
}

# walk TABLE EXPR -- "<count> <bird CPU ns>" of one counting walk
walk() {
  local c0 n
  c0=$(cpu_ns "$CUR_PID")
  n=$(route_count "$1" "$2")
  echo "$n $(( $(cpu_ns "$CUR_PID") - c0 ))"
}

# verdicts TABLE ROATABLE -- "v/i/u v/i/u plain_s check_s": the verdicts as
# marked at import (preference) and as roa_check() says at show time, and the
# least bird CPU of one walk of the table for each kind (three walks each)
verdicts() {
  local t=$1 q="roa_check($2, net, bgp_path.last)" e n c m="" s="" pmin="" cmin=""
  for e in 'preference = 101' 'preference = 102' 'preference = 100'; do
    read -r n c < <(walk "$t" "$e")
    m="$m/$n"; [ -z "$pmin" ] || [ "$c" -lt "$pmin" ] && pmin=$c
  done
  for e in "$q = ROA_VALID" "$q = ROA_INVALID" "$q = ROA_UNKNOWN"; do
    read -r n c < <(walk "$t" "$e")
    s="$s/$n"; [ -z "$cmin" ] || [ "$c" -lt "$cmin" ] && cmin=$c
  done
  echo "${m#/} ${s#/} $(ns_s "$pmin") $(ns_s "$cmin")"
}

# start_callgrind -- bird under callgrind (ROA_CALLGRIND=1), counting only
# inside bgp_rx(); about 50x slower where it counts, so a longer wait
start_callgrind() {
  ip netns exec "$DUT" valgrind --tool=callgrind --cache-sim=no --collect-atstart=no --toggle-collect=bgp_rx \
    --callgrind-out-file="$CUR_DIR/callgrind.out" "$CUR_BIN/bird" -f -c "$CUR_DIR/bird.conf" \
    -s "$CUR_DIR/bird.ctl" > "$CUR_DIR/bird.log" 2>&1 &
  echo $! > "$CUR_DIR/bird.pid"
  for _ in $(seq 1200); do cli show status >/dev/null && return 0; sleep 0.1; done
  echo "FAIL $CUR_TAG: bird did not come up under callgrind:" >&2; tail "$CUR_DIR/bird.log" >&2; return 1
}

# callgrind_part NAME -- dumps bird's counts since the last dump (callgrind
# zeroes them at a dump) and prints the instructions counted in them
callgrind_part() {
  local f before after
  before=$(ls "$CUR_DIR"/callgrind.out.* 2>/dev/null | wc -l)
  callgrind_control -d "$1" "$CUR_PID" > "$CUR_DIR/callgrind-$1.ctl" 2>&1
  for _ in $(seq 600); do
    after=$(ls "$CUR_DIR"/callgrind.out.* 2>/dev/null | wc -l)
    [ "$after" -gt "$before" ] && break
    sleep 0.1
  done
  f=$(ls -t "$CUR_DIR"/callgrind.out.* 2>/dev/null | head -1)
  [ -n "$f" ] && [ "$after" -gt "$before" ] || { echo "FAIL $CUR_TAG: no callgrind dump for $1" >&2; return 1; }
  sleep 0.5   # written in one go at the dump; let it finish
  mv "$f" "$CUR_DIR/callgrind.$1"
  awk '/^(summary|totals):/ {print $2; exit}' "$CUR_DIR/callgrind.$1"
}

# one_run RUN BUILD VARIANT -- measures, writes a line of key=value to result
one_run() {
  local r=$1 x=$2 v=$3 t0 l_ms rss up_ms imp_ms imp_cpu m4 s4 w4p w4c m6 s6 w6p w6c
  CUR_BIN=$SBIN; [ "$x" = bloombird ] && CUR_BIN=$BIN
  CUR_DIR=$RUN/$x-$v-$r CUR_TAG="run $r $x $v"
  mkdir -p "$CUR_DIR"
  cp "$RUN/bird-$v-$x.conf" "$CUR_DIR/bird.conf"
  t0=$(now_ms)
  if [ "$CALLGRIND" = 1 ]; then
    start_callgrind || return 1
  else
    rig_bird bird "$DUT" "$CUR_BIN" "$CUR_DIR/bird.conf" "$CUR_DIR" || return 1
  fi
  CUR_PID=$(cat "$CUR_DIR/bird.pid")
  [ "$NCPU" -gt 1 ] && { taskset -a -pc "$BIRD_CPU" "$CUR_PID" >/dev/null || return 1; }
  for _ in $(seq 600); do
    [ "$(static_routes roa4s)/$(static_routes roa6s)" = "$NROA4/$NROA6" ] && break
    sleep 0.05
  done
  l_ms=$(( $(now_ms) - t0 ))
  [ "$(static_routes roa4s)/$(static_routes roa6s)" = "$NROA4/$NROA6" ] || { echo "FAIL $CUR_TAG: ROA tables not filled" >&2; return 1; }
  local b0 n0 b1 n1 c0
  read -r b0 n0 < <(busy_ns "$BIRD_CPU"); c0=$(cpu_ns "$CUR_PID")
  local perf_pid=""
  if [ "$PERF" = 1 ]; then
    perf record -q -e cpu-clock -F 1999 -g -p "$CUR_PID" -o "$CUR_DIR/perf4.data" 2>"$CUR_DIR/perf4.err" &
    perf_pid=$!
    sleep 0.5
  fi
  import_family 4 "$WANT4" || return 1
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null
    perf report -i "$CUR_DIR/perf4.data" --stdio --no-children --sort symbol 2>/dev/null |
      grep -E '^ +[0-9.]+%' | head -25 > "$CUR_DIR/perf4.top"
    echo "  $CUR_TAG: top symbols over the IPv4 import (perf, cpu-clock)"; sed 's/^/    /' "$CUR_DIR/perf4.top"
  fi
  local up4=$up_ms imp4=$imp_ms cpu4=$imp_cpu ins4="" ins6=""
  [ "$CALLGRIND" = 1 ] && { ins4=$(callgrind_part ipv4) || return 1; }
  import_family 6 "$WANT6" || return 1
  [ "$CALLGRIND" = 1 ] && { ins6=$(callgrind_part ipv6) || return 1; }
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$CUR_PID/status")
  read -r m4 s4 w4p w4c < <(verdicts master4 r4)
  read -r m6 s6 w6p w6c < <(verdicts master6 r6)
  read -r b1 n1 < <(busy_ns "$BIRD_CPU")
  local foreign=$(( b1 - b0 - ($(cpu_ns "$CUR_PID") - c0) )) niced=$((n1 - n0))
  cli show memory > "$CUR_DIR/memory"
  [ "$x" = bloombird ] && for t in r4 r6 master4 master6; do cli show fib "$t"; done > "$CUR_DIR/fib"
  echo "run=$r build=$x variant=$v load=$l_ms up4=$up4 imp4=$imp4 cpu4=$cpu4 up6=$up_ms imp6=$imp_ms" \
    "cpu6=$imp_cpu rss=$rss mark4=$m4 show4=$s4 walkplain4=$w4p walkroa4=$w4c" \
    "mark6=$m6 show6=$s6 walkplain6=$w6p walkroa6=$w6c foreign=$(ns_s "$foreign") niced=$(ns_s "$niced")" \
    "cpus=$(awk '/Cpus_allowed_list/ {print $2}' "/proc/$CUR_PID/status")" \
    ${ins4:+"instr4=$ins4 instr6=$ins6"} > "$CUR_DIR/result"
  [ -n "$ins4" ] && echo "  $CUR_TAG: instructions in bgp_rx(), callgrind: IPv4 import $ins4, IPv6 import $ins6"
  printf '  %-24s load %4d ms | IPv4 import %6s s CPU %5s s | IPv6 import %6s s CPU %5s s | RSS %6d KiB | walk plain/roa_check v4 %s/%s v6 %s/%s s | other CPU %s s, niced %s s | %s %s\n' \
    "$CUR_TAG" "$l_ms" "$(ms_s "$imp4")" "$cpu4" "$(ms_s "$imp_ms")" "$imp_cpu" "$rss" "$w4p" "$w4c" "$w6p" "$w6c" \
    "$(ns_s "$foreign")" "$(ns_s "$niced")" "$s4" "$s6"
  kill "$CUR_PID"
  for _ in $(seq 100); do kill -0 "$CUR_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$CUR_PID" 2>/dev/null
  wait "$CUR_PID" 2>/dev/null
  rm -f "$CUR_DIR/bird.pid"
}

# ------------------------------------------------------------------ runs
for v in $VARIANTS; do
  for x in bloombird stock; do roa_bird_conf "$v" "$DATA" "$FEED_AS" "$BIRD_AS" "$x" > "$RUN/bird-$v-$x.conf"; done
done
rig_log "$RUNS runs x variants ($VARIANTS) x builds, alternated; bird on CPU $BIRD_CPU"
fails=0
for r in $(seq "$RUNS"); do
  order="bloombird stock"; [ $((r % 2)) = 0 ] && order="stock bloombird"
  for v in $VARIANTS; do
    for x in $order; do
      d=$RUN/$x-$v-$r
      for attempt in 1 2; do
        one_run "$r" "$x" "$v"; rc=$?
        [ -f "$d/bird.pid" ] && { kill -9 "$(cat "$d/bird.pid")" 2>/dev/null; rm -f "$d/bird.pid"; }
        [ $rc = 0 ] || { fails=$((fails + 1)); break; }
        other=$(sed -E 's/.*foreign=([0-9.-]+).*/\1/' "$d/result")
        if [ $attempt = 1 ] && awk -v o="$other" -v m="$MAX_OTHER" 'BEGIN {exit !(o > m)}'; then
          echo "  (other processes took $other s on bird's CPU during this run: repeating it)"
          echo "run $r $x $v: other processes took $other s on bird's CPU" >> "$RUN/repeated.txt"
          rm -rf "$d.noisy"; mv "$d" "$d.noisy"; continue
        fi
        cat "$d/result" >> "$RUN/results.txt"
        break
      done
    done
  done
done

echo
mkdir -p "$(dirname "$OUT")"
python3 "$HERE/roa/report.py" --results "$RUN/results.txt" --data "$DATA" --variants "$VARIANTS" \
  --runs "$RUNS" --out "$OUT" --cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
rc=$?
[ "$fails" = 0 ] || { echo "FAIL $fails runs did not complete"; rc=1; }
exit $rc
