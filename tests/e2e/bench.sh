#!/bin/bash
# Benchmark mode of the rig: the patched (p) and the stock (s) bird take the
# full tier-1 tables (IPv4 902k + IPv6 160k) from GoBGP and export them to
# kernel table 100, in alternated runs (p s p s ...), one bird at a time,
# its main thread pinned to one CPU (GoBGP and the CLI sampler on the other;
# bloombird's Netlink writer thread may run on both). Each run:
#
#   install   start bird; Established -> full table in bird -> complete
#             kernel table; bird CPU and RSS then
#   scans     SCAN_WINDOW s of periodic kernel scans (scan time 20)
#   restart   birdc restart of both kernel protocols (flush, then install)
#   gr        birdc graceful restart, bird -R: kernel routes kept, GoBGP's
#             End-of-RIB ends the recovery, the kernel is scanned against it
#   down      birdc down (kernel tables flushed)
#
# (BENCH_PHASES=install: install and down only. With BENCH_KRT_OPTS="netlink
# async off;" both builds sync the kernel with stock's code, and what is left
# between them is the FIB filter's cost at daemon level. BENCH_PHASES=import:
# install and down with kernel export none in both builds, bird's own import
# work alone, without the kernel's time per route. make bench-daemon runs
# both.)
#
# BENCH_SOURCE=bird: the tables come from a stock bird (static blackhole
# routes, announced over the same eBGP sessions with graceful restart)
# instead of GoBGP. On a 2-core VM GoBGP needs most of a CPU for some 6-10 s
# to send the tables, which makes it the floor of the install: bloombird's
# kernel table is then complete about as soon as the feed allows, and what
# the kernel sync itself gains does not show. A bird source sends the same
# prefixes in a second or two, so the install measures the receiving bird
# and its kernel sync, as with a peer on another machine.
#
# and, once per invocation, the feed's floor: stock bird with kernel export
# off takes the same tables (Established -> full table), which bounds the
# install time of any kernel sync in this rig; and the kernel's floor: no
# bird at all, the same routes (shuffled, as BGP brings them) written into
# kernel table 100 of the DUT namespace by tests/e2e/nlfill.c, batches of
# 512 per sendmsg(), then deleted: the kernel's own time per route, which
# no kernel sync can go below.
#
# and the longest CLI stall of each phase: "show status" on bird's control
# socket every 10 ms (tests/e2e/clistall.py), the longest answer whose
# command was sent during the phase, less the sampler's own wait for its
# CPU. Prints medians (and every run) and writes them to build/bench/e2e.md.
# Numbers are printed, not asserted.
#
#   bench.sh [RUNS]      (default BENCH_RUNS or 3 runs of each build)
#   BENCH_REPORT_ONLY=1 bench.sh   the report of the last run's files again
# Env: BENCH_DEBUG (1: protocol events, events and loop cycles over
#      BENCH_DEBUG_LIMIT/BENCH_DEBUG_WATCHDOG ms, 30/40 by default,
#      logged), BENCH_BIRD_CPU (1), BENCH_OTHER_CPU (0), BENCH_WRITER_CPUS (both:
#      bird's threads other than the main one), BENCH_SCAN_WINDOW (45 s),
#      BENCH_V4 / BENCH_V6 (tables), BENCH_BUILDS ("p s"), BENCH_KRT_OPTS
#      (options added to bloombird's kernel protocols, e.g. "netlink thread off;"),
#      BENCH_PHASES ("all", "install" or "import"), BENCH_OUT (build/bench/e2e.md),
#      BENCH_CALLGRIND (1: bird runs under callgrind, its instructions are
#      counted: exact where this VM's wall time and CPU time are not),
#      BENCH_SAMPLER_RT (1: the CLI sampler runs SCHED_FIFO, so that its own
#      wait for the CPU it shares with GoBGP does not count as bird's stall;
#      0: normal priority, as before 2026-11-24 afternoon), BENCH_SOURCE
#      (gobgp or bird, see above).
set -uo pipefail
. "$(dirname "$0")/rig.sh"

