#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Flaky-aware bisection (BISECT_FLAKY, BISECT_TRIES, BISECT_VERIFY;
# ktest/flaky.c) on a real git repo with a fake kbuild and a box made of
# commands: from c5 on, the kernel panics in about half its boots (a
# seeded generator in POWER_CYCLE decides, so every run is repeatable).
# One boot per commit names a wrong commit; the flaky bisect names c5,
# verifies it (parent passes, c5 fails again) and prints a confidence of at
# least the target; ktest.pl's BISECT_TRIES rule and the flip that turns the
# flaky rule on are checked too.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
src=$T/src
rm -rf "$src" "$T/src2" "$T/src3" "$T/src-clone" st-* build-out tmp ./*.conf console.log next seed boots rate mode \
	noised other.log
. "$KTEST_SRC/tests/cli/series.inc"
make_series "$src" 12

# POWER_CYCLE: the test kernel when REBOOT_SCRIPT chose it, else the good
# one; the test kernel of c5 and later panics when the generator says so
series_boot_head >boot.sh
cat >>boot.sh <<EOF
case "\$(cat $T/mode 2>/dev/null)" in
marker)	# the failure comes with a file of the tree that is not built
	if [ -e $T/src2/marker ]; then cat $T/panic.log; else cat $T/good.log; fi >> $T/console.log
	exit 0 ;;
bug)	# the failure is built in
	if grep -q BUG $T/build-out/arch/x86/boot/bzImage; then cat $T/panic.log; else cat $T/good.log; fi >> $T/console.log
	exit 0 ;;
esac
n=\$(cat $T/build-out/arch/x86/boot/bzImage)
# noise: the box's own trouble, once, on a good commit
if [ "\$(cat $T/mode 2>/dev/null)" = noise ] && [ "\$n" = 3 ] && [ ! -e $T/noised ]; then
	touch $T/noised
	echo "\$n noise" >> $T/boots
	cat $T/other.log >> $T/console.log
	exit 0
fi
# lucky: c5 passes every boot until ktest verifies an answer, then fails
if [ "\$(cat $T/mode 2>/dev/null)" = lucky ] && [ "\$n" = 5 ]; then
	echo "\$n lucky" >> $T/boots
	if grep -q '^Verifying: the parent' $T/out; then cat $T/panic.log; else cat $T/good.log; fi >> $T/console.log
	exit 0
fi
# fixlucky, for a reverse bisect: c7 fixes the bug; c6 passes every boot
# until ktest verifies an answer, then always fails
if [ "\$(cat $T/mode 2>/dev/null)" = fixlucky ]; then
	if [ "\$n" -ge 7 ] || { [ "\$n" = 6 ] && ! grep -q '^Verifying: ' $T/out; }; then
		echo "\$n fixed" >> $T/boots
		cat $T/good.log >> $T/console.log
		exit 0
	fi
	[ "\$n" = 6 ] && { echo "\$n unlucky" >> $T/boots; cat $T/panic.log >> $T/console.log; exit 0; }
	n=5	# fails as c5 does, from the generator
fi
s=\$(( (\$(cat $T/seed) * 1103515245 + 12345) % 2147483648 ))
echo \$s > $T/seed
echo "\$n \$(( (s / 65536) % 100 ))" >> $T/boots
if [ "\$n" -ge 5 ] && [ \$(( (s / 65536) % 100 )) -lt \$(cat $T/rate 2>/dev/null || echo 50) ]; then
	cat $T/panic.log >> $T/console.log
else
	cat $T/good.log >> $T/console.log
fi
EOF
conf() {	# conf STATE EXTRA...
	st=$1
	shift
	series_conf "$st" "sh $T/boot.sh" "sh -c 'echo test > $T/next'" \
		"tail -n +1 -F $T/console.log" "$c12" "$@"
}
fresh() { : >console.log; rm -f next boots; echo "$1" >seed; }

# 1. one boot per commit: the flaky failure misleads it
fresh 7
conf st-plain >plain.conf
run_ktest plain.conf
got=$(culprit st-plain)
check "one boot per commit names $(name "$got") (exit $rc): the flaky panic hid itself" \
	test "$got" != "$c5"

# 2. the flaky bisect, same seed: c5, verified, with its confidence
fresh 7
conf st-flaky "BISECT_FLAKY = 1" "BISECT_CONFIDENCE = 90" >flaky.conf
start=$(date +%s)
run_ktest flaky.conf
took=$(( $(date +%s) - start ))
expect_rc 0 "BISECT_FLAKY: the bisect ends (${took}s, $(wc -l <boots) boots)"
check "it names c5, the first commit that can panic ($(name "$(culprit st-flaky)"))" \
	test "$(culprit st-flaky)" = "$c5"
check "the bad commit ran 10 times first, to measure the failure" \
	grep -q "Flaky bisect: the bad commit runs 10 times first" out
check "a commit that fails once is bad, a pass took several clean runs" \
	sh -c "grep -q 'fails: [0-9]* runs, 1 failed' out && grep -Eq 'passes: ([4-9]|[1-9][0-9]) runs, 0 failed' out"
check "the answer was verified: the parent passes, c5 fails again" \
	grep -q "Verified: the parents pass and ${c5%"${c5#????????????}"} fails" out
conf_line=$(grep '^Confidence ' out)
pct=$(echo "$conf_line" | sed -n 's/^Confidence \([0-9]*\)\..*/\1/p')
check "the confidence is printed and at least the 90% asked for: $conf_line" \
	test "${pct:-0}" -ge 90
