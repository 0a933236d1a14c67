# Shared pieces of the end-to-end rig (sourced by demo/demo.sh, the e2e tests and the benchmarks that run in the rig).
# Everything lives in network namespaces named bb-*; nothing outside them
# is touched. Needs root, iproute2, gobgpd, go (for the feeder).
set -u
RIG_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RIG_DATA=${BLOOMBIRD_DATA:-$RIG_TOP/../shared/data}
FEEDER=$RIG_TOP/build/feeder/bloombird-feeder

rig_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
ns() { local n=$1; shift; ip netns exec "$n" "$@"; }

# rig_build_feeder -- our gRPC feeder for gobgpd (Go module, built once)
rig_build_feeder() {
  [ -x "$FEEDER" ] && [ "$FEEDER" -nt "$RIG_TOP/tests/e2e/feeder/main.go" ] && return 0
  rig_log "building the GoBGP feeder (go build)"
  mkdir -p "$(dirname "$FEEDER")"
  (cd "$RIG_TOP/tests/e2e/feeder" && go build -o "$FEEDER" .)
}

# rig_link NS_A IF_A ADDR4_A ADDR6_A NS_B IF_B ADDR4_B ADDR6_B
rig_link() {
  ip link add "$2" netns "$1" type veth peer name "$6" netns "$5"
  ns "$1" ip addr add "$3" dev "$2"; ns "$1" ip addr add "$4" dev "$2" nodad
  ns "$5" ip addr add "$7" dev "$6"; ns "$5" ip addr add "$8" dev "$6" nodad
  ns "$1" ip link set "$2" up; ns "$5" ip link set "$6" up
}

rig_ns() { for n; do ip netns add "$n"; ns "$n" ip link set lo up; done; }

rig_teardown() {  # rig_teardown RUNDIR
  local d=$1
  for pf in "$d"/*.pid; do
    [ -f "$pf" ] || continue
    kill "$(cat "$pf")" 2>/dev/null || true
  done
  sleep 0.3
  for pf in "$d"/*.pid; do
    [ -f "$pf" ] || continue
    kill -9 "$(cat "$pf")" 2>/dev/null || true
    rm -f "$pf"
  done
  for n in $(ip netns list 2>/dev/null | awk '/^bb-/{print $1}'); do
    ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$n" 2>/dev/null || true
  done
}

# rig_gobgpd NS RUNDIR AS ROUTER_ID [NEIGHBOR PEER_AS]... (IPv6 neighbours get ipv6-unicast)
# RIG_GR=1: graceful restart (helper side, End-of-RIB) on every session.
rig_gobgpd() {
  local n=$1 d=$2 as=$3 rid=$4; shift 4
  {
    echo "[global.config]"
    echo "  as = $as"
    echo "  router-id = \"$rid\""
    while [ $# -ge 2 ]; do
      local fam=ipv4-unicast
      case "$1" in *:*) fam=ipv6-unicast ;; esac
      echo "[[neighbors]]"
      echo "  [neighbors.config]"
      echo "    neighbor-address = \"$1\""
      echo "    peer-as = $2"
      echo "  [neighbors.timers.config]"
      echo "    hold-time = 240"
      echo "    connect-retry = 1"
      if [ "${RIG_GR:-0}" = 1 ]; then
        echo "  [neighbors.graceful-restart.config]"
        echo "    enabled = true"
        echo "    restart-time = 120"
      fi
      echo "  [[neighbors.afi-safis]]"
      echo "    [neighbors.afi-safis.config]"
      echo "      afi-safi-name = \"$fam\""
      if [ "${RIG_GR:-0}" = 1 ]; then
        echo "    [neighbors.afi-safis.mp-graceful-restart.config]"
        echo "      enabled = true"
      fi
      shift 2
    done
  } > "$d/gobgpd.toml"
  ip netns exec "$n" gobgpd -f "$d/gobgpd.toml" --api-hosts 127.0.0.1:50051 -p -l warn --pprof-disable \
    > "$d/gobgpd.log" 2>&1 &
  echo $! > "$d/gobgpd.pid"
  for _ in $(seq 100); do
    ns "$n" gobgp global >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "gobgpd did not come up; its log:" >&2; cat "$d/gobgpd.log" >&2; return 1
}

# rig_rib_count NS FAMILY -- destinations in gobgpd's global RIB
rig_rib_count() {
  ns "$1" gobgp global rib summary -a "$2" 2>/dev/null | sed -nE 's/.*Destination: ([0-9]+).*/\1/p'
}

# rig_feed NS FILE [feeder args] -- stream a table (xz or plain) into gobgpd
rig_feed() {
  local n=$1 f=$2; shift 2
  case "$f" in
    *.xz) xz -dc "$f" ;;
    *) cat "$f" ;;
  esac | ns "$n" "$FEEDER" "$@"
}

# rig_bird NAME NS BINDIR CONF RUNDIR -- start bird in NS, socket RUNDIR/NAME.ctl;
# its log RUNDIR/NAME.log, the runs before appended to RUNDIR/NAME.log.old
rig_bird() {
  local name=$1 n=$2 b=$3 c=$4 d=$5
  [ -f "$d/$name.log" ] && cat "$d/$name.log" >> "$d/$name.log.old"
  # not through ns(): $! must be bird itself (ip netns exec execs it)
  ip netns exec "$n" "$b/bird" -f -c "$c" -s "$d/$name.ctl" > "$d/$name.log" 2>&1 &
  echo $! > "$d/$name.pid"
  for _ in $(seq 100); do
    "$b/birdc" -s "$d/$name.ctl" show status >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "bird $name did not come up; its log:" >&2; cat "$d/$name.log" >&2; return 1
}

# rig_routes BINDIR SOCK [show route args] -- networks bird shows
rig_routes() {
  local b=$1 s=$2; shift 2
  "$b/birdc" -s "$s" show route count "$@" 2>/dev/null | sed -nE 's/^([0-9]+) of .*/\1/p' | awk '{n += $1} END {print n + 0}'
}

# rig_kernel4 NS TABLE -- IPv4 prefixes in a kernel table (the kernel's own counter: cheap to poll)
rig_kernel4() {
  ns "$1" cat /proc/net/fib_triestat 2>/dev/null | awk -v t="$2:" '$1 == "Id" && $2 == t {f = 1} f && /Prefixes:/ {print $2; exit}' | awk '{n = $1} END {print n + 0}'   # 0 if the table does not exist
}

# rig_kernel6 NS -- IPv6 routes in all tables of the namespace (the kernel's counter)
rig_kernel6() { local v; v=$(ns "$1" cat /proc/net/rt6_stats | cut -d' ' -f4); echo $((16#$v)); }

# rig_cpu PID -- utime+stime in seconds; rig_rss PID -- resident KiB
rig_cpu() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat" 2>/dev/null; }
rig_rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# rig_idle PID... -- wait (up to 60 s) until the processes use under 5% CPU for a second
rig_idle() {
  local a b i
  for i in $(seq 60); do
    a=0; for p; do a=$((a + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
    sleep 1
    b=0; for p; do b=$((b + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
    [ $((b - a)) -lt 5 ] && return 0
  done
  return 1
}
