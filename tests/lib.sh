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

# ns_veth NS ADDR4 ADDR6 -- a fresh network namespace NS with a veth pair
# d0-d1, both up, ADDR4 and ADDR6 on d0 (the kernel sync checks' link)
ns_veth() {
  ip netns del "$1" 2>/dev/null
  ip netns add "$1"
  ip -n "$1" link set lo up
  ip -n "$1" link add d0 type veth peer name d1
  ip -n "$1" link set d0 up; ip -n "$1" link set d1 up
  ip -n "$1" addr add "$2" dev d0
  ip -n "$1" addr add "$3" dev d0 nodad
}
