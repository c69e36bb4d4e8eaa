#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A pool of boxes (BOXES; ktest/pool.c) on a real git repo with a fake
# kbuild and boxes made of commands: each box has its own console, power
# switch and "next boot" file through ${BOX}, and boots the image of its own
# OUTPUT_DIR (${OUTPUT_DIR}). From commit cF on the kernel panics, and the
# commits in bad_list panic too.
# Bisect: for several F, 2 and 3 boxes name the same commit as one box
# does, with boots on every box, each commit handed out ending with a
# verdict or stopped; box b builds in its own work tree; with box b
# slow, box a goes on alone and b's step is stopped once a's verdicts make
# it useless; killed while boxes run, the rerun takes box b's finished step from
# the journal; a bad pool is a config error; the end of the run halts
# (powers off) every box. Several runs a commit
# (BISECT_TRIES, BISECT_FLAKY): the boxes share each commit's runs, which
# decide as one box's would; runs not needed are stopped; killed, the
# rerun takes the runs that ended from the journal. Patchcheck: 2 boxes
# report the same failing commits as one box, each commit built once, the
# boots spread over the boxes, the builds going on while the boxes boot, a
# box that ends during a build taking the next commit at once; with
# PATCHCHECK_STOP_AT_FIRST only the first, a later build going on then
# stopped; PATCHCHECK_PIPELINE does it with one box.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
src=$T/src
rm -rf "$src" st-* build-out tmp ./*.conf console-* next-* boots first_bad bad_list
. "$KTEST_SRC/tests/cli/series.inc"
make_series "$src" 20

# POWER_CYCLE BOX OUTPUT_DIR: the test kernel of that box when its
# REBOOT_SCRIPT chose it, else its good one (silent: no line of it can be
# read as the next boot's); a boot takes a moment, so the boxes overlap
cat >boot.sh <<EOF
#!/bin/sh
box=\$1
# infra-BOX holds how many power cycles of that box fail (a lab fault)
if [ -s $T/infra-\$box ] && [ "\$(cat $T/infra-\$box)" -gt 0 ]; then
	echo \$((\$(cat $T/infra-\$box) - 1)) > $T/infra-\$box
	echo "pdu: outlet \$box: no answer" >&2
	exit 1
fi
[ "\$(cat $T/next-\$box 2>/dev/null)" = test ] || exit 0
rm -f $T/next-\$box
n=\$(cat \$2/arch/x86/boot/bzImage)
# k: this boot is the k-th of commit n (boxes boot at once: under a lock)
k=\$(flock $T/boots.lock sh -c 'echo "\$1 \$2" >> $T/boots; grep -c " \$2\$" $T/boots' sh \$box \$n)
sleep 0.3
# a box held (hold-BOX) boots only once that file is gone: a slow box
i=0
while [ -e $T/hold-\$box ] && [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i + 1)); done
[ \$i -gt 0 ] && touch $T/held-out-\$box
# a line "N K WHAT" in once: the K-th boot of commit N panics otherwise
# (another title), boots (good), or takes 3 s more (slow)
what=\$(awk -v n=\$n -v k=\$k '\$1 == n && \$2 == k { print \$3 }' $T/once 2>/dev/null)
[ "\$what" = slow ] && sleep 3
if [ "\$what" = other ]; then
	cat $T/other.log >> $T/console-\$box.log
elif [ "\$what" != good ] && { [ "\$n" -ge "\$(cat $T/first_bad)" ] || grep -qx "\$n" $T/bad_list 2>/dev/null; }; then
	cat $T/panic.log >> $T/console-\$box.log
else
	cat $T/good.log >> $T/console-\$box.log
fi
EOF
# the console replays the box's whole log when it is opened; with
# CONSOLE_LAG, a moment after (a console server connecting, then replaying
# its buffer)
conf() {	# conf STATE EXTRA...
	st=$1
	shift
	console="tail -n +1 -F $T/console-\${BOX}.log"
	if [ -n "$CONSOLE_LAG" ]; then
		console="sh -c 'sleep $CONSOLE_LAG; exec $console'"
	fi
	series_conf "$st" "sh $T/boot.sh \${BOX} \${OUTPUT_DIR}" \
		"sh -c 'echo test > $T/next-\${BOX}'" \
		"$console" "$c20" "$@"
}
fresh() { rm -f console-* next-* boots bad_list hold-* infra-* once; echo "$1" >first_bad; }
printf '%s\n' '[    0.000000] Linux version 6.1.0-t (t@t) #1' \
	'[    0.700000] Kernel panic - not syncing: Fatal exception in interrupt' >other.log
# handed out (a "[ID] SUBJECT (box X)" line), and ended: a verdict or stopped
handed() { grep -c '^\[[0-9a-f]\{40\}\] .* (box [a-z])$' "$1"; }
ended() { grep -c '^[0-9a-f]\{12\} (box [a-z]): \(good\|bad\|skip\|stopped, \)' "$1"; }

# 1. one box, 2 boxes and 3 boxes agree, for culprits all over the range
for f in 1 6 13 20; do
	eval "want=\$c$f"
	fresh "$f"
	conf "st-one-$f" "BOXES = a" >one.conf
	run_ktest one.conf
	expect_rc 0 "c$f, one box: the bisect ends"
	check "c$f, one box: it names c$f" test "$(culprit "st-one-$f")" = "$want"
	for k in 2 3; do
		# 3 boxes: two of the culprits are enough
		[ "$k" = 3 ] && { [ "$f" = 1 ] || [ "$f" = 13 ]; } && continue
		fresh "$f"
		if [ "$k" = 2 ]; then
			conf "st-$k-$f" "BOXES = a b" >pool.conf
		else
			conf "st-$k-$f" "BOXES = a b c" >pool.conf
		fi
		run_ktest pool.conf
		expect_rc 0 "c$f, $k boxes: the bisect ends"
		check "c$f, $k boxes: it names c$f too ($(culprit "st-$k-$f"))" \
			test "$(culprit "st-$k-$f")" = "$want"
		check "c$f, $k boxes: each of the $(handed out) commits handed out ended, with a verdict or stopped" \
			test "$(handed out)" = "$(ended out)"
		check "c$f, $k boxes: the other boxes booted commits too" \
			grep -q '^[bc] ' boots
		cp out "out-$k-$f"
	done
done

# 2. what the pool did, on the last run of section 1 (3 boxes, c20)
check "every step was printed with its box" \
	grep -q ', one a box:' out-3-20
check "a box's lines say which box they are" \
	grep -q '^\[box b\] ' out-3-20
# a box other than a that gave a verdict (its step was not stopped)
vb=$(sed -n 's/^[0-9a-f]\{12\} (box \([bc]\)): \(good\|bad\|skip\)$/\1/p' out-3-20 | head -n 1)
check "box ${vb:-b} built in its own work tree under STATE_DIR" \
	test -e "st-3-20/box-${vb:-b}/src/.git"
check "and in its own output directory" \
	grep -q "^\[box ${vb:-b}\] make O=$T/st-3-20/box-${vb:-b}/out " st-3-20.log
check "BUILD_DIR is back where it was, clean" \
	sh -c "[ \"\$(git -C '$src' rev-parse HEAD)\" = '$c20' ] && [ -z \"\$(git -C '$src' status --porcelain)\" ]"
steps=$(jq '[.tests[0].steps[]] | length' st-3-20/report.json)
journalled=$(grep -c 'state=done' st-3-20/journal)
verdicts=$(grep -c '^[0-9a-f]\{12\} (box [a-z]): \(good\|bad\|skip\)$' out-3-20)
check "the report and the journal hold every box's verdict ($steps, $journalled, $verdicts)" \
	test "$steps" -ge 2 -a "$steps" = "$journalled" -a "$steps" = "$verdicts"

# 3. killed in its second round, the rerun takes the first round's steps
# (box b's too) from the journal and names the same commit. Its first
# builds come from the cache, so it boots right after the consoles open:
# the old kernels' lines they replay late are not read as the new boots'.
fresh 9
CONSOLE_LAG=0.3
conf st-kill "BOXES = a b" >kill.conf
CONSOLE_LAG=
kill_after_boots kill.conf 3
sleep 1
cp out out-killed
b1=$(sed -n 's/^\[\([0-9a-f]\{12\}\).* (box b)$/\1/p' out-killed | head -n 1)
run_ktest kill.conf
check "killed after $(wc -l <boots) boots, the rerun names c9 (exit $rc)" \
	test "$(culprit st-kill)" = "$c9"
check "the first round's step on box b ($b1) came from the journal" \
	grep -q "^\(\[box b\] \)\?bisect $b1: .* in the earlier run (from the journal)" out
check "no box process of the killed run is left" \
	sh -c "! pgrep -f 'tail -n [+]1 -F $T/console-b[.]log' >/dev/null"

# 3b. a slow box: box b's boots never end (hold-b) while box a's take a
# moment. Box a does not wait for b: it takes the next commit each time it
# ends, until a verdict of its own makes b's commit useless (c3 bad under
# b's c5); b's step is then stopped, its boot script with it, and the
# bisect ends without a verdict from b, naming c3.
fresh 3
touch hold-b
conf st-slow "BOXES = a b" >slow.conf
run_ktest slow.conf
rm -f hold-b
cp out out-slow
b1=$(sed -n 's/^\[\([0-9a-f]\{12\}\).* (box b)$/\1/p' out-slow | head -n 1)
check "a slow box: the bisect names c3 (exit $rc)" \
	test "$(culprit st-slow)" = "$c3"
check "box b's commit ($b1) was stopped, its verdict no longer mattering" \
	grep -q "^$b1 (box b): stopped, its verdict no longer matters" out-slow
check "box b gave no verdict" \
	sh -c "! grep -q '^[0-9a-f]\{12\} (box b): \(good\|bad\|skip\)' out-slow"
check "box a took commit after commit: $(grep -c '(box a): \(good\|bad\)' out-slow) verdicts" \
	test "$(grep -c '(box a): \(good\|bad\)' out-slow)" -ge 3
check "its boot script was stopped with it" \
	sh -c "! pgrep -f 'boot[.]sh b ' >/dev/null"
check "the stopped step is not in the journal" \
	sh -c "! grep 'state=done' st-slow/journal | grep -q 'bisect:$b1'"
check "nor in the report" \
	sh -c "! jq -r '.tests[0].steps[].commit' st-slow/report.json | grep -q '^$b1'"

# 3c. box b's first power cycle fails (the lab's fault, INFRA): the box
# runs its step again, and its failed run is in the report and the
# journal as one box's would be. Box a is held until box b's step is in
# the journal (its failed run and its verdict), so that nothing of a's
# can make b's commit useless first.
fresh 7
echo 1 >infra-b
touch hold-a
conf st-infra "BOXES = a b" >infra.conf
(
	i=0
	while [ "$(cat st-infra/journal 2>/dev/null | grep -c 'key=bisect:.*state=done')" -lt 2 ] &&
		[ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	rm -f hold-a
) &
lifter=$!
run_ktest infra.conf
wait "$lifter"
b1=$(sed -n 's/^\[\([0-9a-f]\{40\}\)\] .* (box b)$/\1/p' out | head -n 1)
check "box b's power cycle failed once, and the bisect names c7 (exit $rc)" \
	test "$(culprit st-infra)" = "$c7"
check "box b said so and ran its step again" \
	grep -q '^\[box b\] INFRA trouble (.*); trying .* again (retry 1 of 2)' out
check "the report has box b's failed run as INFRA" \
	test "$(jq -r --arg c "$b1" '[.tests[0].steps[] | select(.commit == $c) | .verdict] | join(" ")' st-infra/report.json)" = "INFRA GOOD"
check "and so has the journal" \
	grep -q "key=bisect:$b1	state=done	verdict=INFRA" st-infra/journal

# 3d. Ctrl-C twice, to ktest's process group as a terminal sends it, while
# both boxes' power commands are held: the first lets the steps in flight
# end, the second stops each box's command (its boot script did not wait
# its hold out); the run exits 3, the stopped steps are INFRA, blamed on no
# commit, and the rerun names the culprit.
fresh 12
rm -f held-out-*
touch hold-a hold-b
conf st-int "BOXES = a b" >int.conf
setsid "$KTEST" int.conf >out 2>err </dev/null &
kpid=$!
i=0
until grep -q '^a ' boots 2>/dev/null && grep -q '^b ' boots 2>/dev/null ||
	[ $i -ge 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
env kill -s INT -- -"$kpid"
sleep 0.5
env kill -s INT -- -"$kpid"
wait "$kpid"
rc=$?
rm -f hold-a hold-b
expect_rc 3 "Ctrl-C twice while both boxes boot: exit 3"
check "each box's held boot script was stopped, not waited for" \
	sh -c "! ls held-out-* >/dev/null 2>&1"
check "no boot script is left" sh -c "! pgrep -f 'boot[.]sh [ab] ' >/dev/null"
check "ktest said it stops the commands in flight, once" \
	test "$(grep -c '^ktest: interrupted again: stopping the command in flight' out)" -eq 1
# (after a second Ctrl-C the steps still in flight are stopped, not
# waited for: they would be INFRA, nothing to keep)
check "the stopped steps are INFRA, blamed on no commit" \
	jqe '([.tests[0].steps[] | select(.verdict == "INFRA" and (.why | contains("second Ctrl-C")))] | length >= 1) and ([.tests[0].steps[] | select(.verdict != "INFRA")] | length == 0)' st-int/report.json
run_ktest int.conf
expect_rc 0 "the rerun after Ctrl-C twice ends"
check "and names c12 ($(culprit st-int))" test "$(culprit st-int)" = "$c12"

# 3e. box b's power switch is dead (INFRA each time) while box a's boot is
# held: box b gives its step up and the run stops, but box a's step in
# flight ends first, and its verdict is kept (the report, the journal), so
# the rerun, with b's switch back, takes it from the journal and does not
# boot that commit again.
# lift_after_infra STATE KIND HOLD: HOLD goes half a second after STATE's
# journal has 3 INFRA runs of a KIND step (a box gave it up; 60 s at most)
lift_after_infra() {
	i=0
	while [ "$(cat "$1/journal" 2>/dev/null | grep -c "key=$2[-:].*verdict=INFRA")" -lt 3 ] &&
		[ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.5
	rm -f "$3"
}
fresh 7
echo 99 >infra-b
touch hold-a
conf st-keep "BOXES = a b" >keep.conf
lift_after_infra st-keep bisect hold-a &
lifter=$!
run_ktest keep.conf
wait "$lifter"
cp out out-keep
a1=$(sed -n 's/^\[\([0-9a-f]\{40\}\)\] .* (box a)$/\1/p' out-keep | head -n 1)
expect_rc 3 "box b's power switch dead: the run stops (exit 3)"
check "it waits for box a's step in flight first" \
	grep -q '^The run stops once the step in flight on box a ends; its outcome is kept for the rerun' out-keep
check "box a's verdict on $(name "$a1") is printed as kept" \
	grep -q "^$(echo "$a1" | cut -c1-12) (box a): \(GOOD\|BAD\), kept for the rerun" out-keep
check "and is in the journal" \
	grep -q "key=bisect:$a1	state=done	verdict=\(GOOD\|BAD\)" st-keep/journal
kept=$(jq --arg c "$a1" '[.tests[0].steps[] | select(.commit == $c and (.verdict == "GOOD" or .verdict == "BAD"))] | length' st-keep/report.json)
check "and in the report ($kept)" test "$kept" = 1
an=$(name "$a1" | cut -c2-)
booted=$(grep -c " $an\$" boots)
rm -f infra-b
run_ktest keep.conf
expect_rc 0 "the rerun, box b's switch back, ends"
check "and names c7 ($(culprit st-keep))" test "$(culprit st-keep)" = "$c7"
check "box a's kept step came from the journal" \
	grep -q "^\(\[box [ab]\] \)\?bisect $(echo "$a1" | cut -c1-12): .* in the earlier run (from the journal)" out
check "and c$an was not booted again ($booted boots, then $(grep -c " $an\$" boots))" \
	test "$(grep -c " $an\$" boots)" = "$booted"

# 4. a bad pool is a config error, and says so
conf st-bad "BOXES = a a" >bad.conf
run_ktest bad.conf
expect_rc 2 "BOXES naming a box twice is a config error"
check "it says what is wrong" grep -q "named twice" out
conf st-bad2 'BOXES = a b/c' >bad.conf
run_ktest bad.conf
expect_rc 2 "a box name with a slash is a config error"

# 4b. the end of the run does to every box what it does to one:
# POWEROFF_ON_SUCCESS halts each (ssh refused: its POWER_OFF), and
# POWEROFF_ON_ERROR powers each off when the run stops (box b's power
# switch fails for good: the lab's fault)
# (and each box builds with its own MAKE_CMD: a build host each)
printf '#!/bin/sh\necho "$MAKER" >> %s/makers\nexec make "$@"\n' "$T" >mk.sh
fresh 6
{
	echo "POWEROFF_ON_SUCCESS = 1"	# a global option
	conf st-end "BOXES = a b" "POWER_OFF = sh -c 'echo \${BOX} >> $T/off'" \
		"MAKE_CMD = MAKER=build-\${BOX} sh $T/mk.sh"
} >end.conf
rm -f off makers
run_ktest end.conf
check "POWEROFF_ON_SUCCESS, 2 boxes: the bisect names c6 (exit $rc)" \
	test "$(culprit st-end)" = "$c6"
check "each box built with its own MAKE_CMD (\${BOX}: $(sort -u makers | tr '\n' ' '))" \
	test "$(sort -u makers | tr '\n' ' ')" = "build-a build-b "
check "and halts both boxes, each by its own POWER_OFF ($(tr '\n' ' ' <off 2>/dev/null))" \
	test "$(sort off 2>/dev/null | tr '\n' ' ')" = "a b "
check "saying which" grep -q '^Halting box b (POWEROFF_ON_SUCCESS)' out
fresh 6
echo 99 >infra-b
conf st-end-err "BOXES = a b" "POWER_OFF = sh -c 'echo \${BOX} >> $T/off'" \
	"POWEROFF_ON_ERROR = 1" >end-err.conf
rm -f off
run_ktest end-err.conf
expect_rc 3 "POWEROFF_ON_ERROR, box b's power switch dead: the run stops"
check "and powers both boxes off ($(tr '\n' ' ' <off 2>/dev/null))" \
	test "$(sort off 2>/dev/null | tr '\n' ' ')" = "a b "

# 5. several runs a commit (BISECT_TRIES, BISECT_FLAKY): the boxes share
# each commit's runs, one commit at a time. The commits tested and the
# runs that decide each are one box's (the runs count in the order they
# were handed out); box b boots while box a does.
decisions() { grep -E '^\[[0-9a-f]{40}\]|(passes|fails|cannot be tested): [0-9]+ runs|^Verif' "$1"; }
for opt in "BISECT_TRIES = 3" "BISECT_FLAKY = 1"; do
	o=${opt%% *}
	fresh 6
	conf "st-$o-1" "BOXES = a" "$opt" >one.conf
	run_ktest one.conf
	cp out "out-$o-1"
	# box a is held in its first boot until box b's first run has ended
	fresh 6
	touch hold-a
	conf "st-$o-2" "BOXES = a b" "$opt" >two.conf
	(
		i=0
		while ! grep -q 'login:\|panic' console-b.log 2>/dev/null &&
			[ $i -lt 600 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		[ $i -lt 600 ] && echo b >lifted
		rm -f hold-a
	) &
	lifter=$!
	rm -f lifted
	run_ktest two.conf
	wait "$lifter"
	cp out "out-$o-2"
	check "$opt, 2 boxes: it names c6 (exit $rc)" \
		test "$(culprit "st-$o-2")" = "$c6"
	check "$opt: the boxes share each commit's runs, it says" \
		grep -q "^BOXES: 2 boxes share the runs of each commit ($o)" out
	check "$opt: box b booted run 2 while box a still booted run 1" \
		test "$(cat lifted 2>/dev/null)" = b
	check "$opt: the same commits tested, each decided by the same runs, as on one box ($(decisions out | wc -l) lines)" \
		test "$(decisions "out-$o-1")" = "$(decisions out)"
	ran=$(grep -c '^[0-9a-f]\{12\} run [0-9]* (box [ab]): \(passed\|failed\)' out)
	check "$opt: the boxes ran $ran runs to their end, box b some of them" \
		grep -q '^[0-9a-f]\{12\} run [0-9]* (box b): \(passed\|failed\)' out
	steps=$(jq '[.tests[0].steps[]] | length' "st-$o-2/report.json")
	journalled=$(grep -c 'state=done' "st-$o-2/journal")
	first=$(jq '[.tests[0].steps[] | select(.kind | test("-run") | not)] | length' "st-$o-2/report.json")
	check "$opt: the report and the journal hold every run that ended ($steps, $journalled: $first first runs, $ran on the boxes)" \
		test "$steps" = "$journalled" -a "$steps" = "$((first + ran))"
done
check "BISECT_FLAKY: the verification's runs were shared too" \
	grep -q '^[0-9a-f]\{12\}: run [0-9]* on box b$' out-BISECT_FLAKY-2
# BISECT_SPECULATE with the boxes sharing the runs: once run 1 built a
# commit, the commits that can come next build in a work tree of their
# own while the boxes run it; the next commit's run 1 takes its build from
# the cache. The same commits and runs decide as on one box.
fresh 6
conf st-spec "BOXES = a b" "BISECT_FLAKY = 1" "BISECT_SPECULATE = 1" >spec.conf
run_ktest spec.conf
check "BISECT_FLAKY and BISECT_SPECULATE, 2 boxes: it names c6 (exit $rc)" \
	test "$(culprit st-spec)" = "$c6"
check "the next commits built in the background, in a work tree of their own" \
	sh -c "grep -q '^Speculating: building [0-9a-f]\{12\}.* in the background (' out && test -e st-spec/spec-src/.git"
# run 1 of a commit in the bisect (before the verification, whose commits
# were built before): built by box a, or taken from the cache
sed '/^Verifying/,$d' out >out-bisect
firsts=$(grep -A1 '^[0-9a-f]\{12\}: run 1 on box a$' out-bisect | grep -c '^Building ')
cached=$(grep -A1 '^[0-9a-f]\{12\}: run 1 on box a$' out-bisect | grep -c '^Building [0-9a-f]*: built by an earlier step, taken from the build cache')
check "runs 1 in the bisect took their build from the cache ($cached of $firsts), built ahead" \
	sh -c "[ $cached -ge 2 ] && grep -q 'spec: .*: built 6.1.0-t' st-spec/spec.log"
check "the same commits tested, each decided by the same runs, as on one box" \
	test "$(decisions out-BISECT_FLAKY-1)" = "$(decisions out)"

# BISECT_SAME_CRASH on 2 boxes: c5, good, panics once with another title
# (its first run, in the bisect or the verification): that run counts
# neither way and c6 is named; without it, c5 fails and is taken for bad
for same in 1 0; do
	fresh 6
	echo "5 1 other" >once
	conf st-same-$same "BOXES = a b" "BISECT_FLAKY = 1" "BISECT_SAME_CRASH = $same" >same.conf
	run_ktest same.conf
	cp out out-same-$same
done
check "BISECT_SAME_CRASH, 2 boxes: c6 is named though c5 panicked otherwise once ($(name "$(culprit st-same-1)"))" \
	sh -c "test '$(culprit st-same-1)' = '$c6' && grep -qx 'a 5' boots"
check "c5's run counted neither way, and c5 passed on its other runs" \
	sh -c "grep -q '^${c5%"${c5#????????????}"}: failed with \"kernel panic: Fatal exception in interrupt\", not the failure bisected' out-same-1 &&
		grep -q '^${c5%"${c5#????????????}"} passes: [0-9]* runs, 0 failed, [0-9]* passed, 1 failed otherwise' out-same-1"
check "without BISECT_SAME_CRASH the same panic makes c5 bad, and the answer is not c6 (exit $rc)" \
	sh -c "[ $rc -ne 0 ] || test '$(culprit st-same-0)' != '$c6'"
# the bad commit's first boot passes, its second (run 2, box a) is slow
# and its third (run 3) panics otherwise: run 3 does not start before run
# 2 named the failure (one run at a time until one does), so the other
# panic, which would else have come first, counts neither way
fresh 6
printf '20 1 good\n20 2 slow\n20 3 other\n' >once
conf st-same-order "BOXES = a b" "BISECT_FLAKY = 1" "BISECT_SAME_CRASH = 1" >same.conf
run_ktest same.conf
check "BISECT_SAME_CRASH: run 2 of the bad commit names the failure, though it was slow ($(name "$(culprit st-same-order)"))" \
	sh -c "test '$(culprit st-same-order)' = '$c6' &&
		grep -q '^The failure bisected (BISECT_SAME_CRASH): \"kernel panic: the bug\", as ${c20%"${c20#????????????}"} showed it' out"
check "and run 3, the other panic, counted neither way" \
	grep -q "^${c20%"${c20#????????????}"} run 3 (box [ab]): failed otherwise (counts neither way)$" out
check "runs 1 and 2 only, one after the other, before the failure was named" \
	sh -c "sed -n '1,/^The failure bisected/p' out | grep -c '^${c20%"${c20#????????????}"}: run [0-9]* on box' | grep -qx 2"

# killed while the boxes run a commit's runs: the rerun takes the runs
# that ended from the journal, box b's too, and runs the others
fresh 15
conf st-tries-kill "BOXES = a b" "BISECT_TRIES = 3" >kill.conf
kill_after_boots kill.conf 5
sleep 1
killed=$(wc -l <boots)
run_ktest kill.conf
check "killed after $killed boots, the rerun names c15 (exit $rc)" \
	test "$(culprit st-tries-kill)" = "$c15"
check "the boxes' runs that ended came from the journal" \
	grep -q '^\[box [ab]\] bisect-run[23] [0-9a-f]*: .* in the earlier run (from the journal)' out
check "no box process of the killed run is left" \
	sh -c "! pgrep -f 'tail -n [+]1 -F $T/console-b[.]log' >/dev/null"

# box b is held in every boot, every commit fails at its first run on
# box a: b's runs are stopped, not needed, its boot script with them
fresh 1
touch hold-b
conf st-tries-held "BOXES = a b" "BISECT_TRIES = 3" >held.conf
run_ktest held.conf
rm -f hold-b
check "box b held: the bisect names c1 (exit $rc)" \
	test "$(culprit st-tries-held)" = "$c1"
check "box b's runs were stopped, not needed" \
	grep -q '^[0-9a-f]\{12\} run 2 (box b): stopped, not needed' out
check "and gave nothing" \
	sh -c "! grep -q '^[0-9a-f]\{12\} run [0-9]* (box b): \(passed\|failed\)' out"
check "their boot script was stopped with them" \
	sh -c "! pgrep -f 'boot[.]sh b ' >/dev/null"

# a build bisect runs its runs in BUILD_DIR: one box
conf st-tries-build "BOXES = a b" "BISECT_TRIES = 2" |
	sed 's/^BISECT_TYPE = boot$/BISECT_TYPE = build/' >build.conf
run_ktest build.conf
check "BISECT_TRIES in a build bisect: one box, it says" \
	grep -q 'BOXES: one box (a): the runs of a build bisect are builds' out

# 6. patchcheck of c1..c8: c4 and c7 do not boot; one box and two agree
pconf() {	# pconf STATE EXTRA...
	conf "$@" | sed '/^TEST_TYPE = bisect/,$d'
	printf 'TEST_TYPE = patchcheck\nPATCHCHECK_TYPE = boot\nPATCHCHECK_SLEEP_TIME = 0\n'
	printf 'PATCHCHECK_START = %s\nPATCHCHECK_END = %s\n' "$c1" "$c8"
	shift
	for l in "$@"; do echo "$l"; done
}
failing() {	# the cN that the report says break the series
	sed -n '/break the series:$/,$ s/^  \([0-9a-f]\{12\}\) \(c[0-9]*\): .*/\2/p' "$1" |
		tr '\n' ' '
}
fresh 999
printf '4\n7\n' >bad_list
pconf st-pc1 "BOXES = a" >pc1.conf
run_ktest pc1.conf
one=$(failing out)
check "patchcheck, one box: c4 and c7 break the series ($one)" \
	test "$one" = "c4 c7 "
