# The shared-memory reader against mutated exports (tests/tools/lpm/lpmr-fuzz.c):
# a bird exports some thousands of prefixes of every length (rows at every
# level of both engines), then LPMR_FUZZ_COUNT (default 100,000) mutated
# copies of its objects (random and hostile header fields, links anywhere,
# truncations, foreign region names) are each opened and looked up with
# every variant. Every copy must be refused or read, none may crash the
# reader or hang it (5 s per copy).
. "$(dirname "$0")/../lib.sh"

COUNT=${LPMR_FUZZ_COUNT:-100000}
N=bbfuzzsrc-$$
FUZZ=$WORK/lpmr-fuzz
trap 'rm -f /dev/shm/$N /dev/shm/$N.* /dev/shm/bbfuzz-*; cleanup' EXIT

make -s -C "$tree" -f Makefile -f "$top/tools/lpm-reader/reader.mk" LPMR_TOP="$top" \
  LPMR_MAIN="$top/tests/tools/lpm/lpmr-fuzz.c" LPMR_OUT="$FUZZ" "$FUZZ" > "$WORK/build.log" 2>&1 ||
  { cat "$WORK/build.log"; bad "lpmr-fuzz builds"; finish; }

{
  echo 'router id 192.0.2.1;'
  echo 'protocol device {}'
  echo 'protocol static s4 { ipv4;'
  python3 -c '
import random
random.seed(7)
for i in range(3000):
    l = random.choice([8, 12, 16, 19, 20, 22, 24, 24, 24, 26, 28, 30, 32])
    a = random.getrandbits(32) & ~((1 << (32 - l)) - 1)
    print("  route %d.%d.%d.%d/%d via 192.0.2.%d dev \"lo\" onlink;" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, l, 1 + i % 50))'
  echo '}'
  echo 'protocol static s6 { ipv6;'
  python3 -c '
import ipaddress, random
random.seed(8)
for i in range(2000):
    l = random.choice([16, 24, 32, 40, 48, 48, 56, 64, 64, 80, 96, 112, 128])
    a = (0x2001 << 112 | random.getrandbits(112)) & ~((1 << (128 - l)) - 1)
    print("  route %s/%d via 2001:db8:ffff::%x dev \"lo\" onlink;" % (ipaddress.IPv6Address(a), l, 1 + i % 40))'
  echo '}'
  echo "protocol lpm x { ipv4 { export all; }; ipv6 { export all; }; shm \"$N\"; }"
} > "$WORK/b.conf"
start_bird B "$BIN" "$WORK/b.conf" || { bad "bird with an export starts"; cat "$WORK/B.log"; finish; }
for _ in $(seq 100); do
  "$top/tools/lpm-reader/bird-lpm-reader" "$N" status 2>/dev/null | grep -qE "prefixes ipv4 [1-9][0-9]*, ipv6 [1-9]" && break
  sleep 0.1
done
"$top/tools/lpm-reader/bird-lpm-reader" "$N" status | head -3

cpu=$(grep -o -w 'avx512bw\|avx2' /proc/cpuinfo | sort -u | sed 's/avx512bw/avx512/' | tr '\n' ' ')
echo "variants run: scalar $cpu"
t0=$(date +%s)
"$FUZZ" "$N" "$COUNT" > "$WORK/fuzz.out" 2>&1; rc=$?
cat "$WORK/fuzz.out"
echo "  $(( $(date +%s) - t0 )) s"
check "$COUNT mutated exports: each refused or read, no crash and no hang (rc $rc)" [ "$rc" = 0 ]
check "  some were read and answered, some refused" \
  grep -qE "refused [1-9][0-9]*|: [1-9][0-9]* refused, [1-9][0-9]* read \([1-9]" "$WORK/fuzz.out"
finish
