#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Real ktest boots whose CONSOLE goes through a real ser2net (Debian 12's,
# 4.x) on 127.0.0.1, on a free port, with its own YAML config here, in
# front of a pty that a relay (python3) holds as the box's serial line.
# POWER_CYCLE makes the relay print a boot; the monitor must see it whole.
#
#  1. telnet mode, CONSOLE = telnet:127.0.0.1:PORT: the boot passes and the
#     dmesg file is exactly what the box printed (no telnet byte in it)
#  2. raw mode, CONSOLE = tcp:127.0.0.1:PORT: the same
#  3. telnet mode, ser2net restarted in the middle of the boot: the console
#     comes back, the boot passes, both halves in order
#  4. ser2net dies in the middle of the boot for good: INFRA (exit 3), the
#     message names the console and host:port, no commit blamed
#  5. conmux: CONSOLE = conmux-console box, a real conmux and its registry
#     (in a network namespace of their own): the boot passes, lines whole
#  6. ipmitool SOL: CONSOLE = ipmitool ... sol activate against openipmi's
#     ipmi_sim serving the pty as SOL: the boot passes, no password logged
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
rm -rf st-* tmp build-out ./*.conf ./*.log ./*.yaml ./*.cf on go half.done relay.* pts s2n.pid reg.db conmux-run.sh conmux.rc lan.conf bmc.emu bmc-state
t_start=$(date +%s)

if [ ! -x /usr/sbin/ser2net ] || ! command -v python3 >/dev/null; then
	ok "skipped: ser2net or python3 not installed (.ci/deps.sh installs them)"
	finish
fi

pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; wait; }
trap cleanup EXIT
trap 'exit 130' INT TERM
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config

cat >half1.log <<'EOF'
[    0.000000] Linux version 6.1.0-a (t@t) (gcc 12.2.0) #1 SMP
[    0.100000] Calibrating delay loop... 4000.00 BogoMIPS
[    0.200000] pid_max: default: 32768 minimum: 301
EOF
cat >half2.log <<'EOF'
[    0.300000] Freeing unused kernel image memory: 2048K
[    1.000000] systemd[1]: Reached target Basic System.
Debian GNU/Linux 12 box ttyS0
box login:
EOF
cat half1.log half2.log >whole.log

# The box's serial line: a pty whose slave's name goes to "pts"; at the
# power cycle ("on") it prints the first half of the boot; then, once
# "go" exists, the rest (MODE "now": at once).
cat >relay.py <<'EOF'
import os, sys, time, tty
dirn, mode = sys.argv[1:3]
m, s = os.openpty()
tty.setraw(s)
with open(dirn + '/pts.new', 'w') as f:
    f.write(os.ttyname(s))
os.rename(dirn + '/pts.new', dirn + '/pts')
def crlf(name):
    with open(dirn + '/' + name, 'rb') as f:
        return f.read().replace(b'\n', b'\r\n')
def wait(name):
    while not os.path.exists(dirn + '/' + name):
        time.sleep(0.05)
wait('on')
time.sleep(0.3)          # ser2net opens the line when the console comes
os.write(m, crlf('half1.log'))
open(dirn + '/half.done', 'w').close()
if mode != 'now':
    wait('go')
    time.sleep(0.5)      # the console is back
os.write(m, crlf('half2.log'))
time.sleep(60)
EOF

relay() {	# relay MODE: a new line, its name in $pts
	rm -f on go half.done pts
	python3 relay.py "$T" "$1" &
	relay_pid=$!
	pids="$pids $relay_pid"
	i=0
	while [ ! -s pts ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	pts=$(cat pts)
}

ser2net_conf() {	# ser2net_conf ACCEPTER PORT
	cat >ser2net.yaml <<EOF
%YAML 1.1
---
connection: &box
  accepter: $1,127.0.0.1,$2
  connector: serialdev,$pts,115200n81,local
  options:
    kickolduser: true
EOF
}

s2n_start() {	# s2n_start PORT: ser2net ($acc) on PORT, in the background
	ser2net_conf "$acc" "$1"
	/usr/sbin/ser2net -n -d -u -c "$T/ser2net.yaml" >>ser2net.log 2>&1 &
	s2n_pid=$!
	srv_pid=$s2n_pid
	pids="$pids $s2n_pid"
}

# ser2net ($acc) listening on a new port, in $port; its log here, stopped
# by pid. (ser2net that cannot bind its port stays up, saying "Unable to
# startup network port": on_free_port looks for the socket in its fds.)
start_ser2net() { on_free_port s2n_start tcp; }

restart_ser2net() {	# ser2net again on the same $port, listening
	s2n_start "$port"
	i=0
	while [ $i -lt 100 ]; do
		owns_port "$s2n_pid" "$port" tcp && return 0
		sleep 0.05; i=$((i + 1))
	done
	return 1
}

stop_ser2net() { kill "$s2n_pid" 2>/dev/null; wait "$s2n_pid" 2>/dev/null; }

conf() {	# conf STATE CONSOLE EXTRA...
	cat <<EOF
MACHINE = 127.0.0.1
BUILD_DIR = $T
OUTPUT_DIR = $T/build-out
TMP_DIR = $T/tmp
STATE_DIR = $T/$1
LOG_FILE = $T/$1.log
BUILD_TYPE = nobuild
NO_INSTALL = 1
SSH_CONFIG = $T/ssh_config
CONNECT_TIMEOUT = 1
POWER_CYCLE = touch $T/on
REBOOT_TYPE = script
REBOOT_SCRIPT = true
CONSOLE = $2
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
STOP_AFTER_FAILURE = 1
TIMEOUT = 4
SLEEP_TIME = 0
REBOOT_ON_SUCCESS = 0
TEST_START
TEST_TYPE = boot
EOF
	shift 2
	for l in "$@"; do echo "$l"; done
}
verdict() {
	jq -r '.tests[0].steps[0] | "\(.verdict) \(.failed_phase // "-")"' "$1/report.json" 2>/dev/null
}
dmesg=$T/tmp/dmesg-127.0.0.1

# ---- 1, 2: telnet and raw mode ----
for mode in telnet tcp; do
	case $mode in telnet) acc=telnet,tcp ;; tcp) acc=tcp ;; esac
	relay now
	start_ser2net
	check "$mode: ser2net listens on 127.0.0.1:$port (pid $s2n_pid)" \
		owns_port "$s2n_pid" "$port" tcp
	conf "st-$mode" "$mode:127.0.0.1:$port" >f.conf
	run_ktest f.conf
	expect_rc 0 "$mode: a boot through ser2net passes"
	check "$mode: GOOD ($(verdict "st-$mode"))" test "$(verdict "st-$mode")" = "GOOD -"
	check "$mode: the dmesg file is what the box printed, whole and in order" \
		cmp -s "$dmesg" whole.log
	check "$mode: no telnet byte (255) in the log" \
		sh -c "! LC_ALL=C grep -q \"$(printf '\377')\" st-$mode.log"
	stop_ser2net
	kill "$relay_pid" 2>/dev/null
done
t1=$(date +%s)
echo "# 1, 2. telnet and raw: $((t1 - t_start)) s"

# ---- 3. ser2net restarts in the middle of the boot ----
relay wait
acc=telnet,tcp
check "restart: ser2net listens" start_ser2net
(	# after the first half: ser2net goes away and comes back
	while [ ! -e half.done ]; do sleep 0.05; done
	sleep 0.3
	stop_ser2net
	sleep 0.5
	restart_ser2net
	echo "$s2n_pid" >s2n.pid
	touch go
) &
pids="$pids $!"
restarter=$!
conf st-restart "telnet:127.0.0.1:$port" >f.conf
run_ktest f.conf
wait "$restarter"
expect_rc 0 "ser2net restarted mid-boot: the console comes back, the boot passes"
check "restart: GOOD ($(verdict st-restart))" test "$(verdict st-restart)" = "GOOD -"
check "restart: the dmesg file holds both halves, in order, none lost" \
	cmp -s "$dmesg" whole.log
# (the restarter's ser2net: the one to stop now)
s2n_pid=$(cat s2n.pid)
pids="$pids $s2n_pid"
stop_ser2net
kill "$relay_pid" 2>/dev/null
t2=$(date +%s)
echo "# 3. restart: $((t2 - t1)) s"

# ---- 4. ser2net dies in the middle of the boot for good ----
relay wait
check "dead: ser2net listens" start_ser2net
(
	while [ ! -e half.done ]; do sleep 0.05; done
	sleep 0.3
	kill "$s2n_pid"
) &
pids="$pids $!"
killer=$!
start=$(date +%s)
conf st-dead "telnet:127.0.0.1:$port" "TIMEOUT = 2" "INFRA_RETRIES = 0" >f.conf
run_ktest f.conf
took=$(( $(date +%s) - start ))
wait "$killer"
wait "$s2n_pid" 2>/dev/null
kill "$relay_pid" 2>/dev/null
expect_rc 3 "ser2net gone mid-boot for good: exit 3, the lab's fault (${took}s)"
check "ser2net gone: INFRA, not BAD ($(verdict st-dead))" \
	test "$(verdict st-dead)" = "INFRA boot"
# (the reason is the driver's, "telnet console 127.0.0.1:PORT: connect:
# Connection refused", unless ser2net took us once more while it stopped)
check "ser2net gone: the message names the console and host:port" \
	grep -q "KTEST RESULT: TEST 1 Failed: the console of 127.0.0.1: console telnet:127.0.0.1:$port went away and did not come back" out
check "ser2net gone: the lines before it went are in the log" \
	test "$(grep -cFx -f half1.log st-dead.log)" -ge 3
t3=$(date +%s)
echo "# 4. dead: $((t3 - t2)) s"

# ---- 5. conmux ----
# conmux (Debian's, Perl) listens on every address and its registry on
# the fixed port 63000: both run in a network namespace of their own
# (unshare -n, only its loopback up), with ktest, whose CONSOLE is
# "conmux-console box" (the registry's name for the console). conmux's
# payload is "cat" of the relay's pty.
if ! command -v conmux >/dev/null || ! command -v conmux-registry >/dev/null; then
	ok "skipped: conmux is not installed (.ci/deps.sh installs it)"
elif ! unshare -n true 2>/dev/null; then
	ok "skipped: conmux: no network namespace here (unshare -n needs root): conmux and its registry listen on every address and port 63000, so they run only in one"
else
	relay now
	cat >box.cf <<EOF
listener box
application console 'box console' 'cat $pts'
EOF
	: >reg.db
	cat >conmux-run.sh <<EOF
ip link set lo up || exit 10
conmux-registry 63000 $T/reg.db >$T/conmux-registry.log 2>&1 &
reg=\$!
sleep 0.3
conmux $T/box.cf >$T/conmux.log 2>&1 &
cmx=\$!
trap 'kill \$cmx \$reg 2>/dev/null; wait' EXIT
i=0
until conmux-console --list 2>/dev/null | grep -q '^box '; do
	i=\$((i + 1)); [ \$i -lt 50 ] || exit 11
	sleep 0.1
done
"$KTEST" $T/f.conf >$T/out 2>$T/err </dev/null
echo \$? >$T/conmux.rc
EOF
	conf st-conmux "conmux-console box" >f.conf
	rm -f conmux.rc
	unshare -n sh conmux-run.sh
	urc=$?
	kill "$relay_pid" 2>/dev/null
	rc=$(cat conmux.rc 2>/dev/null || echo "none (conmux-run.sh exited $urc)")
	if [ "$rc" = 0 ]; then
		ok "conmux: a boot through conmux-console and a real conmux + registry passes"
	else
		not_ok "conmux: the boot through conmux exited $rc"
		sed 's/^/# /' err conmux.log conmux-registry.log 2>/dev/null | head -n 20
	fi
	check "conmux: GOOD ($(verdict st-conmux))" test "$(verdict st-conmux)" = "GOOD -"
	check "conmux: the boot's lines are in the dmesg file, whole and in order" \
		sh -c "grep -v '^Connected to box console' '$dmesg' | cmp -s - whole.log"
fi
echo "# 5. conmux: $(( $(date +%s) - t3 )) s"

# ---- 6. ipmitool SOL against openipmi's ipmi_sim ----
# ipmi_sim, a BMC on 127.0.0.1 (UDP, a free port), whose SOL is the
# relay's pty; CONSOLE is ipmitool's "sol activate", the password from
# IPMI_PASSWORD (-E), never in the config or a log. ipmi_sim has no
# cipher suite 17, ipmitool's default: -C 3.
t5=$(date +%s)
if ! command -v ipmi_sim >/dev/null || ! command -v ipmitool >/dev/null; then
	ok "skipped: ipmi_sim or ipmitool not installed (.ci/deps.sh installs openipmi and ipmitool)"
else
	relay now
	cat >bmc.emu <<'EOF'
mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
mc_enable 0x20
EOF
	mkdir -p bmc-state
	sim_start() {	# sim_start PORT: ipmi_sim on UDP PORT, in the background
		cat >lan.conf <<EOF
name "ktestbmc"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 $1
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  sol "$pts" 115200
user 2 true "ktest" "lab-secret" admin 10 none md2 md5 straight
EOF
		ipmi_sim -n -c "$T/lan.conf" -f "$T/bmc.emu" -s "$T/bmc-state" \
			>>ipmi_sim.log 2>&1 </dev/null &
		sim_pid=$!
		srv_pid=$sim_pid
		pids="$pids $sim_pid"
	}
	check "ipmi_sim holds a UDP port on 127.0.0.1" on_free_port sim_start udp
	uport=$port
	sol="ipmitool -I lanplus -C 3 -H 127.0.0.1 -p $uport -U ktest -E"
	i=0
	until IPMI_PASSWORD=lab-secret $sol chassis power status >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 30 ] || break
		sleep 0.1
	done
	conf st-sol "$sol sol activate" >f.conf
	IPMI_PASSWORD=lab-secret run_ktest f.conf
	kill "$sim_pid" "$relay_pid" 2>/dev/null
	expect_rc 0 "ipmitool SOL: a boot through ipmitool sol activate and ipmi_sim passes"
	check "ipmitool SOL: GOOD ($(verdict st-sol))" test "$(verdict st-sol)" = "GOOD -"
	check "ipmitool SOL: the boot's lines are in the dmesg file, whole and in order" \
		sh -c "grep -v '^\[SOL Session operational' '$dmesg' | cmp -s - whole.log"
	check "ipmitool SOL: the password is in no log or report" \
		sh -c "! grep -rq lab-secret st-sol st-sol.log out err '$T/tmp'"
fi
echo "# 6. ipmitool SOL: $(( $(date +%s) - t5 )) s"
echo "# all: $(( $(date +%s) - t_start )) s"
finish
