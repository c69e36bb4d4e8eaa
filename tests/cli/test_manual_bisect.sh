#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# BISECT_MANUAL in a git bisect (ktest.pl's "Pass, fail, or skip? [p/f/s]"
# after each run): a real git repo with a fake kbuild and a box made of
# commands that panics from c8 on; the "user" answers from another process,
# saying fail from c5 on, so the answer is c5, not the box's c8. The
# answers are journalled: a run whose input ends in the middle stops, and
# the rerun asks only what was not answered. BISECT_REVERSE turns the
# answers round as it does runs; BISECT_TRIES = 0 asks about each commit
# checked out, without building or booting it.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
src=$T/src
rm -rf "$src" st-* build-out tmp ./*.conf console.log next boots answers.fifo \
	out1
. "$KTEST_SRC/tests/cli/series.inc"
make_series "$src" 12

series_boot_head >boot.sh
cat >>boot.sh <<EOF
n=\$(cat $T/build-out/arch/x86/boot/bzImage)
echo "\$n" >> $T/boots
if [ "\$n" -ge 8 ]; then cat $T/panic.log; else cat $T/good.log; fi >> $T/console.log
EOF

# user MAX: answers each question as it comes in out, from the commit the
# line before it names ($ask_line: that line's text): $late (f) from c5 on,
# $early (p) before, MAX answers at most, then ends its input. A question
# answered from the journal is not asked. With $by_hand set, a commit that
# BUILD_DIR does not hold when it is asked about gets s.
ask_line=': the run says '
by_hand=
early=p late=f
user() {
	k=0 sent=0
	while [ "$sent" -lt "$1" ]; do
		i=0
		while :; do	# the line after the next question's commit line
			next=$(awk -v k=$((k + 1)) -v pat="$ask_line" '
				want { print; exit }
				index($0, pat) && ++n == k { want = 1 }' out 2>/dev/null)
			[ -n "$next" ] && break
			[ $i -lt 300 ] || return
			sleep 0.1
			i=$((i + 1))
		done
		k=$((k + 1))
		case $next in *'from the journal'*) continue ;; esac
		id=$(grep "$ask_line" out | sed -n "${k}p" | sed 's/[: ].*//')
		n=$(name "$(g rev-parse "$id")")
		if [ -n "$by_hand" ] && [ "$(cat "$src/version")" != "${n#c}" ]; then echo s
		elif [ "${n#c}" -ge 5 ]; then echo "$late"
		else echo "$early"; fi
		sent=$((sent + 1))
	done
}
# manual CONF MAX: ktest on CONF with the user's answers (MAX at most)
manual() {
	rm -f answers.fifo out
	mkfifo answers.fifo
	user "$2" >answers.fifo &
	upid=$!
	timeout 120 "$KTEST" "$1" <answers.fifo >out 2>err
	rc=$?
	kill "$upid" 2>/dev/null
	wait "$upid" 2>/dev/null
}

# 1. the user's answers decide, not the box
: >console.log
rm -f boots next
series_conf st-man "sh $T/boot.sh" "sh -c 'echo test > $T/next'" \
	"tail -n +1 -F $T/console.log" "$c12" "BISECT_MANUAL = 1" >man.conf
manual man.conf 20
expect_rc 0 "BISECT_MANUAL: the bisect ends"
check "the user's answers name c5, not the box's c8 ($(name "$(culprit st-man)"))" \
	test "$(culprit st-man)" = "$c5"
asked=$(grep -o 'Pass, fail, or skip? \[p/f/s\]' out | wc -l)
check "it asked after each of the $(wc -l <boots) runs ($asked times)" \
	test "$asked" -eq "$(wc -l <boots)"
check "saying first what the run showed" grep -q ': the run says pass$' out
check "the answers are in the journal" \
	test "$(grep -c 'ev=manual' st-man/journal)" -eq "$asked"

# 2. the input ends after 2 answers: ktest stops; the rerun asks the rest
: >console.log
rm -f boots next
series_conf st-cut "sh $T/boot.sh" "sh -c 'echo test > $T/next'" \
	"tail -n +1 -F $T/console.log" "$c12" "BISECT_MANUAL = 1" >cut.conf
manual cut.conf 2
cp out out1
check "no answer at the third run: ktest stops (exit $rc)" \
	sh -c "[ $rc -ne 0 ] && grep -q 'BISECT_MANUAL: no answer (end of input)' $T/out1"
