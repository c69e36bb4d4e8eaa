#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The fault matrix (doc/faults.md): each case injects one fault into a run
# on real parts (a git repo and a fake kbuild made here, a box made of
# commands, a tmpfs that fills up) and checks the outcome: a named verdict,
# a message naming the box or command and why, nothing lost, no crash, and
# never a commit blamed for the lab's fault.
#
#  1. SIGKILL at many points of a bisect, a patchcheck and a config_bisect
#     (TYPE build): at the Nth hook or make target, and in the middle of the
#     Nth journal write (an LD_PRELOAD shim tears it); each rerun gives the
#     uninterrupted run's answer and builds nothing that was finished
#  2. POWER_CYCLE failing and hanging: INFRA, exit 3, the command and why;
#     in a bisect (TYPE boot) no commit is marked bad
#  3. a CONSOLE command that exits at once, or every 0.7 s, printing
#     nothing: INFRA
#  4. a box that hangs after a few boot lines: BAD, "timed out", in TIMEOUT
#  5. OUTPUT_DIR and the state directory full (tmpfs): INFRA and exit 3,
#     never BAD; a rerun after space is freed resumes
#  6. the journal's last record torn by hand: the rerun ignores it
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
src=$T/src
rm -rf "$src" st-* tmp log events kill_at builds ./*.conf
mkdir -p "$src"
t_start=$(date +%s)

g() { git -C "$src" "$@"; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME=$T

# killer.sh WHAT: one event; at the kill_at-th, SIGKILL the ktest above us
# and the make or hook it runs (they would finish in the background)
cat >killer.sh <<EOF
n=\$(( \$(wc -l <$T/events 2>/dev/null || echo 0) + 1 ))
echo "\$n \$1" >>$T/events
[ "\$n" -eq "\$(cat $T/kill_at 2>/dev/null || echo 0)" ] || exit 0
p=\$PPID
while [ "\$p" -gt 1 ]; do
	if [ "\$(cat /proc/\$p/comm)" = ktest ]; then kill -9 "\$p"; kill -9 0; fi
	p=\$(awk '{ print \$4 }' /proc/\$p/stat)
done
EOF

# The fake kbuild of test_run.sh: c7 breaks the build (c9 fixes it), c15
# (c17 fixes it) too; each make target is an event; "all" logs the commit
cat >"$src/Makefile" <<EOF
O ?= .
C := \$(O)/.config
K := sh $T/killer.sh
all:
	@\$(K) all
	@git -C \$(CURDIR) rev-parse HEAD >> $T/builds
	@echo '  CC      init/main.o'
	@if [ -e broken ]; then echo 'init/main.c:20:1: error: expected ; before }'; exit 1; fi
	@if [ -e bug ]; then echo 'init/bug.c:1:1: error: the bug'; exit 1; fi
	@if [ -e $T/fill ]; then head -c 2000000 /dev/zero > \$(O)/vmlinux.o || exit 1; fi
	@mkdir -p \$(O)/arch/x86/boot && cp \$(C) \$(O)/arch/x86/boot/bzImage
	@\$(K) all-end
mrproper:
	@\$(K) mrproper
	@rm -rf \$(C) \$(O)/arch
olddefconfig oldnoconfig:
	@\$(K) \$@
	@touch \$(C); grep -q CONFIG_DEFAULT_ON \$(C) || echo CONFIG_DEFAULT_ON=y >> \$(C)
defconfig:
	@\$(K) defconfig
	@echo CONFIG_DEFAULT_ON=y > \$(C)
kernelrelease:
	@echo "6.1.0\$\$(cat \$(O)/localversion 2>/dev/null)"
EOF
g init -q
g add Makefile
g commit -q -m "c0: the tree"
for n in $(seq 1 20); do
	echo "$n" >"$src/version"
	case $n in
	7) touch "$src/broken"; g add broken ;;
	9) g rm -q broken ;;
	15) touch "$src/bug"; g add bug ;;
	17) g rm -q bug ;;
	esac
	g add version
	g commit -q -m "c$n: change $n"
	eval "c$n=\$(g rev-parse HEAD)"
done
c0=$(g rev-list --max-parents=0 HEAD)

common() {	# common STATE [OUTPUT_DIR]
	cat <<EOF
BUILD_DIR = $src
OUTPUT_DIR = ${2:-$T/build-out}
TMP_DIR = $T/tmp
LOG_FILE = $T/log
STATE_DIR = $T/$1
MACHINE = box
LOCALVERSION = -t
BUILD_TYPE = defconfig
PRE_BUILD = sh $T/killer.sh PRE_BUILD
POST_BUILD = sh $T/killer.sh POST_BUILD
EOF
}
bisect_conf() {	# bisect_conf STATE > file
	common "$1"
	printf 'TEST_START\nTEST_TYPE = bisect\nBISECT_TYPE = build\n'
	printf 'BISECT_GOOD = %s\nBISECT_BAD = %s\n' "$c0" "$c16"
}
pc_conf() {
	common "$1"
	printf 'TEST_START\nTEST_TYPE = patchcheck\nPATCHCHECK_TYPE = build\n'
	printf 'PATCHCHECK_START = %s\nPATCHCHECK_END = %s\n' "$c1" "$c20"
	echo "PATCHCHECK_SLEEP_TIME = 0"
}
# what a run answered: the culprit, or every step's commit and verdict
answer() {
	jq -c '[.tests[0].first_bad_commit, .tests[0].culprit_options,
		[.tests[0].steps[] | [.commit, .verdict]]]' "$1/report.json"
}
nlines() { if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi; }

# the uninterrupted runs: their answers, builds and events
g checkout -q "$c20"
baseline() {	# baseline NAME CONFFN
	rm -f events builds kill_at
	$2 "st-$1-base" >"$1.conf"
	run_ktest "$1.conf"
	eval "${1}_rc=\$rc"
	eval "${1}_ans=\$(answer st-$1-base)"
	eval "${1}_builds=\$(nlines builds)"
	eval "${1}_events=\$(nlines events)"
}
baseline bisect bisect_conf
check "the uninterrupted bisect finds the first break, c7 (exit $bisect_rc, $bisect_builds builds, $bisect_events events)" \
	jqe ".tests[0].first_bad_commit == \"$c7\"" st-bisect-base/report.json
baseline pc pc_conf
check "the uninterrupted patchcheck fails 4 of 20 (exit $pc_rc, $pc_builds builds, $pc_events events)" \
	grep -q '4 of 20 commits break the series' out

# kill_case NAME WHAT: the run just killed, then its rerun, checked
#  - the kill happened (137); the rerun ends as the uninterrupted run did,
#    with its answer
#  - no commit with a finished step in the journal is built again, and the
#    rerun builds exactly what the uninterrupted run built less those
kill_case() {
	name=$1 what=$2 state=$3
	killed_rc=$rc
	# whole records only: a torn last one does not count
	done_keys=$(awk '$2 == length($0) - length($1 $2 $3) - 3' "$state/journal" 2>/dev/null |
		grep 'state=done' |
		sed -n 's/.*key=[a-z_-]*:\([0-9a-f]*\).*/\1/p' | sort -u)
	ndone=$(printf '%s' "$done_keys" | grep -c .)
	before=$(nlines builds)
	run_ktest "$name.conf"
	eval "want_rc=\$${name}_rc want_ans=\$${name}_ans want_builds=\$${name}_builds"
	again=$(tail -n +$((before + 1)) builds 2>/dev/null | sort -u)
	rebuilt=$(printf '%s\n%s\n' "$done_keys" "$again" | grep . | sort | uniq -d)
	nagain=$(( $(nlines builds) - before ))
	if [ "$killed_rc" -eq "${killed_want:-137}" ] && [ "$rc" -eq "$want_rc" ] &&
	   [ "$(answer "$state")" = "$want_ans" ] && [ -z "$rebuilt" ] &&
	   [ "$nagain" -eq $((want_builds - ndone)) ] &&
	   [ "$(grep -c 'in the earlier run (from the journal)' out)" -eq "$ndone" ]; then
		ok "$name killed $what: rerun exit $rc, same answer, $ndone finished steps replayed, $nagain built"
	else
		not_ok "$name killed $what: killed exit $killed_rc, rerun exit $rc (want $want_rc), $ndone done, $nagain built (want $((want_builds - ndone))), rebuilt: $rebuilt"
		sed 's/^/# /' "$KTEST_TMP/err" | head -n 5
	fi
}

