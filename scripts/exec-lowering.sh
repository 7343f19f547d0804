#!/bin/sh
# How soon after its exec a process of a program learned to run CPU-bound is lowered,
# and what each such exec costs the daemon: a daemon with the built-in configuration
# (learning on) and a store of its own, a copy of dash under a name of its own run
# CPU-bound four times (the habits learn it), then spawned RUNS times more, each polled
# for its nice value every 0.2 ms from the spawn's return; prints each time and their
# median. Then 500 short runs of it, and 500 of another copy the daemon does not know,
# each set beside the daemon's CPU time (all its threads, /proc/PID/task/*/schedstat)
# over them: its work per exec of a learned program and of an unknown one. Needs root;
# stops the daemon (which restores everything) and removes its files at the end.
#   sudo scripts/exec-lowering.sh [RUNS]   (SCHEDLAB=path/to/schedlab, default the release build)
set -eu
RUNS=${1:-20}
SCHEDLAB=${SCHEDLAB:-$(dirname "$0")/../target/release/schedlab}
DIR=$(mktemp -d /tmp/schedlab-exec-lowering.XXXXXX)
"$SCHEDLAB" run --store "$DIR/s.db" --socket "$DIR/s.sock" > "$DIR/daemon.log" 2>&1 &
DAEMON=$!
trap 'kill -INT $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null; rm -rf "$DIR"' EXIT
while [ ! -S "$DIR/s.sock" ]; do sleep 0.1; done
cp /bin/dash "$DIR/sl-lowering-hog"
for i in 1 2 3 4; do "$DIR/sl-lowering-hog" -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; done
python3 - "$DIR/sl-lowering-hog" "$RUNS" <<'PY'
import os, statistics, subprocess, sys, time
hog, runs = sys.argv[1], int(sys.argv[2])
times = []
for _ in range(runs):
    p = subprocess.Popen([hog, '-c', 'while :; do :; done'])
    start = time.perf_counter()
    while os.getpriority(os.PRIO_PROCESS, p.pid) != 19 and time.perf_counter() - start < 5:
        time.sleep(0.0002)
    times.append((time.perf_counter() - start) * 1e3)
    p.kill()
    p.wait()
print("lowered after the exec (ms):", " ".join(f"{t:.2f}" for t in times))
print(f"median {statistics.median(times):.2f} ms, max {max(times):.2f} ms over {runs} runs")
PY
cp /bin/dash "$DIR/sl-unknown"
daemon_ns() { cat /proc/$DAEMON/task/*/schedstat | awk '{ s += $1 } END { printf "%d", s }'; }
for kind in unknown lowering-hog unknown lowering-hog; do
    before=$(daemon_ns)
    i=0
    while [ $i -lt 500 ]; do "$DIR/sl-$kind" -c 'i=0; while [ $i -lt 300 ]; do i=$((i+1)); done'; i=$((i+1)); done
    sleep 0.5
    echo "daemon CPU per exec of sl-$kind: $(( ($(daemon_ns) - before) / 500000 )) us over 500 execs"
done

