# The distribution layer's bad input and install: a corrupted tarball or one
# of another release is refused naming the sums; an unknown release is
# refused listing the supported ones; a patch that does not apply stops the
# build naming it; ./configure names the apt-get line for a missing tool;
# make install honours DESTDIR.
. "$(dirname "$0")/../lib.sh"
V=$(cat "$tree/VERSION")
tarball=$top/upstream/bird2_$V.tarball
pins=$(sed -e 's/#.*//' "$top/bird-patches/upstream-versions" | awk -v v="$V" '$1 == v')
read -r _ debver debname debsha tagname tagsha <<< "$pins"
echo "BIRD $V: $pins"

# A corrupted copy of the real tarball
cp "$tarball" "$WORK/bad.tar"
printf 'x' | dd of="$WORK/bad.tar" bs=1 seek=1000 conv=notrunc 2>/dev/null
got=$(sha256sum "$WORK/bad.tar" | cut -d' ' -f1)
fetch() { "$top/tools/fetch-upstream" "$WORK/out/bird2_$V.tarball" "$V" "$debver" "$debname" "$debsha" "$tagname" "$tagsha" http://deb.debian.org/debian - "$@"; }
out=$(fetch "$WORK/bad.tar" 2>&1); rc=$?
echo "$out"
check "corrupted tarball is refused" [ "$rc" != 0 ]
check "the error names the expected sha256" grep -q "expected: $tagsha" <<< "$out"
check "the error names the actual sha256" grep -q "actual:   $got" <<< "$out"
check "nothing is left under the tarball's name" [ ! -e "$WORK/out/bird2_$V.tarball" ]

# A good tarball of another release is refused as well, naming the sums
other=$(ls "$top"/../shared/upstream/bird2_*.orig.tar.gz 2>/dev/null | grep -v "bird2_$V.orig" | head -1)
if [ -n "$other" ]; then
  out=$(fetch "$other" 2>&1); rc=$?
  echo "$out"
  check "the tarball of another release ($(basename "$other")) is refused" [ "$rc" != 0 ]
  check "  naming the expected and the found sha256" grep -q "actual:   $(sha256sum "$other" | cut -d' ' -f1)" <<< "$out"
fi
# ... and unpack-tree refuses a tree of another release by its VERSION
mkdir -p "$WORK/fake/bird2-0.0.1" && echo 0.0.1 > "$WORK/fake/bird2-0.0.1/VERSION" && tar -czf "$WORK/fake.tar.gz" -C "$WORK/fake" bird2-0.0.1
out=$("$top/tools/unpack-tree" "$WORK/fake.tar.gz" "$WORK/fake-tree" "$V" 2>&1); rc=$?
echo "$out"
check "unpack-tree refuses a tarball of another release" [ "$rc" != 0 ]
check "  naming both versions" grep -q "holds BIRD 0.0.1, expected $V" <<< "$out"
check "  and leaves no tree" [ ! -e "$WORK/fake-tree" ]

# ./configure --with-bird-tarball: a good local copy is accepted, a missing one is not
(cd "$WORK" && mkdir cfg && cd cfg && cp -r "$top/configure.ac" "$top/Makefile.in" "$top/bird-patches" "$top/tools" "$top/nest" "$top/sysdep" "$top/proto" . && \
  autoconf && ./configure --with-bird-version="$V" --with-bird-tarball="$tarball" > conf.out 2>&1)
check "configure accepts --with-bird-tarball with a local copy" grep -q "upstream tarball:  $tarball" "$WORK/cfg/conf.out"
out=$(cd "$WORK/cfg" && ./configure --with-bird-tarball=/nonexistent 2>&1)
check "configure refuses a missing --with-bird-tarball" grep -q "no such file: /nonexistent" <<< "$out"
out=$(cd "$WORK/cfg" && ./configure --with-bird-version=2.16.9 2>&1); rc=$?
echo "$out" | tail -1
check "configure refuses an unknown --with-bird-version" [ "$rc" != 0 ]
check "  listing the supported releases" grep -q "not a supported upstream release; supported: $(sed -e 's/#.*//' "$top/bird-patches/upstream-versions" | awk 'NF { printf "%s ", $1 }' | sed 's/ $//')" <<< "$out"

# A patch that no longer applies: the build stops at it, naming it, and
# builds nothing from the half-patched tree
cp -r "$WORK/cfg" "$WORK/np" && rm -rf "$WORK/np/build"
(cd "$WORK/np" && ./configure --with-bird-version="$V" --with-bird-tarball="$tarball" > /dev/null 2>&1)
sed -i '0,/^-.*VERSION :=/s//-THIS LINE IS NOT IN BIRD VERSION :=/' "$WORK/np/bird-patches/bloombird-version.patch"
out=$(make -C "$WORK/np" bird 2>&1); rc=$?
echo "$out" | tail -3
check "a patch that does not apply stops the build" [ "$rc" != 0 ]
check "  naming the patch" grep -q "bloombird-version.patch does not apply to BIRD $V" <<< "$out"
check "  and nothing is built" test ! -e "$WORK/np/build/bin/bird" -a ! -e "$WORK/np/build/bird-$V/config.status"

# BIRD's options with spaces reach BIRD's configure as one argument, for the
# patched and the stock tree, given on the command line or in the environment
(cd "$WORK/cfg" && ./configure --with-bird-version="$V" --with-bird-tarball="$tarball" CFLAGS="-O1 -g" > conf.sp 2>&1)
check "configure accepts CFLAGS=\"-O1 -g\"" grep -q "BIRD configure: *'CFLAGS=-O1 -g'" "$WORK/cfg/conf.sp"
make -s -C "$WORK/cfg" "$WORK/cfg/build/bird-$V/config.status" "$WORK/cfg/build/stock/bird-$V/config.status" > "$WORK/sp.out" 2>&1
tail -3 "$WORK/sp.out"
for t in bird-$V stock/bird-$V; do
  check "$t: BIRD's configure got CFLAGS '-O1 -g' as one option" grep -q "^CFLAGS=.*-O1 -g" "$WORK/cfg/build/$t/Makefile"
done
(cd "$WORK/cfg" && CFLAGS="-O1 -g" ./configure --with-bird-version="$V" --with-bird-tarball="$tarball" > conf.env 2>&1)
check "CFLAGS=\"-O1 -g\" ./configure (environment) passes the flags as one option" grep -q "BIRD configure: *'CFLAGS=-O1 -g'" "$WORK/cfg/conf.env"
make -s -C "$WORK/cfg" "$WORK/cfg/build/stock/bird-$V/config.status" > "$WORK/sp2.out" 2>&1
check "stock tree reconfigured from the environment form" grep -q "^CFLAGS=.*-O1 -g" "$WORK/cfg/build/stock/bird-$V/Makefile"

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

# The programmer's documentation (make progdocs) carries every DOC: section
# of our files: BIRD's progdoc run on the patched tree, each title found
if command -v perl >/dev/null; then
  (cd "$tree" && tools/progdoc . "$WORK/prog.sgml") > "$WORK/progdoc.log" 2>&1
  missing=0 titles=0
  for f in $(cd "$top" && grep -l 'DOC:' nest/*.c proto/lpm/*.c sysdep/*/*.c); do
    while read -r t; do
      titles=$((titles + 1))
      grep -qF "<sect>$t" "$WORK/prog.sgml" || { echo "  not in prog.sgml: $f: $t"; missing=$((missing + 1)); }
    done < <(sed -n 's/^ \* DOC: //p' "$top/$f")
  done
  echo "  $titles DOC: sections of ours, $missing missing from prog.sgml"
  check "the programmer's documentation has all our DOC: sections ($titles)" [ "$titles" -gt 20 -a "$missing" = 0 ]
fi
finish
