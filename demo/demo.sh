#!/bin/bash
# The demo behind `./bloombird demo' and `./bloombird stop': a GoBGP feeder
# announcing a real full table to the patched bird, each in its own network
# namespace, with the rig of the end-to-end tests (tests/e2e/rig.sh).
#   demo/demo.sh start   bring it up, wait for convergence, show what bird has
#   demo/demo.sh stop    tear everything down
set -euo pipefail
. "$(dirname "$0")/../tests/e2e/rig.sh"

RUN=$RIG_TOP/build/demo
BIN=$RIG_TOP/build/bin
V4=${DEMO_V4:-$RIG_DATA/ipv4/tier1-2023.v4.txt.xz}
V6=${DEMO_V6:-$RIG_DATA/ipv6/tier1-2023.v6.txt.xz}

stop() {
  rig_teardown "$RUN"
  rm -f "$RUN"/*.ctl
}

start() {
  [ "$(id -u)" = 0 ] || { echo "demo: run as root (it creates network namespaces)" >&2; exit 1; }
  [ -x "$BIN/bird" ] || { echo "demo: build first (make)" >&2; exit 1; }
  [ -f "$V4" ] && [ -f "$V6" ] || { echo "demo: tables not found: $V4 $V6 (set BLOOMBIRD_DATA)" >&2; exit 1; }
  mkdir -p "$RUN"
  stop
  rig_build_feeder

  rig_log "namespaces bb-feed (GoBGP 65001) and bb-dut (bird 65002), veth 10.255.0.0/30, fdbb::/64"
  rig_ns bb-feed bb-dut
  rig_link bb-feed bb-f0 10.255.0.1/30 fdbb::1/64 bb-dut bb-d0 10.255.0.2/30 fdbb::2/64
  rig_gobgpd bb-feed "$RUN" 65001 10.255.0.1 10.255.0.2 65002 fdbb::2 65002

  rig_log "feeding $(basename "$V4") and $(basename "$V6") into gobgpd"
  local t0=$SECONDS
  rig_feed bb-feed "$V4" -nh4 10.255.0.1
  rig_feed bb-feed "$V6" -nh6 fdbb::1
  local want4 want6
  want4=$(rig_rib_count bb-feed ipv4); want6=$(rig_rib_count bb-feed ipv6)
  rig_log "gobgpd holds $want4 IPv4 and $want6 IPv6 prefixes ($((SECONDS - t0)) s)"

  cp "$RIG_TOP/etc/bird.conf" "$RUN/bird.conf"
  rig_bird bird bb-dut "$BIN" "$RUN/bird.conf" "$RUN"
  rig_log "bird started; waiting for the full table"
  t0=$SECONDS
  local n4=0 n6=0
  while :; do
    n4=$(rig_routes "$BIN" "$RUN/bird.ctl" protocol feeder4); n6=$(rig_routes "$BIN" "$RUN/bird.ctl" protocol feeder6)
    printf '\r  from GoBGP: IPv4 %8s / %s   IPv6 %7s / %s   %3d s ' "$n4" "$want4" "$n6" "$want6" $((SECONDS - t0))
    [ "$n4" = "$want4" ] && [ "$n6" = "$want6" ] && break
    [ $((SECONDS - t0)) -lt 600 ] || { echo; echo "demo: no convergence in 600 s" >&2; exit 1; }
    sleep 1
  done
  echo
  local C="$BIN/birdc -s $RUN/bird.ctl"
  echo; echo "\$ birdc show route count"; $C show route count
  echo; echo "\$ birdc show fib"; $C show fib
  for a in 1.1.1.1 8.8.8.8 193.0.14.129 2001:4860:4860::8888 2a00:1450:4001::1; do
    echo; echo "\$ birdc show route for $a"; $C show route for $a
  done
  cat <<EOM

bloombird is running with a full table. Explore it with:
  $C
(e.g. 'show route for 9.9.9.9 all', 'show fib master4', 'show protocols all feeder4').
The kernel table it exports to: ip netns exec bb-dut ip route show table 100 | head
Tear it all down with:
  $RIG_TOP/bloombird stop
EOM
}

case "${1:-start}" in
  start) start ;;
  stop) stop; echo "demo stopped" ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
