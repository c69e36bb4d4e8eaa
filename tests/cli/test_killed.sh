#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# One run at a time on a state directory, and what a run killed with
# SIGKILL leaves behind: a build bisect on a real git repo (fake kbuild,
# tests/cli/series.inc) whose MAKE_CMD hangs while $T/slow exists.
#  1. a second run on the same STATE_DIR refuses (exit 3), naming the
#     first run's pid, and leaves the first one alone
#  2. the first run, killed with SIGKILL mid-make, leaves its make running
#     (nothing can stop it then); the next run stops that make before it
#     builds, says so, resumes and finishes
#  3. a note of the running directory whose pid is now another process's
#     is dropped, that process left alone
#  4. the first run, killed with SIGKILL in a checkout of BUILD_DIR, leaves
#     index.lock; the next run removes it, says so, resumes and finishes
#  5. a run on 2 boxes, killed with SIGKILL while it adds box b's work
#     tree, leaves it half made; the next run removes it, says so, adds it
#     again, resumes and finishes
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
src=$T/src
rm -rf "$src" st-* build-out tmp ./*.conf slow make.pid out* err* hold
. "$KTEST_SRC/tests/cli/series.inc"
make_series "$src" 6

# the make: hangs (one process, its pid in make.pid) while $T/slow exists
cat >slowmake.sh <<EOF
#!/bin/sh
if [ -e $T/slow ]; then
	echo \$\$ > $T/make.pid
	exec sleep 120
fi
exec make "\$@"
EOF
conf() {
	series_conf "$1" true true true "$c6" "MAKE_CMD = sh $T/slowmake.sh" |
		sed 's/^BISECT_TYPE = boot$/BISECT_TYPE = build/'
}
# (alive PID, from tests/lab/ports.sh: runs, a zombie does not)
# kill_when CONF FILE: ktest runs CONF (output in out, err) and is
# SIGKILLed as soon as FILE is there (a busy loop of the shell's builtins),
# or once it has ended; its pid in kpid
kill_when() {
	"$KTEST" "$1" >out 2>err </dev/null &
	kpid=$!
	n=0
	until [ -e "$2" ] || [ $n -ge 2000000 ] || ! kill -0 "$kpid" 2>/dev/null; do
		n=$((n + 1))
	done
	kill -9 "$kpid" 2>/dev/null
	wait "$kpid" 2>/dev/null
}
wait_file() {	# wait_file FILE: until it is there, 30 s at most
	i=0
	while [ ! -s "$1" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# 1. one run at a time
conf st-k >k.conf
touch slow
"$KTEST" k.conf >out1 2>err1 </dev/null &
kpid=$!
wait_file make.pid
mpid=$(cat make.pid)
check "the first run is in its make (pid $mpid)" alive "$mpid"
before=$(cksum <st-k/journal)
# (timeout: a second run that is not refused hangs in the make too)
timeout 30 "$KTEST" k.conf >out 2>err </dev/null
rc=$?
expect_rc 3 "a second run on the same STATE_DIR is refused"
check "it names the first run's pid" \
	grep -q "is in use by another ktest run (pid $kpid)" out
check "and says what to do" grep -q "give this run its own STATE_DIR" out
check "the first run goes on" alive "$kpid"
check "its make too" alive "$mpid"
check "the second run left the journal as it was" \
	test "$(cksum <st-k/journal)" = "$before"

# 2. killed with SIGKILL: its make is left; the next run stops it
kill -9 "$kpid"
wait "$kpid" 2>/dev/null
sleep 0.2
check "killed with SIGKILL, the run leaves its make running (pid $mpid)" \
	alive "$mpid"
check "and its note in STATE_DIR/running" test -n "$(ls st-k/running 2>/dev/null)"
rm -f slow
run_ktest k.conf
expect_rc 0 "the next run resumes and finishes"
check "it stopped the make the killed run left" \
	test -n "$mpid" -a -z "$(alive "$mpid" && echo runs)"
check "and said so, naming the command" \
	grep -q "a killed run left a command running (process group [0-9]*: sh $T/slowmake.sh" out
check "it resumed the killed run" grep -q "Resuming the unfinished run" out
check "it names c6 (a build bisect of good builds)" \
	test "$(culprit st-k)" = "$c6"
check "no note is left" test -z "$(ls st-k/running)"

# 3. a note whose pid is another process's now: left alone, dropped
sleep 120 &
other=$!
# a note's name: PGID-START-BOOTID; this start is not that process's
note=st-k/running/$other-1-$(cat /proc/sys/kernel/random/boot_id)
: >"$note"
run_ktest k.conf
expect_rc 0 "a run with a stale note runs"
check "the process with that pid now is left alone" alive "$other"
check "nothing was said of it" sh -c "! grep -q 'a killed run left' out"
check "the note is dropped" \
	sh -c "[ -d st-k/running ] && [ ! -e '$note' ]"
kill "$other"
wait "$other" 2>/dev/null

# 4. killed in a checkout of BUILD_DIR: c7 adds 12000 files, so a checkout
# of c7 or later writes an index of 12000 entries, and holds index.lock
# while it does (libgit2 takes it to write the index, at the checkout's
# end); the build bisect of c6..c10 first checks out c8 or c9; ktest is
# SIGKILLed as soon as index.lock appears (a busy loop of the shell's
# builtins), which leaves the lock; the next run removes it, says so, and
# resumes; a miss (the write over, or a later checkout's) tries again, 10
# times at most
g checkout -q -f "$c6"
i=0
while [ $i -lt 40 ]; do
	mkdir -p "$src/bulk/d$i"
	i=$((i + 1))
done
i=0
while [ $i -lt 12000 ]; do
	echo "$i" >"$src/bulk/d$((i % 40))/f$i.c"
	i=$((i + 1))
done
g add bulk
g commit -q -m "c7: 12000 files"
c7=$(g rev-parse HEAD)
for n in 8 9 10; do
	echo "$n" >"$src/version"
	g commit -q -a -m "c$n: change $n"
	eval "c$n=\$(g rev-parse HEAD)"
done
conf10() {
	series_conf "$1" true true true "$c10" "MAKE_CMD = sh $T/slowmake.sh" |
		sed "s/^BISECT_TYPE = boot\$/BISECT_TYPE = build/; s/^BISECT_GOOD = .*/BISECT_GOOD = $c6/"
}
conf10 st-co >co.conf
lock=$src/.git/index.lock
tries=0
while [ $tries -lt 10 ]; do
	rm -rf st-co "$lock" "$src"/.git/ktest-checkout-*
	g checkout -q -f "$c10"
	kill_when co.conf "$lock"
	tries=$((tries + 1))
	[ -e "$lock" ] && ! grep -q 'verdict=' st-co/journal && break
