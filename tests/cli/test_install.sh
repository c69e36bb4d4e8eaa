#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# make install DESTDIR=... and make uninstall: the binary runs from where it
# lands, the man pages render without a warning, the examples check, the
# bash completion completes; uninstall leaves no file behind.
# Runs `make install` in a copy of what it reads (Makefile, dist/, doc/,
# examples/) with $KTEST as the binary: the tree and its builds are untouched.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
# not the make that runs the tests (make SAN=1 check): SAN=1 would pick its binary
unset MAKEFLAGS MFLAGS MAKELEVEL SAN O BIN

src=$KTEST_TMP/src
dest=$KTEST_TMP/root
mkdir -p "$src/ktest" "$dest" || exit 1
cp -R "$KTEST_SRC/Makefile" "$KTEST_SRC/dist" "$KTEST_SRC/doc" \
	"$KTEST_SRC/examples" "$src/" || exit 1
cp "$KTEST" "$src/ktest/ktest" || exit 1
version=$(sed -n 's/^VERSION := //p' "$KTEST_SRC/Makefile")

# -o: the binary is $KTEST as it is, never rebuilt
check "make install DESTDIR=... PREFIX=/usr succeeds" sh -c \
	"make -s -C '$src' -o ktest/ktest install DESTDIR='$dest' PREFIX=/usr \
		>'$KTEST_TMP/make.out' 2>&1"
sed 's/^/# /' "$KTEST_TMP/make.out" | head -n 20

bin=$dest/usr/bin/ktest
check "the binary is installed executable" test -x "$bin"
"$bin" --version >out 2>err </dev/null
rc=$?
expect_rc 0 "the installed ktest --version exits 0"
check "and prints the Makefile's VERSION ($version)" \
	grep -Eq "^ktest $version( \(git [0-9a-z.-]+\))?\$" out
# the Makefile asks git describe at build time, when there is a .git
if [ -e "$KTEST_SRC/.git" ] &&
	git -C "$KTEST_SRC" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	check "built in a git work tree, it names its git describe" \
		grep -q ' (git [0-9a-z.-]*)$' out
fi

ex=$dest/usr/share/doc/ktest/examples
check "the examples are installed" sh -c \
	"cd '$KTEST_SRC/examples' && find . -type f | sort > '$KTEST_TMP/ex.src' &&
	 cd '$ex' && find . -type f | sort | cmp -s - '$KTEST_TMP/ex.src'"
"$bin" check "$ex/qemu-bisect.conf" >out 2>err </dev/null
rc=$?
expect_rc 0 "the installed ktest checks an installed example"
"$bin" check "$ex/native/qemu-bisect.ktest" >out 2>err </dev/null
rc=$?
expect_rc 0 "and a native one"

for m in "$KTEST_SRC"/doc/*.1 "$KTEST_SRC"/doc/*.5; do
	n=$(basename "$m")
	page=$dest/usr/share/man/man${n##*.}/$n
	check "man page $n is installed" test -f "$page"
	MANWIDTH=80 man --warnings=w -l "$page" >man.out 2>man.err
	if [ $? -eq 0 ] && [ ! -s man.err ] && [ -s man.out ]; then
		ok "man -l $n renders without a warning"
	else
		not_ok "man -l $n renders without a warning"
		sed 's/^/# /' man.err | head -n 10
	fi
	groff -ww -z -man -Tutf8 "$page" >groff.err 2>&1
	check "groff -ww finds nothing to say about $n" test ! -s groff.err
done

# every command of --help is a heading in ktest(1)'s COMMANDS section
MANWIDTH=80 man -l "$dest/usr/share/man/man1/ktest.1" 2>/dev/null |
	sed -n '/^COMMANDS/,/^[A-Z]/p' >commands.man
"$bin" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
	on { print $1 }' >commands.help
check "ktest --help lists commands" test -s commands.help
for c in $(cat commands.help); do
	check "ktest(1) has a COMMANDS entry for '$c'" \
		grep -Eq "^       $c( |\$)" commands.man
done

comp=$dest/usr/share/bash-completion/completions/ktest
check "the bash completion is installed" test -f "$comp"
if command -v bash >/dev/null; then
	bash -c ". '$comp'; COMP_WORDS=('$bin' ch); COMP_CWORD=1; _ktest;
		echo \"\${COMPREPLY[*]}\"; complete -p ktest" >comp.out 2>comp.err
	check "it completes the installed ktest's commands" \
		grep -qx 'check' comp.out
	check "and registers itself for ktest" grep -q -- '-F _ktest ktest$' comp.out
	check "and says nothing on stderr" test ! -s comp.err
fi

check "make uninstall succeeds" sh -c \
	"make -s -C '$src' -o ktest/ktest uninstall DESTDIR='$dest' PREFIX=/usr \
		>'$KTEST_TMP/make.out' 2>&1"
find "$dest" ! -type d >left
check "make uninstall removes every file make install put there" test ! -s left
sed 's/^/# left: /' left | head -n 10

finish
