#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs every test and ends with one line: "N passed, N failed".
#   run-tests.sh UNIT_BIN... [--lab LAB_UNIT_BIN...] [--fuzz FUZZ_BIN...]
# Unit binaries are cmocka programs; their own summary lines are counted.
# tests/cli/*.sh and tests/e2e/*.sh print "ok - what" / "not ok - what" lines
# (see tests/lib.sh); KTEST_E2E=0 leaves the tests/e2e ones out, KTEST_CLI=0
# the tests/cli ones.
#
# Two groups run side by side: the host group (UNIT_BINs, then tests/cli,
# then the fuzzers) and the lab group (LAB_UNIT_BINs, the ones that build
# and boot the real kernel, then tests/e2e), which is mostly kernel builds
# and runs at nice 15, so the host group's tests, with their short
# timeouts, keep the CPU they need, and the builds take the rest (CI: the
# host group alone left one of the two CPUs idle most of the time; at nice
# 10 the builds still delayed an ssh command past a test's 1 s timeout).
# KTEST_PARALLEL=0 runs the lab group after the host group instead. Each
# test's output is printed whole when it ends (the lab group's at the end,
# with a line as each ends).
#
# Fuzz binaries run over their seed corpus: FUZZ_SECONDS in all, or
# FUZZ_EACH seconds each, FUZZ_JOBS at a time (CI: 60 s each, 2 at a time),
# at nice 19 when the lab group is running: their time is wall time, so
# they take what the lab's builds leave instead of slowing them (CI: the
# lab group is the longer one); make fuzz is the long run.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

# (internal) run-tests.sh --lab-group TMP LAB_UNIT_BIN...: the lab group,
# started by the run below in its own session at nice 15
if [ "${1:-}" = --lab-group ]; then
	tmp=$2
	shift 2
	labs="$*"
	mode=lab-group
else
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktest-tests.XXXXXX")
	labs=""
	mode=unit
fi
lab_pid=""
cleanup() {
	# the lab group's session is ours: it goes with us
	[ -n "$lab_pid" ] && kill -- -"$lab_pid" 2>/dev/null
	rm -rf "$tmp"
}

units=""
fuzzers=""
if [ $mode = unit ]; then
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	for a in "$@"; do
		case $a in
		--lab) mode=lab; continue ;;
		--fuzz | --) mode=fuzz; continue ;;
		esac
		case $mode in
		unit) units="$units $a" ;;
		lab) labs="$labs $a" ;;
		*) fuzzers="$fuzzers $a" ;;
		esac
	done
fi

# Results go to a file per group, a line each: "P N" (N passed) or
# "F N what" (N failed); counted at the end.
pass() { echo "P $2" >>"$1"; }
fail() { echo "F $2 $3" >>"$1"; }

# run_unit RESULTS BIN: a cmocka binary, its output in $tmp/NAME.out
run_unit() {
	name=$(basename "$2")
	out="$tmp/$name.out"
	t0=$(date +%s)
	"$2" >"$out" 2>&1
	rc=$?
	echo "# $name: $(( $(date +%s) - t0 )) s" >>"$out"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	pass "$1" "${p:-0}"
	if [ -n "$f" ] && [ "$f" -gt 0 ]; then
		fail "$1" "$f" "$name: $f failed"
	elif [ $rc -ne 0 ] || [ -z "$p" ]; then
		fail "$1" 1 "$name exited $rc"
	fi
}

# run_script RESULTS SCRIPT: a tests/cli or tests/e2e script
run_script() {
	name=$(basename "$2")
	out="$tmp/$name.out"
	t0=$(date +%s)
	KTEST_SRC="$top" KTEST_TMP="$tmp/$(basename "$2" .sh).d" sh "$2" >"$out" 2>&1
	rc=$?
	echo "# $name: $(( $(date +%s) - t0 )) s" >>"$out"
	pass "$1" "$(grep -c '^ok ' "$out")"
	if grep -q '^not ok ' "$out"; then
		grep '^not ok ' "$out" | sed "s|^|F 1 $name: |" >>"$1"
	elif [ $rc -ne 0 ]; then
		fail "$1" 1 "$name exited $rc"
	fi
}

