#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The command line: commands, -D, exit codes, the kernel's own examples.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1

cat > small.conf <<'EOF'
SEL := a
MACHINE = box
BUILD_DIR = /src
OUTPUT_DIR = /out/${MACHINE}
TEST_START IF ${SEL} == a
TEST_NAME = first
TEST_START
TEST_TYPE = build
BUILD_TYPE = defconfig
EOF

run_ktest --help
expect_rc 0 "--help exits 0"
check "--help shows the usage" grep -q '^usage: ktest \[OPTIONS\] \[CONFIG\]' out

run_ktest --version
expect_rc 0 "--version exits 0"
check "--version prints the version" grep -q '^ktest [0-9]' out

run_ktest --bogus
expect_rc 2 "an unknown command-line option exits 2"
check "and says which" grep -q "unknown option '--bogus'" err

run_ktest check
expect_rc 2 "check without a config exits 2"

run_ktest check /nonexistent.conf
expect_rc 2 "a missing config exits 2"
check "and names it" grep -q "can't read config file /nonexistent.conf" err

run_ktest check small.conf
expect_rc 0 "check accepts a good config"
check "check reports the number of tests" grep -q '^small.conf: ok: 2 tests' out

run_ktest dump small.conf
expect_rc 0 "dump exits 0"
check "dump heads each test with TEST n (NAME) TYPE" \
	grep -qx 'TEST 1 (first) build' out
check "dump leaves out the name when there is none" grep -qx 'TEST 2 build' out
check "dump expands options at run time" grep -qx 'TMP_DIR = /tmp/ktest/box' out
check "dump prints per-test values" grep -qx 'BUILD_TYPE = defconfig' out
check "dump sorts options by name" sh -c \
	"sed -n '2,/^\$/p' out | grep ' = ' | cut -d' ' -f1 > names; sort -c names"

run_ktest dump -D 'SEL:=b' small.conf
check "-D VAR:= wins over the file's assignment" sh -c \
	"grep -c '^TEST ' out | grep -qx 1 && grep -qx 'TEST 1 build' out"

run_ktest dump -D 'TIMEOUT=7' -D 'TIMEOUT[2]=9' small.conf
check "-D NAME= overrides a default" sh -c "sed -n '/^TEST 1/,/^\$/p' out | grep -qx 'TIMEOUT = 7'"
check "-D NAME[n]= sets one test" sh -c "sed -n '/^TEST 2/,/^\$/p' out | grep -qx 'TIMEOUT = 9'"

run_ktest dump -D 'machine=lower' small.conf
check "-D takes native lower-case names" grep -qx 'MACHINE = lower' out

run_ktest dump -D '=x' small.conf
expect_rc 2 "-D with no name exits 2"

cat > minconf.conf <<EOF2
MACHINE = box
BUILD_DIR = $KTEST_TMP
OUTPUT_DIR = $KTEST_TMP/minconf-out/\${MACHINE}
POWER_CYCLE = true
CONSOLE = cat
GRUB_MENU = test
STATE_DIR = $KTEST_TMP/minconf-state
TEST_START
TEST_TYPE = make_min_config
OUTPUT_MIN_CONFIG = /tmp/min
START_MIN_CONFIG = /tmp/start
EOF2
run_ktest minconf.conf
expect_rc 2 "make_min_config from a START_MIN_CONFIG that is not there exits 2"
check "and names it" grep -q 'cannot copy /tmp/start' out
sed -i '/^OUTPUT_MIN_CONFIG/d' minconf.conf
run_ktest check minconf.conf
expect_rc 2 "check: make_min_config without OUTPUT_MIN_CONFIG exits 2"
check "naming the option" \
	grep -q 'mandatory option OUTPUT_MIN_CONFIG is not set (needed by test 1)' err

run_ktest --dry-run small.conf
expect_rc 0 "--dry-run exits 0"
check "--dry-run lists what would run" grep -q 'WOULD RUN TEST 2 of 2 with option build defconfig' out

run_ktest options
expect_rc 0 "options exits 0"
n=$(grep -c '^KOPT(' "$KTEST_SRC/conf/options.def")
check "options lists all $n options" test "$(wc -l < out)" -eq "$n"
ours=$(grep -c 'KF_KTEST, ' "$KTEST_SRC/conf/options.def")
check "the table has ktest.pl's 119 options, 2 upstream ones and $ours of ktest's own" \
	test "$((n - ours))" -eq 121

