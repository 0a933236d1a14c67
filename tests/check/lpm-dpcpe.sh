# The dpcpe LPM engine on the real tier-1 tables (tests/tools/lpm/lpmtool.c with
# -e dpcpe, linked against the patched tree): whole-table build checked
# against a reference LPM for 1M addresses inside prefixes, 1M random ones
# and the boundaries of every prefix, every batch variant the CPU has
# against the scalar lookup; the same table inserted route by route answers
# the same; the RIS update trace replayed with checks along the way; the
# table it leaves, built whole, answers as the incrementally updated one.
# The engine's own tests (capture and release, level choice against brute
# force, churn, saturation, a reader thread) are nest/lpm-dpcpe_test.
. "$(dirname "$0")/../lib.sh"
DATA=${BLOOMBIRD_DATA:-$top/../shared/data}
LPM=$top/build/lpm
UPD=$DATA/updates/ris-updates-20190101-0000.bgpdump-m.txt.gz
"$top/tests/tools/lpm/build.sh" "$top" "$tree" "$LPM/lpmtool" >/dev/null 2>&1 || { bad "lpmtool builds against the patched tree"; finish; }
[ -f "$UPD" ] || bad "$UPD missing"
cpu=$(grep -o -w 'avx512bw\|avx2' /proc/cpuinfo | sort -u | sed 's/avx512bw/avx512/' | tr '\n' ' ')
echo "CPU variants here: scalar $cpu"

for spec in 4:ipv4/tier1-2023.v4 6:ipv6/tier1-2023.v6; do
  fam=${spec%%:*} f=$DATA/${spec#*:}.txt.xz name=$(basename "${spec#*:}")
  [ -f "$f" ] || { bad "$name: $f missing"; continue; }
  "$LPM/lpmtool" -e dpcpe check "$fam" "$f" "$UPD" > "$WORK/$name.out" 2>&1
  rc=$?
  sed 's/^/    /' "$WORK/$name.out"
  check "$name: lpmtool -e dpcpe check passed" [ "$rc" = 0 ]
  for v in scalar $cpu; do
    check "$name: variant $v was run" grep -q "^variants run: .*\b$v\b" "$WORK/$name.out"
  done
  check "$name: the update trace was replayed" grep -q "RIS trace: [1-9]" "$WORK/$name.out"
done
finish