RUNS=${1:-${BENCH_RUNS:-3}}
BUILDS=${BENCH_BUILDS:-p s}
RUN=$RIG_TOP/build/bench/run
OUT=${BENCH_OUT:-$RIG_TOP/build/bench/e2e.md}
PHASES=${BENCH_PHASES:-all}
case "$PHASES" in all|install|import) ;; *) echo "bench: BENCH_PHASES must be all, install or import" >&2; exit 2 ;; esac
BIN=$RIG_TOP/build/bin
SBIN=$RIG_TOP/build/stock/bin
V4=${BENCH_V4:-$RIG_DATA/ipv4/tier1-2023.v4.txt.xz}
V6=${BENCH_V6:-$RIG_DATA/ipv6/tier1-2023.v6.txt.xz}
CPU_BIRD=${BENCH_BIRD_CPU:-1}
CPU_OTHER=${BENCH_OTHER_CPU:-0}
SCAN_WINDOW=${BENCH_SCAN_WINDOW:-45}
CPU_WRITER=${BENCH_WRITER_CPUS:-$CPU_OTHER,$CPU_BIRD}
FEED=bb-feed
DUT=bb-dut
SOURCE=${BENCH_SOURCE:-gobgp}
case "$SOURCE" in gobgp|bird) ;; *) echo "bench: BENCH_SOURCE must be gobgp or bird" >&2; exit 2 ;; esac