done
check "killed in its first checkout (try $tries), ktest leaves $lock" \
	sh -c "[ -e '$lock' ] && ! grep -q 'verdict=' st-co/journal"
run_ktest co.conf
expect_rc 0 "the next run resumes and finishes"
check "it removed the lock the killed checkout left, and said so" \
	grep -q "^ktest: removed index.lock left in $src/.git/ by a checkout of ktest (pid $kpid) that did not finish (killed)$" out
check "no lock or note of the checkout is left" \
	sh -c "[ ! -e '$lock' ] && ! ls '$src/.git' | grep -q '^ktest-checkout-'"
check "it names c10, as a run not killed does" \
	test "$(culprit st-co)" = "$c10"
check "the tree is back at c10, clean" \
	sh -c "[ \"\$(git -C '$src' rev-parse HEAD)\" = '$c10' ] && [ -z \"\$(git -C '$src' status --porcelain)\" ]"

# 5. killed while it adds a box's work tree: the same bisect on boxes a and
# b, whose makes (wtmake.sh) hold box a while $T/hold is there, until box
# b's first make takes it away: box a gives no verdict before box b builds.
# ktest adds box b's work tree at c7 or later (12000 files: a moment), and
# is SIGKILLed once the checkout has written files there (bulk/), before
# the add ends (its note, .git/ktest-adding-*, still there); a miss tries
# again, 10 times at most. The next run removes the half made tree and
# adds it again: without that, its checkout took the files for untracked
# ones in its way and box b failed on every run
cat >wtmake.sh <<EOF
#!/bin/sh
case "\$*" in
*O=$T/st-wt/box-b/out*)
	rm -f $T/hold ;;
*)
	i=0
	while [ -e $T/hold ] && [ \$i -lt 600 ]; do
		sleep 0.1
		i=\$((i + 1))
	done ;;
esac
exec make "\$@"
EOF
conf10 st-wt | sed "/^TEST_START\$/i BOXES = a b
s|^MAKE_CMD = .*|MAKE_CMD = sh $T/wtmake.sh|" >wt.conf
bt=$T/st-wt/box-b/src
adding() { set -- "$src"/.git/ktest-adding-*; [ -e "$1" ]; }
tries=0
while [ $tries -lt 10 ]; do
	rm -rf st-wt "$lock" "$src"/.git/ktest-*
	g worktree prune
	g checkout -q -f "$c10"
	touch hold
	kill_when wt.conf "$bt/bulk"
	tries=$((tries + 1))
	adding && break
done
check "killed in box b's add (try $tries), ktest leaves it half made" \
	sh -c "[ -d '$bt/bulk' ] && ls '$src/.git' | grep -q '^ktest-adding-'"
touch hold
run_ktest wt.conf
expect_rc 0 "the next run resumes and finishes"
check "it removed box b's half made work tree, and said so" \
	grep -q "Box b: $bt was left half made (ktest was killed while it added it): it is added again$" out
check "box b built there (its add went through)" \
	grep -q "^\[box b\] sh $T/wtmake.sh O=$T/st-wt/box-b/out " st-wt.log
check "no note of the add is left" \
	sh -c "! ls '$src/.git' | grep -q '^ktest-adding-'"
check "box b's work tree is clean" \
	sh -c "[ -z \"\$(git -C '$bt' status --porcelain)\" ]"
check "it names c10, as a run not killed does" \
	test "$(culprit st-wt)" = "$c10"

finish
