# The distribution layer's bad input and install: a corrupted tarball is
# refused naming both sums and leaves nothing behind; ./configure names the
# apt-get line for a missing tool; make install honours DESTDIR.
. "$(dirname "$0")/../lib.sh"
want=92ca93118a6b168ae5425c09e63e2365ee8ee16d1ff7f15820936c5d9495ba83

# A corrupted copy of the real tarball
cp "$top/upstream/bird2_2.17.5.orig.tar.gz" "$WORK/bad.tar.gz"
printf 'x' | dd of="$WORK/bad.tar.gz" bs=1 seek=1000 conv=notrunc 2>/dev/null
got=$(sha256sum "$WORK/bad.tar.gz" | cut -d' ' -f1)
out=$("$top/tools/fetch-upstream" "$WORK/out/bird2_2.17.5.orig.tar.gz" "$want" 2.17.5-0+deb13u1 http://deb.debian.org/debian "$WORK/bad.tar.gz" 2>&1); rc=$?
echo "$out"
check "corrupted tarball is refused" [ "$rc" != 0 ]
check "the error names the expected sha256" grep -q "expected: $want" <<< "$out"
check "the error names the actual sha256" grep -q "actual:   $got" <<< "$out"
check "nothing is left under the tarball's name" [ ! -e "$WORK/out/bird2_2.17.5.orig.tar.gz" ]

# ./configure --with-bird-tarball: a good local copy is accepted, a missing one is not
(cd "$WORK" && mkdir cfg && cd cfg && cp -r "$top/configure.ac" "$top/Makefile.in" "$top/bird-patches" "$top/tools" "$top/nest" "$top/sysdep" "$top/proto" . && \
  autoconf && ./configure --with-bird-tarball="$top/upstream/bird2_2.17.5.orig.tar.gz" > conf.out 2>&1)
check "configure accepts --with-bird-tarball with a local copy" grep -q "upstream tarball:  $top/upstream/bird2_2.17.5.orig.tar.gz" "$WORK/cfg/conf.out"
out=$(cd "$WORK/cfg" && ./configure --with-bird-tarball=/nonexistent 2>&1)
check "configure refuses a missing --with-bird-tarball" grep -q "no such file: /nonexistent" <<< "$out"

# BIRD's options with spaces reach BIRD's configure as one argument, for the
# patched and the stock tree, given on the command line or in the environment
(cd "$WORK/cfg" && ./configure --with-bird-tarball="$top/upstream/bird2_2.17.5.orig.tar.gz" CFLAGS="-O1 -g" > conf.sp 2>&1)
check "configure accepts CFLAGS=\"-O1 -g\"" grep -q "BIRD configure: *'CFLAGS=-O1 -g'" "$WORK/cfg/conf.sp"
make -s -C "$WORK/cfg" "$WORK/cfg/build/bird-2.17.5/config.status" "$WORK/cfg/build/stock/bird-2.17.5/config.status" > "$WORK/sp.out" 2>&1
tail -3 "$WORK/sp.out"
for t in bird-2.17.5 stock/bird-2.17.5; do
  check "$t: BIRD's configure got CFLAGS '-O1 -g' as one option" grep -q "^CFLAGS=.*-O1 -g" "$WORK/cfg/build/$t/Makefile"
done
(cd "$WORK/cfg" && CFLAGS="-O1 -g" ./configure --with-bird-tarball="$top/upstream/bird2_2.17.5.orig.tar.gz" > conf.env 2>&1)
check "CFLAGS=\"-O1 -g\" ./configure (environment) passes the flags as one option" grep -q "BIRD configure: *'CFLAGS=-O1 -g'" "$WORK/cfg/conf.env"
make -s -C "$WORK/cfg" "$WORK/cfg/build/stock/bird-2.17.5/config.status" > "$WORK/sp2.out" 2>&1
check "stock tree reconfigured from the environment form" grep -q "^CFLAGS=.*-O1 -g" "$WORK/cfg/build/stock/bird-2.17.5/Makefile"

# A machine without quilt: configure prints the apt-get line
mkdir -p "$WORK/path"
for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
  for f in "$d"/*; do
    b=$(basename "$f"); [ "$b" = quilt ] || [ -e "$WORK/path/$b" ] || ln -s "$f" "$WORK/path/$b"
  done
done
out=$(cd "$WORK/cfg" && PATH=$WORK/path ./configure 2>&1)
echo "$out" | tail -3
check "configure without quilt prints the apt-get line" grep -q "apt-get install -y quilt" <<< "$out"

# make install honours DESTDIR (BIRD's own install)
make -s -C "$top" install DESTDIR="$WORK/root" > "$WORK/install.out" 2>&1
sbin=$(find "$WORK/root" -name bird -type f | head -1)
check "make install DESTDIR= puts bird under DESTDIR ($sbin)" [ -n "$sbin" ]
check "the installed bird is bloombird" grep -q "bloombird" <<< "$("$sbin" --version 2>&1)"
check "birdc is installed beside it" [ -x "$(dirname "$sbin")/birdc" ]
finish
