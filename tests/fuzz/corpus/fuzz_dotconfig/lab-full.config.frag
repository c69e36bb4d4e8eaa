# ktest lab: on top of tinyconfig, what a qemu-system-x86_64 boot with a
# serial console (console=ttyS0) and a gzip'ed busybox initramfs needs.
CONFIG_64BIT=y
CONFIG_PRINTK=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_RD_GZIP=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_DEVTMPFS=y
CONFIG_DEVTMPFS_MOUNT=y
CONFIG_PROC_FS=y
CONFIG_SYSFS=y
# crash reports as on a distribution kernel: timestamps, symbols in call
# traces, BUG() and WARN() that print
CONFIG_PRINTK_TIME=y
CONFIG_KALLSYMS=y
CONFIG_BUG=y
# the boot tests' crashes (tests/lab/initramfs.sh, ktest.mode=oops, warning):
# echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT
CONFIG_DEBUG_FS=y
CONFIG_RUNTIME_TESTING_MENU=y
CONFIG_LKDTM=y
