#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Sets up the lab that examples/qemu-bisect.conf bisects, on this machine:
# Debian's linux-source-6.1 as a git tree with a synthetic series of 32
# commits on top (tests/lab/series.sh: a build break at s8-s9, a warning at
# s13, a boot regression at s18 fixed at s24, KTEST_LAB_BREAK at s27), the
# lab's whole tinyconfig, the configs examples/qemu-config-bisect.conf and
# examples/qemu-min-config.conf start from (that config plus 25 harmless
# option changes, with and without CONFIG_KTEST_LAB_BREAK=y), and a busybox
# initramfs for the built-in qemu box. Everything goes under
# ${KTEST_LAB:-/var/tmp/ktest-lab}; a second run reuses it.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
s="$here/tests/lab/series.sh"
tree=$(sh "$s" tree)
full=$(sh "$s" config)
bad=$(sh "$s" badconfig)
harmless=$(sh "$s" harmlessconfig)
initrd=$(sh "$here/tests/lab/initramfs.sh")
echo "qemu-lab: the tree (at the tip, s32):  $tree"
echo "qemu-lab: its whole tinyconfig:        $full"
echo "qemu-lab: the bad config:              $bad"
echo "qemu-lab: without KTEST_LAB_BREAK:     $harmless"
echo "qemu-lab: the initramfs:               $initrd"
echo "qemu-lab: ready in ${KTEST_LAB:-/var/tmp/ktest-lab}"
