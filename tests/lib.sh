# Shared helpers for tests/check/*.sh (sourced). Each test gets TOP TREE STOCK.
set -u
top=$1 tree=$2 stock=$3
BIN=$top/build/bin
STOCK_BIN=$top/build/stock/bin
nfail=0

ok()   { echo "ok   $*"; }
bad()  { echo "FAIL $*"; nfail=$((nfail + 1)); }
check() {  # description command...
  local d=$1; shift
  if "$@"; then ok "$d"; else bad "$d"; fi
}
finish() { [ "$nfail" = 0 ] && echo "all checks passed" || echo "$nfail checks failed"; exit $((nfail != 0)); }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bloombird-test.XXXXXX")
BIRD_PIDS=()
cleanup() {
  for p in "${BIRD_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# start_bird NAME BINDIR CONFIG -- runs bird in the foreground of a
# background job with its own socket; sets SOCK_<NAME>
start_bird() {
  local name=$1 bindir=$2 conf=$3
  local sock=$WORK/$name.ctl
  "$bindir/bird" -f -c "$conf" -s "$sock" -P "$WORK/$name.pid" > "$WORK/$name.log" 2>&1 &
  BIRD_PIDS+=($!)
  for _ in $(seq 100); do
    [ -S "$sock" ] && "$bindir/birdc" -s "$sock" show status >/dev/null 2>&1 && break
    sleep 0.1
  done
  eval "SOCK_$name=$sock"
  "$bindir/birdc" -s "$sock" show status >/dev/null 2>&1
}

# birdc_q BINDIR SOCK command... -- birdc output without the banner line
birdc_q() { local b=$1 s=$2; shift 2; "$b/birdc" -s "$s" "$@" | sed '1{/^BIRD .* ready\.$/d}'; }
