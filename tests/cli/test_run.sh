#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# ktest run on host-only test types (build, make_warnings_file, bisect and
# patchcheck with TYPE build) over a real git repository made here, with a
# small fake kbuild (a Makefile honouring O=, the config targets and
# kernelrelease): a series of 20 commits holding a build break (c7, fixed in
# c9), a warning (c12) and a bug that breaks the build (c15, fixed in c17).
# Then resume: ktest killed with SIGKILL in the middle of a bisect, rerun,
# same culprit and no finished build repeated; the JSON report; the journal.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
src=$KTEST_TMP/src
rm -rf "$src" build-out tmp log state*
mkdir -p "$src"

g() { git -C "$src" "$@"; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME=$KTEST_TMP

cat >"$src/Makefile" <<'EOF'
O ?= .
C := $(O)/.config
all:
	@echo '  CC      init/main.o'
	@if [ -e broken ]; then echo 'init/main.c:20:1: error: expected ; before }'; exit 1; fi
	@if [ -e warn ]; then echo "init/warn.c:12:3: warning: unused variable 'x'"; fi
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
	@echo "6.1.0$$(cat $(O)/localversion 2>/dev/null)"
EOF
g init -q
g add Makefile
g commit -q -m "c0: the tree"
for n in $(seq 1 20); do
	echo "$n" >"$src/version"
	case $n in
	7) touch "$src/broken"; g add broken ;;
	9) g rm -q broken ;;
	12) touch "$src/warn"; mkdir -p "$src/init"; echo x >"$src/init/warn.c"
	    g add warn init/warn.c ;;
	15) touch "$src/bug"; g add bug ;;
	17) g rm -q bug ;;
	esac
	g add version
	g commit -q -m "c$n: change $n"
	eval "c$n=\$(g rev-parse HEAD)"
done
c0=$(g rev-list --max-parents=0 HEAD)

common() {
	cat <<EOF
BUILD_DIR = $src
OUTPUT_DIR = $KTEST_TMP/build-out
TMP_DIR = $KTEST_TMP/tmp
LOG_FILE = $KTEST_TMP/log
STATE_DIR = $KTEST_TMP/$1
MACHINE = box
LOCALVERSION = -t
BUILD_TYPE = defconfig
EOF
}

# ---- build ----
{ common state-build; echo "TEST_START"; echo "TEST_TYPE = build"; } >build.conf
g checkout -q "$c5"
run_ktest build.conf
expect_rc 0 "a build test of a good tree passes"
check "it prints ktest.pl's success banner" grep -q 'KTEST RESULT: TEST 1 SUCCESS!!!!' out
check "and the summary" grep -q '1 of 1 tests were successful' out
check "the build log is TMP_DIR/buildlog-MACHINE" grep -q 'bzImage is ready' tmp/buildlog-box
check "LOG_FILE has the command output" grep -q 'CC      init/main.o' log
check "the report is in the state directory" test -s state-build/report.json
check "the report says GOOD" test "$(jq -r '.tests[0].verdict' state-build/report.json)" = GOOD
check "with the build duration" jqe '.tests[0].steps[0].durations.build >= 0' state-build/report.json
check "the journal ends the run" grep -q 'ev=end' state-build/journal

g checkout -q "$c7"
run_ktest build.conf
expect_rc 1 "a build test of a broken tree fails (exit 1)"
check "with ktest.pl's failure banner" grep -q 'KTEST RESULT: TEST 1 Failed: failed build' out
check "a finished run is not resumed" grep -q 'Starting afresh (the last run finished)' out
check "the report says BAD" test "$(jq -r '.tests[0].verdict' state-build/report.json)" = BAD
run_ktest --json "$KTEST_TMP/copy.json" build.conf
check "--json writes the report there too" jqe '.tests[0].verdict == "BAD"' copy.json

# ---- make_warnings_file, then WARNINGS_FILE ----
g checkout -q "$c12"
{ common state-warn; echo "WARNINGS_FILE = $KTEST_TMP/warnings"
  echo "TEST_START"; echo "TEST_TYPE = make_warnings_file"; } >warn.conf
rm -f warnings
run_ktest warn.conf
expect_rc 0 "make_warnings_file passes"
check "it wrote the warning, normalised (no column)" \
	grep -qx "init/warn.c:12: warning: unused variable 'x'" warnings
{ common state-warn2; echo "WARNINGS_FILE = $KTEST_TMP/warnings"
  echo "TEST_START"; echo "TEST_TYPE = build"; } >warn2.conf