# ------------------------------------------------------------------ report
# report -- medians of $METRICS and the digests of $TABLES into $OUT
report() {
mkdir -p "$(dirname "$OUT")"
python3 - "$METRICS" "$TABLES" "$OUT" "$RUNS" "$(basename "$V4")" "$(basename "$V6")" "$WANT4" "$WANT6" "$(nproc --all)" "${BENCH_KRT_OPTS:-}" "$PHASES" "$SOURCE" <<'EOF'
import statistics, sys
metrics, tables, out, runs, v4, v6, n4, n6, ncpu, krt_opts, phases, source = sys.argv[1:]
rows = [l.rstrip("\n").split("\t") for l in open(metrics) if l.strip()]
val = {}
for x, i, k, v in rows:
    val.setdefault(k, {}).setdefault(x, []).append(float(v))
names = [
    ("est_full_s", "Established to full table in bird (s)", 0.001),
    ("est_kernel_s", "Established to complete kernel table (s)", 0.001),
    ("cpu_s", "bird CPU seconds at complete kernel table", 1),
    ("rss_mib", "bird RSS at complete kernel table (MiB)", 1),
    ("writer_cpu_s", "Netlink writer thread CPU at complete kernel table (s): the kernel's route inserts", 1),
    ("writer_wait_s", "Netlink writer thread waiting for a CPU (s)", 1),
    ("stall_install_ms", "longest CLI stall, initial install (ms)", 1),
    ("stall_scan_ms", "longest CLI stall, periodic scans (ms)", 1),
    ("restart_kernel_s", "birdc restart of kernel protocols to complete kernel table (s)", 0.001),
    ("stall_restart_ms", "longest CLI stall, restart of kernel protocols (ms)", 1),
    ("gr_done_s", "graceful restart: command to recovery done (s)", 0.001),
    ("stall_gr_ms", "longest CLI stall, graceful restart and its end (ms)", 1),
    ("down_s", "birdc down incl. kernel flush (s)", 0.001),
    ("instr_m", "bird's instructions in bgp_rx() (the import: decoding, filters, tables, FIB), callgrind (10^6)", 1),
    ("dropped_warnings", "'Kernel dropped some netlink messages' warnings per run", 1),
    ("write_failures", "kernel refusals logged per run (File exists, No such process; rate-limited)", 1),
]
fl = val.get("floor_full_s", {}).get("f", [])
fc = val.get("floor_cpu_s", {}).get("f", [])
k4 = val.get("kfloor4_s", {}).get("k", [])
k6 = val.get("kfloor6_s", {}).get("k", [])
def fmt(v):
    return "%.1f" % v if abs(v) < 100 else "%.0f" % v
lines = ["| metric | bloombird | stock | stock / bloombird | bloombird runs | stock runs |",
         "| --- | ---: | ---: | ---: | --- | --- |"]
for k, label, scale in names:
    d = val.get(k, {})
    if not d:
        continue   # a phase not run (BENCH_PHASES)
    p = [v * scale for v in d.get("p", [])]
    s = [v * scale for v in d.get("s", [])]
    mp = statistics.median(p) if p else None
    ms = statistics.median(s) if s else None
    ratio = ("%.3fx" if k == "instr_m" else "%.2fx") % (ms / mp) if mp and ms and mp > 0 else ""
    lines.append("| %s | %s | %s | %s | %s | %s |" % (label, fmt(mp) if mp is not None else "-",
        fmt(ms) if ms is not None else "-", ratio, " ".join(fmt(v) for v in p), " ".join(fmt(v) for v in s)))
dig = {}
for l in open(tables):
    if l.strip():
        x, i, ph, h = l.split()
        dig.setdefault(ph, {}).setdefault(x, set()).add(h)
for ph, label in (("install", "initial install"), ("restart", "restart of kernel protocols"), ("gr", "graceful restart end")):
    d = dig.get(ph, {})
    if not d:
        continue
    p, s = d.get("p", set()), d.get("s", set())
    same = "yes" if p and s and p == s and len(p) == 1 else ("no" if p and s else "-")
    lines.append("| kernel table 100 identical to stock's after %s (digests) | %s | %s | | %s | %s |" %
                 (label, same, same, " ".join(sorted(p)), " ".join(sorted(s))))
head = ("End-to-end benchmark (tests/e2e/bench.sh): %s (%s prefixes) + %s (%s) from %s, "
        "kernel table 100, medians of %s alternated runs per build, bird pinned to one CPU of %s; "
        "CLI stall = longest answer to `show status` sent every 10 ms during the phase, less the sampler's own wait for its CPU.\n\n" % (v4, n4, v6, n6,
        "GoBGP" if source == "gobgp" else "a stock bird (static routes, eBGP)", runs, ncpu))
if krt_opts:
    head += "bloombird's kernel protocols with `%s`%s.\n\n" % (krt_opts.strip(), " (stock's kernel sync code: the builds differ by the FIB filter and the LPM hooks)" if "async off" in krt_opts else "")
if phases != "all":
    head += "Phases: %s only.\n\n" % phases
if fl:
    head += ("Feed floor (stock bird, kernel export none, %d runs): Established to full table %s s, bird CPU %s s; "
             "no kernel sync can complete sooner in this rig.\n\n" % (len(fl), " ".join("%.1f" % (v / 1000) for v in fl),
             " ".join("%.1f" % v for v in fc)))
if k4 and k6:
    m4, m6 = statistics.median(k4), statistics.median(k6)
    ek = val.get("est_kernel_s", {})
    ms = statistics.median(ek["s"]) / 1000 if ek.get("s") else None
    mp = statistics.median(ek["p"]) / 1000 if ek.get("p") else None
    head += ("Kernel floor (no bird: the same routes, shuffled, written by tests/e2e/nlfill.c in batches of 512, %d runs): "
             "IPv4 %s s, IPv6 %s s; one writer needs %.1f s, two (IPv6 routes are added without RTNL) %.1f s." %
             (len(k4), " ".join("%.1f" % v for v in k4), " ".join("%.1f" % v for v in k6), m4 + m6, max(m4, m6)))
    if ms and mp:
        head += (" Complete kernel table: stock %.1f s, bloombird %.1f s (%.2fx sooner); twice as soon as stock would be %.1f s, "
                 "%s the kernel's own %.1f s." % (ms, mp, ms / mp, ms / 2, "below" if ms / 2 < max(m4, m6) else "above", max(m4, m6)))
    head += "\n\n"
open(out, "w").write(head + "\n".join(lines) + "\n")
print(head + "\n".join(lines))
EOF
echo "written to $OUT"
}