scripts() {	# scripts DIR: the test scripts of tests/DIR
	for s in "$top"/tests/"$1"/*.sh; do
		[ -f "$s" ] && echo "$s"
	done
}

# The lab group: lab units, then the e2e scripts; a line as each ends.
lab_group() {
	r=$tmp/results-lab
	: >"$r"
	for t in $labs; do
		run_unit "$r" "$t"
		echo "$t" >>"$tmp/lab-order"
		echo "# (lab group) $(tail -n 1 "$tmp/$(basename "$t").out" | cut -c3-)"
	done
	[ "${KTEST_E2E:-1}" = 0 ] && return
	for s in $(scripts e2e); do
		run_script "$r" "$s"
		echo "$s" >>"$tmp/lab-order"
		echo "# (lab group) $(tail -n 1 "$tmp/$(basename "$s").out" | cut -c3-)"
	done
}

lab_wanted() {
	[ -n "$labs" ] || { [ "${KTEST_E2E:-1}" != 0 ] && [ -n "$(scripts e2e)" ]; }
}

if [ $mode = lab-group ]; then
	lab_group
	exit 0
fi

: >"$tmp/lab-order"
fuzz_nice=""
if lab_wanted && [ "${KTEST_PARALLEL:-1}" != 0 ]; then
	fuzz_nice="nice -n 19"
	# its own session, so that it goes with us whatever it is running
	setsid -w nice -n 15 sh "$0" --lab-group "$tmp" $labs &
	lab_pid=$!
	echo "# the lab group (kernel builds and boots) runs alongside, at nice 15"
fi

# The host group, printed as it goes.
r=$tmp/results-host
: >"$r"
for t in $units; do
	run_unit "$r" "$t"
	cat "$tmp/$(basename "$t").out"
done
if [ "${KTEST_CLI:-1}" != 0 ]; then
	for s in $(scripts cli); do
		run_script "$r" "$s"
		cat "$tmp/$(basename "$s").out"
	done
fi

# FUZZ_EACH (CI): seconds for every target, FUZZ_JOBS of them at a time;
# else FUZZ_SECONDS shared among them, one at a time.
nf=0
for z in $fuzzers; do nf=$((nf + 1)); done
secs=${FUZZ_EACH:-$(( ${FUZZ_SECONDS:-15} / (nf > 0 ? nf : 1) ))}
[ "$secs" -ge 1 ] || secs=1
jobs=${FUZZ_JOBS:-1}

fuzz_start() {
	n=$(basename "$1")
	mkdir -p "$tmp/corpus-$n"
	$fuzz_nice "$1" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		"$tmp/corpus-$n" "$top/tests/fuzz/corpus/$n" >"$tmp/$n.out" 2>&1 &
	pids="$pids $!"
	names="$names $n"
}

# waits for the running batch and counts its outcomes, in order
fuzz_wait() {
	set -- $names
	for p in $pids; do
		if wait "$p"; then
			echo "ok - $1: no crash in ${secs}s of fuzzing"
			pass "$r" 1
		else
			tail -n 40 "$tmp/$1.out"
			fail "$r" 1 "$1: fuzzer found a crash (see output above)"
		fi
		shift
	done
	pids=""
	names=""
}

pids=""
names=""
running=0
for z in $fuzzers; do
	fuzz_start "$z"
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		fuzz_wait
		running=0
	fi
done
fuzz_wait

# The lab group: alongside (wait for it) or now; then its outputs.
if [ -n "$lab_pid" ]; then
	echo "# waiting for the lab group"
	wait "$lab_pid"
	lab_pid=""
elif lab_wanted; then
	lab_group
fi
while read -r t; do
	cat "$tmp/$(basename "$t").out"
done <"$tmp/lab-order"

passed=0
failed=0
failures=""
for f in "$tmp/results-host" "$tmp/results-lab"; do
	[ -f "$f" ] || continue
	while read -r kind n rest; do
		if [ "$kind" = P ]; then
			passed=$((passed + n))
		else
			failed=$((failed + n))
			failures="$failures
  $rest"
		fi
	done <"$f"
done
if lab_wanted && ! [ -f "$tmp/results-lab" ]; then
	failed=$((failed + 1))
	failures="$failures
  the lab group did not run"
fi

if [ "$failed" -gt 0 ]; then
	echo
	echo "Failures:$failures"
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
