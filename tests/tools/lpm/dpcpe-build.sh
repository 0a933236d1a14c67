#!/bin/sh
# dpcpe-build.sh TOP TREE OUT -- the dpcpe benchmark linked against TREE (the patched tree)
set -e
top=$1 tree=$2 out=$3
mkdir -p "$(dirname "$out")"
make -s -C "$tree" -f Makefile -f "$top/tests/tools/lpm/dpcpe-bench.mk" \
  DPCPE_BENCH_SRC="$top/tests/tools/lpm/dpcpe-bench.c" DPCPE_BENCH_OUT="$out" "$out"