METRICS=$RUN/metrics.tsv
TABLES=$RUN/tables.tsv
if [ "${BENCH_REPORT_ONLY:-0}" = 1 ]; then   # the report of the files of the last run again
  read -r RUNS WANT4 WANT6 < "$RUN/want" || RUNS=$(cut -f2 "$METRICS" | sort -u | wc -l) WANT4=- WANT6=-
  report; exit
fi

cleanup() {
  [ -n "${SAMPLER:-}" ] && kill "$SAMPLER" 2>/dev/null
  rig_teardown "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM   # cleanup runs once, on the way out

[ "$(id -u)" = 0 ] || { echo "bench: needs root (network namespaces)" >&2; exit 1; }
for f in "$V4" "$V6"; do [ -f "$f" ] || { echo "bench: missing $f" >&2; exit 1; }; done
for b in "$BIN" "$SBIN"; do [ -x "$b/bird" ] || { echo "bench: build first (make, make stock)" >&2; exit 1; }; done
rm -rf "$RUN"; mkdir -p "$RUN"
rig_teardown "$RUN"
[ "$SOURCE" = gobgp ] && { rig_build_feeder || exit 1; }

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
bin_of() { [ "$1" = p ] && echo "$BIN" || echo "$SBIN"; }
cli() { "$(bin_of "$X")/birdc" -s "$RUN/bird.ctl" "$@" 2>/dev/null; }
conf_of() { echo "$RUN/$1.conf"; }
routes() { rig_routes "$(bin_of "$X")" "$RUN/bird.ctl" "$@"; }


# ------------------------------------------------------------------ the rig
# The harness itself (its polls, birdc, ip, the digests) stays off bird's CPU:
# reading /proc/net/fib_triestat walks the kernel's whole FIB trie, tens of
# milliseconds a time in the kernel that nothing preempts (PREEMPT_NONE
# kernels), and a poll of it every 50 ms on bird's CPU made bird's main
# thread wait for that CPU up to 110 ms at a time (seen in the sampler's
# run-delay columns). Children inherit this.
taskset -pc "$CPU_OTHER" $$ > /dev/null
rig_log "namespaces $FEED ($SOURCE) and $DUT (bird, pinned to CPU $CPU_BIRD)"
rig_ns "$FEED" "$DUT"
rig_link "$FEED" bb-down 10.255.0.1/30 fdbb::1/64 "$DUT" bb-up 10.255.0.2/30 fdbb::2/64
if [ "$SOURCE" = gobgp ]; then
  RIG_GR=1 rig_gobgpd "$FEED" "$RUN" 65001 10.255.0.1 10.255.0.2 65002 fdbb::2 65002 || exit 1
  SRC=$(cat "$RUN/gobgpd.pid")
  taskset -a -pc "$CPU_OTHER" "$SRC" >/dev/null
  rig_log "feeding $(basename "$V4") and $(basename "$V6") into GoBGP"
  rig_feed "$FEED" "$V4" -nh4 10.255.0.1 > "$RUN/feed4.out" || exit 1
  rig_feed "$FEED" "$V6" -nh6 fdbb::1 > "$RUN/feed6.out" || exit 1
  WANT4=$(rig_rib_count "$FEED" ipv4); WANT6=$(rig_rib_count "$FEED" ipv6)
else
  # a stock bird holding the tables as blackhole static routes; eBGP makes
  # its own address the next hop
  python3 - "$V4" "$V6" > "$RUN/src.conf" <<'EOF'
import lzma, sys
def table(f):
    return sorted({l.split()[0] for l in lzma.open(f, "rt") if l.strip()})
print("router id 10.255.0.1;\nprotocol device {}")
for fam, f in (("ipv4", sys.argv[1]), ("ipv6", sys.argv[2])):
    print("protocol static src_%s { %s;" % (fam, fam))
    print("\n".join("  route %s blackhole;" % p for p in table(f)))
    print("}")
print("template bgp dut { local as 65001; hold time 240; passive on; graceful restart on; graceful restart time 120; }")
print("protocol bgp dut4 from dut { neighbor 10.255.0.2 as 65002; ipv4 { import none; export all; }; }")
print("protocol bgp dut6 from dut { neighbor fdbb::2 as 65002; ipv6 { import none; export all; }; }")
EOF
  rig_log "starting the source bird with $(basename "$V4") and $(basename "$V6")"
  ip netns exec "$FEED" taskset -c "$CPU_OTHER" "$SBIN/bird" -f -c "$RUN/src.conf" -s "$RUN/src.ctl" > "$RUN/src.log" 2>&1 &
  SRC=$!; echo "$SRC" > "$RUN/src.pid"
  src_routes() { rig_routes "$SBIN" "$RUN/src.ctl" table "$1"; }
  for _ in $(seq 600); do [ "$(src_routes master6)" -gt 0 ] && break; sleep 0.2; done
  WANT4=$(src_routes master4); WANT6=$(src_routes master6)
  [ "$WANT4" -gt 0 ] && [ "$WANT6" -gt 0 ] || { echo "bench: the source bird did not come up:" >&2; tail "$RUN/src.log" >&2; exit 1; }
fi
echo "$RUNS $WANT4 $WANT6" > "$RUN/want"
rig_log "the source holds $WANT4 IPv4 and $WANT6 IPv6 prefixes"
BASE6=$(rig_kernel6 "$DUT")

cat > "$RUN/conf.in" <<EOF
log stderr all;
$([ "${BENCH_DEBUG:-0}" = 1 ] && echo "debug protocols { states, events }; debug latency on; debug latency limit ${BENCH_DEBUG_LIMIT:-30} ms; watchdog warning ${BENCH_DEBUG_WATCHDOG:-40} ms;")
router id 10.255.0.2;
graceful restart wait 120;
protocol device { scan time 10; }
protocol direct { ipv4; ipv6; interface "bb-*"; }
protocol kernel kernel4 { kernel table 100; learn off; scan time 20; graceful restart on; @KRT_OPTS@ ipv4 { export all; }; }
protocol kernel kernel6 { kernel table 100; learn off; scan time 20; graceful restart on; @KRT_OPTS@ ipv6 { export all; }; }
template bgp feeder { local as 65002; hold time 240; connect retry time 1; graceful restart on; }
protocol bgp feeder4 from feeder { neighbor 10.255.0.1 as 65001; ipv4 { import all; export none; }; }
protocol bgp feeder6 from feeder { neighbor fdbb::1 as 65001; ipv6 { import all; export none; }; }
EOF

# bloombird's (BENCH_KRT_OPTS added), stock's, and the feed's floor: stock without kernel export
sed -e "s/@KRT_OPTS@/${BENCH_KRT_OPTS:-}/" "$RUN/conf.in" > "$RUN/p.conf"
sed -e "s/@KRT_OPTS@//" "$RUN/conf.in" > "$RUN/s.conf"
sed -e '/^protocol kernel/s/export all/export none/' "$RUN/s.conf" > "$RUN/f.conf"
# BENCH_PHASES=import: no kernel export in either build (bird's own work alone)
if [ "$PHASES" = import ]; then
  sed -i -e '/^protocol kernel/s/export all/export none/' "$RUN/p.conf" "$RUN/s.conf"
fi

# bird's main thread stays on CPU_BIRD; other threads (bloombird's Netlink
# writer; stock has none) may use both CPUs
pin_threads() {
  local t
  for t in /proc/"$BIRD"/task/*; do
    t=${t##*/}
    [ "$t" = "$BIRD" ] || taskset -pc "$CPU_WRITER" "$t" > /dev/null
  done
}

