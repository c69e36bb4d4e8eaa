#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The lab's initramfs: busybox-static and an /init whose behaviour the
# kernel command line chooses, for booting the lab kernel in qemu.
#
#   initramfs.sh          prints the path of the initramfs (a gzip'ed newc
#                         cpio), built on first use and again when this
#                         recipe or busybox changes.
#
# /init reads ktest.mode=MODE from /proc/cmdline (the kernel ignores dotted
# parameters it does not know, and passes none of them to init):
#
#   ok       prints "ktest: booted <uname -r>", then a shell on the console
#            (the default)
#   reboot   prints the booted line, then "reboot -f": with qemu's
#            -no-reboot the box stops, as after a crash with panic=-1
#   panic    init exits: "Kernel panic - not syncing: Attempted to kill init!"
#   oops     a child writes EXCEPTION to LKDTM's debugfs file: a NULL
#            pointer write in the kernel, an Oops with a call trace that
#            kills the child; init prints "ktest: after the oops", then
#            stays up, silent
#   warning  LKDTM's WARNING (a WARN_ON with a call trace), then the
#            booted line; init stays up, silent
#   hang     prints "ktest: hanging" and nothing more, no booted line
#
# Every mode first prints "ktest: mode MODE". The lab kernel (kernel.sh
# config) has what these need: DEVTMPFS, DEBUG_FS and LKDTM.
#
# The archive is written by the kernel's own usr/gen_init_cpio (compiled
# from the lab tree), which makes /dev/console without root.
#
# Environment: KTEST_LAB (default /var/tmp/ktest-lab) holds everything;
# KTEST_BUSYBOX (default /bin/busybox) must be a static busybox.
set -eu

lab=${KTEST_LAB:-/var/tmp/ktest-lab}
busybox=${KTEST_BUSYBOX:-/bin/busybox}
here=$(cd "$(dirname "$0")" && pwd)
# Bump when the recipe below changes (the /init text is checked as well).
recipe=1

die() {
	echo "initramfs.sh: $*" >&2
	exit 1
}

write_init() {
	cat >"$1" <<'EOF'
#!/bin/sh
# the ktest lab's /init: see tests/lab/initramfs.sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mode=ok
for w in $(cat /proc/cmdline); do
	case $w in
	ktest.mode=*) mode=${w#ktest.mode=} ;;
	esac
done
echo "ktest: mode $mode"
case $mode in
ok)
	echo "ktest: booted $(uname -r)"
	while :; do
		setsid cttyhack sh
	done
	;;
reboot)
	echo "ktest: booted $(uname -r)"
	echo "ktest: rebooting"
	reboot -f
	;;
panic)
	echo "ktest: init exits"
	exit 1
	;;
oops)
	mount -t debugfs debugfs /sys/kernel/debug
	sh -c 'echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT'
	echo "ktest: after the oops"
	;;
warning)
	mount -t debugfs debugfs /sys/kernel/debug
	echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
	echo "ktest: booted $(uname -r)"
	;;
hang)
	echo "ktest: hanging"
	;;
*)
	echo "ktest: unknown mode '$mode' (ok, reboot, panic, oops, warning, hang)"
	;;
esac
while :; do
	sleep 3600
done
EOF
}

# The gen_init_cpio list: busybox, a link per applet /init uses, /init.
write_list() {
	cat <<EOF
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
dir /proc 0755 0 0
dir /sys 0755 0 0
dir /bin 0755 0 0
dir /tmp 1777 0 0
file /bin/busybox $busybox 0755 0 0
file /init $1 0755 0 0
EOF
	for a in sh mount cat echo uname setsid cttyhack reboot sleep \
		ls ps dmesg poweroff; do
		echo "slink /bin/$a busybox 0777 0 0"
	done
}

[ -x "$busybox" ] ||
	die "$busybox is missing: apt-get install busybox-static"
if command -v file >/dev/null 2>&1; then
	case $(file -L "$busybox") in
	*dynamically*) die "$busybox is not static: apt-get install busybox-static" ;;
	esac
fi

tree=$(sh "$here/kernel.sh" tree) || die "no lab tree (see kernel.sh)"
mkdir -p "$lab"
exec 9>"$lab/initramfs.lock"
flock 9

tmp=$lab/initramfs.new
rm -rf "$tmp"
mkdir -p "$tmp"
write_init "$tmp/init"
want="recipe $recipe $(stat -L -c '%s %Y %i' "$busybox") $busybox $(cksum <"$tmp/init")"
out=$lab/initramfs.cpio.gz
if [ -f "$out" ] && [ -f "$lab/initramfs.stamp" ] &&
	[ "$(cat "$lab/initramfs.stamp")" = "$want" ]; then
	rm -rf "$tmp"
	echo "$out"
	exit 0
fi

cc -O2 -o "$tmp/gen_init_cpio" "$tree/usr/gen_init_cpio.c" ||
	die "cannot compile $tree/usr/gen_init_cpio.c"
write_list "$tmp/init" >"$tmp/list"
"$tmp/gen_init_cpio" "$tmp/list" >"$tmp/initramfs.cpio" ||
	die "gen_init_cpio failed on $tmp/list"
gzip -9 -n <"$tmp/initramfs.cpio" >"$tmp/initramfs.cpio.gz" ||
	die "gzip failed"
rm -f "$lab/initramfs.stamp"
mv "$tmp/initramfs.cpio.gz" "$out"
echo "$want" >"$lab/initramfs.stamp"
rm -rf "$tmp"
echo "$out"
