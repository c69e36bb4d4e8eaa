#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# qemu-system-x86_64 for ktest's built-in qemu box in bench/bench_ktestpl.sh
# (first in its PATH): execs the real one (BENCH_REAL_QEMU; the pid ktest
# knows stays qemu's), with the serial line also logged (the chardev's
# logfile), and times the boot the way bench/ktestpl-box.sh times ktest.pl's:
# "start N T", "up N T" (BENCH_SUCCESS seen), "end N T" in BENCH_BOOTLOG.
log=$BENCH_BOOTLOG
n=$(grep -c '^start ' "$log" 2>/dev/null)
n=$((${n:-0} + 1))
cl=${log%/*}/console-$n.log
for a; do
	shift
	case $a in
	stdio,id=*) a="$a,logfile=$cl,logappend=on" ;;
	esac
	set -- "$@" "$a"
done
: >"$cl"
me=$$
(
	exec </dev/null >/dev/null 2>&1
	tail ---disable-inotify -s 0.1 -n +1 -F --pid="$me" "$cl" | {
		while IFS= read -r l; do
			case $l in
			*"$BENCH_SUCCESS"*)
				echo "up $n $(date +%s.%N)" >>"$log"
				break ;;
			esac
		done
		cat >/dev/null
	}
	echo "end $n $(date +%s.%N)" >>"$log"
) &
echo "start $n $(date +%s.%N) qemu" >>"$log"
exec "$BENCH_REAL_QEMU" "$@"
