# Fault phases of the end-to-end suite (sourced by e2e.sh, which provides the
# rig, cli, check, compare_all, wait_both, wait_kernel_equal). The same faults
# hit the patched (p) and the stock (s) side; after each phase both kernel
# tables must be identical, and the patched one repaired as stock repairs it.
#
#   behind    routes deleted, changed and added in kernel table 100 with
#             `ip route` behind bird's back: the next scan repairs them;
#             foreign routes (proto static) are left alone (learn off)
#   refused   the kernel refuses routes (one in the way of a foreign route,
#             one with an unknown congestion control): logged, the other
#             routes of the same batch still installed
#   enobufs   a tiny `netlink rx buffer` and a flood of foreign route
#             notifications: the kernel drops messages for bird; routes
#             deleted behind bird's back meanwhile are restored by the
#             patched bird's prompt resync (stock: at its next scan)
#   corked    the patched bird restarted with its writer slowed down (every
#             20th batch 300 ms late, tests/e2e/nlfault.c) and a small write queue
#             (`netlink queue 64`: route import corked at 64 waiting
#             changes): BGP stops reading while the kernel catches up, the
#             sessions stay up, the table reaches the kernel as stock's
#   killed    bird killed (SIGKILL, without persist) and stopped (SIGTERM,
#             with persist) in the middle of a full-table install, then
#             started again: the kernel ends as stock's ends

kernel_raw() {  # kernel_raw X -- kernel table 100 (polls: no sort)
  ns "bb-dut-$1" ip -4 route show table 100; ns "bb-dut-$1" ip -6 route show table 100
}
kernel_dump() { kernel_raw "$1" | sort; }  # kernel_dump X -- kernel table 100, sorted
# Both birds settle on their own (a loaded machine may delay one's OSPF or
# scan by seconds), so the tables are dumped again until they match or 20 s pass
compare_kernel() {  # compare_kernel TAG
  local tag=$1
  same_kernel() {
    for x in p s; do kernel_dump "$x" > "$RUN/$x/kernel.$tag"; done
    cmp -s "$RUN/p/kernel.$tag" "$RUN/s/kernel.$tag"
  }
  until_true 20 same_kernel || true
  check "[$tag] kernel table 100 identical ($(wc -l < "$RUN/p/kernel.$tag") routes)" cmp -s "$RUN/p/kernel.$tag" "$RUN/s/kernel.$tag"
  cmp -s "$RUN/p/kernel.$tag" "$RUN/s/kernel.$tag" || diff "$RUN/s/kernel.$tag" "$RUN/p/kernel.$tag" | head -10
}
until_true() {  # until_true SECONDS COMMAND... -- poll every 0.5 s
  local end=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep 0.5; done
}
reconfigure() {  # reconfigure FILE -- both birds
  for x in p s; do cp "$1" "$RUN/$x/bird.conf"; cli "$x" configure > "$RUN/$x/configure.out" 2>&1; done
}
# kernel_conf EXTRA -- the e2e configuration with EXTRA in both kernel protocols
kernel_conf() { sed -E "s/(protocol kernel kernel[46] \\{)/\\1 $1/" "$RUN/bird.conf"; }

# pick N OFFSET FILE -- every Nth route (from OFFSET) of a kernel dump, by family
pick() { awk -v n="$1" -v o="$2" 'NR % n == o' "$3"; }

# fault commands for `ip -batch` (IPv4 and IPv6 files)
mkbatch() {  # mkbatch NAME DEL_FILE CHG_FILE
  local name=$1
  : > "$RUN/$name.4"; : > "$RUN/$name.6"
  while read -r pfx _; do
    case "$pfx" in *:*) f=6 ;; *) f=4 ;; esac
    echo "route del $pfx table 100 proto bird metric 32" >> "$RUN/$name.$f"
  done < "$2"
  [ -n "${3:-}" ] || return 0
  while read -r pfx _; do
    case "$pfx" in
      *:*) echo "route replace $pfx via fdbb:3::1 dev bb-ospf table 100 proto bird metric 32" >> "$RUN/$name.6" ;;
      *)   echo "route replace $pfx via 10.255.3.1 dev bb-ospf table 100 proto bird metric 32" >> "$RUN/$name.4" ;;
    esac
  done < "$3"
}
apply_batch() {  # apply_batch X NAME -- fails if a command failed (ip -batch stops there)
  local rc=0
  ns "bb-dut-$1" ip -batch "$RUN/$2.4" || rc=1
  ns "bb-dut-$1" ip -6 -batch "$RUN/$2.6" || rc=1
  return $rc
}

