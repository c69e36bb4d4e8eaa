#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# ktest --kcidb FILE: the KCIDB v4 document of real runs (a build that
# passes and one that fails, a bisect, a patchcheck, a boot that passes and
# one that panics, on a fake kbuild and a box made of commands) validated
# against KCIDB's published schema (tests/data/kcidb-v4.schema.json, from
# kcidb-io's v04_03.py) with python3-jsonschema, plus the links between the
# objects. Broken documents must fail, so the validator is seen checking.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
src=$KTEST_TMP/src
schema=$DATA/kcidb-v4.schema.json
validate="$KTEST_SRC/tests/kcidb_validate.py"
rm -rf "$src" build-out tmp log state*
mkdir -p "$src"

g() { git -C "$src" "$@"; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME=$KTEST_TMP

# valid FILE "what" [kcidb]: FILE (or its kcidb member) passes the schema
valid() {
	if python3 "$validate" "$schema" "$1" ${3:+"$3"} 2>"$KTEST_TMP/verr"; then
		ok "$2"
	else
		not_ok "$2"
		sed 's/^/# /' "$KTEST_TMP/verr" | head -n 10
	fi
}
# invalid FILE "what": FILE must fail it
invalid() {
	if python3 "$validate" "$schema" "$1" 2>"$KTEST_TMP/verr"; then
		not_ok "$2 (the validator accepted it)"
	else
		ok "$2 ($(head -n 1 "$KTEST_TMP/verr" | sed 's/^[^:]*: //'))"
	fi
}

cat >"$src/Makefile" <<'EOF'
O ?= .
C := $(O)/.config
all:
	@echo '  CC      init/main.o'
	@if [ -e bug ]; then echo 'init/bug.c:1:1: error: the bug'; exit 1; fi
	@mkdir -p $(O)/arch/x86/boot && cp $(C) $(O)/arch/x86/boot/bzImage
mrproper:
	@rm -rf $(C) $(O)/arch
olddefconfig oldnoconfig:
	@touch $(C)
defconfig:
	@echo CONFIG_DEFAULT_ON=y > $(C)
kernelrelease:
	@echo "6.1.0$$(cat $(O)/localversion 2>/dev/null)"
EOF
g init -q -b main
g remote add origin https://git.example.org/pub/linux.git
g add Makefile
g commit -q -m "c0: the tree"
for n in 1 2 3 4 5 6 7 8; do
	echo "$n" >"$src/version"
	case $n in
	5) touch "$src/bug"; g add bug ;;
	7) g rm -q bug ;;
	esac
	g add version
	g commit -q -m "c$n: change $n"
	eval "c$n=\$(g rev-parse HEAD)"
done

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

# ---- a build that passes, one that fails ----
{ common state-build; echo "TEST_START"; echo "TEST_TYPE = build"; } >build.conf
g checkout -q main
g checkout -q "$c4"
run_ktest --kcidb "$KTEST_TMP/build.json" build.conf
expect_rc 0 "a build test passes"
valid build.json "its --kcidb FILE is valid KCIDB v4"
check "it is KCIDB alone (version, checkouts, builds, tests)" \
	jqe 'keys == ["builds", "checkouts", "tests", "version"] and .version.major == 4' build.json
check "one checkout, origin ktest, with the full commit hash" \
	jqe '.checkouts | length == 1 and .[0].origin == "ktest" and .[0].git_commit_hash == "'"$c4"'"' build.json
check "with the repository's origin URL" \
	jqe '.checkouts[0].git_repository_url == "https://git.example.org/pub/linux.git"' build.json
check "and no branch: HEAD was detached" jqe '.checkouts[0] | has("git_repository_branch") | not' build.json
check "one valid build with architecture x86 (BUILD_TARGET), config_name and URLs" \
	jqe '.builds | length == 1 and .[0].valid and .[0].architecture == "x86" and .[0].config_name == "defconfig" and (.[0].config_url | startswith("file:///")) and .[0].log_url == "file://'"$KTEST_TMP"'/log"' build.json
check "with a start_time and a duration" jqe '.builds[0].start_time != null and .builds[0].duration >= 0' build.json
check "no test object: a build test boots nothing" jqe '.tests == []' build.json
valid state-build/report.json "report.json's kcidb member is valid too" kcidb

g checkout -q "$c5"
run_ktest --kcidb=build-bad.json -D 'MAKE_CMD=make ARCH=arm64' build.conf
expect_rc 1 "a build test of a broken tree fails"
valid build-bad.json "the failed build's document is valid"
check "the build is not valid, why in misc, architecture from MAKE_CMD's ARCH=" \
	jqe '.builds[0].valid == false and (.builds[0].misc.why | test("build")) and .builds[0].architecture == "arm64"' build-bad.json
b1=$(jq -r '.builds[0].id' build.json)
b2=$(jq -r '.builds[0].id' build-bad.json)
check "two runs never share a build id ($b1, $b2)" test "$b1" != "$b2"