# the verification's runs of the parent count: a wrong answer had to pass
# them too, so the confidence is above the bisect's verdicts' alone
alone=$(sed -n "s/^  (the bisect's verdicts alone: \([0-9.]*\)%; a wrong answer would also have passed the verification's runs of its parents, which .* passes \([0-9.e-]*\)% of the time at most)$/\1 \2/p" out)
check "the verification's runs count in it: the bisect's verdicts alone ${alone%% *}%, a commit with the failure passes the check ${alone##* }%" \
	awk -v a="$alone" -v c="$(echo "$conf_line" | sed -n 's/^Confidence \([0-9.]*\)%.*/\1/p')" \
		'BEGIN { split(a, w, " ");
			want = 100 - (100 - w[1]) * w[2] / 100;
			exit !(a != "" && w[2] > 0 && c >= w[1] && c - want <= 0.06 && want - c <= 0.06) }'
check "the journal holds each run as its own step (bisect-runN)" \
	grep -q 'key=bisect-run2:' st-flaky/journal
check "a later run of a commit says it has nothing to build" \
	sh -c "grep -q 'its first run built it in OUTPUT_DIR, nothing to build' st-flaky.log &&
		! grep -q 'BUILD_TYPE nobuild' st-flaky.log"
# report.json carries the confidence and the runs the output printed
printed=$(echo "$conf_line" | sed -n 's/^Confidence \([0-9.]*\)%.*; \([0-9]*\) runs in all$/\1 \2/p')
same_as_printed() {	# same_as_printed STATE "PCT RUNS": its report's
	jq -r '.tests[0] | "\(.confidence) \(.runs)"' "$1/report.json" |
		awk -v p="$2" 'BEGIN { split(p, w, " ") }
			{ d = $1 * 100 - w[1]; exit !(p != "" && d <= 0.05 && d >= -0.05 && $2 == w[2]) }'
}
check "report.json has the confidence and the runs printed ($printed): $(jq -c '.tests[0] | [.confidence, .runs]' st-flaky/report.json)" \
	same_as_printed st-flaky "$printed"
check "one boot per commit: report.json has no confidence" \
	test "$(jq '.tests[0] | has("confidence") or has("runs")' st-plain/report.json)" = false
# killed in a second test, the rerun takes the bisect's end from the journal
cp flaky.conf flaky-then.conf
printf '%s\n' TEST_START "TEST_TYPE = build" "BUILD_TYPE = nobuild" \
	"PRE_TEST = test -e $T/killed || { touch $T/killed; kill -KILL \$PPID; }" >>flaky-then.conf
sed -i "s|^STATE_DIR = .*|STATE_DIR = $T/st-then|" flaky-then.conf
rm -rf killed st-then
fresh 7
run_ktest flaky-then.conf
printed=$(sed -n 's/^Confidence \([0-9.]*\)%.*; \([0-9]*\) runs in all$/\1 \2/p' out)
check "a flaky bisect ($printed), then a test that kills ktest (exit $rc)" \
	test "$rc" = 137 -a -e killed -a -n "$printed"
run_ktest flaky-then.conf
check "the rerun takes the bisect from the journal (exit $rc)" \
	grep -q 'TEST 1 finished in the earlier run' out
check "and report.json has its confidence and runs again" \
	same_as_printed st-then "$printed"
