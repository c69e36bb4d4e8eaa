#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The benchmark against ktest.pl (make bench; doc/benchmark.md): the same
# boot bisect (s6 good, s23 bad: examples/qemu-bisect.conf) and the same
# boot patchcheck (s4..s7, which all build and boot) of the lab series
# (tests/lab/series.sh), on the same box (qemu, 1 CPU, 256 MiB, the lab
# initramfs), run by ktest (1 box, BOX_TYPE = qemu) and by ktest.pl from
# /usr/src/linux-source-6.1.tar.xz, once with its defaults and once tuned
# (short waits). ktest.pl drives bench/ktestpl-box.sh, a qemu box made of
# shell commands (POWER_CYCLE, REBOOT, CONSOLE, SSH_EXEC, SWITCH_TO_GOOD).
# Both tools build with the same MAKE_CMD, bench/ktestpl-make.sh (the lab's
# ccache make, timed), in the same OUTPUT_DIR.
#
# And a flaky case: a boot bisect of s32..f16 (tests/lab/series.sh flaky),
# whose f6 makes half the boots oops, by ktest with BISECT_FLAKY (90%
# confidence asked for) and by ktest.pl tuned (one boot per commit, its
# default BISECT_TRIES): the answer, right or not, the runs, the confidence;
# and by ktest on 2 boxes that share each commit's runs (boxes2).
#
# Prints a table: wall time, builds, boots, sum of make time, sum of boot
# time, harness overhead = wall - make - boot - test, each beside ktest.pl's
# and as a ratio; the targets beside them (not asserted). Raw numbers go to
# BENCH_OUT (default build/bench)/ktestpl-DATE.txt.
#
# Environment:
#   BENCH_KTESTPL=0   skip this benchmark
#   BENCH_QUICK=1     only the bisect, only ktest, pipelined and ktest.pl tuned
#   BENCH_TESTS, BENCH_TOOLS   or choose: "bisect patchcheck flaky",
#                     "ours pipelined boxes2 tuned defaults" (all by
#                     default; pipelined: ours with BISECT_SPECULATE = 1 in
#                     the bisect, PATCHCHECK_PIPELINE = 1 in the
#                     patchcheck; boxes2: ours with BOXES = 1 2, two qemu
#                     boxes; flaky: ours, boxes2 and tuned only)
#   BENCH_TIMEOUT     seconds one run may take (7200)
#   BENCH_KEEP=1      keep the runs' directories (logs, make.log, boots)
#   KTEST, KTEST_LAB  the binary, the lab (default /var/tmp/ktest-lab)
#
# Takes the e2e lab lock ($LAB/e2e/run.lock) and leaves the series tree as
# series.sh leaves it (at s32, clean). boxes2 keeps box 2's work tree and
# output directory in $LAB/bench-boxes2 (its state directory) from run to
# run, warmed up as OUTPUT_DIR is (the first time, a whole build, untimed);
# so does the pipelined patchcheck its box's work tree, in
# $LAB/bench-pipeline. The work trees a run would add are added before it,
# untimed (a checkout of the whole kernel: about 40 s).
# Rows of numbers are split into fields with set -- on purpose:
# shellcheck disable=SC2046,SC2086
set -eu
[ "${BENCH_KTESTPL:-1}" = 0 ] && exit 0
top=$(cd "$(dirname "$0")/.." && pwd)
KTEST=${KTEST:-$top/ktest/ktest}
LAB=${KTEST_LAB:-/var/tmp/ktest-lab}
quick=${BENCH_QUICK:-0}
limit=${BENCH_TIMEOUT:-7200}
tarball=/usr/src/linux-source-6.1.tar.xz

skip() {
	echo "bench_ktestpl: skipped: $*"
	exit 0
}
[ -r "$tarball" ] || skip "no $tarball (apt-get install linux-source-6.1)"
command -v perl >/dev/null || skip "no perl"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
command -v jq >/dev/null || skip "no jq"
[ -d "$LAB/e2e/linux" ] || skip "no lab in $LAB (sh examples/qemu-lab.sh)"
[ -x "$KTEST" ] || skip "no $KTEST (make)"