run_ktest warn2.conf
expect_rc 0 "a build whose warnings are all in WARNINGS_FILE passes"
: >warnings
run_ktest warn2.conf
expect_rc 1 "a new warning fails the build test"
check "naming the warning" grep -q "New warning found (not in $KTEST_TMP/warnings)" out

# ---- bisect (build) ----
g checkout -q "$c20"
bisect_conf() {
	{ common "$1"; echo "TEST_START"; echo "TEST_TYPE = bisect"
	  echo "BISECT_TYPE = build"; shift; for l in "$@"; do echo "$l"; done; } >bisect.conf
}
bisect_conf state-bisect "BISECT_GOOD = $c9" "BISECT_BAD = $c16"
run_ktest bisect.conf
expect_rc 0 "bisect (build) finds its commit: exit 0"
check "the culprit is c15" grep -q "$c15 is the first bad commit" out
check "named with its subject" grep -q "Bad commit was \[$c15\] c15: change 15" out
check "the report names it" test "$(jq -r '.tests[0].first_bad_commit' state-bisect/report.json)" = "$c15"
steps=$(jq '.tests[0].steps | length' state-bisect/report.json)
check "every step is in the report with a verdict ($steps steps)" \
	jqe '[.tests[0].steps[] | select(.verdict == "GOOD" or .verdict == "BAD")] | length == '"$steps" state-bisect/report.json
check "the bisect log is written for git bisect replay" test -s tmp/ktest_bisect_log
check "and names the culprit" grep -q "first bad commit: \[$c15\]" tmp/ktest_bisect_log
check "the tree is put back where it was" test "$(g rev-parse HEAD)" = "$c20"

# path-limited (BISECT_FILES): the same culprit as git bisect run
bisect_conf state-path "BISECT_GOOD = $c0" "BISECT_BAD = $c16" "BISECT_FILES = bug broken"
run_ktest bisect.conf
expect_rc 0 "bisect limited to paths succeeds"
ours=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' out)
cat >oracle.sh <<'EOF2'
#!/bin/sh
make -s O=/tmp/ktest-oracle-$$ defconfig >/dev/null 2>&1
make -s O=/tmp/ktest-oracle-$$ >/dev/null 2>&1; rc=$?
rm -rf /tmp/ktest-oracle-$$
[ $rc -eq 0 ] || exit 1
EOF2
theirs=$(cd "$src" && git bisect start "$c16" "$c0" -- bug broken >/dev/null &&
	git bisect run sh "$KTEST_TMP/oracle.sh" 2>/dev/null |
	sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p'
	git bisect reset >/dev/null 2>&1)
check "git bisect run limited to the same paths agrees ($theirs)" test -n "$ours" -a "$ours" = "$theirs"
g checkout -q "$c20"

bisect_conf state-rev "BISECT_GOOD = $c15" "BISECT_BAD = $c20" "BISECT_REVERSE = 1"
run_ktest bisect.conf
expect_rc 0 "reverse bisect finds the fix"
check "the fix is c17" grep -q "$c17 is the first good (fixing) commit" out

bisect_conf state-check "BISECT_GOOD = $c16" "BISECT_BAD = $c20" "BISECT_CHECK = good"
run_ktest bisect.conf
expect_rc 1 "BISECT_CHECK catches a 'good' commit that fails"
check "and says so" grep -qi "good commit.*$c16\|$c16.*tested bad\|tested bad" out

# on a terminal (script(1) gives it one), a progress line before each step
bisect_conf state-tty "BISECT_GOOD = $c9" "BISECT_BAD = $c16"
script -qec "$KTEST bisect.conf" /dev/null >tty.out 2>&1 </dev/null
check "on a tty each step has a progress line" \
	grep -q 'ktest: test 1 of 1, bisect [0-9a-f]\{12\}, [0-9]* commits\? left after this (about [0-9]* more steps\?), [0-9]*s elapsed' tty.out
check "with an ETA once a step has run" grep -q 'elapsed, ETA [0-9]' tty.out
check "not in LOG_FILE" sh -c "! grep -q 'commits\\? left after this' log"
run_ktest --restart bisect.conf
check "not without a tty" sh -c "! grep -q 'left after this' out"

# killed in the middle, then resumed
bisect_conf state-kill "BISECT_GOOD = $c0" "BISECT_BAD = $c16" \
	"PRE_BUILD = n=\$(cat $KTEST_TMP/count 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > $KTEST_TMP/count; if [ \$n -eq 3 ]; then kill -9 \$PPID; fi"
