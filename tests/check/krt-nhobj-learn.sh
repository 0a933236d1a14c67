# Kernel protocols learning routes that refer to kernel nexthop objects
# (RTA_NH_ID, Linux 5.3), as FRR's zebra writes them
# (bird-patches/krt-nexthop-objects-learn.patch). In a network namespace
# (bt-nhlearn), kernel table 100 holds routes through nexthop objects (single
# next hops, a device next hop, an onlink one, an IPv6 gateway for IPv4, ECMP
# groups with weights, a one-member group, a resilient group, blackholes) and
# table 101 the same routes written the old way; four kernel protocols learn
# them (`learn`, scan time 20 s) into four BIRD tables. `show route all` of
# table 100 must equal that of table 101:
#   - with net.ipv4.nexthop_compat_mode = 1 (routes come with their next
#     hops), stock and patched;
#   - with compat mode 0 (routes come with RTA_NH_ID only), patched: stock
#     logs "unknown ifindex" and learns only the blackholes, which is
#     reported as the stock bug;
#   - after objects are replaced and deleted behind bird's back (a group
#     losing a member, routes vanishing with their object: no notifications
#     in compat mode 0, nor for IPv4 routes in mode 1) and routes added, with
#     table 101 changed alike, within 10 s (before the next periodic scan),
#     patched in both modes; stock's stale routes in mode 1 are reported.
#   KRT_NHOBJ_BIRD=/bindir    the patched bird/birdc instead of build/bin
#   KRT_NHOBJ_STOCK=/bindir   stock's instead of build/stock/bin
# lane: side
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" = 0 ] || { echo "krt-nhobj-learn: needs root (network namespaces)"; exit 1; }
P_BIN=${KRT_NHOBJ_BIRD:-$BIN}
S_BIN=${KRT_NHOBJ_STOCK:-$STOCK_BIN}
NS=bt-nhlearn
STOCK_BUG="stock bug (krt-nexthop-objects-learn)"

cleanup_ns() { ip netns del "$NS" 2>/dev/null; }
trap 'cleanup; cleanup_ns' EXIT

N() { ip -n "$NS" "$@"; }
ns_up() {  # ns_up COMPAT -- the namespace, its objects and both tables
  cleanup_ns
  ip netns add "$NS"
  ip netns exec "$NS" sysctl -qw net.ipv4.nexthop_compat_mode="$1" || return 1
  N link set lo up
  N link add v0 type veth peer name v1
  N link add w0 type veth peer name w1
  for l in v0 v1 w0 w1; do N link set "$l" up; done
  N addr add 10.9.0.1/24 dev v0
  N addr add 10.8.0.1/24 dev w0
  N addr add fd09::1/64 dev v0 nodad
  N addr add fd08::1/64 dev w0 nodad
  local z="proto zebra" m="proto zebra metric 20"
  N nexthop add id 10 via 10.9.0.2 dev v0 $z
  N nexthop add id 11 via 10.8.0.2 dev w0 $z
  N nexthop add id 12 group 10,3/11,5 $z
  N nexthop add id 13 dev v0 $z
  N nexthop add id 14 blackhole $z
  N nexthop add id 15 via 10.7.7.7 dev v0 onlink $z
  N nexthop add id 16 via fd09::2 dev v0 $z
  N nexthop add id 17 group 10,4 $z
  N nexthop add id 18 group 10,2/11 type resilient buckets 32 $z
  N -6 nexthop add id 20 via fd09::2 dev v0 $z
  N -6 nexthop add id 21 via fd08::2 dev w0 $z
  N nexthop add id 22 group 20,2/21,7 $z
  N -6 nexthop add id 23 dev w0 $z
  N -6 nexthop add id 24 blackhole $z
  N nexthop add id 25 group 21,6 $z
  local i
  for i in 1:10 2:12 3:13 4:14 5:15 6:16 8:17 9:18; do
    N route add "10.20.${i%:*}.0/24" nhid "${i#*:}" $m table 100
  done
  for i in 1:20 2:22 3:23 4:24 5:25; do
    N -6 route add "2001:db8:${i%:*}::/48" nhid "${i#*:}" $m table 100
  done
  N route add 10.20.1.0/24 via 10.9.0.2 dev v0 $m table 101
  N route add 10.20.2.0/24 $m table 101 nexthop via 10.9.0.2 dev v0 weight 3 nexthop via 10.8.0.2 dev w0 weight 5
  N route add 10.20.3.0/24 dev v0 scope global $m table 101
  N route add blackhole 10.20.4.0/24 $m table 101
  N route add 10.20.5.0/24 via 10.7.7.7 dev v0 onlink $m table 101
  N route add 10.20.6.0/24 via inet6 fd09::2 dev v0 $m table 101
  N route add 10.20.8.0/24 via 10.9.0.2 dev v0 $m table 101
  N route add 10.20.9.0/24 $m table 101 nexthop via 10.9.0.2 dev v0 weight 2 nexthop via 10.8.0.2 dev w0 weight 1
  N -6 route add 2001:db8:1::/48 via fd09::2 dev v0 $m table 101
  N -6 route add 2001:db8:2::/48 $m table 101 nexthop via fd09::2 dev v0 weight 2 nexthop via fd08::2 dev w0 weight 7
  N -6 route add 2001:db8:3::/48 dev w0 scope global $m table 101
  N -6 route add blackhole 2001:db8:4::/48 $m table 101
  N -6 route add 2001:db8:5::/48 via fd08::2 dev w0 $m table 101
}