# routes listed in FILE (first field) all present with their original line in X's table
restored() {  # restored X FILE
  [ "$(kernel_raw "$1" | grep -cxFf "$2")" = "$(sort -u "$2" | wc -l)" ]
}

fault_behind() {
  rig_log "faults: kernel routes deleted, changed and added behind bird's back"
  local before=$RUN/faults.before
  kernel_dump p > "$before"
  grep "dev bb-up proto bird" "$before" > "$RUN/faults.bgp"
  pick 4001 7 "$RUN/faults.bgp" > "$RUN/behind.del"
  pick 4001 2007 "$RUN/faults.bgp" > "$RUN/behind.chg"
  mkbatch behind "$RUN/behind.del" "$RUN/behind.chg"
  for i in $(seq 0 49); do
    echo "route add 198.18.$i.0/24 via 10.255.0.1 dev bb-up table 100 proto bird metric 32" >> "$RUN/behind.4"
    printf 'route add 2001:db8:ff:%x::/64 via fdbb::1 dev bb-up table 100 proto bird metric 32\n' "$i" >> "$RUN/behind.6"
  done
  for i in $(seq 0 19); do
    echo "route add 198.19.$i.0/24 via 10.255.0.1 dev bb-up table 100 proto static metric 32" >> "$RUN/behind.4"
  done
  local nd nc; nd=$(wc -l < "$RUN/behind.del"); nc=$(wc -l < "$RUN/behind.chg")
  # Every command of both batches succeeded (counting the routes afterwards
  # would race with a periodic scan, which may repair them at any time)
  local applied=0
  for x in p s; do apply_batch "$x" behind && applied=$((applied + 1)); done
  check "faults applied: $nd routes deleted, $nc changed, 100 added as bird's, 20 foreign" [ "$applied" = 2 ]
  repaired() {
    local t; t=$(kernel_raw "$1")
    ! grep -q "^198\.18\.\|^2001:db8:ff:" <<< "$t" && ! grep -q "dev bb-ospf proto bird metric 32" <<< "$(grep -Ff <(awk '{print $1 " "}' "$RUN/behind.chg") <<< "$t")" &&
      restored "$1" "$RUN/behind.del"
  }
  for x in p s; do
    check "$x: the next scan repaired deleted, changed and added routes" until_true 60 repaired "$x"
  done
  check "p: foreign routes left alone" [ "$(kernel_dump p | grep -c "^198\.19\..*proto static")" = 20 ]
  check "p: otherwise the table is what it was" cmp -s "$before" <(kernel_dump p | grep -v "proto static")
  compare_kernel behind
}

fault_refused() {
  rig_log "faults: the kernel refuses routes (a foreign route in the way, an unknown congestion control)"
  for x in p s; do ns "bb-dut-$x" ip route add 203.0.113.0/24 via 10.255.0.1 dev bb-up table 100 proto static metric 32; done
  { cat "$RUN/bird.conf"
    echo "protocol static refused { ipv4;"
    echo "  route 203.0.113.0/24 via 10.255.0.1;"
    echo "  route 198.51.100.0/24 via 10.255.0.1 { krt_congctl = \"nosuchcc\"; };"
    for i in $(seq 0 299); do echo "  route 100.64.$((i / 256)).$((i % 256))/32 via 10.255.0.1;"; done
    echo "}"; } > "$RUN/refused.conf"
  reconfigure "$RUN/refused.conf"
  installed() { [ "$(kernel_dump "$1" | grep -c "^100\.64\.")" = 300 ]; }
  for x in p s; do
    check "$x: the other routes of the batch installed (queue not wedged)" until_true 30 installed "$x"
  done
  sleep 1
  for x in p s; do
    check "$x: the refusal is logged (File exists)" grep -q "Netlink: File exists" "$RUN/$x/bird.log"
    check "$x: the refusal is logged (Invalid argument)" grep -q "Netlink: Invalid argument" "$RUN/$x/bird.log"
  done
  grep "Netlink: " "$RUN/p/bird.log" | sort | uniq -c | head -4
  check "p: the log names the route" grep -q "Netlink: File exists.*203.0.113.0/24" "$RUN/p/bird.log"
  compare_kernel refused
  reconfigure "$RUN/bird.conf"
  withdrawn() { ! kernel_dump "$1" | grep -q "^100\.64\."; }
  for x in p s; do check "$x: withdrawn again" until_true 30 withdrawn "$x"; done
  compare_kernel refused-withdrawn
}