out=${BENCH_OUT:-$top/build/bench}
mkdir -p "$out"
raw=$out/ktestpl-$(date -u +%Y%m%dT%H%M%SZ).txt
work=$(mktemp -d "${TMPDIR:-/tmp}/ktest-bench-pl.XXXXXX")
boxdir=""
cleanup() {
	[ -n "$boxdir" ] && sh "$top/bench/ktestpl-box.sh" "$boxdir" off
	[ -n "${SERIES_TREE:-}" ] && sh "$top/tests/lab/series.sh" tree >/dev/null 2>&1
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "bench_ktestpl: the runs' logs are kept in $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# one e2e user of the lab at a time (tests/e2e/common.inc)
mkdir -p "$LAB/e2e"
exec 6>"$LAB/e2e/run.lock"
echo "bench_ktestpl: waiting for the lab lock ($LAB/e2e/run.lock)" >&2
flock 6
env=$(sh "$top/tests/lab/series.sh" env) || skip "tests/lab/series.sh env failed"
eval "$env"
flaky_env=$(sh "$top/tests/lab/series.sh" flaky) || skip "tests/lab/series.sh flaky failed"
eval "$flaky_env"
full=$(sh "$top/tests/lab/series.sh" config)
initrd=$(sh "$top/tests/lab/initramfs.sh")
tar -xJOf "$tarball" linux-source-6.1/tools/testing/ktest/ktest.pl >"$work/ktest.pl"
good_kernel=$LAB/qemu-kernel/bzImage-ktest
outdir=$LAB/e2e/out-bench
success="ktest: booted"

common() {
	d=$1
	cat <<EOF
MACHINE = qemu
BUILD_DIR = $SERIES_TREE
OUTPUT_DIR = $outdir
TMP_DIR = $d/tmp
LOG_FILE = $d/ktest.log
MAKE_CMD = sh $top/bench/ktestpl-make.sh $d/make.log
BUILD_OPTIONS = -j$(nproc)
LOCALVERSION = -lab
MIN_CONFIG = $full
BUILD_NOCLEAN = 1
SUCCESS_LINE = $success
EOF
}

the_test() {
	if [ "$1" = bisect ]; then
		printf 'TEST_START\nTEST_TYPE = bisect\nBISECT_TYPE = boot\n'
		printf 'BISECT_GOOD = %s\nBISECT_BAD = %s\n' "$S6" "$S23"
	elif [ "$1" = flaky ]; then
		printf 'TEST_START\nTEST_TYPE = bisect\nBISECT_TYPE = boot\n'
		printf 'BISECT_GOOD = %s\nBISECT_BAD = %s\n' "$FLAKY_GOOD" "$FLAKY_BAD"
		if is_ours "$2"; then
			printf 'BISECT_FLAKY = 1\nBISECT_CONFIDENCE = 90\n'
		fi
	else
		printf 'TEST_START\nTEST_TYPE = patchcheck\nPATCHCHECK_TYPE = boot\n'
		printf 'PATCHCHECK_START = %s\nPATCHCHECK_END = %s\n' "$S4" "$S7"
	fi
}

# the quiet console after each boot line, for both tools (seconds)
booted_timeout=2

is_ours() { [ "$1" = ours ] || [ "$1" = pipelined ] || [ "$1" = boxes2 ]; }

# conf_ours DIR TEST TOOL: pipelined is ours with BISECT_SPECULATE (the
# next candidates built while the box boots) in the bisect, with
# PATCHCHECK_PIPELINE (the next commits built while the box boots) in the
# patchcheck
conf_ours() {
	common "$1"
	if [ "$3" = pipelined ] && [ "$2" = patchcheck ]; then
		echo "PATCHCHECK_PIPELINE = 1"
	elif [ "$3" = pipelined ]; then
		echo "BISECT_SPECULATE = 1"
	fi
	[ "$3" = boxes2 ] && echo "BOXES = 1 2"
	cat <<EOF
STATE_DIR = $(state_of "$1" "$3")
BOX_TYPE = qemu
NO_INSTALL = 1
QEMU_KERNEL = \${OUTPUT_DIR}/arch/x86/boot/bzImage
QEMU_INITRD = $initrd
TIMEOUT = 60
BOOTED_TIMEOUT = $booted_timeout
BISECT_SLEEP_TIME = 0
PATCHCHECK_SLEEP_TIME = 0
EOF
	the_test "$2" "$3"
}

# boxes2's state directory outlives the run (box 2's tree and build), as
# does the pipelined runs' (the patchcheck's box's tree, the bisect's side
# build's tree and output directory)
state_of() {
	if [ "$2" = boxes2 ]; then
		echo "$LAB/bench-boxes2"
	elif [ "$2" = pipelined ] && [ "${t:-}" != flaky ]; then
		echo "$LAB/bench-pipeline"
	else
		echo "$1/state"
	fi
}

# add_tree ST BOX: box BOX's work tree under state directory ST, added
# (untimed) when there is none, as ktest would add it in the timed run
add_tree() {
	[ -e "$1/box-$2/src/.git" ] && return 0
	echo "bench_ktestpl: adding box $2's work tree in $1 (untimed)" >&2
	rm -rf "$1/box-$2/src"
	mkdir -p "$1/box-$2"
	git -C "$SERIES_TREE" worktree prune
	git -C "$SERIES_TREE" worktree add -q -f --detach "$1/box-$2/src" "$S32" ||
		echo "bench_ktestpl: cannot add $1/box-$2/src: ktest adds it in the run" >&2
}

# the pipelined bisect's side build (speculate.h): its work tree and output
# directory as warm as OUTPUT_DIR, as a second bisect in the same
# STATE_DIR finds them
warm_side() {
	st=$LAB/bench-pipeline
	if [ ! -e "$st/spec-src/.git" ]; then
		echo "bench_ktestpl: adding the side build's work tree in $st (untimed)" >&2
		rm -rf "$st/spec-src"
		mkdir -p "$st"
		git -C "$SERIES_TREE" worktree prune
		git -C "$SERIES_TREE" worktree add -q -f --detach "$st/spec-src" "$S32" ||
			return 0
	fi
	git -C "$st/spec-src" checkout -q -f --detach "$S32" 2>/dev/null || return 0
	warm_up "$st/spec-src" "$st/spec-out" "the side build's "
}

# box 2 of boxes2 as warm as OUTPUT_DIR: its work tree at s32, built
# there; nothing else of the last run's state (journal, build cache). In
# the patchcheck, box 1 boots in a work tree of its own too
warm_box2() {
	st=$LAB/bench-boxes2
	rm -rf "$st/journal" "$st/journal".* "$st/build-cache" "$st/report.json"
	[ "$1" = patchcheck ] && add_tree "$st" 1
	add_tree "$st" 2
	git -C "$st/box-2/src" checkout -q -f --detach "$S32" 2>/dev/null || return 0
	warm_up "$st/box-2/src" "$st/box-2/out" "box 2's "
}

# ktest.pl's box: bench/ktestpl-box.sh; tuned: the waits ours uses, and
# REBOOT_SUCCESS_LINE so a reboot to the good kernel ends at its boot line
# (the sleep times are then only timeouts)
conf_pl() {
	b="sh $top/bench/ktestpl-box.sh $1/box"
	common "$1"
	cat <<EOF
SSH_USER = root
NO_INSTALL = 1
BUILD_TARGET = arch/x86/boot/bzImage
TARGET_IMAGE = /boot/vmlinuz-test
POWER_CYCLE = $b power-cycle
REBOOT = $b power-cycle
CONSOLE = $b console
SSH_EXEC = $b ssh \$SSH_COMMAND
SCP_TO_TARGET = cp \$SRC_FILE \$DST_FILE
REBOOT_TYPE = script
REBOOT_SCRIPT = true
SWITCH_TO_GOOD = $b good
SWITCH_TO_TEST = $b test
EOF
	if [ "$3" = tuned ]; then
		cat <<EOF
TIMEOUT = 60
BOOTED_TIMEOUT = $booted_timeout
STOP_AFTER_FAILURE = 2
REBOOT_SUCCESS_LINE = $success
SLEEP_TIME = 10
BISECT_SLEEP_TIME = 10
PATCHCHECK_SLEEP_TIME = 10
EOF
	fi
	the_test "$2" "$3"
}

now() { date +%s.%N; }
real_qemu=$(command -v qemu-system-x86_64)

# warm_up SRC OUT [WHOSE]: before each run, untimed: OUT (OUTPUT_DIR)
# built from SRC at s32 with the lab's config, so every run starts from the
# same build state
warm_up() {
	mkdir -p "$2"
	cp "$full" "$2/.config"
	(cd "$1" &&
		sh "$top/bench/ktestpl-make.sh" "$work/warm.log" O="$2" olddefconfig &&
		sh "$top/bench/ktestpl-make.sh" "$work/warm.log" O="$2" -j"$(nproc)") \
		>"$work/warm.out" 2>&1 || echo "bench_ktestpl: ${3:-}warm-up build failed" >&2
}

# make.log lines "T0 T1 RC ARGS": the sum of durations; builds are the
# runs that name no target (not olddefconfig, kernelrelease, ...)
make_sum() {
	awk '{ s += $2 - $1 } END { printf "%.1f", s }' "$1" 2>/dev/null || echo 0
}
make_builds() {
	awk '{ t = 0; for (i = 4; i <= NF; i++) if ($i !~ /^-/ && $i !~ /=/) t = 1
	       if (!t) n++ } END { print n + 0 }' "$1" 2>/dev/null || echo 0
}

