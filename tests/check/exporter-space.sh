# The exporter on a full /dev/shm. Its regions are sparse files; a page the
# file system cannot back would kill bird with SIGBUS when written. bird runs
# in a mount namespace of its own with a 64 MiB tmpfs on /dev/shm (Docker's
# default size); once its exporter is up, user nobody fills the rest
# (dd until ENOSPC), and 20,000 routes that need new rows are exported:
# the region cannot grow, so the protocol must stop with the error logged
# and shown, bird and its other protocols must run on, and once nobody's
# file is gone, `enable' must bring the exporter back with every route.
# Then root truncates bird's live objects: bird must catch the SIGBUS of
# its next access, restart the exporter with new objects and run on.
. "$(dirname "$0")/../lib.sh"

READER=$top/tools/lpm-reader/bird-lpm-reader
[ "$(id -u)" = 0 ] || { echo "exporter-space: needs root (unshare, mount)"; exit 1; }
id nobody >/dev/null 2>&1 || { echo "exporter-space: no user nobody"; exit 1; }
N=bbspace
R=20000

{
  cat <<EOC
router id 192.0.2.1;
log stderr all;
protocol device {}
protocol static s0 { ipv4; route 10.0.0.0/8 via 192.0.2.7 dev "lo" onlink; }
protocol static many { disabled; ipv4;
EOC
  for i in $(seq 0 $((R - 1))); do echo "  route 100.$((i / 256)).$((i % 256)).1/32 via 192.0.2.7 dev \"lo\" onlink;"; done
  cat <<EOC
}
protocol lpm x { ipv4 { export all; }; shm "$N"; }
EOC
} > "$WORK/space.conf"

# bird in its own mount namespace, a small tmpfs on /dev/shm there
unshare -m --propagation private sh -c "mount -t tmpfs -o size=64m,mode=1777 tmpfs /dev/shm && exec '$BIN/bird' -f -c '$WORK/space.conf' -s '$WORK/S.ctl'" > "$WORK/S.log" 2>&1 &
PID=$!
BIRD_PIDS+=($PID)
C() { "$BIN/birdc" -s "$WORK/S.ctl" "$@"; }
IN() { nsenter -t "$PID" -m "$@"; }
for _ in $(seq 100); do C show status >/dev/null 2>&1 && break; sleep 0.1; done
answers() {  # answers ADDR -- until the reader in bird's namespace answers ADDR
  for _ in $(seq 100); do IN "$READER" $N lookup <<< "$1" 2>/dev/null | grep -q via && return 0; sleep 0.1; done; return 1
}
check "bird with an exporter starts on a 64 MiB /dev/shm" answers 10.0.0.1
echo "  /dev/shm before the filler: $(IN df -k /dev/shm | awk 'NR == 2 {print $3 " KiB used, " $4 " KiB free"}')"

# nobody fills what is left
IN runuser -u nobody -- dd if=/dev/zero of=/dev/shm/filler bs=1M status=none 2>/dev/null
echo "  after the filler: $(IN df -k /dev/shm | awk 'NR == 2 {print $4 " KiB free"}')"
C enable many >/dev/null
for _ in $(seq 100); do C show protocols x | grep -qE "^x .* (down|flush)" && break; sleep 0.1; done
check "bird runs on after the region could not grow (no SIGBUS)" kill -0 "$PID"
check "the exporter stopped" grep -qE "^x .* down" <<< "$(C show protocols x)"
check "  logging why at error level" grep -q "<ERR> x: shared memory /$N.ipv4 cannot grow: No space left on device; protocol disabled" "$WORK/S.log"
check "  shown by show protocols" grep -q "cannot grow: No space left on device" <<< "$(C show protocols all x)"
check "the other protocols are untouched" [ "$(C show protocols | grep -cE '^(s0|many|device1) .* up')" = 3 ]
check "the routes are all in bird's table" grep -q "^$((R + 1)) of $((R + 1)) routes" <<< "$(C show route count | sed -n '/routes/p')"
check "the region's objects are gone with the protocol" bash -c "! nsenter -t $PID -m ls /dev/shm | grep -q '^$N'"

IN rm -f /dev/shm/filler
C enable x >/dev/null
check "with room again, enable brings the exporter back" answers 100.78.31.1
out=$(printf '100.0.0.1\n100.78.31.1\n100.%d.%d.1\n' $(((R - 1) / 256)) $(((R - 1) % 256)) | IN "$READER" $N lookup 2>&1)
check "  with the routes exported" [ "$(grep -c "via 192.0.2.7" <<< "$out")" = 3 ]
# Root truncates live regions: bird's next write or read there faults. It
# must catch that, restart the protocol with new objects, and run on.
for o in $N.ipv4 $N; do
  IN truncate -s 0 /dev/shm/$o
  C disable many >/dev/null; C enable many >/dev/null
  for _ in $(seq 50); do grep -q "shared memory /$o was truncated" "$WORK/S.log" && break; sleep 0.1; done
  check "/dev/shm/$o truncated under bird: bird runs on (SIGBUS caught)" kill -0 "$PID"
  check "  the truncation is logged" grep -q "<ERR> x: shared memory /$o was truncated by another process; restarting" "$WORK/S.log"
  check "  and the exporter restarts with every route" answers 100.78.31.1
  check "  in objects of full size again" [ "$(IN stat -c %s /dev/shm/$o)" -gt 0 ]
done
C down >/dev/null
finish
