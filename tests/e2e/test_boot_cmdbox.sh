#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The real kernel on a box that is nothing but commands, as ktest.pl's
# users wire theirs: POWER_CYCLE and POWER_OFF are scripts (here they start
# and stop a qemu of their own, by its pid file), CONSOLE is a command
# (tail -F of the serial log that qemu appends to), and ssh to the box is
# refused, so every reboot is a power cycle. A boot passes, and a bisect
# (boot) finds the boot regression s18.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.inc"

e2e_setup
cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
INITRD=$(sh "$KTEST_SRC/tests/lab/initramfs.sh") || {
	not_ok "the lab initramfs is ready"; finish; }
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config
: >serial.log

# the power switch: our own qemu, stopped by its pid file (and only that)
cat >power.sh <<EOF2
#!/bin/sh
if [ -s $T/qemu.pid ]; then
	kill \$(cat $T/qemu.pid) 2>/dev/null
	while kill -0 \$(cat $T/qemu.pid) 2>/dev/null; do sleep 0.1; done
	rm -f $T/qemu.pid
fi
echo "\$1" >> $T/power.log
[ "\$1" = off ] && exit 0
exec qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \\
	-accel tcg -m 256 -kernel $OUT/arch/x86/boot/bzImage -initrd $INITRD \\
	-append "console=ttyS0 panic=-1" \\
	-chardev file,id=s0,path=$T/serial.log,append=on -serial chardev:s0 \\
	-daemonize -pidfile $T/qemu.pid
EOF2
cleanup() {
	[ -s "$T/qemu.pid" ] && kill "$(cat "$T/qemu.pid")" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

conf() {	# conf STATE TEST-LINES...
	state=$1
	shift
	cat <<EOF2
BUILD_DIR = $SERIES_TREE
OUTPUT_DIR = $OUT
TMP_DIR = $T/tmp
LOG_FILE = $T/$state.log
STATE_DIR = $T/$state
MACHINE = 127.0.0.1
SSH_CONFIG = $T/ssh_config
CONNECT_TIMEOUT = 1
MAKE_CMD = $MAKE
BUILD_OPTIONS = -j$(nproc)
LOCALVERSION = -e2e
MIN_CONFIG = $FULL_CONFIG
BUILD_TYPE = useconfig:$FULL_CONFIG
BUILD_NOCLEAN = 1
NO_INSTALL = 1
REBOOT_TYPE = script
REBOOT_SCRIPT = true
POWER_CYCLE = sh $T/power.sh cycle
POWER_OFF = sh $T/power.sh off
POWEROFF_ON_SUCCESS = 1
CONSOLE = tail -n 0 -F $T/serial.log
SUCCESS_LINE = ktest: booted
TIMEOUT = 60
BOOTED_TIMEOUT = 2
SLEEP_TIME = 1
BISECT_SLEEP_TIME = 1
EOF2
	echo "TEST_START"
	for l in "$@"; do echo "$l"; done
}

conf st-boot "TEST_TYPE = boot" "CHECKOUT = $S7" >boot.conf
run_ktest boot.conf
expect_rc 0 "boot of s7 on a box made of commands passes"
check "the power script booted it" grep -q '^cycle' power.log
check "the console command showed its boot" grep -q 'ktest lab: step 7' st-boot.log
check "POWEROFF_ON_SUCCESS switched it off at the end" test "$(tail -n 1 power.log)" = off
check "no qemu is left running" sh -c "! test -s $T/qemu.pid"

: >power.log
# (s16..s19: two steps, s18 BAD and s17 GOOD, the bisect's every kind of
# boot on this box; longer ranges are test_boot_qemu's)
conf st-bisect "TEST_TYPE = bisect" "BISECT_TYPE = boot" \
	"BISECT_GOOD = $S16" "BISECT_BAD = $S19" >bisect.conf
run_ktest bisect.conf
expect_rc 0 "bisect (boot) on the command box succeeds"
check "it finds the boot regression s18" grep -q "$S18 is the first bad commit" out
consistent='.tests[0].steps | all((.subject | capture("[(]s(?<n>[0-9]+)[)]").n | tonumber) as $n | (.verdict == "BAD") == ($n >= 18 and $n < 24))'
check "every verdict is the truth about the commit booted" jqe "$consistent" st-bisect/report.json
check "a good and a bad boot among them" \
	jqe '[.tests[0].steps[].verdict] | (index("GOOD") != null and index("BAD") != null)' st-bisect/report.json
check "and the box is off at the end" test "$(tail -n 1 power.log)" = off
finish
