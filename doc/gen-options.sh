#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Regenerates the option list of doc/ktest.conf.5 (between the OPTIONS-BEGIN
# and OPTIONS-END markers) from conf/options.def (type, default, meaning,
# flags, native spelling) and conf/option-tests.def (the test types that
# read each option).
#
#   sh doc/gen-options.sh        rewrites doc/ktest.conf.5
#   sh doc/gen-options.sh OUT    writes the regenerated page to OUT instead
#                                (tests/cli/test_cli.sh compares the two)
#
# Fails, naming it, when an option has no line in conf/option-tests.def; a
# line there that names no option gets a warning.
set -eu
out=${1:-}
case $out in /* | "") ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")/.."
man=doc/ktest.conf.5
[ -n "$out" ] || out=$man
list=$(mktemp)
trap 'rm -f "$list"' EXIT
perl -e '
	my ($defs, $tests) = @ARGV;
	my (%sets, %readers, @order, $bad);
	my @all = qw(build install boot test bisect patchcheck config_bisect
		     make_min_config make_warnings_file);
	my %type = map { $_ => 1 } @all;
	open(my $t, "<", $tests) or die "$tests: $!\n";
	while (<$t>) {
		s/#.*//; next unless /\S/;
		if (/^\s*(\@\w+)\s*=\s*(.*?)\s*$/) { $sets{$1} = [split " ", $2]; next }
		my ($n, @w) = split " ";
		die "$tests:$.: $n has no readers\n" unless @w;
		my %r;
		for my $w (@w) {
			if ($sets{$w}) { $r{$_} = 1 for @{$sets{$w}} }
			elsif ($type{$w} || $w eq "run" || $w eq "none") { $r{$w} = 1 }
			else { die "$tests:$.: $n: unknown reader $w\n" }
		}
		die "$tests:$.: $n listed twice\n" if $readers{$n};
		$readers{$n} = \%r;
	}
	close($t);
	open(my $d, "<", $defs) or die "$defs: $!\n";
	local $/ = undef;
	$_ = <$d>;
	close($d);
	my %seen;
	while (/^KOPT\((\w+),\s*(\w+),\s*(NULL|"(?:[^"\\]|\\.)*"),\s*([^,]+),\s*(NULL|"[^"]*"),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)/mg) {
		my ($n, $t, $dv, $f, $c, $h) = ($1, $2, $3, $4, $5, $6);
		$seen{$n} = 1;
		$h =~ s/"\s*"//g; $h =~ s/^"|"$//g;
		$t =~ s/^KT_//; $t = lc $t;
		$t = $c if $c ne "NULL";
		$t =~ s/"//g;
		print ".TP\n.B $n\n";
		my $line = "($t";
		if ($dv ne "NULL") { $dv =~ s/^"|"$//g; $dv =~ s/\\/\\\\/g; $line .= "; default \\fI$dv\\fP"; }
		$line .= "; DEFAULTS only" if $f =~ /KF_DEFAULTS_ONLY/;
		$line .= "; read from the default" if $f =~ /KF_GLOBAL/ && $f !~ /KF_DEFAULTS_ONLY/;
		$line .= "; box option" if $f =~ /KF_BOX/;
		$line .= "; upstream ktest.pl after 6.1" if $f =~ /KF_UPSTREAM/;
		$line .= "; ktest only" if $f =~ /KF_KTEST/;
		$h =~ s/\\/\\\\/g; $h =~ s/^\./\\&./;
		print "$h $line)\n";
		my $r = $readers{$n};
		if (!$r) { print STDERR "$tests: no line for $n (which test types read it?)\n"; $bad = 1; next }
		my $who;
		if ($r->{none}) { $who = "nothing (accepted so ktest.pl configs load)" }
		elsif ($r->{run}) { $who = "the run, once" }
		elsif (!grep { !$r->{$_} } @all) { $who = "every test type" }
		else { $who = join(", ", map { "\\fB$_\\fP" } grep { $r->{$_} } @all) }
		print ".br\nRead by: $who.\n";
		my $where = ($f =~ /KF_DEFAULTS_ONLY|KF_GLOBAL/) ? "at the top level only" :
			($f =~ /KF_BOX/) ? "at the top level, in a test or in a box section" :
			"at the top level or in a test section";
		print ".br\nNative: \\fB" . lc($n) . "\\fP, $where.\n";
	}
	# a warning only: a line may come before its option is committed
	for my $n (sort keys %readers) {
		print STDERR "$tests: warning: $n is no option of $defs\n"
			unless $seen{$n};
	}
	exit($bad ? 1 : 0);
' conf/options.def conf/option-tests.def > "$list"
awk -v list="$list" '
	/^\.\\" OPTIONS-BEGIN/ { print; while ((getline l < list) > 0) print l; skip = 1; next }
	/^\.\\" OPTIONS-END/ { skip = 0 }
	!skip { print }' "$man" > "$out.new"
mv "$out.new" "$out"
