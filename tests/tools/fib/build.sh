#!/bin/sh
# build.sh TOP TREE OUT -- fibtool linked against TREE (patched or stock)
set -e
top=$1 tree=$2 out=$3
mkdir -p "$(dirname "$out")"
make -s -C "$tree" -f Makefile -f "$top/tests/tools/fib/tool.mk" \
  FIBTOOL_SRC="$top/tests/tools/fib/fibtool.c" FIBTOOL_OUT="$out" "$out"