rm -f count
run_ktest bisect.conf
check "ktest killed with SIGKILL in its third build (exit $rc)" test "$rc" -eq 137
check "the journal has two finished steps" \
	test "$(grep -c 'state=done' state-kill/journal)" -eq 2
run_ktest bisect.conf
expect_rc 0 "the rerun finishes the bisect"
check "it says it resumes" grep -q 'Resuming the unfinished run' out
check "the two finished steps are not run again" \
	test "$(grep -c 'in the earlier run (from the journal)' out)" -eq 2
check "same culprit as without the kill" grep -q "$c15 is the first bad commit\|$c7 is the first bad commit" out
resumed=$(grep -o '[0-9a-f]* is the first bad commit' out)
builds=$(cat count)
rm -f count
bisect_conf state-nokill "BISECT_GOOD = $c0" "BISECT_BAD = $c16"
run_ktest bisect.conf
check "an uninterrupted run agrees ($resumed)" grep -q "$resumed" out
total=$(jq '.tests[0].steps | length' state-nokill/report.json)
check "builds in all: the uninterrupted run's $total plus the one in flight" \
	test "$builds" -eq "$((total + 1))"

# SIGINT: a clean stop at the next step, then a resume
bisect_conf state-int "BISECT_GOOD = $c0" "BISECT_BAD = $c16" \
	"PRE_BUILD = n=\$(cat $KTEST_TMP/icount 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > $KTEST_TMP/icount; if [ \$n -eq 2 ]; then kill -INT \$PPID; fi"
rm -f icount
run_ktest bisect.conf
expect_rc 3 "SIGINT stops the run with exit 3"
check "saying how to resume" grep -q 'Interrupted: rerun the same command to resume' out
check "after finishing the step in flight" \
	test "$(grep -c 'state=done' state-int/journal)" -eq 2
check "with the summary" grep -q '0 of 1 tests were successful' out
run_ktest bisect.conf
expect_rc 0 "the rerun after SIGINT finishes"
check "with the same culprit" grep -q "$resumed" out
check "without building again what was built" test "$(cat icount)" -eq "$total"

# SIGINT twice: the second stops the build in flight (its make's group
# gets SIGTERM); the step is INFRA, not blamed, and the rerun builds it
cat >slowmake.sh <<EOF
#!/bin/sh
case " \$* " in *config*) exec make "\$@" ;; esac
if [ -s $KTEST_TMP/arm ]; then
	k=\$(cat $KTEST_TMP/arm)
	rm -f $KTEST_TMP/arm
	kill -INT \$k
	sleep 0.5
	kill -INT \$k
	sleep 30
	touch $KTEST_TMP/ran-on
fi
exec make "\$@"
EOF
bisect_conf state-int2 "BISECT_GOOD = $c0" "BISECT_BAD = $c16" \
	"MAKE_CMD = sh $KTEST_TMP/slowmake.sh" \
	"PRE_BUILD = n=\$(cat $KTEST_TMP/i2count 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > $KTEST_TMP/i2count; if [ \$n -eq 2 ]; then echo \$PPID > $KTEST_TMP/arm; fi"
rm -f i2count arm ran-on
run_ktest bisect.conf
expect_rc 3 "a second SIGINT stops the run with exit 3"
check "the first said the step in flight ends first, and how to stop it now" \
	grep -q 'ktest: interrupted: stopping after the step in flight (its build or test runs to its end; Ctrl-C again stops it now)' out
check "the second stopped the build in flight: its make did not run on" \
	test ! -e ran-on
check "and said so" grep -q 'ktest: interrupted again: stopping the command in flight' out
check "the stopped step is INFRA, not blamed on its commit" \
	jqe '[.tests[0].steps[] | select(.verdict == "INFRA" and (.why | contains("second Ctrl-C")))] | length == 1' state-int2/report.json
check "the step before it kept its verdict; the stopped one was in its build" \
	jqe '.tests[0].steps | length == 2 and (.[0].verdict == "GOOD" or .[0].verdict == "BAD") and .[1].verdict == "INFRA" and .[1].failed_phase == "build"' state-int2/report.json
check "both are in the journal (the INFRA one to run again)" \
	test "$(grep -c 'state=done' state-int2/journal)" -eq 2
run_ktest bisect.conf
expect_rc 0 "the rerun after two SIGINTs finishes"
check "with the same culprit" grep -q "$resumed" out
check "building again only the stopped step's commit" \
	test "$(cat i2count)" -eq "$((total + 1))"

