#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The kernel lab: a real Linux source tree for the tests, prepared once per
# machine and shared by every test that builds or boots a kernel.
#
#   kernel.sh tree        prints the path of the prepared tree: Debian's
#                         linux-source-6.1 tarball extracted, made a git
#                         repository with one commit, tagged vX.Y.Z (so
#                         kernelrelease has no "+"). Prepared on first use,
#                         again when the tarball changes. READ-ONLY: build
#                         with O= elsewhere; to change files, use "copy".
#   kernel.sh copy DIR    a private copy of the tree's files (no .git) in
#                         DIR, made of hard links when DIR is on the lab's
#                         file system (seconds instead of a minute): such a
#                         file must be REPLACED (write elsewhere, mv over),
#                         never edited in place, or the shared tree changes.
#   kernel.sh config DIR  writes DIR/lab.config, the settings a qemu serial
#                         boot needs on top of tinyconfig, usable as
#                         MIN_CONFIG with BUILD_TYPE=tinyconfig; prints it.
#                         It also has what the boot tests crash the kernel
#                         with (LKDTM through debugfs) and what makes crash
#                         reports readable (symbols, printk times).
#   kernel.sh make [BASE] prints a MAKE_CMD: make with ccache when it is
#                         installed, its cache in the lab; BASE (a directory
#                         holding both the source and O= trees) lets ccache
#                         hit across differently-named temp directories
#                         (the tests put the source in BASE/linux and O= in
#                         BASE/out, so they all hit each other's entries).
#
# Environment: KTEST_LAB (default /var/tmp/ktest-lab) holds everything;
# KTEST_LAB_TARBALL (default /usr/src/linux-source-6.1.tar.xz).
# Two runs racing on a fresh machine are serialised with flock(1): one
# prepares, the other waits and reuses.
set -eu