missing=""
for o in $(sed -n 's/^KOPT(\([A-Z_]*\),.*/\1/p' "$KTEST_SRC/conf/options.def"); do
	grep -q "^\.B $o\$" "$KTEST_SRC/doc/ktest.conf.5" || missing="$missing $o"
done
check "ktest.conf(5) documents every option${missing:+ (missing:$missing)}" test -z "$missing"

for f in "$KTEST_SRC"/examples/*.conf; do
	run_ktest check "$f"
	expect_rc 0 "bundled example $(basename "$f") passes check"
done

# Prompts happen on a terminal only: script(1) gives ktest a pty
cat > nomachine.conf <<'EOF2'
BUILD_DIR = /src
OUTPUT_DIR = /out
TEST_START
TEST_TYPE = build
EOF2
run_ktest --dry-run nomachine.conf
expect_rc 2 "off a terminal a missing mandatory option is an error"
check "naming the option and the test" grep -q \
	'nomachine.conf:4: error: mandatory option MACHINE is not set (needed by test 1)' err
if command -v script >/dev/null; then
	printf 'tty-box\n' | script -qec "'$KTEST' --dry-run nomachine.conf" /dev/null \
		> tty.out 2>&1
	check "on a terminal ktest asks for it and goes on" \
		grep -q 'WOULD RUN TEST 1 of 1 with option build' tty.out
	check "the prompt shows the option's help" grep -q 'MACHINE = ' tty.out
	check "and the answer is not written into the config" \
		sh -c "! grep -q tty-box nomachine.conf"
else
	not_ok "script(1) is missing (util-linux): cannot test the tty prompt"
fi

# make install puts the binary, the man pages and the examples in place
san=""
case "${KTEST_BUILD:-build}" in build-san) san="SAN=1" ;; esac
if make -s -C "$KTEST_SRC" $san install DESTDIR="$KTEST_TMP/inst" PREFIX=/usr \
	>/dev/null 2>make.err; then
	check "make install installs ktest" test -x "$KTEST_TMP/inst/usr/bin/ktest"
	check "make install installs ktest(1) and ktest.conf(5)" \
		test -f "$KTEST_TMP/inst/usr/share/man/man1/ktest.1" -a \
		-f "$KTEST_TMP/inst/usr/share/man/man5/ktest.conf.5"
	check "make install installs the examples" \
		test -f "$KTEST_TMP/inst/usr/share/doc/ktest/examples/build.conf"
	check "the installed ktest runs" sh -c "\"$KTEST_TMP/inst/usr/bin/ktest\" --version >/dev/null"
else
	not_ok "make install failed: $(head -n 3 make.err)"
fi

# The kernel's own examples, from Debian's linux-source-6.1
tarball=/usr/src/linux-source-6.1.tar.xz
if [ -r "$tarball" ]; then
	tar -xJf "$tarball" -C "$KTEST_TMP" linux-source-6.1/tools/testing/ktest
	ex="$KTEST_TMP/linux-source-6.1/tools/testing/ktest/examples"
	for f in "$ex"/*.conf; do
		(cd "$ex" && "$KTEST" check "$(basename "$f")" >"$KTEST_TMP/out" \
			2>"$KTEST_TMP/err" </dev/null)
		rc=$?
		expect_rc 0 "kernel example $(basename "$f") passes check"
	done
	(cd "$ex" && "$KTEST" dump crosstests.conf > "$KTEST_TMP/cross")
	check "crosstests.conf selects its 15 default arches" \
		test "$(grep -c '^TEST ' "$KTEST_TMP/cross")" -eq 15
	check "crosstests.conf expands MAKE_CMD per arch" grep -q \
		'^MAKE_CMD = PATH=/usr/local/gcc-4.5.2-nolibc/arm-unknown-linux-gnueabi/bin:$PATH CROSS_COMPILE=arm-unknown-linux-gnueabi- make ARCH=arm$' \
		"$KTEST_TMP/cross"
	(cd "$ex" && "$KTEST" dump -D RUN:=bisect crosstests.conf > "$KTEST_TMP/cross")
	check "crosstests.conf with -D RUN:=bisect runs the bisect as well" \
		grep -q '^TEST 16 (s390 s390x-linux) bisect$' "$KTEST_TMP/cross"
else
	not_ok "the kernel's examples: $tarball is missing (make deps installs linux-source-6.1)"
fi

finish
