#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs every test and ends with one line: "N passed, N failed".
#   run-tests.sh UNIT_BIN... -- FUZZ_BIN...
# Unit binaries are cmocka programs; their own summary lines are counted.
# tests/cli/*.sh and tests/e2e/*.sh print "ok - what" / "not ok - what" lines
# (see tests/lib.sh); KTEST_E2E=0 leaves the tests/e2e ones out, KTEST_CLI=0
# the tests/cli ones.
# Fuzz binaries run over their seed corpus: FUZZ_SECONDS in all, or
# FUZZ_EACH seconds each, FUZZ_JOBS at a time (CI: 60 s each, 2 at a time).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0
failures=""

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktest-tests.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

note_fail() {
	failed=$((failed + 1))
	failures="$failures
  $1"
}

units=""
fuzzers=""
mode=unit
for a in "$@"; do
	if [ "$a" = "--" ]; then mode=fuzz; continue; fi
	if [ $mode = unit ]; then units="$units $a"; else fuzzers="$fuzzers $a"; fi
done

for t in $units; do
	out="$tmp/$(basename "$t").out"
	t0=$(date +%s)
	"$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	echo "# $(basename "$t"): $(( $(date +%s) - t0 )) s"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	passed=$((passed + ${p:-0}))
	if [ -n "$f" ] && [ "$f" -gt 0 ]; then
		failed=$((failed + f))
		failures="$failures
  $(basename "$t"): $f failed"
	elif [ $rc -ne 0 ] || [ -z "$p" ]; then
		note_fail "$(basename "$t") exited $rc"
	fi
done

for s in "$top"/tests/cli/*.sh "$top"/tests/e2e/*.sh; do
	[ -f "$s" ] || continue
	case $s in
	"$top"/tests/e2e/*) [ "${KTEST_E2E:-1}" = 0 ] && continue ;;
	*) [ "${KTEST_CLI:-1}" = 0 ] && continue ;;
	esac
	out="$tmp/$(basename "$s").out"
	t0=$(date +%s)
	KTEST_SRC="$top" KTEST_TMP="$tmp/$(basename "$s" .sh).d" sh "$s" >"$out" 2>&1
	rc=$?
	cat "$out"
	echo "# $(basename "$s"): $(( $(date +%s) - t0 )) s"
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	passed=$((passed + p))
	if [ "$f" -gt 0 ]; then
		failed=$((failed + f))
		failures="$failures
$(grep '^not ok ' "$out" | sed "s|^|  $(basename "$s"): |")"
	elif [ $rc -ne 0 ]; then
		note_fail "$(basename "$s") exited $rc"
	fi
done

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
	"$1" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
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
			passed=$((passed + 1))
		else
			tail -n 40 "$tmp/$1.out"
			note_fail "$1: fuzzer found a crash (see output above)"
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

if [ "$failed" -gt 0 ]; then
	echo
	echo "Failures:$failures"
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
