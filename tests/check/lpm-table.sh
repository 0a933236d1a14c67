# Tables with an LPM engine (`lpm engine ...'): configuration accepted and
# rejected with file and line, a running patched bird answering `show route
# for' like stock with every engine and every CPU variant this machine has,
# `show lpm', `show lpm benchmark', reconfiguration in place, bad input.
. "$(dirname "$0")/../lib.sh"

engines=$(for e in simd dpcpe; do
  printf 'router id 192.0.2.1;\nipv4 table t { lpm engine %s; };\nprotocol device {}\n' "$e" > "$WORK/e.conf"
  "$BIN/bird" -p -c "$WORK/e.conf" >/dev/null 2>&1 && echo "$e"
done)
cpu=$(grep -o -w 'avx512bw\|avx2' /proc/cpuinfo | sort -u | sed 's/avx512bw/avx512/' | tr '\n' ' ')
variants="scalar $cpu"
echo "engines built in: $engines; CPU variants here: $variants"
check "at least the simd engine is built in" grep -qw simd <<< "$engines"

# --- configuration: good and bad values, file and line ----------------------
conf() {  # conf FILE TYPE TABLE-OPTIONS...
  local f=$1 t=$2; shift 2
  { echo "router id 192.0.2.1;"; echo "$t table t {"; for o; do echo "  $o;"; done; echo "};"; echo "protocol device {}"; } > "$f"
}
for e in $engines; do
  conf "$WORK/good.conf" ipv4 "lpm engine $e" "lpm variant auto"
  check "lpm engine $e parses" "$BIN/bird" -p -c "$WORK/good.conf"
  for v in $variants; do
    conf "$WORK/good.conf" ipv6 "lpm engine $e" "lpm variant $v"
    check "lpm engine $e, variant $v parses (ipv6)" "$BIN/bird" -p -c "$WORK/good.conf"
  done
done
conf "$WORK/good.conf" ipv4 "lpm engine off"
check "lpm engine off parses" "$BIN/bird" -p -c "$WORK/good.conf"

bad_case() {  # bad_case TYPE OPTION TEXT [env]
  local t=$1 opt=$2 text=$3; shift 3
  conf "$WORK/bad.conf" "$t" "$opt"
  local out rc
  out=$(env "$@" "$BIN/bird" -p -c "$WORK/bad.conf" 2>&1); rc=$?
  echo "  '$opt' ($t${*:+, $*}) -> rc=$rc: $out"
  check "'$opt' in a $t table is rejected" [ "$rc" != 0 ]
  check "'$opt' error names file and line 3" grep -q "$WORK/bad.conf:3:" <<< "$out"
  check "'$opt' error says: $text" grep -q "$text" <<< "$out"
}
bad_case ipv4 "lpm engine nosuch" "Unknown LPM engine nosuch"
bad_case ipv4 "lpm variant avx9" "Unknown LPM variant avx9"
bad_case flow4 "lpm engine simd" "LPM engines serve ipv4, ipv6, roa4 and roa6 tables only"
bad_case vpn4 "lpm engine simd" "LPM engines serve ipv4, ipv6, roa4 and roa6 tables only"
bad_case ipv4 "lpm levels 0" "LPM levels must be in range"
# A variant the CPU lacks (an older CPU, simulated by hiding features)
conf "$WORK/bad.conf" ipv4 "lpm engine simd" "lpm variant avx512"
out=$(BLOOMBIRD_CPU_DISABLE=avx512 "$BIN/bird" -p -c "$WORK/bad.conf" 2>&1); rc=$?
echo "  'lpm variant avx512' on a CPU without it -> rc=$rc: $out"
check "a variant the CPU lacks is a configuration error with file and line" grep -q "bad.conf:4:.*LPM variant avx512 is not available here" <<< "$out"
check "auto on a CPU without avx512 still parses" env BLOOMBIRD_CPU_DISABLE=avx512 "$BIN/bird" -p -c "$WORK/good.conf"
check "stock BIRD does not know 'lpm engine'" bash -c "! '$STOCK_BIN/bird' -p -c '$WORK/good.conf' 2>/dev/null"