fresh 999
printf '4\n7\n' >bad_list
pconf st-pc2 "BOXES = a b" >pc2.conf
run_ktest pc2.conf
two=$(failing out)
check "patchcheck, 2 boxes: the same commits ($two)" test "$two" = "$one"
check "patchcheck, 2 boxes: every commit was booted once" \
	test "$(wc -l <boots)" = 8
check "patchcheck, 2 boxes: box b booted some of them ($(grep -c '^b ' boots))" \
	test "$(grep -c '^b ' boots)" -ge 1
check "patchcheck, 2 boxes: each commit was built once (make), its boot took the build from the cache" \
	sh -c "[ \$(grep -c '^Build done' out) = 8 ] && [ \$(grep -c 'taken from the build cache' out) = 8 ]"
check "LOG_FILE marks a box's lines too" \
	grep -q '^\[box b\] NO_INSTALL is set' st-pc2.log
fresh 999
printf '4\n7\n' >bad_list
pconf st-pc3 "BOXES = a b" "PATCHCHECK_STOP_AT_FIRST = 1" >pc3.conf
run_ktest pc3.conf
check "patchcheck, 2 boxes, PATCHCHECK_STOP_AT_FIRST: c4 only ($(failing out))" \
	test "$(failing out)" = "c4 "
check "and it stopped at c4: no boot after c5's ($(awk '{ print $2 }' boots | tr '\n' ' '))" \
	sh -c "! grep -q ' [678]\$' boots"