# at the Nth event (hook or make target): COUNT distinct random events of
# the whole run (all of them when it has fewer), drawn from KTEST_FM_SEED
# (printed: set it to replay a failure)
seed=${KTEST_FM_SEED:-$(date +%s)}
echo "# SIGKILL points drawn with KTEST_FM_SEED=$seed"
kill_at_events() {	# NAME CONFFN COUNT
	name=$1 fn=$2 k=$3
	eval "ev=\$${name}_events"
	points=$(awk -v n=$((ev - 1)) -v k="$k" -v s="$seed" 'BEGIN {
		srand(s)
		for (i = 1; i <= n; i++) a[i] = i
		for (i = 1; i <= n && i <= k; i++) {
			j = i + int(rand() * (n - i + 1))
			t = a[i]; a[i] = a[j]; a[j] = t
			print a[i]
		}
	}' | sort -n)
	check "$name: $(echo $points | wc -w) kill points drawn of $((ev - 1)) events ($k, or all)" \
		test "$(echo $points | wc -w)" -eq "$(( ev - 1 < k ? ev - 1 : k ))"
	for at in $points; do
		rm -f events builds
		echo "$at" >kill_at
		$fn "st-$name-k$at" >"$name.conf"
		run_ktest "$name.conf"
		rm -f kill_at
		kill_case "$name" "at event $at ($(sed -n "${at}s/^[0-9]* //p" events))" "st-$name-k$at"
	done
}
kill_at_events bisect bisect_conf 20
kill_at_events pc pc_conf 20