# ktest.pl's boots of the test kernel, from the box's boots.log: each from
# power-on to its boot line, or to qemu's exit (a crash), or to the next
# power-on; prints "N SECONDS GOODBOOTS UP" (UP: the boots of the test
# kernel that showed the boot line, each followed by BOOTED_TIMEOUT)
pl_boots() {
	[ -f "$1" ] || { echo "0 0 0 0"; return; }
	awk -v good="$good_kernel" -v end="$2" '
		$1 == "start" { s[$2] = $3; k[$2] = $4; if ($2 > n) n = $2 }
		$1 == "up" || $1 == "end" { if (!($2 in e)) e[$2] = $3 }
		$1 == "up" { u[$2] = 1 }
		END {
			for (i = 1; i <= n; i++) {
				if (k[i] == good) { g++; continue }
				f = (i in e) ? e[i] : ((i + 1) in s) ? s[i + 1] : end
				c++; t += f - s[i]
				if (i in u) up++
			}
			printf "%d %.1f %d %d\n", c, t, g, up
		}' "$1"
}

# sh -c "$cpu_of" FILE CMD...: runs CMD, then writes to FILE the CPU
# seconds (user + system) that it and every process it waited for used:
# the run's builds, its qemu boxes, the tool itself (what a process left
# behind, not waited for, is not counted)
cpu_of='"$@"; rc=$?
awk -v hz="$(getconf CLK_TCK)" "{ printf \"%.1f\\n\", (\$16 + \$17) / hz }" /proc/$$/stat >"$0"
exit $rc'

