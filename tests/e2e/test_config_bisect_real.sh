#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# config_bisect and make_min_config on the real kernel, on the built-in qemu
# box (NO_INSTALL: it boots the bzImage of OUTPUT_DIR), the lab tree at its
# tip (s32, which has KTEST_LAB_BREAK):
#
#   config_bisect (boot) of the lab's good whole tinyconfig (series.sh
#   config) against its bad config (series.sh badconfig: 25 harmless
#   changes and CONFIG_KTEST_LAB_BREAK=y, which panics at boot), killed
#   with SIGKILL in its third build and run again, names KTEST_LAB_BREAK
#   alone, in about log2(changes) builds, without building a step finished
#   before the kill again, every verdict the truth about the config booted
#   (one search: an uninterrupted one as well cost CI 3-4 minutes; the
#   CLI tests compare killed and uninterrupted runs); make_min_config (boot) from the good config plus
#   the harmless options (IGNORE_CONFIG holding the rest of the good config)
#   writes a smaller config that keeps the serial console and boots.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.inc"

e2e_setup
cd "$KTEST_TMP" || exit 1
INITRD=$(sh "$KTEST_SRC/tests/lab/initramfs.sh") || {
	not_ok "the lab initramfs is ready"; finish; }
ok "the lab initramfs is ready"
BAD=$(sh "$KTEST_SRC/tests/lab/series.sh" badconfig) || {
	not_ok "the lab's bad config is ready"; finish; }
HARMLESS=$(sh "$KTEST_SRC/tests/lab/series.sh" harmlessconfig)
check "the lab's bad config sets KTEST_LAB_BREAK" \
	grep -qx 'CONFIG_KTEST_LAB_BREAK=y' "$BAD"
check "the harmless config does not" \
	grep -qx '# CONFIG_KTEST_LAB_BREAK is not set' "$HARMLESS"

conf() {	# conf STATE TEST-LINES...
	state=$1
	shift
	cat <<EOF2
MACHINE = qemu
BUILD_DIR = $SERIES_TREE
OUTPUT_DIR = $OUT
TMP_DIR = $KTEST_TMP/tmp-$state
LOG_FILE = $KTEST_TMP/log
STATE_DIR = $KTEST_TMP/$state
MAKE_CMD = $MAKE
BUILD_OPTIONS = -j$(nproc)
LOCALVERSION = -e2e
BUILD_NOCLEAN = 1
BOX_TYPE = qemu
NO_INSTALL = 1
QEMU_KERNEL = $OUT/arch/x86/boot/bzImage
QEMU_INITRD = $INITRD
SUCCESS_LINE = ktest: booted
TIMEOUT = 30
BOOTED_TIMEOUT = 2
STOP_AFTER_FAILURE = 5
BISECT_SLEEP_TIME = 0
SLEEP_TIME = 0
EOF2
	echo "TEST_START"
	echo "CHECKOUT = $S32"
	for l in "$@"; do echo "$l"; done
}

# done_steps STATE: "DIGEST VERDICT" for each finished step of its journal
# (K1 LEN CRC NAME=VALUE<tab>...; a config bisect step's key is
# config_bisect:DIGEST, its candidate STATE/config-bisect-1/cand-DIGEST.config)
done_steps() {
	awk -F'\t' '{
		sub(/^K1 [0-9]+ [0-9a-f]+ /, "")
		split("", f)
		for (i = 1; i <= NF; i++) {
			p = index($i, "=")
			f[substr($i, 1, p - 1)] = substr($i, p + 1)
		}
		if (f["ev"] == "step" && f["state"] == "done") {
			sub(/^[^:]*:/, "", f["key"])
			print f["key"], f["verdict"]
		}
	}' "$1/journal"
}