start_bird() {  # start_bird [-R] -- pinned, in the DUT namespace
  local vg=() wait=100
  if [ "${BENCH_CALLGRIND:-0}" = 1 ]; then   # bird's instructions, counted (about 50x slower)
    vg=(valgrind --tool=callgrind --cache-sim=no --collect-atstart=no --toggle-collect=bgp_rx
        --callgrind-out-file="$RUN/$X$I/callgrind.out")
    wait=1200
  fi
  ip netns exec "$DUT" taskset -c "$CPU_BIRD" "${vg[@]}" "$(bin_of "$X")/bird" -f "$@" -c "$(conf_of "$X")" \
    -s "$RUN/bird.ctl" >> "$RUN/bird.log" 2>&1 &
  BIRD=$!
  for _ in $(seq "$wait"); do cli show status >/dev/null && { pin_threads; return 0; }; sleep 0.1; done
  echo "bench: bird did not come up:" >&2; tail "$RUN/bird.log" >&2; return 1
}

bird_gone() {  # wait until bird has exited
  for _ in $(seq 1200); do kill -0 "$BIRD" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}

# The kernel table holds every network bird has (polling the kernel's
# counters). The IPv4 count walks the kernel's whole trie (up to ~100 ms of
# kernel time that nothing preempts), so while fewer than 95% are in, the
# poll waits 0.5 s more: the harness keeps its CPU free for the sampler and
# bloombird's writer, and the time of the last 5% is still caught to 50 ms.
kernel_complete() {
  local n4; n4=$(rig_kernel4 "$DUT" 100)
  [ "$n4" -ge "$K4" ] && [ "$(rig_kernel6 "$DUT")" -ge $((BASE6 + K6)) ] && return 0
  [ "$n4" -lt $((K4 * 95 / 100)) ] && sleep 0.5
  return 1
}
kernel_empty() {
  [ "$(rig_kernel4 "$DUT" 100)" = 0 ] && [ "$(rig_kernel6 "$DUT")" -le "$BASE6" ]
}
wait_for() {  # wait_for SECONDS POLL_S COMMAND...
  local end=$((SECONDS + $1)) poll=$2; shift 2
  until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep "$poll"; done
}
established() { [ "$(cli show protocols '"feeder*"' | grep -c Established)" -ge "${1:-2}" ]; }
imported() { cli show protocols all "$1" | awk '/Routes:/ {print $2; exit}'; }   # cheap, unlike show route count
bgp_full() { [ "$(imported feeder4)" = "$WANT4" ] && [ "$(imported feeder6)" = "$WANT6" ]; }
kernel_flushed() { [ "$(rig_kernel4 "$DUT" 100)" -lt "$K4" ]; }

