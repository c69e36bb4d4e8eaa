#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A "qemu box" made of shell commands, for ktest.pl (bench/bench_ktestpl.sh):
# ktest.pl drives it through POWER_CYCLE, REBOOT, CONSOLE, SSH_EXEC and
# SWITCH_TO_GOOD/SWITCH_TO_TEST, as it would drive a real box.
#
#   ktestpl-box.sh DIR power-cycle   kill the box's qemu (DIR/qemu.pid), boot
#                                    the test kernel (DIR/test-kernel holds its
#                                    path) or, after "good", DIR/good-kernel
#   ktestpl-box.sh DIR console       the serial line: tail -F DIR/console.log
#   ktestpl-box.sh DIR good | test   the kernel the next power cycle boots
#   ktestpl-box.sh DIR ssh CMD...    the box's shell: nothing to do (exit 0)
#   ktestpl-box.sh DIR off           kill the box's qemu (and a console
#                                    ktest.pl left behind)
#
# Every power-on appends "start N T KERNEL" to DIR/boots.log, then "up N T"
# when the console shows DIR/success-line, and "end N T" when qemu exits
# (T: date +%s.%N), so the benchmark can sum the boot times.
set -u
dir=$1
what=$2

now() { date +%s.%N; }

off() {
	[ -s "$dir/qemu.pid" ] || return 0
	pid=$(cat "$dir/qemu.pid")
	rm -f "$dir/qemu.pid"
	kill "$pid" 2>/dev/null || return 0
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$pid" 2>/dev/null
	return 0
}

power_cycle() {
	off
	kernel=$(cat "$dir/test-kernel")
	if [ "$(cat "$dir/mode" 2>/dev/null)" = good ] && [ -s "$dir/good-kernel" ]; then
		kernel=$(cat "$dir/good-kernel")
	fi
	accel="-accel tcg"
	if [ -w /dev/kvm ] && grep -qE '\<(vmx|svm)\>' /proc/cpuinfo; then
		accel="-accel kvm -cpu host"
	fi
	n=$(grep -c "^start " "$dir/boots.log" 2>/dev/null)
	n=$((${n:-0} + 1))
	echo "start $n $(now) $kernel" >>"$dir/boots.log"
	line=$(cat "$dir/success-line")
	(
		exec </dev/null
		(
			# shellcheck disable=SC2086
			qemu-system-x86_64 -nodefaults -no-user-config \
				-display none -chardev stdio,id=s0,signal=off \
				-serial chardev:s0 -no-reboot $accel -m 256 -smp 1 \
				-kernel "$kernel" -initrd "$(cat "$dir/initrd")" \
				-append "console=ttyS0 panic=-1" 2>&1 &
			echo $! >"$dir/qemu.pid"
			wait $!
			echo "end $n $(now)" >>"$dir/boots.log"
		) | tee -a "$dir/console.log" | {
			# read by the shell, a line at a time (mawk would buffer)
			while IFS= read -r l; do
				case $l in
				*"$line"*)
					echo "up $n $(now)" >>"$dir/boots.log"
					break ;;
				esac
			done
			cat >/dev/null
		}
	) >/dev/null 2>&1 &
	# the pid file is there before ktest.pl's next command
	i=0
	while [ ! -s "$dir/qemu.pid" ] && [ $i -lt 50 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	return 0
}

case $what in
power-cycle) power_cycle ;;
console)
	# its pid, for "off" when ktest.pl was killed before it could stop it
	echo $$ >>"$dir/console.pid"
	touch "$dir/console.log"
	exec tail -n0 -F "$dir/console.log" ;;
good | test) echo "$what" >"$dir/mode" ;;
ssh) exit 0 ;;
off)
	off
	for pid in $(cat "$dir/console.pid" 2>/dev/null); do
		grep -q tail "/proc/$pid/cmdline" 2>/dev/null && kill "$pid"
	done
	rm -f "$dir/console.pid" ;;
*) echo "ktestpl-box.sh: unknown command '$what'" >&2; exit 1 ;;
esac
