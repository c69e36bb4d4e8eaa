#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A real OpenSSH sshd for the tests, on 127.0.0.1 and a free unprivileged
# port, with everything it reads or writes inside one fixture directory.
#
#   sshd.sh start DIR   makes DIR (keys, config), starts sshd, prints the
#                       port; DIR/sshd.pid holds the daemon's pid
#   sshd.sh stop DIR    kills exactly that pid (after checking it is the sshd
#                       started with DIR/sshd_config), waits for it to go
#
# What DIR holds for the tests:
#   host_ed25519[.pub]   the server's host key
#   other_host.pub       another host key, for "changed host key" tests
#   id_ed25519[.pub]     a client key that authorized_keys accepts
#   wrong_ed25519[.pub]  a client key that it does not accept
#   known_hosts          [127.0.0.1]:PORT with the server's key
#   ssh_config           an empty client config (so ~/.ssh/config is not read)
#   port, sshd_config, sshd.log
#
# Only the user running this may log in (AllowUsers), with id_ed25519 only:
# the authorized_keys file is absolute, so without AllowUsers any account
# would accept that key. StrictModes is off because the fixture lives under
# /tmp, which is world-writable. Needs root for /run/sshd (sshd's privilege
# separation directory) unless it exists already.
set -eu

SSHD=${SSHD:-/usr/sbin/sshd}
# alive, pick_port
. "$(dirname "$0")/ports.sh"

die() {
	echo "sshd.sh: $*" >&2
	exit 1
}

usage() {
	die "usage: sshd.sh start DIR | stop DIR"
}

keygen() {
	rm -f "$1" "$1.pub"
	ssh-keygen -q -t ed25519 -N '' -C "$2" -f "$1" </dev/null
}

start() {
	dir=$1
	[ -x "$SSHD" ] ||
		die "$SSHD not found: install openssh-server (make deps)"
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if [ -f "$dir/sshd.pid" ] && alive "$(cat "$dir/sshd.pid")"; then
		die "an sshd for $dir runs already (pid $(cat "$dir/sshd.pid"))"
	fi
	if [ ! -d /run/sshd ]; then
		mkdir -p /run/sshd 2>/dev/null ||
			die "/run/sshd is missing; cannot make it (not root?)"
		chmod 755 /run/sshd
	fi

	keygen "$dir/host_ed25519" "ktest lab host"
	keygen "$dir/other_host" "ktest lab other host"
	keygen "$dir/id_ed25519" "ktest lab client"
	keygen "$dir/wrong_ed25519" "ktest lab wrong client"
	cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
	: >"$dir/ssh_config"
	user=$(id -un)
	# the sftp-server program, as on a Debian box; else sshd's own
	sftp=/usr/lib/openssh/sftp-server
	[ -x $sftp ] || sftp=internal-sftp

	# A random free port: two runs at once rarely collide, and when they
	# do, sshd fails to bind and we move on.
	tries=0
	while :; do
		tries=$((tries + 1))
		[ $tries -le 30 ] || die "sshd could not bind any of 30 ports (last tried $port)"
		port=$(pick_port) || die "no free port found below the ephemeral range"

		cat >"$dir/sshd_config" <<-CONF
		# ktest test sshd: everything in $dir
		Port $port
		ListenAddress 127.0.0.1
		HostKey $dir/host_ed25519
		PidFile $dir/sshd.pid
		AuthorizedKeysFile $dir/authorized_keys
		AllowUsers $user
		StrictModes no
		PubkeyAuthentication yes
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		PermitRootLogin prohibit-password
		UsePAM no
		UseDNS no
		PrintMotd no
		PermitUserEnvironment no
		MaxStartups 100
		MaxSessions 100
		Subsystem sftp $sftp
		LogLevel VERBOSE
		CONF
		"$SSHD" -t -f "$dir/sshd_config" || die "bad sshd_config"

		rm -f "$dir/sshd.pid" "$dir/sshd.log"
		# Without -D, sshd daemonises first and binds after: it exits 0
		# whether or not the port was taken meanwhile (by a test that
		# runs beside this one), and the daemon that cannot bind writes
		# no PidFile. With -D, run in the background (in a session of
		# its own, as a daemon), it writes PidFile once its socket
		# listens, or exits when it cannot bind.
		setsid "$SSHD" -D -f "$dir/sshd_config" -E "$dir/sshd.log" \
			</dev/null >/dev/null 2>&1 &
		spid=$!
		i=0
		while [ ! -s "$dir/sshd.pid" ] && alive "$spid"; do
			i=$((i + 1))
			if [ $i -gt 600 ]; then
				kill "$spid" 2>/dev/null || :
				die "sshd (pid $spid) did not write $dir/sshd.pid in 30 s: $(tail -n 3 "$dir/sshd.log" 2>/dev/null)"
			fi
			sleep 0.05
		done
		[ -s "$dir/sshd.pid" ] && break
		wait "$spid" 2>/dev/null || :
		grep -q "Cannot bind any address" "$dir/sshd.log" ||
			die "sshd exited at its start: $(tail -n 3 "$dir/sshd.log" 2>/dev/null)"
	done

	echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$dir/host_ed25519.pub")" \
		>"$dir/known_hosts"
	echo $port >"$dir/port"
	echo $port
}

stop() {
	dir=$1
	pidfile=$dir/sshd.pid
	[ -f "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	case $pid in
	'' | *[!0-9]*) die "$pidfile: not a pid: '$pid'" ;;
	esac
	# The pid may have been reused since: kill it only if it is our sshd.
	if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null |
		grep -qF -- "$dir/sshd_config"; then
		kill "$pid" 2>/dev/null || :
		i=0
		while alive "$pid"; do
			i=$((i + 1))
			if [ $i -gt 100 ]; then
				kill -9 "$pid" 2>/dev/null || :
				break
			fi
			sleep 0.05
		done
	fi
	rm -f "$pidfile"
}

[ $# -eq 2 ] || usage
case $1 in
start) start "$2" ;;
stop) stop "$(cd "$2" 2>/dev/null && pwd || echo "$2")" ;;
*) usage ;;
esac
