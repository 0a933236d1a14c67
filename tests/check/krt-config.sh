# Kernel protocol options of bloombird's kernel sync (netlink async, netlink
# thread, netlink batch, netlink queue, scan slice): accepted in range, rejected with file and
# line outside it; stock's kernel options still parse beside them.
# tier: quick
. "$(dirname "$0")/../lib.sh"

conf() {  # conf OPTIONS -- the options on line 5
  printf 'router id 192.0.2.1;\nprotocol device {}\nprotocol kernel k4 {\n  ipv4 { export all; };\n  %s\n}\n' "$1" > "$WORK/k.conf"
}
parse() { "$BIN/bird" -p -c "$WORK/k.conf" 2>&1; }

for opt in "netlink async on;" "netlink async off;" "netlink async;" "netlink thread on;" "netlink thread off;" "netlink batch 1;" "netlink batch 16384;" \
           "netlink queue 1;" "netlink queue 1048576;" "scan slice 100 us;" "scan slice 5 ms;" "scan slice 1 s;" \
           "kernel table 100; metric 0; netlink rx buffer 65536; persist; scan time 10; netlink batch 256; netlink queue 4096; scan slice 2 ms;"; do
  conf "$opt"
  out=$(parse)
  check "accepted: $opt" [ -z "$out" ]
  [ -z "$out" ] || echo "    $out"
done

while IFS='|' read -r opt msg; do
  conf "$opt"
  out=$(parse)
  check "rejected with file:line: $opt" grep -q "k.conf:5:.*$msg" <<< "$out"
  echo "    $out"
done <<'EOF'
netlink batch 0;|Netlink batch must be in range 1-16384
netlink batch 16385;|Netlink batch must be in range 1-16384
netlink queue 0;|Netlink queue must be in range 1-1048576
netlink queue 1048577;|Netlink queue must be in range 1-1048576
scan slice 99 us;|Scan slice must be in range 100 us - 1 s
scan slice 2 s;|Scan slice must be in range 100 us - 1 s
scan slice 0;|syntax error
netlink async maybe;|syntax error
netlink thread 2 cpus;|syntax error
netlink batch;|syntax error
EOF

# Stock bird does not know the options (they are bloombird's)
conf "netlink batch 64;"
check "stock bird rejects bloombird's options" grep -q "k.conf:5:" <<< "$("$STOCK_BIN/bird" -p -c "$WORK/k.conf" 2>&1)"
finish
