#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The build cache with a kernel that has modules (ktest/build_cache.c):
# a boot bisect on a real git repo whose fake kbuild builds the commit's
# number into the image and into a module (CONFIG_MODULES=y), installed on
# a box made of commands (SSH_EXEC, SCP_TO_TARGET) whose / is $T/box. The
# box panics from c5 on, and whenever the module it has is not the one of
# the image it boots (modules_install run in an OUTPUT_DIR that holds
# another build). Every make and modules_install is logged.
#
#  1. BISECT_VERIFY: c5, verified; the verification's parent and culprit
#     come from the cache with their modules; each build's modules are
#     packed once (no modules_install for a cache hit), the box never
#     boots a module of another build, nothing is left in TMP_DIR or in
#     the box's /tmp
#  2. BISECT_TRIES = 3: the later runs of a commit install its first
#     run's packed modules, no modules_install
#  3. NO_INSTALL: nothing packed; the verification still takes its
#     builds from the cache
#  4. killed during a boot: the rerun takes what the killed run built,
#     modules included, from the cache
#  5. BISECT_SPECULATE: the builds ahead pack their modules too
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
src=$T/src
rm -rf "$src" st-* build-out tmp box ./*.conf console.log next makes boots \
	box.cmds mode hold
mkdir -p tmp box/boot box/tmp
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME="$T"

# ---- the tree: c0..c8, each builds its number into image and module ----
mkdir -p "$src"
cat >"$src/Makefile" <<EOF
O ?= .
all:
	@mkdir -p \$(O)/arch/x86/boot \$(O)/include/config \$(O)/mods
	@cat version > \$(O)/arch/x86/boot/bzImage
	@cat version > \$(O)/mods/lab.ko
	@echo 6.1.0-t > \$(O)/include/config/kernel.release
	@echo "build \$\$(cat version)" >> $T/makes
mrproper:
	@rm -rf \$(O)/.config \$(O)/arch \$(O)/mods
olddefconfig oldnoconfig oldconfig:
	@grep -q CONFIG_MODULES=y \$(O)/.config 2>/dev/null || echo CONFIG_MODULES=y >> \$(O)/.config
kernelrelease:
	@echo 6.1.0-t
modules_install:
	@mkdir -p \$(INSTALL_MOD_PATH)/lib/modules/6.1.0-t/kernel
	@cp \$(O)/mods/lab.ko \$(INSTALL_MOD_PATH)/lib/modules/6.1.0-t/kernel/lab.ko
	@echo "modules_install \$\$(cat \$(O)/mods/lab.ko)" >> $T/makes
EOF
g() { git -C "$src" "$@"; }
echo 0 >"$src/version"
g init -q
g add Makefile version
g commit -q -m "c0: the tree"
c0=$(g rev-parse HEAD)
for n in 1 2 3 4 5 6 7 8; do
	echo "$n" >"$src/version"
	g commit -q -am "c$n: change $n"
	eval "c$n=\$(g rev-parse HEAD)"
done

# ---- the box ----
printf '%s\n' '[    0.000000] Linux version 6.1.0-t (t@t) #1' 'box login:' >good.log
# boot.sh: the good kernel unless REBOOT_SCRIPT chose the test kernel;
# that one boots the box's image and module (OUTPUT_DIR's image with
# NO_INSTALL)
cat >boot.sh <<EOF
#!/bin/sh
if [ "\$(cat $T/next 2>/dev/null)" != test ]; then
	cat $T/good.log >> $T/console.log
	exit 0
fi
rm -f $T/next
if [ "\$(cat $T/mode 2>/dev/null)" = noinstall ]; then
	# (a qemu box: the image, no modules)
	img=\$(cat $T/build-out/arch/x86/boot/bzImage)
	mod=\$img
else
	img=\$(cat $T/box/boot/vmlinuz-test 2>/dev/null)
	mod=\$(cat $T/box/lib/modules/6.1.0-t/kernel/lab.ko 2>/dev/null)
fi
echo "\$img \$mod" >> $T/boots
echo '[    0.000000] Linux version 6.1.0-t (t@t) #1' >> $T/console.log
if [ -e $T/hold ] && [ \$(wc -l < $T/boots) -ge \$(cat $T/hold) ]; then
	:	# hangs: ktest is killed while it waits
elif [ "\$img" != "\$mod" ]; then
	echo "[    0.400000] lab: module of \$mod, kernel of \$img: Unknown symbol" >> $T/console.log
	echo '[    0.500000] Kernel panic - not syncing: module mismatch' >> $T/console.log
elif [ "\$mod" -ge 5 ]; then
	echo '[    0.500000] Kernel panic - not syncing: the bug' >> $T/console.log
else
	echo 'box login:' >> $T/console.log
fi
EOF
# box.sh: what ktest runs on the box (SSH_EXEC), on $T/box as its /
cat >box.sh <<EOF
#!/bin/sh
echo "\$1" >> $T/box.cmds
case \$1 in
'echo testing connection'|'echo check machine status') echo "\$1" ;;
sync) ;;
reboot) sh $T/boot.sh ;;
'rm -rf /lib/modules/6.1.0-t') rm -rf $T/box/lib/modules/6.1.0-t ;;
'cd / && tar -xzf /tmp/ktest-mods.tar.gz') tar -C $T/box -xzf $T/box/tmp/ktest-mods.tar.gz ;;
'rm -f /tmp/ktest-mods.tar.gz') rm -f $T/box/tmp/ktest-mods.tar.gz ;;
*) echo "box.sh: not a command of this box: \$1" >&2; exit 127 ;;
esac
EOF
# scp.sh SRC DST: a copy to the box
cat >scp.sh <<EOF
#!/bin/sh
echo "scp \$2" >> $T/box.cmds
cp "\$1" "$T/box\$2"
EOF

conf() {	# conf STATE EXTRA...
	cat <<EOF
MACHINE = box
BUILD_DIR = $src
OUTPUT_DIR = $T/build-out
TMP_DIR = $T/tmp
STATE_DIR = $T/$1
LOG_FILE = $T/$1.log
LOCALVERSION = -t
TARGET_IMAGE = /boot/vmlinuz-test
SSH_EXEC = sh $T/box.sh \$SSH_COMMAND
SCP_TO_TARGET = sh $T/scp.sh \$SRC_FILE \$DST_FILE
POWER_CYCLE = sh $T/boot.sh
REBOOT_TYPE = script
REBOOT_SCRIPT = sh -c 'echo test > $T/next'
CONSOLE = tail -n +1 -F $T/console.log
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 0
STOP_AFTER_FAILURE = 0
TIMEOUT = 5
BISECT_SLEEP_TIME = 0
TEST_START
TEST_TYPE = bisect
BISECT_TYPE = boot
BISECT_GOOD = $c0
BISECT_BAD = $c8
EOF
	shift
	for l in "$@"; do echo "$l"; done
}
fresh() {
	: >console.log
	rm -rf next makes boots box.cmds mode hold build-out box/lib box/boot/*
	rm -f box/tmp/*
}
culprit() { jq -r '.tests[0].first_bad_commit // "none"' "$1/report.json"; }
# count WORD: lines of makes that start with WORD
count() { grep -c "^$1 " makes; }
# once: every commit's modules_install ran once, and only for a build
once() {
	[ "$(grep '^modules_install ' makes | sort | uniq -d)" = "" ] &&
		[ "$(count modules_install)" = "$(count build)" ]
}
# bisects STATE CONF WHAT: ktest runs CONF, ends (exit 0) and names c5
bisects() {
	run_ktest "$2"
	expect_rc 0 "$3: the bisect ends"
	check "$3: it names c5 ($(culprit "$1"))" test "$(culprit "$1")" = "$c5"
}
no_mismatch() {
	check "$1: the box never booted a module of another build" \
		sh -c "! grep -q 'module mismatch' $T/console.log"
}

# ---- 1. verified, with the cache ----
fresh
conf st-verify "BISECT_VERIFY = 1" >verify.conf
bisects st-verify verify.conf "BISECT_VERIFY"
check "the verification took c4 and c5 from the cache, with their modules" \
	sh -c "[ \$(grep -c 'taken from the build cache: 6.1.0-t, with its modules' $T/out) -ge 2 ]"
check "each build's modules were packed once ($(count build) builds, $(count modules_install) modules_install)" once
check "and said so" grep -q 'Packing the modules of 6.1.0-t for the build cache' out
check "the cache entries hold them" \
	sh -c "ls $T/st-verify/build-cache/*/ktest-mods.tar.gz >/dev/null"
