# SPDX-License-Identifier: GPL-2.0-only
# Ports for the tests' own servers (sshd, ser2net, pdudaemon, ipmi_sim,
# distccd), sourced by tests/lib.sh and tests/lab/sshd.sh. Safe under
# set -eu. Variables are prefixed by their function's initials.

# Running, and not just a zombie waiting to be reaped (a server whose
# parent is init, or a shell that has not waited for it yet).
alive() {
	kill -0 "$1" 2>/dev/null || return 1
	al_state=$(sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) ||
		return 1
	[ "$al_state" != Z ]
}

# A port bound by nothing, picked at random below the kernel's ephemeral
# range (ip_local_port_range), so that no outgoing connection of a test
# running beside takes it between the pick and the server's bind (a port
# from a socket bound to port 0 and closed is in that range).
pick_port() {
	read -r pp_lo pp_hi </proc/sys/net/ipv4/ip_local_port_range ||
		{ pp_lo=32768; pp_hi=60999; }
	if [ "$pp_lo" -gt 12000 ]; then
		pp_base=10000 pp_n=$((pp_lo - 10000))
	else
		pp_base=$((pp_hi + 1)) pp_n=$((65536 - pp_hi - 1))
	fi
	pp_try=0
	while [ $pp_try -lt 50 ]; do
		pp_try=$((pp_try + 1))
		pp=$((pp_base + $(od -An -N2 -tu2 /dev/urandom) % pp_n))
		[ -z "$(port_inodes "$pp" any)" ] && { echo "$pp"; return 0; }
	done
	return 1
}

# port_inodes PORT tcp|udp|any: the inodes of the sockets bound to PORT
# (TCP: listening; any: in any state, TCP or UDP)
port_inodes() {
	case $2 in
	tcp) pi_files="/proc/net/tcp /proc/net/tcp6" pi_st=0A ;;
	udp) pi_files="/proc/net/udp /proc/net/udp6" pi_st=07 ;;
	*) pi_files="/proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6" pi_st= ;;
	esac
	# shellcheck disable=SC2086
	awk -v port="$(printf '%04X' "$1")" -v st="$pi_st" \
		'FNR > 1 { split($2, a, ":"); if (a[2] == port && (st == "" || $4 == st)) print $10 }' \
		$pi_files 2>/dev/null
}

# owns_port PID PORT tcp|udp: PID holds a socket bound to PORT
owns_port() {
	for op_ino in $(port_inodes "$2" "$3"); do
		for op_fd in /proc/"$1"/fd/*; do
			[ "$(readlink "$op_fd" 2>/dev/null)" = "socket:[$op_ino]" ] &&
				return 0
		done
	done
	return 1
}

# on_free_port START tcp|udp: runs "START PORT" on ports from pick_port
# until the server it starts in the background (its pid in $srv_pid) holds
# the port; a server that dies, or holds nothing in 10 s (the port taken
# meanwhile), is stopped and the next port tried, 10 at most. The port
# is left in $port.
on_free_port() {
	ofp_try=0
	while [ $ofp_try -lt 10 ]; do
		ofp_try=$((ofp_try + 1))
		port=$(pick_port) || return 1
		srv_pid=
		"$1" "$port"
		ofp_i=0
		while [ $ofp_i -lt 200 ] && alive "$srv_pid"; do
			owns_port "$srv_pid" "$port" "$2" && return 0
			sleep 0.05
			ofp_i=$((ofp_i + 1))
		done
		echo "# $1: port $port not held by pid $srv_pid: trying another" >&2
		kill "$srv_pid" 2>/dev/null
		wait "$srv_pid" 2>/dev/null
	done
	return 1
}
