#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# ssh faults at run level (doc/faults.md): the ktest binary runs a real
# config against a real OpenSSH sshd on 127.0.0.1 (tests/lab/sshd.sh, its
# own host key, client key and known_hosts), and each case asserts the
# outcome: the exit status, the verdict in the report and the journal, the
# message, whether POWER_CYCLE ran, no key material in what ktest wrote,
# never a commit blamed for the lab's fault.
#
# The box: the sshd's forced command (box.sh) answers ktest's probe and
# sync, and its "reboot" appends the next boot's log to console.log, the
# box's serial line, read with CONSOLE = tail -F. POWER_CYCLE does the same
# from the host. REBOOT is ktest.pl's default (reboot over ssh), so every
# boot starts with ktest reaching the box over ssh.
#
#  1. host key changed: INFRA, exit 3, the host and the fix named, no power
#     cycle
#  2. authentication failure (a user the box refuses, a key it does not
#     take): INFRA, exit 3, user and host named, no power cycle
#  3. ssh timing out (a listener that never speaks): POWER_CYCLE, the boot
#     passes; with POWER_CYCLE failing too, INFRA naming the host
#  4. ssh refused: POWER_CYCLE, the boot passes
#  5. a boot bisect whose box's host key changes mid-way: exit 3, no GOOD or
#     BAD for that commit; with known_hosts fixed as the message says, the
#     rerun resumes and names the undisturbed run's first bad commit
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
lab=$T/lab
src=$T/src
rm -rf st-* "$src" build-out tmp ./*.log power box.cmds next ./*.conf \
	to_test.n rekey_at listener.port
t_start=$(date +%s)
# what libssh offers is what the config gives: no agent
unset SSH_AUTH_SOCK

listener=
cleanup() {
	if [ -n "$listener" ]; then
		kill "$listener" 2>/dev/null
		wait "$listener" 2>/dev/null
	fi
	sh "$KTEST_SRC/tests/lab/sshd.sh" stop "$lab" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(sh "$KTEST_SRC/tests/lab/sshd.sh" start "$lab")
if [ -z "$port" ]; then
	not_ok "the lab sshd starts (tests/lab/sshd.sh; openssh-server installed?)"
	finish
fi
ok "the lab sshd runs on 127.0.0.1 port $port (pid $(cat "$lab/sshd.pid"))"
user=$(id -un)

# ---- the box ----
cat >good.log <<'EOF'
[    0.000000] Linux version 6.1.0-t (t@t) #1
Debian GNU/Linux 12 box ttyS0
box login:
EOF
cat >panic.log <<'EOF'
[    0.000000] Linux version 6.1.0-t (t@t) #1
[    0.500000] Kernel panic - not syncing: VFS: Unable to mount root fs
EOF
# boot.sh HOW: the box boots (HOW: reboot, or cycle for POWER_CYCLE) the
# kernel "next" names (good unless REBOOT_SCRIPT chose the test kernel)
cat >boot.sh <<EOF
#!/bin/sh
echo "\$1" >> $T/power
next=\$(cat $T/next 2>/dev/null); echo good > $T/next
cat "$T/\${next:-good}.log" >> $T/console.log
EOF
# box.sh: every ssh command ktest runs on the box (the sshd's forced
# command); anything else is refused, so nothing runs on this host
cat >box.sh <<EOF
#!/bin/sh
echo "\$SSH_ORIGINAL_COMMAND" >> $T/box.cmds
case \$SSH_ORIGINAL_COMMAND in
'echo check machine status') echo check machine status ;;
sync) ;;
reboot) sh $T/boot.sh reboot ;;
*) echo "box.sh: not a command of this box: \$SSH_ORIGINAL_COMMAND" >&2
   exit 127 ;;
esac
EOF
echo "command=\"sh $T/box.sh\",no-pty,no-port-forwarding $(cat "$lab/id_ed25519.pub")" \
	>"$lab/authorized_keys"
cp "$lab/known_hosts" known_hosts.good

# ssh_config PORT [IDENTITY]: the client config ktest reads (SSH_CONFIG)
ssh_config() {
	cat <<EOF
Host 127.0.0.1
	Port $1
	IdentityFile ${2:-$lab/id_ed25519}
	UserKnownHostsFile $T/known_hosts
EOF
}

# conf STATE SSH_CONFIG EXTRA...: a boot test on the box; an EXTRA line
# "NAME = value" replaces the line of NAME here
conf() {
	state=$1 sshc=$2
	shift 2
	drop='^$'
	for l in "$@"; do
		case $l in *' = '*) drop="$drop|^${l%% = *} = " ;; esac
	done
	grep -Ev "$drop" <<EOF
MACHINE = 127.0.0.1
BUILD_DIR = $T
OUTPUT_DIR = $T/build-out
TMP_DIR = $T/tmp
STATE_DIR = $T/$state
LOG_FILE = $T/$state.log
BUILD_TYPE = nobuild
NO_INSTALL = 1
SSH_CONFIG = $T/$sshc
CONNECT_TIMEOUT = 1
REBOOT_TYPE = script
REBOOT_SCRIPT = true
POWER_CYCLE = sh $T/boot.sh cycle
CONSOLE = tail -n +1 -F $T/console.log
SUCCESS_LINE = login:
REBOOT_SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
STOP_AFTER_FAILURE = 1
TIMEOUT = 5
SLEEP_TIME = 0
EOF
	for l in "$@"; do echo "$l"; done
}
fresh() { : >console.log; rm -f power box.cmds next; cp known_hosts.good known_hosts; }

# run CONF STATE: ktest on CONF (bounded), output in out (kept as
# STATE.out) and err, status in rc
run() {
	timeout 120 "$KTEST" "$1" >out 2>err </dev/null
	rc=$?
	cp out "$2.out"
}

# step0 STATE FIELD: the first step's FIELD in the report
step0() { jq -r ".tests[0].steps[0].$2 // empty" "$1/report.json" 2>/dev/null; }

# never_cycled WHAT: POWER_CYCLE did not run
never_cycled() {
	check "$1: POWER_CYCLE was not run (cycling fixes nothing)" \
		sh -c "! grep -q cycle $T/power 2>/dev/null"
}

# no_secrets WHAT STATE: no private key material in what ktest wrote
no_secrets() {
	files="$T/out $T/err $T/$2.log $T/$2/report.json $T/$2/journal"
	leaked=
	for k in "$lab/id_ed25519" "$lab/wrong_ed25519" "$lab/host_ed25519" \
		"$lab/other_host"; do
		# the base64 lines of the private key (the PEM body)
		for line in $(grep -v '^-----' "$k"); do
			if grep -qF -- "$line" $files 2>/dev/null; then
				leaked="$leaked $k"
				break
			fi
		done
	done
	if [ -z "$leaked" ] && ! grep -q 'PRIVATE KEY' $files 2>/dev/null; then
		ok "$1: no private key material in the output, log, report or journal"
	else
		not_ok "$1: key material of$leaked in what ktest wrote"
	fi
}

# no_crash WHAT: no signal, no sanitizer report
no_crash() {
	if [ "$rc" -lt 128 ] && ! grep -q 'Sanitizer\|runtime error:' err; then
		ok "$1: no crash (exit $rc)"
	else
		not_ok "$1: crashed (exit $rc)"
		sed 's/^/# /' err | head -n 20
	fi
}

# ---- 1. the host key changed ----
fresh
ssh_config "$port" >ssh_config.lab
# another key for [127.0.0.1]:port (the box was reinstalled, or someone is
# in the middle)
echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$lab/other_host.pub")" >known_hosts
conf st-key ssh_config.lab "TEST_START" "TEST_TYPE = boot" >key.conf
run key.conf st-key
expect_rc 3 "host key changed: exit 3"
no_crash "host key changed"
check "host key changed: the verdict is INFRA" test "$(step0 st-key verdict)" = INFRA
check "host key changed: the test failed on the lab, not the kernel" \
	grep -q 'KTEST RESULT: TEST 1 Failed: cannot reboot the box: ' out
why=$(step0 st-key why)
check "host key changed: the message names the host and port ([127.0.0.1]:$port) and says HOST KEY CHANGED" \
	sh -c "printf '%s' \"\$0\" | grep -qF '[127.0.0.1]:$port: HOST KEY CHANGED'" "$why"
check "host key changed: and the fix: ssh-keygen -R on $T/known_hosts, then ssh-keyscan" \
	sh -c "printf '%s' \"\$0\" | grep -qF \"ssh-keygen -R '[127.0.0.1]:$port' -f $T/known_hosts\" &&
	       printf '%s' \"\$0\" | grep -qF 'ssh-keyscan -p $port 127.0.0.1 >> $T/known_hosts'" "$why"
check "host key changed: with the key the box shows now (its fingerprint)" \
	sh -c "printf '%s' \"\$0\" | grep -qF \"\$(ssh-keygen -lf $lab/host_ed25519.pub | cut -d' ' -f2)\"" "$why"
never_cycled "host key changed"
check "host key changed: no command ran on the box" test ! -e box.cmds
check "host key changed: known_hosts was left as it was" \
	grep -qF "$(cut -d' ' -f2 "$lab/other_host.pub")" known_hosts
no_secrets "host key changed" st-key

# ---- 2. authentication failure ----
# a user the box does not let in (AllowUsers)
fresh
conf st-user ssh_config.lab "SSH_USER = ktestnobody" \
	"TEST_START" "TEST_TYPE = boot" >user.conf
run user.conf st-user
expect_rc 3 "auth failure (a user the box refuses): exit 3"
no_crash "auth failure (user)"
check "auth failure (user): the verdict is INFRA" test "$(step0 st-user verdict)" = INFRA
check "auth failure (user): the message names user, host and port, and that no key was accepted" \
	sh -c "printf '%s' \"\$0\" | grep -qF 'cannot reboot the box: ssh to the test box (MACHINE = 127.0.0.1): ktestnobody@127.0.0.1 port $port: no key was accepted (tried: $lab/id_ed25519'" \
	"$(step0 st-user why)"
never_cycled "auth failure (user)"
no_secrets "auth failure (user)" st-user

# a key the box does not take
fresh
ssh_config "$port" "$lab/wrong_ed25519" >ssh_config.wrongkey
conf st-wkey ssh_config.wrongkey "TEST_START" "TEST_TYPE = boot" >wkey.conf
run wkey.conf st-wkey
expect_rc 3 "auth failure (a key the box does not take): exit 3"
no_crash "auth failure (key)"
check "auth failure (key): the verdict is INFRA" test "$(step0 st-wkey verdict)" = INFRA
check "auth failure (key): the message names user, host and the key tried" \
	sh -c "printf '%s' \"\$0\" | grep -qF '$user@127.0.0.1 port $port: no key was accepted (tried: $lab/wrong_ed25519'" \
	"$(step0 st-wkey why)"
never_cycled "auth failure (key)"
no_secrets "auth failure (key)" st-wkey

# ---- 3. ssh timing out: a listener that accepts and never speaks ----
py=$(command -v python3)
if [ -n "$py" ]; then
	"$py" -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1], "w") as f:
	f.write("%d\n" % s.getsockname()[1])
held = []
while True:
	c, _ = s.accept()
	held.append(c)
' "$T/listener.port" &
	listener=$!
	i=0
	while [ ! -s listener.port ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	sport=$(cat listener.port 2>/dev/null)
fi
if [ -n "$sport" ]; then
	ssh_config "$sport" >ssh_config.silent
	fresh
	conf st-silent ssh_config.silent "TEST_START" "TEST_TYPE = boot" >silent.conf
	start=$(date +%s)
	run silent.conf st-silent
	took=$(( $(date +%s) - start ))
	expect_rc 0 "ssh timing out (port $sport never speaks): the boot passes after POWER_CYCLE"
	no_crash "ssh timing out"
	check "ssh timing out: the verdict is GOOD" test "$(step0 st-silent verdict)" = GOOD
	check "ssh timing out: the log says why it cycled: no answer in CONNECT_TIMEOUT, naming host and port" \
		grep -q "cannot reach 127.0.0.1 port $sport (no answer in 1000 ms)" st-silent.log
	check "ssh timing out: the box was power-cycled to boot" \
		test "$(sed -n 1p power 2>/dev/null)" = cycle
	check "ssh timing out: the good boot was seen on the console" \
		grep -q '^box login:' out
	check "ssh timing out: in CONNECT_TIMEOUT per probe (${took}s)" test "$took" -lt 15

	# ... and POWER_CYCLE fails too
	fresh
	conf st-silent2 ssh_config.silent \
		"POWER_CYCLE = echo 'PDU: outlet 3: connection refused' >&2; exit 1" \
		"TEST_START" "TEST_TYPE = boot" >silent2.conf
	run silent2.conf st-silent2
	expect_rc 3 "ssh timing out and POWER_CYCLE failing: exit 3"
	no_crash "ssh timing out, POWER_CYCLE failing"
	check "ssh timing out, POWER_CYCLE failing: the verdict is INFRA" \
		test "$(step0 st-silent2 verdict)" = INFRA
	why=$(step0 st-silent2 why)
	check "ssh timing out, POWER_CYCLE failing: the message names the host, the timeout and the failed POWER_CYCLE" \
		sh -c "printf '%s' \"\$0\" | grep -q \"cannot reboot the box: the box does not answer (ssh to the test box (MACHINE = 127.0.0.1): cannot reach 127.0.0.1 port $sport (no answer in 1000 ms).*), and the power cycle failed: POWER_CYCLE .* failed: exit 1.*PDU: outlet 3: connection refused\"" "$why"
	kill "$listener" 2>/dev/null
	wait "$listener" 2>/dev/null
	listener=
else
	not_ok "ssh timing out: a silent listener on 127.0.0.1 (python3: $py)"
fi

# ---- 4. ssh refused: nothing listens on port 1 ----
fresh
ssh_config 1 >ssh_config.refused
conf st-refused ssh_config.refused "TEST_START" "TEST_TYPE = boot" >refused.conf
run refused.conf st-refused
expect_rc 0 "ssh refused: the boot passes after POWER_CYCLE"
no_crash "ssh refused"
check "ssh refused: the verdict is GOOD" test "$(step0 st-refused verdict)" = GOOD
check "ssh refused: the log says the box does not answer, naming host and port" \
	grep -q "the box does not answer (ssh to the test box (MACHINE = 127.0.0.1): cannot reach 127.0.0.1 port 1: " st-refused.log
check "ssh refused: the box was power-cycled to boot" \
	test "$(sed -n 1p power 2>/dev/null)" = cycle
check "ssh refused: the good boot was seen on the console" grep -q '^box login:' out

# ---- the lab itself works: a boot over ssh, no power cycle ----
# (CONNECT_TIMEOUT 5, as the bisects below: beside a kernel build, a
# probe's ssh login took more than 1 s and the box was power-cycled)
fresh
conf st-ok ssh_config.lab "CONNECT_TIMEOUT = 5" "TEST_START" "TEST_TYPE = boot" >ok.conf
run ok.conf st-ok
expect_rc 0 "a boot on the box over ssh passes"
check "it was rebooted over ssh (probe, sync, reboot), not power-cycled" \
	sh -c "grep -qx reboot $T/box.cmds && grep -qx reboot $T/power && ! grep -q cycle $T/power"
echo "# cases 1-4: $(( $(date +%s) - t_start )) s"

# ---- 5. a boot bisect whose box's host key changes mid-way ----
g() { git -C "$src" "$@"; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1 HOME=$T
mkdir -p "$src"
# a fake kbuild: the image says which kernel it is (c5 on panics at boot)
cat >"$src/Makefile" <<EOF
O ?= .
C := \$(O)/.config
all:
	@git -C \$(CURDIR) rev-parse HEAD >> $T/builds
	@mkdir -p \$(O)/arch/x86/boot
	@if [ -e panic ]; then echo panic; else echo good; fi > \$(O)/arch/x86/boot/bzImage
mrproper:
	@rm -rf \$(C) \$(O)/arch
olddefconfig oldnoconfig:
	@touch \$(C); grep -q CONFIG_DEFAULT_ON \$(C) || echo CONFIG_DEFAULT_ON=y >> \$(C)
defconfig:
	@echo CONFIG_DEFAULT_ON=y > \$(C)
kernelrelease:
	@echo "6.1.0\$\$(cat \$(O)/localversion 2>/dev/null)"
EOF
g init -q
g add Makefile
g commit -q -m "c0: the tree"
for n in $(seq 1 8); do
	echo "$n" >"$src/version"
	[ "$n" -eq 5 ] && { touch "$src/panic"; g add panic; }
	g add version
	g commit -q -m "c$n: change $n"
	eval "c$n=\$(g rev-parse HEAD)"
done
# REBOOT_SCRIPT: the box boots the image just built next; at the
# rekey_at-th boot the box was reinstalled with another host key
cat >to_test.sh <<EOF
#!/bin/sh
n=\$(( \$(cat $T/to_test.n 2>/dev/null || echo 0) + 1 ))
echo \$n > $T/to_test.n
cat $T/build-out/arch/x86/boot/bzImage > $T/next
if [ "\$n" -eq "\$(cat $T/rekey_at 2>/dev/null || echo 0)" ]; then
	cp $lab/other_host $lab/host_ed25519
	cp $lab/other_host.pub $lab/host_ed25519.pub
fi
EOF
# (CONNECT_TIMEOUT 5: no case here times out, and on a loaded machine
# a probe's ssh login took more than 1 s, so the box was power-cycled)
bisect_conf() {	# bisect_conf STATE
	conf "$1" ssh_config.lab "LOCALVERSION = -t" "BUILD_DIR = $src" \
		"BUILD_TYPE = defconfig" "REBOOT_SCRIPT = sh $T/to_test.sh" \
		"BISECT_SLEEP_TIME = 1" "CONNECT_TIMEOUT = 5" \
		"TEST_START" "TEST_TYPE = bisect" "BISECT_TYPE = boot" \
		"BISECT_GOOD = $c1" "BISECT_BAD = $c8"
}
# every step's commit and verdict
answer() {
	jq -c '[.tests[0].first_bad_commit,
		[.tests[0].steps[] | [.commit, .verdict]]]' "$1/report.json"
}
g checkout -q "$c8"

# the undisturbed run
fresh
rm -f to_test.n rekey_at builds
bisect_conf st-bis-base >bis.conf
run bis.conf st-bis-base
base_rc=$rc
base_first=$(jq -r '.tests[0].first_bad_commit' st-bis-base/report.json 2>/dev/null)
check "the undisturbed boot bisect finds c5, the first kernel that panics (exit $rc)" \
	test "$base_first" = "$c5"
check "and never power-cycled the box" sh -c "! grep -q cycle $T/power"

# the box gets another host key at the second step's boot
fresh
rm -f to_test.n builds
echo 2 >rekey_at
bisect_conf st-bis >bis.conf
run bis.conf st-bis
expect_rc 3 "a bisect whose box's host key changed: exit 3"
no_crash "bisect, host key changed"
victim=$(jq -r '.tests[0].steps[1].commit // empty' st-bis/report.json 2>/dev/null)
check "the lab is blamed 3 times on that commit ($(echo "$victim" | cut -c1-12)), naming [127.0.0.1]:$port and HOST KEY CHANGED" \
	grep -q "the lab.* failed 3 times on $(echo "$victim" | cut -c1-12): cannot reboot the box: .*\[127\.0\.0\.1\]:$port: HOST KEY CHANGED" out
check "the first step (before the change) has its verdict" \
	jqe '.tests[0].steps[0].verdict == "GOOD" or .tests[0].steps[0].verdict == "BAD"' st-bis/report.json
check "every later step is INFRA, none GOOD or BAD" \
	jqe '[.tests[0].steps[1:][] | .verdict] | length == 3 and all(. == "INFRA")' st-bis/report.json
check "no first bad commit is named" jqe '.tests[0].first_bad_commit == null' st-bis/report.json
if [ -n "$victim" ] &&
   grep "$victim" st-bis/journal | grep -q 'verdict=INFRA' &&
   ! grep "$victim" st-bis/journal | grep -q 'verdict=GOOD\|verdict=BAD'; then
	ok "the journal holds INFRA and no GOOD or BAD for that commit ($(echo "$victim" | cut -c1-12))"
else
	not_ok "the journal holds a GOOD or BAD for the commit the lab failed on ('$victim')"
fi
check "POWER_CYCLE was not run (cycling fixes nothing)" sh -c "! grep -q cycle $T/power"
no_secrets "bisect, host key changed" st-bis

# fixed as the message says: the old key out, the new one in
ssh-keygen -q -R "[127.0.0.1]:$port" -f "$T/known_hosts" >/dev/null 2>&1
ssh-keyscan -p "$port" 127.0.0.1 >>"$T/known_hosts" 2>/dev/null
check "known_hosts fixed with the message's ssh-keygen -R and ssh-keyscan" \
	grep -qF "$(cut -d' ' -f2 "$lab/other_host.pub")" known_hosts
rm -f rekey_at
: >console.log
rm -f builds
run bis.conf st-bis
expect_rc "$base_rc" "the rerun with known_hosts fixed ends as the undisturbed run (exit $base_rc)"
no_crash "bisect rerun"
check "and names the same first bad commit, c5" \
	jqe ".tests[0].first_bad_commit == \"$c5\"" st-bis/report.json
check "the step done before the change was replayed from the journal, not run again" \
	sh -c "grep -q 'in the earlier run (from the journal)' $T/out &&
	       ! grep -qx '$(jq -r '.tests[0].steps[0].commit' st-bis-base/report.json)' $T/builds"
check "the commit the lab failed on was tested again, and got a verdict" \
	jqe "[.tests[0].steps[] | select(.commit == \"$victim\" and (.verdict == \"GOOD\" or .verdict == \"BAD\"))] | length == 1" st-bis/report.json

echo "# the whole script: $(( $(date +%s) - t_start )) s"
finish
