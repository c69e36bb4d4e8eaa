#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# MAKE_CMD of both tools in bench/bench_ktestpl.sh: the lab's ccache make
# (tests/lab/kernel.sh make), timed. Appends "T0 T1 RC ARGS" to LOG.
#
#   ktestpl-make.sh LOG [make arguments]
log=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
lab=${KTEST_LAB:-/var/tmp/ktest-lab}
m=$(sh "$here/../tests/lab/kernel.sh" make "$lab/e2e") || exit 2
t0=$(date +%s.%N)
eval "$m \"\$@\""
rc=$?
echo "$t0 $(date +%s.%N) $rc $*" >>"$log"
exit $rc
