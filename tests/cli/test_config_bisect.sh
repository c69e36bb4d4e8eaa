#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# ktest run with TEST_TYPE = config_bisect (CONFIG_BISECT_TYPE = build) on a
# small fake kbuild: "make olddefconfig" drops an option whose dependency is
# off (normalise.sh, rules in the tree's "deps" file) and the build fails
# when the .config holds every line of the tree's "culprits" file. Each case
# checks the answer against the culprits and counts the builds; then kill -9
# in the middle and a rerun; the checks, MIN_CONFIG, defconfig and
# BISECT_MANUAL paths; bad input.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
src=$KTEST_TMP/src
rm -rf "$src" out-* tmp log state* ./*.config builds
mkdir -p "$src"

cat >"$src/Makefile" <<'EOF'
O ?= .
C := $(O)/.config
all:
	@echo build >> $(CURDIR)/../builds
	@if [ -e $(CURDIR)/../infra-once ]; then rm $(CURDIR)/../infra-once; echo 'init/main.o: No space left on device'; exit 1; fi
	@echo '  CC      init/main.o'
	@if sh $(CURDIR)/bad.sh $(C); then echo 'init/main.c:1:1: error: bad config'; exit 1; fi
	@mkdir -p $(O)/arch/x86/boot && cp $(C) $(O)/arch/x86/boot/bzImage
mrproper:
	@rm -rf $(C) $(O)/arch
olddefconfig oldnoconfig:
	@sh $(CURDIR)/normalise.sh $(C)
defconfig:
	@printf 'CONFIG_DEFAULT_ON=y\n' > $(C)
kernelrelease:
	@echo "6.1.0$$(cat $(O)/localversion 2>/dev/null)"
EOF
# an option whose dependency is not =y is dropped (kconfig writes nothing
# for an invisible option); CONFIG_DEFAULT_ON always comes back
cat >"$src/normalise.sh" <<'EOF'
c=$1
touch "$c"
while read -r opt dep; do
	[ -n "$opt" ] || continue
	grep -qx "CONFIG_$dep=y" "$c" && continue
	grep -v "^CONFIG_$opt=\|^# CONFIG_$opt is not set" "$c" >"$c.n"
	mv "$c.n" "$c"
done <"$(dirname "$0")/deps"
grep -q '^CONFIG_DEFAULT_ON=' "$c" || echo CONFIG_DEFAULT_ON=y >>"$c"
exit 0
EOF
cat >"$src/bad.sh" <<'EOF'
while read -r l; do
	[ -n "$l" ] || continue
	grep -qx "$l" "$1" || exit 1
done <"$(dirname "$0")/culprits"
exit 0
EOF

# good: H1..H24 off; bad: all on. deps: H5 needs H3
gen() {
	v=$1
	shift
	{
		echo "# Linux/x86 6.1.0 Kernel Configuration"
		echo "CONFIG_DEFAULT_ON=y"
		for i in $(seq 1 24); do
			if [ "$v" = y ]; then echo "CONFIG_H$i=y"
			else echo "# CONFIG_H$i is not set"; fi
		done
		for l in "$@"; do echo "$l"; done
	}
}
gen n >good.config
gen y >bad.config

conf() {
	cat <<EOF
BUILD_DIR = $src
OUTPUT_DIR = $KTEST_TMP/out-$1
TMP_DIR = $KTEST_TMP/tmp
LOG_FILE = $KTEST_TMP/log
STATE_DIR = $KTEST_TMP/state-$1
MACHINE = box
LOCALVERSION = -t
TEST_START
TEST_TYPE = config_bisect
CONFIG_BISECT_TYPE = build
CONFIG_BISECT = $KTEST_TMP/bad.config
EOF
	shift
	for l in "$@"; do echo "$l"; done
}

builds() { wc -l <builds 2>/dev/null || echo 0; }

# ---- one culprit among 24 ----
: >"$src/deps"
echo "CONFIG_H17=y" >"$src/culprits"
conf one "CONFIG_BISECT_GOOD = $KTEST_TMP/good.config" >one.conf
rm -f builds
run_ktest one.conf
expect_rc 0 "config bisect with one culprit among 24 changes: exit 0"
check "24 changes are listed, as diffconfig" grep -q '^ H24 n -> y$' out
check "the answer is H17 alone" \
	sh -c "sed -n '/fails with this change:/,/smallest failing/p' out | grep -v 'fails with\|smallest' | tr -d '\n' | grep -qx ' H17 n -> y'"
n=$(builds)
check "in at most log2(24) + 1 = 6 builds ($n)" test "$n" -le 6
check "the report lists every build with its verdict" \
	jqe '[.tests[0].steps[] | select(.kind == "config_bisect")] | length == '"$n" state-one/report.json
check "each names the candidate config it built" \
	jqe '[.tests[0].steps[] | select(.config | test("/config-bisect-1/cand-[0-9a-f]{16}[.]config$"))] | length == '"$n" state-one/report.json
check "each with GOOD or BAD" \
	jqe '[.tests[0].steps[] | select(.verdict != "GOOD" and .verdict != "BAD")] | length == 0' state-one/report.json
check "the report names the culprit" \
	jqe '.tests[0].culprit_options == ["CONFIG_H17"]' state-one/report.json
check "the smallest failing config is kept" grep -qx 'CONFIG_H17=y' tmp/config_bisect_bad.config
check "and it has none of the harmless changes" sh -c '! grep -q "^CONFIG_H1=y" tmp/config_bisect_bad.config'

# ---- two changes needed together ----
printf 'CONFIG_H4=y\nCONFIG_H20=y\n' >"$src/culprits"
conf two "CONFIG_BISECT_GOOD = $KTEST_TMP/good.config" >two.conf
rm -f builds
run_ktest two.conf
expect_rc 0 "two culprits needed together: exit 0"
check "both are named, together" grep -q 'fails with these changes together' out
check "H4" grep -qx ' H4 n -> y' out
check "H20" grep -qx ' H20 n -> y' out
n=$(builds)
check "in at most 2 (log2(24) + 1) = 12 builds ($n)" test "$n" -le 12
check "the report lists both" \
	jqe '.tests[0].culprit_options == ["CONFIG_H4", "CONFIG_H20"]' state-two/report.json

# ---- a culprit reachable only through depends on; one side only ----
# H9 needs X1; X1 is off in good; in bad both are on. config-bisect.pl never
# sets X1 (good has no line for H9: invisible there)
echo "H9 X1" >"$src/deps"
echo "CONFIG_H9=y" >"$src/culprits"
gen n "# CONFIG_X1 is not set" >good2.config
gen y "CONFIG_X1=y" >bad.config
conf deps "CONFIG_BISECT_GOOD = $KTEST_TMP/good2.config" >deps.conf
run_ktest deps.conf
expect_rc 0 "a culprit that needs its dependency: exit 0"
check "H9 is only in the bad config after olddefconfig (+H9 y)" grep -qx '+H9 y' out
check "X1 and H9 are named together" \
	sh -c "grep -qx ' X1 n -> y' out && grep -q 'these changes together' out"

# ---- kill -9 in the middle, then the rerun ----
: >"$src/deps"
echo "CONFIG_H11=y" >"$src/culprits"
gen y >bad.config
conf kill "CONFIG_BISECT_GOOD = $KTEST_TMP/good.config" \
	"PRE_BUILD = n=\$(cat $KTEST_TMP/kcount 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > $KTEST_TMP/kcount; if [ \$n -eq 3 ]; then kill -9 \$PPID; fi" >kill.conf
rm -f kcount builds
run_ktest kill.conf
check "ktest killed with SIGKILL in its third build (exit $rc)" test "$rc" -eq 137
check "two steps were finished in the journal" \
	test "$(grep -c 'state=done' state-kill/journal)" -eq 2
rm -f builds
run_ktest kill.conf
expect_rc 0 "the rerun finishes"
check "it replays the two finished steps" \
	test "$(grep -c 'in the earlier run (from the journal)' out)" -eq 2
check "same answer as without the kill" grep -qx ' H11 n -> y' out
conf nokill "CONFIG_BISECT_GOOD = $KTEST_TMP/good.config" >nokill.conf
rm -f builds
run_ktest nokill.conf
total=$(builds)
rm -f builds
check "the rerun built only what was left (total $total)" \
	test "$(grep -c 'state=done' state-kill/journal)" -eq "$total"

# ---- the lab fails once: run again, never a verdict ----
echo "CONFIG_H11=y" >"$src/culprits"
conf infra "CONFIG_BISECT_GOOD = $KTEST_TMP/good.config" >infra.conf
touch infra-once
run_ktest infra.conf
expect_rc 0 "a build the host failed once (disk full) is retried"
check "saying so" grep -q 'INFRA trouble (build could not run' out
check "the retry is its own step in the journal" grep -q 'key=config_bisect-retry1:' state-infra/journal
check "and the answer is the same" grep -qx ' H11 n -> y' out
check "the failed attempt is INFRA in the report, not BAD" \
	jqe '[.tests[0].steps[] | select(.verdict == "INFRA")] | length == 1' state-infra/report.json

# ---- CONFIG_BISECT_CHECK ----
conf chk "CONFIG_BISECT_GOOD = $KTEST_TMP/good.config" "CONFIG_BISECT_CHECK = 1" >chk.conf
: >"$src/culprits.new"
echo "CONFIG_NOWHERE=y" >"$src/culprits"
run_ktest chk.conf
expect_rc 1 "CONFIG_BISECT_CHECK with a bad config that builds: the test fails"
check "ktest.pl's words" grep -q 'Bad config succeeded when expected to fail!' out
echo "CONFIG_DEFAULT_ON=y" >"$src/culprits"
rm -rf state-chk
run_ktest chk.conf
expect_rc 1 "CONFIG_BISECT_CHECK with a good config that fails: the test fails"
check "ktest.pl's words" grep -q 'Good config failed when expected to succeed!' out

# ---- MIN_CONFIG as the good config; defconfig when there is none ----
echo "CONFIG_H2=y" >"$src/culprits"
conf min "MIN_CONFIG = $KTEST_TMP/good.config" >min.conf
run_ktest min.conf
expect_rc 0 "MIN_CONFIG is the good config"
check "and is not forced onto the candidates" grep -q "Disabling 'MIN_CONFIG' for this test" out
check "the answer" grep -qx ' H2 n -> y' out
conf def >def.conf
run_ktest def.conf
expect_rc 0 "no good config: defconfig's"
check "as ktest.pl says" grep -q 'No config specified, checking if defconfig works' out
check "H2 is new against defconfig (+H2 y)" grep -qx '+H2 y' out

# ---- BISECT_MANUAL: the user's verdicts ----
echo "CONFIG_H13=y" >"$src/culprits"
conf man "CONFIG_BISECT_GOOD = $KTEST_TMP/good.config" "BISECT_MANUAL = 1" >man.conf
# answer what the build says: bad when the build failed
yes_answers() {
	i=0
	while [ $i -lt 20 ]; do echo bad; i=$((i + 1)); done
}
yes_answers >answers
"$KTEST" man.conf <answers >out 2>&1
rc=$?
check "BISECT_MANUAL: every answer 'bad' ends at the first change in the order (exit $rc)" \
	grep -qx ' H1 n -> y' out
check "the answers are journalled" grep -q 'ev=manual' state-man/journal

# ---- nothing to bisect, bad input ----
conf same "CONFIG_BISECT_GOOD = $KTEST_TMP/bad.config" >same.conf
run_ktest same.conf
expect_rc 1 "the same config on both sides: the test fails"
check "saying so" grep -q 'the same after olddefconfig' out
conf nofile "CONFIG_BISECT_GOOD = $KTEST_TMP/nosuch.config" >nofile.conf
run_ktest nofile.conf
expect_rc 2 "a missing good config is a config error: exit 2"
check "naming the option and the file" grep -q "CONFIG_BISECT_GOOD = $KTEST_TMP/nosuch.config: No such file" out

conf notype "CONFIG_BISECT_GOOD = $KTEST_TMP/good.config" | grep -v CONFIG_BISECT_TYPE >notype.conf
run_ktest notype.conf
expect_rc 2 "no CONFIG_BISECT_TYPE: exit 2"
check "naming it" grep -q 'CONFIG_BISECT_TYPE\[1\] not defined' out

finish
