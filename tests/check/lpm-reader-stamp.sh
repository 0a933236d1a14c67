# The reader's stamps (lpmr_stamp(), lpmr_valid()) and single routes
# (lpmr_route4()) against a live export whose next-hop entries bird retires
# and reuses: a second static protocol with its own gateway is disabled and
# enabled over and over, so the entry of its gateway loses its last prefix,
# reuse_seq moves every such tick and the entry is freed and made again.
# tests/tools/lpm/lpmr-stamp.c checks that a stamp from before a move is invalid
# and a fresh one valid, that lpmr_route4() answers what a stamped
# lpmr_lookup4() and lpmr_nh() read, and that no answer under churn is a
# freed entry; bird-lpm-reader's follow mode (stamped batches) keeps up.
. "$(dirname "$0")/../lib.sh"

READER=$top/tools/lpm-reader/bird-lpm-reader
N=bbstamp-$$
STAMP=$WORK/lpmr-stamp
CHURN=
trap '[ -n "$CHURN" ] && kill $CHURN 2>/dev/null; rm -f /dev/shm/$N /dev/shm/$N.*; cleanup' EXIT

make -s -C "$tree" -f Makefile -f "$top/tools/lpm-reader/reader.mk" LPMR_TOP="$top" \
  LPMR_MAIN="$top/tests/tools/lpm/lpmr-stamp.c" LPMR_OUT="$STAMP" "$STAMP" > "$WORK/build.log" 2>&1 ||
  { cat "$WORK/build.log"; bad "lpmr-stamp builds"; finish; }

cat > "$WORK/b.conf" <<EOC
router id 192.0.2.1;
log stderr all;
protocol device {}
protocol static s4 { ipv4; route 10.0.0.0/8 via 192.0.2.7 dev "lo" onlink; }
protocol static c4 { ipv4;
  route 10.2.0.0/16 via 192.0.2.9 dev "lo" onlink;
  route 10.3.0.0/16 via 192.0.2.9 dev "lo" onlink;
  route 10.4.0.0/24 via 192.0.2.10 dev "lo" onlink;
}
protocol lpm x { ipv4 { export all; }; shm "$N"; }
EOC
start_bird B "$BIN" "$WORK/b.conf" || { bad "bird with an export starts"; cat "$WORK/B.log"; finish; }
B() { birdc_q "$BIN" "$SOCK_B" "$@"; }
for _ in $(seq 100); do
  "$READER" $N lookup <<< 10.2.0.1 2>/dev/null | grep -q "via 192.0.2.9" && break
  sleep 0.1
done
check "a reader answers from bird's export (10.2.0.1 via the churned gateway)" \
  grep -q "via 192.0.2.9" <<< "$("$READER" $N lookup <<< 10.2.0.1 2>&1)"

# Churn: the gateways of c4 lose their last prefix and come back
( while :; do B disable c4 >/dev/null; sleep 0.05; B enable c4 >/dev/null; sleep 0.05; done ) &
CHURN=$!

timeout 30 "$STAMP" $N 10.0.0.1 10.2.0.1 3 > "$WORK/stamp.out" 2>&1; rc=$?
sed 's/^/  /' "$WORK/stamp.out"
check "lpmr-stamp: all its checks pass under churn (rc $rc)" [ "$rc" = 0 ]
check "  the stamp from before reuse_seq moved was invalid" grep -q "^ok   lpmr_valid() of the stamp from before is 0" "$WORK/stamp.out"
check "  lpmr_route4() and a stamped lpmr_lookup4() + lpmr_nh() agree" grep -q "^ok   10.0.0.1: .* entries equal" "$WORK/stamp.out"
check "  the churned address was seen at more than one entry (the churn reached the reader)" \
  grep -qE "^ok   10.2.0.1 under churn .* [2-9] different indices" "$WORK/stamp.out"

out=$(timeout 10 "$READER" $N follow 1 <<< $'10.0.0.1\n10.2.0.1' 2>&1); rc=$?
sed 's/^/  follow: /' <<< "$out"
check "bird-lpm-reader follow under churn (stamped batches) ends and answers (rc $rc)" \
  bash -c '[ "$1" = 0 ] && grep -q "^10.0.0.1 via 192.0.2.7" <<< "$2"' _ "$rc" "$out"

kill $CHURN 2>/dev/null; wait $CHURN 2>/dev/null; CHURN=
check "bird still runs after the churn" bash -c "kill -0 \$(cat '$WORK/B.pid')"
finish
