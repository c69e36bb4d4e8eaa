#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Distributed builds (doc/distributed-builds.md): a distccd on 127.0.0.1 (a
# free port, foreground, its log here, stopped by pid) and a ktest build test
# of the lab kernel with MAKE_CMD = make CC='distcc gcc'. To stay short the
# build is a dozen small objects of lib/ (the lab tree, tinyconfig and the
# lab fragment, a fresh OUTPUT_DIR here); HOSTCC
# goes through the lab's ccache (host tools are not what is tested), CC does
# not: every kernel compile must reach the daemon, and its log counts them.
# Then, with the daemon stopped: distcc compiles locally (GOOD, with its
# warning in the build log); with DISTCC_FALLBACK=0 the compiles fail, make
# fails, and ktest reports INFRA (exit 3): distcc's "failed to distribute
# and fallbacks are disabled" blames the lab, not the tree, so a bisect
# never marks a commit bad for a dead helper.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.inc"

if ! command -v distccd >/dev/null 2>&1 || ! command -v distcc >/dev/null 2>&1; then
	not_ok "distcc and distccd are installed (apt-get install distcc, .ci/deps.sh)"
	finish
fi

# The lab's lock, as e2e_setup takes it (one e2e test at a time), but not
# the series tree: the lab tree (read-only, O= here) is enough, and
# resetting the series tree twice would take longer than the test.
mkdir -p "$LAB/e2e"
exec 6>"$LAB/e2e/run.lock"
flock 6
tree=$(sh "$KTEST_SRC/tests/lab/kernel.sh" tree) || {
	not_ok "the lab tree is ready (tests/lab/kernel.sh tree failed)"
	finish
}
T=$KTEST_TMP
frag=$(sh "$KTEST_SRC/tests/lab/kernel.sh" config "$T/cfg")
check "the lab's kernel tree and config fragment are ready" test -s "$frag"
cd "$T" || exit 1
mkdir -p "$T/distcc"
dpid=
stop_daemon() {
	[ -n "$dpid" ] || return 0
	kill "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	dpid=
}
trap stop_daemon EXIT
trap 'exit 1' INT TERM

# As root distccd drops to its own user: it logs to our stderr, not a file
# it would have to open as that user. On a port taken before distccd binds
# it (a test beside this one), distccd exits, and another is tried.
distccd_start() {	# distccd_start PORT: in the background
	: >"$T/distccd.log"
	distccd --daemon --no-detach --allow 127.0.0.1 --listen 127.0.0.1 \
		--port "$1" --jobs "$(nproc)" --log-stderr --log-level info \
		2>"$T/distccd.log" </dev/null &
	dpid=$!
	srv_pid=$dpid
}
on_free_port distccd_start tcp || dpid=	# (stopped: no pid to kill)
i=0	# its log says so just after it listens
until grep -q "listening on 127.0.0.1:$port" "$T/distccd.log" || [ $i -ge 30 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "distccd listens on 127.0.0.1:$port" grep -q "listening on 127.0.0.1:$port" "$T/distccd.log"

hostmake="CCACHE_DIR=$LAB/ccache-v2 CCACHE_BASEDIR=$LAB/e2e"
dist="DISTCC_DIR=$T/distcc DISTCC_HOSTS=127.0.0.1:$port/$(nproc)"
# a dozen of lib/'s small objects
objs="lib/bcd.o lib/ctype.o lib/string.o lib/sort.o lib/kstrtox.o lib/hexdump.o"
objs="$objs lib/cmdline.o lib/lockref.o lib/bsearch.o lib/crc32.o lib/llist.o"
# conf NAME EXTRA_ENV BUILD_TYPE NOCLEAN: a build test of $objs through distcc
conf() {
	cat >"$1.conf" <<EOF
BUILD_DIR = $tree
OUTPUT_DIR = $T/obj
TMP_DIR = $T/tmp-$1
LOG_FILE = $T/$1.log
STATE_DIR = $T/state-$1
MACHINE = distcc-lab
MAKE_CMD = $hostmake $dist $2 make CC='distcc gcc' HOSTCC='ccache gcc'
BUILD_OPTIONS = -j$(($(nproc) * 2)) $objs
BUILD_TYPE = $3
MIN_CONFIG = $frag
BUILD_NOCLEAN = $4
BUILD_TARGET = lib/string.o
TEST_START
TEST_TYPE = build
EOF
}
verdict() { jq -r '.tests[0].verdict' "$T/state-$1/report.json" 2>/dev/null; }
jobs_ok() { grep -c 'COMPILE_OK' "$T/distccd.log"; }

conf remote "" tinyconfig 0
run_ktest remote.conf
expect_rc 0 "the build through distccd succeeds"
check "ktest reports it GOOD" [ "$(verdict remote)" = GOOD ]
n=$(jobs_ok)
check "the kernel's compiles ran on distccd ($n jobs, COMPILE_OK in its log)" [ "$n" -ge 12 ]
built() { for o in $objs; do test -s "$T/obj/$o" || return 1; done; }
check "the objects were built" built
check "no compile failed on the daemon" sh -c "! grep -q 'COMPILE_ERROR' '$T/distccd.log'"
check "no compile fell back to the local host" \
	sh -c "! grep -q 'running locally instead' '$T/remote.log'"

# the daemon goes away; the next builds keep the tree and its .config
# (oldconfig, BUILD_NOCLEAN) and redo those objects
old=$dpid
stop_daemon
check "distccd is stopped" sh -c "! kill -0 $old 2>/dev/null"
# shellcheck disable=SC2086 # a list of names
relib() { (cd "$T/obj" && rm -f $objs); }

relib
conf fallback "" oldconfig 1
run_ktest fallback.conf
expect_rc 0 "with distccd down the build still succeeds (distcc's local fallback)"
check "ktest reports it GOOD" [ "$(verdict fallback)" = GOOD ]
check "the build log has distcc's warning" \
	grep -q 'failed to distribute .* running locally instead' "$T/fallback.log"
check "the objects were rebuilt locally" built

relib
conf nofallback "DISTCC_FALLBACK=0" oldconfig 1
run_ktest nofallback.conf
expect_rc 3 "with DISTCC_FALLBACK=0 and distccd down the build cannot run (exit 3)"
check "and ktest calls it INFRA (no helper: the lab's fault, never the commit's)" \
	[ "$(verdict nofallback)" = INFRA ]
check "the build log says why" \
	grep -q 'failed to distribute and fallbacks are disabled' "$T/nofallback.log"
finish
