#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# doc/waits.md: every wait ends on its event; the configured time is only
# its bound. The box is made of commands (as in test_run_faults.sh): its
# serial line is a file that POWER_CYCLE (or "reboot" through SSH_EXEC)
# appends the next boot's console log to, read by CONSOLE = tail -F; ssh
# to it is refused unless SSH_EXEC fakes it.
#
#  1. SLEEP_TIME = 60, the good kernel prints its login prompt at once:
#     the reboot to good ends on it (ktest.pl waited 60 s of quiet)
#  1b. REBOOT_SUCCESS_LINE, a Perl regex: the line it matches ends it
#  2. a good kernel that never prints it: SLEEP_TIME of quiet still ends it
#  3. no login prompt, but the box answers ssh: that ends it
#  4. POWERCYCLE_AFTER_REBOOT = 60: the kernel's "reboot: Restarting
#     system" brings the power cycle at once
#  5. a box that never says it: the power cycle comes after the delay
#  6. a boot bisect with BISECT_SLEEP_TIME = 60: each step's reboot to
#     good ends on the login prompt
#  7. the end of the run: POWEROFF_ON_SUCCESS with POWEROFF_AFTER_HALT =
#     60, the kernel's "reboot: System halted" brings the power off at
#     once; REBOOT_ON_SUCCESS with POWERCYCLE_AFTER_REBOOT = 60, "reboot:
#     Restarting system" the power cycle; an old shutdown's line the
#     console replays when it opens does not end the wait; a console that
#     does not open then is said, and the whole delay waited
#  8. the built-in qemu box (a fake qemu-system-x86_64 that says a last
#     line when it is stopped): before each boot the box is turned off
#     and that line, queued on its serial line, goes to the log as the
#     old kernel's, not to the next boot (read with no quiet time: nothing
#     more can come)
#  9. SIGINT while a boot waits for its console (TIMEOUT = 60): the run
#     stops at once, exit 3, and the cut boot is no INFRA trouble retried
# (REBOOT_ON_SUCCESS = 0 in 4 and 5: their end-of-run reboot is 7's)
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config
cat >good.log <<'EOF2'
[    0.000000] Linux version 6.1.0-t (t@t) #1
Debian GNU/Linux 12 box ttyS0
box login:
EOF2
cat >mute.log <<'EOF2'
[    0.000000] Linux version 6.1.0-t (t@t) #1
[    1.000000] no getty on this console
EOF2
: >none.log
# The next boot: the logs listed in "boots", one per power cycle or reboot
cat >boot.sh <<EOF2
#!/bin/sh
echo "\$1" >> $T/power
next=\$(head -n 1 $T/boots); sed -i 1d $T/boots
cat "$T/\${next:-good}.log" >> $T/console.log
EOF2
# ssh that answers; its "reboot" says the kernel's last line ($T/restart)
# or nothing ($T/silent-reboot) or boots the next log; its "halt" says the
# kernel's last line ($T/halted)
cat >fakessh.sh <<EOF2
#!/bin/sh
echo "\$*" >> $T/ssh.log
case "\$*" in
*halt*)
	if [ -e $T/halted ]; then
		echo "[   99.000000] reboot: System halted" >> $T/console.log
	fi ;;
*reboot*)
	if [ -e $T/restart ]; then
		echo "[   99.000000] reboot: Restarting system" >> $T/console.log
	elif [ -e $T/silent-reboot ]; then
		:
	else
		sh $T/boot.sh reboot
	fi ;;
esac
exit 0
EOF2

conf() {	# conf STATE EXTRA...
	state=$1
	shift
	cat <<EOF2
MACHINE = 127.0.0.1
BUILD_DIR = $T
OUTPUT_DIR = $T/build-out
TMP_DIR = $T/tmp
STATE_DIR = $T/$state
LOG_FILE = $T/$state.log
BUILD_TYPE = nobuild
NO_INSTALL = 1
SSH_CONFIG = $T/ssh_config
CONNECT_TIMEOUT = 1
POWER_CYCLE = sh $T/boot.sh cycle
REBOOT_TYPE = script
REBOOT_SCRIPT = true
CONSOLE = tail -n +1 -F $T/console.log
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
STOP_AFTER_FAILURE = 1
TIMEOUT = 10
EOF2
	for l in "$@"; do echo "$l"; done
}
fresh() {
	: >console.log
	rm -f power ssh.log restart silent-reboot halted
	printf '%s\n' "$@" >boots
}
timed() {	# timed CONF: run_ktest, $took in seconds
	start=$(date +%s)
	run_ktest "$1"
	took=$(( $(date +%s) - start ))
}
two_boots() { echo "TEST_START"; echo "TEST_TYPE = boot"; echo "TEST_START"; echo "TEST_TYPE = boot"; }