# --- a running daemon: answers equal to stock's -----------------------------
# Nested IPv4 (/8../32, a default route) and IPv6 (/16../128) static routes,
# some unreachable (valid), some filtered out by the import filter (no
# valid route: the engine must not answer with them)
gen_routes() {
  echo "  route 0.0.0.0/0 blackhole;"
  for a in $(seq 0 23); do
    echo "  route 10.$a.0.0/16 blackhole;"
    for b in $(seq 0 16 255); do echo "  route 10.$a.$b.0/20 blackhole;"; done
    for b in $(seq 0 3 255); do echo "  route 10.$a.$b.0/24 unreachable;"; done
    for b in $(seq 0 37 255); do echo "  route 10.$a.$b.128/25 blackhole; route 10.$a.$b.77/32 blackhole; route 10.$a.$b.76/31 prohibit;"; done
  done
  for a in $(seq 0 2 255); do echo "  route 172.$((16 + a % 16)).$a.0/24 unreachable;"; done
}
gen_routes6() {
  echo "  route ::/0 blackhole;"
  for a in $(seq 0 15); do
    printf '  route 2001:db8:%x::/48 blackhole;\n' "$a"
    for b in $(seq 0 7 255); do printf '  route 2001:db8:%x:%x00::/56 blackhole;\n' "$a" "$b"; done
    for b in $(seq 0 11 255); do printf '  route 2001:db8:%x:%x::/64 blackhole; route 2001:db8:%x:%x::1/128 blackhole;\n' "$a" "$b" "$a" "$b"; done
  done
}
gen_roas() {  # nested ROAs: /8../24, max lengths, several origins per prefix
  echo "  route 10.0.0.0/8 max 12 as 64500;"
  for a in $(seq 0 23); do
    echo "  route 10.$a.0.0/16 max $((16 + a % 5)) as $((64500 + a % 7));"
    for b in $(seq 0 16 255); do echo "  route 10.$a.$b.0/20 max 24 as 64510;"; done
    for b in $(seq 0 5 255); do echo "  route 10.$a.$b.0/24 max 24 as $((64500 + b % 13)); route 10.$a.$b.0/24 max 24 as 64511;"; done
  done
}
gen_roas6() {
  echo "  route 2001:db8::/32 max 40 as 64500;"
  for a in $(seq 0 15); do
    printf '  route 2001:db8:%x::/48 max %d as %d;\n' "$a" $((48 + a % 9)) $((64500 + a % 7))
    for b in $(seq 0 9 255); do printf '  route 2001:db8:%x:%x00::/56 max 64 as 64510; route 2001:db8:%x:%x00::/56 max 56 as 64511;\n' "$a" "$b" "$a" "$b"; done
  done
}
mkconf() {  # mkconf FILE TABLE-OPTIONS [ROA-TABLE-OPTIONS]
  {
    echo "router id 192.0.2.1;"
    echo "ipv4 table master4 { $2 };"
    echo "ipv6 table master6 { $2 };"
    echo "roa4 table r4 { ${3:-} };"
    echo "roa6 table r6 { ${3:-} };"
    echo "protocol static roas4 { roa4 { table r4; }; "; gen_roas; echo "}"
    echo "protocol static roas6 { roa6 { table r6; }; "; gen_roas6; echo "}"
    echo "protocol device {}"
    echo "protocol static s4 { ipv4 { import where net !~ [ 10.3.0.0/16+, 10.5.7.0/24+ ]; }; "; gen_routes; echo "}"
    echo "protocol static s6 { ipv6 { import where net !~ [ 2001:db8:3::/48+ ]; }; "; gen_routes6; echo "}"
  } > "$1"
}
mkconf "$WORK/s.conf" ""
start_bird S "$STOCK_BIN" "$WORK/s.conf" || { bad "stock bird starts"; cat "$WORK/S.log"; finish; }
first=$(echo $engines | cut -d' ' -f1)
mkconf "$WORK/p.conf" "lpm engine $first;"
start_bird P "$BIN" "$WORK/p.conf" || { bad "patched bird starts"; cat "$WORK/P.log"; finish; }
sleep 1
P() { birdc_q "$BIN" "$SOCK_P" "$@"; }
S() { birdc_q "$STOCK_BIN" "$SOCK_S" "$@"; }

