# SPDX-License-Identifier: GPL-2.0-only
#
# Test oracle: the dump that `ktest dump CONFIG` must reproduce.
#
# This is not a stand-alone script. tests/oracle/ktest-oracle.sh pastes it
# into a private copy of ktest.pl (Linux 6.1), in place of the line
#     doprint "\n\nSTARTING AUTOMATED TESTS\n\n";
# which runs right after read_config and the LOG_FILE evaluation, i.e. before
# the test loop sets $make (so ${KERNEL_VERSION} stays literal). Being part of
# ktest.pl's own file, the sub sees its file-scoped lexicals (%opt, %default,
# %option_map, %entered_configs) and calls its own set_test_option() and
# eval_option(): the values are ktest.pl's, not a re-implementation.
#
# Output (to the file named by $ENV{KTEST_ORACLE_OUT}), for i = 1..NUM_TESTS:
#     TEST i (TEST_NAME) TEST_TYPE        " (TEST_NAME)" left out when undef
#     NAME = value                        every known option with a defined
#                                         value, sorted by name (byte order)
#     <empty line>
# Per-test options are set_test_option(NAME, i). The global options LOG_FILE,
# NUM_TESTS, CLEAR_LOG, IGNORE_UNUSED and POWEROFF_ON_SUCCESS are read by
# ktest.pl from the plain key: eval_option(NAME, $opt{NAME}, -1) when defined.
# For LOG_FILE ktest.pl has already done exactly that (right after
# read_config), so its stored value is used as is: evaluating it a second time
# would apply its =~ evals twice.
#
# ktest-oracle.sh also puts a call to ktest_oracle_no_prompts() just before
# ktest.pl appends prompted answers to the config file, and disables the
# LOG_FILE opening block.

# Called just before ktest.pl would append prompted answers to the config
# file (it does, even when stdin is /dev/null and the answer is a default):
# a test config must define every mandatory option, so fail instead.
sub ktest_oracle_no_prompts {
    my @asked = sort keys %entered_configs;
    return if (!@asked);
    die "ktest-oracle: ktest.pl prompted for mandatory option(s) missing " .
	"from the config: @asked\n";
}

sub ktest_oracle_dump {
    my $file = $ENV{"KTEST_ORACLE_OUT"};
    die "ktest-oracle: KTEST_ORACLE_OUT is not set\n"
	if (!defined($file) || $file eq "");

    # get_test_case read EOF: the config had no TEST_START/DEFAULTS header.
    die "ktest-oracle: ktest.pl asked for a test case (no TEST_START or DEFAULTS header)\n"
	if (!defined($default{"TEST_TYPE"}));

    # Any "changed from" message of an =~ eval goes through doprint, which
    # prints to LOG when LOG_FILE is set: LOG was never opened here.
    open(LOG, ">", "/dev/null");

    # The known options: ktest.pl 6.1's 119, and two later upstream ones.
    my %known = map { $_ => 1 } (keys %default, keys %option_map,
	"MAKE_CMD", "NUM_TESTS", "PATCHCHECK_SKIP", "PRE_KTEST_DIE");
    my @names = sort keys %known;
    die "ktest-oracle: expected 121 option names (ktest.pl 6.1's 119 + 2), " .
	"found " . scalar(@names) . ": not the ktest.pl this oracle was made for\n"
	if (@names != 121);

    my %global;
    foreach my $g ("LOG_FILE", "NUM_TESTS", "CLEAR_LOG", "IGNORE_UNUSED",
		   "POWEROFF_ON_SUCCESS") {
	$global{$g} = 1;
    }

    my $text = "";

    # The same loop bounds as ktest.pl's test loop.
    for (my $i = 1; $i <= $opt{"NUM_TESTS"}; $i++) {
	my %val;
	foreach my $name (@names) {
	    my $v;
	    if ($global{$name}) {
		if (defined($opt{$name})) {
		    if ($name eq "LOG_FILE") {
			$v = $opt{$name};
		    } else {
			$v = eval_option($name, $opt{$name}, -1);
		    }
		}
	    } else {
		$v = set_test_option($name, $i);
	    }
	    $val{$name} = $v if (defined($v));
	}

	my $type = defined($val{"TEST_TYPE"}) ? $val{"TEST_TYPE"} : "";
	if (defined($val{"TEST_NAME"})) {
	    $text .= "TEST $i ($val{TEST_NAME}) $type\n";
	} else {
	    $text .= "TEST $i $type\n";
	}
	foreach my $name (@names) {
	    $text .= "$name = $val{$name}\n" if (defined($val{$name}));
	}
	$text .= "\n";
    }

    # Write then rename, so a half-written dump is never taken for a result.
    my $tmp = "$file.tmp.$$";
    open(my $out, ">", $tmp) or die "ktest-oracle: can't write $tmp: $!\n";
    print $out $text;
    close($out) or die "ktest-oracle: can't write $tmp: $!\n";
    rename($tmp, $file) or die "ktest-oracle: can't rename $tmp to $file: $!\n";
    exit 0;
}