# 1. the login prompt ends the reboot to good
fresh good good good
conf st1 "SLEEP_TIME = 60" >w1.conf
two_boots >>w1.conf
timed w1.conf
expect_rc 0 "two boots with SLEEP_TIME = 60 between them pass"
check "the reboot to good ended on the login prompt, not after 60 s (${took}s)" \
	test "$took" -lt 20
check "and the log says what ended it" \
	grep -q 'the good kernel is up (login:) after [0-9.]* s' st1.log
check "the box was cycled 4 times (test, good, test, good at the end)" \
	test "$(wc -l <power)" -eq 4

# 1b. REBOOT_SUCCESS_LINE is a Perl regex, as in ktest.pl: one that no
# line holds as text ends the reboot to good on the line it matches
fresh good good good
conf st1b "SLEEP_TIME = 20" 'REBOOT_SUCCESS_LINE = ^Debian GNU/Linux [0-9]+ \S+ ttyS0$' >w1b.conf
two_boots >>w1b.conf
timed w1b.conf
expect_rc 0 "two boots with a regex REBOOT_SUCCESS_LINE"
check "the reboot to good ended on the line the regex matches, not after 20 s (${took}s)" \
	test "$took" -lt 15
check "and the log names it" \
	grep -q 'the good kernel is up (^Debian GNU/Linux \[0-9\]+ \\S+ ttyS0\$) after' st1b.log

# 2. no login prompt, no ssh: SLEEP_TIME of quiet is the bound
fresh good mute good
conf st2 "SLEEP_TIME = 4" >w2.conf
two_boots >>w2.conf
timed w2.conf
expect_rc 0 "a good kernel without a login prompt: the run goes on"
check "after SLEEP_TIME of quiet (${took}s >= 4)" test "$took" -ge 4
check "and not long after (${took}s)" test "$took" -lt 25
check "the good kernel was not said to be up" \
	sh -c "! grep -q 'the good kernel is up' st2.log"

# 3. no login prompt, but ssh answers
fresh good mute good
conf st3 "SLEEP_TIME = 60" "SSH_EXEC = sh $T/fakessh.sh \$SSH_COMMAND" >w3.conf
two_boots >>w3.conf
timed w3.conf
expect_rc 0 "a good kernel without a login prompt that answers ssh"
check "the reboot to good ended when ssh answered, not after 60 s (${took}s)" \
	test "$took" -lt 20
check "and the log says so" \
	grep -q 'the good kernel is up (it answers ssh)' st3.log

# 4. POWERCYCLE_AFTER_REBOOT ends on "reboot: Restarting system"
fresh good
touch restart
conf st4 "POWERCYCLE_AFTER_REBOOT = 60" "REBOOT_ON_SUCCESS = 0" \
	"SSH_EXEC = sh $T/fakessh.sh \$SSH_COMMAND" \
	"TEST_START" "TEST_TYPE = boot" >w4.conf
timed w4.conf
expect_rc 0 "a boot with POWERCYCLE_AFTER_REBOOT = 60 passes"
check "the power cycle came on the kernel's last line (${took}s)" \
	test "$took" -lt 15
check "the log says so" grep -q 'the box restarts: power cycle now' st4.log
check "the box was cycled once" test "$(wc -l <power)" -eq 1

# 5. a box that never says it: the power cycle after the whole delay
fresh good
touch silent-reboot
conf st5 "POWERCYCLE_AFTER_REBOOT = 3" "REBOOT_ON_SUCCESS = 0" \
	"SSH_EXEC = sh $T/fakessh.sh \$SSH_COMMAND" \
	"TEST_START" "TEST_TYPE = boot" >w5.conf
timed w5.conf
expect_rc 0 "a box that never prints its last line still boots"
check "the power cycle waited POWERCYCLE_AFTER_REBOOT (${took}s >= 3)" \
	test "$took" -ge 3