addrs() {
  for i in $(seq 1 400); do echo "10.$((RANDOM % 26)).$((RANDOM % 256)).$((RANDOM % 256))"; done
  for i in $(seq 1 40); do echo "10.$((RANDOM % 24)).$((RANDOM % 256)).$((76 + RANDOM % 2))"; done
  for i in $(seq 1 40); do echo "172.$((16 + RANDOM % 16)).$((RANDOM % 256)).1"; done
  for i in $(seq 1 20); do echo "192.0.2.$((RANDOM % 256))"; done
  for i in $(seq 1 120); do printf '2001:db8:%x:%x::%x\n' $((RANDOM % 18)) $((RANDOM % 4096)) $((RANDOM % 3)); done
  for i in $(seq 1 20); do printf '2001:db8:%x::/%d\n' $((RANDOM % 18)) $((40 + RANDOM % 20)); done
  for i in $(seq 1 20); do echo "10.$((RANDOM % 24)).$((RANDOM % 256)).0/$((18 + RANDOM % 8))"; done
}
addrs > "$WORK/addrs"
norm() { sed -E 's/\[[a-z0-9]+ [0-9:.-]+\]/[proto time]/; s/ [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?//'; }
lookups() { while read -r a; do echo "== $a"; "$1" show route for "$a" | norm; done < "$WORK/addrs"; }
lookups S > "$WORK/s.out"
check "stock answered with routes" grep -q blackhole "$WORK/s.out"
check "the import filter left some nets without a route" grep -q "10.3" <<< "$(grep -A1 '^== 10.3\.' "$WORK/s.out" | head -4)"
nroutes=$(S show route count table master4 | sed -nE 's/.* for ([0-9]+) networks.*/\1/p')

show_lpm_check() {  # show_lpm_check ENGINE VARIANT
  local sl; sl=$(P show lpm master4); echo "$sl" | head -12
  check "show lpm: engine $1, variant $2" grep -q "Engine: *$1, variant $2" <<< "$sl"
  check "show lpm: $nroutes prefixes (the routed nets)" grep -q "Prefixes: *$nroutes " <<< "$sl"
}

for e in $engines; do
  for v in $variants; do
    mkconf "$WORK/p.conf" "lpm engine $e; lpm variant $v;"
    out=$(P configure); echo "configure $e/$v: $out"
    check "birdc configure to engine $e, variant $v" grep -q "Reconfigured" <<< "$out"
    show_lpm_check "$e" "$v"
    lookups P > "$WORK/p.out"
    check "$e/$v: show route for $(wc -l < "$WORK/addrs") addresses and prefixes, identical to stock" diff -u "$WORK/s.out" "$WORK/p.out"
  done
  # Route changes after the build: a protocol down and up again
  P disable s4 > /dev/null; sleep 0.5
  check "$e: no prefixes held while the routes are gone" grep -q "Prefixes: *[0-2] " <<< "$(P show lpm master4)"
  P enable s4 > /dev/null; sleep 1
  lookups P > "$WORK/p.out"
  check "$e: answers identical to stock after the routes went and came back" diff -u "$WORK/s.out" "$WORK/p.out"
  bench=$(P show lpm benchmark master4 20000); echo "$bench"
  check "$e: show lpm benchmark measures every variant ($variants)" [ "$(grep -c 'batches of' <<< "$bench")" = "$(echo $variants | wc -w)" ]
  check "$e: show lpm benchmark finds no mismatch" bash -c "! grep -q MISMATCH <<< '$bench'"
done

