# The exporter on a shared host, tried as a local unprivileged user would
# (runuser -u nobody): /dev/shm is writable by everyone, so a symlink, a FIFO
# or a file of another user under an export's names must neither make bird
# write elsewhere, nor block it, nor be taken for bird's own; regions are not
# world-readable; a reader maps only objects of bird's user that nobody else
# may write, so a forged copy is refused, also under the export's own name
# while bird's protocol is down; benchmark commands are refused on a
# restricted CLI; bird -p passes on a running configuration; the lock goes
# with the protocol; contradicting options are configuration errors.
. "$(dirname "$0")/../lib.sh"

READER=$top/tools/lpm-reader/bird-lpm-reader
[ "$(id -u)" = 0 ] || { echo "exporter-safety: needs root (runuser)"; exit 1; }
id nobody >/dev/null 2>&1 || { echo "exporter-safety: no user nobody"; exit 1; }
N=bbsafe-$$
as_nobody() { runuser -u nobody -- "$@"; }
cleanup_shm() { rm -f /dev/shm/$N-* /dev/shm/$N-*.*; }
trap 'cleanup_shm; cleanup' EXIT

mkconf() {  # mkconf FILE NAME [OPTIONS]
  cat > "$1" <<EOC
router id 192.0.2.1;
log stderr all;
protocol device {}
protocol static s4 { ipv4; route 10.0.0.0/8 via 192.0.2.7 dev "lo" onlink; route 10.1.0.0/16 blackhole; }
protocol lpm x {
  ipv4 { export all; };
  shm "$2";
  ${3:-}
}
EOC
}
parse() { timeout 10 "$BIN/bird" -p -c "$1" 2>&1; }
# answers NAME -- until a reader of NAME answers 10.0.0.1 (the feed is in)
answers() { for _ in $(seq 100); do "$READER" "$1" lookup <<< 10.0.0.1 2>/dev/null | grep -q via && return 0; sleep 0.1; done; return 1; }

# --- a symlink on the lock: bird must not write through it --------------------
echo "root's file" > "$WORK/victim"
as_nobody ln -s "$WORK/victim" /dev/shm/$N-sym.lock
mkconf "$WORK/sym.conf" $N-sym
out=$(parse "$WORK/sym.conf"); rc=$?; echo "  symlink: rc=$rc $out"
check "symlink on the lock: bird -p fails" [ "$rc" = 1 ]
check "  with a configuration error with file and line" grep -q "sym.conf:7:.*$N-sym.lock is a symbolic link, not bird" <<< "$out"
start_bird S "$BIN" "$WORK/sym.conf"
check "symlink on the lock: bird refuses to start on that configuration" bash -c "! kill -0 \$(cat '$WORK/S.pid' 2>/dev/null) 2>/dev/null"
check "symlink on the lock: the file it points to is untouched" grep -qx "root's file" "$WORK/victim"

# --- a FIFO on the lock: nothing blocks ----------------------------------------
as_nobody mkfifo /dev/shm/$N-fifo.lock
mkconf "$WORK/fifo.conf" $N-fifo
t0=$(date +%s%N)
out=$(parse "$WORK/fifo.conf"); rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "  FIFO: rc=$rc in $ms ms: $out"
check "FIFO on the lock: bird -p answers at once (no open of the FIFO)" [ "$rc" != 124 ]
check "FIFO on the lock: a configuration error with file and line" grep -q "fifo.conf:7:.*$N-fifo.lock is a FIFO, not bird" <<< "$out"