fault_enobufs() {
  rig_log "faults: tiny netlink rx buffer, a flood of foreign route notifications, routes deleted behind bird's back"
  kernel_conf "netlink rx buffer 2048;" > "$RUN/tiny.conf"
  reconfigure "$RUN/tiny.conf"
  kernel_dump p > "$RUN/enobufs.before"
  grep "dev bb-up proto bird" "$RUN/enobufs.before" | pick 3001 1500 /dev/stdin > "$RUN/enobufs.del"
  mkbatch enobufs "$RUN/enobufs.del"
  : > "$RUN/flood"
  for i in $(seq 0 3999); do echo "route add 198.20.$((i / 256)).$((i % 256))/32 dev bb-up table 200" >> "$RUN/flood"; done
  sed 's/^route add/route del/' "$RUN/flood" > "$RUN/unflood"
  # Each bird is stopped while its fault is applied (a daemon busy elsewhere):
  # the notifications overflow its rx buffer for sure. Running, it may keep
  # up with `ip` on an idle second core and drop nothing (seen once in CI).
  local t0 pid
  for x in s p; do   # p last: its time to the repair starts when its fault is complete
    pid=$(cat "$RUN/$x/bird.pid")
    kill -STOP "$pid"
    apply_batch "$x" enobufs
    ns "bb-dut-$x" ip -batch "$RUN/flood"; ns "bb-dut-$x" ip -batch "$RUN/unflood"
    kill -CONT "$pid"
    [ "$x" = p ] && t0=$(date +%s%N)
  done
  check "p: the kernel dropped messages (ENOBUFS logged)" until_true 10 grep -q "Kernel dropped some netlink messages" "$RUN/p/bird.log"
  check "p: deleted routes restored by the resync" until_true 60 restored p "$RUN/enobufs.del"
  T_RESYNC=$(( ($(date +%s%N) - t0) / 100000000 )); T_RESYNC=$((T_RESYNC / 10)).$((T_RESYNC % 10))
  check "p: it was the prompt resync" grep -q "Resync of kernel tables after dropped Netlink messages" "$RUN/p/bird.log"
  check "s: deleted routes restored by its next scan" until_true 60 restored s "$RUN/enobufs.del"
  compare_kernel enobufs
  kernel_conf "netlink rx buffer 106496;" > "$RUN/default-rx.conf"   # the default 212992 (the kernel doubles it)
  reconfigure "$RUN/default-rx.conf"
}