# runs TOOL (ours, tuned, defaults) on TEST (bisect, patchcheck); appends
# "test tool wall builds make boots boot testtime overhead rc ... cpu" to
# $raw
run_one() {
	tool=$1
	t=$2
	d=$work/$tool-$t
	mkdir -p "$d/tmp"
	sh "$top/tests/lab/series.sh" tree >/dev/null
	warm_up "$SERIES_TREE" "$outdir"
	[ "$tool" = boxes2 ] && warm_box2 "$t"
	# nothing of the last pipelined run but its work trees and builds
	if [ "$tool" = pipelined ] && [ "$t" != flaky ]; then
		rm -rf "$LAB/bench-pipeline/journal" "$LAB/bench-pipeline/journal".* \
			"$LAB/bench-pipeline/build-cache" "$LAB/bench-pipeline/report.json"
		[ "$t" = patchcheck ] && add_tree "$LAB/bench-pipeline" 1
		[ "$t" = bisect ] && warm_side
	fi
	mkdir -p "$d/box"
	if is_ours "$tool"; then
		conf_ours "$d" "$t" "$tool" >"$d/run.conf"
		# its qemu, timed as ktestpl-box.sh times ktest.pl's
		mkdir -p "$d/bin"
		printf '#!/bin/sh\nexec sh %s "$@"\n' "$top/bench/ktestpl-qemu.sh" \
			>"$d/bin/qemu-system-x86_64"
		chmod +x "$d/bin/qemu-system-x86_64"
	else
		boxdir=$d/box
		echo "$success" >"$boxdir/success-line"
		echo "$outdir/arch/x86/boot/bzImage" >"$boxdir/test-kernel"
		[ -s "$good_kernel" ] && echo "$good_kernel" >"$boxdir/good-kernel"
		echo "$initrd" >"$boxdir/initrd"
		conf_pl "$d" "$t" "$tool" >"$d/run.conf"
	fi
	echo "bench_ktestpl: $t by $tool ($d)" >&2
	t0=$(now)
	rc=0
	if is_ours "$tool"; then
		(cd "$d" && PATH=$d/bin:$PATH BENCH_BOOTLOG=$d/box/boots.log \
			BENCH_SUCCESS=$success BENCH_REAL_QEMU=$real_qemu \
			sh -c "$cpu_of" "$d/cpu" \
			timeout --foreground "$limit" "$KTEST" run.conf) >"$d/stdout" 2>&1 \
			</dev/null || rc=$?
	else
		# stdin: a fifo nobody writes to (ktest.pl selects on stdin)
		mkfifo "$d/stdin"
		(cd "$d" && exec 7<>"$d/stdin" && sh -c "$cpu_of" "$d/cpu" \
			timeout --foreground "$limit" \
			perl "$work/ktest.pl" run.conf <&7) >"$d/stdout" 2>&1 || rc=$?
	fi
	t1=$(now)
	cpu=$(cat "$d/cpu" 2>/dev/null || echo 0)
	ttime=0 rboot=-
	if ! is_ours "$tool"; then
		sh "$top/bench/ktestpl-box.sh" "$boxdir" off
		boxdir=""
	else
		rep=$(state_of "$d" "$tool")/report.json
		rboot=$(jq '[.tests[].steps[].durations.boot // 0] | add // 0 | . * 10 | round / 10' "$rep" 2>/dev/null || echo 0)
		ttime=$(jq '[.tests[].steps[].durations.test // 0] | add // 0' "$rep" 2>/dev/null || echo 0)
	fi
	sleep 1 # the last boot's "end"
	set -- $(pl_boots "$d/box/boots.log" "$t1")
	boots=$1 boot=$2 goods=$3 ups=$4
	wall=$(echo "$t1 - $t0" | bc)
	mk=$(make_sum "$d/make.log")
	builds=$(make_builds "$d/make.log")
	over=$(echo "$wall - $mk - $boot - $ttime" | bc)
	# the answer: the first bad commit (12 digits), else the exit code
	if is_ours "$tool"; then
		answer=$(jq -r '.tests[0].first_bad_commit // empty' \
			"$(state_of "$d" "$tool")/report.json" 2>/dev/null | cut -c1-12)
	else
		answer=$(grep -aoE 'Bad commit was \[[0-9a-f]+' "$d/stdout" |
			tail -n 1 | cut -d'[' -f2 | cut -c1-12)
	fi
	[ -n "$answer" ] || answer=rc$rc
	# a flaky bisect's confidence and runs (ours)
	conf=- runs=-
	if is_ours "$tool"; then
		conf=$(jq -r '.tests[0].confidence // "-"' "$rep" 2>/dev/null || echo -)
		runs=$(jq -r '.tests[0].runs // "-"' "$rep" 2>/dev/null || echo -)
	fi
	printf '%s %s %.1f %s %.1f %s %.1f %.1f %.1f %s %s %s %s %s %s %s %s\n' "$t" "$tool" \
		"$wall" "$builds" "$mk" "$boots" "$boot" "$ttime" "$over" "$rc" \
		"$goods" "$answer" "$rboot" "$(( ups * booted_timeout ))" \
		"$conf" "$runs" "$cpu" >>"$raw"
	cp "$d/stdout" "$out/ktestpl-$t-$tool.out" 2>/dev/null || true
	cp "$d/make.log" "$out/ktestpl-$t-$tool.make" 2>/dev/null || true
	[ -f "$d/box/boots.log" ] && cp "$d/box/boots.log" "$out/ktestpl-$t-$tool.boots"
	return 0
}