# A running bird: birdc configure with the FIFO's name keeps its configuration
mkconf "$WORK/run.conf" $N-run
start_bird R "$BIN" "$WORK/run.conf" || { bad "bird with an exporter starts"; cat "$WORK/R.log"; finish; }
R() { birdc_q "$BIN" "$SOCK_R" "$@"; }
for _ in $(seq 50); do [ -e /dev/shm/$N-run.ipv4 ] && break; sleep 0.1; done
cp "$WORK/fifo.conf" "$WORK/run2.conf"
t0=$(date +%s%N)
out=$(timeout 10 "$BIN/birdc" -s "$SOCK_R" configure \""$WORK/run2.conf"\" 2>&1); rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "  configure with the FIFO's name: rc=$rc in $ms ms: $(tail -1 <<< "$out")"
check "birdc configure with a FIFO on the lock answers (no freeze)" [ "$rc" != 124 ]
check "  with the error" grep -q "$N-fifo.lock is a FIFO" <<< "$out"
check "  and the running configuration stays (the exporter still up)" grep -qw up <<< "$(R show protocols x)"

# --- objects are not world-readable; the lock goes with the protocol ------------
m=$(stat -c '%a %U' /dev/shm/$N-run /dev/shm/$N-run.ipv4 | sort -u)
echo "  modes of the objects: $m"
check "the export's objects are mode 640, owned by bird's user" [ "$m" = "640 root" ]
check "nobody cannot read the export" bash -c "! runuser -u nobody -- cat /dev/shm/$N-run.ipv4 >/dev/null 2>&1"
check "the lock is there while the protocol runs" test -e /dev/shm/$N-run.lock
out=$(parse "$WORK/run.conf"); rc=$?
check "bird -p passes on the running configuration (its name held by the running bird)" [ "$rc" = 0 ]
R disable x >/dev/null
for _ in $(seq 50); do [ -e /dev/shm/$N-run.lock ] || break; sleep 0.1; done
check "the lock is removed when the protocol stops" test ! -e /dev/shm/$N-run.lock
check "the objects are removed when the protocol stops" test ! -e /dev/shm/$N-run.ipv4

# --- forged objects under the name while the protocol is down -------------------
R enable x >/dev/null
answers $N-run
out=$("$READER" $N-run lookup <<< "10.0.0.1"); echo "  reader: $out"
check "a reader answers from bird's export" grep -q "via 192.0.2.7" <<< "$out"
# nobody's copies of bird's objects, the gateway changed
for o in "" .ipv4; do cp /dev/shm/$N-run$o "$WORK/copy$o"; done
R disable x >/dev/null; sleep 0.5
python3 - "$WORK/copy" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
for gw in (bytes([192, 0, 2, 7]), bytes([7, 2, 0, 192])):
    i = b.find(gw)
    if i >= 0:
        b[i:i + 4] = bytes([6, 6, 6, 6])
open(p, "wb").write(b)
PY
chmod 644 "$WORK/copy" "$WORK/copy.ipv4"
for o in "" .ipv4; do as_nobody sh -c "cat > /dev/shm/$N-run$o" < "$WORK/copy$o"; done
out=$("$READER" $N-run lookup <<< "10.0.0.1" 2>&1); rc=$?; echo "  reader of nobody's objects: rc=$rc $out"
check "a reader refuses objects of another user under the export's name" [ "$rc" != 0 ]
check "  saying whose they are" grep -q "owned by uid $(id -u nobody), not by bird" <<< "$out"
check "  and gives no answer from them" bash -c "! grep -q 6.6.6.6 <<< \"\$1\"" _ "$out"
out=$("$READER" -o nobody $N-run lookup <<< "10.0.0.1" 2>&1); rc=$?
check "  (which it reads when told to trust that user: the check is the owner)" grep -q "via 6.6.6.6" <<< "$out"
R enable x >/dev/null; sleep 0.5
check "bird does not take over nobody's objects: its exporter stays down" bash -c "! '$BIN/birdc' -s '$SOCK_R' show protocols x | grep -qw up"
check "  and says whose they are" grep -q "$N-run is owned by uid $(id -u nobody), not by bird's user" "$WORK/R.log"
rm -f /dev/shm/$N-run /dev/shm/$N-run.ipv4
R disable x >/dev/null; R enable x >/dev/null
answers $N-run
check "with nobody's objects gone, bird exports again" grep -q "via 192.0.2.7" <<< "$("$READER" $N-run lookup <<< 10.0.0.1)"

# A group-writable object is refused even if root owns it
cp /dev/shm/$N-run /dev/shm/$N-gw && chmod 664 /dev/shm/$N-gw
out=$("$READER" $N-gw status 2>&1); rc=$?
check "a reader refuses an object writable by others than its owner" grep -q "writable by others than its owner (mode 0664)" <<< "$out"

# --- the restricted CLI ------------------------------------------------------------
for c in "show lpm lookup benchmark x" "show lpm benchmark master4"; do
  out=$("$BIN/birdc" -r -s "$SOCK_R" $c 2>&1)
  echo "  birdc -r $c: $(tail -1 <<< "$out")"
  check "birdc -r: '$c' is refused" grep -q "Access denied" <<< "$out"
done

# --- options that contradict ------------------------------------------------------
mkconf "$WORK/twice.conf" $N-a "shm \"$N-b\";"
out=$(parse "$WORK/twice.conf"); echo "  $out"
check "a second shm name is a configuration error with file and line" grep -q "twice.conf:8:.*Shared memory name given twice" <<< "$out"
mkconf "$WORK/mode.conf" $N-a 'shm mode "0666";'
check "shm mode 0666 is refused" grep -q "mode.conf:8:.*Invalid shared memory mode" <<< "$(parse "$WORK/mode.conf")"
mkconf "$WORK/grp.conf" $N-a 'shm group "no-such-group-here";'
check "an unknown shm group is refused" grep -q "grp.conf:8:.*Unknown group" <<< "$(parse "$WORK/grp.conf")"
printf 'router id 192.0.2.1;\nipv4 table t4 {\n  lpm engine simd;\n  lpm levels 8;\n};\n' > "$WORK/lv.conf"
out=$(parse "$WORK/lv.conf"); echo "  $out"
check "lpm levels with engine simd is a configuration error with file and line" grep -q "lv.conf:4:.*LPM engine simd has no levels" <<< "$out"
printf 'router id 192.0.2.1;\nipv4 table t4 {\n  lpm levels 8;\n  lpm engine simd;\n};\n' > "$WORK/lv2.conf"
check "  in either order" grep -q "lv2.conf:4:.*LPM engine simd has no levels" <<< "$(parse "$WORK/lv2.conf")"
printf 'router id 192.0.2.1;\nipv4 table t4 {\n  lpm engine dpcpe;\n  lpm levels 8;\n};\nprotocol device {}\n' > "$WORK/lv3.conf"
check "  while engine dpcpe takes it" bash -c "$BIN/bird -p -c '$WORK/lv3.conf'"

# A group and mode as configured
mkconf "$WORK/gm.conf" $N-gm 'shm group "nogroup"; shm mode "0600";'
"$BIN/birdc" -s "$SOCK_R" configure \""$WORK/gm.conf"\" > /dev/null 2>&1
for _ in $(seq 50); do [ -e /dev/shm/$N-gm.ipv4 ] && break; sleep 0.1; done
m=$(stat -c '%a %G' /dev/shm/$N-gm /dev/shm/$N-gm.ipv4 2>&1 | sort -u)
echo "  shm group nogroup, mode 0600: $m"
check "shm group and shm mode are applied to every object" [ "$m" = "600 nogroup" ]
finish
