#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# ktest-oracle.sh CONFIG OUTFILE
#
# Test oracle for `ktest dump CONFIG`: runs the real ktest.pl (Linux 6.1, from
# Debian's linux-source-6.1 tarball) on CONFIG and writes to OUTFILE, for each
# test, the option values ktest.pl resolves (format: tests/oracle/dump.pl).
# Perl runs here only as a test oracle, never in the product.
#
# ktest.pl runs in the current directory, which is what ${PWD} expands to:
# run `ktest dump` from the same directory to compare. Nothing is written
# there (the LOG_FILE opening is disabled and ktest.pl exits before its test
# loop). stdin is /dev/null and ktest.pl gets 30 s.
#
# Environment:
#   KTEST_LINUX_SOURCE  the tarball (default /usr/src/linux-source-6.1.tar.xz)
#   KTEST_ORACLE_CACHE  where the extracted ktest.pl is kept
#                       (default ${KTEST_BUILD:-build}/oracle, build/ being
#                       relative to the source tree)
#   KTEST_ORACLE_KEEP   a directory: the patched ktest.pl and its stdout and
#                       stderr are copied there (for debugging)
#
# Exit status: 0 with OUTFILE written, 1 when ktest.pl failed (its output is
# shown), 2 for a usage or set-up problem (no tarball, bad patch anchor).
set -u

me=ktest-oracle
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

if [ $# -ne 2 ]; then
	echo "usage: $0 CONFIG OUTFILE" >&2
	exit 2
fi
config=$1
outfile=$2

if [ ! -f "$config" ]; then
	# ktest.pl would offer to create it.
	echo "$me: $config: no such config file" >&2
	exit 2
fi
case $outfile in
/*) ;;
*) outfile=$(pwd)/$outfile ;;
esac
rm -f "$outfile"

tarball=${KTEST_LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
member=linux-source-6.1/tools/testing/ktest/ktest.pl
build=${KTEST_BUILD:-build}
case $build in
/*) ;;
*) build=$top/$build ;;
esac
cache=${KTEST_ORACLE_CACHE:-$build/oracle}

if [ ! -f "$tarball" ]; then
	echo "$me: $tarball not found: the oracle needs the real ktest.pl" >&2
	echo "$me: install it with: apt-get install linux-source-6.1" >&2
	exit 2
fi

# --- extract ktest.pl once; the stamp notes which tarball it came from -------
stamp="$tarball $(stat -L -c '%s %Y' "$tarball")"
if [ ! -f "$cache/ktest.pl" ] || [ ! -f "$cache/stamp" ] ||
	[ "$(cat "$cache/stamp")" != "$stamp" ]; then
	mkdir -p "$cache" || exit 2
	x=$(mktemp -d "$cache/extract.XXXXXX") || exit 2
	echo "$me: extracting ktest.pl from $tarball (once)" >&2
	if ! tar -xJf "$tarball" -C "$x" --occurrence=1 "$member" ||
		[ ! -s "$x/$member" ]; then
		echo "$me: can't extract $member from $tarball" >&2
		rm -rf "$x"
		exit 2
	fi
	# rename(2) keeps concurrent runs from seeing a half-written file
	mv -f "$x/$member" "$cache/ktest.pl" &&
		printf '%s\n' "$stamp" >"$x/stamp" &&
		mv -f "$x/stamp" "$cache/stamp"
	rm -rf "$x"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ktest-oracle.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# --- write the patched copy ---------------------------------------------------
# 1. The LOG_FILE block (CLEAR_LOG unlink, mkpath, open LOG) never runs.
# 2. Before ktest.pl appends prompted answers to the config file, fail.
# 3. The "STARTING AUTOMATED TESTS" line becomes the dump, which exits 0.
# Each anchor must match exactly once, or this dies naming it.
if ! perl -e '
	use strict;
	my ($src, $dump, $dst) = @ARGV;
	local $/;
	open(my $in, "<", $src) or die "can not read $src: $!\n";
	my $pl = <$in>;
	close($in);
	open($in, "<", $dump) or die "can not read $dump: $!\n";
	my $sub = <$in>;
	close($in);

	sub patch {
		my ($what, $re, $with) = @_;
		my $n = () = $pl =~ /$re/g;
		die "anchor not found exactly once (found $n times): $what\n"
			if ($n != 1);
		$pl =~ s/$re/$with/;
	}

	patch("the LOG_FILE opening block",
	      qr/^if \(defined\(\$opt\{"LOG_FILE"\}\)\) \{\n(?=    if \(\$opt\{"CLEAR_LOG"\}\) \{\n(?:.*\n){1,12}?    open\(LOG, )/m,
	      "if (0) { # ktest-oracle: never open the log\n");
	patch("my \@new_configs = keys %entered_configs;",
	      qr/^my \@new_configs = keys %entered_configs;\n/m,
	      "ktest_oracle_no_prompts();\nmy \@new_configs = keys %entered_configs;\n");
	patch(q{doprint "\n\nSTARTING AUTOMATED TESTS\n\n";},
	      qr/^doprint "\\n\\nSTARTING AUTOMATED TESTS\\n\\n";\n/m,
	      "$sub\nktest_oracle_dump();\n");

	open(my $out, ">", $dst) or die "can not write $dst: $!\n";
	print $out $pl;
	close($out) or die "can not write $dst: $!\n";
' "$cache/ktest.pl" "$here/dump.pl" "$work/ktest.pl" 2>"$work/patch.err"; then
	echo "$me: can't patch $cache/ktest.pl:" >&2
	sed 's/^/  /' "$work/patch.err" >&2
	exit 2
fi

# --- run it -------------------------------------------------------------------
KTEST_ORACLE_OUT=$outfile timeout 30 perl "$work/ktest.pl" "$config" \
	</dev/null >"$work/stdout" 2>"$work/stderr"
rc=$?
if [ -n "${KTEST_ORACLE_KEEP:-}" ]; then
	mkdir -p "$KTEST_ORACLE_KEEP" &&
		cp "$work/ktest.pl" "$work/stdout" "$work/stderr" "$KTEST_ORACLE_KEEP/"
fi

show() {
	if [ -s "$work/stderr" ]; then
		echo "--- ktest.pl stderr:"
		cat "$work/stderr"
	fi
	if [ -s "$work/stdout" ]; then
		echo "--- ktest.pl stdout (last 20 lines):"
		tail -n 20 "$work/stdout"
		echo
	fi
} >&2

if [ $rc -eq 124 ]; then
	echo "$me: ktest.pl timed out on $config (waiting for an answer? a mandatory option is missing)" >&2
	show
	exit 1
elif [ $rc -ne 0 ]; then
	echo "$me: ktest.pl failed (exit $rc) on $config" >&2
	show
	exit 1
elif [ ! -f "$outfile" ]; then
	echo "$me: ktest.pl exited before the dump point on $config" >&2
	show
	exit 1
fi
# read_config's "not used; could be a typo" question, answered yes by EOF
if grep -q 'could be a typo' "$work/stdout"; then
	unused=$(sed -n '/could be a typo/,/IGNORE_UNUSED/p' "$work/stdout" |
		sed '1d;$d' | sort | tr '\n' ' ')
	echo "$me: note: ktest.pl asked about unused options in $config" \
		"(answered yes): $unused" >&2
fi
exit 0