{
	echo "# bench_ktestpl $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -n) $(nproc) CPUs"
	echo "# kvm: $(grep -qE '\<(vmx|svm)\>' /proc/cpuinfo && [ -w /dev/kvm ] && echo yes || echo no)"
	echo "# test tool wall builds make_s boots boot_s test_s overhead_s rc good_reboots answer report_boot_s booted_wait_s confidence runs cpu_s"
} >"$raw"

tests="bisect patchcheck flaky"
tools="ours pipelined boxes2 tuned defaults"
if [ "$quick" = 1 ]; then
	tests=bisect
	tools="ours pipelined tuned"
fi
tests=${BENCH_TESTS:-$tests}
tools=${BENCH_TOOLS:-$tools}
# ktest.pl's patchcheck runs diffstat (and dies without it)
case " $tests " in *" patchcheck "*)
	case " $tools " in *" tuned "* | *" defaults "*)
		command -v diffstat >/dev/null ||
			skip "no diffstat, which ktest.pl's patchcheck runs (apt-get install diffstat, or make deps)" ;;
	esac ;;
esac
for t in $tests; do
	for tool in $tools; do
		# BISECT_SPECULATE and PATCHCHECK_PIPELINE: the bisect's and
		# the patchcheck's
		[ "$tool" = pipelined ] && [ "$t" = flaky ] && continue
		# the flaky case: ktest's flaky rule (on 1 box and 2 boxes
		# sharing the runs) beside ktest.pl tuned
		[ "$t" = flaky ] && [ "$tool" = defaults ] && continue
		run_one "$tool" "$t"
	done
