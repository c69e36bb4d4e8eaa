#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The end-to-end lab's kernel history: the lab tree (kernel.sh tree) cloned
# into its own git work tree, with a synthetic series of 32 commits on top,
# each a real change to the kernel that rebuilds one file (lib/ktest_lab.c):
#
#   s1        adds lib/ktest_lab.c: a late initcall that prints its step
#   s2..s31   each bumps the step number, except:
#   s8        a build break (a missing semicolon), s9 still broken ...
#   s10       ... fixed
#   s13       adds a compiler warning (an unused variable) in lib/ktest_lab.c
#   s18       a boot regression: a NULL pointer write in the initcall (an
#             Oops with a call trace, then "Attempted to kill init")
#   s24       ... fixed
#   s27       adds the Kconfig option KTEST_LAB_BREAK (default n): when it
#             is enabled, the initcall panics ("ktest lab: KTEST_LAB_BREAK")
#   s32       the last one
#
# Commits have fixed authors and dates: the same lab tree gives the same ids
# on every machine.
#
#   series.sh tree    prints the work tree (prepared once; reset to s32 and
#                     cleaned on every call, so tests may check out freely)
#   series.sh config  prints the path of a whole .config for the series:
#                     tinyconfig plus the lab fragment (kernel.sh config),
#                     made once (again when the fragment changes); use it
#                     as MIN_CONFIG / useconfig:
#   series.sh badconfig
#                     prints the path of a bad whole .config for config
#                     bisecting (bad.config): the config above made again
#                     at the tip (s32, which has KTEST_LAB_BREAK), plus
#                     CONFIG_KTEST_LAB_BREAK=y, plus 25 harmless option
#                     changes (harmless_frag below) that build and boot;
#                     made once (again when full.config or the list
#                     changes), with harmless.config (the same without
#                     KTEST_LAB_BREAK: boots, a START_MIN_CONFIG) and
#                     bad.config.diff (scripts/diffconfig full -> bad)
#   series.sh harmlessconfig
#                     the same, prints the path of harmless.config
#   series.sh flaky   makes (once) and prints shell assignments for a flaky
#                     history on top of s32, for the benchmark's flaky bisect:
#                     f1..f16 each bump the step; from f6 on, the initcall
#                     makes the same NULL pointer write as s18 in about half
#                     the boots (when get_random_u32() is odd). FLAKY_GOOD
#                     (s32), FLAKY_BAD (f16), FLAKY_CULPRIT (f6); the
#                     commits are tagged f1..f16 off every branch
#   series.sh env     prints shell assignments: SERIES_TREE, SERIES_BASE (the
#                     lab commit), S1..S32, the roles BUILD_BREAK,
#                     BUILD_FIX, WARNING, BOOT_BREAK, BOOT_FIX, KCONFIG_BREAK,
#                     and the config files' paths FULL_CONFIG,
#                     HARMLESS_CONFIG, BAD_CONFIG (made by the commands
#                     above, not by env)
#
# Environment: KTEST_LAB as kernel.sh.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
lab=${KTEST_LAB:-/var/tmp/ktest-lab}
dir=$lab/e2e
recipe=2

die() {
	echo "series.sh: $*" >&2
	exit 1
}

log() {
	echo "series.sh: $*" >&2
}

lab_c() {
	step=$1
	extra=$2
	cat <<EOF
// SPDX-License-Identifier: GPL-2.0-only
/* The ktest lab's synthetic series (tests/lab/series.sh). */
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/printk.h>

static int ktest_lab_step = $step;

static int __init ktest_lab_init(void)
{
$extra
	pr_info("ktest lab: step %d\\n", ktest_lab_step);
	return 0;
}
late_initcall(ktest_lab_init);
EOF
}

