#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Hostile text never reaches a shell, and what ktest writes is private.
#
# A real git repository (made here, with the fake kbuild of test_run.sh)
# whose commit subjects and bodies, file paths, a branch and a tag hold
# $(...), backticks, quotes, ';' and '>' that would create PWNED* files if a
# shell ever saw them unquoted; bisect and patchcheck (TYPE build) run over
# it with mail (a MAIL_COMMAND that puts "$MESSAGE" in double quotes and
# records its argv and stdin), hooks with ktest.pl's substitutions, and
# STORE_FAILURES; a boot whose console prints the same kind of text and a
# panic with it in the crash title. No PWNED* file may appear, the subjects
# must come out intact, and the results must be right. Then: a config
# command's pipe and $VAR still work; the files ktest creates are private
# under umask 022; no secret from a command line reaches the log.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
umask 022
src=$KTEST_TMP/src
rm -rf "$src" bin mails tmp log state-* failures hooks power console.now \
	PWNED* shared
mkdir -p "$src" bin mails

g() { git -C "$src" "$@"; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME=$KTEST_TMP

# the kbuild: broken while ./bug exists; a warning in the file ';touch PWNED6;'
cat >"$src/Makefile" <<'EOF'
O ?= .
C := $(O)/.config
all:
	@echo '  CC      init/main.o'
	@if [ -e ';touch PWNED6;' ]; then echo ';touch PWNED6;:3:1: warning: unused variable x'; fi
	@if [ -e bug ]; then echo 'init/bug.c:1:1: error: the bug'; exit 1; fi
	@mkdir -p $(O)/arch/x86/boot && cp $(C) $(O)/arch/x86/boot/bzImage
	@echo 'Kernel: arch/x86/boot/bzImage is ready'
mrproper:
	@rm -rf $(C) $(O)/arch
olddefconfig oldnoconfig:
	@touch $(C); grep -q CONFIG_DEFAULT_ON $(C) || echo CONFIG_DEFAULT_ON=y >> $(C)
defconfig:
	@echo CONFIG_DEFAULT_ON=y > $(C)
kernelrelease:
	@echo 6.1.0-t
EOF
g init -q
g add Makefile
g commit -q -m "c0: the tree"
c0=$(g rev-parse HEAD)

# the subjects, exactly as git log %s prints them
s1='c1: $(touch PWNED1)'
s2='c2: `touch PWNED2`'
s3="c3: it's \"double\" and 'single'"
s4='c4: break; touch PWNED3 $(touch PWNED7) `touch PWNED8` it'"'"'s "q" \'
s5='c5: one line $(touch PWNED9) and the next'
s6="c6: the last' ; touch PWNED10 #"
commit() {	# commit N FILE MESSAGE-FILE
	printf '%s\n' "$1" >"$src/version"
	g add version -- "$2"
	g commit -q -F "$KTEST_TMP/msg"
	eval "c$1=\$(g rev-parse HEAD)"
}
echo x >"$src/\$(touch PWNED5)"
printf '%s\n' "$s1" >msg; commit 1 '$(touch PWNED5)'
echo x >"$src/;touch PWNED6;"
printf '%s\n' "$s2" >msg; commit 2 ';touch PWNED6;'
echo x >"$src/it's \"q\".c"
printf '%s\n' "$s3" >msg; commit 3 "it's \"q\".c"
touch "$src/bug"
printf '%s\n\n%s\n%s\n' "$s4" 'the body: $(touch PWNED11)' \
	'git bisect good HEAD; `touch PWNED12`' >msg; commit 4 bug
# a first paragraph of two lines: git joins them with a space
printf '%s\n%s\n\nbody\n' 'c5: one line $(touch PWNED9)' 'and the next' >msg
echo x >"$src/new
line \$(touch PWNED13)"
commit 5 "new
line \$(touch PWNED13)"
printf '%s\n' "$s6" >msg; echo y >"$src/;touch PWNED6;"
commit 6 ';touch PWNED6;'
g branch 'evil$(>PWNED14)'
g tag 't`>PWNED15`;>PWNED16' "$c6"
g checkout -q 'evil$(>PWNED14)'

check "git keeps the subjects as written (the two-line one joined)" \
	test "$(g log -1 --format=%s "$c5")" = "$s5" -a \
	"$(g log -1 --format=%s "$c4")" = "$s4"

# the mailer: mails/N.args (one argument a line) and mails/N.in
cat >bin/rec <<EOF
#!/bin/sh
n=\$(( \$(ls $KTEST_TMP/mails | grep -c 'args\$') + 1 ))
printf '%s\n' "\$@" >$KTEST_TMP/mails/\$n.args
cat >$KTEST_TMP/mails/\$n.in
EOF
chmod +x bin/rec
cp bin/rec bin/sendmail

pwned() { find "$KTEST_TMP" /tmp/ktest "$src" -maxdepth 3 -name 'PWNED*' 2>/dev/null; }
check_pwned() {
	p=$(pwned)
	if [ -z "$p" ]; then ok "$1: nothing ran"; else not_ok "$1: $p was created"; fi
}
# has FILE TEXT: TEXT is a line of FILE or a part of one, byte for byte
has() { grep -qF -- "$2" "$1"; }
jqa() { jq -e "$@" >/dev/null; }

common() {
	cat <<EOF
BUILD_DIR = $src
OUTPUT_DIR = $KTEST_TMP/build-out
TMP_DIR = $KTEST_TMP/tmp
LOG_FILE = $KTEST_TMP/log
STATE_DIR = $KTEST_TMP/$1
MACHINE = box
BUILD_TYPE = defconfig
MAILTO = dev@example.com
MAIL_PATH = $KTEST_TMP/bin
MAILER = rec
MAIL_COMMAND = \$MAIL_PATH/\$MAILER -s '\$SUBJECT' -m "\$MESSAGE" \$MAILTO < \$HEADER_FILE
EMAIL_WHEN_STARTED = 1
PRE_KTEST = echo "pre-ktest \${MACHINE} \$HOME" | sed 's/^/hook: /' >> $KTEST_TMP/hooks
POST_BUILD = echo "post-build \${MACHINE} \${BUILD_DIR}" >> $KTEST_TMP/hooks
EOF
}

# ---- bisect (build) to the evil branch ----
{ common state-bisect; cat <<EOF
TEST_START
TEST_TYPE = bisect
BISECT_TYPE = build
BISECT_GOOD = $c0
BISECT_BAD = evil\$(>PWNED14)
EOF
} >bisect.conf
rm -f mails/* hooks
run_ktest bisect.conf
expect_rc 0 "bisect over hostile subjects to a hostile branch finds its commit"
check_pwned "bisect"
check "the culprit is c4" grep -q "^$c4 is the first bad commit" out
check "its subject is printed intact" has out "    $s4"
check "and in 'Bad commit was'" has out "Bad commit was [$c4] $s4"
check "the report has it verbatim" \
	test "$(jq -r '.tests[0].first_bad_subject' state-bisect/report.json)" = "$s4"
check "every step's subject in the report is git's" \
	jqa --arg a "$s1" --arg b "$s2" --arg c "$s3" --arg d "$s4" --arg e "$s5" \
	--arg f "$s6" '.tests[0].steps | length > 0 and
	all(.subject | IN($a, $b, $c, $d, $e, $f))' state-bisect/report.json
check "LOG_FILE has the subject intact" has log "Bad commit was [$c4] $s4"
check "the bisect log keeps the body out of replay's reach" \
	sh -c "! grep -q 'touch PWNED1[12]' '$KTEST_TMP/tmp/ktest_bisect_log'"
check "the bisect log's comment names the culprit with its subject" \
	has tmp/ktest_bisect_log "# first bad commit: [$c4] $s4"
check "git bisect replay accepts the log" \
	sh -c "cd '$src' && git bisect replay '$KTEST_TMP/tmp/ktest_bisect_log' >/dev/null 2>&1; r=\$?; git bisect reset -q >/dev/null 2>&1; git checkout -q 'evil\$(>PWNED14)'; exit \$r"
check_pwned "git bisect replay"
check "the hook's pipe and \$HOME ran as written (\${MACHINE} substituted)" \
	grep -qx "hook: pre-ktest box $KTEST_TMP" hooks
check "POST_BUILD had \${MACHINE} and \${BUILD_DIR}" \
	grep -qx "post-build box $src" hooks
check "the started and finished mails went out" test "$(ls mails | grep -c args)" -eq 2
check "the finished mail's message is one argument, intact" \
	grep -q '^1 of 1 tests started at .* were successful!$' mails/2.args

# ---- patchcheck (build) from c1 to the tag, a failure mail ----
{ common state-pc; cat <<EOF
TEST_START
TEST_TYPE = patchcheck
PATCHCHECK_TYPE = build
PATCHCHECK_START = $c1
PATCHCHECK_END = t\`>PWNED15\`;>PWNED16
EOF
} >pc.conf
rm -f mails/*
run_ktest pc.conf
expect_rc 1 "patchcheck over the hostile series fails"
check_pwned "patchcheck"
for n in 1 2 3 4 5 6; do
	eval "id=\$c$n s=\$s$n"
	check "c$n is listed as '$id \$s$n'" has out "$id $s"
done
check "c2's warning in the file ';touch PWNED6;' is its failure" \
	has out "$(echo "$c2" | cut -c1-12) $s2: warning"
for n in 4 5 6; do
	eval "id=\$c$n s=\$s$n"
	check "c$n fails to build" has out "$(echo "$id" | cut -c1-12) $s: build"
done
check "4 of 6 commits break the series" grep -q '4 of 6 commits break the series' out
check "the report's first failure is c2, its subject intact" \
	test "$(jq -r '.tests[0].first_bad_subject' state-pc/report.json)" = "$s2"
check "the report's last step has c6's subject, intact" \
	test "$(jq -r '.tests[0].steps[5].subject' state-pc/report.json)" = "$s6"
n=$(ls mails | grep -c args)
check "two mails: started, critical failure ($n)" test "$n" -eq 2
check "the failure mail's -m argument (\"\$MESSAGE\" in the template) is intact" \
	sh -c 'grep -qF -- "$1" mails/2.args && grep -qF -- "$2" mails/2.args' x \
	"$(echo "$c4" | cut -c1-12) $s4: build" "$(echo "$c6" | cut -c1-12) $s6: build"
check "its -s argument is the subject" \
	test "$(sed -n 2p mails/2.args)" = "KTEST: critical failure for test 1 [patchcheck]"
check "the header file (its stdin) has the subjects too" has mails/2.in "$s5: build"

{ common state-pc2; cat <<EOF
DIE_ON_FAILURE = 0
STORE_FAILURES = $KTEST_TMP/failures
TEST_START
TEST_TYPE = patchcheck
PATCHCHECK_TYPE = build
PATCHCHECK_START = $c3
PATCHCHECK_END = $c6
EOF
} >pc2.conf
rm -rf failures
run_ktest pc2.conf
expect_rc 1 "patchcheck with STORE_FAILURES fails"
check_pwned "STORE_FAILURES"
check "the failure's files are stored" sh -c "ls '$KTEST_TMP'/failures/*/buildlog >/dev/null"

# ---- a console that prints shell syntax, and a panic with it ----
g checkout -q "$c3"	# a tree that builds, from here on
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config
cat >bootlog <<'EOF'
[    0.000000] Linux version 6.1.0-t (t@t) #1
$(touch PWNED4) `touch PWNED17` ; touch PWNED18 'x" \
[    2.000000] Kernel panic - not syncing: $(touch PWNED19) `touch PWNED20` it's "x"
EOF
{ common state-box; cat <<EOF
NO_INSTALL = 1
SSH_CONFIG = $KTEST_TMP/ssh_config
CONNECT_TIMEOUT = 2
REBOOT_TYPE = script
REBOOT_SCRIPT = true
REBOOT_ON_ERROR = 0
POWER_CYCLE = echo cycled >> $KTEST_TMP/power; cp $KTEST_TMP/bootlog $KTEST_TMP/console.now
CONSOLE = sh -c 'while [ ! -s $KTEST_TMP/console.now ]; do sleep 0.1; done; cat $KTEST_TMP/console.now; exec sleep 60'
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
TIMEOUT = 10
TEST_START
TEST_TYPE = boot
EOF
} >box.conf
rm -f mails/* console.now power
run_ktest box.conf
expect_rc 1 "a boot whose console panics fails"
check_pwned "console"
title='kernel panic: $(touch PWNED19) `touch PWNED20` it'"'"'s "x"'
check "the crash title is in the report, intact" \
	test "$(jq -r '.tests[0].steps[0].crash_title' state-box/report.json)" = "$title"
check "the console line is printed as it came" has out '$(touch PWNED4) `touch PWNED17` ; touch PWNED18'
check "the failure mail's message has the title intact" has mails/2.args "$title"

# ---- files are private, whatever the umask ----
mode() { stat -c %a "$1"; }
check "LOG_FILE is 600 under umask 022 ($(mode log))" test "$(mode log)" = 600
check "the state directory is 700 ($(mode state-box))" test "$(mode state-box)" = 700
check "the journal is 600 ($(mode state-box/journal))" test "$(mode state-box/journal)" = 600
check "report.json is 600 ($(mode state-box/report.json))" test "$(mode state-box/report.json)" = 600
check "the bisect log copy in the state directory is 600" \
	test "$(mode state-bisect/bisect-1.log)" = 600
for f in buildlog-box dmesg-box ktest_bisect_log log header; do
	if [ -e "tmp/$f" ]; then
		check "TMP_DIR/$f is 600 ($(mode "tmp/$f"))" test "$(mode "tmp/$f")" = 600
	else
		not_ok "TMP_DIR/$f was not written"
	fi
done
check "a TMP_DIR ktest creates is 700 ($(mode tmp))" test "$(mode tmp)" = 700
d=$(ls -d failures/*)
check "the STORE_FAILURES directory is 700 ($(mode "$d"))" test "$(mode "$d")" = 700
check "with its logs 600" \
	test "$(stat -c %a "$d"/buildlog)" = 600
# a log that already exists, readable by all, in a shared directory
mkdir -p shared && chmod 1777 shared
: >shared/ktest.log && chmod 644 shared/ktest.log
{ common state-shared | sed "s|^LOG_FILE.*|LOG_FILE = $KTEST_TMP/shared/ktest.log|"
  echo "TEST_START"; echo "TEST_TYPE = build"; } >shared.conf
run_ktest shared.conf
expect_rc 0 "a build test with LOG_FILE in a shared directory passes"
check "an existing LOG_FILE readable by others is made private ($(mode shared/ktest.log))" \
	test "$(mode shared/ktest.log)" = 600
# candidate configs of a config bisect live in the state directory (700)

# ---- no secret from a command line in the log ----
{ common state-secret; cat <<EOF
TEST_START
TEST_TYPE = build
PRE_TEST = true ipmitool -H bmc -U admin -P hunter2 power status; true http://admin:hunter3@pdu/on; IPMI_PASSWORD=hunter4 true; true --password=hunter5
EOF
} >secret.conf
rm -f mails/*
run_ktest secret.conf
expect_rc 0 "a test whose hook names passwords passes"
check "the hook is logged" grep -q 'Running PRE_TEST: true ipmitool' log
check "without its passwords (LOG_FILE, stdout, journal, report, mail)" \
	sh -c "! grep -rq 'hunter[2-5]' log out state-secret mails"
check "masked, the rest as written" \
	grep -qF 'ipmitool -H bmc -U admin -P *** power status; true http://admin:***@pdu/on; IPMI_PASSWORD=*** true; true --password=***' log

finish
