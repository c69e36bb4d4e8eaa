#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# ktest convert, on real configs: every example config of the kernel's
# tools/testing/ktest/examples (from Debian's linux-source-6.1), our own
# examples/*.conf, and every tests/data/**/*.conf that `ktest check` accepts.
# For each:
#   - `ktest convert X` succeeds and the result passes `ktest check`;
#   - `ktest dump` of the result equals `ktest dump X`.
# Everything runs from the directory of X, so relative paths (INCLUDE) and
# ${PWD} mean the same thing on both sides. A missing kernel tarball fails:
# the examples are never skipped silently. examples/native/*.ktest must pass
# `ktest check` too.
. "$(dirname "$0")/../lib.sh"

TARBALL=${KTEST_LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
EXAMPLES=linux-source-6.1/tools/testing/ktest/examples
MAX_DIFF=40
# the top-level examples of 6.1 that are whole configs
MIN_EXAMPLES=5

WORK=$(mkdir -p "$KTEST_TMP/convert" && cd "$KTEST_TMP/convert" && pwd)
compared=0
skipped=""

# prefix FILE: FILE's lines as TAP comments, at most MAX_DIFF of them
prefix() {
	n=$(wc -l <"$1")
	head -n "$MAX_DIFF" "$1" | sed 's/^/# /'
	if [ "$n" -gt "$MAX_DIFF" ]; then
		echo "# ... $((n - MAX_DIFF)) more lines"
	fi
}

# in_dir DIR CMD...: runs ktest CMD in DIR, no stdin
in_dir() {
	d=$1
	shift
	(cd "$d" && "$KTEST" "$@") </dev/null
}

# convert_one CONF NAME: the checks above, for one config
convert_one() {
	conf=$1 name=$2
	dir=$(cd "$(dirname "$conf")" && pwd)
	base=$(basename "$conf")
	w="$WORK/$name"
	rm -rf "$w"
	mkdir -p "$w"

	if ! in_dir "$dir" check "$base" >"$w/check.out" 2>&1; then
		skipped="$skipped $name"
		return 1
	fi
	compared=$((compared + 1))
	if ! in_dir "$dir" dump "$base" >"$w/legacy.dump" 2>"$w/legacy.err"; then
		not_ok "convert $name: ktest dump of the original failed"
		prefix "$w/legacy.err"
		return 0
	fi
	if ! in_dir "$dir" convert "$base" >"$w/converted.ktest" 2>"$w/convert.err"; then
		not_ok "convert $name: ktest convert failed"
		prefix "$w/convert.err"
		return 0
	fi
	if in_dir "$dir" check "$w/converted.ktest" >"$w/check2.out" 2>&1; then
		ok "convert $name: the converted file passes ktest check"
	else
		not_ok "convert $name: the converted file fails ktest check"
		prefix "$w/check2.out"
	fi
	if ! in_dir "$dir" dump "$w/converted.ktest" >"$w/native.dump" 2>"$w/native.err"; then
		not_ok "convert $name: ktest dump of the converted file failed"
		prefix "$w/native.err"
		return 0
	fi
	if cmp -s "$w/legacy.dump" "$w/native.dump"; then
		ok "convert $name: same dump as the original"
	else
		not_ok "convert $name: the dump differs from the original's"
		diff -u --label original --label converted "$w/legacy.dump" \
			"$w/native.dump" >"$w/diff"
		prefix "$w/diff"
	fi
	return 0
}

if [ ! -x "$KTEST" ]; then
	not_ok "convert: $KTEST is not built"
	finish
fi

# the kernel's examples
if [ ! -r "$TARBALL" ]; then
	not_ok "convert: kernel examples: $TARBALL is missing (apt-get install linux-source-6.1)"
elif ! tar -xJf "$TARBALL" -C "$WORK" --wildcards "$EXAMPLES/*" \
	>"$WORK/tar.err" 2>&1; then
	not_ok "convert: kernel examples: cannot extract them from $TARBALL"
	prefix "$WORK/tar.err"
else
	for conf in "$WORK/$EXAMPLES"/*.conf "$WORK/$EXAMPLES"/include/*.conf; do
		[ -f "$conf" ] || continue
		rel=${conf#"$WORK/$EXAMPLES/"}
		name="example-$(echo "${rel%.conf}" | sed 's|/|-|g')"
		convert_one "$conf" "$name" ||
			echo "# skip $name: ktest check rejects it (a fragment)"
	done
	if [ "$compared" -lt "$MIN_EXAMPLES" ]; then
		not_ok "convert: only $compared kernel examples pass ktest check, wanted $MIN_EXAMPLES"
	fi
fi

# ours: examples/*.conf converted, examples/native/*.ktest as they are
for conf in "$KTEST_SRC"/examples/*.conf; do
	[ -f "$conf" ] || continue
	convert_one "$conf" "examples-$(basename "$conf" .conf)" ||
		not_ok "convert examples/$(basename "$conf"): ktest check rejects it"
done
for k in "$KTEST_SRC"/examples/native/*.ktest; do
	[ -f "$k" ] || continue
	if in_dir "$KTEST_SRC" check "$k" >"$WORK/native-example.out" 2>&1; then
		ok "examples/native/$(basename "$k") passes ktest check"
	else
		not_ok "examples/native/$(basename "$k") fails ktest check"
		prefix "$WORK/native-example.out"
	fi
done

# the test data
skipped=""
for conf in $(cd "$DATA" && find . -name '*.conf' | sort); do
	name=$(echo "${conf#./}" | sed 's|/|-|g; s|\.conf$||')
	convert_one "$DATA/$conf" "$name"
done
if [ -n "$skipped" ]; then
	echo "# skipped, as ktest check rejects them:$skipped" | fold -w 76 -s |
		sed 's/ *$//; 2,$s/^/#   /'
fi

finish
