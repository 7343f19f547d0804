# The sched_ext scheduler's checks, run inside the VM (crates/cli/tests/vm.rs boots it
# with scripts/vm-run.sh): one boot, one `key: value` line per fact the test asserts.
# /files holds hackbench and trial.db (a store with a passing trial of the scheduler).
state() { cat /sys/kernel/sched_ext/state; }
wait_state() {
    for _ in $(seq 1 240); do [ "$(state)" = "$1" ] && return 0; sleep 0.5; done
    return 1
}
# Tasks the sched_ext class schedules now, of all tasks.
ext_tasks() { grep -l 'ext.enabled *: *1' /proc/[0-9]*/sched 2>/dev/null | wc -l; }
all_tasks() { ls -d /proc/[0-9]*/sched | wc -l; }

echo "state-before: $(state)"
schedlab ext run --interval-ms 600000 > /tmp/ext.log 2>&1 &
ext=$!
wait_state enabled
echo "state-loaded: $(state)"
echo "ops: $(cat /sys/kernel/sched_ext/root/ops)"
echo "ext-tasks-loaded: $(ext_tasks) of $(all_tasks)"
/files/hackbench -g 2 -f 10 -l 50 > /tmp/hackbench.log 2>&1
echo "hackbench-rc: $?"
schedlab bench deps --load 2 --iterations 2 --warmup 1 --no-reference --sort-len 400 --time-limit 300s --json > /tmp/deps.json 2>/tmp/deps.err
echo "deps-rc: $?"
echo "deps-kinds: $(grep -o '"kind": *"[a-z]*"' /tmp/deps.json | sed 's/.*"\([a-z]*\)"$/\1/' | sort -u | tr '\n' ' ')"
kill -INT $ext
wait $ext
echo "ext-rc: $?"
sed 's/^/ext-log: /' /tmp/ext.log
wait_state disabled
echo "state-unloaded: $(state)"
echo "ext-tasks-unloaded: $(ext_tasks) of $(all_tasks)"

# The safety net: a scheduler that never runs one runnable task is ejected by the
# kernel's watchdog, which says why; every task is back in the fair class.
sh -c 'while :; do :; done' &
hog=$!
schedlab ext run --timeout-ms 1000 --stall-tid $hog --interval-ms 600000 > /tmp/stall.log 2>&1
echo "stall-rc: $?"
sed 's/^/stall-log: /' /tmp/stall.log
wait_state disabled
echo "state-after-stall: $(state)"
echo "ext-tasks-after-stall: $(ext_tasks) of $(all_tasks)"
kill $hog

# SWAP (paper 004) on the scheduler: the daemon names the server (over a UNIX socket,
# whose peer it finds through sock_diag) as its client's provider, and the scheduler
# runs the server in the client's turn: the round trip beside hogs is a fraction of
# what it is without.
schedlab bench deps --ipc sock --load 2 --iterations 10 --warmup 1 --no-reference --with-daemon \
    --enforcer sched-ext --sort-len 400 --time-limit 300s --json > /tmp/swap.json 2>/tmp/swap.err
echo "swap-rc: $?"
echo "swap-json: $(tr -d '\n' < /tmp/swap.json)"
sed 's/^/swap-log: /' /tmp/swap.err

# PFS (paper 001) on the scheduler's round robin: the test program's bursts of 125 ms
# (within the 100 ms slice + T_m 40 ms) and 150 ms (past it) beside a hog, without the
# daemon's slices and with them (the daemon learns the flow in run 1).
schedlab bench slices --sched-ext --ext-slice-ms 100 --ext-timeshare --tm-ms 40 --programs test \
    --work-ms 125,150 --sleep-ms 200 --loops 4 --runs 3 --cpu 1 --time-limit 240s --json \
    > /tmp/pfs.json 2>/tmp/pfs.err
echo "pfs-rc: $?"
echo "pfs-json: $(tr -d '\n' < /tmp/pfs.json)"
sed 's/^/pfs-log: /' /tmp/pfs.err

# `--enforcer auto` (the default) without a trial of the scheduler on this kernel: the
# system calls, and why.
schedlab run --duration 2s --store /tmp/untried.db --socket /tmp/u.sock > /tmp/untried.log 2>&1
echo "untried-rc: $?"
echo "untried-enforcer: $(sed -n 's/.*decisions carried out by \(.*\); control socket.*/\1/p' /tmp/untried.log)"

# The daemon on the scheduler, loaded by `auto` after a trial without a loss (the test
# kept one in /files/trial.db for this kernel): when the kernel ends it (here SysRq-S,
# which disables any sched_ext scheduler), the daemon says why and goes on with the
# system calls.
cp /files/trial.db /tmp/d.db
schedlab run --duration 30s --store /tmp/d.db --socket /tmp/d.sock > /tmp/daemon.log 2>&1 &
daemon=$!
wait_state enabled
echo "daemon-state: $(state) $(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
sleep 2
echo S > /proc/sysrq-trigger
wait_state disabled
sleep 3
echo "daemon-alive-after-sysrq: $(kill -0 $daemon 2>/dev/null && echo yes || echo no)"
kill -INT $daemon
wait $daemon
echo "daemon-rc: $?"
sed 's/^/daemon-log: /' /tmp/daemon.log
