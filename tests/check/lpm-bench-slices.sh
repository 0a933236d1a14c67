# The benchmark commands never hold bird's loop: `show lpm benchmark' and
# `show lpm lookup benchmark' with 10,000,000 lookups on 150,000 real
# prefixes run in slices through BIRD's event loop. bird logs every loop
# cycle over 20 ms (watchdog warning); while the commands run, another
# client asks `show status' every 10 ms. Asserted: no loop cycle over 100 ms (the
# budget is 50 ms; twice that for these VMs' swings)
# while they ran, every `show status' answered, both commands complete
# with no mismatch; a benchmark stops cleanly on a reconfiguration and when
# its client goes away. Prints the longest loop cycle and the longest
# `show status' answer.
. "$(dirname "$0")/../lib.sh"

DATA=${BLOOMBIRD_DATA:-$top/../shared/data}
N=150000
COUNT=10000000
{
  echo "router id 192.0.2.1;"
  echo "log \"$WORK/b.log\" all;"
  echo "watchdog warning 20 ms;"
  echo "ipv4 table master4 { lpm engine simd; };"
  echo "protocol device {}"
  echo "protocol static s4 { ipv4;"
  xz -dc "$DATA/ipv4/tier1-2023.v4.txt.xz" | cut -f1 | head -n "$N" | sed 's/.*/  route & blackhole;/'
  echo "}"
  echo "protocol lpm x { ipv4 { export all; }; }"
} > "$WORK/b.conf"

start_bird B "$BIN" "$WORK/b.conf" || { bad "bird starts"; cat "$WORK/B.log"; finish; }
C() { "$BIN/birdc" -s "$SOCK_B" "$@"; }
for _ in $(seq 300); do C show lpm master4 | grep -qE "Prefixes: +$N " && C show protocols x | grep -qw up && break; sleep 0.2; done
check "the table's engine holds the $N prefixes" grep -qE "Prefixes: +$N " <<< "$(C show lpm master4)"
# The exporter's feed ends with one engine build, which is not a command's
for _ in $(seq 300); do grep -q "x: ipv4 feed of $N prefixes took" "$WORK/b.log" && break; sleep 0.2; done
check "the exporter's feed is over" grep -q "x: ipv4 feed of $N prefixes took" "$WORK/b.log"

# sample OUT -- show status every 10 ms until $WORK/stop, one latency (ms) per line
sample() {
  python3 - "$SOCK_B" "$WORK/stop" > "$1" <<'PY' &
import os, socket, sys, time
sock, stop = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX); s.connect(sock)
f = s.makefile("rb")
f.readline()                          # banner
while not os.path.exists(stop):
    t = time.monotonic()
    s.sendall(b"show status\n")
    while True:
        l = f.readline()
        if not l or l[:1] != b" " and l[4:5] == b" ":
            break
    print("%.1f" % ((time.monotonic() - t) * 1000), flush=True)
    time.sleep(0.01)
PY
  SAMPLER=$!
}

# bench NAME COMMAND... -- run a benchmark command with the sampler; its
# output in NAME.out, the loop cycles over 20 ms it caused in NAME.cycles
bench() {
  local name=$1; shift
  local from; from=$(wc -l < "$WORK/b.log")
  rm -f "$WORK/stop"; sample "$WORK/$name.lat"
  local t0; t0=$(date +%s%N)
  C "$@" > "$WORK/$name.out" 2>&1
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  touch "$WORK/stop"; wait "$SAMPLER"
  tail -n +"$((from + 1))" "$WORK/b.log" | sed -nE 's/.*I\/O loop cycle took ([0-9.]+) ms.*/\1/p' > "$WORK/$name.cycles"
  local longest; longest=$(sort -n "$WORK/$name.cycles" | tail -1)
  local answer; answer=$(sort -n "$WORK/$name.lat" | tail -1)
  echo "  $*: $ms ms; loop cycles over 20 ms: $(wc -l < "$WORK/$name.cycles"), longest ${longest:-none} ms;" \
    "show status answered $(wc -l < "$WORK/$name.lat") times, longest answer $answer ms"
  sed "s/^/    | /" "$WORK/$name.out"
  # The budget is 50 ms (the kernel sync keeps it); the check allows these VMs' 2x swings, the
  # longest cycle is printed above (a benchmark run in one go holds the loop for seconds)
  check "$*: no loop cycle over 100 ms" awk '$1 > 100 { exit 1 }' "$WORK/$name.cycles"
  check "$*: show status answered throughout (at least 20 times)" [ "$(wc -l < "$WORK/$name.lat")" -ge 20 ]
  check "$*: no mismatch" bash -c "! grep -q MISMATCH '$WORK/$name.out'"
}

bench table show lpm benchmark master4 $COUNT
check "show lpm benchmark completed: net_route() without the engine timed" grep -q "net_route() without it" "$WORK/table.out"
check "  every variant timed" [ "$(grep -c "batches of 256" "$WORK/table.out")" -ge 1 ]
bench export show lpm lookup benchmark x $COUNT
check "show lpm lookup benchmark completed: the sample's builds timed" grep -q "one update each" "$WORK/export.out"

# A reconfiguration stops a running benchmark cleanly; so does its client going away
( C show lpm lookup benchmark x $COUNT > "$WORK/reconf.out" 2>&1 ) &
sleep 0.5
C configure soft > /dev/null
wait $!
check "a reconfiguration stops a running benchmark" grep -q "Stopped due to reconfiguration" "$WORK/reconf.out"
timeout 0.5 "$BIN/birdc" -s "$SOCK_B" show lpm benchmark master4 $COUNT > /dev/null 2>&1
sleep 1
check "bird runs on after a benchmark's client went away" grep -q "Daemon is up" <<< "$(C show status)"
check "and the table keeps its engine" grep -q "Engine: *simd" <<< "$(C show lpm master4)"
finish
