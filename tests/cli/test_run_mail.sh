#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Mail and the end-of-run / error power actions of ktest run. The mailers
# are fakes (sendmail and mail scripts in a temp dir, found through PATH or
# MAIL_PATH) that keep their argv and stdin, one pair of files per mail:
# nothing is ever sent. The box is made of commands as in test_run.sh:
# POWER_CYCLE plays a console log back, POWER_OFF writes to a file.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
src=$KTEST_TMP/src
rm -rf "$src" bin mails empty tmp log state-* power console.now
mkdir -p "$src" bin mails empty

export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME=$KTEST_TMP

# a kbuild that fails while $KTEST_TMP/broken exists
cat >"$src/Makefile" <<EOF
O ?= .
C := \$(O)/.config
all:
	@echo '  CC      init/main.o'
	@if [ -e $KTEST_TMP/broken ]; then echo 'init/main.c:20:1: error: expected ; before }'; exit 1; fi
	@mkdir -p \$(O)/arch/x86/boot && cp \$(C) \$(O)/arch/x86/boot/bzImage
	@echo 'Kernel: arch/x86/boot/bzImage is ready'
mrproper:
	@rm -rf \$(C) \$(O)/arch
olddefconfig oldnoconfig:
	@touch \$(C)
defconfig:
	@echo CONFIG_DEFAULT_ON=y > \$(C)
kernelrelease:
	@echo 6.1.0-t
EOF
git -C "$src" init -q && git -C "$src" add Makefile &&
	git -C "$src" commit -q -m "the tree"

# the fake mailers: mails/N.args (one argument a line) and mails/N.in
for m in sendmail mail; do
	cat >"bin/$m" <<EOF
#!/bin/sh
n=\$(( \$(ls $KTEST_TMP/mails | grep -c 'args\$') + 1 ))
printf '%s\n' "\$0" "\$@" >$KTEST_TMP/mails/\$n.args
cat >$KTEST_TMP/mails/\$n.in
EOF
	chmod +x "bin/$m"
done
nmails() { ls mails | grep -c 'args$'; }

common() {
	cat <<EOF
BUILD_DIR = $src
OUTPUT_DIR = $KTEST_TMP/build-out
TMP_DIR = $KTEST_TMP/tmp
LOG_FILE = $KTEST_TMP/log
CLEAR_LOG = 1
STATE_DIR = $KTEST_TMP/$1
MACHINE = box
BUILD_TYPE = defconfig
EOF
}