done

# the table
ratio() {
	if [ -z "$2" ] || [ "$(echo "$2 > 0" | bc)" != 1 ]; then
		echo "-"
		return
	fi
	echo "scale=3; $1 / $2" | bc | sed 's/^\./0./'
}
# met VALUE LIMIT: "met (V <= L)" or "missed (V > L)"
met() {
	if [ "$(echo "$1 <= $2" | bc)" = 1 ]; then
		echo "met ($1 <= $2)"
	else
		echo "missed ($1 > $2)"
	fi
}
row() {
	grep -v '^#' "$raw" | awk -v t="$1" -v o="$2" '$1 == t && $2 == o'
}
# the flaky case: the answer, right or not, the runs, the confidence
flaky_table() {
	culprit=${FLAKY_CULPRIT%"${FLAKY_CULPRIT#????????????}"}
	echo
	echo "the flaky case: a boot bisect of s32..f16 whose f6 oopses in about half the boots (the answer: $culprit)"
	printf '%-30s %8s %6s %5s %8s %-14s %5s %10s\n' run wall builds boots "make" answer right confidence
	for tool in ours boxes2 tuned; do
		r=$(row flaky "$tool")
		[ -n "$r" ] || continue
		set -- $r
		right=no
		[ "${12}" = "$culprit" ] && right=yes
		name="ktest (BISECT_FLAKY)"
		[ "$tool" = boxes2 ] && name="ktest (BISECT_FLAKY, 2 boxes)"
		[ "$tool" = tuned ] && name="ktest.pl tuned"
		printf '%-30s %8s %6s %5s %8s %-14s %5s %10s\n' "$name" "$3" "$4" \
			"$6" "$5" "${12}" "$right" "${15}"
		if [ "$tool" = ours ]; then
			o_right=$right o_conf=${15} o_runs=${16} o_wall=$3
		elif [ "$tool" = boxes2 ]; then
			b_runs=${16} b_wall=$3
		fi
	done
	if [ -n "${b_wall:-}" ] && [ -n "${o_wall:-}" ]; then
		echo "  2 boxes sharing the runs: $b_runs runs, wall $(ratio "$b_wall" "$o_wall") of 1 box's ($o_runs runs; the runs differ: the oops is the guest's chance)"
	fi
	[ -n "${o_right:-}" ] || return 0
	echo "  ktest's runs of commits: $o_runs"
	if [ "$o_right" = yes ] && [ "$o_conf" != - ] &&
		[ "$(echo "$o_conf >= 0.9" | bc)" = 1 ]; then
		echo "targets (not asserted): the flaky case answers right with confidence >= 0.9: met ($o_conf)"
	else
		echo "targets (not asserted): the flaky case answers right with confidence >= 0.9: missed (right: $o_right, confidence $o_conf)"
	fi
}

