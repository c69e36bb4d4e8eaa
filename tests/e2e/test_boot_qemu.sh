#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The real lab end to end: the lab series (tests/lab/series.sh) built with
# kbuild, installed over ssh to an sshd on 127.0.0.1 (the box's "disk" is a
# file there), booted on the built-in qemu box with the busybox initramfs,
# its serial console watched.
#
#   boot passes; a bisect (boot) over a range holding the build break skips
#   it and finds the boot regression; a reverse bisect finds its fix; a test
#   type runs TEST (over ssh) and a crash it makes the box do is reported
#   with its title; the first bisect is killed with SIGKILL mid-search and
#   its rerun gives the culprit without rebuilding finished steps; the
#   legacy config and its native conversion give the same result.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.inc"

e2e_setup
cd "$KTEST_TMP" || exit 1
INITRD=$(sh "$KTEST_SRC/tests/lab/initramfs.sh") || {
	not_ok "the lab initramfs is ready"; finish; }
ok "the lab initramfs is ready"

# the box's ssh: a real sshd on 127.0.0.1, found through ~/.ssh/config
sshd_dir=$KTEST_TMP/sshd
port=$(sh "$KTEST_SRC/tests/lab/sshd.sh" start "$sshd_dir") || {
	not_ok "sshd starts"; finish; }
trap 'sh "$KTEST_SRC/tests/lab/sshd.sh" stop "$sshd_dir"' EXIT
trap 'exit 130' INT TERM
export HOME=$KTEST_TMP/home
mkdir -p "$HOME/.ssh" box
cat >"$HOME/.ssh/config" <<EOF2
Host 127.0.0.1
	Port $port
	IdentityFile $sshd_dir/id_ed25519
	UserKnownHostsFile $sshd_dir/known_hosts
EOF2
SSH="ssh -F $HOME/.ssh/config -o BatchMode=yes $(id -un)@127.0.0.1"

conf() {	# conf STATE TEST-LINES...
	state=$1
	shift
	cat <<EOF2
BUILD_DIR = $SERIES_TREE
OUTPUT_DIR = $OUT
TMP_DIR = $KTEST_TMP/tmp
LOG_FILE = $KTEST_TMP/log
STATE_DIR = $KTEST_TMP/$state
MACHINE = 127.0.0.1
SSH_USER = $(id -un)
SSH_CONFIG = $HOME/.ssh/config
TARGET_IMAGE = $KTEST_TMP/box/vmlinuz
MAKE_CMD = $MAKE
BUILD_OPTIONS = -j$(nproc)
LOCALVERSION = -e2e
MIN_CONFIG = $FULL_CONFIG
BUILD_TYPE = useconfig:$FULL_CONFIG
BUILD_NOCLEAN = 1
BOX_TYPE = qemu
QEMU_INITRD = $INITRD
SUCCESS_LINE = ktest: booted
TIMEOUT = 30
BOOTED_TIMEOUT = 2
BISECT_SLEEP_TIME = 0
EOF2
	echo "TEST_START"
	for l in "$@"; do echo "$l"; done
}

# ---- boot ----
conf st-boot "TEST_TYPE = boot" "CHECKOUT = $S7" >boot.conf
run_ktest boot.conf
expect_rc 0 "boot of s7 on the qemu box passes"
check "the kernel was installed over ssh" test -s box/vmlinuz
check "its console was watched to the success line" grep -q 'ktest: booted 6.1' out
check "the report has build, install and boot durations" \
	jqe '.tests[0].steps[0].durations | (.build > 0 and .install >= 0 and .boot > 0)' st-boot/report.json
check "the dmesg file has the boot" grep -q 'ktest lab: step 7' tmp/dmesg-127.0.0.1

# the legacy config and its native form give the same result
"$KTEST" convert boot.conf >boot.ktest 2>convert.err
check "the boot config converts to the native format" test -s boot.ktest
sed -i "s|$KTEST_TMP/st-boot|$KTEST_TMP/st-boot-native|" boot.ktest
run_ktest boot.ktest
expect_rc 0 "its native form passes the same boot"

# a panic with STOP_AFTER_FAILURE = 60: the qemu box has exited (it does
# not reboot), so the wait ends there instead of 60 s later
conf st-panic "TEST_TYPE = boot" "BUILD_TYPE = nobuild" "NO_INSTALL = 1" \
	"QEMU_KERNEL = $OUT/arch/x86/boot/bzImage" \
	"QEMU_APPEND = ktest.mode=panic" "STOP_AFTER_FAILURE = 60" >panic.conf
run_ktest panic.conf
expect_rc 1 "a kernel that panics fails the boot"
check "with the panic as its title" \
	grep -q 'failed boot: .*kernel panic: Attempted to kill init!' out
check "ended by the box's end, STOP_AFTER_FAILURE not waited out" \
	sh -c "grep -q 'Attempted to kill init! (the console ended)' out &&
	       ! grep -q 'forced to stop' out"

