# SPDX-License-Identifier: GPL-2.0-only
# Helpers for tests/cli/*.sh. Each check prints "ok - what" or "not ok - what".
# Environment: KTEST (the binary), KTEST_SRC (the tree), KTEST_TMP (scratch).
: "${KTEST_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${KTEST:=$KTEST_SRC/ktest/ktest}"
: "${KTEST_TMP:=$(mktemp -d "${TMPDIR:-/tmp}/ktest-cli.XXXXXX")}"
mkdir -p "$KTEST_TMP"
DATA="$KTEST_SRC/tests/data"
T_FAILED=0

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; T_FAILED=$((T_FAILED + 1)); }

# check "what" command...: passes when the command succeeds
check() {
	what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# run_ktest ARGS...: runs ktest, output in $KTEST_TMP/out and /err, status in $rc
run_ktest() {
	"$KTEST" "$@" >"$KTEST_TMP/out" 2>"$KTEST_TMP/err" </dev/null
	rc=$?
}

# expect_rc N "what": checks the last run_ktest status
expect_rc() {
	if [ "$rc" -eq "$1" ]; then ok "$2"; else
		not_ok "$2 (exit $rc, wanted $1)"
		sed 's/^/# /' "$KTEST_TMP/err" | head -n 20
		# what ktest said last (its messages go to stdout)
		[ -s "$KTEST_TMP/err" ] ||
			tail -n 20 "$KTEST_TMP/out" | sed 's/^/# out: /'
	fi
}

# jqe FILTER FILE: true when jq -e says so (for check; quiet)
jqe() { jq -e "$1" "$2" >/dev/null; }

finish() { exit "$T_FAILED"; }

# pick_port, owns_port, on_free_port: ports for the tests' own servers
. "$KTEST_SRC/tests/lab/ports.sh"