# The body of the initcall for step n
extra_for() {
	n=$1
	e=""
	if [ "$n" -ge 13 ]; then
		e="$e	int ktest_lab_unused;
"
	fi
	if [ "$n" -ge 18 ] && [ "$n" -lt 24 ]; then
		e="$e	*(volatile int *)0 = ktest_lab_step;	/* the boot regression */
"
	fi
	if [ "$n" -ge 27 ]; then
		e="$e#ifdef CONFIG_KTEST_LAB_BREAK
	panic(\"ktest lab: KTEST_LAB_BREAK is set\");
#endif
"
	fi
	printf '%s' "$e"
}

commit() {
	n=$1
	msg=$2
	date="2024-02-01T00:$(printf %02d "$((n / 60))"):$(printf %02d "$((n % 60))")Z"
	GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
		git -C "$new" commit -q -a -m "$msg"
	git -C "$new" tag "s$n"
}

prepare() {
	base_tree=$(sh "$here/kernel.sh" tree)
	new=$dir/linux.new
	rm -rf "$new" "$dir/linux"
	mkdir -p "$dir"
	log "cloning the lab tree into $dir/linux (once per machine, ~1 min)"
	git clone -q --shared "$base_tree" "$new" || die "cannot clone $base_tree"
	git -C "$new" config gc.auto 0
	git -C "$new" config maintenance.auto false
	git -C "$new" config core.trustctime false
	export GIT_AUTHOR_NAME="ktest lab" GIT_AUTHOR_EMAIL=lab@ktest.invalid
	export GIT_COMMITTER_NAME="ktest lab" GIT_COMMITTER_EMAIL=lab@ktest.invalid
	git -C "$new" checkout -q -b series
	git -C "$new" tag series-base
	for n in $(seq 1 32); do
		lab_c "$n" "$(extra_for "$n")" >"$new/lib/ktest_lab.c"
		if [ "$n" -ge 8 ] && [ "$n" -lt 10 ]; then
			# the build break: a missing semicolon
			sed -i "s/^static int ktest_lab_step = $n;/static int ktest_lab_step = $n/" \
				"$new/lib/ktest_lab.c"
		fi
		case $n in
		1)
			echo 'obj-y += ktest_lab.o' >>"$new/lib/Makefile"
			git -C "$new" add lib/ktest_lab.c
			commit 1 "lib: add the ktest lab initcall (s1)" ;;
		8) commit 8 "lib: ktest lab step 8, which breaks the build (s8)" ;;
		10) commit 10 "lib: ktest lab step 10, fixing the build (s10)" ;;
		13) commit 13 "lib: ktest lab step 13, with a new warning (s13)" ;;
		18) commit 18 "lib: ktest lab step 18, which breaks the boot (s18)" ;;
		24) commit 24 "lib: ktest lab step 24, fixing the boot (s24)" ;;
		27)
			cat >>"$new/lib/Kconfig" <<'EOF'

config KTEST_LAB_BREAK
	bool "ktest lab: break the boot"
	default n
	help
	  The ktest lab's bad config option: the kernel panics at boot.
EOF
			commit 27 "lib: ktest lab step 27, adding KTEST_LAB_BREAK (s27)" ;;
		*) commit "$n" "lib: ktest lab step $n (s$n)" ;;
		esac
	done
	mv "$new" "$dir/linux"
}

stamp() {
	echo "recipe $recipe base $(git -C "$(sh "$here/kernel.sh" tree)" rev-parse HEAD)"
}

cmd_tree() {
	mkdir -p "$dir"
	exec 8>"$dir/lock"
	flock 8
	want=$(stamp)
	if [ -d "$dir/linux/.git" ] && [ -f "$dir/stamp" ] &&
		[ "$(cat "$dir/stamp")" = "$want" ]; then
		git -C "$dir/linux" checkout -q -f series
		git -C "$dir/linux" reset -q --hard s32
		git -C "$dir/linux" clean -q -fdx
	else
		rm -f "$dir/stamp"
		prepare
		echo "$want" >"$dir/stamp"
	fi
	exec 8>&-
	echo "$dir/linux"
}

