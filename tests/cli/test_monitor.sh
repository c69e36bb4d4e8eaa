#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# `ktest monitor` over every console log in tests/data/console (or only the
# NAMEs given: test_monitor.sh panic-no-init oops-crlf), then its bad inputs.
#
# A case is NAME.log, a console log as captured (any bytes), with
#   NAME.expect  exactly what `ktest monitor` prints on it: one
#                "TITLE: <title>" line per crash report, first first, then
#                "VERDICT: <booted|crashed|timed out|triple fault>: <reason>"
#   NAME.conf    optional: a ktest.conf the case runs with (its test 1's
#                SUCCESS_LINE, IGNORE_ERRORS, timeouts, CRASH_FAIL_CLASSES)
# A case must print its .expect, exit 0 when the verdict is "booted" and 1
# otherwise, print nothing on stderr, and die neither by a signal nor with a
# sanitizer report. To add a real log: drop NAME.log in, check by eye what
# `ktest monitor NAME.log` says, save it as NAME.expect.
. "$(dirname "$0")/../lib.sh"

CONSOLE="$DATA/console"
CASE_TIMEOUT=${CASE_TIMEOUT:-30}
case $KTEST in
/*) ;;
*/*) KTEST=$(pwd)/$KTEST ;;
esac

# run_monitor ARGS...: ktest monitor ARGS, under a timeout when there is one
run_monitor() {
	if command -v timeout >/dev/null 2>&1; then
		timeout "$CASE_TIMEOUT" "$KTEST" monitor "$@" \
			>"$KTEST_TMP/out" 2>"$KTEST_TMP/err" </dev/null
	else
		"$KTEST" monitor "$@" >"$KTEST_TMP/out" 2>"$KTEST_TMP/err" </dev/null
	fi
	rc=$?
}

# crashed: why the last run counts as a crash of ktest itself, or nothing
crashed() {
	if grep -q 'Sanitizer' "$KTEST_TMP/err"; then
		echo "sanitizer report: $(grep -m1 'Sanitizer' "$KTEST_TMP/err")"
	elif grep -q 'runtime error:' "$KTEST_TMP/err"; then
		echo "undefined behaviour: $(grep -m1 'runtime error:' "$KTEST_TMP/err")"
	elif [ "$rc" -eq 124 ] && command -v timeout >/dev/null 2>&1; then
		echo "no answer within ${CASE_TIMEOUT}s"
	elif [ "$rc" -gt 128 ]; then
		echo "killed by signal $((rc - 128))"
	fi
}

run_case() {
	name=$1
	log="$CONSOLE/$name.log"
	if [ ! -f "$CONSOLE/$name.expect" ]; then
		not_ok "$name: no $name.expect"
		return
	fi
	if [ -f "$CONSOLE/$name.conf" ]; then
		run_monitor "$CONSOLE/$name.conf" "$log"
	else
		run_monitor "$log"
	fi
	why=$(crashed)
	if [ -n "$why" ]; then
		not_ok "$name: ktest crashed: $why"
		return
	fi
	if grep -q '^VERDICT: booted:' "$CONSOLE/$name.expect"; then want=0; else want=1; fi
	if ! cmp -s "$KTEST_TMP/out" "$CONSOLE/$name.expect"; then
		not_ok "$name: output differs from $name.expect"
		diff "$CONSOLE/$name.expect" "$KTEST_TMP/out" | sed 's/^/# /' | head -n 20
	elif [ "$rc" -ne "$want" ]; then
		not_ok "$name: exit $rc, wanted $want"
	elif [ -s "$KTEST_TMP/err" ]; then
		not_ok "$name: printed on stderr"
		sed 's/^/# /' "$KTEST_TMP/err" | head -n 5
	else
		ok "$name: $(tail -n 1 "$KTEST_TMP/out" | cut -d: -f2 | sed 's/^ //')"
	fi
}

ncases=0
if [ $# -gt 0 ]; then
	for n in "$@"; do run_case "${n%.log}"; ncases=$((ncases + 1)); done
	finish
fi
for f in "$CONSOLE"/*.log; do
	[ -f "$f" ] || continue
	run_case "$(basename "$f" .log)"
	ncases=$((ncases + 1))
done
if [ "$ncases" -ge 20 ]; then ok "the corpus has $ncases cases"; else
	not_ok "the corpus has only $ncases cases"
fi

# ---- the command line ----
cd "$KTEST_TMP" || exit 1

run_monitor
expect_rc 2 "monitor without a log exits 2"
check "and shows its usage" grep -q 'usage: ktest monitor \[OPTIONS\] \[CONFIG\] LOGFILE' err

run_monitor /nonexistent.log
expect_rc 2 "a missing log exits 2"
check "and names it" grep -q "can't read console log /nonexistent.log" err

mkdir -p adir
run_monitor adir
expect_rc 2 "a directory for a log exits 2"

run_monitor /nonexistent.conf "$CONSOLE/boot-login.log"
expect_rc 2 "a missing config exits 2"

run_monitor a b c
expect_rc 2 "three operands exit 2"

printf '# a regex with a typo\nSUCCESS_LINE = login(\n' > badre.conf
run_monitor badre.conf "$CONSOLE/boot-login.log"
expect_rc 2 "a SUCCESS_LINE that is no regex exits 2"
check "with the config's file:line" grep -q "^badre.conf:2: error: SUCCESS_LINE 'login(':" err

printf '\nTIMEOUT = soon\n' > badtime.conf
run_monitor badtime.conf "$CONSOLE/boot-login.log"
expect_rc 2 "a TIMEOUT that is no number exits 2"
check "with the config's file:line" grep -q "^badtime.conf:2: error: TIMEOUT: 'soon' is not a whole number" err

printf 'CRASH_FAIL_CLASSES = panic, oopses\n' > badclass.conf
run_monitor badclass.conf "$CONSOLE/boot-login.log"
expect_rc 2 "an unknown crash class exits 2"
check "with the config's file:line" grep -q "^badclass.conf:1: error: CRASH_FAIL_CLASSES" err

# test 1's values, not the defaults'
cat > pertest.conf <<'EOF'
SUCCESS_LINE = no such prompt

TEST_START
SUCCESS_LINE = buildroot login:
EOF
run_monitor pertest.conf "$CONSOLE/boot-login.log"
expect_rc 0 "the config's test 1 options apply"

run_monitor -D 'SUCCESS_LINE=^/ \x23' "$CONSOLE/boot-busybox-shell.log"
expect_rc 0 "-D sets an option without a config"
run_monitor -D success_line=nothing "$CONSOLE/boot-login.log"
expect_rc 1 "-D takes native names too"
check "and the boot then times out" grep -q '^VERDICT: timed out: ' out
run_monitor -D CRASH_FAIL_CLASSES=ktest,sanitizer "$CONSOLE/kcsan-data-race.log"
expect_rc 1 "-D CRASH_FAIL_CLASSES fails a boot on a KCSAN report"

# a log without a newline at its end: the last line counts
printf 'Linux version 6.1.0 (x)\nbuildroot login: ' > nonl.log
run_monitor nonl.log
expect_rc 0 "a last line without a newline is a line"

# BOOTED_TIMEOUT = 0: the line after the prompt is already too late
printf 'BOOTED_TIMEOUT = 0\n' > zero.conf
printf 'login:\nCall Trace:\n' > late.log
run_monitor zero.conf late.log
expect_rc 0 "BOOTED_TIMEOUT = 0 stops at the prompt"
check "with ktest.pl's message" grep -q '^VERDICT: booted: Successful boot found: break after 0 seconds$' out

finish
