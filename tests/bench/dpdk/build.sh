#!/bin/sh
# build.sh OUT -- builds dpdk-lpm (the DPDK reference LPM benchmark) into OUT
# against the system's DPDK, found with pkg-config (Debian 12: libdpdk-dev,
# DPDK 22.11). Exits non-zero, saying why, if DPDK is not there.
set -e
[ $# -eq 1 ] || { echo "usage: $0 OUT" >&2; exit 2; }
out=$1
src=$(dirname "$0")/dpdk-lpm.c

if ! pkg-config --exists libdpdk 2>/dev/null; then
  echo "dpdk build.sh: DPDK not found (pkg-config libdpdk)." >&2
  echo "dpdk build.sh: install it: apt-get install libdpdk-dev (Debian 12: DPDK 22.11)" >&2
  exit 1
fi
ver=$(pkg-config --modversion libdpdk)
case $ver in
  22.11*) ;;
  *) echo "dpdk build.sh: warning: DPDK $ver; dpdk-lpm is written for the 22.11 API" >&2 ;;
esac

mkdir -p "$(dirname "$out")"
# pkg-config's cflags carry DPDK's own -march; ours comes after it
${CC:-gcc} -O3 -Wall -Wextra -Wno-unused-parameter $(pkg-config --cflags libdpdk) \
  -march=native -o "$out" "$src" $(pkg-config --libs libdpdk) -ldl