# ---- local changes in BUILD_DIR ----
# a bisect or patchcheck checks commits out with force: it refuses a tree
# with changes of the user's, and leaves them as they were
g checkout -q "$c20"
echo mine >"$src/version"
bisect_conf state-dirty "BISECT_GOOD = $c9" "BISECT_BAD = $c16"
run_ktest bisect.conf
expect_rc 2 "a bisect refuses a BUILD_DIR with local changes: exit 2"
check "naming the file" grep -q "BUILD_DIR $src has local changes to 1 file: version$" out
check "and what to do" grep -q "commit or stash them (git -C $src stash), then run ktest again" out
check "the change is still there" test "$(cat "$src/version")" = mine
check "HEAD has not moved" test "$(g rev-parse HEAD)" = "$c20"
check "no step was started" sh -c "! grep -q 'ev=step' state-dirty/journal"
{ common state-pcdirty; echo "TEST_START"; echo "TEST_TYPE = patchcheck"
  echo "PATCHCHECK_TYPE = build"; echo "PATCHCHECK_START = $c1"
  echo "PATCHCHECK_END = $c20"; } >pcd.conf
run_ktest pcd.conf
expect_rc 2 "so does a patchcheck"
check "its change is still there too" test "$(cat "$src/version")" = mine
# a bisect after a build test is refused at the start, not after the build
{ common state-later; echo "TEST_START"; echo "TEST_TYPE = build"
  echo "TEST_START"; echo "TEST_TYPE = bisect"; echo "BISECT_TYPE = build"
  echo "BISECT_GOOD = $c9"; echo "BISECT_BAD = $c16"; } >later.conf
run_ktest later.conf
expect_rc 2 "a bisect as test 2 refuses the local changes before test 1 runs: exit 2"
check "naming test 2 and the file" grep -q "^ktest: test 2: BUILD_DIR $src has local changes to 1 file: version$" out
check "test 1 did not run, and it says so" \
	sh -c "! grep -q 'RUNNING TEST 1' out && ! grep -q 'ev=step' state-later/journal && grep -q 'checked before test 1: nothing has run' out"
check "the change is still there after it" test "$(cat "$src/version")" = mine
g checkout -q -- version

# an untracked file of the user's where a commit has one (c15 adds bug):
# no checkout overwrites it, as git checkout would not
g checkout -q "$c20"
echo mine >"$src/bug"
bisect_conf state-untracked "BISECT_GOOD = $c14" "BISECT_BAD = $c16"
run_ktest bisect.conf
expect_rc 3 "a bisect stops before it overwrites an untracked file: exit 3 (resume)"
check "naming it, and what to do" grep -q "would overwrite untracked files: bug (move them away, then run ktest again)" out
check "the file is still the user's" test "$(cat "$src/bug")" = mine
check "HEAD has not moved" test "$(g rev-parse HEAD)" = "$c20"
rm -f "$src/bug"
run_ktest bisect.conf
expect_rc 0 "once it is moved away, the rerun finishes"
check "with the culprit" grep -q "$c15 is the first bad commit" out
check "BUILD_DIR is back at HEAD" test "$(g rev-parse HEAD)" = "$c20"

# a hook's change is ktest's own: a run killed with one in the tree resumes
bisect_conf state-hook "BISECT_GOOD = $c0" "BISECT_BAD = $c16" \
	"PRE_BUILD = echo HOOK=1 >> $src/Makefile; n=\$(cat $KTEST_TMP/hcount 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > $KTEST_TMP/hcount; if [ \$n -eq 3 ]; then kill -9 \$PPID; fi"
rm -f hcount
run_ktest bisect.conf
check "killed in the third build, with a hook's change in the tree" \
	sh -c "[ $rc -eq 137 ] && grep -q HOOK=1 '$src/Makefile'"
run_ktest bisect.conf
expect_rc 0 "the rerun takes the tree as it is and finishes"
check "with the culprit" grep -q "$resumed" out
# and so is one an earlier test of the run left (its last step's change
# to a file every commit has outlives the checkouts, as with git checkout)
g checkout -q -- Makefile
{ cat bisect.conf; echo "TEST_START"; echo "TEST_TYPE = bisect"
  echo "BISECT_TYPE = build"; echo "BISECT_GOOD = $c9"
  echo "BISECT_BAD = $c16"; } >bisect2.conf