lab=${KTEST_LAB:-/var/tmp/ktest-lab}
tarball=${KTEST_LAB_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
# Bump when the recipe below changes, so old caches are rebuilt.
recipe=1

die() {
	echo "kernel.sh: $*" >&2
	exit 1
}

log() {
	echo "kernel.sh: $*" >&2
}

# What identifies the tarball: a change of any of these rebuilds the tree.
stamp() {
	echo "recipe $recipe $(stat -L -c '%s %Y %i' "$tarball") $tarball"
}

# Extracts and commits into $lab/linux.new, then moves it into place.
prepare() {
	new=$lab/linux.new
	rm -rf "$new" "$lab/linux"
	mkdir -p "$new"
	log "extracting $tarball into $lab/linux (once per machine, ~15 s)"
	tar -xJf "$tarball" -C "$new" --strip-components=1 ||
		die "cannot extract $tarball"
	# Debian's tarball ignores everything at the top level (its packaging
	# rule "/*" in .gitignore): drop that block so the tree behaves like a
	# kernel.org clone, and force-add in case other rules match shipped files.
	sed -i '/^# Debian packaging/,/^!\/debian\/$/d' "$new/.gitignore"
	log "committing the tree to git (~30 s)"
	version=$(make -s --no-print-directory -C "$new" kernelversion) ||
		die "cannot read the kernel version of $new"
	(
		cd "$new"
		export GIT_AUTHOR_NAME="ktest lab" GIT_AUTHOR_EMAIL=lab@ktest.invalid
		export GIT_COMMITTER_NAME="ktest lab" GIT_COMMITTER_EMAIL=lab@ktest.invalid
		# a fixed date: the same tarball gives the same commit id
		export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z"
		export GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
		git init -q
		# hard-linked copies change ctimes; mtime and size still tell
		git config core.trustctime false
		# 80k loose objects would start a repack of the whole tree in
		# the background (minutes of CPU and disk) after the commit
		git config gc.auto 0
		git config maintenance.auto false
		git -c core.looseCompression=1 add -A -f .
		git commit -q -m "Linux $version (Debian linux-source-6.1)"
		git tag -a -m "Linux $version" "v$version"
	) || die "cannot make $new a git repository"
	mv "$new" "$lab/linux"
}

# A tree that someone edited in place (through a hard link) is put back.
repair() {
	if [ -n "$(git -C "$lab/linux" --no-optional-locks status --porcelain 2>/dev/null | head -n 1)" ]; then
		log "the shared tree $lab/linux was modified; restoring it"
		git -C "$lab/linux" reset -q --hard
		git -C "$lab/linux" clean -q -fdx
	fi
}

cmd_tree() {
	[ -f "$tarball" ] ||
		die "$tarball is missing: apt-get install linux-source-6.1"
	mkdir -p "$lab"
	exec 9>"$lab/lock"
	flock 9
	want=$(stamp)
	if [ -d "$lab/linux/.git" ] && [ -f "$lab/linux.stamp" ] &&
		[ "$(cat "$lab/linux.stamp")" = "$want" ]; then
		repair
	else
		rm -f "$lab/linux.stamp"
		prepare
		echo "$want" >"$lab/linux.stamp"
	fi
	exec 9>&-
	echo "$lab/linux"
}

cmd_copy() {
	[ $# -eq 1 ] || die "usage: kernel.sh copy DIR"
	src=$(cmd_tree)
	dst=$1
	# cp over existing files would write through hard links into the tree
	if [ -e "$dst" ] && [ -n "$(ls -A "$dst")" ]; then
		die "copy: $dst is not empty"
	fi
	mkdir -p "$dst"
	# every top-level entry but .git
	for f in "$src"/* "$src"/.[!.]*; do
		[ -e "$f" ] || continue
		[ "$(basename "$f")" = .git ] && continue
		cp -al "$f" "$dst/" 2>/dev/null || cp -a "$f" "$dst/" ||
			die "cannot copy $f to $dst"
	done
	echo "$dst"
}

cmd_config() {
	[ $# -eq 1 ] || die "usage: kernel.sh config DIR"
	mkdir -p "$1"
	out=$1/lab.config
	cat >"$out" <<'EOF'
# ktest lab: on top of tinyconfig, what a qemu-system-x86_64 boot with a
# serial console (console=ttyS0) and a gzip'ed busybox initramfs needs.
CONFIG_64BIT=y
CONFIG_PRINTK=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_RD_GZIP=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_DEVTMPFS=y
CONFIG_DEVTMPFS_MOUNT=y
CONFIG_PROC_FS=y
CONFIG_SYSFS=y
# crash reports as on a distribution kernel: timestamps, symbols in call
# traces, BUG() and WARN() that print
CONFIG_PRINTK_TIME=y
CONFIG_KALLSYMS=y
CONFIG_BUG=y
# the boot tests' crashes (tests/lab/initramfs.sh, ktest.mode=oops, warning):
# echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT
CONFIG_DEBUG_FS=y
CONFIG_RUNTIME_TESTING_MENU=y
CONFIG_LKDTM=y
EOF
	echo "$out"
}

cmd_make() {
	if ! command -v ccache >/dev/null 2>&1; then
		echo make
		return
	fi
	mkdir -p "$lab/ccache-v2"
	# Not CCACHE_DEPEND: without the preprocessor ccache cannot see
	# the assembler's .incbin, and arch/x86/boot/compressed/piggy.S
	# pulls the compressed kernel in with it: depend mode handed back
	# an old piggy.o, so a fresh bzImage booted an earlier kernel.
	# (A new directory: the old cache holds such entries.)
	env="CCACHE_DIR=$lab/ccache-v2"
	[ $# -ge 1 ] && env="$env CCACHE_BASEDIR=$1"
	echo "$env make CC='ccache gcc' HOSTCC='ccache gcc'"
}

[ $# -ge 1 ] || die "usage: kernel.sh tree | copy DIR | config DIR | make [BASE]"
what=$1
shift
case $what in
tree) cmd_tree ;;
copy) cmd_copy "$@" ;;
config) cmd_config "$@" ;;
make) cmd_make "$@" ;;
*) die "unknown command '$what' (tree, copy, config, make)" ;;
esac
