#!/usr/bin/env bash
# The live observer's cost on a system-call and context-switch heavy workload:
# `hackbench -g 10 -l 100 -p` (rt-tests) bare, under `schedlab observe`, and under
# bpftrace counting system calls the way the thesis's DTrace script did
# (`@[pid, comm, args->id] = count()`). Rounds are interleaved (bare, observer,
# bpftrace, bare, …) and each mode's median of ROUNDS runs is printed.
#
#   sudo scripts/observer-overhead.sh [ROUNDS]     (default 7; needs root)
#
# Uses target/release/schedlab (built by `cargo build --release` if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-7}"
HACKBENCH=(hackbench -g 10 -l 100 -p)
BIN=target/release/schedlab
[ -x "$BIN" ] || cargo build --release
command -v hackbench >/dev/null || { echo "hackbench missing: apt-get install rt-tests" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "bpftrace missing: apt-get install bpftrace" >&2; exit 1; }

tracer_pid=""
stop_tracer() {
    if [ -n "$tracer_pid" ]; then
        kill -INT "$tracer_pid" 2>/dev/null || true
        wait "$tracer_pid" 2>/dev/null || true
        tracer_pid=""
    fi
}
trap stop_tracer EXIT

start_tracer() { # mode
    case "$1" in
        bare) return 0 ;;
        observer) "$BIN" observe --duration 1h --json >/dev/null 2>&1 & ;;
        bpftrace) bpftrace -e 'tracepoint:raw_syscalls:sys_enter { @[pid, comm, args->id] = count(); }' \
            >/dev/null 2>&1 & ;;
    esac
    tracer_pid=$!
    sleep 3 # loaded and attached
}

run_hackbench() { "${HACKBENCH[@]}" | awk '/^Time:/ { print $2 }'; }

declare -A times
for round in $(seq "$ROUNDS"); do
    for mode in bare observer bpftrace; do
        start_tracer "$mode"
        t=$(run_hackbench)
        stop_tracer
        times[$mode]+="$t "
        echo "round $round $mode: $t s" >&2
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
bare=$(echo "${times[bare]}" | median)
echo "command: ${HACKBENCH[*]}   rounds: $ROUNDS (interleaved), median seconds"
for mode in bare observer bpftrace; do
    m=$(echo "${times[$mode]}" | median)
    awk -v m="$m" -v b="$bare" -v mode="$mode" 'BEGIN { printf "%-9s %.3f s  (%+.1f%% vs bare)\n", mode, m, (m / b - 1) * 100 }'
done
