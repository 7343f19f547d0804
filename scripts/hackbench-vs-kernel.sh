#!/usr/bin/env bash
# Times hackbench's defaults (10 groups x 20 senders x 20 receivers x 100 loops = 400 000
# messages of 100 bytes over pipes) on this machine's kernel and in the simulator (EEVDF,
# this machine's CPU count), REPS times each, interleaved, and prints the medians and
# their ratio. Run from the repository root after a release build (`make hackbench-ratio`).
set -euo pipefail
REPS=${REPS:-7}
bin=${SCHEDLAB:-target/release/schedlab}
command -v hackbench >/dev/null || { echo "hackbench (Debian package rt-tests) is missing: run scripts/setup.sh" >&2; exit 1; }
[ -x "$bin" ] || { echo "$bin is missing: run cargo build --release -p schedlab-cli" >&2; exit 1; }
cpus=$(nproc)
real=() sim=()
for _ in $(seq "$REPS"); do
    # hackbench prints "Time: S" (seconds) for the message-passing phase.
    real+=("$(hackbench -g 10 -l 100 -p | awk '/^Time:/ {print $2}')")
    # wall_ns: host time the simulator took for the whole run.
    sim+=("$("$bin" simulate hackbench:groups=10,fds=20,loops=100,size=100,ipc=pipe --cpus "$cpus" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["wall_ns"] / 1e9)')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
r=$(median "${real[@]}")
s=$(median "${sim[@]}")
echo "kernel hackbench -g 10 -l 100 -p: median ${r} s over $REPS runs (${real[*]})"
echo "simulated, $cpus CPUs, eevdf:     median ${s} s over $REPS runs (${sim[*]})"
awk -v r="$r" -v s="$s" 'BEGIN {printf "the simulator is %.1fx faster than the kernel\n", r / s}'
