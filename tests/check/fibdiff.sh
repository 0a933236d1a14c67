# Differential test on the real tables: BIRD's fib_find(), fib_route(),
# net_route() (trie off and on) and net_roa_check(), patched vs stock, built
# from the same tarball (tests/fib/fibtool.c linked against each tree).
# Every prefix of each table is looked up, as many absent prefixes, as many
# addresses inside prefixes and uniformly random ones, and as many ROA checks.
. "$(dirname "$0")/../lib.sh"
DATA=${BLOOMBIRD_DATA:-$top/../shared/data}
FIB=$top/build/fib
"$top/tests/fib/build.sh" "$top" "$tree" "$FIB/fibtool-bloom" >/dev/null 2>&1 || { bad "fibtool builds against the patched tree"; finish; }
"$top/tests/fib/build.sh" "$top" "$stock" "$FIB/fibtool-stock" >/dev/null 2>&1 || { bad "fibtool builds against the stock tree"; finish; }

for spec in 4:ipv4/tier1-2023.v4 6:ipv6/tier1-2023.v6 4:ipv4/as3856-feed-2015.v4.nh-aspath 4:ipv4/routeviews-2008.v4.origin; do
  fam=${spec%%:*} f=${spec#*:}
  name=$(basename "$f")
  [ -f "$DATA/$f.txt.xz" ] || { bad "$name: $DATA/$f.txt.xz missing"; continue; }
  xz -dc "$DATA/$f.txt.xz" | cut -f1 > "$WORK/$name.txt"
  "$FIB/fibtool-stock" diff "$fam" "$WORK/$name.txt" 7 > "$WORK/$name.stock" &
  "$FIB/fibtool-bloom" diff "$fam" "$WORK/$name.txt" 7 > "$WORK/$name.bloom"
  wait $!
  n=$(grep -c '^H ' "$WORK/$name.bloom")
  found=$(grep -c '^I [^-]' "$WORK/$name.bloom")
  echo "$name: $n prefixes, $n queries of each of 5 kinds (hit, miss, in-prefix, random, ROA), $found in-prefix LPM hits"
  check "$name: $n prefixes loaded" [ "$n" -gt 100000 ]
  check "$name: in-prefix lookups find routes" [ "$found" = "$n" ]
  if cmp -s "$WORK/$name.stock" "$WORK/$name.bloom"; then
    ok "$name: every answer identical to stock"
  else
    bad "$name: answers differ from stock"
    diff "$WORK/$name.stock" "$WORK/$name.bloom" | head -20
  fi
  rm -f "$WORK/$name.stock" "$WORK/$name.bloom" "$WORK/$name.txt"
done
finish