sed -i "s|state-hook|state-hook2|; s|if \[ \$n -eq 3 \]; then kill -9 \$PPID; fi|true|" bisect2.conf
run_ktest bisect2.conf
expect_rc 0 "a second bisect after a test whose hook changed the tree runs"
check "both found their culprit" sh -c "[ \$(grep -c 'is the first bad commit' out) -eq 2 ] && grep -q '$c15 is the first bad commit' out"
check "the hook's change is still in the tree" grep -q HOOK=1 "$src/Makefile"
g checkout -q -- Makefile

# ---- patchcheck (build) ----
g checkout -q "$c20"
{ common state-pc; echo "TEST_START"; echo "TEST_TYPE = patchcheck"
  echo "PATCHCHECK_TYPE = build"; echo "PATCHCHECK_START = $c1"
  echo "PATCHCHECK_END = $c20"; } >pc.conf
run_ktest pc.conf
expect_rc 1 "patchcheck of the series fails"
check "it checks every commit (20)" test "$(jq '.tests[0].steps | length' state-pc/report.json)" -eq 20
for n in 7 8; do
	eval "id=\$c$n"
	check "it reports the build break c$n" grep -q "$(echo "$id" | cut -c1-12) c$n: change $n: build" out
done
check "it reports the warning commit c12" grep -q "$(echo "$c12" | cut -c1-12) c12: change 12: warning" out
check "it reports the bug c15 and c16" grep -q "$(echo "$c16" | cut -c1-12) c16: change 16: build" out
check "and nothing else: 5 of 20" grep -q '5 of 20 commits break the series' out
check "c17 onwards pass" test "$(jq -r '.tests[0].steps[16].verdict' state-pc/report.json)" = GOOD

{ common state-pc1; echo "PATCHCHECK_STOP_AT_FIRST = 1"; echo "TEST_START"
  echo "TEST_TYPE = patchcheck"; echo "PATCHCHECK_TYPE = build"
  echo "PATCHCHECK_START = $c1"; echo "PATCHCHECK_END = $c20"; } >pc1.conf
run_ktest pc1.conf
expect_rc 1 "PATCHCHECK_STOP_AT_FIRST stops at the first failure"
check "after 7 commits" test "$(jq '.tests[0].steps | length' state-pc1/report.json)" -eq 7
check "the tree is put back where it was" test "$(g rev-parse HEAD)" = "$c20"

# ---- boot on an ssh box whose console is a command ----
# POWER_CYCLE and CONSOLE are commands here: the "box" is a console log
# played back when the power is cycled. ssh to it is refused (port 1), so
# the reboot falls back to POWER_CYCLE, as ktest.pl's does.
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config
cat >bootlog <<'EOF2'
[    0.000000] Linux version 6.1.0-t (t@t) #1
[    1.000000] Freeing unused kernel memory
Debian GNU/Linux 12 box ttyS0
box login:
EOF2
sed -e 's/^box login:$/[    2.000000] Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b/' \
	bootlog >panic.log
boxconf() {
	{ common "$1"; cat <<EOF2
NO_INSTALL = 1
SSH_CONFIG = $KTEST_TMP/ssh_config
CONNECT_TIMEOUT = 2
REBOOT_TYPE = script
REBOOT_SCRIPT = true
POWER_CYCLE = echo cycled >> $KTEST_TMP/power; cp $KTEST_TMP/$2 $KTEST_TMP/console.now
CONSOLE = sh -c 'while [ ! -s $KTEST_TMP/console.now ]; do sleep 0.1; done; cat $KTEST_TMP/console.now; exec sleep 60'
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
STOP_AFTER_FAILURE = 1
TIMEOUT = 10
TEST_START
TEST_TYPE = boot
EOF2
	} >box.conf
	rm -f console.now power
}
boxconf state-box bootlog
run_ktest box.conf
expect_rc 0 "a boot on an ssh box with a command console passes"
# once for the boot, once at the end: REBOOT_ON_SUCCESS (default 1) takes
# the box back to its good kernel, and ssh is refused, so it is POWER_CYCLE
check "the power was cycled to boot, and back to good at the end" \
	test "$(wc -l <power)" -eq 2
check "the boot was watched to the login prompt" grep -q '^box login:' out
check "the console is in TMP_DIR/dmesg-MACHINE" grep -q 'Linux version' tmp/dmesg-box
boxconf state-box2 panic.log
run_ktest box.conf
expect_rc 1 "a boot that panics fails"
check "with the panic as the reason" \
	grep -q 'KTEST RESULT: TEST 1 Failed: failed boot: .*kernel panic: Attempted to kill init!' out
check "the report has the crash title" \
	test "$(jq -r '.tests[0].steps[0].crash_title' state-box2/report.json)" = "kernel panic: Attempted to kill init!"

finish
