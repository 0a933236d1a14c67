# The LPM exporter protocol (`protocol lpm', proto/lpm) and its shared-memory
# reader (tools/lpm-reader): bad configuration values with file and line; a
# running bird with static routes of every next-hop kind (gateways, ECMP with
# weights, device, blackhole, unreachable, prohibit, one with more paths than
# an entry holds) fed through an export filter; for every address the
# reader's answer = `show lpm lookup' = the best route of `show route for'
# after the filter; route changes and reconfiguration; a second bird asking
# for the same name; a layout version mismatch; a reader that starts before
# bird and stays attached across a bird restart; a restart's feed of the whole
# table built in one engine build; `show lpm lookup benchmark'.
. "$(dirname "$0")/../lib.sh"

READER=$top/tools/lpm-reader/bird-lpm-reader
SHM=bbcheck-$$
cpu=$(grep -o -w 'avx512bw\|avx2' /proc/cpuinfo | sort -u | sed 's/avx512bw/avx512/' | tr '\n' ' ')
variants="scalar $cpu"
echo "CPU variants here: $variants"
check "bird-lpm-reader is built" test -x "$READER"
cleanup_shm() { rm -f /dev/shm/$SHM /dev/shm/$SHM.* /dev/shm/bbfake-$$ /dev/shm/bbfake-$$-*; }
trap 'cleanup_shm; cleanup' EXIT

# --- routes: every next-hop kind ---------------------------------------------
gw() { echo "via 192.0.2.$1 dev \"lo\" onlink"; }
gen4() {
  echo "  route 0.0.0.0/0 unreachable;"
  echo "  route 10.0.0.0/8 $(gw 1);"
  for a in $(seq 0 15); do
    echo "  route 10.$a.0.0/16 $(gw $((2 + a % 5)));"
    for b in $(seq 0 8 255); do echo "  route 10.$a.$b.0/21 $(gw $((10 + b % 7))) weight 2 $(gw $((20 + a % 3)));"; done
    for b in $(seq 0 5 255); do echo "  route 10.$a.$b.0/24 blackhole;"; done
    for b in $(seq 1 17 255); do echo "  route 10.$a.$b.128/25 unreachable; route 10.$a.$b.64/26 prohibit; route 10.$a.$b.7/32 via \"lo\";"; done
    for b in $(seq 2 29 255); do echo "  route 10.$a.$b.0/24 $(gw 30) $(gw 31) $(gw 32) weight 3;"; done
  done
  # More paths than an entry holds (LPMX_PATHS = 8): left out, 10.0.0.0/8 answers
  echo -n "  route 10.200.0.0/16"; for g in $(seq 40 48); do echo -n " $(gw $g)"; done; echo ";"
  for a in $(seq 0 4 255); do echo "  route 172.$((16 + a % 16)).$a.0/24 $(gw $((50 + a % 11)));"; done
}
gen6() {
  for a in $(seq 0 15); do
    printf '  route 2001:db8:%x::/48 via 2001:db8:ffff::%x dev "lo" onlink;\n' "$a" $((1 + a % 4))
    for b in $(seq 0 9 255); do printf '  route 2001:db8:%x:%x00::/56 blackhole;\n' "$a" "$b"; done
    for b in $(seq 0 13 255); do printf '  route 2001:db8:%x:%x::/64 via 2001:db8:ffff::9 dev "lo" onlink via 2001:db8:ffff::a dev "lo" onlink weight 4; route 2001:db8:%x:%x::1/128 prohibit;\n' "$a" "$b" "$a" "$b"; done
  done
}
mkconf() {  # mkconf FILE [LPM-OPTIONS] [N: the pipes filter out 10.N.0.0/16+ and 2001:db8:N::/48+]
  local opts=${2:-} f=${3:-5}
  {
    echo "router id 192.0.2.1;"
    echo "log stderr all;"
    echo "ipv4 table t4; ipv6 table t6;"
    echo "protocol device {}"
    echo "protocol static s4 { ipv4; "; gen4; echo "}"
    echo "protocol static s6 { ipv6; "; gen6; echo "}"
    echo "protocol pipe p4 { table master4; peer table t4; import none; export where net !~ [ 10.$f.0.0/16+ ]; }"
    echo "protocol pipe p6 { table master6; peer table t6; import none; export where net !~ [ 2001:db8:$f::/48+ ]; }"
    echo "protocol lpm x {"
    echo "  ipv4 { table t4; export all; };"
    echo "  ipv6 { table t6; export all; };"
    echo "  shm \"$SHM\";"
    echo "  $opts"
    echo "}"
  } > "$1"
}

