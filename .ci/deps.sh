#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Installs the Debian 12 packages that ktest's build and tests need, when
# they are missing (a no-op when everything is there). Run as root.
# diffstat is ktest.pl's: its patchcheck runs it (make bench).
set -eu

PKGS="
make gcc clang pkg-config git perl xz-utils
libconfuse-dev libgit2-dev libssh-dev libserialport-dev libpcre2-dev
libcmocka-dev libclang-rt-14-dev valgrind openssh-server
linux-source-6.1 flex bison bc libelf-dev ccache jq
qemu-system-x86 busybox-static
libcurl4-openssl-dev pdudaemon ipmitool openipmi ser2net conmux iproute2 distcc
debhelper dpkg-dev fakeroot python3-jsonschema bash-completion man-db groff-base
diffstat
"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "deps: everything is installed"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing:$missing" >&2
	echo "deps: run 'make deps' as root (or install them with apt-get)" >&2
	exit 1
fi

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