# ---- bisect (boot), with the build break inside the range ----
# one search, killed with SIGKILL in its third build and run again (the
# rerun is checked as an uninterrupted search would be; CI's minutes)
conf st-bisect "TEST_TYPE = bisect" "BISECT_TYPE = boot" \
	"BISECT_GOOD = $S6" "BISECT_BAD = $S23" \
	"PRE_BUILD = n=\$(cat $KTEST_TMP/count 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > $KTEST_TMP/count; if [ \$n -eq 3 ]; then kill -9 \$PPID; fi" >bisect.conf
rm -f count
run_ktest bisect.conf
check "ktest was killed with SIGKILL in its third build (exit $rc)" test "$rc" -eq 137
check "no qemu is left behind" sh -c "! pgrep -f 'qemu-system-x86_6[4].*$KTEST_TMP/box/vmlinuz' >/dev/null"
run_ktest --json "$KTEST_TMP/bisect.json" bisect.conf
expect_rc 0 "the rerun of the bisect (boot) over s6..s23 succeeds"
check "it finds the boot regression s18" grep -q "$S18 is the first bad commit" out
check "naming it with its subject" grep -q "Bad commit was \[$S18\] lib: ktest lab step 18" out
check "the two finished steps were not run again" \
	test "$(grep -c 'in the earlier run (from the journal)' out)" -eq 2
steps=$(jq '.tests[0].steps | length' bisect.json)
check "builds in all: the $steps steps plus the one in flight" \
	test "$(cat count)" -eq "$((steps + 1))"
# (LOG_FILE has both runs: a step met before the kill is in it)
if grep -q "HIT A BAD COMMIT" log; then
	check "a build-broken commit it met was skipped" \
		jqe '[.tests[0].steps[] | select(.failed_phase == "build")] | length >= 1' bisect.json
else
	ok "no build-broken commit was on its path"
fi
check "the bad boots are reported with the crash title" \
	jqe '[.tests[0].steps[] | select(.verdict == "BAD") | .crash_title] | all(. != null)' bisect.json
# every kernel booted is the one built: sN fails to boot iff 18 <= N < 24
consistent='.tests[0].steps | map(select(.failed_phase != "build")) | all((.subject | capture("[(]s(?<n>[0-9]+)[)]").n | tonumber) as $n | (.verdict == "BAD") == ($n >= 18 and $n < 24))'
check "every verdict is the truth about the commit booted" \
	jqe "$consistent" bisect.json
check "every step has its verdict and durations" \
	jqe '.tests[0].steps | all(.verdict != "NONE" and .durations.build > 0)' bisect.json

# the same range with the build break on git's path: s8 must be skipped
conf st-skip "TEST_TYPE = bisect" "BISECT_TYPE = boot" \
	"BISECT_GOOD = $S1" "BISECT_BAD = $S20" "BISECT_START = $S8" >skip.conf
run_ktest skip.conf
expect_rc 0 "bisect starting at the build break succeeds"
check "it skipped the build break" grep -q "HIT A BAD COMMIT ... SKIPPING" out
check "and still found s18" grep -q "$S18 is the first bad commit" out

# ---- reverse bisect finds the fix ----
# (s22..s27: two or three steps around the fix s24; CI's minutes)
conf st-rev "TEST_TYPE = bisect" "BISECT_TYPE = boot" "BISECT_REVERSE = 1" \
	"BISECT_GOOD = $S22" "BISECT_BAD = $S27" >rev.conf
run_ktest rev.conf
expect_rc 0 "reverse bisect (boot) succeeds"
check "it finds the fix s24" grep -q "$S24 is the first good (fixing) commit" out

# ---- test: TEST over ssh, and a crash it makes the box do ----
conf st-test "TEST_TYPE = test" "CHECKOUT = $S7" \
	"TEST = $SSH true" >test.conf
run_ktest test.conf
expect_rc 0 "a test whose TEST passes over ssh passes"
# The "box" side of the ssh runs on this host: it types on the qemu box's
# serial line (ktest exports it as $KTEST_CONSOLE), where the initramfs
# runs a shell, a command that makes the kernel oops.
cat >crash.sh <<EOF2
#!/bin/sh
$SSH "printf '%s\\n' 'mount -t debugfs none /sys/kernel/debug 2>/dev/null; echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT' > \$KTEST_CONSOLE; sleep 5"
EOF2
conf st-crash "TEST_TYPE = test" "CHECKOUT = $S7" "DIE_ON_FAILURE = 0" \
	"TEST = sh $KTEST_TMP/crash.sh" >crash.conf
run_ktest crash.conf
expect_rc 1 "a test during which the kernel crashes fails"
check "with the crash title" grep -q 'KTEST RESULT: TEST 1 Failed: failed test: the kernel crashed: ' out
check "the report has the title" \
	jqe '.tests[0].steps[0].crash_title | test("NULL pointer|EXCEPTION|Oops|BUG")' st-crash/report.json

finish
