#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Faults ktest.pl shows on a lab like ours, each proven absent. The box is
# made of commands (tests/cli/cmdbox.inc): its serial line is a file that
# POWER_CYCLE (or a "reboot" through SSH_EXEC) appends the next boot's
# console log to, read by CONSOLE = tail -F; ssh to it is refused unless
# SSH_EXEC fakes it.
#
#  1. a console reader that ignores SIGINT: ktest.pl hung for ever on close
#  2. stdin at end of file: ktest.pl's console waits spun at 100% CPU
#  3. after a panic, ktest.pl power-cycled the healthy box a second time
#     (its 1-second console flush swallowed the new boot's banner)
#  4. ktest.pl's default REBOOT ignored SSH_EXEC
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
rm -rf state* tmp console.log power ssh.log boots
. "$KTEST_SRC/tests/cli/cmdbox.inc"

conf() {	# conf STATE CONSOLE EXTRA...
	cmdbox_conf "$1" "$2"
	shift 2
	echo "TIMEOUT = 5"
	echo "SLEEP_TIME = 1"
	for l in "$@"; do echo "$l"; done
}
fresh() { : >console.log; rm -f power ssh.log; printf '%s\n' "$@" >boots; }

# 1. a console that ignores SIGINT is still closed, and promptly
fresh good
conf st1 "sh -c 'trap \"\" INT; exec tail -n +1 -F $T/console.log'" \
	"TEST_START" "TEST_TYPE = boot" >f1.conf
start=$(date +%s)
timeout 60 "$KTEST" f1.conf >out 2>err </dev/null
rc=$?
took=$(( $(date +%s) - start ))
check "a boot whose console ignores SIGINT passes (exit $rc)" test "$rc" -eq 0
check "and ktest ends promptly (${took}s)" test "$took" -lt 20
check "leaving no console reader behind" \
	sh -c "! pgrep -f 'tail -n [+]1 -F $T/console.log' >/dev/null"

# 2. stdin at end of file: a console wait is idle, not a busy loop
fresh good
: >silent.log
conf st2 "tail -n +1 -F $T/silent.log" "TEST_START" "TEST_TYPE = boot" >f2.conf
start=$(date +%s)
cpu=$(bash -c 'TIMEFORMAT="%U %S"; { time "$0" "$1" >/dev/null 2>&1 </dev/null; } 2>&1' \
	"$KTEST" f2.conf | awk '{ printf "%d", ($1 + $2) * 1000 }')
took=$(( $(date +%s) - start ))
check "the console was waited on for TIMEOUT (${took}s)" test "$took" -ge 5
check "a silent console that times out fails the boot" \
	grep -q 'never got a boot prompt' st2/report.json
check "5 s of waiting on a silent console with stdin at EOF cost ${cpu} ms of CPU" \
	test "$cpu" -lt 500

# 3. after a panic, one power cycle brings the healthy box back
fresh panic good good
conf st3 "tail -n +1 -F $T/console.log" "DIE_ON_FAILURE = 0" \
	"REBOOT_ON_SUCCESS = 0" \
	"TEST_START" "TEST_TYPE = boot" >f3.conf
run_ktest f3.conf
expect_rc 1 "a boot that panics fails"
check "the box was cycled twice: the boot, then back to good ($(wc -l <power 2>/dev/null))" \
	test "$(wc -l <power)" -eq 2
check "and the good kernel's boot after the panic was seen" \
	sh -c "sed -n '/Kernel panic/,\$p' st3.log | grep -q '^box login:'"

# 4. the default REBOOT goes through SSH_EXEC when the config sets it
fresh good good
cat >fakessh.sh <<EOF2
#!/bin/sh
echo "\$*" >> $T/ssh.log
case "\$*" in *reboot*) sh $T/boot.sh reboot ;; esac
exit 0
EOF2
conf st4 "tail -n +1 -F $T/console.log" \
	"SSH_EXEC = sh $T/fakessh.sh \$SSH_COMMAND" \
	"TEST_START" "TEST_TYPE = boot" >f4.conf
run_ktest f4.conf
expect_rc 0 "a boot on a box reached through SSH_EXEC passes"
check "the reboot went through SSH_EXEC" grep -q 'reboot' ssh.log
check "and POWER_CYCLE was not needed" sh -c "! grep -q cycle power"
finish
