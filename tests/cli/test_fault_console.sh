#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Console faults at run level (doc/faults.md): the ktest binary on a real
# config, a box made of commands, one fault injected each time; the outcome
# is a named verdict and a clear message, no line lost, no crash, and no
# commit blamed for the lab's fault.
#
#  1. a triple fault: our kernel's banner, then another kernel's, before or
#     after the login prompt: BAD naming both (ktest.pl: the same before
#     the prompt, a success after it); DETECT_TRIPLE_FAULT = 0: it boots
#  2. the console command hits EOF in the middle of the boot and, run
#     again, prints the rest: the boot passes, one stream of lines
#  3. the serial device (a pty behind a symlink, as a relay or udev keeps
#     it) vanishes in the middle of the boot and comes back: the boot
#     passes; when it never comes back: INFRA naming the device
#  4. a boot bisect whose console drops once in the middle of a good
#     commit's boot names the same first bad commit as an undisturbed one
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
rm -rf st-* tmp src rel norel build-out ./*.conf ./*.log ./*.txt power con.* con4.* relay.* ttyS0* on drop drop_on next boots
t_start=$(date +%s)
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config

relays=
cleanup() { for p in $relays; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# A tree whose kernelrelease is 6.1.0-a: BUILD_TYPE = nobuild boots what
# is built, and ktest.pl's get_version still asks the tree for its release
mkdir -p rel norel
printf 'kernelrelease:\n\t@echo 6.1.0-a\n' >rel/Makefile

conf() {	# conf STATE BUILD_DIR POWER_CYCLE CONSOLE EXTRA...
	cat <<EOF
MACHINE = 127.0.0.1
BUILD_DIR = $T/$2
OUTPUT_DIR = $T/build-out
TMP_DIR = $T/tmp
STATE_DIR = $T/$1
LOG_FILE = $T/$1.log
BUILD_TYPE = nobuild
NO_INSTALL = 1
SSH_CONFIG = $T/ssh_config
CONNECT_TIMEOUT = 1
POWER_CYCLE = $3
REBOOT_TYPE = script
REBOOT_SCRIPT = true
CONSOLE = $4
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
STOP_AFTER_FAILURE = 1
TIMEOUT = 4
SLEEP_TIME = 0
REBOOT_ON_SUCCESS = 0
TEST_START
TEST_TYPE = boot
EOF
	shift 4
	for l in "$@"; do echo "$l"; done
}
# verdict STATE: the boot step's verdict and failed phase ("BAD boot")
verdict() {
	jq -r '.tests[0].steps[0] | "\(.verdict) \(.failed_phase // "-")"' "$1/report.json" 2>/dev/null
}
why() { jq -r '.tests[0].steps[0].why // ""' "$1/report.json" 2>/dev/null; }
dmesg=$T/tmp/dmesg-127.0.0.1

# ---- 1. a triple fault ----
# The box: POWER_CYCLE appends the boot to console.log, read by tail -F
cat >tf-before.log <<'EOF'
[    0.000000] Linux version 6.1.0-a (t@t) (gcc 12.2.0) #1 SMP
[    0.100000] Calibrating delay loop... 4000.00 BogoMIPS
[    0.200000] x86/cpu: triple fault
[    0.000000] Linux version 6.1.0-b (t@t) (gcc 12.2.0) #1 SMP
Debian GNU/Linux 12 box ttyS0
box login:
EOF
cat >tf-after.log <<'EOF'
[    0.000000] Linux version 6.1.0-a (t@t) (gcc 12.2.0) #1 SMP
[    0.100000] Calibrating delay loop... 4000.00 BogoMIPS
Debian GNU/Linux 12 box ttyS0
box login:
[   10.000000] x86/cpu: triple fault
[    0.000000] Linux version 6.1.0-b (t@t) (gcc 12.2.0) #1 SMP
Debian GNU/Linux 12 box ttyS0
box login:
EOF
# (console.log is emptied before each run and read from its start: what
# POWER_CYCLE appends before tail is up is not skipped)
tailf="tail -n +1 -F $T/console.log"
for w in before after; do
	conf "st-tf-$w" rel "cat $T/tf-$w.log >> $T/console.log" "$tailf" >f.conf
	: >console.log; run_ktest f.conf
	expect_rc 1 "triple fault $w the login prompt: the boot fails (exit $rc)"
	check "triple fault $w the login prompt: BAD in the boot ($(verdict st-tf-$w))" \
		test "$(verdict "st-tf-$w")" = "BAD boot"
	check "triple fault $w the login prompt: the message names both kernels" \
		grep -q "KTEST RESULT: TEST 1 Failed: failed boot: Already booted in Linux kernel 6.1.0-a, but now we booted into Linux kernel 6.1.0-b: assuming a triple fault (set DETECT_TRIPLE_FAULT = 0 to disable); it came $w the boot prompt" out
	check "triple fault $w the login prompt: the same in the report" \
		sh -c "jq -r '.tests[0].steps[0].why' st-tf-$w/report.json | grep -q 'Already booted in Linux kernel 6.1.0-a, but now we booted into Linux kernel 6.1.0-b'"
	check "triple fault $w the login prompt: the new kernel's banner is in the dmesg file" \
		grep -q 'Linux version 6.1.0-b' "$dmesg"

	conf "st-tf-$w-off" rel "cat $T/tf-$w.log >> $T/console.log" "$tailf" \
		"DETECT_TRIPLE_FAULT = 0" >f.conf
	: >console.log; run_ktest f.conf
	expect_rc 0 "DETECT_TRIPLE_FAULT = 0, a triple fault $w the prompt: the boot passes"
	check "DETECT_TRIPLE_FAULT = 0, $w: GOOD ($(verdict "st-tf-$w-off"))" \
		test "$(verdict "st-tf-$w-off")" = "GOOD -"
	check "DETECT_TRIPLE_FAULT = 0, $w: the whole console is in the dmesg file" \
		cmp -s "$dmesg" "tf-$w.log"
done
# Our kernel's release unknown (no tree): as ktest.pl, whose get_version
# then gives "", no banner is ours and nothing is a triple fault
conf st-tf-norel norel "cat $T/tf-before.log >> $T/console.log" "$tailf" >f.conf
: >console.log; run_ktest f.conf
expect_rc 0 "no release known (BUILD_DIR is no kernel tree): two banners are no triple fault, as in ktest.pl"
# Another kernel's banner before ours is the old kernel's, not a fault
{ sed -n 4p tf-before.log; sed -n '1,3p;5,6p' tf-before.log; } >tf-old.log
conf st-tf-old rel "cat $T/tf-old.log >> $T/console.log" "$tailf" >f.conf
: >console.log; run_ktest f.conf
expect_rc 0 "another kernel's banner before ours is no triple fault"
t1=$(date +%s)
echo "# 1. triple fault: $((t1 - t_start)) s"

# ---- 2. the console command hits EOF mid-boot, then comes back ----
cat >half1.log <<'EOF'
[    0.000000] Linux version 6.1.0-a (t@t) (gcc 12.2.0) #1 SMP
[    0.100000] Calibrating delay loop... 4000.00 BogoMIPS
[    0.200000] pid_max: default: 32768 minimum: 301
EOF
cat >half2.log <<'EOF'
[    0.300000] Freeing unused kernel image memory: 2048K
[    1.000000] systemd[1]: Reached target Basic System.
Debian GNU/Linux 12 box ttyS0
box login:
EOF
cat half1.log half2.log >whole.log
# The console command waits for the power cycle, prints the first half of
# the boot and exits (EOF); run again, it prints the rest
cat >con2.sh <<EOF
echo run >> $T/con.runs
while [ ! -e $T/on ]; do sleep 0.05; done
if [ ! -e $T/con.half ]; then
	touch $T/con.half
	cat $T/half1.log
	exit 0
fi
cat $T/half2.log
exec sleep 60
EOF
rm -f on con.half con.runs
conf st-eof norel "touch $T/on" "sh $T/con2.sh" >f.conf
run_ktest f.conf
expect_rc 0 "a console command that ends in the middle of the boot and comes back: the boot passes"
check "EOF mid-boot: GOOD ($(verdict st-eof))" test "$(verdict st-eof)" = "GOOD -"
check "EOF mid-boot: the console command ran again ($(wc -l <con.runs) runs)" \
	test "$(wc -l <con.runs)" -eq 2
check "EOF mid-boot: the dmesg file holds both halves, in order, none lost" \
	cmp -s "$dmesg" whole.log
check "EOF mid-boot: and the log too" \
	sh -c "grep -A 1 'pid_max' st-eof.log | grep -q 'Freeing unused kernel'"
t2=$(date +%s)
echo "# 2. EOF: $((t2 - t1)) s"

# ---- 3. the serial device vanishes mid-boot, and comes back ----
# A relay keeps a pty behind the name ttyS0 (as socat link= or udev's
# /dev/serial/by-id do); at the power cycle it writes the first half of
# the boot, then the device goes away (the pty closed, the name removed);
# GAP seconds later a new pty is there under the same name with the rest.
# GAP "never": it does not come back.
cat >relay.py <<'EOF'
import os, sys, time, tty
link, trigger, first, second, gap = sys.argv[1:6]
def up():
    m, s = os.openpty()
    tty.setraw(s)
    tmp = link + '.new'
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.ttyname(s), tmp)
    os.rename(tmp, link)
    return m, s
def crlf(path):
    with open(path, 'rb') as f:
        return f.read().replace(b'\n', b'\r\n')
m, s = up()
while not os.path.exists(trigger):
    time.sleep(0.05)
os.write(m, crlf(first))
time.sleep(0.5)
os.unlink(link)
os.close(s)
os.close(m)
if gap == 'never':
    time.sleep(60)
    sys.exit(0)
time.sleep(float(gap))
m, s = up()
time.sleep(0.3)
os.write(m, crlf(second))
time.sleep(60)
EOF
relay() {	# relay GAP: started, the device there
	rm -f on ttyS0
	python3 relay.py "$T/ttyS0" "$T/on" half1.log half2.log "$1" &
	relays="$relays $!"
	relay_pid=$!
	i=0
	while [ ! -e ttyS0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}
relay 1
conf st-serial norel "touch $T/on" "serial:$T/ttyS0" >f.conf
run_ktest f.conf
kill "$relay_pid" 2>/dev/null
expect_rc 0 "a serial device that vanishes mid-boot and comes back a second later: the boot passes"
check "serial back: GOOD ($(verdict st-serial))" test "$(verdict st-serial)" = "GOOD -"
check "serial back: the dmesg file holds both halves, in order, none lost" \
	cmp -s "$dmesg" whole.log

relay never
start=$(date +%s)
conf st-serial-gone norel "touch $T/on" "serial:$T/ttyS0" "TIMEOUT = 2" >f.conf
run_ktest f.conf
took=$(( $(date +%s) - start ))
kill "$relay_pid" 2>/dev/null
expect_rc 3 "a serial device that vanishes mid-boot for good: exit 3 (${took}s)"
check "serial gone: INFRA, not BAD ($(verdict st-serial-gone))" \
	test "$(verdict st-serial-gone)" = "INFRA boot"
check "serial gone: the message names the box and the device ($(why st-serial-gone))" \
	grep -q "Failed: .*the console of 127.0.0.1: console serial:$T/ttyS0 went away and did not come back: serial console $T/ttyS0: No such file or directory" out
check "serial gone: tried again, every try INFRA, none BAD" \
	jqe '[.tests[0].steps[] | .verdict] | length == 3 and all(. == "INFRA")' st-serial-gone/report.json
check "serial gone: the lines before it went are in the log" \
	test "$(grep -cFx -f half1.log st-serial-gone.log)" -eq 3
# the step is tried again twice: the first attempt's console is kept
check "serial gone: the first attempt's console is kept, as the log says ($dmesg-try1)" \
	sh -c "cmp -s '$dmesg-try1' half1.log &&
	       grep -q 'The console of that attempt: $dmesg-try1' out"
t3=$(date +%s)
echo "# 3. serial: $((t3 - t2)) s"

# ---- 4. a boot bisect whose console drops once mid-boot ----
# A git tree and a fake kbuild (as test_run.sh's): from c6 on the kernel
# hangs after two lines, c1..c5 boot. The box boots what is in OUTPUT_DIR
# after SWITCH_TO_TEST, its good kernel after SWITCH_TO_GOOD, each boot
# appended to console4.log. BISECT_SLEEP_TIME = 0: the good kernel's boot
# is still unread when the next step boots (and is not that step's).
src=$T/src
mkdir -p "$src"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME=$T
g() { git -C "$src" "$@"; }
cat >"$src/Makefile" <<'EOF'
O ?= .
all:
	@echo '  CC      init/main.o'
	@mkdir -p $(O)/arch/x86/boot && cp version $(O)/arch/x86/boot/bzImage
mrproper:
	@rm -rf $(O)/.config $(O)/arch
olddefconfig oldnoconfig defconfig:
	@touch $(O)/.config
kernelrelease:
	@echo 6.1.0-t
EOF
echo 0 >"$src/version"
g init -q
g add Makefile version
g commit -q -m "c0: the tree"
c0=$(g rev-parse HEAD)
for n in $(seq 1 10); do
	echo "$n" >"$src/version"
	g commit -q -m "c$n: change $n" version
	eval "c$n=\$(g rev-parse HEAD)"
done
# The box; with drop_on holding V, the console drops after the second line
# of the boot of the kernel built from cV
cat >boot4.sh <<EOF
v=\$(cat $T/build-out/arch/x86/boot/bzImage)
echo "\$(cat $T/next) \$v" >> $T/boots
if [ "\$(cat $T/next)" = good ]; then
	printf '[    0.000000] Linux version 6.1.0-good (t@t) #1\nDebian GNU/Linux 12 box ttyS0\nbox login:\n' >> $T/console4.log
	exit 0
fi
if [ "\$v" = "\$(cat $T/drop_on 2>/dev/null)" ]; then
	rm $T/drop_on
	echo \$(( \$(wc -l < $T/console4.log) + 2 )) > $T/drop
fi
printf '[    0.000000] Linux version 6.1.0-t (t@t) #1\n[    0.100000] Calibrating delay loop\n' >> $T/console4.log
[ "\$v" -ge 6 ] && exit 0
printf '[    0.200000] pid_max: default: 32768\nDebian GNU/Linux 12 box ttyS0\nbox login:\n' >> $T/console4.log
EOF
# The console: the box's serial line from where its last run stopped (as a
# console server keeps it); at line "drop" it hangs up, once
cat >con4.sh <<EOF
echo run >> $T/con4.runs
pos=\$(cat $T/con4.pos 2>/dev/null || echo 0)
tail -n +\$((pos + 1)) -F $T/console4.log 2>/dev/null | while IFS= read -r l; do
	printf '%s\n' "\$l"
	pos=\$((pos + 1))
	echo \$pos > $T/con4.pos
	if [ "\$pos" = "\$(cat $T/drop 2>/dev/null)" ]; then
		rm $T/drop
		kill 0
	fi
done
EOF
bisect4() {	# bisect4 STATE
	rm -f con4.runs con4.pos drop next boots
	: >console4.log
	cat >b4.conf <<EOF
MACHINE = 127.0.0.1
BUILD_DIR = $src
OUTPUT_DIR = $T/build-out
TMP_DIR = $T/tmp
STATE_DIR = $T/$1
LOG_FILE = $T/$1.log
BUILD_TYPE = defconfig
NO_INSTALL = 1
SSH_CONFIG = $T/ssh_config
CONNECT_TIMEOUT = 1
POWER_CYCLE = sh $T/boot4.sh
SWITCH_TO_TEST = echo test > $T/next
SWITCH_TO_GOOD = echo good > $T/next
REBOOT_TYPE = script
REBOOT_SCRIPT = true
CONSOLE = sh $T/con4.sh
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
TIMEOUT = 2
BISECT_SLEEP_TIME = 0
TEST_START
TEST_TYPE = bisect
BISECT_TYPE = boot
BISECT_GOOD = $c0
BISECT_BAD = $c10
EOF
	run_ktest b4.conf
}
steps() { jq -c '[.tests[0].steps[] | [.subject[0:3], .verdict]]' "$1/report.json" 2>/dev/null; }
bisect4 st-b4
base_rc=$rc
check "the undisturbed boot bisect names c6 (exit $rc): $(steps st-b4)" \
	jqe ".tests[0].first_bad_commit == \"$c6\"" st-b4/report.json
check "no step took the good kernel's unread login prompt for its own" \
	jqe '[.tests[0].steps[] | select(.verdict == "GOOD") | .subject[1:] | split(":")[0] | tonumber] | all(. < 6)' st-b4/report.json
# the first commit it judged good: its boot loses the console
first_good=$(jq -r '[.tests[0].steps[] | select(.verdict == "GOOD")][0].subject' st-b4/report.json | sed 's/^c\([0-9]*\):.*/\1/')
echo "$first_good" >drop_on
bisect4 st-b4-drop
expect_rc "$base_rc" "a console that drops in the middle of c$first_good's boot: the bisect ends as the undisturbed one"
check "the console did drop, and was run again ($(wc -l <con4.runs) runs)" \
	test "$(wc -l <con4.runs)" -eq 2 -a ! -e drop
check "the same first bad commit, c6" \
	jqe ".tests[0].first_bad_commit == \"$c6\"" st-b4-drop/report.json
check "the same steps and verdicts: $(steps st-b4-drop)" \
	test "$(steps st-b4-drop)" = "$(steps st-b4)"
# the first boot in the log, its console lines: all five, in order
awk '/^Booting/ { on = 1 } on && /^Reboot and wait/ { exit } on' st-b4-drop.log |
	grep -e '^\[' -e '^Debian' -e 'login:$' >first-boot.txt
printf '%s\n' '[    0.000000] Linux version 6.1.0-t (t@t) #1' \
	'[    0.100000] Calibrating delay loop' '[    0.200000] pid_max: default: 32768' \
	'Debian GNU/Linux 12 box ttyS0' 'box login:' >want-boot.txt
check "c$first_good's boot, read across the drop, is whole in the log" \
	cmp -s first-boot.txt want-boot.txt
t4=$(date +%s)
echo "# 4. bisect: $((t4 - t3)) s"

check "no console command or reader is left behind" \
	sh -c "! pgrep -f '$T/(con2\\.sh|con4\\.sh|console4?\\.log)' >/dev/null"
echo "# the whole script: $(( $(date +%s) - t_start )) s"
finish
