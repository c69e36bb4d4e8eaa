#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# TEST_TYPE = make_min_config on a fake tree and a box made of commands.
# The tree's kbuild is a Makefile: allnoconfig, and an olddefconfig that
# applies a tiny Kconfig (USB_STORAGE, USB_HID depend on USB, SND_HDA on
# SND, WLAN on NET, CONSOLE_SERIAL on SERIAL; TRACING selects DEBUG_FS).
# The box: POWER_CYCLE appends the next boot's console log to a file that
# CONSOLE follows; it boots (login:) only when the kernel it was given has
# CONSOLE_SERIAL, INITRD and PRINTK (kept by IGNORE_CONFIG), else panics.
# Then: the option errors, a kill -9 in the middle and the resume through
# the journal, and USE_OUTPUT_MIN_CONFIG unset without a terminal.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
src=$T/src
rm -rf "$src" st-* tmp build-out console.log boots.n builds.n booted \
	out.config ignore.config
mkdir -p "$src/scripts"

cat >"$src/Makefile" <<'EOF2'
O ?= .
C := $(O)/.config
all:
	@echo '  CC      init/main.o'
	@mkdir -p $(O)/arch/x86/boot && cp $(C) $(O)/arch/x86/boot/bzImage
	@echo 'Kernel: arch/x86/boot/bzImage is ready'
mrproper:
	@rm -rf $(C) $(O)/arch
olddefconfig oldnoconfig:
	@sh scripts/conf.sh $(C)
allnoconfig:
	@mkdir -p $(O); printf 'CONFIG_ALWAYS=y\nCONFIG_HZ=100\n# CONFIG_USB is not set\n' > $(C)
kernelrelease:
	@echo "6.1.0$$(cat $(O)/localversion 2>/dev/null)"
EOF2
cat >"$src/scripts/conf.sh" <<'EOF2'
c=$1
touch "$c"
on() { grep -q "^CONFIG_$1=[ym]" "$c"; }
off() { sed -i "s/^CONFIG_$1=.*/# CONFIG_$1 is not set/" "$c"; }
if on TRACING; then
	sed -i '/CONFIG_DEBUG_FS[= ]/d' "$c"; echo CONFIG_DEBUG_FS=y >>"$c"
fi
for d in "SND_HDA SND" "USB_STORAGE USB" "USB_HID USB" "WLAN NET" \
	 "CONSOLE_SERIAL SERIAL"; do
	set -- $d
	on "$2" || off "$1"
done
grep -q '^CONFIG_ALWAYS=' "$c" || echo CONFIG_ALWAYS=y >>"$c"
EOF2
cat >"$src/Kconfig" <<'EOF2'
config ALWAYS
config HZ
	int
config PRINTK
config SERIAL
config CONSOLE_SERIAL
	depends on SERIAL
config INITRD
config SND
config SND_HDA
	depends on SND
config USB
config USB_STORAGE
	depends on USB
config USB_HID
	depends on USB
config NET
config WLAN
	depends on NET
config DEBUG_FS
config TRACING
	select DEBUG_FS
EOF2
cat >start.config <<'EOF2'
CONFIG_ALWAYS=y
CONFIG_HZ=250
CONFIG_PRINTK=y
CONFIG_SERIAL=y
CONFIG_CONSOLE_SERIAL=y
CONFIG_INITRD=y
CONFIG_SND=y
CONFIG_SND_HDA=m
CONFIG_USB=y
CONFIG_USB_STORAGE=y
CONFIG_USB_HID=y
CONFIG_NET=y
CONFIG_WLAN=y
CONFIG_DEBUG_FS=y
CONFIG_TRACING=y
CONFIG_CMDLINE="console=ttyS0"
# CONFIG_64BIT is not set
EOF2
printf 'CONFIG_PRINTK=y\n' >ignore.orig

cat >good.log <<'EOF2'
[    0.000000] Linux version 6.1.0-t (t@t) #1
box login:
EOF2
cat >panic.log <<'EOF2'
[    0.000000] Linux version 6.1.0-t (t@t) #1
[    0.500000] Kernel panic - not syncing: VFS: Unable to mount root fs
EOF2
# A power cycle: the kernel in OUTPUT_DIR boots the first time (a test),
# the box's good kernel the next (a reboot to good: nothing to see)
cat >boot.sh <<EOF2
#!/bin/sh
k=$T/build-out/arch/x86/boot/bzImage
sum=\$(cksum <\$k)
[ "\$sum" = "\$(cat $T/booted 2>/dev/null)" ] && exit 0
echo "\$sum" >$T/booted
n=\$(cat $T/boots.n 2>/dev/null || echo 0); echo \$((n + 1)) >$T/boots.n
if grep -q '^CONFIG_CONSOLE_SERIAL=y' \$k && grep -q '^CONFIG_INITRD=y' \$k &&
   grep -q '^CONFIG_PRINTK=y' \$k; then
	cat $T/good.log >>$T/console.log
else
	cat $T/panic.log >>$T/console.log
fi
EOF2
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config

conf() {	# conf STATE EXTRA...
	state=$1
	shift
	cat <<EOF2
MACHINE = 127.0.0.1
SSH_CONFIG = $T/ssh_config
CONNECT_TIMEOUT = 1
BUILD_DIR = $src
OUTPUT_DIR = $T/build-out
TMP_DIR = $T/tmp
STATE_DIR = $T/$state
LOG_FILE = $T/$state.log
LOCALVERSION = -t
BUILD_NOCLEAN = 1
NO_INSTALL = 1
POWER_CYCLE = sh $T/boot.sh
REBOOT_TYPE = script
REBOOT_SCRIPT = true
CONSOLE = tail -n 0 -F $T/console.log
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
TIMEOUT = 5
STOP_AFTER_FAILURE = 1
SLEEP_TIME = 0
MIN_CONFIG = $T/start.config
PRE_BUILD = n=\$(cat $T/builds.n 2>/dev/null || echo 0); echo \$((n + 1)) >$T/builds.n
TEST_START
TEST_TYPE = make_min_config
EOF2
	for l in "$@"; do echo "$l"; done
}
fresh() { rm -f builds.n boots.n booted out.config; : >console.log
	  cp ignore.orig ignore.config; }