# --- configuration errors: file and line -------------------------------------
bad_case() {  # bad_case LINE-OPTION TEXT [env...]
  local opt=$1 text=$2; shift 2
  printf 'router id 192.0.2.1;\nprotocol lpm x {\n  ipv4 { export all; };\n  %s\n}\n' "$opt" > "$WORK/bad.conf"
  local out rc
  out=$(env "$@" "$BIN/bird" -p -c "$WORK/bad.conf" 2>&1); rc=$?
  echo "  '$opt' -> rc=$rc: $out"
  check "'$opt' is rejected with file and line 4: $text" bash -c "[ $rc != 0 ] && grep -q 'bad.conf:4:.*$text' <<< '$out'"
}
bad_case "engine nosuch;" "Unknown LPM engine nosuch"
bad_case "variant avx9;" "Unknown LPM variant avx9"
bad_case "variant avx512;" "LPM variant avx512 is not available here" BLOOMBIRD_CPU_DISABLE=avx512
bad_case 'shm "a/b";' "Invalid shared memory name"
bad_case 'shm ".hidden";' "Invalid shared memory name"
bad_case 'shm "";' "Invalid shared memory name"
printf 'router id 192.0.2.1;\nprotocol lpm x { ipv4 { export all; }; shm "same"; }\nprotocol lpm y { ipv4 { export all; }; shm "same"; }\n' > "$WORK/bad.conf"
out=$("$BIN/bird" -p -c "$WORK/bad.conf" 2>&1); echo "  two exporters, one name -> $out"
check "two exporters with one shared-memory name are rejected" grep -q "Shared memory same is used by both x and y" <<< "$out"
printf 'router id 192.0.2.1;\nprotocol lpm x { shm "z"; }\n' > "$WORK/bad.conf"
out=$("$BIN/bird" -p -c "$WORK/bad.conf" 2>&1); echo "  no channel -> $out"
check "an exporter without a channel is rejected" grep -q "needs an ipv4 or ipv6 channel" <<< "$out"
for v in $variants auto; do
  mkconf "$WORK/g.conf" "engine simd; variant $v;"
  check "engine simd, variant $v parses" "$BIN/bird" -p -c "$WORK/g.conf"
done
mkconf "$WORK/g.conf" "engine dpcpe;"
out=$("$BIN/bird" -p -c "$WORK/g.conf" 2>&1); echo "  engine dpcpe with shm -> $out"
check "engine dpcpe with a shared-memory export is rejected (readers read the simd layout)" \
  grep -q "g.conf:[0-9]*:[0-9]* Shared memory export needs engine simd" <<< "$out"

# --- a running bird -----------------------------------------------------------
cleanup_shm
mkconf "$WORK/p.conf"
start_bird P "$BIN" "$WORK/p.conf" || { bad "bird with protocol lpm starts"; cat "$WORK/P.log"; finish; }
sleep 1
P() { birdc_q "$BIN" "$SOCK_P" "$@"; }
info=$(P show protocols all x); echo "$info" | head -12
check "show protocols all: engine and variant" grep -q "Engine: *simd, variant" <<< "$info"
check "show protocols all: shared-memory name" grep -q "Shared memory: *$SHM" <<< "$info"
check "show protocols all: next-hop entries (few, shared)" grep -qE "Next-hop entries: *[0-9]{1,2} in use" <<< "$info"
check "show protocols all: IPv4 prefixes, updates, one rejected" grep -qE "IPv4: +[0-9]+ prefixes, [0-9]+ updates, 1 rejected" <<< "$info"
check "show protocols all: memory" grep -q "IPv4 memory:" <<< "$info"
check "the route with 9 paths is logged as left out" grep -q "10.200.0.0/16 left out: next hop not representable" "$WORK/P.log"

