#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Captures real console logs for tests/data/console: boots the lab kernel
# in the qemu box (tests/unit/test_qemu.c with KTEST_CAPTURE) and saves
# each boot's console as a case:
#
#   real-clean-boot            booted to the initramfs shell
#   real-panic                 init exits: "Attempted to kill init!"
#   real-oops                  a NULL pointer write (LKDTM EXCEPTION)
#   real-warning               a WARN_ON (LKDTM WARNING), then booted
#   real-hang                  silence before the success line
#   real-reboot-other-version  -ktest boots and reboots, -ktest2 comes up
#
# NAME.log is the console as the box's serial line gave it, NAME.conf sets
# SUCCESS_LINE to the initramfs's success line, NAME.expect is what
# `ktest monitor NAME.conf NAME.log` says about it now. Read the new
# .expect files (the script prints them) and check them against the logs
# before committing: they are the cases' truth from then on.
#
#   capture-logs.sh [DIR]   DIR defaults to tests/data/console
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:-$top/tests/data/console}
cd "$top"
make -s build/tests/test_qemu ktest/ktest

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktest-capture.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
if ! KTEST_CAPTURE=$tmp KTEST_SRC=$top build/tests/test_qemu >"$tmp/test.out" 2>&1; then
	tail -n 40 "$tmp/test.out" >&2
	echo "capture-logs.sh: test_qemu failed (output above)" >&2
	exit 1
fi

n=0
for log in "$tmp"/real-*.log; do
	[ -f "$log" ] || continue
	name=$(basename "$log" .log)
	cp "$log" "$dest/$name.log"
	cat >"$dest/$name.conf" <<'EOF'
# A real boot of the lab kernel in the qemu box (tests/lab/capture-logs.sh):
# the lab initramfs prints "ktest: booted <release>" when it is up.
SUCCESS_LINE = ktest: booted
EOF
	rc=0
	ktest/ktest monitor "$dest/$name.conf" "$dest/$name.log" \
		>"$dest/$name.expect" || rc=$?
	[ "$rc" -le 1 ] || {
		echo "capture-logs.sh: ktest monitor failed on $dest/$name.log" >&2
		exit 1
	}
	echo "== $name ($(wc -l <"$dest/$name.log") lines)"
	cat "$dest/$name.expect"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || {
	echo "capture-logs.sh: test_qemu saved no logs" >&2
	exit 1
}
echo "capture-logs.sh: $n cases in $dest"