for t in $tests; do
	if [ "$t" = flaky ]; then
		flaky_table
		continue
	fi
	echo
	echo "ktest vs ktest.pl: $t of the lab series (1 box; ktest pipelined and on 2 boxes overlap make and boot, so their overhead is not wall - make - boot)"
	printf '%-26s %8s %6s %5s %8s %8s %9s %8s %7s\n' run wall builds boots "make" boot overhead "ovh/work" cpu
	for tool in $tools; do
		r=$(row "$t" "$tool")
		[ -n "$r" ] || continue
		set -- $r
		work_s=$(echo "$5 + $7 + $8" | bc)
		pct=$(echo "scale=1; 100 * $9 / $work_s" | bc 2>/dev/null || echo "?")
		name=$tool
		[ "$tool" = ours ] && name="ktest (1 box)"
		[ "$tool" = pipelined ] && name="ktest (1 box, pipelined)"
		[ "$tool" = boxes2 ] && name="ktest (2 boxes)"
		[ "$tool" = tuned ] && name="ktest.pl tuned"
		[ "$tool" = defaults ] && name="ktest.pl defaults"
		printf '%-26s %8s %6s %5s %8s %8s %9s %7s%% %7s\n' "$name" "$3" "$4" \
			"$6" "$5" "$7" "$9" "$pct" "${17:--}"
	done
	o=$(row "$t" ours)
	[ -n "$o" ] || continue
	set -- $o
	ow=$3 ob=$4 om=$5 obt=$6 obs=$7 ot=$8 oo=$9
	if [ "${10}" != 0 ]; then
		echo "ktest failed (exit ${10}), nothing compared: see $out/ktestpl-$t-ours.out"
		continue
	fi
	for tool in tuned defaults; do
		r=$(row "$t" "$tool")
		[ -n "$r" ] || continue
		set -- $r
		if [ "${10}" != 0 ]; then
			printf '%-26s %s\n' "ratio to $tool" \
				"- (ktest.pl failed: exit ${10}, see $out/ktestpl-$t-$tool.out)"
			continue
		fi
		printf '%-26s %8s %6s %5s %8s %8s %9s\n' "ratio to $tool" \
			"$(ratio "$ow" "$3")" "$(ratio "$ob" "$4")" \
			"$(ratio "$obt" "$6")" "$(ratio "$om" "$5")" \
			"$(ratio "$obs" "$7")" "$(ratio "$oo" "$9")"
	done
	echo "targets (not asserted): ktest's overhead <= 2% of make+boot+test:" \
		"$(met "$oo" "$(echo "0.02 * ($om + $obs + $ot)" | bc | sed "s/^\./0./")")"
	set -- $o
	# the quiet time the boots waited after their boot line: ktest's
	# report times each boot from the power on to its verdict
	quiet=${14:-0}
	[ "${13:-0}" != 0 ] && quiet=$(echo "${13} - $obs" | bc | sed 's/^\./0./')
	own=$(echo "$oo - $quiet" | bc | sed 's/^\./0./; s/^-\./-0./')
	echo "  of which the quiet time after the boot lines (BOOTED_TIMEOUT = ${booted_timeout} s" \
		"after each, counted again from each later console line; ${14:-0} s if none" \
		"came): $quiet s; ktest's own: $own s," \
		"$(echo "scale=1; 100 * $own / ($om + $obs + $ot)" | bc | sed 's/^\./0./')% of make+boot+test"
	for tool in tuned defaults; do
		r=$(row "$t" "$tool")
		[ -n "$r" ] || continue
		set -- $r
		lim=0.45
		[ "$tool" = defaults ] && lim=0.12
		if [ "${10}" != 0 ]; then
			echo "  wall <= $lim x ktest.pl $tool: not compared (ktest.pl failed, exit ${10})"
			continue
		fi
		echo "  wall <= $lim x ktest.pl $tool: $(met "$ow" "$(echo "$lim * $3" | bc | sed "s/^\./0./")")"
	done
	r=$(row "$t" pipelined)
	if [ -n "$r" ]; then
		set -- $r
		# its own make counts the builds ahead, slower beside the step's
		# own, so also: against 1 box's make + boot, the serial work
		echo "  pipelined: wall < its make + boot: $(met "$3" "$(echo "$5 + $7" | bc)")," \
			"$(ratio "$3" "$ow") of 1 box; against 1 box's make + boot:" \
			"$(echo "$om + $obs" | bc | sed 's/^\./0./') s, $(ratio "$3" "$(echo "$om + $obs" | bc)")"
	fi
	r=$(row "$t" boxes2)
	if [ -n "$r" ]; then
		set -- $r
		echo "  2 boxes: wall <= 0.65 x 1 box: $(met "$3" "$(echo "0.65 * $ow" | bc | sed "s/^\./0./")")," \
			"$(ratio "$3" "$ow") of 1 box"
		# what more boxes cannot shorten when one host builds for all
		echo "    1 box's make alone is $(ratio "$om" "$ow") of its wall: the boxes'" \
			"builds share this host's $(nproc) CPUs"
		# the CPU time (builds, qemu boxes, ktest) over the host's
		# CPUs: no schedule of that work ends sooner
		o_cpu=$(row "$t" ours | awk '{ print $17 }')
		if [ -n "${17:-}" ] && [ -n "$o_cpu" ]; then
			echo "    CPU time: 1 box $o_cpu s for $ob commits built and booted" \
				"($(echo "scale=1; $o_cpu / $ob" | bc | sed 's/^\./0./') s each)," \
				"2 boxes ${17} s for $4; over $(nproc) CPUs that is at least" \
				"$(echo "scale=1; ${17} / $(nproc)" | bc | sed 's/^\./0./') s of wall" \
				"($(ratio "$(echo "${17} / $(nproc)" | bc -l)" "$ow") of 1 box) whatever the schedule"
		fi
	fi
	echo "  answers (first bad commit): $(grep -v '^#' "$raw" |
		awk -v t="$t" '$1 == t { printf "%s=%s ", $2, $12 }')"
done
echo "raw numbers: $raw"
