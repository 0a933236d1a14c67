# hugepages.sh -- sourced by the benchmarks that compare our engines with
# DPDK: DPDK runs on hugetlbfs pages, as it is deployed, while our engines
# run as bird runs them: on 4 KiB pages, since BIRD turns transparent huge
# pages off for its whole process (sysdep/unix/alloc.c; letting the
# engines' regions have them was measured twice, on 2026-11-24 and
# 2026-11-27, and gave no gain that this VM's noise would not hide:
# docs/results/history.md). If anything, this favours DPDK.
#
#   bench_huge_reserve MIB   reserve hugetlbfs pages for DPDK (root; a
#                            hugetlbfs mount is made if there is none);
#                            sets BENCH_DPDK_HUGE to "--huge" or "" and
#                            BENCH_HUGE_NOTE to a line saying which
#   bench_huge_restore       give the pages back, unmount what was mounted
#
# BENCH_HUGE=0 keeps DPDK on 4 KiB pages (--no-huge), as before.

BENCH_DPDK_HUGE=
BENCH_HUGE_NOTE="DPDK without hugepages (--no-huge: 4 KiB pages)"
_bench_huge_old=
_bench_huge_mnt=

bench_huge_reserve() {
  local mib=$1 f=/proc/sys/vm/nr_hugepages
  [ "${BENCH_HUGE:-1}" = 0 ] && { BENCH_HUGE_NOTE="$BENCH_HUGE_NOTE (BENCH_HUGE=0)"; return 0; }
  local kb
  kb=$(awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo)
  if [ -z "$kb" ] || [ ! -w "$f" ]; then
    BENCH_HUGE_NOTE="$BENCH_HUGE_NOTE: cannot reserve hugetlbfs pages here (not root, or no hugetlbfs)"
    return 0
  fi
  if ! grep -q " hugetlbfs " /proc/mounts; then
    mkdir -p /dev/hugepages
    mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null && _bench_huge_mnt=/dev/hugepages
  fi
  local want=$(( mib * 1024 / kb ))
  _bench_huge_old=$(cat "$f")
  [ "$_bench_huge_old" -lt "$want" ] && echo "$want" > "$f" 2>/dev/null
  local got
  got=$(cat "$f")
  if [ "$got" -ge "$want" ] && grep -q " hugetlbfs " /proc/mounts; then
    BENCH_DPDK_HUGE=--huge
    BENCH_HUGE_NOTE="DPDK on hugetlbfs pages ($got pages of $kb kB reserved)"
  else
    BENCH_HUGE_NOTE="$BENCH_HUGE_NOTE: only $got of $want hugetlbfs pages could be reserved"
  fi
}

bench_huge_restore() {
  [ -n "$_bench_huge_old" ] && echo "$_bench_huge_old" > /proc/sys/vm/nr_hugepages 2>/dev/null
  [ -n "$_bench_huge_mnt" ] && umount "$_bench_huge_mnt" 2>/dev/null
  _bench_huge_old= _bench_huge_mnt=
  return 0
}
