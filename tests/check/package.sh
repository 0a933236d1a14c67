# The Debian packages as an operator installs them (root, apt; PID 1 need
# not be systemd): Debian's own bird2 from apt with the user's bird.conf,
# then `apt-get install ./bird2_*.deb' (and the reader packages) over it:
# the user's bird.conf is kept (ucf), the files are at Debian's paths, the
# unit passes `systemd-analyze verify' and its ExecStartPre/ExecStart lines,
# run by hand as the unit runs them, start bird as user bird; birdc works
# for a member of group bird and not for others; a table with `lpm engine
# simd' and a `protocol lpm' export, read by examples/lpm-lookup.c as
# installed and built with pkg-config; `birdc configure' of a bad option
# keeps the running configuration; Debian's autopkgtest (debian/tests/
# test-bird.sh) against the installed package, in a network namespace; an
# apt pin holds the version; remove and purge leave nothing of ours; Debian's
# bird2 again (the roll-back), which rejects our options with file and
# line. The machine is left as it was: bird2, user bird, /etc/bird and
# /run/bird are removed if they were not there before. Builds the packages
# (make deb) if build/deb has none. Run alone: bash tests/check/package.sh
[ $# -ge 3 ] || set -- "$(cd "$(dirname "$0")/../.." && pwd)" "" ""
. "$(dirname "$0")/../lib.sh"

export DEBIAN_FRONTEND=noninteractive
[ "$(id -u)" = 0 ] || { echo "package.sh: needs root (apt-get, dpkg, users)"; exit 1; }
DEB=$top/build/deb
N=bbpkg-$$
TUSER=bbpkg$$
NS=bbpkg$$
CONF=/etc/bird/bird.conf

installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q "install ok installed"; }
present()   { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -qv "not-installed"; }

# --- the machine before: this test owns bird2 for its duration --------------
for p in bird2 bird libbird-lpm-reader0 libbird-lpm-reader-dev; do
  if present "$p"; then
    echo "SKIP: package $p is on this machine; this test installs and purges bird2 and would change it"
    exit 0
  fi
done
if getent passwd bird >/dev/null || getent group bird >/dev/null || [ -e /etc/bird ] || [ -e /run/bird ]; then
  echo "SKIP: user or group bird, /etc/bird or /run/bird exists; this test creates and removes them"
  exit 0
fi
POLICY_MADE=
BIRD_PID=
pkg_cleanup() {
  [ -n "$BIRD_PID" ] && kill "$BIRD_PID" 2>/dev/null && sleep 0.5
  ip netns del "$NS" 2>/dev/null
  userdel "$TUSER" 2>/dev/null
  rm -f /etc/apt/preferences.d/bloombird-pkgtest-$$
  for p in libbird-lpm-reader-dev libbird-lpm-reader0 bird2; do
    present "$p" && apt-get purge -y -q "$p" >/dev/null 2>&1
  done
  getent passwd bird >/dev/null && userdel bird 2>/dev/null
  getent group bird >/dev/null && groupdel bird 2>/dev/null
  rm -rf /etc/bird /run/bird
  rm -f /dev/shm/$N /dev/shm/$N.*
  [ -n "$POLICY_MADE" ] && rm -f /usr/sbin/policy-rc.d
  cleanup
}
trap pkg_cleanup EXIT

# No service starts while packages install (no init here runs it): the
# unit's lines are run by hand below
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\n# bloombird package test: no service starts during the test\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  POLICY_MADE=1
fi

# --- the packages -------------------------------------------------------------
if ! ls "$DEB"/bird2_*.deb >/dev/null 2>&1; then
  [ -f "$top/Makefile" ] || { bad "build/deb has no packages and $top is not configured (./configure; make deb)"; finish; }
  t0=$(date +%s)
  make -s -C "$top" deb > "$WORK/make-deb.log" 2>&1 || { tail -n 30 "$WORK/make-deb.log"; bad "make deb"; finish; }
  echo "make deb: $(( $(date +%s) - t0 )) s"
fi
DEBS=$(ls "$DEB"/bird2_*.deb "$DEB"/libbird-lpm-reader0_*.deb "$DEB"/libbird-lpm-reader-dev_*.deb)
OURVER=$(dpkg-deb -f "$DEB"/bird2_*.deb Version)
echo "packages: $(echo $DEBS | xargs -n1 basename | tr '\n' ' ')"
check "our bird2 version ($OURVER) names bloombird" grep -q '+bloombird[0-9]' <<< "$OURVER"

