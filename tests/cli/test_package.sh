#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The Debian package: dpkg-buildpackage -us -uc -b in a copy of the tree
# (without .git, build/ or build-san/: as from a source package), then the
# .deb unpacked into a scratch root with dpkg -x, not installed: its ktest
# runs, prints the plain VERSION, checks the packaged examples; its man pages
# render without a warning; its bash completion completes.
# About 25 s on 2 cores (the whole build, make -j2).
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
# not the make that runs the tests (make SAN=1 check): a package build of its own
unset MAKEFLAGS MFLAGS MAKELEVEL SAN O BIN

for t in dpkg-buildpackage dh dpkg-deb man groff; do
	check "$t is installed (sh .ci/deps.sh)" sh -c "command -v $t >/dev/null"
done

version=$(sed -n 's/^VERSION := //p' "$KTEST_SRC/Makefile")
work=$KTEST_TMP/pkg
src=$work/ktest-$version
root=$KTEST_TMP/root
mkdir -p "$src" "$root" || exit 1
tar -C "$KTEST_SRC" --exclude=./.git --exclude=./build --exclude=./build-san \
	--exclude=./ktest/ktest --exclude='*.o' --exclude=./debian/ktest \
	--exclude=./debian/.debhelper --exclude=./debian/files \
	-cf - . | tar -C "$src" -xf - || exit 1
check "the copy has no .git, no build output" \
	test ! -e "$src/.git" -a ! -e "$src/build" -a ! -e "$src/ktest/ktest"

start=$(date +%s)
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
	dpkg-buildpackage -us -uc -b) >build.log 2>&1
rc=$?
took=$(($(date +%s) - start))
echo "# dpkg-buildpackage took ${took}s"
expect_pkg_rc() {
	if [ "$rc" -eq 0 ]; then ok "$1"; else
		not_ok "$1 (exit $rc, see the log's tail)"
		tail -n 30 build.log | sed 's/^/# /'
	fi
}
expect_pkg_rc "dpkg-buildpackage -us -uc -b builds the package from the copy"
check "the build compiles without a warning" sh -c "! grep -q 'warning:' build.log"

deb=$(ls "$work"/ktest_"$version"_*.deb 2>/dev/null | head -n 1)
check "it makes ktest_${version}_ARCH.deb" test -f "$deb"
[ -f "$deb" ] || finish

check "its version is the Makefile's" \
	test "$(dpkg-deb -f "$deb" Version)" = "$version"
check "its Depends come from the libraries it links (shlibs)" sh -c \
	"dpkg-deb -f '$deb' Depends | grep -q libgit2 &&
	 dpkg-deb -f '$deb' Depends | grep -q libssh &&
	 dpkg-deb -f '$deb' Depends | grep -q libconfuse"
dpkg-deb -c "$deb" | awk '{ print $6 }' >contents
for f in ./usr/bin/ktest ./usr/share/man/man1/ktest.1.gz \
	./usr/share/man/man5/ktest.conf.5.gz \
	./usr/share/man/man5/ktest-native.5.gz \
	./usr/share/bash-completion/completions/ktest \
	./usr/share/doc/ktest/copyright \
	./usr/share/doc/ktest/examples/qemu-bisect.conf \
	./usr/share/doc/ktest/examples/native/qemu-bisect.ktest; do
	check "the package holds $f" grep -qx "$f" contents
done

check "dpkg -x unpacks it into a scratch root" dpkg -x "$deb" "$root"
bin=$root/usr/bin/ktest
"$bin" --version >out 2>err </dev/null
rc=$?
expect_rc 0 "the packaged ktest --version exits 0"
check "and prints the plain VERSION: no git describe without .git" \
	grep -qx "ktest $version" out
ex=$root/usr/share/doc/ktest/examples
for e in qemu-bisect.conf bisect.conf native/qemu-bisect.ktest; do
	"$bin" check "$ex/$e" >out 2>err </dev/null
	rc=$?
	expect_rc 0 "the packaged ktest checks the packaged example $e"
done

for m in man1/ktest.1.gz man5/ktest.conf.5.gz man5/ktest-native.5.gz; do
	MANWIDTH=80 man --warnings=w -l "$root/usr/share/man/$m" \
		>man.out 2>man.err
	if [ $? -eq 0 ] && [ ! -s man.err ] && [ -s man.out ]; then
		ok "man -l $m renders without a warning"
	else
		not_ok "man -l $m renders without a warning"
		sed 's/^/# /' man.err | head -n 10
	fi
done

comp=$root/usr/share/bash-completion/completions/ktest
bash -c ". '$comp'; COMP_WORDS=('$bin' -D BUILD_T); COMP_CWORD=2; _ktest;
	printf '%s\n' \"\${COMPREPLY[@]}\"" >comp.out 2>comp.err
check "the packaged completion completes option names after -D" sh -c \
	"grep -qx 'BUILD_TYPE=' comp.out && grep -qx 'BUILD_TARGET=' comp.out &&
	 test ! -s comp.err"

finish
