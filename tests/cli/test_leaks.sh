#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A run leaks no descriptor into what it starts and leaves no process behind.
# ktest runs a boot on a box made of commands, with a descriptor of ours
# open (7). POWER_CYCLE and POST_KTEST list what they inherited (0-2 only:
# not our 7, not LOG_FILE, the journal or a pipe of ktest's) and what ktest
# holds open then (anything but 0-2 and what it inherited must be
# close-on-exec). They and the CONSOLE start a background sleep that does
# not hold their output: once the command is over it must be stopped.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
rm -rf state tmp log out fds.* ktestfds.* console.now
marker="ktest-leak-marker-$$"
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config
printf '[    0.000000] Linux version 6.1.0-t (t@t) #1\nbox login:\n' >bootlog

# hook.sh NAME: what this hook inherited, what ktest holds, a straggler
cat >hook.sh <<EOF2
#!/bin/sh
p=\$PPID
while [ "\$(cat /proc/\$p/comm)" != ktest ]; do
	p=\$(sed 's/.*) . //' /proc/\$p/stat | cut -d' ' -f1)
	[ "\$p" -gt 1 ] || break
done
ls /proc/self/fd >$T/fds.\$1
for f in /proc/\$p/fd/*; do
	n=\${f##*/}
	echo "\$n \$(sed -n 's/^flags:[[:space:]]*//p' /proc/\$p/fdinfo/\$n) \$(readlink \$f)"
done >$T/ktestfds.\$1
sh -c 'sleep 300; :' $marker-\$1 >/dev/null 2>&1 &
[ "\$1" = cycle ] && cp $T/bootlog $T/console.now
exit 0
EOF2

cat >box.conf <<EOF2
MACHINE = 127.0.0.1
BUILD_DIR = $T
OUTPUT_DIR = $T/out
TMP_DIR = $T/tmp
STATE_DIR = $T/state
LOG_FILE = $T/log
BUILD_TYPE = nobuild
NO_INSTALL = 1
SSH_CONFIG = $T/ssh_config
CONNECT_TIMEOUT = 1
REBOOT_TYPE = script
REBOOT_SCRIPT = true
POWER_CYCLE = sh $T/hook.sh cycle
CONSOLE = sh -c 'sh -c "sleep 300; :" $marker-console >/dev/null 2>&1 & while [ ! -s $T/console.now ]; do sleep 0.1; done; cat $T/console.now; exec sleep 60'
POST_KTEST = sh $T/hook.sh post
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
TIMEOUT = 10
TEST_START
TEST_TYPE = boot
EOF2

exec 7</dev/null
run_ktest box.conf
exec 7<&-
expect_rc 0 "a boot on a box of commands passes"

# not_cloexec FILE: ktest's descriptors above 2, but 7, without O_CLOEXEC
not_cloexec() {
	while read -r n flags what; do
		[ "$n" -gt 2 ] && [ "$n" -ne 7 ] || continue
		# fds the shell running this test had open are ktest's inheritance
		[ -e "/proc/$$/fd/$n" ] && continue
		[ $(( flags & 02000000 )) -ne 0 ] || printf '%s ' "$n=$what"
	done <"$1"
}
for h in cycle post; do
	if [ ! -s "fds.$h" ]; then
		not_ok "the $h hook ran and listed its descriptors"
		continue
	fi
	# the last, highest, is the directory ls read
	l=$(sort -n "fds.$h" | sed '$d' | awk '$1 > 2' | tr '\n' ' ')
	check "the $h hook inherits only 0, 1 and 2 (not: $l)" test -z "$l"
	l=$(not_cloexec "ktestfds.$h")
	check "ktest's descriptors are close-on-exec during $h (not: $l)" \
		test -z "$l"
done
check "ktest held LOG_FILE and the journal open during POWER_CYCLE" \
	sh -c "grep -q ' $T/log\$' ktestfds.cycle && grep -q ' $T/state/journal\$' ktestfds.cycle"

sleep 0.5
for h in cycle console post; do
	left=$(pgrep -f "$marker-$h" | tr '\n' ' ')
	check "nothing the $h command started in the background is left ($left)" \
		test -z "$left"
	[ -z "$left" ] || kill $left
done

finish