# 6b. the builds go on while the boxes boot: both boxes are held (their
# boots end only once hold-a and hold-b are gone); the holds are lifted
# once all 8 builds are in the journal (60 s at most). Booting each
# pool-full before building on would never get there.
# lift_after_builds STATE HOLD...: the holds go once STATE's journal has
# all 8 builds (60 s at most, else held-too-long)
lift_after_builds() {
	st=$1
	shift
	i=0
	while [ "$(cat "$st/journal" 2>/dev/null | grep -c 'key=patchcheck-build:.*state=done')" != 8 ] &&
		[ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ $i -lt 600 ] || touch held-too-long
	rm -f "$@"
}
fresh 999
printf '4\n7\n' >bad_list
touch hold-a hold-b
rm -f held-too-long
pconf st-pc4 "BOXES = a b" >pc4.conf
lift_after_builds st-pc4 hold-a hold-b &
lifter=$!
run_ktest pc4.conf
wait "$lifter"
check "all 8 commits were built while the boxes held their first boots" \
	test ! -e held-too-long
check "and the answer is the same ($(failing out))" test "$(failing out)" = "$one"
check "each box booted in a work tree of its own, box a too" \
	sh -c "[ -e st-pc4/box-a/src/.git ] && [ -e st-pc4/box-b/src/.git ]"