# stall FILE FROM_MS TO_MS -- longest answer to a command sent in the window,
# less the time the sampler itself waited for its CPU (third column, when
# recorded): that CPU runs the harness and GoBGP, and their time in the
# kernel is not bird's stall
stall() {
  awk -v a="$2" -v b="$3" '{ s = $1 * 1000 - $2; l = $2 - (NF >= 3 ? $3 : 0); if (s >= a && s <= b && l > m) m = l } END {printf "%.0f", m}' "$1"
}

# threads FILE -- per thread of bird and GoBGP: name, CPU time and time spent
# waiting for a CPU (schedstat, seconds): who ran, and who was kept from it
threads() {
  local p t
  for p in "$BIRD" "$SRC"; do
    for t in /proc/"$p"/task/*; do
      [ -r "$t/schedstat" ] || continue
      awk -v p="$p" -v t="${t##*/}" -v c="$(cat "$t/comm")" '{ printf "%s\t%s\t%s\t%.3f\t%.3f\n", p, t, c, $1 / 1e9, $2 / 1e9 }' "$t/schedstat"
    done
  done > "$1"
}

# ------------------------------------------------------------------ one run
: > "$METRICS"; : > "$TABLES"
put() { printf '%s\t%s\t%s\t%s\n' "$X" "$I" "$1" "$2" >> "$METRICS"; }
# table PHASE -- digest of kernel table 100 (both families, sorted) after PHASE
table() {
  [ "$X" = p ] && cli show protocols all '"kernel*"' > "$RUN/$X$I/proto.$1"   # slices, queue counters
  local h; h=$( { ns "$DUT" ip -4 route show table 100; ns "$DUT" ip -6 route show table 100; } | sort | md5sum | cut -c1-12)
  printf '%s\t%s\t%s\t%s\n' "$X" "$I" "$1" "$h" >> "$TABLES"
}