# consistent STATE: every config built fails iff it has KTEST_LAB_BREAK=y
consistent() {
	done_steps "$1" >"$1.verdicts" || return 1
	[ -s "$1.verdicts" ] || return 1
	while read -r key v; do
		for f in "$1"/config-bisect-*/"cand-$key.config"; do break; done
		[ -f "$f" ] || return 1
		if grep -qx 'CONFIG_KTEST_LAB_BREAK=y' "$f"; then
			[ "$v" = BAD ] || return 1
		else
			[ "$v" = GOOD ] || return 1
		fi
	done <"$1.verdicts"
}

# ceil(log2(n)) + 2
bound() {
	b=0 p=1
	while [ "$p" -lt "$1" ]; do p=$((p * 2)) b=$((b + 1)); done
	echo $((b + 2))
}

# the culprit line: as scripts/diffconfig prints a change of KTEST_LAB_BREAK
culprit='^(\+KTEST_LAB_BREAK y| KTEST_LAB_BREAK n -> y)$'

# ---- config_bisect (boot), killed with SIGKILL in its third build ----
# One search, not two (CI's minutes): killed mid-search, then run again to
# its answer; what an uninterrupted run would check is checked on the rerun.
conf st-cb "TEST_TYPE = config_bisect" "CONFIG_BISECT_TYPE = boot" \
	"CONFIG_BISECT = $BAD" "CONFIG_BISECT_GOOD = $FULL_CONFIG" \
	"PRE_BUILD = n=\$(cat $KTEST_TMP/count 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > $KTEST_TMP/count; if [ \$n -eq 3 ]; then kill -9 \$PPID; fi" >cb.conf
rm -f count
t0=$(date +%s)
run_ktest cb.conf
check "ktest was killed with SIGKILL in its third build (exit $rc)" test "$rc" -eq 137
check "no qemu is left behind" sh -c "! pgrep -f 'qemu-system-x86_6[4].*$OUT/arch' >/dev/null"
done_steps st-cb >keys.killed
run_ktest --json "$KTEST_TMP/cb.json" cb.conf
echo "# config_bisect took $(($(date +%s) - t0)) s (killed run and rerun)"
expect_rc 0 "run again, the config_bisect (boot) of the lab's good and bad configs succeeds"
changes=$(sed -n 's/^\([0-9]*\) options\{0,1\} differs\{0,1\} between the good and the bad config:$/\1/p' out)
check "it counts the changes between the configs (${changes:-none}: 26 asked, 5 more from olddefconfig)" \
	test "${changes:-0}" -eq 31
sed -n '/^The good config fails with/,/^The smallest failing config/p' out >answer
check "the answer is one change" grep -q '^The good config fails with this change:$' answer
check "KTEST_LAB_BREAK, as scripts/diffconfig prints it" grep -Eq "$culprit" answer
check "and nothing else" test "$(grep -c '^[-+ ][A-Z0-9_]* ' answer)" -eq 1
check "the report names it as the only culprit" \
	jqe '.tests[0].culprit_options == ["CONFIG_KTEST_LAB_BREAK"]' cb.json
check "the report's test passed" jqe '.tests[0].verdict == "GOOD"' cb.json
check "the smallest failing config has it" \
	grep -qx 'CONFIG_KTEST_LAB_BREAK=y' tmp-st-cb/config_bisect_bad.config
check "the two steps finished before the kill were not run again" \
	test "$(grep -c 'in the earlier run (from the journal)' out)" -eq 2
check "the report marks them resumed" \
	jqe '[.tests[0].steps[] | select(.resumed)] | length == 2' cb.json
check "the killed run had finished two steps in its journal" \
	test "$(wc -l <keys.killed)" -eq 2
check "every step is in the report with its verdict, the new ones with durations" \
	jqe '.tests[0].steps | length > 0 and all(.kind == "config_bisect" and (.verdict == "GOOD" or .verdict == "BAD") and (.resumed or (.durations.build > 0 and .durations.boot > 0)))' cb.json
check "the bad steps are reported with the panic" \
	jqe '[.tests[0].steps[] | select(.verdict == "BAD") | .crash_title] | length > 0 and all(. != null and test("KTEST_LAB_BREAK"))' cb.json