addrs() {
  for i in $(seq 1 1200); do echo "10.$((RANDOM % 17)).$((RANDOM % 256)).$((RANDOM % 256))"; done
  for i in $(seq 1 100); do echo "10.200.$((RANDOM % 256)).$((RANDOM % 256))"; done
  for i in $(seq 1 200); do echo "172.$((16 + RANDOM % 16)).$((RANDOM % 256)).$((RANDOM % 256))"; done
  for i in $(seq 1 100); do echo "$((RANDOM % 224)).$((RANDOM % 256)).$((RANDOM % 256)).$((RANDOM % 256))"; done
  for i in $(seq 1 500); do printf '2001:db8:%x:%x::%x\n' $((RANDOM % 18)) $((RANDOM % 65536)) $((RANDOM % 3)); done
  for i in $(seq 1 50); do printf '%x:%x::1\n' $((RANDOM % 65536)) $((RANDOM % 65536)); done
  for a in 0 3 9; do echo "10.$a.18.7"; echo "10.$a.35.7"; done	# device routes (/32 via "lo")
}
# In the form both bird and the reader print (RFC 5952)
addrs | python3 -c 'import sys, ipaddress; [print(ipaddress.ip_address(l.strip())) for l in sys.stdin]' > "$WORK/addrs"
naddr=$(wc -l < "$WORK/addrs")

# expected ADDR ANSWER from `show route for ADDR table t4|t6' (best route after the pipe's filter)
expected() {
  while read -r a; do
    case $a in *:*) t=t6;; *) t=t4;; esac
    echo "show route for $a table $t"
  done < "$WORK/addrs" | "$BIN/birdcl" -s "$SOCK_P" 2>&1 | python3 -c '
import sys, re
addrs = [l.strip() for l in open(sys.argv[1])]
out, cur, hops, kind = [], None, [], None
def flush():
    if cur is None: return
    out.append("%s %s" % (cur, kind if kind else ("; ".join(hops) if hops else "-")))
for line in sys.stdin:
    line = line.rstrip("\n")
    m = re.match(r"bird> show route for (\S+) table", line)
    if m:
        flush(); cur, hops, kind, seen = m.group(1), [], None, 0
        continue
    if cur is None: continue
    m = re.match(r"^(\S+)\s+(unicast|blackhole|unreachable|prohibited) \[", line)
    if m and not hops and kind is None:
        kind = None if m.group(2) == "unicast" else m.group(2).replace("prohibited", "prohibit")
        if kind is None: hops = []
        continue
    if line.startswith("\t") and kind is None and (line.startswith("\tvia") or line.startswith("\tdev")):
        hops.append(line.strip())
