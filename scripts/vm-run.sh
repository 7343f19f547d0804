#!/usr/bin/env bash
# Runs a command in a VM with a sched_ext kernel (the harness of issue 12):
#   scripts/vm-run.sh [--file PATH]... -- COMMAND...
# boots the kernel scripts/vm.sh caches under qemu (TCG: no KVM here; 2 vCPUs, a host
# thread each with the qemu vm.sh fetched; 1 GiB),
# with a busybox initramfs holding the release `schedlab` (on PATH, with the libraries
# it links), the modules scripts/vm.sh cached (loaded at boot) and each PATH at
# /files/<basename> (a program with the libraries it links);
# runs COMMAND with the VM's shell (any shell text may follow `--`), prints its output,
# and exits with its status. The
# kernel's config is at /boot/config-$(uname -r), where libbpf looks for it. A boot
# takes about 7 s; the VM is gone when this returns.
#
# Environment: SCHEDLAB_BIN (default target/release/schedlab), VM_TIMEOUT (s, default 600),
# VM_TCG_THREADS (single or multi host threads for the vCPUs: see below),
# SCHEDLAB_VM_KERNEL (a directory laid out as scripts/vm.sh's cache, with `vmlinuz`,
# `config`, `version` and `modules/`, to boot instead of its kernel: e.g. the 6.12 that
# scripts/vm-kernel-6.12.sh builds; the qemu stays vm.sh's).
set -euo pipefail
cd "$(dirname "$0")/.."
files=()
while [ $# -gt 0 ]; do
    case $1 in
        --file) files+=("$2"); shift 2 ;;
        --) shift; break ;;
        *) echo "usage: $0 [--file PATH]... -- COMMAND..." >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--file PATH]... -- COMMAND..." >&2; exit 2; }
case ${VM_TCG_THREADS:-} in
    ''|single|multi) ;;
    *) echo "vm-run.sh: VM_TCG_THREADS must be single or multi, not '$VM_TCG_THREADS'" >&2; exit 2 ;;
esac
for tool in qemu-system-x86_64 busybox cpio; do
    command -v "$tool" >/dev/null || { echo "vm-run.sh: $tool is missing: apt-get install qemu-system-x86 busybox-static cpio" >&2; exit 1; }
done
bin=${SCHEDLAB_BIN:-target/release/schedlab}
[ -x "$bin" ] || { echo "vm-run.sh: no $bin (make build)" >&2; exit 1; }
cache=$(scripts/vm.sh 2>/dev/null) || cache=$(scripts/vm.sh)
kernel=${SCHEDLAB_VM_KERNEL:-$cache}
version=$(cat "$kernel/version")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"/{bin,proc,sys,dev,tmp,run,boot,files,sys/fs/bpf}
cp /usr/bin/busybox "$root/bin/"
for applet in $(busybox --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
cp "$bin" "$root/bin/schedlab"
# The libraries an ELF program links, at the paths the loader looks for them.
copy_libraries() {
    for lib in $(ldd "$1" 2>/dev/null | grep -oE '/[^ ]+' || true); do
        [ -e "$root$lib" ] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}
copy_libraries "$bin"
cp "$kernel/config" "$root/boot/config-$version"
mkdir -p "$root/lib/modules"
find "$kernel/modules" -name '*.ko' -exec cp {} "$root/lib/modules/" \;
for f in "${files[@]}"; do
    cp -r "$f" "$root/files/$(basename "$f")"
    [ -f "$f" ] && copy_libraries "$f"
done
printf '%s\n' "$*" > "$root/command"
cat > "$root/init" <<'INIT'
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
for m in /lib/modules/*.ko; do [ -e "$m" ] && insmod "$m"; done
cd /files
# A line of its own: the console may put escape sequences before the first.
echo
echo "=== schedlab-vm begin ==="
sh /command
echo "=== schedlab-vm end $? ==="
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.gz"

# A host thread per vCPU (thread=multi) with the qemu scripts/vm.sh fetched (10.0):
# with one thread for both (thread=single), a vCPU runs at half speed whenever the
# other one is busy, so anything measured beside CPU hogs is slowed by the harness
# itself (a client-server with its server reniced by hand: 1.5-2.0 x its unloaded round
# trip with one thread, 1.0-1.4 x with two), and the two vCPUs never truly race.
# The system's qemu 7.2 runs one thread: with a thread per vCPU the guest panics (why:
# scripts/vm.sh). VM_TCG_THREADS=single|multi overrides the choice.
if [ -x "$cache/qemu/usr/bin/qemu-system-x86_64" ]; then
    # Its own firmware files first, then the system's (SeaBIOS, iPXE).
    qemu=("$cache/qemu/usr/bin/qemu-system-x86_64" -L "$cache/qemu/usr/share/qemu" -L /usr/share/qemu)
    threads=${VM_TCG_THREADS:-multi}
else
    qemu=(qemu-system-x86_64)
    threads=${VM_TCG_THREADS:-single}
fi
timeout "${VM_TIMEOUT:-600}" "${qemu[@]}" -machine q35 -accel "tcg,thread=$threads" -smp 2 -m 1024 \
    -nographic -no-reboot -kernel "$kernel/vmlinuz" -initrd "$work/initramfs.gz" \
    -append "console=ttyS0 panic=-1 quiet loglevel=3" > "$work/console" 2>&1 || true
status=$(tr -d '\r' < "$work/console" | sed -n 's/^=== schedlab-vm end \([0-9]*\) ===$/\1/p' | tail -n 1)
tr -d '\r' < "$work/console" | sed -n '/=== schedlab-vm begin ===$/,/^=== schedlab-vm end [0-9]* ===$/p' \
    | sed '1d;$d'
if [ -z "$status" ]; then
    echo "vm-run.sh: the VM ended without the command's status; its console:" >&2
    tail -n 40 "$work/console" >&2
    exit 1
fi
exit "$status"
