#!/bin/bash
# Measures what the kernel leaves fair tasks next to a real-time hog: runs a small rt-app
# file whose threads are pinned to CPU 1 for 3 s, records every context switch on CPU 1
# with bpftrace (itself pinned to CPU 0), and prints who ran on CPU 1 when, until the
# real-time thread ends: stretches of the watched threads (other tasks' slices of less
# than 2 ms are folded into them) and the stretches between them (idle or other tasks).
#
#   scripts/rt-throttle-trace.sh hogs    SCHED_FIFO hog + SCHED_OTHER hog
#   scripts/rt-throttle-trace.sh alone   SCHED_FIFO hog alone
#
# Needs root (real-time threads, eBPF), rt-app and bpftrace. Bounded: rt-app is killed
# after 10 s, bpftrace after 20 s; the temporary directory is removed on exit. It only
# reads kernel settings (/proc/sys/kernel/sched_rt_*), never writes them.
set -euo pipefail

case "${1:-}" in
    hogs) fair='"fair": {"policy": "SCHED_OTHER", "cpus": [1], "loop": 1, "phases": {"p": {"runtime": 3000000}}},' ;;
    alone) fair='' ;;
    *) echo "usage: $0 hogs|alone" >&2; exit 2 ;;
esac
for tool in rt-app bpftrace taskset python3; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is not installed" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "$0: needs root (SCHED_FIFO threads, eBPF)" >&2; exit 1; }

dir=$(mktemp -d)
bt=
cleanup() {
    [ -n "$bt" ] && kill -INT "$bt" 2>/dev/null && wait "$bt" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

cat >"$dir/w.json" <<EOF
{"global": {"duration": -1, "lock_pages": false, "calibration": 20, "logdir": "$dir", "log_basename": "w"},
 "tasks": {$fair
  "fifo": {"policy": "SCHED_FIFO", "priority": 10, "cpus": [1], "loop": 1, "phases": {"p": {"runtime": 3000000}}}}}
EOF
echo "kernel $(uname -r): sched_rt_runtime_us=$(cat /proc/sys/kernel/sched_rt_runtime_us)" \
    "sched_rt_period_us=$(cat /proc/sys/kernel/sched_rt_period_us)"

timeout 20 taskset -c 0 bpftrace -e 'tracepoint:sched:sched_switch /cpu == 1/ {
    printf("%llu %s %d\n", nsecs, args->next_comm, args->next_pid); }' >"$dir/switches" 2>/dev/null &
bt=$!
sleep 4 # bpftrace attaches
timeout 10 rt-app "$dir/w.json" >"$dir/rt-app.out" 2>&1
sleep 0.5
kill -INT "$bt" && wait "$bt" || true
bt=
if pgrep -x rt-app >/dev/null; then
    echo "$0: an rt-app process is still running" >&2
    exit 1
fi

python3 - "$dir/switches" <<'EOF'
import sys
rows = []
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 3 and p[0].isdigit():
        rows.append((int(p[0]), p[1]))
# Each switch starts a stretch of its next task, until the next switch.
runs = [(a[0], b[0], a[1]) for a, b in zip(rows, rows[1:])]
watched = ("fifo", "fair")
start = min(a for a, _, c in runs if c in watched)
# Until the real-time thread ends (a fair thread then runs alone).
end = max(b for _, b, c in runs if c == "fifo")
blocks = []  # [start, end, label, {label: ns}]
for a, b, c in runs:
    if b <= start or a >= end:
        continue
    label = c if c in watched else ("idle" if c.startswith("swapper") else "other")
    if blocks and (label == blocks[-1][2] or (label not in watched and b - a < 2_000_000
                                              and blocks[-1][2] in watched)):
        blocks[-1][1] = b
        blocks[-1][3][label] = blocks[-1][3].get(label, 0) + b - a
    else:
        blocks.append([a, b, label, {label: b - a}])
print(f"{'from ms':>10} {'to ms':>10} {'length':>9}  on CPU 1 (ms)")
for a, b, label, parts in blocks:
    if b - a < 500_000:
        continue
    what = ", ".join(f"{k} {v / 1e6:.2f}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1]))
    print(f"{(a - start) / 1e6:10.3f} {(b - start) / 1e6:10.3f} {(b - a) / 1e6:9.3f}  {what}")
EOF