steps=$(jq '.tests[0].steps | length' cb.json)
max=$(bound "${changes:-31}")
check "steps: $steps, at most ceil(log2($changes)) + 2 = $max" \
	test "${steps:-99}" -le "$max"
check "builds in all: the $steps steps plus the one in flight at the kill" \
	test "$(cat count)" -eq "$((steps + 1))"
done_steps st-cb >keys.all
check "the rerun's journal starts with the killed run's steps, unchanged" \
	sh -c "head -n 2 keys.all | cmp -s - keys.killed"
check "every verdict is the truth about the config booted" consistent st-cb

# ---- make_min_config (boot) ----
# From the good config plus the harmless options; IGNORE_CONFIG keeps the
# good config's other enabled options as they are (those the harmless
# changes left on), so that the candidates are the harmless options, the
# serial console's (SERIAL_*) and a few of the lab fragment's: 8 builds,
# not the hundreds of the whole config (the example does that). A kernel
# without its serial console is silent until TIMEOUT: 15 s, not 30 (the
# lab boots in 2-4 s), as it is a BAD step's whole boot.
grep -E '^CONFIG_[A-Z0-9_]+=[ym]$' "$FULL_CONFIG" | grep -xFf "$HARMLESS" |
	grep -Ev '^CONFIG_(SERIAL_[A-Z0-9_]*|PRINTK_TIME|LKDTM|RUNTIME_TESTING_MENU)=' >ignore.config
cp ignore.config ignore.start
conf st-min "TEST_TYPE = make_min_config" "MIN_CONFIG_TYPE = boot" \
	"START_MIN_CONFIG = $HARMLESS" "OUTPUT_MIN_CONFIG = $KTEST_TMP/min.config" \
	"IGNORE_CONFIG = $KTEST_TMP/ignore.config" "USE_OUTPUT_MIN_CONFIG = 0" \
	"TIMEOUT = 15" >min.conf
t0=$(date +%s)
run_ktest --json "$KTEST_TMP/min.json" min.conf
echo "# make_min_config took $(($(date +%s) - t0)) s"
expect_rc 0 "make_min_config (boot) from the good config plus the harmless options succeeds"
check "OUTPUT_MIN_CONFIG is written" test -s min.config
check "every step is in the report with its verdict and durations" \
	jqe '.tests[0].steps | length > 0 and all(.verdict != "NONE" and .durations.build > 0)' min.json
check "and added what it found needed to IGNORE_CONFIG" \
	sh -c "grep -qx CONFIG_SERIAL_8250_CONSOLE=y ignore.config && test \$(wc -l <ignore.config) -gt \$(wc -l <ignore.start)"
conf st-minboot "TEST_TYPE = boot" "BUILD_TYPE = useconfig:$KTEST_TMP/min.config" >minboot.conf
run_ktest minboot.conf
expect_rc 0 "the minimal config boots on the box"
check "to the success line" grep -q 'ktest: booted 6.1' out
# OUTPUT_MIN_CONFIG leaves out what allnoconfig sets alike (as ktest.pl):
# what it means is the .config built from it
cp "$OUT/.config" min.built
start_n=$(grep -c '=[ym]$' "$HARMLESS")
min_n=$(grep -c '=[ym]$' min.built)
check "it enables fewer options: $min_n of $start_n" test "$min_n" -lt "$start_n"
for o in SERIAL_8250 SERIAL_8250_CONSOLE; do
	check "it found CONFIG_$o needed (the serial console)" \
		grep -qx "CONFIG_$o=y" min.built
done
harmless_on=""
for o in IKCONFIG MAGIC_SYSRQ KCMP PROC_CHILDREN CRC64 CRC32_SELFTEST STRIP_ASM_SYMS; do
	grep -qx "CONFIG_$o=y" min.built && harmless_on="$harmless_on $o"
done
check "it turned the harmless options off${harmless_on:+ (still on:$harmless_on)}" \
	test -z "$harmless_on"
check "what IGNORE_CONFIG listed is still on" \
	sh -c "! grep -vxFf min.built ignore.start | grep -q ."
finish