check "and not much more (${took}s)" test "$took" -lt 15
check "the box was cycled once" test "$(wc -l <power)" -eq 1

# 6. a boot bisect: BISECT_SLEEP_TIME ends on the login prompt
src=$T/src
rm -rf "$src"
mkdir -p "$src"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME=$T
git -C "$src" init -q
# a tree that builds an image at once (NO_INSTALL: nothing is installed)
cat >"$src/Makefile" <<'EOF2'
O ?= .
all:
	@mkdir -p $(O)/arch/x86/boot && echo k > $(O)/arch/x86/boot/bzImage
mrproper:
	@rm -rf $(O)/arch
olddefconfig oldnoconfig oldconfig:
	@touch $(O)/.config
kernelrelease:
	@echo 6.1.0
EOF2
git -C "$src" add Makefile
for n in 0 1 2 3 4; do
	echo "$n" >"$src/f"
	git -C "$src" add f
	git -C "$src" commit -q -m "c$n"
done
c0=$(git -C "$src" rev-parse HEAD~4)
c4=$(git -C "$src" rev-parse HEAD)
fresh
conf st6 "BISECT_SLEEP_TIME = 60" "REBOOT_ON_SUCCESS = 0" >w6.conf
sed -i "s|^BUILD_DIR = .*|BUILD_DIR = $src|" w6.conf
printf 'TEST_START\nTEST_TYPE = bisect\nBISECT_TYPE = boot\n' >>w6.conf
printf 'BISECT_GOOD = %s\nBISECT_BAD = %s\n' "$c0" "$c4" >>w6.conf
timed w6.conf
expect_rc 0 "a boot bisect with BISECT_SLEEP_TIME = 60 ends"
check "it names the last commit (every boot was good)" \
	test "$(jq -r '.tests[0].first_bad_commit' st6/report.json)" = "$c4"
ups=$(grep -c 'the good kernel is up (login:)' st6.log)
check "each step's reboot to good ended on the login prompt ($ups)" \
	test "$ups" -ge 2
check "in ${took}s, not 60 s a step" test "$took" -lt 30

# 7. the end of the run's halt and reboot end on the kernel's last line
end_conf() {	# end_conf STATE EXTRA...: a boot, then the end of the run
	conf "$@" "POWER_OFF = sh $T/boot.sh off" \
		"SSH_EXEC = sh $T/fakessh.sh \$SSH_COMMAND" \
		"TEST_START" "TEST_TYPE = boot"
}
fresh good
touch halted
end_conf st7 "POWEROFF_ON_SUCCESS = 1" "POWEROFF_AFTER_HALT = 60" >w7.conf
timed w7.conf
expect_rc 0 "a boot with POWEROFF_ON_SUCCESS and POWEROFF_AFTER_HALT = 60 passes"
check "the power went off on the kernel's last line (${took}s)" \
	test "$took" -lt 20
check "the log says so" grep -q 'the box is down: power off now' st7.log
check "the box was halted, then its power switched off" \
	sh -c "grep -q halt ssh.log && [ \"\$(tail -n 1 power)\" = off ]"

# 7b. the same with the line on the console from an earlier halt (tail
# -n +1 replays it when the console opens) and a halt that says nothing:
# the whole delay
fresh good
echo "[   98.000000] reboot: System halted" >console.log
end_conf st7b "POWEROFF_ON_SUCCESS = 1" "POWEROFF_AFTER_HALT = 3" >w7b.conf
timed w7b.conf
expect_rc 0 "a halt that says nothing: the run passes"
check "the old line did not end the wait: POWEROFF_AFTER_HALT went by (${took}s >= 3)" \
	sh -c "[ '$took' -ge 3 ] && ! grep -q 'the box is down' st7b.log"
check "then the power went off" test "$(tail -n 1 power)" = off

# 7c. REBOOT_ON_SUCCESS: the end-of-run reboot with POWERCYCLE_AFTER_REBOOT
fresh good good
touch restart
end_conf st7c "POWERCYCLE_AFTER_REBOOT = 60" >w7c.conf
timed w7c.conf
expect_rc 0 "a boot with POWERCYCLE_AFTER_REBOOT = 60 and REBOOT_ON_SUCCESS passes"
check "the end-of-run power cycle came on the kernel's last line (${took}s)" \
	test "$took" -lt 20