flush()
print("\n".join(out))
' "$WORK/addrs"
}
birdc_lookups() {  # ADDR PREFIX ANSWER
  sed 's/^/show lpm lookup x /' "$WORK/addrs" | "$BIN/birdcl" -s "$SOCK_P" 2>&1 | sed -nE 's/^(bird> )*//; /^[0-9a-f:.]+ ([0-9a-f:.]+\/[0-9]+|-|\?) /p'
}
compare_all() {  # compare_all LABEL
  local l=$1
  expected > "$WORK/exp"
  birdc_lookups > "$WORK/birdc.full"
  sed -E 's/^(\S+) \S+ /\1 /' "$WORK/birdc.full" > "$WORK/birdc"
  "$READER" "$SHM" lookup "$WORK/addrs" > "$WORK/reader"
  check "$l: birdc answered all $naddr addresses" [ "$(wc -l < "$WORK/birdc")" = "$naddr" ]
  check "$l: show lpm lookup finds no mismatch with the exported prefixes" bash -c "! grep -q MISMATCH '$WORK/birdc.full'"
  check "$l: reader = show lpm lookup for $naddr addresses" diff -u "$WORK/birdc" "$WORK/reader"
  # 10.200.0.0/16 (9 paths) is left out: its addresses get 10.0.0.0/8's next hop
  grep -v '^10\.200\.' "$WORK/exp" > "$WORK/exp.cmp"; grep -v '^10\.200\.' "$WORK/reader" > "$WORK/reader.cmp"
  check "$l: reader = show route for (best route after the export filter), $(wc -l < "$WORK/exp.cmp") addresses" diff -u "$WORK/exp.cmp" "$WORK/reader.cmp"
  check "$l: addresses of the left-out 10.200.0.0/16 answered by 10.0.0.0/8" \
    awk '$1 ~ /^10\.200\./ { n++; if ($2 != "10.0.0.0/8") bad++ } END { exit !(n && !bad) }' "$WORK/birdc.full"
}
compare_all "initial"
check "some addresses have ECMP answers" grep -q "weight 2; via" "$WORK/reader"
for k in blackhole unreachable prohibit "dev lo" " -$"; do
  check "some addresses answer '$k'" grep -q -- "$k" "$WORK/reader"
done
check "addresses in 10.5.0.0/16 (filtered out) get the covering route" \
  awk '$1 ~ /^10\.5\./ { n++; if ($2 != "10.0.0.0/8") bad++ } END { exit !(n && !bad) }' "$WORK/birdc.full"

st=$("$READER" "$SHM" status); echo "$st"
check "reader status: running, generation > 0" grep -qE "generation [1-9]" <<< "$st"

for v in $variants; do
  out=$(taskset -c 1 "$READER" -v "$v" "$SHM" lookup "$WORK/addrs")
  check "reader variant $v: same answers" diff -q <(echo "$out") "$WORK/reader"
done
"$READER" "$SHM" bench 1000000 "$WORK/addrs"

# --- route changes, filter change, variant change ------------------------------
gen0=$(sed -nE 's/.*generation ([0-9]+).*/\1/p' <<< "$st")
P disable s4 > /dev/null; sleep 0.5
"$READER" "$SHM" lookup "$WORK/addrs" > "$WORK/r2"
check "s4 down: no IPv4 address answered any more" bash -c "! grep -E '^[0-9]+\.[0-9.]+ [^-]' '$WORK/r2'"
check "s4 down: generation moved" [ "$(sed -nE 's/.*generation ([0-9]+).*/\1/p' <<< "$("$READER" "$SHM" status)")" -gt "$gen0" ]
P enable s4 > /dev/null; sleep 1
compare_all "after s4 down and up"

mkconf "$WORK/p.conf" "" 6
out=$(P configure); echo "$out"
sleep 1
compare_all "after an export filter change (configure)"

mkconf "$WORK/p.conf" "variant scalar;" 6
P configure > /dev/null; sleep 1
info=$(P show protocols all x)
check "variant change restarts with variant scalar" grep -q "Engine: *simd, variant scalar" <<< "$info"
grep "feed:" <<< "$info"
check "the restart's feed of a full table was one engine build (IPv4 and IPv6)" \
  bash -c "[ \$(grep -cE 'IPv[46] feed: +[1-9][0-9]* prefixes in .*one engine build' <<< '$info') = 2 ]"
compare_all "after a variant change (restart, feed refilled by one build)"

# --- the benchmark command: variants cross-checked, builds checked ---------------
out=$(P show lpm lookup benchmark x 20000); echo "$out"
check "show lpm lookup benchmark: every variant here timed for IPv4" \
  bash -c "for v in $variants; do grep -q \"simd, \$v batches of 256\" <<< '$out' || exit 1; done"
