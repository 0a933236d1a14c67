# Differential test: BIRD's fib_find(), fib_route(), net_route() (trie off
# and on) and net_roa_check() (ROA table without and with a trie), patched
# vs stock, built from the same tarball (tests/tools/fib/fibtool.c linked against
# each tree), on the real tables and on synthetic edge tables. Every prefix
# of each table is looked up, as many absent prefixes, addresses inside
# prefixes, uniformly random addresses and ROA checks, and nets with
# out-of-range lengths (/33+, /129+: stock's answers, whatever they are).
# The patched build pins its filters active (the path that must be exact;
# tables with a trie then take the filter walk too); one table and the edge
# tables run again under the upkeep policy (tries lead while no filter is built), and the tier-1 and edge
# tables again with each LPM engine answering net_route() and the ROA checks
# of the ROA table without a trie (FIBTOOL_LPM); ROAs lose and regain their
# routes between rounds of ROA checks (W, B lines). Answers must be identical,
# except the one named stock bug we fix (tests/tools/fib/diffcheck.py).
# tier: quick
. "$(dirname "$0")/../lib.sh"
DATA=${BLOOMBIRD_DATA:-$top/../shared/data}
FIB=$top/build/fib
"$top/tests/tools/fib/build.sh" "$top" "$tree" "$FIB/fibtool-bloom" >/dev/null 2>&1 || { bad "fibtool builds against the patched tree"; finish; }
"$top/tests/tools/fib/build.sh" "$top" "$stock" "$FIB/fibtool-stock" >/dev/null 2>&1 || { bad "fibtool builds against the stock tree"; finish; }

# compare NAME FAMILY TABLE-FILE [--expect-trie-bug] [env...]
compare() {
  local name=$1 fam=$2 file=$3 expect=${4:-}
  "$FIB/fibtool-stock" diff "$fam" "$file" 7 > "$WORK/$name.stock" &
  env ${FIBTOOL_ENV:-} "$FIB/fibtool-bloom" diff "$fam" "$file" 7 > "$WORK/$name.bloom" 2> "$WORK/$name.err"
  wait $!
  case "${FIBTOOL_ENV:-}" in FIBTOOL_LPM=*)
    local ans
    ans=$(grep -o 'engine answers: .*' "$WORK/$name.err")
    echo "$name: $ans"
    check "$name: the engine answered net_route() (also in the table with a trie) and ROA checks" \
      grep -q 'answers: [1-9][0-9]* net_route, [1-9][0-9]* net_route with a trie, [1-9][0-9]* ROA' "$WORK/$name.err" ;;
  esac
  case "${FIBTOOL_ENV:-}" in FIBTOOL_ADAPTIVE=*) echo "$name: $(grep -o "trie tables' filters at the end: .*" "$WORK/$name.err")" ;; esac
  # Pinned filters (the default here): the ROA checks of the table without
  # an engine went through its ROA index (nest/fib-roa.c), in FIBs large
  # enough for a filter (hash order 11: over 4,096 prefixes is sure)
  case "${FIBTOOL_ENV:-}:$(( $(wc -l < "$file") > 4096 ))" in ":1")
    echo "$name: $(grep -o 'ROA index of the fib ROA table: .*' "$WORK/$name.err")"
    check "$name: ROA checks answered by the ROA index" grep -q 'ROA index of the fib ROA table: [1-9][0-9]* prefixes, [1-9][0-9]* checks' "$WORK/$name.err" ;;
  esac
  local n found
  n=$(grep -c '^H ' "$WORK/$name.bloom")
  found=$(grep -c '^I [^-]' "$WORK/$name.bloom")
  echo "$name: $n prefixes; $n queries of each kind (hit, miss, in-prefix, random, ROA) + $(grep -c '^O ' "$WORK/$name.bloom") out-of-range + $(grep -c '^N ' "$WORK/$name.bloom") with host bits set"
  check "$name: in-prefix lookups find routes ($found of $n)" [ "$found" = "$n" ]
  check "$name: every answer identical to stock but the named stock bug" \
    python3 "$top/tests/tools/fib/diffcheck.py" "$WORK/$name.stock" "$WORK/$name.bloom" $expect
  rm -f "$WORK/$name.stock" "$WORK/$name.bloom"
}

