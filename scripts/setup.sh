#!/usr/bin/env bash
# Installs what building, testing and running schedlab needs, and only what is missing,
# so it is cheap to run before every `make run` and `make test` (and works unattended:
# CI=true, no standard input). `setup.sh --vm` also fetches the kernel the VM tests boot.
#
#   build-essential, pkg-config    the C toolchain some crates build with
#   clang, libelf-dev, zlib1g-dev  building the live world's BPF programs (crates/live)
#   clang-19                       building the sched_ext scheduler (crates/ext; clang 14 is too old)
#   qemu-system-x86, busybox-static, cpio, zstd, xz-utils
#                                  the VM with a sched_ext kernel the scheduler's tests run in
#                                  (scripts/vm.sh fetches the kernel and a newer qemu, scripts/vm-run.sh boots it)
#   bpftool                        regenerating crates/ext/src/bpf/vmlinux.h (scripts/gen-vmlinux-h.sh)
#   rt-tests                       the real `hackbench`, to compare with the simulator
#   rt-app                         runs the same rt-app JSON workloads on the real machine
#   bpftrace                       the baseline `schedlab bench overhead` compares the observer with
#   systemd                        systemd-analyze, which checks the unit in dist/ (crates/cli/tests/service.rs)
set -euo pipefail

DEB_PACKAGES="build-essential pkg-config clang clang-19 libelf-dev zlib1g-dev rt-tests rt-app bpftrace systemd
    qemu-system-x86 busybox-static cpio zstd xz-utils bpftool"
# The oldest Rust that builds the workspace (rust-version in Cargo.toml).
RUST_MIN="1.89"

say() { echo "setup: $*" >&2; }

install_debian_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        say "not a Debian-like system: make sure the equivalents of these are installed: $DEB_PACKAGES"
        return 0
    fi
    local missing=() p
    for p in $DEB_PACKAGES; do
        if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != "installed" ]; then
            missing+=("$p")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0

    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            say "missing packages: ${missing[*]}; run as root: apt-get install -y ${missing[*]}"
            exit 1
        fi
    fi
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
}

check_rust() {
    # rustup installs into ~/.cargo/bin, which a non-login shell may not have on PATH.
    if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        say "no Rust toolchain (cargo) found. Install Rust $RUST_MIN or later with rustup"
        say "(https://rustup.rs: curl --proto '=https' -sSf https://sh.rustup.rs | sh -s -- -y),"
        say "then open a new shell or run: source \"\$HOME/.cargo/env\""
        exit 1
    fi
    local have
    have=$(rustc --version | awk '{print $2}')
    if [ "$(printf '%s\n%s\n' "$RUST_MIN" "$have" | sort -V | head -n1)" != "$RUST_MIN" ]; then
        say "Rust $have is older than $RUST_MIN, which the workspace needs: run 'rustup update stable'"
        exit 1
    fi
}

install_debian_packages
check_rust
# With --vm (make test): the VM's sched_ext kernel too, fetched once and cached.
if [ "${1:-}" = --vm ]; then
    "$(dirname "$0")/vm.sh" >/dev/null
fi
