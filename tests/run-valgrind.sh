#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs unit test binaries under valgrind memcheck and ends with one line:
# "N passed, N failed" (binaries, not test cases).
#   run-valgrind.sh UNIT_BIN...
# A binary passes when it exits 0 and valgrind found no error in it: no
# invalid access, no use of uninitialised memory, no definite or indirect
# leak. Processes the tests fork (fake consoles, writers) are not the code
# under test: they exit without freeing what the test process holds, so only
# their errors count, not their leaks. The lab tests (test_kbuild_real,
# test_qemu) run only when KTEST_LAB is set.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0
failures=""

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktest-valgrind.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind: not installed (make deps)" >&2
	exit 1
fi

# Errors, as memcheck words them, but no leak.
not_leaks='== \(Invalid \|Conditional jump\|Use of uninitialised\|Syscall param\|Mismatched free\|Source and destination overlap\|Argument .* of function\)'

for t in "$@"; do
	n=$(basename "$t")
	case $n in
	test_kbuild_real | test_qemu)
		if [ -z "${KTEST_LAB:-}" ]; then
			echo "skip - $n: needs the lab (set KTEST_LAB)"
			continue
		fi ;;
	esac
	mkdir -p "$tmp/$n"
	valgrind --tool=memcheck --leak-check=full \
		--errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect --trace-children=no \
		--suppressions="$top/tests/valgrind.supp" \
		--log-file="$tmp/$n/vg.%p" "$t" >"$tmp/$n/out" 2>&1 &
	pid=$!
	wait $pid
	rc=$?
	main="$tmp/$n/vg.$pid"
	why=""
	if [ $rc -ne 0 ]; then
		why="exited $rc"
	elif ! grep -q 'ERROR SUMMARY: 0 errors' "$main" 2>/dev/null; then
		why="valgrind: $(sed -n 's/.*ERROR SUMMARY: //p' "$main")"
	fi
	for c in "$tmp/$n"/vg.*; do
		[ "$c" = "$main" ] && continue
		if grep -q "$not_leaks" "$c"; then
			why="${why:+$why; }errors in a forked child"
			main="$main $c"
		fi
	done
	if [ -z "$why" ]; then
		echo "ok - $n: no memcheck error, no leak"
		passed=$((passed + 1))
	else
		tail -n 40 "$tmp/$n/out"
		for f in $main; do
			grep -v 'unhandled amd64-linux syscall: 434\|your own handler\|README_MISSING\|consider this a bug\|bug_reports' "$f"
		done
		echo "not ok - $n: $why"
		failed=$((failed + 1))
		failures="$failures
  $n: $why"
	fi
done

if [ "$failed" -gt 0 ]; then
	echo
	echo "Failures:$failures"
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