bench_run() {
  X=$1 I=$2
  local d=$RUN/$X$I t0 t_est t_full t_kern ts te tr t_done tg t_gr
  mkdir -p "$d"; : > "$RUN/bird.log"
  rig_idle "$SRC" || rig_log "the source still busy"
  rig_log "run $I: $([ "$X" = p ] && echo bloombird || echo stock)"

  # install
  t0=$(now_ms)
  start_bird || return 1
  if [ "${BENCH_CALLGRIND:-0}" = 1 ]; then   # no CLI load in the count
    SAMPLER=
  else
    # Real-time priority (BENCH_SAMPLER_RT=0: none): the sampler shares its CPU
    # with GoBGP, and its own wait for that CPU is not bird's stall
    local rt=()
    [ "${BENCH_SAMPLER_RT:-1}" = 1 ] && chrt -f 20 true 2>/dev/null && rt=(chrt -f 20)
    taskset -c "$CPU_OTHER" "${rt[@]}" python3 "$RIG_TOP/tests/e2e/clistall.py" "$RUN/bird.ctl" "$d/stall" 10 "$BIRD" &
    SAMPLER=$!
  fi
  # from the first session up: the other may come a connect retry later
  wait_for 120 0.05 established 1 || { rig_log "no session"; return 1; }
  t_est=$(now_ms)
  wait_for 120 0.05 established || { rig_log "no second session"; return 1; }
  wait_for 900 0.2 bgp_full || rig_log "bird did not get the full table"
  t_full=$(now_ms)
  K4=$(routes table master4); K6=$(routes table master6)
  if [ "$PHASES" = import ]; then   # nothing goes to the kernel
    K4=0 K6=0
  else
    wait_for 900 0.05 kernel_complete || rig_log "kernel table incomplete"
  fi
  t_kern=$(now_ms)
  put est_full_s "$(( t_full - t_est ))"
  [ "$PHASES" = import ] || put est_kernel_s "$(( t_kern - t_est ))"
  put cpu_s "$(rig_cpu "$BIRD")"
  threads "$d/threads.install"
  if [ "$X" = p ]; then   # the writer's CPU is the kernel's inserts: what no overlap can hide
    put writer_cpu_s "$(awk -F'\t' '$3 == "bird-nl-writer" {print $4}' "$d/threads.install")"
    put writer_wait_s "$(awk -F'\t' '$3 == "bird-nl-writer" {print $5}' "$d/threads.install")"
  fi
  put rss_mib "$(( $(rig_rss "$BIRD") / 1024 ))"
  [ -f "$d/stall" ] && put stall_install_ms "$(stall "$d/stall" "$t0" "$t_kern")"
  [ "$PHASES" = import ] || table install
  [ "$PHASES" != all ] && { bench_down "$d"; return; }

  # periodic scans
  sleep 2
  ts=$(now_ms); sleep "$SCAN_WINDOW"; te=$(now_ms)
  put stall_scan_ms "$(stall "$d/stall" "$ts" "$te")"

  # restart of the kernel protocols: flush, then install again
  tr=$(now_ms)
  cli restart '"kernel*"' > /dev/null
  wait_for 120 0.05 kernel_flushed
  wait_for 900 0.05 kernel_complete || rig_log "kernel table incomplete after restart"
  t_done=$(now_ms)
  sleep 2
  table restart
  put restart_kernel_s "$(( t_done - tr ))"
  put stall_restart_ms "$(stall "$d/stall" "$tr" "$(now_ms)")"

  # graceful restart: routes stay in the kernel, a scan compares them at the end
  tg=$(now_ms)
  cli graceful restart > /dev/null
  bird_gone || { rig_log "bird did not stop"; return 1; }
  start_bird -R || return 1
  wait_for 300 0.05 grep -q "Graceful restart done" "$RUN/bird.log" || rig_log "graceful restart did not end"
  t_gr=$(now_ms)
  sleep 15
  put gr_done_s "$(( t_gr - tg ))"
  put stall_gr_ms "$(stall "$d/stall" "$tg" "$(now_ms)")"
  kernel_complete || rig_log "kernel table incomplete after graceful restart"
  table gr

  bench_down "$d"
}

