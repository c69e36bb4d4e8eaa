#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The lab-standard power drivers against the real programs, on 127.0.0.1:
#  - POWER_TYPE = pdudaemon: Debian's pdudaemon with its HTTP listener and
#    a "localcmdline" PDU whose outlet is a script that records on/off and,
#    at "on", appends the next boot's console log to the box's serial file;
#  - POWER_TYPE = ipmi: ipmitool (lanplus) against OpenIPMI's BMC simulator
#    ipmi_sim, whose chassis control is a script that does the same.
# Each boots a box made of commands (as test_run_faults.sh's: its console
# is that file, ssh to it is refused so every reboot is a power cycle),
# then the failures: pdudaemon down, a PDU pdudaemon does not know, a wrong
# BMC password (INFRA, exit 3, naming the URL / the user and host, the
# password nowhere), a missing IPMI_HOST (ktest check, exit 2).
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
T=$KTEST_TMP
rm -rf st-* tmp bmc-state bin ./*.log ./*.rec ./*.conf power pdud.json \
	lan.conf bmc.emu bmc.power argv.rec
t_start=$(date +%s)
PW='Pw-s3cret-4711'
WRONG='Wrong-pw-0815'

pids=
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >good.log <<'EOF'
[    0.000000] Linux version 6.1.0-t (t@t) #1
Debian GNU/Linux 12 box ttyS0
box login:
EOF
# the box's power: "on" boots it (its console log appended to the serial file)
cat >box.sh <<EOF
#!/bin/sh
echo "\$*" >> $T/power
[ "\$1" = on ] && cat $T/good.log >> $T/console.log
exit 0
EOF
printf 'Host 127.0.0.1\n\tPort 1\n' >ssh_config

conf() {	# conf STATE EXTRA...: a boot test on the command-made box
	state=$1
	shift
	cat <<EOF
MACHINE = 127.0.0.1
BUILD_DIR = $T
OUTPUT_DIR = $T/build-out
TMP_DIR = $T/tmp
STATE_DIR = $T/$state
LOG_FILE = $T/$state.log
BUILD_TYPE = nobuild
NO_INSTALL = 1
SSH_CONFIG = $T/ssh_config
CONNECT_TIMEOUT = 1
REBOOT_TYPE = script
REBOOT_SCRIPT = true
CONSOLE = tail -n +1 -F $T/console.log
SUCCESS_LINE = login:
BOOTED_TIMEOUT = 1
STOP_AFTER_FAILURE = 1
TIMEOUT = 5
SLEEP_TIME = 1
INFRA_RETRIES = 0
EOF
	for l in "$@"; do echo "$l"; done
	printf 'TEST_START\nTEST_TYPE = boot\n'
}
fresh() { : >console.log; rm -f power; }

# ---- pdudaemon ----
pdud_start() {	# pdud_start PORT: pdudaemon on PORT, in the background
	cat >pdud.json <<EOF
{
  "daemon": { "hostname": "127.0.0.1", "port": $1,
	      "logging_level": "DEBUG", "listener": "http" },
  "pdus": {
    "labpdu": { "driver": "localcmdline", "retries": 1,
		"cmd_on": "sh $T/box.sh on outlet-%s",
		"cmd_off": "sh $T/box.sh off outlet-%s" }
  }
}
EOF
	pdudaemon --conf "$T/pdud.json" >>pdud.log 2>&1 </dev/null &
	pdud=$!
	srv_pid=$pdud
	pids="$pids $pdud"
}
if on_free_port pdud_start tcp; then
	pport=$port
	ok "pdudaemon listens on 127.0.0.1 port $pport (pid $pdud)"
else
	pport=$port
	not_ok "pdudaemon starts (its log: $(tail -n 3 pdud.log))"
fi

PDU="POWER_TYPE = pdudaemon
PDUDAEMON_URL = http://127.0.0.1:$pport
PDUDAEMON_PORT = 3
PDUDAEMON_DELAY = 0"

fresh
conf st-pdu "$PDU" "PDUDAEMON_PDU = labpdu" >pdu.conf
run_ktest check pdu.conf
expect_rc 0 "ktest check: POWER_TYPE = pdudaemon needs no POWER_CYCLE"
run_ktest pdu.conf
expect_rc 0 "a boot whose power goes through pdudaemon passes"
check "pdudaemon switched outlet 3 off, then on ($(tr '\n' ',' <power))" \
	sh -c "head -n 2 power | tr '\n' ' ' | grep -qx 'off outlet-3 on outlet-3 '"
check "pdudaemon logged the HTTP reboot request for labpdu" \
	grep -q 'reboot?hostname=labpdu&port=3&delay=0' pdud.log
check "the boot saw the console of the power-up" grep -q '^box login:' st-pdu.log

# POWEROFF_ON_SUCCESS: the end of the run switches the outlet off
fresh
conf st-pdu-off "$PDU" "PDUDAEMON_PDU = labpdu" "POWEROFF_ON_SUCCESS = 1" \
	>pdu-off.conf
run_ktest pdu-off.conf
expect_rc 0 "a boot with POWEROFF_ON_SUCCESS passes"
check "and the run ended with the outlet off ($(tr '\n' ',' <power))" \
	sh -c "tail -n 1 power | grep -qx 'off outlet-3' && grep -q 'off?hostname=labpdu&port=3' pdud.log"

# a PDU pdudaemon does not know: 500, INFRA naming it
fresh
conf st-pdu-unknown "$PDU" "PDUDAEMON_PDU = nosuchpdu" >pdu-unknown.conf
run_ktest pdu-unknown.conf
expect_rc 3 "a PDU pdudaemon does not know is lab trouble (INFRA)"
check "the message names the URL, the PDU and pdudaemon's answer" \
	grep -q "pdudaemon at http://127.0.0.1:$pport: reboot of PDU 'nosuchpdu' port 3: refused: Invalid request" out
check "the outlet was not switched" test ! -s power

# pdudaemon down: INFRA naming the URL
kill "$pdud" 2>/dev/null
wait "$pdud" 2>/dev/null
fresh
conf st-pdu-down "$PDU" "PDUDAEMON_PDU = labpdu" >pdu-down.conf
start=$(date +%s)
run_ktest pdu-down.conf
expect_rc 3 "pdudaemon down is lab trouble (INFRA, exit 3)"
check "the message names pdudaemon's URL and that nothing answered" \
	grep -q "pdudaemon at http://127.0.0.1:$pport: reboot of PDU 'labpdu' port 3: .*is pdudaemon running" out
check "the report says INFRA with the same reason" \
	jqe ".tests[0].verdict == \"INFRA\" and (.tests[0].why | contains(\"pdudaemon at http://127.0.0.1:$pport\"))" st-pdu-down/report.json
check "and the run ended promptly ($(( $(date +%s) - start )) s)" \
	test $(( $(date +%s) - start )) -lt 15

# ---- IPMI: ipmi_sim ----
mkdir -p bmc-state bin
cat >chassis.sh <<EOF
#!/bin/sh
# ipmi_sim's chassis control: [DEVICE] get|set PARM [VALUE] ...
case "\$1" in get|set) ;; *) shift ;; esac
op=\$1; shift
case \$op in
get)	for p; do
		case \$p in
		power) echo "power:\$(cat $T/bmc.power 2>/dev/null || echo 0)" ;;
		boot) echo "boot:default" ;;
		esac
	done ;;
set)	while [ \$# -ge 2 ]; do
		if [ "\$1" = power ]; then
			old=\$(cat $T/bmc.power 2>/dev/null || echo 0)
			echo "\$2" >$T/bmc.power
			[ "\$2" = 1 ] && [ "\$old" = 0 ] && sh $T/box.sh on bmc
			[ "\$2" = 0 ] && sh $T/box.sh off bmc
		fi
		shift 2
	done ;;
*)	exit 1 ;;
esac
EOF
cat >bmc.emu <<'EOF'
mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
sel_enable 0x20 1000 0x0a
mc_enable 0x20
EOF
bmc_start() {	# bmc_start PORT: ipmi_sim on UDP PORT, in the background
	cat >lan.conf <<EOF
name "ktestbmc"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 $1
    priv_limit admin
    allowed_auths_callback md5
    allowed_auths_user md5
    allowed_auths_operator md5
    allowed_auths_admin md5
    guid a123456789abcdefa123456789abcdef
  endlan
  chassis_control "sh $T/chassis.sh"
  user 2 true "labadmin" "$PW" admin 10 md5
EOF
	ipmi_sim -n -c "$T/lan.conf" -f "$T/bmc.emu" -s "$T/bmc-state" \
		>>bmc.log 2>&1 </dev/null &
	bmc=$!
	srv_pid=$bmc
	pids="$pids $bmc"
}
on_free_port bmc_start udp
bport=$port
# ipmitool through a shim that records its arguments and whether the
# password came in its environment
cat >bin/ipmitool <<EOF
#!/bin/sh
echo "argv: \$*" >> $T/argv.rec
[ -n "\$IPMI_PASSWORD" ] && echo "env: IPMI_PASSWORD set" >> $T/argv.rec
exec $(command -v ipmitool) "\$@"
EOF
chmod +x bin/ipmitool
i=0
until IPMI_PASSWORD=$PW ipmitool -I lanplus -H 127.0.0.1 -p "$bport" \
	-U labadmin -E -C 3 chassis power status >/dev/null 2>&1 ||
	[ $i -ge 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "ipmi_sim answers on 127.0.0.1 UDP port $bport (pid $bmc)" \
	sh -c "IPMI_PASSWORD='$PW' ipmitool -I lanplus -H 127.0.0.1 -p $bport -U labadmin -E -C 3 chassis power status | grep -q 'is off'"

IPMI="POWER_TYPE = ipmi
IPMI_HOST = 127.0.0.1
IPMI_PORT = $bport
IPMI_USER = labadmin
IPMI_CIPHER = 3"

fresh
rm -f argv.rec
conf st-ipmi "$IPMI" "IPMI_PASSWORD = $PW" >ipmi.conf
run_ktest check ipmi.conf
expect_rc 0 "ktest check: POWER_TYPE = ipmi with IPMI_HOST needs no POWER_CYCLE"
PATH=$T/bin:$PATH run_ktest ipmi.conf
expect_rc 0 "a boot whose power goes through the BMC (ipmitool, ipmi_sim) passes"
check "the BMC powered the box on ($(tr '\n' ',' <power))" \
	grep -qx 'on bmc' power
check "ipmitool asked the chassis status, then switched it" \
	sh -c "grep -q 'chassis power status' argv.rec && grep -Eq 'chassis power (on|cycle)' argv.rec"
check "ipmitool got -E and the password in its environment" \
	sh -c "grep -q -- ' -E ' argv.rec && grep -q 'env: IPMI_PASSWORD set' argv.rec"
check "the password was never on ipmitool's command line" \
	sh -c "! grep -q -- '$PW' argv.rec"
check "nor in stdout, LOG_FILE, the journal or the report" \
	sh -c "! grep -rq -- '$PW' out err st-ipmi.log st-ipmi tmp"
run_ktest dump ipmi.conf
check "ktest dump masks IPMI_PASSWORD" \
	sh -c "grep -qx 'IPMI_PASSWORD = \*\*\*' out && ! grep -q -- '$PW' out"

# a wrong password: INFRA naming the user and the BMC, the password nowhere
fresh
conf st-ipmi-pw "$IPMI" "IPMI_PASSWORD = $WRONG" >ipmi-pw.conf
start=$(date +%s)
run_ktest ipmi-pw.conf
expect_rc 3 "a wrong BMC password is lab trouble (INFRA, exit 3)"
check "the message names the user and the BMC" \
	grep -q "BMC 127.0.0.1 port $bport, user 'labadmin'.*session" out
check "no password in stdout, LOG_FILE, the journal or the report" \
	sh -c "! grep -rq -e '$WRONG' -e '$PW' out err st-ipmi-pw.log st-ipmi-pw tmp"
check "and the run ended promptly ($(( $(date +%s) - start )) s)" \
	test $(( $(date +%s) - start )) -lt 20

# IPMI_PASSWORD_FILE: ipmitool -f
printf '%s\n' "$PW" >bmc.pw
chmod 600 bmc.pw
fresh
rm -f argv.rec
conf st-ipmi-f "$IPMI" "IPMI_PASSWORD_FILE = $T/bmc.pw" \
	"POWEROFF_ON_SUCCESS = 1" >ipmi-f.conf
PATH=$T/bin:$PATH run_ktest ipmi-f.conf
expect_rc 0 "IPMI_PASSWORD_FILE: the boot passes"
check "ipmitool read the password from the file (-f)" \
	sh -c "grep -q -- '-f $T/bmc.pw' argv.rec && ! grep -q 'env: IPMI_PASSWORD' argv.rec"
check "POWEROFF_ON_SUCCESS left the chassis off" \
	sh -c "grep -q 'chassis power off' argv.rec && IPMI_PASSWORD='$PW' ipmitool -I lanplus -H 127.0.0.1 -p $bport -U labadmin -E -C 3 chassis power status | grep -q 'is off'"

# no IPMI_HOST: ktest check names it
conf st-nohost "POWER_TYPE = ipmi" >nohost.conf
run_ktest check nohost.conf
expect_rc 2 "POWER_TYPE = ipmi without IPMI_HOST fails ktest check (exit 2)"
check "naming IPMI_HOST" grep -q IPMI_HOST err
conf st-nopdu "POWER_TYPE = pdudaemon" >nopdu.conf
run_ktest check nopdu.conf
expect_rc 2 "POWER_TYPE = pdudaemon without its PDU and port fails ktest check"
check "naming PDUDAEMON_PDU and PDUDAEMON_PORT" \
	sh -c "grep -q PDUDAEMON_PDU err && grep -q PDUDAEMON_PORT err"

took=$(( $(date +%s) - t_start ))
check "the whole test took ${took} s (under 60)" test "$took" -lt 60
finish
