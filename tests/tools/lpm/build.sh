#!/bin/sh
# build.sh TOP TREE OUT [SRC] -- lpmtool (or SRC) linked against the patched TREE
set -e
top=$1 tree=$2 out=$3 src=${4:-$1/tests/tools/lpm/lpmtool.c}
mkdir -p "$(dirname "$out")"
make -s -C "$tree" -f Makefile -f "$top/tests/tools/lpm/tool.mk" \
  LPMTOOL_SRC="$src" LPMTOOL_OUT="$out" "$out"