check "the log says so" grep -q 'the box restarts: power cycle now' st7c.log
check "the box was cycled twice (the boot, the end)" \
	test "$(grep -c cycle power)" -eq 2

# 7d. a build test (no console needed), then the halt: the console does
# not open, which is said, and the whole delay goes by before POWER_OFF
fresh
end_conf st7d "POWEROFF_ON_SUCCESS = 1" "POWEROFF_AFTER_HALT = 3" |
	sed "s|^CONSOLE = .*|CONSOLE = pty:$T/no-such-tty|; s|^TEST_TYPE = boot\$|TEST_TYPE = build|" >w7d.conf
timed w7d.conf
expect_rc 0 "a build test with POWEROFF_ON_SUCCESS and no console passes"
check "the console that did not open is said" \
	grep -q "^ktest: .*no-such-tty.*: POWEROFF_AFTER_HALT is waited whole$" out
check "the halt waited POWEROFF_AFTER_HALT (${took}s >= 3), then the power went off" \
	sh -c "[ '$took' -ge 3 ] && grep -q halt ssh.log && [ \"\$(tail -n 1 power)\" = off ]"

# 8. the qemu box: its last line, said when it was stopped after a step's
# verdict, is the old kernel's at the next boot. The fake qemu boots the
# commit checked out in BUILD_DIR (6's tree): from c3 on it panics. It
# takes 0.5 s to die, longer than the next step's build: the boot waits
# for it, and only then reads what it left.
mkdir -p fakeqemu
cat >fakeqemu/qemu-system-x86_64 <<EOF2
#!/bin/sh
k=\$(cat $src/f)
trap 'sleep 0.5; echo "fake qemu \$k: a line after the verdict"; exit 0' TERM
echo "[    0.000000] Linux version 6.1.0-t (t@t) #\$k"
if [ "\$k" -ge 3 ]; then
	echo "[    0.500000] Kernel panic - not syncing: the bug"
else
	echo "box login:"
fi
while :; do sleep 1 & wait \$!; done
EOF2
chmod +x fakeqemu/qemu-system-x86_64
conf st8 "REBOOT_ON_SUCCESS = 0" |
	sed "s|^BUILD_DIR = .*|BUILD_DIR = $src|; /^POWER_CYCLE/d; /^REBOOT_/d; /^CONSOLE/d" >w8.conf
{
	printf 'BOX_TYPE = qemu\nQEMU_KERNEL = %s\n' "$T/build-out/arch/x86/boot/bzImage"
	printf 'TEST_START\nTEST_TYPE = bisect\nBISECT_TYPE = boot\n'
	printf 'BISECT_GOOD = %s\nBISECT_BAD = %s\n' "$c0" "$c4"
} >>w8.conf
PATH=$T/fakeqemu:$PATH run_ktest w8.conf
expect_rc 0 "a boot bisect on the (fake) qemu box ends"
check "it names c3, the first that panics" \
	test "$(jq -r '.tests[0].first_bad_commit' st8/report.json)" = "$(git -C "$src" rev-parse HEAD~1)"
check "the box's last line after a verdict was read before the next boot, as the old kernel's" \
	grep -q "^ktest: 1 line on the console from before this boot" out
check "in the log, under the old kernel's heading, never in a boot" \
	sh -c "[ \"\$(grep -c 'a line after the verdict' st8.log)\" -ge 1 ] &&
		! grep -B1 'a line after the verdict' st8.log | grep -v -e 'a line after the verdict' -e '^--\$' |
			grep -qv 'the console before this boot'"

# 9. SIGINT during a boot that waits for its console
fresh none
conf st9 "REBOOT_ON_SUCCESS = 0" "TEST_START" "TEST_TYPE = boot" |
	sed 's/^TIMEOUT = 10$/TIMEOUT = 60/' >w9.conf
start=$(date +%s)
"$KTEST" w9.conf >out 2>err </dev/null &
pid=$!
n=0
while [ ! -s power ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
took=$(( $(date +%s) - start ))
expect_rc 3 "SIGINT during a boot's wait: exit 3"
check "at once, not after TIMEOUT (${took}s)" test "$took" -lt 30
check "saying how to resume" grep -q 'Interrupted: rerun the same command to resume' out
check "the cut boot is not retried as INFRA trouble, nor the box cycled again" \
	sh -c "! grep -q 'INFRA trouble' out && [ \"\$(wc -l <power)\" -eq 1 ]"
finish
