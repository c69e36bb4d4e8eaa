#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Regenerates the option list of doc/ktest.conf.5 from conf/options.def
# (between the OPTIONS-BEGIN and OPTIONS-END markers).
set -eu
cd "$(dirname "$0")/.."
man=doc/ktest.conf.5
list=$(mktemp)
trap 'rm -f "$list"' EXIT
perl -ne '
	BEGIN { $/ = undef }
	while (/^KOPT\((\w+),\s*(\w+),\s*(NULL|"(?:[^"\\]|\\.)*"),\s*([^,]+),\s*(NULL|"[^"]*"),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)/mg) {
		my ($n, $t, $d, $f, $c, $h) = ($1, $2, $3, $4, $5, $6);
		$h =~ s/"\s*"//g; $h =~ s/^"|"$//g;
		$t =~ s/^KT_//; $t = lc $t;
		$t = $c if $c ne "NULL";
		$t =~ s/"//g;
		print ".TP\n.B $n\n";
		my $line = "($t";
		if ($d ne "NULL") { $d =~ s/^"|"$//g; $d =~ s/\\/\\\\/g; $line .= "; default \\fI$d\\fP"; }
		$line .= "; DEFAULTS only" if $f =~ /KF_DEFAULTS_ONLY/;
		$line .= "; read from the default" if $f =~ /KF_GLOBAL/ && $f !~ /KF_DEFAULTS_ONLY/;
		$line .= "; box option" if $f =~ /KF_BOX/;
		$line .= "; upstream ktest.pl after 6.1" if $f =~ /KF_UPSTREAM/;
		$line .= "; ktest only" if $f =~ /KF_KTEST/;
		$h =~ s/\\/\\\\/g; $h =~ s/^\./\\&./;
		print "$h $line)\n";
	}' conf/options.def > "$list"
awk -v list="$list" '
	/^\.\\" OPTIONS-BEGIN/ { print; while ((getline l < list) > 0) print l; skip = 1; next }
	/^\.\\" OPTIONS-END/ { skip = 0 }
	!skip { print }' "$man" > "$man.new"
mv "$man.new" "$man"
