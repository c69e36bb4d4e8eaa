#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# patchcheck (build) on the real kernel: the lab series from s6 to s14 holds
# a build break (s8, still broken in s9, fixed in s10) and a commit adding a
# compiler warning in the file it touches (s13). ktest goes through all nine
# and reports exactly those three, each with its reason. BUILD_NOCLEAN, as
# the other e2e tests (their OUTPUT_DIR is shared): ktest.pl's clean first
# and last builds would be two whole kernels (~5 min of CI); that rule is
# tested in test_patchcheck (unit) and make mrproper on the real kernel in
# test_kbuild_real.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.inc"

e2e_setup
cd "$KTEST_TMP" || exit 1
short() { echo "$1" | cut -c1-12; }

cat >pc.conf <<EOF2
BUILD_DIR = $SERIES_TREE
OUTPUT_DIR = $OUT
TMP_DIR = $KTEST_TMP/tmp
LOG_FILE = $KTEST_TMP/log
STATE_DIR = $KTEST_TMP/state
MACHINE = qemu
MAKE_CMD = $MAKE
BUILD_OPTIONS = -j$(nproc)
LOCALVERSION = -e2e
MIN_CONFIG = $FULL_CONFIG
BUILD_NOCLEAN = 1
TEST_START
TEST_TYPE = patchcheck
PATCHCHECK_TYPE = build
PATCHCHECK_START = $S6
PATCHCHECK_END = $S14
EOF2
run_ktest pc.conf
expect_rc 1 "patchcheck of s6..s14 fails"
check "every commit was built (9 steps)" \
	test "$(jq '.tests[0].steps | length' state/report.json)" -eq 9
check "s8 is reported: build" grep -q "$(short "$S8") .*(s8): build" out
check "s9 is reported: build" grep -q "$(short "$S9") .*(s9): build" out
check "s13 is reported: warning" grep -q "$(short "$S13") .*(s13): warning" out
check "naming the warning" grep -q 'ktest_lab.c:11:13: warning: unused variable .ktest_lab_unused.' out
check "exactly those three" grep -q '3 of 9 commits break the series' out
check "s14 passes (its warning is not new)" \
	test "$(jq -r '.tests[0].steps[8].verdict' state/report.json)" = GOOD
check "the report has build durations" \
	jqe '[.tests[0].steps[].durations.build] | all(. > 0)' state/report.json
finish