# change -- behind bird's back: an object replaced (IPv4 and IPv6), a group's
# member deleted, objects deleted with their routes (a device next hop, a
# blackhole, IPv6), routes added; table 101 changed alike
change() {
  local m="proto zebra metric 20"
  N nexthop replace id 10 via 10.9.0.3 dev v0 proto zebra
  N -6 nexthop replace id 20 via fd09::3 dev v0 proto zebra
  N nexthop del id 11
  N nexthop del id 13
  N nexthop del id 14
  N nexthop del id 23
  N route add 10.20.7.0/24 nhid 10 $m table 100
  N -6 route add 2001:db8:7::/48 nhid 20 $m table 100
  local r
  for r in 1 2 7 8 9; do N route replace "10.20.$r.0/24" via 10.9.0.3 dev v0 $m table 101; done
  N route del 10.20.3.0/24 table 101
  N route del blackhole 10.20.4.0/24 table 101
  N -6 route replace 2001:db8:1::/48 via fd09::3 dev v0 $m table 101
  N -6 route replace 2001:db8:7::/48 via fd09::3 dev v0 $m table 101
  N -6 route replace 2001:db8:2::/48 $m table 101 nexthop via fd09::3 dev v0 weight 2 nexthop via fd08::2 dev w0 weight 7
  N -6 route del 2001:db8:3::/48 table 101
}

cat > "$WORK/bird.conf" <<EOC
log "$WORK/bird.log" all;
router id 10.9.0.1;
ipv4 table t4_100; ipv4 table t4_101; ipv6 table t6_100; ipv6 table t6_101;
protocol device { scan time 10; }
protocol kernel k4_100 { kernel table 100; learn; scan time 20; ipv4 { table t4_100; import all; export none; }; }
protocol kernel k4_101 { kernel table 101; learn; scan time 20; ipv4 { table t4_101; import all; export none; }; }
protocol kernel k6_100 { kernel table 100; learn; scan time 20; ipv6 { table t6_100; import all; export none; }; }
protocol kernel k6_101 { kernel table 101; learn; scan time 20; ipv6 { table t6_101; import all; export none; }; }
EOC