# dpcpe: its levels, filters and false-positive rates in show lpm; `lpm levels'
if grep -qw dpcpe <<< "$engines"; then
  mkconf "$WORK/p.conf" "lpm engine dpcpe;"
  P configure > /dev/null
  sl=$(P show lpm master4); echo "$sl"
  check "dpcpe show lpm (ipv4): the fixed groups, direct /20" grep -q "Levels: *IPv4, direct /20 + 2 hash levels (fixed groups /24, /32)" <<< "$sl"
  check "dpcpe show lpm (ipv4): level /32 and /24 with counts, filter size and measured false positives" \
    bash -c "grep -qE 'Level /32 .*prefixes /25-/32, [0-9]+ entries, table .*filter .*false positives [0-9.]+ measured' <<< '$sl' && grep -q 'Level /24 ' <<< '$sl'"
  check "dpcpe show lpm (ipv4): memory" grep -q "Memory: *lookup " <<< "$sl"
  check "dpcpe show lpm (ipv4): hint bytes by /16, some naming levels, 2 bits" \
    bash -c "grep -qE 'Hints /16: +[1-9][0-9]* of 65536 name levels, 64 kB, 2 bits' <<< '$sl'"
  mkconf "$WORK/p.conf" "lpm engine dpcpe; lpm levels 3;"
  out=$(P configure); echo "configure dpcpe, lpm levels 3: $out"
  sl=$(P show lpm master6); echo "$sl"
  check "dpcpe lpm levels 3 (ipv6): levels chosen by DP" grep -qE "Levels: *IPv6, direct /16 \+ [1-3] hash levels? \(chosen by DP\)" <<< "$sl"
  check "dpcpe show lpm (ipv6): fine hint bytes by hashed /32, some naming levels" \
    bash -c "grep -qE 'Hints /32: +[1-9][0-9]* of 65536 hashed bytes name levels of /32 or longer, 64 kB' <<< '$sl'"
  lookups P > "$WORK/p.out"
  check "dpcpe, lpm levels 3: show route for identical to stock" diff -u "$WORK/s.out" "$WORK/p.out"
fi
bad_case ipv6 "lpm levels 1" "LPM levels must be in range 2-16"
bad_case ipv6 "lpm levels 17" "LPM levels must be in range 2-16"

# Engine off in place; a bad value keeps the running engine
mkconf "$WORK/p.conf" "lpm engine $first;"
P configure > /dev/null
before=$(P show lpm master4 | grep -E "Engine|Prefixes")
mkconf "$WORK/p.conf" "lpm engine nosuch;"
out=$(P configure); echo "$out"
check "birdc configure with an unknown engine fails with file:line" grep -q "p.conf:2:.*Unknown LPM engine nosuch" <<< "$out"
check "the running engine is kept after the bad configure" [ "$before" = "$(P show lpm master4 | grep -E "Engine|Prefixes")" ]
mkconf "$WORK/p.conf" "lpm engine off;"
P configure > /dev/null
check "lpm engine off drops the engine" grep -q "Engine: *none" <<< "$(P show lpm master4)"
lookups P > "$WORK/p.out"
check "answers identical to stock without the engine" diff -u "$WORK/s.out" "$WORK/p.out"

