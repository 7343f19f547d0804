#!/usr/bin/env bash
# The sched_ext kernel for the VM harness (issue 12), fetched and cached: Debian's
# trixie-backports kernel (7.3.x, CONFIG_SCHED_CLASS_EXT=y, BTF), its version pinned by
# what the `linux-image-amd64` meta-package of that suite depends on, from the mirror
# the machine's apt already uses, through a private sources list, lists and archive
# directory: the system's apt configuration and state are left untouched.
#
# Prints the cache directory, which holds `vmlinuz` and `config` (what libbpf reads as
# /boot/config-$(uname -r) inside the VM), `version`, `qemu/` (see below) and `modules/`: the kernel modules
# the VM loads at boot, uncompressed (only `unix_diag.ko`: the daemon asks sock_diag for
# the peer of a UNIX socket, and Debian builds that as a module, which a distribution
# loads on demand but an initramfs without modules cannot). Idempotent: a cached kernel
# of the pinned version is not fetched again.
#
# qemu: the system's (bookworm: 7.2) cannot run the VM with a host thread per vCPU:
# now and then a vCPU runs a stale translation of kernel code another vCPU has just
# live-patched (the static keys sched_ext flips at each load and unload) and the guest
# panics with "Oops: int3" (here, 30 cycles of load and unload beside hackbench
# panicked 7.2 within 50 s, and 10.0 not in 85 cycles). So the qemu of the system's
# backports suite (bookworm-backports: 10.0) is fetched the same private way and
# unpacked under `qemu/` (qemu-system-x86, -common and -data; the libraries it links
# are bookworm's, which the system's qemu-system-x86 brought). Where that suite has no
# qemu, `qemu/` stays empty and vm-run.sh uses the system's, one host thread for both
# vCPUs.
#
# Facts it relies on (checked 2026-11-24): the image package
# `linux-image-VERSION-amd64` is a wrapper whose kernel is in `linux-binary-VERSION-amd64`
# (usr/lib/modules/VERSION-amd64/vmlinuz) and whose config is in
# `linux-base-VERSION-amd64` (usr/lib/modules/VERSION-amd64/config), and whose modules
# are in `linux-modules-VERSION-amd64` (107 MB; its .deb is deleted once the module is
# taken out, xz-compressed as CONFIG_MODULE_COMPRESS_XZ says); bookworm's
# debian-archive-keyring verifies trixie.
set -euo pipefail
cache=${SCHEDLAB_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/vm}
mkdir -p "$cache/kernel"

. "$(dirname "$0")/private-apt.sh"

# qemu from the system's backports suite (see above), once per version.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ -n "$codename" ]; then
    apt_dir="$cache/apt-qemu"
    private_apt "$apt_dir" "$codename-backports"
    qemu_version=$(apt-cache "${apt_opts[@]}" show qemu-system-x86 2>/dev/null \
        | sed -n 's/^Version: //p' | head -n 1 || true)
    if [ -n "$qemu_version" ] && [ "$(cat "$cache/qemu/version" 2>/dev/null)" != "$qemu_version" ]; then
        (cd "$apt_dir/archives" && apt-get -q "${apt_opts[@]}" download \
            qemu-system-x86 qemu-system-common qemu-system-data >&2)
        rm -rf "$cache/qemu" && mkdir -p "$cache/qemu"
        for deb in "$apt_dir/archives"/qemu-system-*.deb; do
            dpkg-deb -x "$deb" "$cache/qemu"
        done
        rm -f "$apt_dir/archives"/qemu-system-*.deb
        echo "$qemu_version" > "$cache/qemu/version"
    fi
fi

apt_dir="$cache/apt"
private_apt "$apt_dir" trixie-backports

# The version the meta-package pins: linux-image-amd64 depends on linux-image-V-amd64.
flavour=$(apt-cache "${apt_opts[@]}" depends linux-image-amd64 2>/dev/null \
    | grep -oE 'linux-image-[0-9][^ ]*-amd64' | head -n 1)
[ -n "$flavour" ] || { echo "vm.sh: no linux-image-amd64 in trixie-backports" >&2; exit 1; }
version=${flavour#linux-image-}
modules=(net/unix/unix_diag.ko)
if [ "$(cat "$cache/version" 2>/dev/null)" = "$version" ] && [ -s "$cache/vmlinuz" ] && [ -s "$cache/config" ] \
    && [ -s "$cache/modules/unix_diag.ko" ]; then
    echo "$cache"
    exit 0
fi
(cd "$apt_dir/archives" && apt-get -q "${apt_opts[@]}" download \
    "linux-binary-$version" "linux-base-$version" "linux-modules-$version" >&2)
rm -rf "$cache/kernel" "$cache/modules" && mkdir -p "$cache/kernel" "$cache/modules"
for deb in "$apt_dir/archives"/linux-binary-"$version"_*.deb "$apt_dir/archives"/linux-base-"$version"_*.deb; do
    dpkg-deb -x "$deb" "$cache/kernel"
done
unpacked=$(mktemp -d)
dpkg-deb -x "$apt_dir/archives"/linux-modules-"$version"_*.deb "$unpacked"
for m in "${modules[@]}"; do
    xz -dc "$unpacked/usr/lib/modules/$version/kernel/$m.xz" > "$cache/modules/$(basename "$m")"
done
rm -rf "$unpacked" "$apt_dir/archives"/linux-modules-"$version"_*.deb
cp "$cache/kernel/usr/lib/modules/$version/vmlinuz" "$cache/vmlinuz"
cp "$cache/kernel/usr/lib/modules/$version/config" "$cache/config"
grep -q '^CONFIG_SCHED_CLASS_EXT=y' "$cache/config" \
    || { echo "vm.sh: kernel $version has no CONFIG_SCHED_CLASS_EXT" >&2; exit 1; }
echo "$version" > "$cache/version"
echo "$cache"