# ---- option errors ----
conf st-err "MIN_CONFIG_TYPE = boot" >err.conf
run_ktest err.conf
check "OUTPUT_MIN_CONFIG is required (exit $rc)" test "$rc" -ne 0
check "saying so" grep -q 'OUTPUT_MIN_CONFIG' out err

# ---- a whole run ----
fresh
conf st-run "OUTPUT_MIN_CONFIG = $T/out.config" \
	"IGNORE_CONFIG = $T/ignore.config" >run.conf
run_ktest run.conf
expect_rc 0 "make_min_config finds the smallest booting config"
for o in SERIAL CONSOLE_SERIAL INITRD PRINTK; do
	check "it keeps $o" grep -qx "CONFIG_$o=y" out.config
done
for o in SND SND_HDA USB USB_STORAGE USB_HID NET WLAN TRACING DEBUG_FS; do
	check "it turns $o off" grep -qx "# CONFIG_$o is not set" out.config
done
check "HZ, set otherwise by allnoconfig, is kept" grep -qx 'CONFIG_HZ=250' out.config
check "ALWAYS, set the same by allnoconfig, is no candidate but stays as it was" \
	grep -qx 'CONFIG_ALWAYS=y' out.config
check "and every trial has it as it was" \
	sh -c "ls $T/st-run/min-config-*/cand-*.config >/dev/null &&
	       ! grep -L '^CONFIG_ALWAYS=y' $T/st-run/min-config-*/cand-*.config | grep -q ."
check "a value (CMDLINE) stays" grep -q '^CONFIG_CMDLINE=' out.config
check "IGNORE_CONFIG gets the needed options" \
	grep -qx 'CONFIG_CONSOLE_SERIAL=y' ignore.config
check "and keeps its own" grep -qx 'CONFIG_PRINTK=y' ignore.config
builds=$(cat builds.n)
check "fewer builds ($builds) than one per option (12)" test "$builds" -lt 12
check "each a boot" test "$(cat boots.n)" -eq "$builds"
check "the counts at the end" \
	grep -q "make_min_config done: 9 of 12 options removed, 3 needed, 0 kept on by options that select them; $builds builds" out
check "the Kconfig tree gave the order" grep -q 'Options in Kconfig dependency order' out
check "MIN_CONFIG is not forced onto the trials" \
	sh -c "! grep -q 'Applying minimum configurations' st-run.log"
check "the banner" grep -q 'KTEST RESULT: TEST 1 SUCCESS!!!!' out
cp out.config whole.config

# ---- killed in its third build, then resumed ----
fresh
conf st-kill "OUTPUT_MIN_CONFIG = $T/out.config" \
	"IGNORE_CONFIG = $T/ignore.config" "USE_OUTPUT_MIN_CONFIG = 1" \
	>kill.conf
sed -i "s|^PRE_BUILD = .*|PRE_BUILD = n=\$(cat $T/builds.n 2>/dev/null \|\| echo 0); n=\$((n + 1)); echo \$n >$T/builds.n; if [ \$n -eq 3 ]; then kill -9 \$PPID; fi|" kill.conf
run_ktest kill.conf
check "ktest killed with SIGKILL in its third build (exit $rc)" test "$rc" -eq 137
check "OUTPUT_MIN_CONFIG is there after the kill" test -s out.config
run_ktest kill.conf
expect_rc 0 "the rerun finishes"
check "from the start config of the interrupted run, not OUTPUT_MIN_CONFIG" \
	grep -q 'Resuming make_min_config from the journal' out
check "the two finished steps are not run again" \
	test "$(grep -c 'in the earlier run (from the journal)' out)" -eq 2
check "the same config as the uninterrupted run" cmp -s out.config whole.config
check "builds in all: the uninterrupted run's plus the one in flight" \
	test "$(cat builds.n)" -eq "$((builds + 1))"

# ---- OUTPUT_MIN_CONFIG exists, USE_OUTPUT_MIN_CONFIG unset, no terminal ----
fresh
cp whole.config out.config
conf st-use "OUTPUT_MIN_CONFIG = $T/out.config" >use.conf
run_ktest use.conf
expect_rc 0 "a run from an earlier OUTPUT_MIN_CONFIG"
check "says it starts from it (stdin is no terminal)" \
	grep -q 'stdin is not a terminal: starting from' out
check "and nothing is left to remove" \
	grep -q 'make_min_config done: 0 of 4 options removed, 4 needed' out
conf st-nouse "OUTPUT_MIN_CONFIG = $T/out.config" "USE_OUTPUT_MIN_CONFIG = 0" \
	>nouse.conf
run_ktest nouse.conf
expect_rc 0 "USE_OUTPUT_MIN_CONFIG = 0 starts from MIN_CONFIG"
check "as ktest.pl says" grep -q 'Set to still use MIN_CONFIG as starting point' out

# ---- MIN_CONFIG_TYPE ----
conf st-type "OUTPUT_MIN_CONFIG = $T/out.config" "MIN_CONFIG_TYPE = build" \
	>type.conf
run_ktest type.conf
check "MIN_CONFIG_TYPE = build is refused (exit $rc)" test "$rc" -ne 0
check "naming MIN_CONFIG_TYPE" grep -q 'MIN_CONFIG_TYPE' out err

finish