# --- ROA tables: roa_check() through the engine, as stock answers ----------
roaq() {  # prefixes (host bits clear) and origins, some without an origin (0)
  python3 - <<'PY'
import ipaddress, random
r = random.Random(9)
for i in range(270):
    a = ipaddress.ip_address("10.%d.%d.%d" % (r.randrange(26), r.randrange(256), r.randrange(256)))
    n = ipaddress.ip_network("%s/%d" % (a, r.randrange(8, 33)), strict=False)
    print(n, 0 if i >= 250 else 64500 + r.randrange(14))
for i in range(10):    # no covering ROA: unknown
    print("172.%d.%d.0/24" % (16 + r.randrange(16), r.randrange(256)), 64500 + r.randrange(14))
    print("2001:db9:%x::/48" % r.randrange(65536), 64500 + r.randrange(14))
for i in range(120):
    a = ipaddress.ip_address("2001:db8:%x:%x00::" % (r.randrange(18), r.randrange(256)))
    n = ipaddress.ip_network("%s/%d" % (a, r.randrange(32, 72)), strict=False)
    print(n, 64500 + r.randrange(14))
PY
}
roaq > "$WORK/roaq"
roa_checks() {  # roa_checks P|S: every query through `eval roa_check()'
  while read -r px asn; do
    t=r4; case "$px" in *:*) t=r6 ;; esac
    echo "$px $asn $("$1" eval "roa_check($t, $px, $asn)" < /dev/null | sed 's/^(enum [0-9]*)//' | tr '\n' ' ')"
  done < "$WORK/roaq"
}
verdicts() { awk '{print $NF}' "$1" | sort | uniq -c | tr '\n' ' '; }
roa_checks S > "$WORK/sr.out"
echo "stock ROA verdicts: $(verdicts "$WORK/sr.out")"
check "stock's ROA checks: one answer per query ($(wc -l < "$WORK/roaq"))" [ "$(grep -cE ' [012] $' "$WORK/sr.out")" = "$(wc -l < "$WORK/roaq")" ]
check "stock's ROA checks give valid (1), invalid (2) and unknown (0)" [ "$(awk '{print $NF}' "$WORK/sr.out" | sort -u | wc -l)" = 3 ]
for e in $engines; do
  mkconf "$WORK/p.conf" "lpm engine off;" "lpm engine $e;"
  out=$(P configure); echo "configure ROA tables to engine $e: $out"
  check "birdc configure: ROA tables get engine $e" grep -q "Reconfigured" <<< "$out"
  sl=$(P show lpm r4); echo "$sl"
  n4=$(gen_roas | awk '{print $2}' | sort -u | wc -l)
  check "show lpm r4: engine $e, $n4 distinct ROA prefixes" grep -q "Prefixes: *$n4 (distinct ROA prefixes" <<< "$sl"
  check "show lpm r4: memory in all, ROA groups included" grep -qE "Memory in all: *[1-9][0-9]* bytes .*ROA prefix groups" <<< "$sl"
  roa_checks P > "$WORK/pr.out"
  check "$e: $(wc -l < "$WORK/roaq") roa_check() answers identical to stock" diff -u "$WORK/sr.out" "$WORK/pr.out"
  check "$e: the engine answered them" grep -qE "Lookups: *[1-9][0-9]* ROA checks answered" <<< "$(P show lpm r4)"
  # ROAs withdrawn and back: every prefix leaves the engine, then returns
  P disable roas4 > /dev/null; S disable roas4 > /dev/null; sleep 0.5
  check "$e: no ROA prefixes held while the ROAs are gone" grep -q "Prefixes: *0 " <<< "$(P show lpm r4)"
  roa_checks S > "$WORK/sr0.out"; roa_checks P > "$WORK/pr0.out"
  check "$e: answers identical to stock without the IPv4 ROAs" diff -u "$WORK/sr0.out" "$WORK/pr0.out"
  P enable roas4 > /dev/null; S enable roas4 > /dev/null; sleep 1
  roa_checks P > "$WORK/pr.out"
  check "$e: answers identical to stock after the ROAs came back" diff -u "$WORK/sr.out" "$WORK/pr.out"
  out=$(P show lpm benchmark r4 2>&1)
  check "$e: show lpm benchmark on a ROA table is refused with a reason" grep -q "is a ROA table" <<< "$out"
done
mkconf "$WORK/p.conf" "lpm engine off;" "lpm engine off;"
P configure > /dev/null
roa_checks P > "$WORK/pr.out"
check "ROA tables without the engine again: answers identical to stock" diff -u "$WORK/sr.out" "$WORK/pr.out"