# bench_down DIR -- birdc down (kernel tables flushed), the run's counters
bench_down() {
  local d=$1 td; td=$(now_ms)
  cli down > /dev/null
  bird_gone || { rig_log "bird did not stop"; kill -9 "$BIRD"; }
  put down_s "$(( $(now_ms) - td ))"
  kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; SAMPLER=
  wait_for 60 0.1 kernel_empty ||
    rig_log "kernel table not empty after down: $(rig_kernel4 "$DUT" 100) IPv4 routes in table 100, $(( $(rig_kernel6 "$DUT") - BASE6 )) IPv6 routes more than before"
  put dropped_warnings "$(grep -c "Kernel dropped some netlink messages" "$RUN/bird.log")"
  put write_failures "$(grep -c "Netlink: File exists\|Netlink: No such process" "$RUN/bird.log")"
  if [ -f "$d/callgrind.out" ]; then   # BENCH_CALLGRIND: instructions inside bgp_rx(), the import
    put instr_m "$(awk '/^(summary|totals):/ {printf "%.1f", $2 / 1e6; exit}' "$d/callgrind.out")"
  fi
  cp "$RUN/bird.log" "$d/bird.log"
}

# floor_run I -- stock bird, no kernel export: Established -> full table
floor_run() {
  X=f I=$1
  local t_est
  : > "$RUN/bird.log"
  rig_idle "$SRC" || rig_log "the source still busy"
  rig_log "feed floor $I: stock bird, kernel export none"
  start_bird || return 1
  # from the first session up: the other may come a connect retry later
  wait_for 120 0.05 established 1 || { rig_log "no session"; return 1; }
  t_est=$(now_ms)
  wait_for 120 0.05 established || { rig_log "no second session"; return 1; }
  wait_for 900 0.2 bgp_full || rig_log "bird did not get the full table"
  put floor_full_s "$(( $(now_ms) - t_est ))"
  put floor_cpu_s "$(rig_cpu "$BIRD")"
  cli down > /dev/null
  bird_gone || kill -9 "$BIRD"
}

# kernel_floor_run I -- no bird: the kernel's own time for the same routes
kernel_floor_run() {
  X=k I=$1
  local f o
  for f in 4 6; do
    rig_log "kernel floor $I: IPv$f routes written by nlfill, no bird"
    o=$(ns "$DUT" taskset -c "$CPU_BIRD" "$RUN/nlfill" "$f" 100 "$([ $f = 4 ] && echo 10.255.0.1 || echo fdbb::1)" bb-up "$RUN/kfloor$f.txt") \
      || { rig_log "nlfill failed: $o"; return 1; }
    put "kfloor${f}_s" "$(echo "$o" | awk '{print $2}')"
    put "kfloor${f}_del_s" "$(echo "$o" | awk '{print $4}')"
  done
  kernel_empty || { rig_log "kernel table 100 not empty after the kernel floor"; return 1; }
}

if [ "${BENCH_FLOOR:-1}" = 1 ]; then
  for i in 1 2; do floor_run "$i" || kill -9 "${BIRD:-}" 2>/dev/null; done
  if cc -O2 -o "$RUN/nlfill" "$RIG_TOP/tests/e2e/nlfill.c"; then
    python3 - "$V4" "$V6" "$RUN" <<'EOF'
import lzma, random, sys
for fam, f in (("4", sys.argv[1]), ("6", sys.argv[2])):
    p = sorted({l.split()[0] for l in lzma.open(f, "rt") if l.strip()})
    random.Random(12345).shuffle(p)
    open("%s/kfloor%s.txt" % (sys.argv[3], fam), "w").write("\n".join(p) + "\n")
EOF
    for i in 1 2; do kernel_floor_run "$i" || break; done
  else
    rig_log "nlfill did not build: no kernel floor"
  fi
fi

for i in $(seq "$RUNS"); do
  for x in $BUILDS; do
    bench_run "$x" "$i" || { rig_log "run $x$i failed"; kill -9 "${BIRD:-}" 2>/dev/null; }
  done
done

report
