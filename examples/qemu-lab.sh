#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Sets up the lab that examples/qemu-bisect.conf bisects, on this machine:
# Debian's linux-source-6.1 as a git tree with a synthetic series of 32
# commits on top (tests/lab/series.sh: a build break at s8-s9, a warning at
# s13, a boot regression at s18 fixed at s24), the lab's whole tinyconfig,
# and a busybox initramfs for the built-in qemu box. Everything goes under
# ${KTEST_LAB:-/var/tmp/ktest-lab}; a second run reuses it.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
sh "$here/tests/lab/series.sh" tree >/dev/null
sh "$here/tests/lab/series.sh" config >/dev/null
sh "$here/tests/lab/initramfs.sh" >/dev/null
echo "qemu-lab: ready in ${KTEST_LAB:-/var/tmp/ktest-lab}"