# in the middle of the Nth journal write: the record is torn on disk
tear=$T/tear.so
cat >tear.c <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count;

/* The KTEST_TEAR_AT-th write to a file named journal: half, then SIGKILL */
ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	const char *at = getenv("KTEST_TEAR_AT");
	char p[64], t[4096];
	ssize_t l;

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	if (at && (l = readlink(p, t, sizeof(t) - 1)) > 8) {
		t[l] = '\0';
		if (!strcmp(t + l - 8, "/journal") && ++count == atoi(at)) {
			if (real(fd, buf, n / 2) < 0)
				_exit(1);
			kill(getpid(), SIGKILL);
		}
	}
	return real(fd, buf, n);
}
EOF
if cc -shared -fPIC -o "$tear" tear.c -ldl 2>/dev/null; then
	for spec in bisect:3 bisect:6 bisect:9 pc:4 pc:17 pc:30; do
		name=${spec%:*} at=${spec#*:}
		rm -f events builds
		$([ "$name" = pc ] && echo pc_conf || echo bisect_conf) "st-$name-t$at" >"$name.conf"
		LD_PRELOAD=$tear KTEST_TEAR_AT=$at "$KTEST" "$name.conf" >out 2>err </dev/null
		rc=$?
		check "$name: journal write $at torn by SIGKILL (no newline at its end)" \
			test -n "$(tail -c 1 "st-$name-t$at/journal")"
		kill_case "$name" "in journal write $at" "st-$name-t$at"
		check "$name: the rerun says the torn record was ignored" \
			grep -q "journal's last record was cut short" out
		check "$name: and every record in the journal is whole" \
			sh -c "awk '\$2 != length(\$0) - length(\$1 \$2 \$3) - 3 { exit 1 }' st-$name-t$at/journal"
	done
else
	ok "skipped: no C compiler for the journal-tearing shim"
fi

# config_bisect: a fake kbuild as in test_config_bisect.sh, smaller: 16
# options; the build fails with H11 on
cb=$T/cbsrc
rm -rf "$cb"
mkdir -p "$cb"
cat >"$cb/Makefile" <<EOF
O ?= .
C := \$(O)/.config
K := sh $T/killer.sh
all:
	@\$(K) all
	@echo build >> $T/builds
	@if grep -qx CONFIG_H11=y \$(C); then echo 'init/main.c:1:1: error: bad config'; exit 1; fi
	@mkdir -p \$(O)/arch/x86/boot && cp \$(C) \$(O)/arch/x86/boot/bzImage
	@\$(K) all-end
mrproper:
	@rm -rf \$(C) \$(O)/arch
olddefconfig oldnoconfig:
	@\$(K) \$@
	@touch \$(C); grep -q '^CONFIG_DEFAULT_ON=' \$(C) || echo CONFIG_DEFAULT_ON=y >> \$(C)
kernelrelease:
	@echo 6.1.0
EOF
for v in y n; do
	{
		echo "CONFIG_DEFAULT_ON=y"
		for i in $(seq 1 16); do
			if [ $v = y ]; then echo "CONFIG_H$i=y"
			else echo "# CONFIG_H$i is not set"; fi
		done
	} >"cb-$v.config"
done
cb_conf() {
	common "$1" "$T/cb-out" | sed "s|^BUILD_DIR = .*|BUILD_DIR = $cb|; /^BUILD_TYPE/d"
	printf 'TEST_START\nTEST_TYPE = config_bisect\nCONFIG_BISECT_TYPE = build\n'
	printf 'CONFIG_BISECT = %s\nCONFIG_BISECT_GOOD = %s\n' "$T/cb-y.config" "$T/cb-n.config"
}
baseline cb cb_conf
check "the uninterrupted config_bisect names H11 (exit $cb_rc, $cb_builds builds, $cb_events events)" \
	jqe '.tests[0].culprit_options == ["CONFIG_H11"]' st-cb-base/report.json
kill_at_events cb cb_conf 4
t1=$(date +%s)
echo "# case 1 (bisect, patchcheck, config_bisect): $((t1 - t_start)) s"

# ---- 2-4: a box made of commands ----
# Its serial line is console.log, read by CONSOLE = tail -F; POWER_CYCLE
# appends the next boot's log to it; ssh to it is refused (port 1), so every
# reboot is a power cycle.
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config
cat >good.log <<'EOF'
[    0.000000] Linux version 6.1.0-t (t@t) #1
Debian GNU/Linux 12 box ttyS0
box login:
EOF
cat >hang.log <<'EOF'
[    0.000000] Linux version 6.1.0-t (t@t) #1
[    0.100000] Calibrating delay loop... 4000.00 BogoMIPS
[    0.200000] pid_max: default: 32768 minimum: 301
EOF
box_conf() {	# box_conf STATE POWER_CYCLE CONSOLE EXTRA...
	common "$1" | grep -v '^MACHINE\|^PRE_BUILD\|^POST_BUILD'
	cat <<EOF
MACHINE = 127.0.0.1
NO_INSTALL = 1
SSH_CONFIG = $T/ssh_config
CONNECT_TIMEOUT = 1
REBOOT_TYPE = script
REBOOT_SCRIPT = true
POWER_CYCLE = $2
CONSOLE = $3
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
STOP_AFTER_FAILURE = 1
TIMEOUT = 3
SLEEP_TIME = 0
REBOOT_ON_SUCCESS = 0
EOF
	shift 3
	for l in "$@"; do echo "$l"; done
}
tailf="tail -n 0 -F $T/console.log"
: >console.log
g checkout -q "$c5"

# 2. the power command fails
box_conf st-pfail "echo 'PDU 10.0.0.9: outlet 3: connection refused' >&2; exit 1" "$tailf" \
	"TEST_START" "TEST_TYPE = boot" "BUILD_TYPE = nobuild" >b.conf
run_ktest b.conf
expect_rc 3 "POWER_CYCLE failing (exit 1): exit 3"
check "the verdict is INFRA" jqe '.tests[0].steps[0].verdict == "INFRA"' st-pfail/report.json
check "the message names POWER_CYCLE, how it failed and its output" \
	grep -q "the power cycle failed: POWER_CYCLE 'echo .*' failed: exit 1; output: PDU 10.0.0.9: outlet 3: connection refused" out
check "and why it was cycled (the box does not answer)" grep -q 'cannot reboot the box: the box does not answer' out

# ... and hangs: RUN_TIMEOUT caps it
start=$(date +%s)
box_conf st-phang "sleep 67" "$tailf" "RUN_TIMEOUT = 2" \
	"TEST_START" "TEST_TYPE = boot" "BUILD_TYPE = nobuild" >b.conf
run_ktest b.conf
took=$(( $(date +%s) - start ))
expect_rc 3 "POWER_CYCLE hanging: exit 3"
check "the verdict is INFRA" jqe '.tests[0].steps[0].verdict == "INFRA"' st-phang/report.json
check "the message says POWER_CYCLE timed out after RUN_TIMEOUT and was killed" \
	grep -q "POWER_CYCLE 'sleep 67' timed out after 2.0 s and was killed" out
check "within RUN_TIMEOUT and the ssh probe (${took}s)" test "$took" -lt 15
check "leaving no sleep behind" sh -c "! pgrep -fx 'sleep 67' >/dev/null"

# in a bisect (TYPE boot): retried, then the run stops; no commit is bad
rm -f builds
box_conf st-pbisect "exit 1" "$tailf" "TEST_START" "TEST_TYPE = bisect" \
	"BISECT_TYPE = boot" "BISECT_GOOD = $c1" "BISECT_BAD = $c6" >b.conf
run_ktest b.conf
expect_rc 3 "a boot bisect whose POWER_CYCLE fails: exit 3"
check "the lab is blamed, three times, naming POWER_CYCLE" \
	grep -q "the lab (.*) failed 3 times on .*POWER_CYCLE 'exit 1' failed: exit 1" out
check "every step in the report is INFRA, none BAD" \
	jqe '[.tests[0].steps[] | .verdict] | length == 3 and all(. == "INFRA")' st-pbisect/report.json
check "no first bad commit is named" jqe '.tests[0].first_bad_commit == null' st-pbisect/report.json
check "the journal holds no BAD" sh -c "! grep -q 'verdict=BAD' st-pbisect/journal"

# 3. the console never comes back: the command exits at once, prints nothing
start=$(date +%s)
box_conf st-nocon "true" "true" \
	"TEST_START" "TEST_TYPE = boot" "BUILD_TYPE = nobuild" >b.conf
run_ktest b.conf
took=$(( $(date +%s) - start ))
expect_rc 3 "a console that never comes back: exit 3 ($took s)"
check "INFRA: the lab's fault, not the kernel's" jqe '.tests[0].steps[0].verdict == "INFRA"' st-nocon/report.json
check "the message names the box and the console command" \
	grep -q 'Failed: the console of 127.0.0.1: console true went away and did not come back' out
# ... nor one that dies every 0.7 s: it is open again when TIMEOUT ends,
# and its silence was read as the kernel's (BAD) before
box_conf st-nocon2 "true" "sleep 0.7" \
	"TEST_START" "TEST_TYPE = boot" "BUILD_TYPE = nobuild" >b.conf
run_ktest b.conf
expect_rc 3 "a console command that keeps dying without a line: exit 3"
# (closed or just reopened at TIMEOUT: the same verdict, the message says
# which)
check "INFRA, naming the console that went away" \
	grep -q 'console sleep 0.7 went away and did not come back' out
check "INFRA in the report" jqe '.tests[0].steps[0].verdict == "INFRA"' st-nocon2/report.json

# 4. the box hangs after a few boot lines: the kernel's fault, BAD
start=$(date +%s)
box_conf st-hang "cat $T/hang.log >> $T/console.log" "$tailf" \
	"TEST_START" "TEST_TYPE = boot" "BUILD_TYPE = nobuild" >b.conf
run_ktest b.conf
took=$(( $(date +%s) - start ))
expect_rc 1 "a box that hangs after a few boot lines fails the boot (exit 1)"
check "BAD in the report" jqe '.tests[0].steps[0].verdict == "BAD"' st-hang/report.json
check "saying it timed out after TIMEOUT" \
	grep -q 'KTEST RESULT: TEST 1 Failed: failed boot: failed - never got a boot prompt. (Timed out after 3 seconds)' out
check "the lines it printed are in the log" grep -q 'pid_max: default' tmp/dmesg-127.0.0.1
check "within TIMEOUT, plus the ssh probe (${took}s)" test "$took" -le 8

# ---- 5. the disk fills up ----
mounted=
cleanup() { for m in $mounted; do umount "$m" 2>/dev/null; done; }
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p mnt-out mnt-state
if mount -t tmpfs -o size=1m tmpfs mnt-out 2>/dev/null &&
   mount -t tmpfs -o size=1m tmpfs mnt-state 2>/dev/null; then
	mounted="$T/mnt-out $T/mnt-state"
	g checkout -q "$c20"
	# a build whose output does not fit in OUTPUT_DIR (1 MB)
	touch fill
	{ common st-full "$T/mnt-out/build"; printf 'TEST_START\nTEST_TYPE = build\n'; } >f.conf
	run_ktest f.conf
	expect_rc 3 "a build that fills OUTPUT_DIR: exit 3"
	check "INFRA, not BAD" jqe '.tests[0].steps[0].verdict == "INFRA"' st-full/report.json
	check "saying the host ran out of space" \
		grep -q 'build could not run: .*failed on the host (exit [0-9]*): .*No space left on device' out
	{ common st-fullb "$T/mnt-out/build"; printf 'TEST_START\nTEST_TYPE = bisect\nBISECT_TYPE = build\n'
	  printf 'BISECT_GOOD = %s\nBISECT_BAD = %s\n' "$c9" "$c16"; } >f.conf
	run_ktest f.conf
	expect_rc 3 "a bisect whose builds fill OUTPUT_DIR: exit 3 after the retries"
	check "no step is BAD, none GOOD" \
		jqe '[.tests[0].steps[] | .verdict] | length == 3 and all(. == "INFRA")' st-fullb/report.json
	rm -f fill
	rm -rf mnt-out/build

	# the state directory fills in the middle of a patchcheck: the hook
	# of the third build fills the file system
	pc_conf "mnt-state/st" | sed "s|^PRE_BUILD = .*|PRE_BUILD = if [ \$(wc -l < $T/builds) -eq 2 ]; then head -c 2000000 /dev/zero > $T/mnt-state/filler; fi; true|" >pc.conf
	rm -f builds events
	run_ktest pc.conf
	expect_rc 3 "a patchcheck whose state directory fills: exit 3"
	check "saying the journal cannot be written, and why" \
		grep -q "cannot write the journal $T/mnt-state/st/journal: No space left on device" out
	check "it stopped there (built $(nlines builds) of 20)" test "$(nlines builds)" -lt 20
	rm -f mnt-state/filler
	killed_want=3
	kill_case pc "by a full state directory (space freed)" mnt-state/st
	killed_want=137
else
	ok "skipped: the disk-full cases (mount -t tmpfs is not permitted here)"
fi

# ---- 6. a torn last record, by hand ----
rm -f events builds
echo 11 >kill_at
bisect_conf st-torn >bisect.conf
run_ktest bisect.conf
rm -f kill_at
j=st-torn/journal
size=$(stat -c %s $j)
last=$(tail -n 1 $j | wc -c)
truncate -s $((size - last / 2)) $j
check "the journal's last record is cut in the middle" test -n "$(tail -c 1 $j)"
kill_case bisect "then its last journal record torn" st-torn
check "the rerun says it ignored the torn record" grep -q "journal's last record was cut short" out
echo "# the whole script: $(( $(date +%s) - t_start )) s"

finish