check "show lpm lookup benchmark: a feed timed as one build and as single updates" \
  bash -c "grep -q 'one whole build' <<< '$out' && grep -q 'one update each' <<< '$out'"
check "show lpm lookup benchmark: no mismatch between variants and engines" bash -c "! grep -q MISMATCH <<< '$out'"
out=$(P show lpm lookup benchmark x 5 2>&1); echo "  count 5 -> $out"
check "show lpm lookup benchmark with a bad count is an error" grep -q "Count must be in range" <<< "$out"

# --- a second bird asking for the same name ------------------------------------
out=$("$BIN/bird" -p -c "$WORK/p.conf" 2>&1); rc=$?; echo "  bird -p of the running configuration: rc=$rc $out"
check "bird -p passes on the running configuration (its name held by the running bird)" [ "$rc" = 0 ]
start_bird Q "$BIN" "$WORK/p.conf"
for _ in $(seq 50); do grep -q "owned by another bird" "$WORK/Q.log" && break; sleep 0.1; done
echo "  second bird: $(grep -m1 "owned by another bird" "$WORK/Q.log")"
check "a second bird's exporter is refused: the name is owned by the first (pid $(cat "$WORK/P.pid"))" \
  grep -q "shared memory $SHM is owned by another bird (pid $(cat "$WORK/P.pid"))" "$WORK/Q.log"
check "  and its exporter is not up" bash -c "! '$BIN/birdc' -s '$SOCK_Q' show protocols x | grep -qw up"
"$BIN/birdc" -s "$SOCK_Q" down > /dev/null
check "the first bird still answers" diff -q <("$READER" "$SHM" lookup "$WORK/addrs") "$WORK/reader"

# --- layout version mismatch -----------------------------------------------------
python3 -c '
import struct, sys
open("/dev/shm/" + sys.argv[1], "wb").write(struct.pack("<II", 0x584d504c, 99) + bytes(8192))' "bbfake-$$"
out=$("$READER" "bbfake-$$" status 2>&1); rc=$?
echo "  $out (rc=$rc)"
check "a layout version mismatch is a clear error naming both versions" \
  bash -c "[ $rc = 3 ] && grep -q 'layout version 99, this reader reads version 1' <<< '$out'"

# --- simd region headers that do not fit their object -----------------------------
# Copies of bird's objects under other names: the export header pointing at a
# simd region whose header is changed (its IPv6 region left out)
fake_region() {	# NAME ELEMENTS_MAX|- STRIDE1|-  (-: as bird wrote it)
  python3 - "$SHM" "$@" <<'PY'
import struct, sys
shm, name, emax, s1 = sys.argv[1:5]
h = bytearray(open("/dev/shm/" + shm, "rb").read())
FAM = 240                      # struct lpmx_header: fam[0].region; fam[1] 80 bytes on
reg = h[FAM:FAM + 64].split(b"\0")[0].decode().lstrip("/")
h[FAM:FAM + 64] = ("/" + name + ".ipv4").encode().ljust(64, b"\0")
h[FAM + 80] = 0
open("/dev/shm/" + name, "wb").write(h)
r = bytearray(open("/dev/shm/" + reg, "rb").read(4096))
if emax != "-":
    struct.pack_into("<Q", r, 24, int(emax))   # struct simd_header: elements_max
if s1 != "-":
    r[32 + 1] = int(s1)                        # stride[1]
els = int(emax) if emax != "-" else 2048
open("/dev/shm/" + name + ".ipv4", "wb").write(bytes(r) + bytes(4 * els))
PY
}
fake_region "bbfake-$$-a" 1100000 -
out=$("$READER" "bbfake-$$-a" status 2>&1); rc=$?; echo "  region of 1,100,000 elements (a root row of 2^20 and more) as its header says: rc=$rc"
check "a copy whose simd header fits its object is read" bash -c "[ $rc = 0 ]"
fake_region "bbfake-$$-b" - -
out=$("$READER" "bbfake-$$-b" status 2>&1); rc=$?; echo "  $out (rc=$rc)"
check "a simd region smaller than its header says is refused with a clear error" \
  bash -c "[ $rc = 1 ] && grep -q 'bbfake-$$-b.ipv4: unreadable simd header' <<< '$out'"