cmd_env() {
	t=$(cmd_tree)
	echo "SERIES_TREE=$t"
	echo "SERIES_BASE=$(git -C "$t" rev-parse series-base)"
	for n in $(seq 1 32); do
		echo "S$n=$(git -C "$t" rev-parse "s$n^{commit}")"
	done
	echo "BUILD_BREAK=\$S8 BUILD_FIX=\$S10 WARNING=\$S13"
	echo "BOOT_BREAK=\$S18 BOOT_FIX=\$S24 KCONFIG_BREAK=\$S27"
	echo "FULL_CONFIG=$dir/full.config"
	echo "HARMLESS_CONFIG=$dir/harmless.config"
	echo "BAD_CONFIG=$dir/bad.config"
}

cmd_config() {
	t=$(cmd_tree)
	frag=$(sh "$here/kernel.sh" config "$dir")
	full=$dir/full.config
	exec 8>"$dir/config.lock"
	flock 8
	if [ ! -s "$full" ] || ! cmp -s "$frag" "$full.frag"; then
		cfg=$dir/out-config
		rm -rf "$cfg"
		mkdir -p "$cfg"
		git -C "$t" checkout -q -f series-base
		make -s -C "$t" O="$cfg" tinyconfig >/dev/null 2>&1 &&
		cat "$frag" >>"$cfg/.config" &&
		make -s -C "$t" O="$cfg" olddefconfig >/dev/null 2>&1 &&
		cp "$cfg/.config" "$full.new" && mv "$full.new" "$full" &&
		cp "$frag" "$full.frag" ||
			die "cannot make $full (make tinyconfig in $t failed)"
		rm -rf "$cfg"
		git -C "$t" checkout -q -f series
	fi
	exec 8>&-
	echo "$full"
}

# The harmless changes of bad.config: each survives olddefconfig on the
# lab's tinyconfig (checked when the configs are made), builds in a few
# files (no option a widely included header tests: an incremental build
# stays short) and leaves the box booting. Some are only visible when
# another one is on (IKCONFIG_PROC and IKCONFIG; the MAGIC_SYSRQ_ chain,
# whose SERIAL_SEQUENCE needs MAGIC_SYSRQ_SERIAL, which MAGIC_SYSRQ turns
# on by default); some bring one-sided changes with them (FHANDLE selects
# EXPORTFS; RD_BZIP2 and RD_LZ4 off drop their DECOMPRESS_ symbols);
# values of every kind: bool both ways, int, hex and string.
harmless_frag() {
	cat <<'EOF'
CONFIG_IKCONFIG=y
CONFIG_IKCONFIG_PROC=y
CONFIG_MAGIC_SYSRQ=y
CONFIG_MAGIC_SYSRQ_DEFAULT_ENABLE=0x1
CONFIG_MAGIC_SYSRQ_SERIAL_SEQUENCE="ktest"
CONFIG_SIGNALFD=y
CONFIG_SGETMASK_SYSCALL=y
CONFIG_SYSFS_SYSCALL=y
CONFIG_FHANDLE=y
CONFIG_KCMP=y
CONFIG_PROC_CHILDREN=y
CONFIG_CRC16=y
CONFIG_CRC_CCITT=y
CONFIG_CRC_ITU_T=y
CONFIG_CRC4=y
CONFIG_CRC7=y
CONFIG_CRC8=y
CONFIG_CRC64=y
CONFIG_CRC32_SELFTEST=y
CONFIG_LOG_BUF_SHIFT=16
CONFIG_DEFAULT_HOSTNAME="ktest-lab"
CONFIG_BOOT_PRINTK_DELAY=y
CONFIG_STRIP_ASM_SYMS=y
# CONFIG_RD_BZIP2 is not set
# CONFIG_RD_LZ4 is not set
EOF
}

# olddefconfig of IN plus FRAG (files) in the tree T at the tip, into OUT;
# every line of FRAG must be in the result as written
olddef() {
	cat "$1" "$2" >"$cfg/.config" &&
		make -s -C "$t" O="$cfg" olddefconfig >/dev/null 2>&1 ||
		die "make olddefconfig in $t failed (for $3)"
	while IFS= read -r l; do
		grep -qxF "$l" "$cfg/.config" ||
			die "'$l' does not survive make olddefconfig (for $3)"
	done <"$2"
	cp "$cfg/.config" "$3"
}

