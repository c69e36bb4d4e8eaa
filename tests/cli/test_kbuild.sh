#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The kernel lab fixture (tests/lab/kernel.sh): against a small fake tarball
# (every rule: caching, the lock, rebuilding on a new tarball, repair, copy,
# config, make), then the real tree that test_kbuild_real prepared and built.
. "$(dirname "$0")/../lib.sh"

lab_sh=$KTEST_SRC/tests/lab/kernel.sh
fake=$KTEST_TMP/fake
tarball=$KTEST_TMP/linux-source-6.1.tar.xz

# A tarball shaped like Debian's: one top directory, the ignore-all rule.
make_tarball() {
	rm -rf "$fake"
	mkdir -p "$fake/linux-source-6.1/init"
	cat >"$fake/linux-source-6.1/Makefile" <<'EOF'
VERSION = 6
PATCHLEVEL = 1
SUBLEVEL = $(SUB)
SUB = 99
kernelversion:
	@echo $(VERSION).$(PATCHLEVEL).$(SUBLEVEL)
EOF
	printf '.*\n*.o\n#\n# Debian packaging: ignore everything at the top level, since it isn'"'"'t\n# included in our repository\n#\n/*\n!/debian/\n' \
		>"$fake/linux-source-6.1/.gitignore"
	echo "int main;" >"$fake/linux-source-6.1/init/main.c"
	echo "$1" >"$fake/linux-source-6.1/init/version.c"
	echo "style" >"$fake/linux-source-6.1/.clang-format"
	tar -cJf "$tarball" -C "$fake" linux-source-6.1
}

lab() {
	KTEST_LAB=$KTEST_TMP/lab KTEST_LAB_TARBALL=$tarball sh "$lab_sh" "$@"
}

make_tarball one
out=$(lab tree 2>"$KTEST_TMP/err1")
check "tree prints the tree's path" [ "$out" = "$KTEST_TMP/lab/linux" ]
check "the tree is extracted" [ -f "$out/init/main.c" ]
check "it is a git repository with one commit" \
	[ "$(git -C "$out" rev-list --count HEAD 2>/dev/null)" = 1 ]
check "the commit is tagged with the kernel version" \
	[ "$(git -C "$out" describe --exact-match 2>/dev/null)" = v6.1.99 ]
check "the work tree is clean" [ -z "$(git -C "$out" status --porcelain)" ]
no_ignore_all() { ! grep -q '^/\*$' "$out/.gitignore"; }
check "Debian's ignore-all rule is gone" no_ignore_all
check "files matching other ignore rules are tracked (.clang-format)" \
	[ -n "$(git -C "$out" ls-files .clang-format)" ]
check "no repack runs behind our back (gc.auto 0)" \
	[ "$(git -C "$out" config gc.auto)" = 0 ]
id1=$(git -C "$out" rev-parse HEAD)

start=$(date +%s)
out2=$(lab tree 2>"$KTEST_TMP/err2")
reused() { [ "$out2" = "$out" ] && ! grep -q extracting "$KTEST_TMP/err2"; }
check "a second call reuses the tree" reused
check "and is quick" [ $(($(date +%s) - start)) -le 5 ]

# edited in place (as through a hard link): put back, with a warning
echo "oops" >>"$out/init/main.c"
touch "$out/stray.o.txt"
lab tree >/dev/null 2>"$KTEST_TMP/err3"
restored() { [ "$(cat "$out/init/main.c")" = "int main;" ] && [ ! -e "$out/stray.o.txt" ]; }
check "a modified shared tree is restored" restored
check "and says so" grep -q "was modified" "$KTEST_TMP/err3"

# a new tarball: a new tree
sleep 1
make_tarball two
lab tree >/dev/null 2>"$KTEST_TMP/err4"
check "a changed tarball rebuilds the tree" grep -q extracting "$KTEST_TMP/err4"
check "with the new content" [ "$(cat "$out/init/version.c")" = two ]

# the same tarball gives the same commit (fixed dates)
make_tarball one
touch -d '2020-01-01' "$tarball"
lab tree >/dev/null 2>&1
check "the same content gives the same commit id" \
	[ "$(git -C "$out" rev-parse HEAD)" = "$id1" ]

