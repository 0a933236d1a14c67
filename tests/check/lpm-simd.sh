# The simd LPM engine on the real tier-1 tables (tests/tools/lpm/lpmtool.c linked
# against the patched tree): whole-table build checked against a reference
# LPM for 1M addresses inside prefixes, 1M random ones and the boundaries of
# every prefix, every batch variant the CPU has against the scalar lookup;
# the same table inserted route by route answers the same; the RIS update
# trace replayed with checks along the way; the table it leaves, built
# whole, answers as the incrementally updated one.
. "$(dirname "$0")/../lib.sh"
DATA=${BLOOMBIRD_DATA:-$top/../shared/data}
LPM=$top/build/lpm
UPD=$DATA/updates/ris-updates-20190101-0000.bgpdump-m.txt.gz
"$top/tests/tools/lpm/build.sh" "$top" "$tree" "$LPM/lpmtool" >/dev/null 2>&1 || { bad "lpmtool builds against the patched tree"; finish; }
[ -f "$UPD" ] || bad "$UPD missing"

for spec in 4:ipv4/tier1-2023.v4 6:ipv6/tier1-2023.v6; do
  fam=${spec%%:*} f=$DATA/${spec#*:}.txt.xz name=$(basename "${spec#*:}")
  [ -f "$f" ] || { bad "$name: $f missing"; continue; }
  "$LPM/lpmtool" check "$fam" "$f" "$UPD" > "$WORK/$name.out" 2>&1
  rc=$?
  sed 's/^/    /' "$WORK/$name.out"
  check "$name: lpmtool check passed" [ "$rc" = 0 ]
  check "$name: every variant the CPU has was run" grep -q "^variants run: .*$(grep -q avx512bw /proc/cpuinfo && echo avx512)" "$WORK/$name.out"
  check "$name: the update trace was replayed" grep -q "^ok   RIS trace: [1-9]" "$WORK/$name.out"
done
finish