# ---- bisect, on the branch: KCIDB_ORIGIN names the origin ----
g checkout -q main
{ common state-bisect; echo "KCIDB_ORIGIN = my_lab"; echo "TEST_START"
  echo "TEST_TYPE = bisect"; echo "BISECT_TYPE = build"
  echo "BISECT_GOOD = $c1"; echo "BISECT_BAD = $c6"; } >bisect.conf
run_ktest --kcidb "$KTEST_TMP/bisect.json" bisect.conf
expect_rc 0 "bisect (build) finds c5"
check "the culprit is c5" grep -q "$c5 is the first bad commit" out
valid bisect.json "the bisect's document is valid"
steps=$(jq '.tests[0].steps | length' state-bisect/report.json)
check "one build per bisect step ($steps)" jqe ".builds | length == $steps" bisect.json
check "every id is my_lab:... (KCIDB_ORIGIN)" \
	jqe '[.checkouts[], .builds[]] | all(.origin == "my_lab" and (.id | startswith("my_lab:")))' bisect.json
check "the branch is named" jqe '.checkouts | all(.git_repository_branch == "main")' bisect.json
check "the culprit's build is not valid" \
	jqe '[.builds[] | select(.checkout_id == "my_lab:'"$c5"'")][0].valid == false' bisect.json

# ---- patchcheck ----
{ common state-pc; echo "TEST_START"; echo "TEST_TYPE = patchcheck"
  echo "PATCHCHECK_TYPE = build"; echo "PATCHCHECK_START = $c3"
  echo "PATCHCHECK_END = $c8"; } >pc.conf
run_ktest --kcidb "$KTEST_TMP/pc.json" pc.conf
expect_rc 1 "patchcheck of c3..c8 fails (c5, c6)"
valid pc.json "the patchcheck's document is valid"
check "six checkouts and six builds, two of them invalid" \
	jqe '(.checkouts | length) == 6 and (.builds | length) == 6 and ([.builds[] | select(.valid == false)] | length) == 2' pc.json

# ---- boots on a box made of commands: PASS and FAIL tests ----
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config
cat >bootlog <<'EOF2'
[    0.000000] Linux version 6.1.0-t (t@t) #1
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
POWER_CYCLE = cp $KTEST_TMP/$2 $KTEST_TMP/console.now
CONSOLE = sh -c 'while [ ! -s $KTEST_TMP/console.now ]; do sleep 0.1; done; cat $KTEST_TMP/console.now; exec sleep 60'
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
REBOOT_ON_SUCCESS = 0
STOP_AFTER_FAILURE = 1
TIMEOUT = 10
TEST_START
TEST_TYPE = boot
TEST_NAME = smoke
EOF2
	} >box.conf
	rm -f console.now
}
g checkout -q "$c4"
boxconf state-box bootlog
run_ktest --kcidb "$KTEST_TMP/boot.json" box.conf
expect_rc 0 "a boot passes"
valid boot.json "the boot's document is valid"
check "a test boot, PASS, on the build, named by TEST_NAME" \
	jqe '.tests | length == 1 and .[0].path == "boot" and .[0].status == "PASS" and .[0].comment == "smoke"' boot.json
check "hung on the build" jqe '.tests[0].build_id == .builds[0].id' boot.json
boxconf state-box2 panic.log
run_ktest --kcidb "$KTEST_TMP/panic.json" box.conf
expect_rc 1 "a boot that panics fails"
valid panic.json "the panic's document is valid"
check "the boot test is FAIL with its crash title" \
	jqe '.tests[0].status == "FAIL" and .tests[0].misc.crash_title == "kernel panic: Attempted to kill init!"' panic.json

# ---- a wrong origin is a config error ----
run_ktest -D KCIDB_ORIGIN=My-Lab --kcidb "$KTEST_TMP/x.json" build.conf
expect_rc 2 "KCIDB_ORIGIN = My-Lab is refused (exit 2)"
check "naming the option and the rule" grep -q "KCIDB_ORIGIN = 'My-Lab' is no KCIDB origin" err
check "before anything ran" test ! -e x.json

# ---- the validator really checks: broken documents fail ----
broken() {
	jq "$1" panic.json >"$2.json"
	invalid "$2.json" "$3"
}
broken '.tests[0].status = "INFRA"' status "a status KCIDB has no name for"
broken '.builds[0].valid = null' null "a null member"
broken '.builds[0].origin = "My-Lab"' origin "an origin with capitals and -"
broken '.checkouts[0].id = "nocolon"' id "an id without its origin"
broken '.checkouts[0].git_commit_hash = "abc123"' hash "a short commit hash"
broken '.builds[0].config_url = "out/.config"' uri "a config_url that is no URI"
broken '.tests[0].start_time = "yesterday"' time "a start_time that is no date-time"
broken '.version.major = 5' version "another major version"
broken '.builds[0].colour = "red"' extra "a member the schema does not have"
broken 'del(.builds[0].checkout_id)' required "a build without its checkout_id"
broken '.tests[0].build_id = "ktest:elsewhere"' link "a test whose build is not there"
broken '.builds += [.builds[0]]' twice "a build id twice"

finish
