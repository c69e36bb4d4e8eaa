#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The INFRA retry policy (doc/faults.md): a step the lab failed is run again
# INFRA_RETRIES times, INFRA_RETRY_DELAY apart (doubled each time), in every
# test type (a single build or boot, a patchcheck, a bisect); then the run
# stops with exit 3 naming the box and why, and never blames a commit.
# INFRA_HEALTH_CHECK boots the box's good kernel before a retry and before a
# failed boot is blamed on a commit once the lab has failed in the run.
#
# Part A: the lab's fault is the host's: a fake kbuild that says "No space
# left on device" (INFRA) on chosen commits, as often as told.
# Part B: a box made of commands (tests/cli/cmdbox.inc): POWER_CYCLE
# appends the next boot's console log to a file the CONSOLE reads, and
# fails as often as told.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
src=$T/src
rm -rf "$src" st-* log builds infra_* ./*.conf
mkdir -p "$src"

g() { git -C "$src" "$@"; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME=$T

# infra.sh N: fails like a full disk while $T/infra_N holds a count > 0
cat >infra.sh <<EOF
f=$T/infra_\$1
[ -s "\$f" ] || exit 0
n=\$(cat "\$f")
[ "\$n" -gt 0 ] || exit 0
echo \$((n - 1)) > "\$f"
echo "ld: final link failed: No space left on device" >&2
exit 1
EOF
cat >"$src/Makefile" <<EOF
O ?= .
C := \$(O)/.config
all:
	@echo "\$\$(cat version)" >> $T/builds
	@sh $T/infra.sh \$\$(cat version)
	@if [ -e broken ]; then echo 'init/main.c:20:1: error: expected ; before }'; exit 1; fi
	@mkdir -p \$(O)/arch/x86/boot && cp \$(C) \$(O)/arch/x86/boot/bzImage
mrproper:
	@rm -rf \$(C) \$(O)/arch
olddefconfig oldnoconfig:
	@touch \$(C)
defconfig:
	@echo CONFIG_DEFAULT_ON=y > \$(C)
kernelrelease:
	@echo "6.1.0\$\$(cat \$(O)/localversion 2>/dev/null)"
EOF
echo 0 >"$src/version"
g init -q
g add Makefile version
g commit -q -m "c0: the tree"
for n in 1 2 3 4 5 6 7 8; do
	echo "$n" >"$src/version"
	case $n in
	6) touch "$src/broken"; g add broken ;;
	7) g rm -q broken ;;
	esac
	g add version
	g commit -q -m "c$n: change $n"
	eval "c$n=\$(g rev-parse HEAD)"
done
c0=$(g rev-list --max-parents=0 HEAD)
g checkout -q "$c8"

common() {	# common STATE EXTRA...
	st=$1
	shift
	cat <<EOF
BUILD_DIR = $src
OUTPUT_DIR = $T/build-out
TMP_DIR = $T/tmp
LOG_FILE = $T/log
STATE_DIR = $T/$st
MACHINE = box7
LOCALVERSION = -t
BUILD_TYPE = defconfig
EOF
	for l in "$@"; do echo "$l"; done
}
pc() {	# pc STATE EXTRA...
	common "$@"
	printf 'TEST_START\nTEST_TYPE = patchcheck\nPATCHCHECK_TYPE = build\n'
	printf 'PATCHCHECK_START = %s\nPATCHCHECK_END = %s\n' "$c1" "$c5"
	echo "PATCHCHECK_SLEEP_TIME = 0"
}
infra() { echo "$2" >"$T/infra_$1"; }	# infra COMMIT_NUMBER TIMES
clean() { rm -f builds "$T"/infra_*; }
nb() { grep -c "^$1\$" builds; }	# builds of commit number N
steps() {	# the report's steps: verdict per step, in order
	jq -r '[.tests[0].steps[] | .verdict] | join(" ")' "$1/report.json"
}

# A1: a patchcheck whose build of c3 the host fails once: retried, passes
clean
infra 3 1
pc st-a1 >a1.conf
run_ktest a1.conf
expect_rc 0 "patchcheck: a commit the host failed once is retried and the series passes"
check "saying it retries commit c3, 1 of 2" \
	grep -q "INFRA trouble (build could not run.*No space left on device.*); trying commit ${c3%"${c3#????????????}"} again (retry 1 of 2)" out
check "c3 built twice, the others once ($(tr '\n' ' ' <builds))" \
	test "$(nb 3)" -eq 2 -a "$(nb 2)" -eq 1 -a "$(nb 4)" -eq 1
check "the report has the failed attempt as INFRA and five GOOD commits ($(steps st-a1))" \
	test "$(steps st-a1)" = "GOOD GOOD INFRA GOOD GOOD GOOD"

# A2: the host fails c3 every time: exit 3 after 3 attempts, the box named
clean
infra 3 100
pc st-a2 >a2.conf
run_ktest a2.conf
expect_rc 3 "patchcheck: a commit the host keeps failing stops the run with exit 3"
check "after 3 attempts, naming the box, the commit and why" \
	grep -q "ktest: the lab (box7) failed 3 times on commit ${c3%"${c3#????????????}"}: build could not run.*No space left on device" out
check "c3 is not listed as breaking the series" sh -c "! grep -q 'break the series' out"
check "no step is BAD ($(steps st-a2))" test "$(steps st-a2)" = "GOOD GOOD INFRA INFRA INFRA"
check "c4 and c5 were not built (the run stopped)" test "$(nb 4)" -eq 0

# A3: the same run again once the host is fixed: resumes, nothing redone
rm -f "$T"/infra_* builds
run_ktest a2.conf
expect_rc 0 "the rerun once the host is fixed passes"
check "c1 and c2 come from the journal, not built again ($(tr '\n' ' ' <builds))" \
	test "$(nb 1)" -eq 0 -a "$(nb 2)" -eq 0 -a "$(nb 3)" -eq 1
check "and it says so" test "$(grep -c 'in the earlier run (from the journal)' out)" -eq 2

# A4: INFRA_RETRIES = 0: the first INFRA stops the run
clean
infra 2 1
pc st-a4 "INFRA_RETRIES = 0" >a4.conf
run_ktest a4.conf
expect_rc 3 "INFRA_RETRIES = 0: the first INFRA stops the run (exit 3)"
check "saying the lab failed once" grep -q "the lab (box7) failed 1 time on commit" out
check "with no retry" sh -c "! grep -q 'INFRA trouble' out"

# A5: INFRA_RETRIES = 4 rides out 4 failures
clean
infra 2 4
pc st-a5 "INFRA_RETRIES = 4" >a5.conf
run_ktest a5.conf
expect_rc 0 "INFRA_RETRIES = 4: four failures of one commit are ridden out"
check "retry 4 of 4 was the one that passed" grep -q "(retry 4 of 4)" out
check "c2 built 5 times" test "$(nb 2)" -eq 5

# A6: INFRA_RETRY_DELAY = 1: 1 s, then 2 s before the retries
clean
infra 1 2
pc st-a6 "INFRA_RETRY_DELAY = 1" >a6.conf
start=$(date +%s)
run_ktest a6.conf
took=$(( $(date +%s) - start ))
expect_rc 0 "INFRA_RETRY_DELAY = 1: the run passes after two retries"
check "waiting 1 s, then 2 s" sh -c "grep -q 'Waiting 1 s before the retry' out && grep -q 'Waiting 2 s before the retry' out"
check "so the run took at least 3 s (${took}s)" test "$took" -ge 3

# A7: a single build test the host fails once is retried
clean
infra 8 1
common st-a7 "TEST_START" "TEST_TYPE = build" >a7.conf
run_ktest a7.conf
expect_rc 0 "a single build the host failed once passes on its retry"
check "the test's verdict is GOOD" jqe '.tests[0].verdict == "GOOD"' st-a7/report.json
clean
infra 8 3
common st-a7b "TEST_START" "TEST_TYPE = build" >a7b.conf
run_ktest a7b.conf
expect_rc 3 "a single build the host fails 3 times: exit 3"
check "KTEST RESULT names the failure" grep -q "KTEST RESULT: TEST 1 Failed: build could not run" out

# A8: a bisect whose steps the host fails once each gives the same answer
bisect() {
	common "$@"
	printf 'TEST_START\nTEST_TYPE = bisect\nBISECT_TYPE = build\n'
	printf 'BISECT_GOOD = %s\nBISECT_BAD = %s\n' "$c0" "$c6"
}
clean
bisect st-a8 >a8.conf
run_ktest a8.conf
want=$(jq -r '.tests[0].first_bad_commit' st-a8/report.json)
clean
for n in 1 2 3 4 5 6; do infra $n 1; done
bisect st-a8b >a8b.conf
run_ktest a8b.conf
check "a bisect whose every step the host fails once finds c6 as the undisturbed one (exit $rc)" \
	test "$want" = "$c6" -a "$(jq -r '.tests[0].first_bad_commit' st-a8b/report.json)" = "$c6"
check "its INFRA attempts are in the report, none BAD but the real ones ($(steps st-a8b))" \
	test "$(steps st-a8b | tr ' ' '\n' | grep -c INFRA)" -ge 2

# Part B: the box made of commands (tests/cli/cmdbox.inc), INFRA_HEALTH_CHECK
rm -f console.log power boots powerfail
. "$KTEST_SRC/tests/cli/cmdbox.inc"
# a good kernel that starts and never gets to its login prompt
cat >dead.log <<'EOF2'
[    0.000000] Linux version 6.0.0-good (t@t) #1
[    0.100000] ata1: link is slow to respond, please be patient
EOF2
box() {	# box STATE EXTRA...
	st=$1
	shift
	cmdbox_conf "$st" "tail -n +1 -F $T/console.log"
	cat <<EOF2
TIMEOUT = 3
SLEEP_TIME = 1
DIE_ON_FAILURE = 0
INFRA_HEALTH_CHECK = 1
TEST_START
TEST_TYPE = boot
EOF2
	for l in "$@"; do echo "$l"; done
}
fresh() { cmdbox_fresh "$@"; }	# fresh POWER_FAILURES BOOT...

# B1: POWER_CYCLE fails once; the box boots its good kernel, then the test
fresh 1 good good good
box st-b1 >b1.conf
run_ktest b1.conf
expect_rc 0 "a boot whose power cycle failed once passes on the retry"
check "a health check ran before the retry and found the box healthy" \
	sh -c "grep -q 'Health check: 127.0.0.1 boots its good kernel before the retry' out &&
	       grep -q 'Health check: 127.0.0.1 is healthy' out"

# B2: ... and the good kernel does not come up: stop, exit 3, naming why
fresh 1 dead good
box st-b2 >b2.conf
run_ktest b2.conf
expect_rc 3 "a box whose good kernel does not come up fails its health check: exit 3"
check "naming the box and what the good kernel did not show" \
	grep -q "ktest: 127.0.0.1 failed its health check: its good kernel did not show 'login:' (SUCCESS_LINE) on the console within 3 s" out
check "and the test kernel was not booted again after it" \
	test "$(grep -c '^Booting' out)" -eq 1
check "the test's verdict is INFRA" jqe '.tests[0].verdict == "INFRA"' st-b2/report.json
check "the report holds no BAD" sh -c "! grep -q '\"BAD\"' st-b2/report.json"

# B3: the lab failed once, then the kernel panics on a healthy box: BAD
fresh 1 good panic good good
box st-b3 >b3.conf
run_ktest b3.conf
expect_rc 1 "after INFRA, a panic on a box whose good kernel boots is the kernel's (exit 1)"
check "the box's good kernel was booted before blaming the commit" \
	grep -q "Health check: 127.0.0.1 boots its good kernel before this failed boot is blamed on the kernel" out
check "the verdict is the panic" grep -q "KTEST RESULT: TEST 1 Failed: failed boot: .*kernel panic" out

# B4: ... on a box whose good kernel does not come up: the lab's, exit 3
fresh 1 good panic dead dead dead
box st-b4 >b4.conf
run_ktest b4.conf
expect_rc 3 "after INFRA, a panic on a box whose good kernel does not boot is the lab's (exit 3)"
check "saying so: the failure is the lab's, and why" \
	grep -q "KTEST RESULT: TEST 1 Failed: 127.0.0.1 failed its health check after this boot failure (its good kernel did not show 'login:' (SUCCESS_LINE) on the console within 3 s), so the failure is the lab's: failed boot: .*kernel panic" out
check "the report says INFRA, not BAD ($(jq -r '[.tests[0].steps[] | .verdict] | join(" ")' st-b4/report.json))" \
	sh -c "! grep -q '\"BAD\"' st-b4/report.json && grep -q '\"INFRA\"' st-b4/report.json"

# B5: a panic with no INFRA before it: no health check (it costs a boot)
fresh 0 panic good good
box st-b5 >b5.conf
run_ktest b5.conf
expect_rc 1 "a panic on a box the lab never failed is the kernel's at once"
check "with no health check" sh -c "! grep -q 'Health check' out"
finish