aptq() { apt-get "$@" > "$WORK/apt.log" 2>&1 || { tail -n 20 "$WORK/apt.log"; return 1; }; }

# --- Debian's bird2 with the user's configuration -------------------------------
aptq install -y -q bird2 || { apt-get update -qq >/dev/null 2>&1; aptq install -y -q bird2; } ||
  { bad "Debian's bird2 installs from apt"; finish; }
DEBVER=$(dpkg-query -W -f='${Version}' bird2)
check "Debian's bird2 $DEBVER installed from apt" bash -c "! grep -q bloombird <<< '$DEBVER'"
check "Debian's postinst made the system user bird" getent passwd bird
cat > $CONF <<EOC
# The user's own configuration (kept across the upgrade: bbpkg-marker-$$)
router id 192.0.2.254;
protocol device { }
protocol static user4 {
  ipv4;
  route 198.51.100.0/24 blackhole;
}
EOC
check "the user's bird.conf is valid for Debian's bird" /usr/sbin/bird -p -c $CONF
USERCONF=$(cat $CONF)

# --- ours over it ---------------------------------------------------------------
t0=$(date +%s)
aptq install -y -q $DEBS; rc=$?
echo "apt-get install of our packages over Debian's: $(( $(date +%s) - t0 )) s"
check "apt-get install ./bird2_*.deb ./libbird-lpm-reader*.deb over Debian's bird2 (rc $rc)" [ "$rc" = 0 ]
check "bird2 is ours now ($(dpkg-query -W -f='${Version}' bird2))" [ "$(dpkg-query -W -f='${Version}' bird2)" = "$OURVER" ]
check "dpkg upgraded Debian's $DEBVER to ours" grep -q "upgrade bird2:[a-z0-9]* $DEBVER $OURVER" /var/log/dpkg.log
check "the user's bird.conf is kept (ucf)" [ "$(cat $CONF)" = "$USERCONF" ]
check "ucf put the package's new default beside it (bird.conf.ucf-dist)" cmp -s /etc/bird/bird.conf.ucf-dist /usr/share/bird2/bird.conf
v=$(/usr/sbin/bird --version 2>&1)
check "/usr/sbin/bird is bloombird's ($v)" grep -q "+bloombird" <<< "$v"
UNIT=$(dpkg -L bird2 | grep '/systemd/system/bird\.service$')
for f in /usr/sbin/bird /usr/sbin/birdc /usr/sbin/birdcl /etc/bird/envvars /usr/lib/bird/prepare-environment \
         /usr/share/bird2/bird.conf "$UNIT" /usr/bin/bird-lpm-reader /usr/share/man/man7/bloombird.7.gz \
         /usr/share/man/man8/bird.8.gz /usr/share/man/man8/birdc.8.gz /usr/share/man/man1/bird-lpm-reader.1.gz; do
  check "bird2 ships $f" bash -c "dpkg -S '$f' 2>/dev/null | grep -q '^bird2:'"
done
check "the reader library's package ships libbird-lpm-reader.so.0" bash -c "dpkg -L libbird-lpm-reader0 | grep -q '/libbird-lpm-reader\.so\.0$'"
check "the -dev package ships the header, the .so link and the .pc file" bash -c \
  "dpkg -L libbird-lpm-reader-dev | grep -q /usr/include/bird-lpm-reader/lpm-reader.h && dpkg -L libbird-lpm-reader-dev | grep -q /usr/include/bird-lpm-reader/proto/lpm/lpm-shm.h && dpkg -L libbird-lpm-reader-dev | grep -q 'pkgconfig/bird-lpm-reader.pc$'"
check "/etc/bird is bird:bird 0750 (statoverride)" [ "$(stat -c '%U:%G %a' /etc/bird)" = "bird:bird 750" ]
check "bird.conf is bird:bird 0640 (statoverride)" [ "$(stat -c '%U:%G %a' $CONF)" = "bird:bird 640" ]
check "ucf registers bird.conf to bird2" bash -c "ucfq -w $CONF | grep -q '^$CONF:bird2:'"
check "man bloombird finds our page" bash -c "man -w bloombird | grep -q bloombird.7"

