# Malformed BGP Flowspec NLRI (upstream 2.17.6, commit cac6a5e459bb: a
# zero-length flow made bgp_decode_nlri_flow4()/_flow6() read past the NLRI
# and copy up to 32 peer-chosen bytes into a 4-byte stack variable).
# tests/check/flowspec-nlri.py, a small BGP speaker, sends one UPDATE per case
# to a passive bird on 127.0.0.1, patched and stock, each in turn. After every
# case the daemon must be alive (pid, `birdc show status`) with no sanitizer
# report; the per-case answers (NOTIFICATION code/subcode, session up, closed)
# and the per-case warning/error log lines must be equal in both.
#   FLOWSPEC_BIRD=/bindir   use that bird/birdc instead of build/bin (e.g. an
#                           ASan build of 2.17.5: this test must then fail)
#   FLOWSPEC_STOCK=/bindir  likewise instead of build/stock/bin
. "$(dirname "$0")/../lib.sh"

PY=$(cd "$(dirname "$0")" && pwd)/flowspec-nlri.py
P_BIN=${FLOWSPEC_BIRD:-$BIN}
S_BIN=${FLOWSPEC_STOCK:-$STOCK_BIN}
# For sanitizer builds: no leak report at exit; halt on the first error
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
SAN_RE='AddressSanitizer|LeakSanitizer|runtime error|stack smashing|buffer overflow detected|Segmentation fault|Aborted'

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

mkconf() {  # mkconf FILE PORT LOGFILE
  cat > "$1" <<EOC
router id 192.0.2.1;
log "$3" all;
flow4 table ft4;
flow6 table ft6;
protocol device {}
protocol bgp peer {
  local 127.0.0.1 port $2 as 65000;
  neighbor 127.0.0.1 as 65001;
  multihop;
  passive on;
  error wait time 1, 1;
  flow4 { table ft4; import all; export none; };
  flow6 { table ft6; import all; export none; next hop address ::1; };
}
EOC
}

# Only warnings and errors, without the time stamp
norm_log() { grep -E '<(RMT|ERR|WARN|BUG|FATAL)>' | sed -E 's/^[0-9-]+ [0-9:.]+ //'; }

cases=$(python3 "$PY" --list | awk '{print $1}')
[ -n "$cases" ] || { bad "flowspec-nlri.py --list gives the cases"; finish; }

run_daemon() {  # run_daemon X BINDIR -- writes $WORK/X.answers, $WORK/X.caselog
  local x=$1 bindir=$2 port pid sock n=0 name c ans before
  port=$(free_port)
  mkconf "$WORK/$x.conf" "$port" "$WORK/$x.birdlog"
  : > "$WORK/$x.answers"; : > "$WORK/$x.caselog"; : > "$WORK/$x.birdlog"
  name=$x
  if ! start_bird "$name" "$bindir" "$WORK/$x.conf"; then
    bad "$x: bird ($bindir) starts"; cat "$WORK/$name.log"; return
  fi
  "$bindir/bird" --version 2>&1 | sed "s/^/$x: /"
  pid=${BIRD_PIDS[-1]}; sock=$WORK/$name.ctl
  for c in $cases; do
    before=$(wc -l < "$WORK/$x.birdlog")
    ans=$(python3 "$PY" --timeout 10 --case "$c" "$port")
    [ -n "$ans" ] || ans="$c (speaker failed)"
    echo "$x: $ans"
    echo "$ans" >> "$WORK/$x.answers"
    sleep 0.2
    local alive=1
    kill -0 "$pid" 2>/dev/null || alive=0
    [ $alive = 1 ] && ! "$bindir/birdc" -s "$sock" show status 2>/dev/null | grep -q "Daemon is up and running" && alive=0
    if grep -qE "$SAN_RE" "$WORK/$name.log"; then
      bad "$x: no sanitizer report / crash message after $c"
      grep -E -A12 "$SAN_RE" "$WORK/$name.log" | head -30 | sed 's/^/    /'
      alive=0
    fi
    if [ $alive = 1 ]; then
      ok "$x: bird alive after $c"
    else
      bad "$x: bird alive after $c"
      wait "$pid" 2>/dev/null; echo "    bird exit status $?"
      tail -5 "$WORK/$name.log" | sed 's/^/    /'
      kill "$pid" 2>/dev/null
      # Restart for the next cases (new name: new socket and stderr log)
      n=$((n + 1)); name=$x$n
      rm -f "$sock"
      start_bird "$name" "$bindir" "$WORK/$x.conf" || { bad "$x: bird restarts"; return; }
      pid=${BIRD_PIDS[-1]}; sock=$WORK/$name.ctl
    fi
    tail -n +$((before + 1)) "$WORK/$x.birdlog" | norm_log | sed "s/^/$c: /" >> "$WORK/$x.caselog"
  done
}

run_daemon P "$P_BIN"
run_daemon S "$S_BIN"

echo "--- patched log lines per case"; cat "$WORK/P.caselog"
check "per-case answers of patched equal stock's" diff -u "$WORK/S.answers" "$WORK/P.answers"
check "per-case warning/error log lines of patched equal stock's" diff -u "$WORK/S.caselog" "$WORK/P.caselog"
# The speaker itself worked: every case reached BIRD and got an answer
check "every case got a session and an answer" \
  bash -c '! grep -vE " (up|notification [0-9]+/[0-9]+|closed)$" "$1"' _ "$WORK/P.answers"
check "valid controls keep the session up" \
  bash -c '[ "$(grep -cE "^flow[46]-valid(-len2)? up$" "$1")" = 4 ]' _ "$WORK/P.answers"
check "the zero-length flow cases are answered by NOTIFICATION 3/1" \
  bash -c '[ "$(grep -cE "^flow[46]-zero-len(-offset)? notification 3/1$" "$1")" = 3 ]' _ "$WORK/P.answers"
check "invalid flows are logged as Invalid flow route" grep -q "Invalid flow route" "$WORK/P.caselog"
# 2.17.5 took the empty flow's dst prefix from the next NLRI's bytes (/255),
# so it logged the empty flow as a bogus prefix; fixed, it is flow4 { } /0
check "no zero-length flow was read as a bogus prefix (its dst prefix taken from the next NLRI)" \
  bash -c '! grep -E "^flow[46]-zero-len.*Ignoring bogus prefix" "$1"' _ "$WORK/P.caselog"
finish