# two runs racing on a fresh lab: one prepares, the other waits
rm -rf "$KTEST_TMP/lab"
lab tree >"$KTEST_TMP/race1" 2>"$KTEST_TMP/race1.err" &
p1=$!
lab tree >"$KTEST_TMP/race2" 2>"$KTEST_TMP/race2.err" &
p2=$!
wait $p1
r1=$?
wait $p2
r2=$?
check "two racing runs both succeed" [ $((r1 + r2)) -eq 0 ]
check "and print the same tree" cmp -s "$KTEST_TMP/race1" "$KTEST_TMP/race2"
check "which was prepared once" \
	[ "$(cat "$KTEST_TMP/race1.err" "$KTEST_TMP/race2.err" | grep -c extracting)" = 1 ]
check "and is whole" [ "$(git -C "$out" rev-list --count HEAD)" = 1 ]

# copy: hard links, no .git, never over existing files
lab copy "$KTEST_TMP/copy" >/dev/null 2>&1
copied() { [ -f "$KTEST_TMP/copy/init/main.c" ] && [ -f "$KTEST_TMP/copy/.clang-format" ]; }
check "copy makes the files" copied
check "copy leaves .git out" [ ! -e "$KTEST_TMP/copy/.git" ]
check "copy uses hard links" \
	[ "$(stat -c %i "$KTEST_TMP/copy/init/main.c")" = "$(stat -c %i "$out/init/main.c")" ]
lab copy "$KTEST_TMP/copy" >/dev/null 2>&1
check "copy refuses a directory with files" [ $? -ne 0 ]

# config: the fragment for a qemu serial boot
frag=$(lab config "$KTEST_TMP/cfg")
check "config writes DIR/lab.config" [ "$frag" = "$KTEST_TMP/cfg/lab.config" ]
for o in 64BIT PRINTK TTY SERIAL_8250 SERIAL_8250_CONSOLE BLK_DEV_INITRD \
	RD_GZIP BINFMT_ELF BINFMT_SCRIPT DEVTMPFS DEVTMPFS_MOUNT PROC_FS SYSFS \
	PRINTK_TIME KALLSYMS BUG DEBUG_FS RUNTIME_TESTING_MENU LKDTM; do
	grep -qx "CONFIG_$o=y" "$frag" || not_ok "lab.config sets CONFIG_$o=y"
done
check "lab.config has the 19 options" [ "$(grep -c '^CONFIG_.*=y$' "$frag")" = 19 ]

mk=$(lab make)
if command -v ccache >/dev/null 2>&1; then
	with_ccache() { case $mk in *"CC='ccache gcc'"*) true ;; *) false ;; esac; }
	check "make uses ccache when installed" with_ccache
else
	check "make is plain make without ccache" [ "$mk" = make ]
fi

KTEST_LAB=$KTEST_TMP/lab KTEST_LAB_TARBALL=$KTEST_TMP/none.tar.xz \
	sh "$lab_sh" tree >/dev/null 2>"$KTEST_TMP/err5"
check "a missing tarball fails" [ $? -ne 0 ]
check "and says how to get it" grep -q "apt-get install linux-source-6.1" "$KTEST_TMP/err5"
sh "$lab_sh" nonsense >/dev/null 2>&1
check "an unknown command fails" [ $? -ne 0 ]

# the real tree, as test_kbuild_real left it (or prepared now)
real=$(sh "$lab_sh" tree 2>/dev/null)
ready() { [ -f "$real/Makefile" ] && [ -d "$real/.git" ]; }
check "the real lab tree is ready" ready
check "the real lab tree has one commit" [ "$(git -C "$real" rev-list --count HEAD)" = 1 ]
tagged() { case $(git -C "$real" describe --exact-match) in v6.1.*) true ;; *) false ;; esac; }
check "the real lab tree is tagged v6.1.*" tagged
check "the real lab tree is clean" \
	[ -z "$(git -C "$real" --no-optional-locks status --porcelain)" ]

finish