corks() {  # corks -- times the patched side's kernel protocols corked route import
  { cli p show protocols all kernel4; cli p show protocols all kernel6; } | sed -nE 's/.*import corked ([0-9]+) times.*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}

fault_corked() {
  rig_log "faults: the patched side restarted with a writer whose every 20th batch takes 300 ms more and a small queue (netlink queue 64): route import corked during a full-table install"
  local shim=$RUN/nlfault.so
  cc -shared -fPIC -o "$shim" "$RIG_TOP/tests/e2e/nlfault.c" -ldl || { bad "fault shim builds"; return; }
  # the queue fills beyond 64 while a batch is in the kernel (a 300 ms one
  # certainly); a long slice keeps the batches large
  kernel_conf "netlink queue 64; scan slice 1 s;" > "$RUN/corked.conf"
  cli p down > /dev/null 2>&1
  for _ in $(seq 600); do kill -0 "$(cat "$RUN/p/bird.pid")" 2>/dev/null || break; sleep 0.1; done
  cp "$RUN/corked.conf" "$RUN/p/bird.conf"
  LD_PRELOAD=$shim NLF_SEND_DELAY_US=300000 NLF_SEND_DELAY_EVERY=20 rig_bird bird bb-dut-p "$BIN" "$RUN/p/bird.conf" "$RUN/p" || bad "p bird restarts with the slow writer"
  wait_converged p 900 && ok "p: converged with the slow writer" || bad "p: converged with the slow writer"
  wait_kernel_equal
  compare_kernel corked
  local n
  n=$(corks)
  echo "  p: route import corked $n times during the install"
  check "p: route import was corked (the queue was full)" [ "$n" -gt 0 ]
  check "p: the cork was released" grep -q "Import cork:      free" <(cli p show protocols all kernel4)
  check "p: both BGP sessions stayed established" [ "$(cli p show protocols | grep -cE "^feeder[46] .*Established")" = 2 ]
  session_errors() { grep -qE "feeder[46]: .*(Hold timer expired|Error)" "$RUN/p/bird.log"; }
  check "p: no session error while corked" eval '! session_errors'
  # back to the normal writer and configuration; killed, as a flush through
  # the slow writer would take minutes (the next bird repairs the table)
  kill -KILL "$(cat "$RUN/p/bird.pid")"
  for _ in $(seq 600); do kill -0 "$(cat "$RUN/p/bird.pid")" 2>/dev/null || break; sleep 0.1; done
  cp "$RUN/bird.conf" "$RUN/p/bird.conf"
  rig_bird bird bb-dut-p "$BIN" "$RUN/p/bird.conf" "$RUN/p" || bad "p bird restarts"
  wait_converged p 900 && ok "p: converged again" || bad "p: converged again"
  wait_kernel_equal
  compare_kernel uncorked
}

declare -A PRUNES
pruned() { grep -c "$2: Pruning table" "$RUN/$1/bird.log"; }   # pruned X PROTO -- prune runs logged
pruned_since() { [ "$(pruned "$1" "$2")" -gt "$3" ]; }           # pruned_since X PROTO COUNT

fault_killed() {  # fault_killed persist|nopersist
  local mode=$1 sig=KILL extra=""
  [ "$mode" = persist ] && { sig=TERM; extra="persist;"; }
  rig_log "faults: bird $([ $sig = KILL ] && echo killed || echo stopped) in the middle of a full-table install ($mode)"
  kernel_conf "$extra" > "$RUN/killed.conf"
  # A kernel protocol flushes its routes on `down` only once a scan has run
  # since its initial feed ended (stock: krt_prune sets `initialized`); wait
  # for one on both sides so that both flush, not whichever the timer favours
  for x in p s; do
    for k in kernel4 kernel6; do PRUNES[$x$k]=$(pruned "$x" "$k"); done
  done
  for x in p s; do
    for k in kernel4 kernel6; do
      check "$x: $k scanned since its feed ended" until_true 45 pruned_since "$x" "$k" "${PRUNES[$x$k]}"
    done
  done
  for x in p s; do cli "$x" down > /dev/null 2>&1; done
  for x in p s; do
    for _ in $(seq 600); do kill -0 "$(cat "$RUN/$x/bird.pid")" 2>/dev/null || break; sleep 0.1; done
    cp "$RUN/killed.conf" "$RUN/$x/bird.conf"
  done
  compare_kernel "down-before-$mode"   # flushed, or kept with persist, as stock
  for x in p s; do rig_bird bird "bb-dut-$x" "$(bin_of "$x")" "$RUN/$x/bird.conf" "$RUN/$x" || bad "$x bird restarts"; done
  local third=$(( $(rig_rib_count bb-feed-p ipv4) / 3 )) done_p=0 done_s=0 n
  for _ in $(seq 1200); do
    for x in p s; do
      eval "[ \$done_$x = 1 ]" && continue
      n=$(kernel_prefixes4 "$x")
      if [ "$n" -ge "$third" ]; then
        kill -$sig "$(cat "$RUN/$x/bird.pid")"; eval "done_$x=1"
        echo "  $x: SIG$sig with $n IPv4 routes in the kernel"
      fi
    done
    [ $done_p = 1 ] && [ $done_s = 1 ] && break
    sleep 0.05
  done
  for x in p s; do
    for _ in $(seq 600); do kill -0 "$(cat "$RUN/$x/bird.pid")" 2>/dev/null || break; sleep 0.1; done
    check "$x: left a partial table in the kernel" [ "$(kernel_prefixes4 "$x")" -gt 0 ]
    rig_bird bird "bb-dut-$x" "$(bin_of "$x")" "$RUN/$x/bird.conf" "$RUN/$x" || bad "$x bird restarts"
  done
  wait_both 900 && ok "converged after restart ($mode)" || bad "converged after restart ($mode)"
  wait_kernel_equal
  compare_kernel "killed-$mode"
}

# Each phase ends with errs_same (e2e.sh): no <ERR> in the patched bird's
# log that stock's lacks (`down` flushes in killed: the interfaces go meanwhile)
fault_phases() {
  fault_behind; errs_same behind
  fault_refused; errs_same refused
  fault_killed nopersist; errs_same killed-nopersist
  fault_killed persist; errs_same killed-persist
  fault_enobufs; errs_same enobufs
  fault_corked; errs_same corked
}
