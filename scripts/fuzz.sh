#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets, cargo-fuzz on libFuzzer) for SECONDS each
# (default 15), starting from the corpus kept in fuzz/corpus/TARGET, with memory bounded
# (1 GiB RSS, 64 KiB inputs, 10 s per input). New inputs go to a scratch directory, so
# the repository's corpus stays as committed. Fails on the first crash, leak or
# timeout, printing libFuzzer's report (the input is in fuzz/artifacts/TARGET/).
# Installs the nightly toolchain and cargo-fuzz if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
seconds=${1:-15}
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cargo +nightly fuzz build -O 2>&1 | tail -1
for target in $(cargo +nightly fuzz list); do
    mkdir -p "$scratch/$target"
    if ! out=$(cargo +nightly fuzz run -O "$target" "$scratch/$target" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=1024 -max_len=65536 -timeout=10 2>&1); then
        echo "$out" | tail -60
        echo "fuzz: $target failed" >&2
        exit 1
    fi
    echo "fuzz: $target: $(echo "$out" | grep -o 'Done [0-9]* runs in [0-9]* second(s)' | tail -1)"
done