# --- ROA tables without an engine: the FIB's ROA index (nest/fib-roa.c) -----
# Each `show route ... where roa_check()' checks every route of master4; the
# first check builds r4's ROA index (with block masks of its own, no filter
# needed), which rte_announce() keeps from then on.
roa_nets() {  # roa_nets P|S ASN VERDICT [ROA-TABLE TABLE]: the networks of master4 (TABLE) with that verdict
  "$1" show route table "${5:-master4}" where "roa_check(${4:-r4}, net, $2) = $3" | awk '$1 ~ /^[0-9a-f:]/ {print $1}' | sort
}
for pass in 1 2 3 4; do
  for asn in $(seq 64500 64513); do P show route table master4 where "roa_check(r4, net, $asn) = ROA_VALID" count > /dev/null; done
  grep -q "ROA index:" <<< "$(P show fib r4)" && break
done
fib=$(P show fib r4); echo "$fib" | grep -E "Bloom filter|ROA"
check "checks built r4's ROA index, with its block masks" grep -qE "ROA index: *[1-9][0-9]* prefixes with [1-9][0-9]* valid ROAs.*block masks" <<< "$fib"
roa_index_same() {  # roa_index_same WHEN [ROA-TABLE TABLE ASNS]: verdicts of every master4 (TABLE) route, as stock's
  local asn v t=${2:-r4}
  for asn in ${4:-0 64500 64504 64510 64511}; do
    for v in ROA_VALID ROA_INVALID ROA_UNKNOWN; do
      roa_nets S "$asn" "$v" "$t" "${3:-master4}" > "$WORK/sv.out"; roa_nets P "$asn" "$v" "$t" "${3:-master4}" > "$WORK/pv.out"
      check "ROA index, $1: roa_check($t, net, $asn) = $v for the same $(wc -l < "$WORK/sv.out") routes as stock" diff -u "$WORK/sv.out" "$WORK/pv.out"
    done
  done
}
roa_index_same "built"
check "show fib r4: checks went through the index" grep -qE "ROA checks: *[1-9][0-9]* through the index" <<< "$(P show fib r4)"
# The /24 ROAs (each line of gen_roas holds both of a /24) withdrawn through
# rte_announce() (the static protocol reconfigured)
mkconf "$WORK/p.conf" "lpm engine off;" "lpm engine off;"
sed -i '/route 10\.[0-9]*\.[0-9]*\.0\/24 max 24 as 64511;/d' "$WORK/p.conf" "$WORK/s.conf"
P configure > /dev/null; S configure > /dev/null; sleep 1
echo "  after withdrawing the /24 ROAs: $(P show fib r4 | grep -E 'ROA index' | tr -s ' ')"
roa_index_same "/24 ROAs withdrawn"

# The IPv6 index: built by the first check as well, with its own block masks
# and a mask per /32 (no filter needed); verdicts of every master6 route
P show route table master6 where "roa_check(r6, net, 64500) = ROA_VALID" count > /dev/null
fib6=$(P show fib r6); echo "$fib6" | grep -E "Bloom filter|ROA"
check "a check built r6's ROA index, with its /32 masks" grep -qE "ROA index: *[1-9][0-9]* prefixes with [1-9][0-9]* valid ROAs.*/32 masks" <<< "$fib6"
roa_index_same "IPv6" r6 master6 "0 64500 64503 64510 64511"
check "show fib r6: checks went through the index" grep -qE "ROA checks: *[1-9][0-9]* through the index" <<< "$(P show fib r6)"

# Bad birdc arguments: errors, not crashes
for cmd in "show lpm nosuchtable" "show lpm benchmark master4 5" "show lpm benchmark" "show lpm benchmark master4" "show lpm master4 master6"; do
  out=$(P $cmd 2>&1); echo "  '$cmd' -> $(echo "$out" | head -2 | tr '\n' ' ')"
  case "$cmd" in
    "show lpm benchmark master4") check "'$cmd' without an engine is refused" grep -q "has no usable LPM engine" <<< "$out" ;;
    *5) check "'$cmd' gets a range error" grep -q "Count must be in range 1000-10000000" <<< "$out" ;;
    *) check "'$cmd' gets a syntax error" grep -qiE "syntax error" <<< "$out" ;;
  esac
done
check "daemon still answers after bad commands" grep -q "Daemon is up and running" <<< "$(P show status)"
finish