fake_region "bbfake-$$-c" 1100000 0
out=$("$READER" "bbfake-$$-c" status 2>&1); rc=$?; echo "  $out (rc=$rc)"
check "a simd header with a level of no bits is refused with a clear error" \
  bash -c "[ $rc = 1 ] && grep -q 'bbfake-$$-c.ipv4: unreadable simd header' <<< '$out'"
fake_region "bbfake-$$-d" 2048 -
out=$("$READER" "bbfake-$$-d" status 2>&1); rc=$?; echo "  $out (rc=$rc)"
check "a simd region whose root row does not fit its element count is refused" \
  bash -c "[ $rc = 1 ] && grep -q 'bbfake-$$-d.ipv4: unreadable simd header' <<< '$out'"
rm -f /dev/shm/bbfake-$$-*

# --- reader across a bird restart ------------------------------------------------
P down > /dev/null; sleep 1
check "bird's clean exit removes the objects (the lock file stays)" bash -c "! ls /dev/shm/$SHM /dev/shm/$SHM.ipv4 2>/dev/null"
"$READER" -w 20 "$SHM" follow 8 "$WORK/addrs" > "$WORK/follow" 2>&1 &
fpid=$!
sleep 1
start_bird Q "$BIN" "$WORK/p.conf" || bad "bird starts again"
sleep 2
kill -9 "$(cat "$WORK/Q.pid")"; sleep 0.5
start_bird R "$BIN" "$WORK/p.conf" || { bad "bird starts after a crash of the previous one (stale objects)"; cat "$WORK/R.log"; }
SOCK_P=$SOCK_R
wait "$fpid"
head -5 "$WORK/follow"
check "reader started before bird attached" grep -q "^attached instance" "$WORK/follow"
check "reader noticed the crash and reattached to the new instance" grep -q "^reattached: instance" "$WORK/follow"
sleep 0.5
birdc_lookups | sed -E 's/^(\S+) \S+ /\1 /' > "$WORK/birdc"
grep -v '^attached\|^reattached\|^stale' "$WORK/follow" > "$WORK/follow.ans"
check "reader's answers after the restart = show lpm lookup of the new bird" diff -u "$WORK/birdc" "$WORK/follow.ans"
# --- engine dpcpe, no shared memory: show lpm lookup = show route for ----------
mkconf "$WORK/d.conf" "engine dpcpe;"
sed -i '/^  shm /d' "$WORK/d.conf"
if start_bird D "$BIN" "$WORK/d.conf"; then
  sleep 1
  SOCK_P=$SOCK_D
  check "engine dpcpe: show protocols all names it" grep -q "Engine: *dpcpe, variant" <<< "$(birdc_q "$BIN" "$SOCK_D" show protocols all x)"
  expected > "$WORK/exp"
  birdc_lookups | sed -E 's/^(\S+) \S+ /\1 /' > "$WORK/birdc"
  grep -v '^10\.200\.' "$WORK/exp" > "$WORK/exp.cmp"; grep -v '^10\.200\.' "$WORK/birdc" > "$WORK/birdc.cmp"
  check "engine dpcpe: show lpm lookup = show route for, $(wc -l < "$WORK/exp.cmp") addresses" diff -u "$WORK/exp.cmp" "$WORK/birdc.cmp"
  birdc_q "$BIN" "$SOCK_D" down > /dev/null; sleep 0.5
else
  bad "bird with protocol lpm, engine dpcpe starts"; cat "$WORK/D.log"
fi

finish