cmd_badconfig() {
	full=$(cmd_config)
	t=$dir/linux
	bad=$dir/bad.config
	harmless=$dir/harmless.config
	exec 8>"$dir/config.lock"
	flock 8
	want=$( (echo "badconfig recipe $recipe"; cat "$full"; harmless_frag) | sha256sum)
	if [ ! -s "$bad" ] || [ ! -s "$harmless" ] || [ ! -f "$bad.stamp" ] ||
		[ "$(cat "$bad.stamp")" != "$want" ]; then
		rm -f "$bad.stamp"
		cfg=$dir/out-badconfig
		rm -rf "$cfg"
		mkdir -p "$cfg"
		# series.sh tree left the tree at the tip: the good config as
		# made there has "# CONFIG_KTEST_LAB_BREAK is not set"
		: >"$cfg/empty"
		harmless_frag >"$cfg/harmless.frag"
		echo CONFIG_KTEST_LAB_BREAK=y >"$cfg/break.frag"
		olddef "$full" "$cfg/empty" "$cfg/good" &&
		olddef "$cfg/good" "$cfg/harmless.frag" "$cfg/harmless" &&
		olddef "$cfg/harmless" "$cfg/break.frag" "$cfg/bad" &&
		"$t/scripts/diffconfig" "$full" "$cfg/bad" >"$cfg/diff" ||
			die "cannot make $bad"
		mv "$cfg/harmless" "$harmless"
		mv "$cfg/diff" "$bad.diff"
		mv "$cfg/bad" "$bad"
		echo "$want" >"$bad.stamp"
		rm -rf "$cfg"
	fi
	exec 8>&-
	case $1 in
	bad) echo "$bad" ;;
	*) echo "$harmless" ;;
	esac
}

# The flaky history: f1..f16 on top of s32, detached (the series branch
# stays at s32); made under the tree's lock, with fixed dates, so its ids
# are the same on every machine
flaky_c() {
	n=$1
	e="$(extra_for 32)"
	if [ "$n" -ge 6 ]; then
		e="$e
	if (get_random_u32() & 1)	/* the flaky boot regression */
		*(volatile int *)0 = ktest_lab_step;"
	fi
	lab_c "$((100 + n))" "$e" | sed 's|^#include <linux/printk.h>$|&\
#include <linux/random.h>|'
}

cmd_flaky() {
	t=$(cmd_tree)
	exec 8>"$dir/lock"
	flock 8
	if ! git -C "$t" rev-parse -q --verify f16 >/dev/null; then
		export GIT_AUTHOR_NAME="ktest lab" GIT_AUTHOR_EMAIL=lab@ktest.invalid
		export GIT_COMMITTER_NAME="ktest lab" GIT_COMMITTER_EMAIL=lab@ktest.invalid
		git -C "$t" checkout -q -f --detach s32
		for n in $(seq 1 16); do
			flaky_c "$n" >"$t/lib/ktest_lab.c"
			msg="lib: ktest lab flaky step $n (f$n)"
			[ "$n" = 6 ] && msg="lib: ktest lab flaky step 6, which breaks half the boots (f6)"
			date="2024-03-01T00:00:$(printf %02d "$n")Z"
			GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
				git -C "$t" commit -q -a -m "$msg" || die "cannot commit f$n"
			git -C "$t" tag "f$n"
		done
		git -C "$t" checkout -q -f series
	fi
	exec 8>&-
	echo "FLAKY_GOOD=$(git -C "$t" rev-parse "s32^{commit}")"
	echo "FLAKY_BAD=$(git -C "$t" rev-parse "f16^{commit}")"
	echo "FLAKY_CULPRIT=$(git -C "$t" rev-parse "f6^{commit}")"
}

[ $# -ge 1 ] || die "usage: series.sh tree | config | badconfig | harmlessconfig | flaky | env"
case $1 in
tree) cmd_tree ;;
config) cmd_config ;;
badconfig) cmd_badconfig bad ;;
harmlessconfig) cmd_badconfig harmless ;;
flaky) cmd_flaky ;;
env) cmd_env ;;
*) die "unknown command '$1' (tree, config, badconfig, harmlessconfig, flaky, env)" ;;
esac
