# A running patched bird: show fib, LPM answers equal to stock for the same
# routes, reconfiguration of the filter, and bad input that changes nothing.
# tier: quick
. "$(dirname "$0")/../lib.sh"

# 2300 static IPv4 routes (nested /16, /20, /24 and a few /32) and 800 IPv6:
# enough for the FIB hash to pass order 11 and get its filter.
gen_routes() {
  for a in $(seq 0 19); do
    echo "  route 10.$a.0.0/16 blackhole;"
    for b in $(seq 0 16 255); do echo "  route 10.$a.$b.0/20 blackhole;"; done
    for b in $(seq 0 3 255); do echo "  route 10.$a.$b.0/24 blackhole;"; done
    for b in $(seq 0 37 255); do echo "  route 10.$a.$b.77/32 blackhole;"; done
  done
  for a in $(seq 0 2 255); do echo "  route 172.$((16 + a % 16)).$a.0/24 unreachable;"; done
}
gen_routes6() {
  for a in $(seq 0 15); do
    printf '  route 2001:db8:%x::/48 blackhole;\n' "$a"
    for b in $(seq 0 7 255); do printf '  route 2001:db8:%x:%x00::/56 blackhole;\n' "$a" "$b"; done
    for b in $(seq 0 11 255); do printf '  route 2001:db8:%x:%x::/64 blackhole;\n' "$a" "$b"; done
  done
}
mkconf() {  # mkconf FILE EXTRA-TABLE-OPTION
  {
    echo "router id 192.0.2.1;"
    echo "ipv4 table master4 { $2 };"
    echo "ipv6 table master6 { $2 };"
    echo "protocol device {}"
    echo "protocol static s4 { ipv4;"; gen_routes; echo "}"
    echo "protocol static s6 { ipv6;"; gen_routes6; echo "}"
  } > "$1"
}
mkconf "$WORK/p.conf" ""
mkconf "$WORK/s.conf" ""
start_bird P "$BIN" "$WORK/p.conf" || { bad "patched bird starts"; cat "$WORK/P.log"; finish; }
start_bird S "$STOCK_BIN" "$WORK/s.conf" || { bad "stock bird starts"; cat "$WORK/S.log"; finish; }
sleep 1
P() { birdc_q "$BIN" "$SOCK_P" "$@"; }
S() { birdc_q "$STOCK_BIN" "$SOCK_S" "$@"; }

fib=$(P show fib); echo "$fib"
check "show fib shows master4's filter state (dormant or active)" grep -qE "Bloom filter: *(dormant|active), 5 hashes, 10 counters/entry" <<< "$(P show fib master4)"
nets=$(S show route count table master4 | sed -nE 's/.* for ([0-9]+) networks.*/\1/p')
check "show fib counts the entries ($nets networks)" grep -q "Entries: *$nets " <<< "$(P show fib master4)"
check "show fib lists prefix lengths" grep -q "Prefix lengths: */16-/32, 4 in use" <<< "$(P show fib master4)"
check "show fib help exists" grep -qi "bloom" <<< "$(P help show fib 2>&1 || true; "$BIN/birdc" -s "$SOCK_P" 'show fib ?' 2>&1)"

# LPM through the daemon: show route for, patched vs stock
addrs() {
  for i in $(seq 1 300); do echo "10.$((RANDOM % 24)).$((RANDOM % 256)).$((RANDOM % 256))"; done
  for i in $(seq 1 60); do echo "172.$((16 + RANDOM % 16)).$((RANDOM % 256)).1"; done
  for i in $(seq 1 60); do printf '2001:db8:%x:%x::1\n' $((RANDOM % 18)) $((RANDOM % 4096)); done
}
addrs > "$WORK/addrs"
norm() { sed -E 's/\[[a-z0-9]+ [0-9:.-]+\]/[proto time]/; s/ [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?//'; }
lookups() {  # lookups P|S
  while read -r a; do echo "== $a"; "$1" show route for "$a" | norm; done < "$WORK/addrs"
}
lookups P > "$WORK/p.out"; lookups S > "$WORK/s.out"
check "show route for: 420 addresses answered identically by patched and stock" diff -u "$WORK/s.out" "$WORK/p.out"
check "show route for found routes at all" grep -q blackhole "$WORK/p.out"
check "show route count equal" diff <(S show route count) <(P show route count)

# Reconfigure: bad value is rejected with file:line and nothing changes
before=$(P show fib master4 | grep -E "Bloom filter|Entries")
cp "$WORK/p.conf" "$WORK/p.good"
mkconf "$WORK/p.conf" "bloom hashes 99;"
out=$(P configure); echo "$out"
check "birdc configure with a bad bloom value fails with file:line" grep -q "p.conf:2:.*Bloom hashes must be in range 1-9" <<< "$out"
check "running filter unchanged after the bad configure" [ "$before" = "$(P show fib master4 | grep -E "Bloom filter|Entries")" ]
check "routes still there after the bad configure" diff <(S show route count) <(P show route count)

mkconf "$WORK/p.conf" "bloom hashes 3; bloom counters 20;"
out=$(P configure); echo "$out"
check "birdc configure with good bloom values succeeds" grep -q "Reconfigured" <<< "$out"
check "new bloom shape applied" grep -q "3 hashes, 20 counters/entry" <<< "$(P show fib master4)"
lookups P > "$WORK/p2.out"
check "answers unchanged after the filter was rebuilt" diff -u "$WORK/s.out" "$WORK/p2.out"

mkconf "$WORK/p.conf" "bloom off;"
P configure >/dev/null
check "bloom off shows as off" grep -q "Bloom filter: *off" <<< "$(P show fib master4)"
lookups P > "$WORK/p3.out"
check "answers unchanged with bloom off" diff -u "$WORK/s.out" "$WORK/p3.out"

# Bad birdc arguments: an error, not a crash
for cmd in "show fib nosuchtable" "show fib 1.2.3.4" "show fib master4 master6" "show fib \"x"; do
  out=$(P $cmd 2>&1); echo "  '$cmd' -> $out"
  check "'$cmd' gets an error" grep -qiE "syntax error|unterminated" <<< "$out"
done
check "daemon still answers after bad commands" grep -q "Daemon is up and running" <<< "$(P show status)"
finish
