# Table options `bloom ...': good values parse, bad ones are rejected with
# file and line; stock BIRD does not know them. The benchmarks' ablation
# engine is not a configuration engine.
# tier: quick
. "$(dirname "$0")/../lib.sh"

conf() {  # conf FILE TABLE-OPTIONS...
  local f=$1; shift
  {
    echo "router id 192.0.2.1;"
    echo "ipv4 table t4 {"
    for o; do echo "  $o;"; done
    echo "};"
    echo "protocol device {}"
  } > "$f"
}

conf "$WORK/good.conf" "bloom on" "bloom hashes 4" "bloom counters 16" "trie on"
check "good bloom options parse" "$BIN/bird" -p -c "$WORK/good.conf"
conf "$WORK/off.conf" "bloom off"
check "bloom off parses" "$BIN/bird" -p -c "$WORK/off.conf"
conf "$WORK/bare.conf" "bloom"
check "bare 'bloom' means on" "$BIN/bird" -p -c "$WORK/bare.conf"

# Each bad value sits on line 3 (line 1 router id, 2 table header, 3 first option)
for opt in "bloom hashes 0" "bloom hashes 10" "bloom counters 3" "bloom counters 65" "bloom maybe" "bloom hashes" "bloom counters -1"; do
  conf "$WORK/bad.conf" "$opt"
  out=$("$BIN/bird" -p -c "$WORK/bad.conf" 2>&1); rc=$?
  echo "  '$opt' -> rc=$rc: $out"
  check "'$opt' is rejected" [ "$rc" != 0 ]
  check "'$opt' error names file and line 3" grep -q "$WORK/bad.conf:3:" <<< "$out"
done
conf "$WORK/bad.conf" "bloom hashes 0"
check "range error text" grep -q "Bloom hashes must be in range 1-9" <<< "$("$BIN/bird" -p -c "$WORK/bad.conf" 2>&1)"

# perlength, dpcpe's ablation for benchmarks, is no configuration engine
conf "$WORK/bad.conf" "lpm engine perlength"
out=$("$BIN/bird" -p -c "$WORK/bad.conf" 2>&1)
echo "  'lpm engine perlength' -> $out"
check "'lpm engine perlength' is rejected with file and line" grep -q "$WORK/bad.conf:3:.*Unknown LPM engine perlength" <<< "$out"

check "stock BIRD does not know 'bloom' (the options are ours)" bash -c "! '$STOCK_BIN/bird' -p -c '$WORK/good.conf' 2>/dev/null"
finish