# --- the unit, as systemd would run it -----------------------------------------
out=$(systemd-analyze verify --man=no "$UNIT" 2>&1); rc=$?
echo "  systemd-analyze verify: rc $rc ${out:+: $out}"
check "systemd-analyze verify $UNIT" [ "$rc" = 0 ]
envfile=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$UNIT")
check "the unit reads /etc/bird/envvars" [ "$envfile" = /etc/bird/envvars ]
# As systemd: variables of the EnvironmentFile, unset ones empty
unit_env() { set +u; set -a; . "$envfile"; set +a; }
n=0
while IFS= read -r line; do
  cmd=${line#ExecStartPre=}
  out=$( unit_env; eval "set -- $cmd"; "$@" 2>&1 ); rc=$?
  n=$((n + 1))
  check "ExecStartPre=$cmd (rc $rc${out:+: $out})" [ "$rc" = 0 ]
done < <(grep '^ExecStartPre=' "$UNIT")
check "the unit has its ExecStartPre lines (prepare-environment, bird -p)" [ "$n" = 2 ]
start=$(sed -n 's/^ExecStart=//p' "$UNIT")
check "ExecStart runs bird in the foreground as \$BIRD_RUN_USER" grep -q -- '-f -u \$BIRD_RUN_USER' <<< "$start"
( unit_env; eval "set -- $start"; exec "$@" ) > "$WORK/bird.out" 2>&1 &
BIRD_PID=$!
for _ in $(seq 100); do [ -S /run/bird/bird.ctl ] && birdc show status >/dev/null 2>&1 && break; sleep 0.1; done
check "bird is up (birdc show status as root)" bash -c "birdc show status | grep -q 'Daemon is up and running'" ||
  sed 's/^/  bird: /' "$WORK/bird.out"
check "bird runs as user bird" [ "$(ps -o user= -p $BIRD_PID | tr -d ' ')" = bird ]
check "/run/bird is bird's (prepare-environment)" [ "$(stat -c %U:%G /run/bird)" = bird:bird ]

useradd -M -N -G bird -s /usr/sbin/nologin "$TUSER"
asuser() { runuser -u "$TUSER" -- "$@"; }
out=$(asuser birdc show status 2>&1)
check "birdc works for a member of group bird" grep -q 'Daemon is up and running' <<< "$out"
out=$(runuser -u nobody -- birdc show status 2>&1)
check "birdc is refused to a user outside group bird ($(head -1 <<< "$out"))" bash -c "! grep -q 'Daemon is up' <<< '$out'"
check "bird runs the user's configuration (protocol user4)" bash -c "birdc show protocols | grep -q '^user4 '"

# --- our options: an engine in a table and an export ----------------------------
cat > $CONF <<EOC
# The user's configuration with bloombird's options (bbpkg-marker-$$)
router id 192.0.2.254;
ipv4 table t4 { lpm engine simd; };
protocol device { }
protocol static user4 {
  ipv4 { table t4; };
  route 10.0.0.0/8 via 192.0.2.1 dev "lo" onlink;
  route 10.1.0.0/16 blackhole;
  route 10.2.0.0/24 via 192.0.2.2 dev "lo" onlink weight 2 via 192.0.2.3 dev "lo" onlink;
}
protocol lpm fwd {
  ipv4 { table t4; export all; };
  shm "$N";
}
EOC
cp $CONF "$WORK/ours.conf"
out=$(asuser birdc configure 2>&1)
check "birdc configure with lpm engine simd and protocol lpm ($(tail -1 <<< "$out"))" grep -qE 'Reconfigured|Reconfiguration in progress' <<< "$out"
for _ in $(seq 50); do birdc show lpm lookup fwd 10.2.0.5 2>/dev/null | grep -q 192.0.2.2 && break; sleep 0.1; done
out=$(asuser birdc show lpm t4 2>&1)
check "birdc show lpm t4 answers (engine simd)" grep -q 'simd' <<< "$out"
out=$(asuser birdc show fib t4 2>&1)
check "birdc show fib t4 answers" grep -qi 'entries' <<< "$out"
out=$(asuser birdc show lpm lookup fwd 10.2.0.5 2>&1)
check "birdc show lpm lookup fwd 10.2.0.5: via 192.0.2.2 and 192.0.2.3" bash -c "grep -q 192.0.2.2 <<< '$out' && grep -q 192.0.2.3 <<< '$out'"
check "the export is bird's, group bird, mode 0640" [ "$(stat -c '%U:%G %a' /dev/shm/$N)" = "bird:bird 640" ]

# --- the example program, built against the installed library -------------------
EX=$(dpkg -L libbird-lpm-reader-dev | grep '/examples/lpm-lookup\.c$')
check "the -dev package ships the example ($EX)" test -f "$EX"
chmod 755 "$WORK"
out=$(cd "$WORK" && cc -o app "$EX" $(pkg-config --cflags --libs bird-lpm-reader) 2>&1); rc=$?
check "cc app.c \$(pkg-config --cflags --libs bird-lpm-reader) builds (rc $rc${out:+: $out})" [ "$rc" = 0 ]
check "the example links libbird-lpm-reader.so.0 from the package" bash -c "ldd '$WORK/app' | grep -qE 'libbird-lpm-reader.so.0 => (/usr)?/lib/'"
addrs="10.2.0.5 10.1.2.3 10.0.0.1 10.3.0.1 192.168.0.1"
app=$(asuser "$WORK/app" "$N" $addrs 2>&1); rc=$?
sed 's/^/  app: /' <<< "$app"
check "the example reads the export as a member of group bird (rc $rc)" [ "$rc" = 0 ]
check "  10.2.0.5 via both gateways of its ECMP route" grep -q '^10.2.0.5 via 192.0.2.2 .*via 192.0.2.3' <<< "$app"
check "  10.1.2.3 blackhole" grep -q '^10.1.2.3 blackhole$' <<< "$app"
check "  10.3.0.1 via 192.0.2.1 (the /8)" grep -q '^10.3.0.1 via 192.0.2.1' <<< "$app"
check "  192.168.0.1 has no route" grep -q '^192.168.0.1 -$' <<< "$app"
tool=$(printf '%s\n' $addrs | asuser bird-lpm-reader "$N" lookup 2>&1)
check "the example answers as bird-lpm-reader does" [ "$app" = "$tool" ]

# --- a bad option: the running configuration stays ------------------------------
sed -i 's/lpm engine simd;/lpm engine nosuch;/' $CONF
out=$(asuser birdc configure 2>&1)
echo "  birdc configure (bad): $out"
check "birdc configure of a bad option fails with file and line" grep -q "$CONF:3:.*Unknown LPM engine nosuch" <<< "$out"
check "  bird still runs the previous configuration (show lpm t4: simd)" bash -c "birdc show lpm t4 | grep -q simd"
app2=$(asuser "$WORK/app" "$N" $addrs 2>&1); rc=$?
check "  the export still answers the same (rc $rc)" bash -c "[ $rc = 0 ] && [ -n '$app' ] && [ '$app2' = '$app' ]"
cp "$WORK/ours.conf" $CONF

# --- Debian's autopkgtest against the installed package -------------------------
T=$(ls "$DEB"/bird2-*/debian/tests/test-bird.sh 2>/dev/null | head -1)
check "Debian's autopkgtest script is in the build tree" test -f "$T"
check "  its control file asks for needs-root and bird2" grep -q 'Restrictions: needs-root' "$(dirname "$T")/control"
# A host of its own, with an IPv4 address bird takes its router ID from, as
# a testbed has (the script's configuration names none)
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add bbhost0 type veth peer name bbhost1
ip -n "$NS" link set bbhost1 up
ip -n "$NS" link set bbhost0 up
ip -n "$NS" addr add 192.0.2.100/24 dev bbhost0
mkdir -p "$WORK/shim"
if ! ip netns exec "$NS" ip link add bbprobe type dummy 2>/dev/null; then
  # This kernel has no dummy links: a veth pair stands in, its peer up and,
  # like a dummy link, without duplicate address detection (bird ignores
  # a tentative address, and the script adds its routes at once)
  cat > "$WORK/shim/ip" <<'EOS'
#!/bin/bash
if [ "${1:-} ${2:-}" = "link add" ] && [ "${4:-} ${5:-}" = "type dummy" ]; then
  /usr/sbin/ip link add "$3" type veth peer name "${3:0:10}-p" || exit
  echo 0 > "/proc/sys/net/ipv6/conf/$3/accept_dad"
  exec /usr/sbin/ip link set "${3:0:10}-p" up
fi
exec /usr/sbin/ip "$@"
EOS
  chmod 755 "$WORK/shim/ip"
  echo "  (no dummy links in this kernel: the autopkgtest's dummy link is a veth pair)"
fi
out=$(cd "$WORK" && ip netns exec "$NS" env PATH="$WORK/shim:/usr/sbin:/usr/bin:/sbin:/bin" timeout 120 bash "$T" 2>&1); rc=$?
[ -n "$out" ] && sed 's/^/  autopkgtest: /' <<< "$out"
check "Debian's debian/tests/test-bird.sh passes against the installed bird2 (rc $rc)" [ "$rc" = 0 ]
ip netns del "$NS"

# --- an apt pin keeps Debian's bird2 from replacing ours --------------------------
# (a version pin would not apply: a .deb installed from a file has no source
# but dpkg's status, which apt always ranks 100)
printf 'Package: bird2\nPin: release o=Debian\nPin-Priority: -1\n' > /etc/apt/preferences.d/bloombird-pkgtest-$$
out=$(apt-cache policy bird2)
sed 's/^/  policy: /' <<< "$out"
check "apt-cache policy with the pin: ours is the candidate, Debian's $DEBVER is never taken (-1)" \
  bash -c "grep -q '^  Candidate: $OURVER\$' <<< '$out' && grep -qE '^ +${DEBVER//+/\\+} -1\$' <<< '$out'"
rm -f /etc/apt/preferences.d/bloombird-pkgtest-$$

# --- stop, remove, purge ------------------------------------------------------
kill -TERM "$BIRD_PID"; wait "$BIRD_PID" 2>/dev/null; BIRD_PID=
check "bird removed its export when it stopped" bash -c "! ls /dev/shm/$N* 2>/dev/null | grep -q ."
userdel "$TUSER"
files=$(for p in bird2 libbird-lpm-reader0 libbird-lpm-reader-dev; do dpkg -L $p; done | sort -u |
  while read -r f; do [ ! -d "$f" ] && { [ -f "$f" ] || [ -L "$f" ]; } && echo "$f"; done)
aptq remove -y -q bird2 libbird-lpm-reader0 libbird-lpm-reader-dev; rc=$?
check "apt-get remove (rc $rc)" [ "$rc" = 0 ]
check "  /usr/sbin/bird is gone" [ ! -e /usr/sbin/bird ]
check "  the user's bird.conf stays until purge" [ -f $CONF ]
# What remove left (packages with conffiles) is purged
left=$(for p in bird2 libbird-lpm-reader0 libbird-lpm-reader-dev; do present $p && echo $p; done)
check "  bird2 is left with its configuration files" grep -qw bird2 <<< "$left"
aptq purge -y -q $left; rc=$?
check "apt-get purge (rc $rc)" [ "$rc" = 0 ]
left=$(for f in $files; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done)
check "no file of our packages is left ($(echo $left))" [ -z "$left" ]
for p in bird2 libbird-lpm-reader0 libbird-lpm-reader-dev; do
  check "  dpkg knows no $p" bash -c "! dpkg-query -W -f='\${Status}' $p 2>/dev/null | grep -qv not-installed"
done
check "  /etc/bird is gone" [ ! -e /etc/bird ]
check "  no statoverride of /etc/bird is left" bash -c "! dpkg-statoverride --list | grep -q ' /etc/bird'"
check "  ucf forgot bird.conf" bash -c "! ucfq -w $CONF | grep -q bird2"
check "  the user bird is gone (postrm)" bash -c "! getent passwd bird"
check "  no /dev/shm object of ours" bash -c "! ls /dev/shm/$N* 2>/dev/null | grep -q ."

# --- the roll-back: Debian's bird2 again ----------------------------------------
aptq install -y -q bird2; rc=$?
check "Debian's bird2 installs again (rc $rc, $(dpkg-query -W -f='${Version}' bird2 2>/dev/null))" \
  bash -c "[ $rc = 0 ] && [ \"\$(dpkg-query -W -f='\${Version}' bird2)\" = '$DEBVER' ]"
out=$(/usr/sbin/bird -p -c "$WORK/ours.conf" 2>&1); rc=$?
echo "  stock bird -p on our configuration: rc $rc: $out"
check "stock bird rejects our options with its own error, file and line" \
  bash -c "[ $rc != 0 ] && grep -qE 'ours.conf:3:[0-9]+ syntax error' <<< '$out'"
aptq purge -y -q bird2; rc=$?
check "Debian's bird2 purged again: the machine as before (rc $rc)" \
  bash -c "[ $rc = 0 ] && ! getent passwd bird && [ ! -e /etc/bird ]"
finish