C() { "$CUR/birdc" -s "$WORK/ctl" "$@" 2>/dev/null | sed '1{/^BIRD .* ready\.$/d}'; }
# view T -- `show route all` of BIRD tables t4_T and t6_T, one line per route
# (protocol and time left out), sorted
view() {
  { C show route all table "t4_$1"; C show route all table "t6_$1"; } |
    sed -E '/^Table /d; s/\[k[46]_10[01] [^]]*\]/[kernel]/' |
    awk '/^[^\t ]/ { if (r != "") print r; r = $0; next } { r = r " |" $0 } END { if (r != "") print r }' |
    sed -E 's/  +/ /g' | LC_ALL=C sort
}
# run_bird BINDIR -- bird in the namespace, until its first scans are done
run_bird() {
  CUR=$1
  [ -f "$WORK/bird.log" ] && cat "$WORK/bird.log" >> "$WORK/bird.log.old"
  : > "$WORK/bird.log"
  ip netns exec "$NS" "$CUR/bird" -f -c "$WORK/bird.conf" -s "$WORK/ctl" > "$WORK/bird.out" 2>&1 &
  PID=$!
  BIRD_PIDS+=($PID)
  for _ in $(seq 100); do
    [ "$(view 101 | wc -l)" = 13 ] && { sleep 1; return 0; }
    sleep 0.1
  done
  return 1
}
stop_bird() { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; }
differ() { ! cmp -s "$1" "$2"; }
absent() { ! grep -qiE "$@"; }
# settle -- until table 100 looks as table 101 (up to 10 s)
settle() { for _ in $(seq 50); do [ "$(view 100)" = "$(view 101)" ] && return 0; sleep 0.2; done; return 1; }
# show_diff -- where the view of table 100 differs from that of table 101
show_diff() {
  diff <(view 101) <(view 100) | sed -nE 's/^</    old way:/p; s/^>/    learned:/p' | head -20
}

# Stock and patched, compat mode 1 and 0: the view of the first scans
for who in stock patched; do
  [ "$who" = stock ] && bin=$S_BIN || bin=$P_BIN
  for mode in 1 0; do
    name="$who, compat mode $mode"
    ns_up "$mode" || { bad "$name: namespace with nexthop_compat_mode=$mode"; continue; }
    if ! run_bird "$bin"; then
      bad "$name: bird starts and learns the 13 old-way routes"; cat "$WORK/bird.out"; continue
    fi
    view 100 > "$WORK/$who.$mode.100"
    view 101 > "$WORK/$who.$mode.101"
    errs=$(grep -cE "unknown ifindex|unknown nexthop id|strange" "$WORK/bird.log")
    if [ "$who" = stock ] && [ "$mode" = 0 ]; then
      n=$(wc -l < "$WORK/$who.$mode.100")
      echo "$STOCK_BUG: with nexthop_compat_mode=0 stock learns $n of 13 routes through nexthop objects, logging:"
      grep -m 2 "unknown ifindex" "$WORK/bird.log" | sed 's/^/    /'
      check "stock bug reproduced: stock's view of the nexthop-object routes differs from the old way" \
        differ "$WORK/$who.$mode.100" "$WORK/$who.$mode.101"
    else
      check "$name: nexthop-object routes learned as the same routes written the old way" \
        cmp -s "$WORK/$who.$mode.100" "$WORK/$who.$mode.101"
      cmp -s "$WORK/$who.$mode.100" "$WORK/$who.$mode.101" || show_diff
      check "$name: no 'unknown ifindex', 'unknown nexthop id' or 'strange' in the log ($errs)" [ "$errs" = 0 ]
    fi
    if [ "$who" = patched ] || [ "$mode" = 1 ]; then
      # Behind bird's back; the next periodic scan is 20 s away
      change
      if settle; then
        ok "$name: after objects changed and deleted, table 100 as table 101 (before the next scan)"
      elif [ "$who" = stock ]; then
        echo "$STOCK_BUG: with nexthop_compat_mode=$mode stock keeps stale routes of changed or deleted objects until its next scan:"
        show_diff
      else
        bad "$name: after objects changed and deleted, table 100 as table 101 (before the next scan)"
        show_diff
      fi
    fi
    stop_bird
  done
done
check "the old-way view is the same for stock and patched" cmp -s "$WORK/stock.1.101" "$WORK/patched.1.101"
check "patched: the same view in compat mode 0 and 1" cmp -s "$WORK/patched.0.100" "$WORK/patched.1.100"
check "no crash" absent "segmentation|assertion|<BUG>|crash" "$WORK/bird.log.old" "$WORK/bird.log" "$WORK/bird.out"
finish