check "the boots ran the image and module of one build ($(tr '\n' ' ' <boots))" \
	awk '$1 != $2 { bad = 1 } END { exit bad }' boots
no_mismatch "verify"
check "no staging or tarball left in TMP_DIR" \
	sh -c "! ls $T/tmp | grep -q mods"
check "none in STATE_DIR" sh -c "! ls $T/st-verify/build-cache | grep -q tmp"
check "no tarball left in the box's /tmp" sh -c "[ -z \"\$(ls -A $T/box/tmp)\" ]"
check "the tarball went to the box by its name" \
	grep -qx 'scp /tmp' box.cmds

# ---- 2. later runs of a commit ----
fresh
conf st-tries "BISECT_TRIES = 3" >tries.conf
bisects st-tries tries.conf "BISECT_TRIES = 3"
check "the later runs built nothing: $(count build) builds for $(wc -l <boots) boots" \
	sh -c "[ $(count build) -lt $(wc -l <boots) ]"
check "and packed nothing: $(count modules_install) modules_install" once
no_mismatch "tries"

# ---- 3. NO_INSTALL ----
fresh
echo noinstall >mode
conf st-noinst "BISECT_VERIFY = 1" "NO_INSTALL = 1" >noinst.conf
bisects st-noinst noinst.conf "NO_INSTALL"
check "no modules_install ran" sh -c "! grep -q '^modules_install' $T/makes"
check "the verification took its builds from the cache" \
	grep -q 'taken from the build cache: 6.1.0-t$' out
check "the entries say they have no modules" \
	sh -c "ls $T/st-noinst/build-cache/*/no-modules >/dev/null"

# ---- 4. killed during a boot, rerun ----
fresh
echo 2 >hold		# the second boot hangs
conf st-kill "TIMEOUT = 60" >kill.conf
"$KTEST" kill.conf >out 2>err </dev/null &
kpid=$!
i=0
while [ "$(cat boots 2>/dev/null | wc -l)" -lt 2 ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.5
kill -9 "$kpid" 2>/dev/null
wait "$kpid" 2>/dev/null
rm -f hold
bisects st-kill kill.conf "killed after 2 boots ($(count build) builds), the rerun"
check "the step killed in its boot came from the cache with its modules" \
	grep -q 'taken from the build cache: 6.1.0-t, with its modules' out
check "each build's modules were packed once over both runs" once
no_mismatch "rerun"

# ---- 5. builds ahead ----
fresh
conf st-spec "BISECT_SPECULATE = 1" "BISECT_VERIFY = 1" >spec.conf
bisects st-spec spec.conf "BISECT_SPECULATE"
check "a build ahead was taken from the cache with its modules" \
	sh -c "grep -q 'Speculating' $T/out && grep -q 'taken from the build cache: 6.1.0-t, with its modules' $T/out"
check "the builds ahead packed their modules ($(count build) builds, $(count modules_install) modules_install)" once
no_mismatch "speculate"

finish