ran=$(wc -l <boots)
rm -f boots
manual cut.conf 20
expect_rc 0 "the rerun ends"
check "it names c5 ($(name "$(culprit st-cut)"))" test "$(culprit st-cut)" = "$c5"
check "the 2 answers came from the journal" \
	test "$(grep -c '(BISECT_MANUAL, from the journal)' out)" -eq 2
said=$(grep -c 'the run says' out)
booted=$(cat boots 2>/dev/null | wc -l)
check "the first run's $ran runs were not run again ($said steps, $booted booted now)" \
	test "$booted" -eq $((said - ran))
check "the answers of both runs are in the journal, once each" \
	test "$(grep -c 'ev=manual' st-cut/journal)" -eq "$(grep -c 'the run says' out)"

# 3. BISECT_REVERSE: the first commit that passes; the answers are the
# runs' outcomes, turned round as the box's are
: >console.log
rm -f boots next
series_conf st-rev "sh $T/boot.sh" "sh -c 'echo test > $T/next'" \
	"tail -n +1 -F $T/console.log" "$c12" "BISECT_MANUAL = 1" \
	"BISECT_REVERSE = 1" >rev.conf
early=f late=p
manual rev.conf 20
early=p late=f
expect_rc 0 "BISECT_REVERSE: the bisect ends"
check "fail before c5, pass from c5: the first that passes is c5 ($(name "$(culprit st-rev)"))" \
	test "$(culprit st-rev)" = "$c5"

# 4. BISECT_TRIES = 0: ktest checks each commit out and asks; nothing is
# built or booted (ktest.pl asked the same way)
: >console.log
rm -rf boots next build-out
series_conf st-hand "sh $T/boot.sh" "sh -c 'echo test > $T/next'" \
	"tail -n +1 -F $T/console.log" "$c12" "BISECT_MANUAL = 1" \
	"BISECT_TRIES = 0" >hand.conf
ask_line=' is checked out in BUILD_DIR: test it'
by_hand=1
manual hand.conf 20
expect_rc 0 "BISECT_TRIES = 0: the bisect ends"
check "the user's answers name c5 ($(name "$(culprit st-hand)")), each asked with BUILD_DIR at its commit" \
	test "$(culprit st-hand)" = "$c5"
check "nothing was built or booted" sh -c "[ ! -e $T/boots ] && [ ! -e $T/build-out/arch ]"
check "it said so" grep -q 'BISECT_TRIES = 0: ktest checks each commit out and asks' out
# input that ends after 2 answers, then the rest: the rerun checks out
# again the commit it asks about
: >console.log
rm -rf boots next
series_conf st-hand2 "sh $T/boot.sh" "sh -c 'echo test > $T/next'" \
	"tail -n +1 -F $T/console.log" "$c12" "BISECT_MANUAL = 1" \
	"BISECT_TRIES = 0" >hand2.conf
manual hand2.conf 2
manual hand2.conf 20
expect_rc 0 "by hand, stopped after 2 answers: the rerun ends"
check "it names c5, asked with BUILD_DIR at each commit ($(name "$(culprit st-hand2)"))" \
	test "$(culprit st-hand2)" = "$c5"
ask_line=': the run says '
by_hand=
series_conf st-zero "sh $T/boot.sh" "sh -c 'echo test > $T/next'" \
	"tail -n +1 -F $T/console.log" "$c12" "BISECT_TRIES = 0" >zero.conf
run_ktest zero.conf
expect_rc 2 "BISECT_TRIES = 0 without BISECT_MANUAL: a config error"
check "saying what it needs" grep -q 'BISECT_TRIES = 0 runs nothing: it needs BISECT_MANUAL = 1' out

# 5. an answer that is not one: asked again
: >console.log
rm -f boots next
series_conf st-typo "sh $T/boot.sh" "sh -c 'echo test > $T/next'" \
	"tail -n +1 -F $T/console.log" "$c2" "BISECT_MANUAL = 1" >typo.conf
printf 'maybe\nfail\n' | timeout 60 "$KTEST" typo.conf >out 2>err
rc=$?
expect_rc 0 "a bisect of c0..c2 ends"
check "c1's 'maybe' was asked again, 'fail' taken: c1 is named" \
	sh -c "[ \$(grep -o 'Pass, fail, or skip' $T/out | wc -l) -eq 2 ] && [ \"\$(jq -r '.tests[0].first_bad_commit' $T/st-typo/report.json)\" = '$c1' ]"
check "saying what an answer is" grep -q 'Please answer p, f or s' out

finish