check "every commit was booted once" test "$(wc -l <boots)" = 8

# 6c. a box that ends during a build takes the next commit queued at once:
# c6's build is held (held-build) while c3..c5 wait for a box and both
# boxes are held in c1's and c2's boots; once the boxes are let go, a third
# boot must start while c6 still builds (15 s at most)
cat >make.sh <<EOF
#!/bin/sh
if [ "\$(cat version)" = 6 ]; then
	touch $T/building-6
	i=0
	while [ -e $T/hold-build ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
fi
exec make "\$@"
EOF
fresh 999
printf '4\n7\n' >bad_list
touch hold-a hold-b hold-build
rm -f building-6 third-boot-late
pconf st-pc5 "BOXES = a b" "MAKE_CMD = sh $T/make.sh" >pc5.conf
(
	i=0
	while [ ! -e building-6 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	rm -f hold-a hold-b
	i=0
	while [ "$(cat boots 2>/dev/null | wc -l)" -lt 3 ] && [ $i -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(cat boots 2>/dev/null | wc -l)" -ge 3 ] || touch third-boot-late
	rm -f hold-build
) &
lifter=$!
run_ktest pc5.conf
wait "$lifter"
check "c6's build was held: the boxes were let go while it built" \
	grep -q 'c6: change 6' st-pc5.log
check "a box took c3 while c6 was still building" test ! -e third-boot-late
check "and the answer is the same ($(failing out))" test "$(failing out)" = "$one"
check "every commit was booted once, on both boxes ($(awk '{ print $1 }' boots | sort | uniq -c | tr '\n' ' '))" \
	sh -c "[ \$(wc -l <boots) = 8 ] && grep -q '^a ' boots && grep -q '^b ' boots"

# 6e. PATCHCHECK_STOP_AT_FIRST: a failure a box finds while a later commit
# builds stops that build. c6's build is held (hold-build, 60 s at most)
# and the boxes are held until it starts; then c4's boot fails during it,
# and the run ends at once, c6 neither built nor reported
fresh 999
printf '4\n' >bad_list
touch hold-a hold-b hold-build
rm -f building-6
pconf st-pc6 "BOXES = a b" "MAKE_CMD = sh $T/make.sh" \
	"PATCHCHECK_STOP_AT_FIRST = 1" >pc6.conf
(
	i=0
	while [ ! -e building-6 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	rm -f hold-a hold-b
) &
lifter=$!
start=$(date +%s)
run_ktest pc6.conf
took=$(( $(date +%s) - start ))
held=no
[ -e hold-build ] && held=yes
rm -f hold-build
wait "$lifter"
check "STOP_AT_FIRST, c4 failing while c6 builds: c4 only ($(failing out))" \
	test "$(failing out)" = "c4 "
check "c6's build was stopped, not needed, before its hold was lifted (${took}s)" \
	sh -c "[ $held = yes ] && grep -q '^${c6%"${c6#????????????}"}: its build stopped, not needed (PATCHCHECK_STOP_AT_FIRST' out"
check "nothing of c6's build is in the journal or the report" \
	sh -c "! grep -q 'key=patchcheck-build:$c6	state=done' st-pc6/journal &&
	       ! jq -r '.tests[0].steps[].commit' st-pc6/report.json | grep -q '^$c6'"
check "and no failed build of c6 was printed" \
	sh -c "! grep -q '^failed build' out"

# 6f. box b's power switch is dead (INFRA each time) while box a's first
# boot is held: box b gives its commit up and the run stops (exit 3), but
# only once box a's boot has ended; its verdict is kept, and the rerun, b's
# switch back, does not boot that commit again
fresh 999
printf '4\n7\n' >bad_list
echo 99 >infra-b
touch hold-a
pconf st-pc8 "BOXES = a b" >pc8.conf
lift_after_infra st-pc8 patchcheck hold-a &
lifter=$!
run_ktest pc8.conf
wait "$lifter"
an=$(awk '$1 == "a" { print $2; exit }' boots)
eval "ac=\$c$an"
expect_rc 3 "patchcheck, box b's power switch dead: the run stops (exit 3)"
check "after box a's boot of c$an ended, its verdict kept" \
	sh -c "grep -q '^The run stops once the step in flight on box a ends' out &&
	       grep -q '^${ac%"${ac#????????????}"} (box a): \(GOOD\|BAD\), kept for the rerun' out"
check "in the journal" \
	grep -q "key=patchcheck:$ac	state=done	verdict=\(GOOD\|BAD\)" st-pc8/journal
booted=$(grep -c " $an\$" boots)
rm -f infra-b
run_ktest pc8.conf
check "the rerun, box b's switch back, names c4 and c7 ($(failing out))" \
	test "$(failing out)" = "$one"
check "and did not boot c$an again ($booted boots, then $(grep -c " $an\$" boots))" \
	test "$(grep -c " $an\$" boots)" = "$booted"

# 6d. PATCHCHECK_PIPELINE, no BOXES: one box (named 1) boots while ktest
# builds on; held in its first boot until all 8 builds are in the journal
fresh 999
printf '4\n7\n' >bad_list
touch hold-1
rm -f held-too-long
pconf st-pc6 "PATCHCHECK_PIPELINE = 1" >pc6.conf
lift_after_builds st-pc6 hold-1 &
lifter=$!
run_ktest pc6.conf
wait "$lifter"
expect_rc 1 "PATCHCHECK_PIPELINE: the patchcheck fails (c4, c7)"
check "it says box 1 boots while the next commits build" \
	grep -q '^PATCHCHECK_PIPELINE: box 1 boots each commit while the next ones build$' out
check "all 8 commits were built while the box held its first boot" \
	test ! -e held-too-long
check "the same failing commits as without it ($(failing out))" \
	test "$(failing out)" = "$one"
check "box 1 booted every commit once, in its own work tree" \
	sh -c "[ \$(grep -c '^1 ' boots) = 8 ] && [ \$(wc -l <boots) = 8 ] && [ -e st-pc6/box-1/src/.git ]"
# a build patchcheck has nothing to pipeline: it says so, and builds
fresh 999
pconf st-pc7 "PATCHCHECK_PIPELINE = 1" | sed 's/^PATCHCHECK_TYPE = boot/PATCHCHECK_TYPE = build/' >pc7.conf
run_ktest pc7.conf
expect_rc 0 "PATCHCHECK_PIPELINE, a build patchcheck: it passes"
check "and says the option has nothing to do" \
	grep -q '^PATCHCHECK_PIPELINE: a build patchcheck has no boot to build beside$' out
check "no box booted" test ! -s boots

finish
