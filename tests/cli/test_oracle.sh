#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# `ktest dump CONFIG` against the real ktest.pl, for every
# tests/data/dump/*.conf (or only the NAMEs given: test_oracle.sh 05-iterate).
# The expectation is not stored: tests/oracle/ktest-oracle.sh runs ktest.pl
# 6.1 (from Debian's linux-source-6.1) on the config each time. Both sides
# run from the same scratch directory, so ${PWD} means the same thing.
# A missing tarball fails every config: the oracle is never skipped.
. "$(dirname "$0")/../lib.sh"

ORACLE="$KTEST_SRC/tests/oracle/ktest-oracle.sh"
MAX_DIFF=60

# prefix FILE: FILE's lines as TAP comments, at most MAX_DIFF of them
prefix() {
	n=$(wc -l <"$1")
	head -n "$MAX_DIFF" "$1" | sed 's/^/# /'
	if [ "$n" -gt "$MAX_DIFF" ]; then
		echo "# ... $((n - MAX_DIFF)) more lines"
	fi
}

# tag FILE: every line prefixed with "[n] ", n from the last "TEST n" header
tag() {
	awk '/^TEST [0-9]+/ { t = $2 } { print "[" t "] " $0 }' "$1"
}

if [ $# -gt 0 ]; then
	confs=""
	for n in "$@"; do confs="$confs $DATA/dump/${n%.conf}.conf"; done
else
	confs=$(ls "$DATA"/dump/*.conf)
fi

for conf in $confs; do
	name=$(basename "$conf" .conf)
	what="dump matches ktest.pl: $name"
	work="$KTEST_TMP/oracle/$name"
	rm -rf "$work"
	mkdir -p "$work/cwd"
	# a physical path: ktest.pl's `pwd` and getcwd(3) must agree on ${PWD}
	cwd=$(cd -P "$work/cwd" && pwd)

	if ! (cd "$cwd" && sh "$ORACLE" "$conf" "$work/expected") \
		>"$work/oracle.err" 2>&1; then
		not_ok "$what (the ktest.pl oracle failed)"
		prefix "$work/oracle.err"
		continue
	fi

	if [ ! -x "$KTEST" ]; then
		not_ok "$what ($KTEST is not built)"
		continue
	fi
	(cd "$cwd" && timeout 30 "$KTEST" dump "$conf") \
		>"$work/actual" 2>"$work/stderr" </dev/null
	rc=$?
	if [ $rc -eq 124 ]; then
		not_ok "$what (ktest dump still running after 30 s)"
		prefix "$work/stderr"
		continue
	elif [ $rc -ne 0 ]; then
		not_ok "$what (ktest dump exited $rc)"
		prefix "$work/stderr"
		continue
	fi

	if cmp -s "$work/expected" "$work/actual"; then
		ok "$what"
	else
		not_ok "$what"
		# each line tagged with its test number, so a hunk says where it is
		tag "$work/expected" >"$work/expected.tagged"
		tag "$work/actual" >"$work/actual.tagged"
		diff -U0 --label "ktest.pl" --label "ktest dump" \
			"$work/expected.tagged" "$work/actual.tagged" |
			grep -v '^@@' >"$work/diff"
		prefix "$work/diff"
	fi
done

finish
