#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# `ktest check` on every malformed config in tests/data/malformed (or only
# the NAMEs given: test_malformed.sh if-garbage.conf open-test.ktest).
#
# A case is a file NAME.conf (ktest.conf syntax) or NAME.ktest (native) with
# a sibling NAME.conf.expect / NAME.ktest.expect:
#   line 1  FILE:LINE  where the first error must point, FILE relative to
#                      tests/data/malformed (an included file may be named);
#           FILE       alone: the error is about the file as a whole
#   line 2  optional   a substring the error message (its first line or the
#                      indented notes under it) must contain
# Files under inc/ are helpers that cases include; they are not cases.
#
# Each case must exit 2 (a config error), name the expected place in its
# first "error:" line, and die neither by a signal nor with a sanitizer
# report. A few cases are made at test time (a directory, an unreadable
# file), and a good config with CRLF line endings must be accepted.
. "$(dirname "$0")/../lib.sh"

MALFORMED="$DATA/malformed"
CASE_TIMEOUT=${CASE_TIMEOUT:-30}
# every case runs from its own directory
case $KTEST in
/*) ;;
*/*) KTEST=$(pwd)/$KTEST ;;
esac

# run_case DIR ARG [WRAPPER...]: runs "[WRAPPER] ktest check ARG" in DIR;
# sets rc, fills $KTEST_TMP/err
run_case() {
	dir=$1 arg=$2
	shift 2
	if command -v timeout >/dev/null 2>&1; then
		set -- timeout "$CASE_TIMEOUT" "$@"
	fi
	(cd "$dir" && "$@" "$KTEST" check "$arg") \
		>"$KTEST_TMP/out" 2>"$KTEST_TMP/err" </dev/null
	rc=$?
}

# crashed: why the last run counts as a crash, or nothing
crashed() {
	if grep -q 'Sanitizer' "$KTEST_TMP/err"; then
		echo "sanitizer report: $(grep -m1 'Sanitizer' "$KTEST_TMP/err")"
	elif grep -q 'runtime error:' "$KTEST_TMP/err"; then
		echo "undefined behaviour: $(grep -m1 'runtime error:' "$KTEST_TMP/err")"
	elif [ "$rc" -eq 124 ] && command -v timeout >/dev/null 2>&1; then
		echo "no answer within ${CASE_TIMEOUT}s"
	elif [ "$rc" -gt 128 ]; then
		echo "killed by signal $((rc - 128))"
	fi
}

# message: the first error line and the indented notes that follow it
message() {
	awk 'found && /^  / { print; next }
	     found { exit }
	     /: error: / { found = 1; print }' "$KTEST_TMP/err"
}

# show: the run's stderr as TAP comments
show() {
	head -n 15 "$KTEST_TMP/err" | sed 's/^/# /'
}

# verdict NAME WHERE SUBSTRING: the checks shared by every case
verdict() {
	name=$1 where=$2 sub=$3
	why=$(crashed)
	if [ -n "$why" ]; then
		not_ok "malformed $name: $why"
		show
		return
	fi
	if [ "$rc" -ne 2 ]; then
		not_ok "malformed $name: exit $rc, wanted 2"
		show
		return
	fi
	first=$(grep -m1 ': error: ' "$KTEST_TMP/err")
	want="$where: error: "
	case $first in
	"$want"*) ;;
	"")
		not_ok "malformed $name: no 'error:' line on stderr, wanted $where"
		show
		return ;;
	*)
		not_ok "malformed $name: first error is not at $where: $first"
		show
		return ;;
	esac
	if [ -n "$sub" ] && ! message | grep -qF -- "$sub"; then
		not_ok "malformed $name: the message lacks '$sub'"
		show
		return
	fi
	ok "malformed $name"
}

one_case() {
	f=$1
	name=$(basename "$f")
	exp="$f.expect"
	if [ ! -f "$exp" ]; then
		not_ok "malformed $name: no $name.expect"
		return
	fi
	where=$(sed -n 1p "$exp")
	sub=$(sed -n 2p "$exp")
	if [ -z "$where" ]; then
		not_ok "malformed $name: $name.expect has no FILE:LINE"
		return
	fi
	run_case "$MALFORMED" "$name"
	verdict "$name" "$where" "$sub"
}

if [ ! -x "$KTEST" ]; then
	not_ok "malformed: $KTEST is not built"
	finish
fi

if [ $# -gt 0 ]; then
	for n in "$@"; do one_case "$MALFORMED/$n"; done
	finish
fi

for f in "$MALFORMED"/*.conf "$MALFORMED"/*.ktest; do
	[ -f "$f" ] && one_case "$f"
done

# ---- cases that cannot be committed as files ----

# file_verdict NAME: a config that cannot be read has no line to name, so
# the first error line must name the file (as "NAME: error:" or in the text)
file_verdict() {
	what="malformed $1 (made at test time)"
	why=$(crashed)
	first=$(grep -m1 ': error: ' "$KTEST_TMP/err")
	if [ -n "$why" ]; then
		not_ok "$what: $why"
		show
	elif [ "$rc" -ne 2 ]; then
		not_ok "$what: exit $rc, wanted 2"
		show
	elif ! printf '%s\n' "$first" | grep -qF -- "$1"; then
		not_ok "$what: the first error does not name the file: $first"
		show
	else
		ok "$what"
	fi
}

work="$KTEST_TMP/malformed"
rm -rf "$work"
mkdir -p "$work/a-directory.conf"

run_case "$work" a-directory.conf
file_verdict a-directory.conf

run_case "$work" no-such-config.conf
file_verdict no-such-config.conf

# an unreadable file; root reads anything, so root runs ktest as nobody
# from a directory nobody may enter (our scratch space is 0700)
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" -ne 0 ]; then
	printf 'MACHINE = box\nTEST_START\nTEST_TYPE = build\n' >"$work/unreadable.conf"
	chmod 000 "$work/unreadable.conf"
	run_case "$work" unreadable.conf
	file_verdict unreadable.conf
	rm -f "$work/unreadable.conf"
elif command -v setpriv >/dev/null 2>&1 &&
     $nobody "$KTEST" --version >/dev/null 2>&1; then
	open_dir=$(mktemp -d "${TMPDIR:-/tmp}/ktest-unreadable.XXXXXX")
	chmod 755 "$open_dir"
	printf 'MACHINE = box\nTEST_START\nTEST_TYPE = build\n' >"$open_dir/unreadable.conf"
	chmod 000 "$open_dir/unreadable.conf"
	# shellcheck disable=SC2086
	run_case "$open_dir" unreadable.conf $nobody
	file_verdict unreadable.conf
	rm -rf "$open_dir"
else
	ok "malformed unreadable.conf (made at test time) # SKIP root, and nobody cannot run $KTEST"
fi

# ---- CRLF line endings are accepted, as ktest.pl accepts them ----
for f in "$DATA"/crlf/*.conf "$DATA"/crlf/*.ktest; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	if ! grep -q "$(printf '\r')\$" "$f"; then
		not_ok "crlf $name: the file has lost its CRLF line endings"
		continue
	fi
	run_case "$DATA/crlf" "$name"
	why=$(crashed)
	if [ -n "$why" ]; then
		not_ok "crlf $name is accepted: $why"
	elif [ "$rc" -ne 0 ]; then
		not_ok "crlf $name is accepted: exit $rc, wanted 0"
		show
	else
		ok "crlf $name is accepted"
	fi
done

finish
