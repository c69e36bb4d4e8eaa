#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Benchmarks (make bench). Prints a table; never fails on speed: speed and
# memory targets live here, not in timed tests.
#
#   config: read + resolve every option of every test of a generated config
#           with 1000 tests (IF chains, ITERATE, INCLUDE, ${} chains), ours
#           (ktest dump) beside ktest.pl reading the same file (the oracle
#           patch stops it right after it has resolved them).
#
# Then each bench/bench_*.c program (the Makefile passes them) prints its
# own table, e.g. bench_config_bisect: ours beside config-bisect.pl on
# simulated Kconfig universes (builds, olddefconfig runs, right answers).
# bench_kconfig_tree: reading the lab kernel's Kconfig tree for x86 (once
# per config_bisect / make_min_config run; target < 1 s).
#
# Last, bench/bench_ktestpl.sh: a bisect and a patchcheck of the lab's real
# kernel series by ktest and by ktest.pl (doc/benchmark.md).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
KTEST=${KTEST:-$top/ktest/ktest}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktest-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

gen() {
	n=$1
	{
		echo "ARCHS := x86"
		echo "DEFAULTS"
		echo "MACHINE = benchbox"
		echo "BUILD_DIR = /src/linux"
		echo "OUTPUT_DIR = /build/\${MACHINE}"
		echo "BUILD_OPTIONS = -j8"
		echo "LOCALVERSION = -bench"
		echo "LOG_FILE = \${OUTPUT_DIR}/ktest.log"
		echo "IGNORE_UNUSED = 1"
		echo "INCLUDE inc.conf"
		i=1
		while [ $i -le "$n" ]; do
			echo "TEST_START IF \${ARCHS} == x86 || 0"
			echo "TEST_NAME = t$i \${MACHINE}"
			echo "TEST_TYPE = build"
			echo "BUILD_TYPE = defconfig"
			echo "CROSS = cross$i"
			echo "MAKE_CMD = CROSS_COMPILE=\${CROSS}- make"
			echo "ADD_CONFIG = \${ADD_CONFIG} /cfg/$i"
			i=$((i + 1))
		done
	} > "$tmp/big.conf"
	{
		echo "ADD_CONFIG = /cfg/base"
		echo "TIMEOUT = 300"
	} > "$tmp/inc.conf"
}

now_ms() { date +%s%3N; }

# runs "$@" 5 times; prints the best wall time in ms
best_ms() {
	best=""
	for _ in 1 2 3 4 5; do
		t0=$(now_ms)
		"$@" >/dev/null 2>&1 || { echo "FAILED: $*" >&2; echo -1; return; }
		t=$(( $(now_ms) - t0 ))
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "$best"
}

max_rss_kb() {
	/usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n 1
}

gen 1000
cd "$tmp"
ours=$(best_ms "$KTEST" dump big.conf)
ours_rss=$(max_rss_kb "$KTEST" dump big.conf 2>/dev/null || echo "?")

theirs="n/a"
theirs_rss="n/a"
if [ -r /usr/src/linux-source-6.1.tar.xz ] && command -v perl >/dev/null; then
	# the oracle's patched ktest.pl, timed on its own (no wrapper)
	mkdir -p "$tmp/keep"
	if KTEST_ORACLE_KEEP="$tmp/keep" sh "$top/tests/oracle/ktest-oracle.sh" \
		big.conf "$tmp/oracle.out" >/dev/null 2>&1; then
		theirs=$(KTEST_ORACLE_OUT="$tmp/oracle.out" best_ms perl "$tmp/keep/ktest.pl" big.conf </dev/null)
		theirs_rss=$(KTEST_ORACLE_OUT="$tmp/oracle.out" max_rss_kb perl "$tmp/keep/ktest.pl" big.conf </dev/null || echo "?")
		"$KTEST" dump big.conf > "$tmp/ours.out"
		if ! cmp -s "$tmp/ours.out" "$tmp/oracle.out"; then
			echo "warning: ktest dump and ktest.pl disagree on the benchmark config" >&2
		fi
	fi
fi

echo
echo "benchmark                                  ktest      ktest.pl"
printf '%-42s %-10s %s\n' "config, 1000 tests: read+resolve (ms)" "$ours" "$theirs"
printf '%-42s %-10s %s\n' "config, 1000 tests: max RSS (KiB)" "$ours_rss" "$theirs_rss"

# the benchmark programs (bench/bench_*.c), each printing its table rows
for b in "$@"; do
	"$b" || echo "$(basename "$b"): failed" >&2
done

# ktest beside ktest.pl on the lab's real kernel (BENCH_KTESTPL=0: skip it;
# BENCH_QUICK=1: one bisect, ktest and ktest.pl tuned)
sh "$top/bench/bench_ktestpl.sh" || echo "bench_ktestpl.sh: failed" >&2