check "the verification took c5's build from the build cache, not make" \
	grep -q "Building ${c5%"${c5#????????????}"}: built by an earlier step, taken from the build cache" st-flaky.log
check "the cache holds at most 8 builds" \
	test "$(ls st-flaky/build-cache | wc -l)" -le 8

# 3. another seed: the same answer
fresh 12345
conf st-flaky2 "BISECT_FLAKY = 1" "BISECT_CONFIDENCE = 90" >flaky2.conf
run_ktest flaky2.conf
check "with another seed, c5 again (exit $rc, $(wc -l <boots) boots)" \
	test "$(culprit st-flaky2)" = "$c5"

# 3b. the box fails once on its own, on good c3 (another panic): one
# failure makes c3 bad and the verification fails; with
# BISECT_FLAKY_FAILURES = 2, c3 gets the runs that tell, and c5 is named
printf '%s\n' '[    0.000000] Linux version 6.1.0-t (t@t) #1' \
	'[    0.700000] Kernel panic - not syncing: Fatal exception in interrupt' >other.log
fresh 7
echo noise >mode
rm -f noised
conf st-noise1 "BISECT_FLAKY = 1" "BISECT_CONFIDENCE = 90" >noise1.conf
run_ktest noise1.conf
check "one unrelated failure on c3: BISECT_FLAKY takes c3 for the culprit, and its verification fails (exit $rc)" \
	sh -c "[ $rc -ne 0 ] && grep -q '^3 noise' $T/boots &&
		grep -q '${c3%"${c3#????????????}"} looked like the first bad commit, but the verification failed' $T/st-noise1.log"
fresh 7
rm -f noised
conf st-noise2 "BISECT_FLAKY = 1" "BISECT_CONFIDENCE = 90" \
	"BISECT_FLAKY_FAILURES = 2" >noise2.conf
run_ktest noise2.conf
expect_rc 0 "BISECT_FLAKY_FAILURES = 2: the bisect ends ($(wc -l <boots) boots)"
check "it names c5 ($(name "$(culprit st-noise2)"))" test "$(culprit st-noise2)" = "$c5"
check "c3 failed once and got more runs" \
	sh -c "grep -q '^3 noise' $T/boots && grep -q 'too few failures to fail it' $T/out"
check "and it passed (${c3%"${c3#????????????}"})" \
	grep -q "^${c3%"${c3#????????????}"} passes: " out

# 3c. the same panic of the box's own on c3, with BISECT_SAME_CRASH: its
# title is not the bad commit's, so that run counts neither way, c3 runs
# again and passes, and c5 is named with one failure making a commit bad;
# BISECT_CRASH_TITLE naming the bug does the same, and one that names no
# crash of this box finds no failure on the bad commit
for how in same title; do
	fresh 7
	rm -f noised
	if [ $how = same ]; then opt="BISECT_SAME_CRASH = 1"; else opt="BISECT_CRASH_TITLE = ^kernel panic: the bug$"; fi
	conf st-crash-$how "BISECT_FLAKY = 1" "BISECT_CONFIDENCE = 90" "$opt" >crash-$how.conf
	run_ktest crash-$how.conf
	expect_rc 0 "$opt: the bisect ends ($(wc -l <boots) boots)"
	check "$opt: it names c5 ($(name "$(culprit st-crash-$how)")), though c3 panicked once" \
		sh -c "test '$(culprit st-crash-$how)' = '$c5' && grep -q '^3 noise' $T/boots"
	check "$opt: c3's panic counted neither way, and c3 passed" \
		sh -c "grep -q '^${c3%"${c3#????????????}"}: failed with \"kernel panic: Fatal exception in interrupt\", not the failure bisected' out &&
			grep -q '^${c3%"${c3#????????????}"} passes: [0-9]* runs, 0 failed, [0-9]* passed, 1 failed otherwise' out"
done
check "BISECT_SAME_CRASH names the failure from the bad commit's first failing run" \
	grep -q "^The failure bisected (BISECT_SAME_CRASH): \"kernel panic: the bug\", as ${c12%"${c12#????????????}"} showed it" st-crash-same.log
check "the report has c3's runs as they ended: one crash_title of the other panic" \
	test "$(jq '[.tests[0].steps[] | select(.crash_title == "kernel panic: Fatal exception in interrupt")] | length' st-crash-same/report.json)" = 1
fresh 7
rm -f noised
conf st-crash-none "BISECT_FLAKY = 1" "BISECT_CRASH_TITLE = ^KASAN:" >crash-none.conf
run_ktest crash-none.conf
check "BISECT_CRASH_TITLE naming no crash of the box: the bad commit does not fail, the test fails (exit $rc)" \
	sh -c "[ $rc -ne 0 ] && grep -q 'BISECT_BAD .* tested good' out &&
		grep -q 'failed with \"kernel panic: the bug\", not the failure bisected (BISECT_CRASH_TITLE ^KASAN:)' out"
rm -f mode noised

# 3d. a good verdict that was wrong: c5 passes all its boots until an
# answer is verified, then fails (as a failure can hide in a streak of
# passes). The bisect takes c6 for the answer; the verification runs its
# parent c5, which fails; the bisect goes on with c5 bad and names c5,
# verified. Killed after that turn, a rerun ends the same way.
short() { echo "${1%"${1#????????????}"}"; }
fresh 7
echo lucky >mode
conf st-lucky "BISECT_FLAKY = 1" "BISECT_CONFIDENCE = 90" >lucky.conf
run_ktest lucky.conf
expect_rc 0 "a wrong good verdict on c5: the bisect ends ($(wc -l <boots) boots)"
check "the verification of c6 found its parent c5 failing" \
	grep -q "^$(short "$c6") looked like the first bad commit, but the verification failed: its parent $(short "$c5") fails too. $(short "$c5") has the failure, so its verdict in the bisect was wrong: bisecting on with it bad$" out
check "the bisect went on and names c5 ($(name "$(culprit st-lucky)")), verified" \
	sh -c "test '$(culprit st-lucky)' = '$c5' &&
		grep -q '^Verified: the parents pass and $(short "$c5") fails' out"
check "c5 passed in the bisect before it failed" \
	grep -q "^$(short "$c5") passes: " out
# the confidence has c5's good verdict no more: the verdicts alone are the
# product over the goods left, 1 - (1 - p)^n each (no runs failed), from
# the "passes: n runs" lines outside the verification, c5's left out,
# with p the rate counted as printed (to 1%, hence the slack)
alone=$(sed -n "s/^  (the bisect's verdicts alone: \([0-9.]*\)%.*/\1/p" out)
goods_left() {
	awk -v c5="$(short "$c5")" -v a="$alone" '
		/^Verifying: / { v = 1 }
		/bisecting on with it bad$/ { v = 0 }
		/^Confidence / { sub(/.*\(/, ""); p = ($1 + 0) / 100 }
		!v && / passes: [0-9]+ runs, 0 failed/ && $1 != c5 { n[++k] = $3 }
		END {
			prod = 1
			for (i = 1; i <= k; i++)
				prod *= 1 - (1 - p) ^ n[i]
			printf "%.1f%% from %d goods at %.2f\n", 100 * prod, k, p
			d = 100 * prod - a
			exit !(a != "" && k >= 1 && p > 0 && d < 1.5 && d > -1.5)
		}' out
}
# and the rate has c5's passed runs, as a failing commit's: the failing
# runs over all runs of the commits with a failing run, from report.json
rate_runs=$(jq -r '[.tests[0].steps | group_by(.commit)[] | select(any(.verdict == "BAD")) |
	{b: (map(select(.verdict == "BAD")) | length), n: length}] |
	"\(map(.b) | add) \(map(.n) | add)"' st-lucky/report.json)
shown=$(sed -n 's/^Confidence .*: the failure showed in \([0-9]*\)% of the runs.*/\1/p' out)
check "the rate counts c5's passed runs: $shown% printed, ${rate_runs% *} of ${rate_runs#* } runs in report.json" \
	awk -v r="$rate_runs" -v s="$shown" 'BEGIN { split(r, w, " ");
		d = 100 * w[1] / w[2] - s; exit !(s != "" && w[2] > 0 && d <= 0.5 && d >= -0.5) }'
goods_ok() { goods_left >/dev/null; }
check "and the confidence counts the goods left: $alone% for the verdicts alone, $(goods_left)" \
	goods_ok
check "the bisect log names c5 the bad commit" \
	grep -q "^# first bad commit: \[$c5\]" st-lucky/bisect-1.log
# killed once the bisect went on after the turn, the rerun from the journal
fresh 7
"$KTEST" lucky.conf >"$T/out" 2>"$T/err" </dev/null &
kpid=$!
i=0
until grep -q 'bisecting on with it bad' "$T/out" 2>/dev/null || [ $i -ge 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -9 "$kpid" 2>/dev/null
wait "$kpid" 2>/dev/null
killed=$(wc -l <boots)
run_ktest lucky.conf
check "killed after the turn ($killed boots), the rerun names c5 too (exit $rc)" \
	test "$(culprit st-lucky)" = "$c5"
check "and took the runs before the kill from the journal ($(($(wc -l <boots) - killed)) boots in the rerun, none of c12)" \
	sh -c "grep -q 'in the earlier run (from the journal)' out &&
		grep -q 'bisecting on with it bad' out &&
		! tail -n +$((killed + 1)) boots | grep -q '^12 '"

# 3e. the same in a reverse bisect (c0 broken, c12 fixed, c7 the fix): c6
# passes until an answer is verified, so it is taken for the fix; the
# verification finds it failing again, and the bisect goes on with c6 not
# fixed yet: c7 is named
fresh 7
echo fixlucky >mode
conf st-fixlucky "BISECT_FLAKY = 1" "BISECT_CONFIDENCE = 90" "BISECT_REVERSE = 1" >fixlucky.conf
run_ktest fixlucky.conf
expect_rc 0 "BISECT_REVERSE, a wrong verdict on c6: the bisect ends ($(wc -l <boots) boots)"
check "the verification found c6 failing again, and the bisect went on with it good (not fixed yet)" \
	grep -q "^$(short "$c6") looked like the first good (fixing) commit, but the verification failed: it fails this time. $(short "$c6") has the failure, so its verdict in the bisect was wrong: bisecting on with it good (not fixed yet)$" out
check "c7 is named, verified ($(name "$(culprit st-fixlucky)"))" \
	sh -c "test '$(culprit st-fixlucky)' = '$c7' &&
		grep -q '^Verified: the parents fail and $(short "$c7") passes$' out"
rm -f mode

# 4. killed in the middle of a flaky bisect, the rerun ends the same way
fresh 7
conf st-kill "BISECT_FLAKY = 1" "BISECT_CONFIDENCE = 90" >kill.conf
kill_after_boots kill.conf 15
before=$(wc -l <boots)
run_ktest kill.conf
check "killed after $before boots, the rerun names c5 too (exit $rc)" \
	test "$(culprit st-kill)" = "$c5"
check "and the finished runs came from the journal" \
	grep -q 'in the earlier run (from the journal)' out

# 5. ktest.pl's BISECT_TRIES: 3 boots per commit, the first failure decides;
# a commit that passed and then failed turns the flaky rule on
fresh 7
conf st-tries "BISECT_TRIES = 3" >tries.conf
run_ktest tries.conf
first=$(grep -E '^[0-9a-f]{12} (passes|fails): ' out | head -n 1)
check "BISECT_TRIES = 3: a commit passes after 3 clean boots or fails at its first failure ($first)" \
	sh -c "echo '$first' | grep -Eq 'passes: 3 runs, 0 failed|fails: [1-3] runs, 1 failed'"
check "a commit that passed, then failed, turns the flaky rule on" \
	grep -q 'both passed and failed: the failure is flaky' out

# 6. RATE 100: a failure that always shows costs the flaky bisect little
conf st-solid "BISECT_FLAKY = 1" >solid.conf
fresh 7
echo 100 >rate
run_ktest solid.conf
rm -f rate
check "a failure that always shows: c5, verified (exit $rc, $(wc -l <boots) boots)" \
	sh -c "test '$(culprit st-solid)' = '$c5' && grep -q 'Verified' out"
check "with a confidence of 95% or more" \
	sh -c "grep '^Confidence ' out | grep -Eq '^Confidence (9[5-9]|100)\\.'"

# 7. a verified culprit whose image is its parent's is not named: c3 adds
# a file the build does not use, and the "failure" comes with that file
src2=$T/src2
mkdir -p "$src2"
cp "$src/Makefile" "$src2/"
echo 0 >"$src2/version"
git -C "$src2" init -q
git -C "$src2" add Makefile version
git -C "$src2" commit -q -m "d0"
for n in 1 2 3 4 5; do
	case $n in
	3) echo x >"$src2/marker"; git -C "$src2" add marker ;;
	*) echo "$n" >"$src2/version"; git -C "$src2" add version ;;
	esac
	git -C "$src2" commit -q -m "d$n"
	eval "d$n=\$(git -C "$src2" rev-parse HEAD)"
done
d0=$(git -C "$src2" rev-list --max-parents=0 HEAD)
conf st-same "BISECT_VERIFY = 1" |
	sed -e "s|^BUILD_DIR = .*|BUILD_DIR = $src2|" \
	    -e "s|^BISECT_GOOD = .*|BISECT_GOOD = $d0|" \
	    -e "s|^BISECT_BAD = .*|BISECT_BAD = $d5|" >same.conf
fresh 7
echo marker >mode
run_ktest same.conf
rm -f mode
expect_rc 1 "a culprit whose built image is its parent's: the bisect fails"
check "saying d3's image is identical to its parent's, so it cannot be the cause" \
	grep -q "bisect: ${d3%"${d3#????????????}"} looked like the first bad commit, but its built image is identical to its parent ${d2%"${d2#????????????}"}'s" out
check "builds were made reproducible for the comparison" \
	grep -q 'KBUILD_BUILD_TIMESTAMP' st-same.log

# 8. BISECT_VERIFY_REVERT: BISECT_BAD with the culprit reverted must pass.
# e3 adds the built-in bug; the others add files of their own
src3=$T/src3
mkdir -p "$src3"
sed 's|cat version >|cat version $$(ls bug 2>/dev/null) >|' "$src/Makefile" >"$src3/Makefile"
echo 0 >"$src3/version"
git -C "$src3" init -q
git -C "$src3" add Makefile version
git -C "$src3" commit -q -m "e0"
for n in 1 2 3 4 5; do
	if [ $n = 3 ]; then echo BUG >"$src3/bug"; git -C "$src3" add bug
	else echo "$n" >"$src3/f$n"; git -C "$src3" add "f$n"; fi
	git -C "$src3" commit -q -m "e$n"
	eval "e$n=\$(git -C "$src3" rev-parse HEAD)"
done
e0=$(git -C "$src3" rev-list --max-parents=0 HEAD)
conf st-revert "BISECT_VERIFY = 1" "BISECT_VERIFY_REVERT = 1" |
	sed -e "s|^BUILD_DIR = .*|BUILD_DIR = $src3|" \
	    -e "s|^BISECT_GOOD = .*|BISECT_GOOD = $e0|" \
	    -e "s|^BISECT_BAD = .*|BISECT_BAD = $e5|" >revert.conf
fresh 7
echo bug >mode
run_ktest revert.conf
expect_rc 0 "BISECT_VERIFY_REVERT: e3 is named"
check "after e5 with e3 reverted on top passed" \
	grep -q "Verified: the parents pass and ${e3%"${e3#????????????}"} fails; BISECT_BAD passes with it reverted" out
check "the tree is back at e5 with nothing left over" \
	sh -c "test -z \"\$(git -C $src3 status --porcelain)\" && test \"\$(git -C $src3 rev-parse HEAD)\" = $e5"
# 9. BISECT_SPECULATE: the next commits are built while the box boots;
# the same steps, verdicts and answer as without. A boot bisect with one
# run a commit builds them in place once the box has the kernel (its
# POWER_CYCLE read the image), and the side build beside it; with
# BISECT_TRIES, in a work tree of its own
steps_of() { jq -c '[.tests[0].steps[] | [.commit, .verdict]]' "$1/report.json"; }
# spec_pair TAG EXTRA...: the bisect without and with BISECT_SPECULATE
# (st-nospecTAG, st-specTAG), c5 failing every boot: the same answer and
# the same steps
spec_pair() {
	tag=$1
	shift
	echo 100 >rate
	fresh 7
	conf "st-nospec$tag" "$@" >"nospec$tag.conf"
	run_ktest "nospec$tag.conf"
	fresh 7
	conf "st-spec$tag" "$@" "BISECT_SPECULATE = 1" >"spec$tag.conf"
	head_before=$(git -C "$src" rev-parse HEAD)
	run_ktest "spec$tag.conf"
	rm -f rate
	check "BISECT_SPECULATE${1:+ with $*}: c5, as without it (exit $rc)" \
		test "$(culprit "st-spec$tag")" = "$c5" -a "$(culprit "st-nospec$tag")" = "$c5"
	check "with the same steps and verdicts" \
		test "$(steps_of "st-spec$tag")" = "$(steps_of "st-nospec$tag")"
}
rm -f mode
# policy.sh, MAKE_CMD: notes each make's scheduling policy and output dir
cat >policy.sh <<'POLICY'
echo "$(chrt -p $$ | sed -n 's/.*policy: //p') $(ionice -p $$ | cut -d: -f1) $*" >>"$POLICIES"
exec make "$@"
POLICY
export POLICIES="$T/policies"
rm -f policies
spec_pair "" "MAKE_CMD = sh $T/policy.sh"
check "the next commits were built in the background, in place" \
	grep -q '^Speculating: building [0-9a-f]\{12\}.* in BUILD_DIR and OUTPUT_DIR (the box has the kernel)' out
check "and later steps took their build from the cache ($(grep -c 'taken from the build cache' out) of them)" \
	grep -q 'taken from the build cache' out
check "BUILD_DIR is back where it was ($(name "$head_before")), clean" \
	sh -c "test -z \"\$(git -C $src status --porcelain)\" && test \"\$(git -C $src rev-parse HEAD)\" = $head_before"
# the side build (BISECT_SPECULATE_SIDE, on unless 0): from the start of
# each step's build, bad's next, in a work tree of its own at SCHED_IDLE
check "the side build built in its own work tree ($(grep -c ': built ' st-spec/spec-side.log 2>/dev/null) builds)" \
	sh -c "grep -q '^Speculating: building [0-9a-f]\{12\} in the background, in its own work tree at idle priority' out &&
		git -C $src worktree list | grep -q '^$T/st-spec/spec-src ' && grep -q ': built ' st-spec/spec-side.log"
# side_used STATE: the first step of out whose build, from the cache, the
# side made
side_used() {
	awk '/taken from the build cache/ { print $2 }' out | tr -d : |
		while read -r id; do
			grep -q "^spec: $id[0-9a-f]*: built" "$1/spec-side.log" && echo "$id"
		done | head -n 1
}
used=$(side_used st-spec)
check "a step took the side's build from the cache (${used:-none})" test -n "$used"
check "its makes ran at SCHED_IDLE in the I/O idle class, the step's own and the in-place ones not ($(sort policies | uniq -c | tr -s ' \n' ' '))" \
	sh -c "grep -q '^SCHED_IDLE idle .*spec-out' policies && ! grep -v 'spec-out' policies | grep -q idle &&
		! grep 'spec-out' policies | grep -qv '^SCHED_IDLE idle '"
# a side build slower than the steps (its builds take 2 s more): the one
# started at a success line, the bad next of the good next, goes on
# through that good next's step (it is that step's bad next), and serves
# the step after it, built once
cat >idleslow.sh <<'IDLESLOW'
case " $* " in
*config*|*kernelrelease*|*mrproper*) ;;
*) chrt -p $$ | grep -q SCHED_IDLE && sleep 2 ;;
esac
exec make "$@"
IDLESLOW
spec_pair slow "MAKE_CMD = sh $T/idleslow.sh"
side_starts() { sed -n 's/^Speculating: building \([0-9a-f]*\) .* at idle priority .*/\1/p' out; }
starts=$(side_starts | tr '\n' ' ')
dups=$(side_starts | sort | uniq -d)
check "the slow side build was started once for each commit ($starts)" \
	test -n "$starts" -a -z "$dups"
used=$(side_used st-specslow)
check "and a step took its build from the cache (${used:-none})" test -n "$used"
spec_pair 0 "BISECT_SPECULATE_SIDE = 0"
check "BISECT_SPECULATE_SIDE = 0: no work tree was made" \
	sh -c "test ! -e st-spec0/spec-src && ! grep -q 'at idle priority' out"
# when builds ahead start, in place: at SUCCESS_LINE while boots are
# short against builds (here, the kernel prints its login line at once),
# and at the kernel's first line once a boot took as long from there to
# its login line as a build (here the box waits 1 s after its banner;
# the fake builds take milliseconds). Without the side build: with it,
# the steps after the first take their builds from the cache, and the
# build time the rule compares with stays the first step's
# before_spec: the line before each in-place "Speculating" line of out;
# spec_at LINE [FROM]: there are such lines (from the FROMth on), all LINE
before_spec() { grep -B1 '^Speculating.*in BUILD_DIR' out | grep -v '^Speculating' | grep -v '^--'; }
spec_at() {
	before_spec | tail -n +"${2:-1}" >spec-at
	test -s spec-at && ! grep -qv "$1" spec-at
}
check "short boots: every build ahead starts at the login line ($(before_spec | sort | uniq -c | tr -s ' \n' ' '))" \
	spec_at '^box login:$'
check "and only the commit that comes next if the boot is good is built" \
	sh -c "! grep -q '^Speculating: building [0-9a-f]* and ' out"
# slowboot.sh: a test boot loads the image, prints its banner and goes on
# in a session of its own (the power cycle command has returned, so its
# lines come as they are printed): 1 s later, boot.sh on what was loaded
cat >slowboot.sh <<SLOWBOOT
if [ "\$(cat $T/next 2>/dev/null)" = test ]; then
	cp $T/build-out/arch/x86/boot/bzImage $T/loaded
	head -n 1 $T/good.log >>$T/console.log
	rm -f $T/away
	setsid sh -c 'touch $T/away; sleep 1; sh $T/loadedboot.sh' </dev/null >/dev/null 2>&1 &
	while [ ! -e $T/away ]; do sleep 0.01; done
else
	exec sh $T/boot.sh
fi
SLOWBOOT
sed "s|$T/build-out/arch/x86/boot/bzImage|$T/loaded|g" boot.sh >loadedboot.sh
echo 100 >rate
fresh 7
conf st-slowboot "BISECT_SPECULATE = 1" "BISECT_SPECULATE_SIDE = 0" |
	sed "s|^POWER_CYCLE = .*|POWER_CYCLE = sh $T/slowboot.sh|" >slowboot.conf
run_ktest slowboot.conf
rm -f rate
check "a 1 s boot: c5, as without BISECT_SPECULATE (exit $rc)" \
	test "$(culprit st-slowboot)" = "$c5" -a "$(steps_of st-slowboot)" = "$(steps_of st-nospec)"
check "the first build ahead starts at the login line (no boot measured yet)" \
	test "$(before_spec | head -n 1)" = "box login:"
check "later ones at the kernel's first line ($(before_spec | grep -c 'Linux version') of $(grep -c '^Speculating.*in BUILD_DIR' out))" \
	spec_at 'Linux version' 2

spec_pair 2 "BISECT_TRIES = 2"
check "built in a work tree of its own" \
	sh -c "grep -q '^Speculating: building [0-9a-f]\{12\}.* in the background (' out && ! grep -q 'in BUILD_DIR and OUTPUT_DIR' out"
check "and took later builds from the cache" grep -q 'taken from the build cache' out
check "no speculative build is left running" \
	sh -c "! pgrep -f '$T/st-spec2/spec-ou[t]' >/dev/null"
# the work tree stays for the next bisect, whose builds there are then
# incremental: its files unchanged between the commits keep their inode
# and time (kbuild goes by the time), as a work tree added again would not
wt_file() { stat -c '%i %y' st-spec2/spec-src/Makefile 2>/dev/null; }
wt_before=$(wt_file)
check "its work tree stays at the end ($wt_before)" \
	sh -c "test -n '$wt_before' && git -C $src worktree list | grep -q '^$T/st-spec2/spec-src '"
echo 100 >rate
fresh 7
rm -rf st-spec2/build-cache	# or every build would come from there
run_ktest spec2.conf
rm -f rate
check "the next bisect (exit $rc) names c5 again" test "$(culprit st-spec2)" = "$c5"
check "and builds ahead in the same work tree: Makefile untouched ($(wt_file))" \
	sh -c "grep -q '^Speculating: building [0-9a-f]\{12\}.* in the background (' out && test '$(wt_file)' = '$wt_before'"
check "which is still one worktree of BUILD_DIR" \
	test "$(git -C "$src" worktree list | grep -c "^$T/st-spec2/spec-src ")" = 1
# BUILD_DIR now another repository (a clone), STATE_DIR the same: the work
# tree of the first is made again for the second, and builds ahead there
rm -rf "$T/src-clone"
git clone -q "$src" "$T/src-clone"
sed "s|^BUILD_DIR = .*|BUILD_DIR = $T/src-clone|" spec2.conf >spec2-clone.conf
echo 100 >rate
fresh 7
rm -rf st-spec2/build-cache
run_ktest spec2-clone.conf
rm -f rate
check "BUILD_DIR changed: c5 again (exit $rc)" test "$(culprit st-spec2)" = "$c5"
check "the kept work tree, of the other repository, is made again, and builds ahead" \
	sh -c "grep -q '^BISECT_SPECULATE: $T/st-spec2/spec-src was a work tree of another repository (BUILD_DIR changed since): it is added again' out &&
		grep -q '^Speculating: building [0-9a-f]\{12\}.* in the background (' out &&
		test \"\$(git -C $T/st-spec2/spec-src rev-parse --git-common-dir)\" = $T/src-clone/.git"

# ktest killed (SIGKILL) while it builds ahead in place: the make stops too
# (the child's PDEATHSIG), so nothing writes to BUILD_DIR or OUTPUT_DIR
# behind the rerun's back. After the first power cycle, the builds of the
# child (a ktest whose parent is ktest: ktest, ktest, sh -c, this script)
# are slow.
cat >slowmake.sh <<SLOW
up() { ps -o ppid= -p "\$1" | tr -d ' '; }
k=\$(up \$PPID)
case " \$* " in
*config*|*kernelrelease*|*mrproper*) ;;
*) [ -e $T/slow ] && [ "\$(ps -o comm= -p "\$(up "\$k")")" = ktest ] &&
	sleep 37 ;;
esac
exec make "\$@"
SLOW
rm -f slow
fresh 7
echo 100 >rate
conf st-slow "BISECT_SPECULATE = 1" "MAKE_CMD = sh $T/slowmake.sh" |
	sed "s|^POWER_CYCLE = .*|POWER_CYCLE = sh -c 'touch $T/slow; sh $T/boot.sh'|" >slow.conf
"$KTEST" slow.conf >slow.out 2>&1 </dev/null &
kpid=$!
n=0
while [ $n -lt 100 ] && ! grep -q '^Speculating.*in BUILD_DIR' slow.out; do sleep 0.1; n=$((n + 1)); done
n=0
while [ $n -lt 50 ] && ! pgrep -f 'sleep 3[7]' >/dev/null; do sleep 0.1; n=$((n + 1)); done
check "a build ahead is running (sleep 37 in its make)" \
	sh -c "pgrep -f 'sleep 3[7]' >/dev/null"
kill -9 "$kpid"
wait "$kpid" 2>/dev/null
n=0
while [ $n -lt 60 ] && pgrep -f 'sleep 3[7]' >/dev/null; do sleep 0.1; n=$((n + 1)); done
check "killed with ktest: no make of it is left after 6 s" \
	sh -c "! pgrep -f 'sleep 3[7]' >/dev/null"

# A step retried (INFRA) after its kernel booted, with a build ahead
# running in place: the retry stops it before it checks out. The first
# test boot shows its login line, which starts the build ahead, and then
# MAX_MONITOR_WAIT ends it inside BOOTED_TIMEOUT's quiet time (INFRA); the
# second test boot notes whether a build ahead is still running.
cat >hangfirst.sh <<HANG
if [ "\$(cat $T/next 2>/dev/null)" = test ]; then
	n=\$(( \$(cat $T/cycles 2>/dev/null || echo 0) + 1 ))
	echo \$n >$T/cycles
	if [ \$n -eq 1 ]; then
		rm -f $T/next
		touch $T/slow
		cat $T/good.log >>$T/console.log
		exit 0
	fi
	pgrep -f 'sleep 3[7]' >/dev/null && echo overlap >$T/overlap
fi
exec sh $T/boot.sh
HANG
rm -f slow cycles overlap
fresh 7
echo 100 >rate
conf st-retry "BISECT_SPECULATE = 1" "MAKE_CMD = sh $T/slowmake.sh" \
	"BISECT_SPECULATE_SIDE = 0" \
	"MAX_MONITOR_WAIT = 2" "TIMEOUT = 30" "BOOTED_TIMEOUT = 30" |
	sed "s|^POWER_CYCLE = .*|POWER_CYCLE = sh $T/hangfirst.sh|" >retry.conf
"$KTEST" retry.conf >retry.out 2>&1 </dev/null &
kpid=$!
n=0
while [ $n -lt 200 ] && [ "$(cat cycles 2>/dev/null || echo 0)" -lt 2 ]; do
	sleep 0.1
	n=$((n + 1))
done
kill -9 "$kpid"
wait "$kpid" 2>/dev/null
check "the first boot was INFRA and retried, with a build ahead started" \
	sh -c "grep -q 'trying .* again' retry.out && grep -q '^Speculating' retry.out"
check "the retry's boot came (test boots: $(cat cycles 2>/dev/null))" \
	test "$(cat cycles 2>/dev/null || echo 0)" -ge 2
check "the build ahead was stopped before the retry" test ! -e overlap
n=0
while [ $n -lt 60 ] && pgrep -f 'sleep 3[7]' >/dev/null; do sleep 0.1; n=$((n + 1)); done
rm -f rate slow cycles

# a revert that conflicts is not tested: the plain repo, c5 reverted on c12
conf st-conflict "BISECT_VERIFY = 1" "BISECT_VERIFY_REVERT = 1" >conflict.conf
fresh 7
echo 100 >rate
rm -f mode
run_ktest conflict.conf
rm -f rate
expect_rc 0 "a revert that conflicts: c5 is still named (exit $rc)"
check "saying the revert could not be tested" \
	grep -q "reverting ${c5%"${c5#????????????}"} on ${c12%"${c12#????????????}"} conflicts" out
finish