# LPM engines built in (the patched bird knows them by name); FIBDIFF_ENGINES
# names fewer
ENGINES=$(for e in ${FIBDIFF_ENGINES:-simd dpcpe}; do
  printf 'router id 192.0.2.1;\nipv4 table t { lpm engine %s; };\nprotocol device {}\n' "$e" > "$WORK/e.conf"
  "$BIN/bird" -p -c "$WORK/e.conf" >/dev/null 2>&1 && echo "$e"
done)
[ -n "$ENGINES" ] || bad "the patched bird knows no LPM engine of: ${FIBDIFF_ENGINES:-simd dpcpe}"
echo "LPM engines: $ENGINES (variant: the best this CPU runs; every variant is checked against scalar in tests/check/lpm-simd.sh)"

# make check-quick (BLOOMBIRD_QUICK=1): the synthetic edge and host tables only
REAL="4:ipv4/tier1-2023.v4 6:ipv6/tier1-2023.v6 4:ipv4/as3856-feed-2015.v4.nh-aspath 4:ipv4/routeviews-2008.v4.origin"
[ -n "${BLOOMBIRD_QUICK:-}" ] && REAL= && echo "quick: the real tables are not compared (make check does)"
for spec in $REAL; do
  fam=${spec%%:*} f=${spec#*:}
  name=$(basename "$f")
  [ -f "$DATA/$f.txt.xz" ] || { bad "$name: $DATA/$f.txt.xz missing"; continue; }
  xz -dc "$DATA/$f.txt.xz" | cut -f1 > "$WORK/$name.txt"
  compare "$name" "$fam" "$WORK/$name.txt"
  [ "$name" = routeviews-2008.v4.origin ] && FIBTOOL_ENV=FIBTOOL_ADAPTIVE=1 compare "$name (upkeep policy)" "$fam" "$WORK/$name.txt"
  case "$name" in tier1-*)
    for e in $ENGINES; do FIBTOOL_ENV=FIBTOOL_LPM=$e compare "$name (lpm engine $e)" "$fam" "$WORK/$name.txt"; done ;;
  esac
  rm -f "$WORK/$name.txt"
done

# Edge tables: /31+/32 and /127+/128 pairs, the default route, host routes only
python3 "$top/tests/tools/fib/edge-tables.py" "$WORK"
compare edge4 4 "$WORK/edge4.txt" --expect-trie-bug
compare edge6 6 "$WORK/edge6.txt" --expect-trie-bug
# Under the upkeep policy the trie tables' tries lead until a filter pays
# (fib_bloom_trie_leads()): the patched trie walk answers the pairs
FIBTOOL_ENV=FIBTOOL_ADAPTIVE=1 compare "edge4 (upkeep policy)" 4 "$WORK/edge4.txt" --expect-trie-bug
FIBTOOL_ENV=FIBTOOL_ADAPTIVE=1 compare "edge6 (upkeep policy)" 6 "$WORK/edge6.txt" --expect-trie-bug
for e in $ENGINES; do
  FIBTOOL_ENV=FIBTOOL_LPM=$e compare "edge4 (lpm engine $e)" 4 "$WORK/edge4.txt" --expect-trie-bug
  FIBTOOL_ENV=FIBTOOL_LPM=$e compare "edge6 (lpm engine $e)" 6 "$WORK/edge6.txt" --expect-trie-bug
  FIBTOOL_ENV=FIBTOOL_LPM=$e compare "hosts4 (lpm engine $e)" 4 "$WORK/hosts4.txt"
done
compare hosts4 4 "$WORK/hosts4.txt"
compare hosts6 6 "$WORK/hosts6.txt"
finish
