#!/usr/bin/env bash
# Builds the oldest kernel schedlab's sched_ext scheduler supports, 6.12, for the VM
# harness, to check that the one BPF object loads there too (CO-RE, and the dispatch
# kfuncs' names before 6.13's renames): Debian's 6.12 (trixie) is built without
# CONFIG_SCHED_CLASS_EXT, so its source (`linux-source-6.12`, from trixie on the mirror
# the machine's apt uses, through a private apt as scripts/vm.sh does) is configured
# from x86_64_defconfig plus what the scheduler and the daemon need, and built.
#
# Not part of `make test`: it takes about 15 minutes on 2 cores, and 5 GB of disk
# meanwhile. Prints the directory to give scripts/vm-run.sh as SCHEDLAB_VM_KERNEL:
# `vmlinuz`, `config`, `version` and an empty `modules/` (UNIX_DIAG is built in).
# Idempotent.
# Installs what the build needs where missing: flex, bison, bc, dwarves (pahole, for
# BTF), libelf-dev, libssl-dev.
set -euo pipefail
cache=${SCHEDLAB_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/vm}/kernel-6.12
mkdir -p "$cache/modules"
# sched_ext and its prerequisites (BTF from DWARF by pahole); the observer's
# tracepoint and fentry programs; what the daemon and the harness use (UNIX_DIAG for a
# socket's peer, built in: the VM loads no modules here; SCHED_DEBUG for
# /proc/PID/sched, where the harness sees which tasks sched_ext runs); the tick of the
# distributions' kernels (Debian's: 250 Hz; the defconfig's 1000 Hz gave bare Linux a
# different hackbench).
options=(
    -e BPF_SYSCALL -e BPF_JIT -e BPF_JIT_ALWAYS_ON
    -e DEBUG_INFO -d DEBUG_INFO_NONE -e DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_BTF
    -e SCHED_CLASS_EXT
    -e FTRACE -e FUNCTION_TRACER -e DYNAMIC_FTRACE -e KPROBES -e KPROBE_EVENTS -e BPF_EVENTS
    -e UNIX_DIAG -e INET_DIAG -e POSIX_MQUEUE -e SYSVIPC -e CGROUPS -e CGROUP_BPF
    -e SCHED_DEBUG -d HZ_1000 -e HZ_250
)
# Built already with these options.
[ -s "$cache/vmlinuz" ] && [ "$(cat "$cache/options" 2>/dev/null)" = "${options[*]}" ] && { echo "$cache"; exit 0; }

missing=()
for pkg in flex bison bc dwarves libelf-dev libssl-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2

. "$(dirname "$0")/private-apt.sh"
private_apt "$cache/apt" trixie
(cd "$cache/apt/archives" && apt-get -q "${apt_opts[@]}" download linux-source-6.12 >&2)
rm -rf "$cache/src" && mkdir -p "$cache/src"
dpkg-deb --fsys-tarfile "$cache/apt/archives"/linux-source-6.12_*.deb \
    | tar -x -O --wildcards './usr/src/linux-source-6.12.tar.xz' | tar -xJ -C "$cache/src" --strip-components=1
rm -f "$cache/apt/archives"/linux-source-6.12_*.deb

cd "$cache/src"
make -s x86_64_defconfig
scripts/config "${options[@]}"
make -s olddefconfig
grep -q '^CONFIG_SCHED_CLASS_EXT=y' .config || { echo "vm-kernel-6.12.sh: SCHED_CLASS_EXT did not stick" >&2; exit 1; }
make -s -j"$(nproc)" bzImage >&2
cp arch/x86/boot/bzImage "$cache/vmlinuz"
cp .config "$cache/config"
make -s kernelrelease > "$cache/version"
echo "${options[*]}" > "$cache/options"
# The tree with its debug information is 5 GB; the VM needs only the kernel and config.
cd "$cache" && rm -rf "$cache/src"
echo "$cache"