# ---- started and finished, through PATH ----
{ common state-1; cat <<EOF
MAILTO = dev@example.com
EMAIL_WHEN_STARTED = 1
TEST_START
TEST_TYPE = build
TEST_NAME = first
TEST_START
TEST_TYPE = build
EOF
} >mail.conf
rm -f mails/* broken
PATH="$KTEST_TMP/bin:$PATH" run_ktest mail.conf
expect_rc 0 "a run with MAILTO passes"
check "two mails went out (started, finished)" test "$(nmails)" -eq 2
check "sendmail is found in PATH and given -t MAILTO" \
	test "$(sed -n '2,$p' mails/1.args | tr '\n' ' ')" = "-t dev@example.com "
check "the first mail is the start, named TEST_NAME:TEST_TYPE" \
	grep -qx 'Subject: KTEST: Your \[first:build\] test was started' mails/1.in
check "addressed to MAILTO" grep -qx 'To: dev@example.com' mails/1.in
check "its body gives the start time" grep -q '^Your test was started on ' mails/1.in
check "the second mail has its own subject (ktest.pl reused the first's)" \
	grep -qx 'Subject: KTEST: Your test has finished!' mails/2.in
check "and its own body" \
	grep -q '^2 of 2 tests started at .* were successful!$' mails/2.in
check "the mail command is in the log, not on stdout" \
	sh -c "grep -q 'Sending mail: ' log && ! grep -q 'Sending mail' out"

# ---- mail, MAIL_PATH, and a MAIL_COMMAND template used twice ----
{ common state-2; cat <<EOF
MAILTO = dev@example.com
MAILER = mail
MAIL_PATH = $KTEST_TMP/bin
EMAIL_WHEN_STARTED = 1
TEST_START
TEST_TYPE = build
EOF
} >mail2.conf
rm -f mails/*
run_ktest mail2.conf
expect_rc 0 "a run with MAILER = mail and MAIL_PATH passes"
check "mail is run from MAIL_PATH" test "$(head -n 1 mails/1.args)" = "$KTEST_TMP/bin/mail"
check "with the subject as one argument after -s" \
	test "$(sed -n 2,3p mails/1.args | tr '\n' '|')" = "-s|KTEST: Your [build] test was started|"
check "the second mail's -s is its own subject" \
	test "$(sed -n 3p mails/2.args)" = "KTEST: Your test has finished!"

{ common state-3; cat <<EOF
MAILTO = dev@example.com
MAILER = mail
MAIL_PATH = $KTEST_TMP/bin
MAIL_COMMAND = \$MAIL_PATH/\$MAILER -s '\$SUBJECT' \$MAILTO < \$HEADER_FILE
EMAIL_WHEN_STARTED = 1
TEST_START
TEST_TYPE = build
EOF
} >mail3.conf
rm -f mails/*
run_ktest mail3.conf
expect_rc 0 "a run with ktest.pl's quoted '\$SUBJECT' in MAIL_COMMAND passes"
check "the first mail has the start subject" \
	test "$(sed -n 3p mails/1.args)" = "KTEST: Your [build] test was started"
check "the template is not changed by a send: the second has its own" \
	test "$(sed -n 3p mails/2.args)" = "KTEST: Your test has finished!"

# ---- no MAILTO, no mail ----
{ common state-4; cat <<EOF
EMAIL_WHEN_STARTED = 1
MAIL_PATH = $KTEST_TMP/bin
TEST_START
TEST_TYPE = build
EOF
} >nomail.conf
rm -f mails/*
run_ktest nomail.conf
expect_rc 0 "a run without MAILTO passes"
check "and sends no mail" test "$(nmails)" -eq 0

# ---- a critical failure, with the log attached, capped ----
{ common state-5; cat <<EOF
MAILTO = dev@example.com
MAIL_PATH = $KTEST_TMP/bin
TEST_START
TEST_TYPE = build
EOF
} >fail.conf
rm -f mails/*
touch broken
run_ktest fail.conf
expect_rc 1 "a failed build with DIE_ON_FAILURE fails"
check "one mail: the failure (no finished mail after a critical failure)" \
	test "$(nmails)" -eq 1
check "its subject names the test" \
	grep -qx 'Subject: KTEST: critical failure for test 1 \[build\]' mails/1.in
check "its body has the error" grep -q '^Your test started at .* has failed with:$' mails/1.in
check "and the reason" grep -q 'expected ; before' mails/1.in
check "the test's part of LOG_FILE is attached" grep -q 'RUNNING TEST 1 of 1' mails/1.in
check "it is staged in TMP_DIR/log" grep -q 'RUNNING TEST 1 of 1' tmp/log
check "See LOG_FILE is printed" grep -q "^ See $KTEST_TMP/log for more info" out

{ common state-6; cat <<EOF
MAILTO = dev@example.com
MAIL_PATH = $KTEST_TMP/bin
MAIL_MAX_SIZE = 100
TEST_START
TEST_TYPE = build
EOF
} >cap.conf
rm -f mails/*
run_ktest cap.conf
expect_rc 1 "a failed build with MAIL_MAX_SIZE fails"
check "MAIL_MAX_SIZE caps the attached log at 100 bytes" \
	test "$(wc -c <tmp/log)" -eq 100
check "keeping its end (the last line before the mail)" \
	grep -q ' for more info.$' tmp/log
rm -f broken

{ common state-7; cat <<EOF
MAILTO = dev@example.com
MAIL_PATH = $KTEST_TMP/bin
EMAIL_ON_ERROR = 0
EMAIL_WHEN_FINISHED = 0
TEST_START
TEST_TYPE = build
EOF
} >quiet.conf
rm -f mails/*
touch broken
run_ktest quiet.conf
rm -f broken
check "EMAIL_ON_ERROR = 0: no mail on a failure" test "$(nmails)" -eq 0

{ common state-7b; cat <<EOF
MAILTO = dev@example.com
MAIL_PATH = $KTEST_TMP/bin
DIE_ON_FAILURE = 0
TEST_START
TEST_TYPE = build
PRE_TEST = touch $KTEST_TMP/broken
TEST_START
TEST_TYPE = build
PRE_TEST = rm -f $KTEST_TMP/broken
EOF
} >nodie.conf
rm -f mails/*
run_ktest nodie.conf
rm -f broken
expect_rc 1 "DIE_ON_FAILURE = 0: a failed test fails the run"
check "the run goes on: one mail, the finished one" test "$(nmails)" -eq 1
check "counting the successes" \
	grep -q '^1 of 2 tests started at .* were successful!$' mails/1.in

# ---- cancelled ----
{ common state-8; cat <<EOF
MAILTO = dev@example.com
MAIL_PATH = $KTEST_TMP/bin
EMAIL_WHEN_CANCELED = 1
TEST_START
TEST_TYPE = build
PRE_TEST = touch $KTEST_TMP/started; sleep 2
EOF
} >cancel.conf
rm -f mails/* started
"$KTEST" cancel.conf >out 2>err </dev/null &
pid=$!
n=0
while [ ! -e started ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
kill -INT "$pid"
wait "$pid"
rc=$?
expect_rc 3 "an interrupted run exits 3"
check "one mail: cancelled (no finished mail)" test "$(nmails)" -eq 1
check "its subject" grep -qx 'Subject: KTEST: Your \[build\] test was cancelled' mails/1.in
check "its body" grep -q '^Your test started at .* was cancelled: sig int$' mails/1.in

# ---- a missing mailer ----
{ common state-9; cat <<EOF
MAILTO = dev@example.com
TEST_START
TEST_TYPE = build
EOF
} >missing.conf
rm -f mails/*
PATH=$(dirname "$(command -v git)"):/bin:/usr/bin run_ktest missing.conf
expect_rc 2 "a missing mailer is a config error"
check "naming MAILER" grep -q 'cannot find MAILER sendmail in PATH or /usr/sbin' out
check "before anything runs" sh -c "! grep -q 'RUNNING TEST' out"
check "not even the journal" test ! -e state-9
sed -e "s|^MAILTO.*|&\nMAIL_PATH = $KTEST_TMP/empty|" missing.conf >missing2.conf
run_ktest missing2.conf
expect_rc 2 "a MAIL_PATH without MAILER is a config error"
check "naming MAILER and MAIL_PATH" \
	grep -q "MAILER sendmail is not an executable in MAIL_PATH $KTEST_TMP/empty" out
sed -e "s|^MAILTO.*|&\nMAILER = pigeon|" missing.conf >missing3.conf
run_ktest missing3.conf
expect_rc 2 "an unknown MAILER without MAIL_COMMAND is a config error"
check "naming it" grep -q 'MAILER pigeon is not supported' out

# ---- power at the end and on errors, on a box made of commands ----
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config
cat >bootlog <<'EOF'
[    0.000000] Linux version 6.1.0-t (t@t) #1
[    1.000000] Freeing unused kernel memory
box login:
EOF
sed -e 's/^box login:$/[    2.000000] Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b/' \
	bootlog >panic.log
boxconf() {
	{ common "$1"; cat <<EOF
NO_INSTALL = 1
SSH_CONFIG = $KTEST_TMP/ssh_config
CONNECT_TIMEOUT = 2
REBOOT_TYPE = script
REBOOT_SCRIPT = true
POWER_CYCLE = echo cycled >> $KTEST_TMP/power; cp $KTEST_TMP/$2 $KTEST_TMP/console.now
POWER_OFF = echo off >> $KTEST_TMP/power
CONSOLE = sh -c 'while [ ! -s $KTEST_TMP/console.now ]; do sleep 0.1; done; cat $KTEST_TMP/console.now; exec sleep 60'
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
STOP_AFTER_FAILURE = 1
TIMEOUT = 10
$3
TEST_START
TEST_TYPE = boot
EOF
	} >box.conf
	rm -f console.now power
}
boxconf state-p1 bootlog "POWEROFF_ON_SUCCESS = 1"
run_ktest box.conf
expect_rc 0 "a boot with POWEROFF_ON_SUCCESS passes"
check "the box is halted at the end: ssh refused, so POWER_OFF" \
	test "$(tr '\n' ' ' <power)" = "cycled off "

# a box that answers: SSH_EXEC is a command, REBOOT plays the boot back
answers="SSH_EXEC = echo \"\$SSH_COMMAND\" >> $KTEST_TMP/sshlog
REBOOT = echo rebooted >> $KTEST_TMP/power; cp $KTEST_TMP/bootlog $KTEST_TMP/console.now
POWEROFF_ON_SUCCESS = 1"
boxconf state-p6 bootlog "$answers
POWEROFF_AFTER_HALT = 1"
rm -f sshlog
run_ktest box.conf
expect_rc 0 "a boot on a box that answers, with POWEROFF_AFTER_HALT, passes"
check "the box is halted over ssh" grep -qx halt sshlog
check "and POWER_OFF runs POWEROFF_AFTER_HALT later" \
	test "$(tr '\n' ' ' <power)" = "rebooted off "
boxconf state-p7 bootlog "$answers"
rm -f sshlog
run_ktest box.conf
expect_rc 0 "a boot on a box that answers, without POWEROFF_AFTER_HALT, passes"
check "a halt that worked is enough: no POWER_OFF" \
	sh -c "grep -qx halt sshlog && test \"\$(tr '\n' ' ' <power)\" = 'rebooted '"

boxconf state-p2 panic.log "POWEROFF_ON_ERROR = 1"
run_ktest box.conf
expect_rc 1 "a boot that panics with POWEROFF_ON_ERROR fails"
check "POWERING OFF is printed" grep -q '^POWERING OFF$' out
check "POWER_OFF ran after the failure" test "$(tr '\n' ' ' <power)" = "cycled off "

boxconf state-p3 panic.log "REBOOT_ON_ERROR = 1
POWEROFF_ON_ERROR = 1"
run_ktest box.conf
expect_rc 1 "a boot that panics with REBOOT_ON_ERROR fails"
check "REBOOTING is printed" grep -q '^REBOOTING$' out
check "the box is rebooted to good (POWER_CYCLE), not powered off" \
	test "$(tr '\n' ' ' <power)" = "cycled cycled "

boxconf state-p4 bootlog "REBOOT_ON_SUCCESS = 0"
run_ktest box.conf
expect_rc 0 "a boot with REBOOT_ON_SUCCESS = 0 passes"
check "the box is left as it is at the end" test "$(tr '\n' ' ' <power)" = "cycled "

{ common state-p5; cat <<EOF
POWER_OFF = echo off >> $KTEST_TMP/power
POWEROFF_ON_ERROR = 0
REBOOT_ON_ERROR = 1
TEST_START
TEST_TYPE = build
EOF
} >buildonly.conf
rm -f power
touch broken
run_ktest buildonly.conf
rm -f broken
expect_rc 1 "a failed build with REBOOT_ON_ERROR fails"
check "a build-only test does not reboot the box" \
	sh -c "! grep -q REBOOTING out && ! test -e power"

finish
