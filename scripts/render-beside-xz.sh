#!/bin/sh
# A 60 Hz render-like thread (rt-app, 4 ms of work every 16.7 ms, SCHED_OTHER nice 0,
# 8 s) beside 8 loops of `xz -6` restarted job by job, by hand, without schedlab: the
# thread's frames logged and its wake-up latency p99 (rt-app's wu_lat). What the README's
# issue-28 figures "by hand" came from. Modes (one per run):
#   nice19      the loops at nice 19, in this session                 (p99 about 4 ms)
#   setsid      each loop in a session (an autogroup) of its own, nice 0
#   setsid19    the same, the loops at nice 19
#   autogroup19 each loop in a session of its own, its autogroup at nice 19
#   trace       as nice19, with bpftrace reading, at each of the thread's wake-ups, whether
#               it was eligible (6.18's vruntime_eligible over the queue's sum_w_vruntime,
#               sum_weight and zero_vruntime) and whether the running task's slice was
#               protected (vprot ahead of vruntime), split by waits over 2 ms; tracefs is
#               mounted for the run and unmounted after.
#   stacks      as trace, but counting, for the waits over 2 ms, what ran when the thread
#               woke and the kernel stack of the wake-up (one that ends at the timer
#               interrupt found that task in user mode).
# Needs root, rt-app, xz (and bpftrace for `trace`); kills its loops and removes its files.
#   sudo scripts/render-beside-xz.sh MODE
set -eu
MODE=${1:?usage: $0 nice19|setsid|setsid19|autogroup19|trace|stacks}
DIR=$(mktemp -d /tmp/schedlab-render.XXXXXX)
MOUNTED=
cleanup() {
    pkill -f "$DIR/text" 2>/dev/null || true
    [ -n "$MOUNTED" ] && umount /sys/kernel/tracing
    rm -rf "$DIR"
}
trap cleanup EXIT
head -c 98304 /dev/urandom | base64 > "$DIR/text"
cat > "$DIR/render.json" <<EOF
{"global": {"duration": 8, "calibration": "CPU0", "default_policy": "SCHED_OTHER",
            "logdir": "$DIR", "log_basename": "rt", "lock_pages": false},
 "tasks": {"render": {"loop": -1, "run": 4000, "timer": {"ref": "unique", "period": 16667}}}}
EOF
LOOP="while :; do xz -6 -T1 -c $DIR/text > /dev/null; done"
for i in 1 2 3 4 5 6 7 8; do
    case $MODE in
        nice19|trace|stacks) nice -n 19 sh -c "$LOOP" & ;;
        setsid) setsid sh -c "$LOOP" & ;;
        setsid19) setsid nice -n 19 sh -c "$LOOP" & ;;
        autogroup19) setsid sh -c "echo 19 > /proc/self/autogroup; $LOOP" & ;;
        *) echo "$0: unknown mode $MODE" >&2; exit 2 ;;
    esac
done
if [ "$MODE" = stacks ]; then
    cat > "$DIR/wake.bt" <<'EOF'
tracepoint:sched:sched_wakeup /args->comm == "render"/ { @w = nsecs; @ks = kstack(12); @ran = comm; }
tracepoint:sched:sched_switch /@w != 0 && args->next_comm == "render"/ {
  if ((nsecs - @w) / 1000 > 2000) { @over_2ms[@ran, @ks] = count(); } else { @under_2ms[@ran] = count(); }
  @w = 0;
}
END { clear(@ks); clear(@ran); clear(@w); }
EOF
fi
if [ "$MODE" = trace ]; then
    cat > "$DIR/wake.bt" <<'EOF'
tracepoint:sched:sched_switch /args->prev_comm == "render"/ { @rt = (uint64)curtask; }
tracepoint:sched:sched_wakeup /args->comm == "render" && @rt != 0/ {
  $p = (struct task_struct *)@rt;
  $cfs = $p->se.cfs_rq;
  $curr = $cfs->curr;
  $zero = $cfs->zero_vruntime;
  $avg = $cfs->sum_w_vruntime;
  $load = (int64)$cfs->sum_weight;
  $prot = 0;
  if ($curr != 0) {
    if ($curr->on_rq) {
      $w = (int64)($curr->load.weight >> 10);
      $avg = $avg + (int64)($curr->vruntime - $zero) * $w;
      $load = $load + $w;
    }
    if ((int64)($curr->vprot - $curr->vruntime) > 0) { $prot = 1; }
  }
  $elig = 0;
  if ($avg >= (int64)($p->se.vruntime - $zero) * $load) { $elig = 1; }
  @e = $elig; @pr = $prot; @w = nsecs;
}
tracepoint:sched:sched_switch /@w != 0 && args->next_comm == "render"/ {
  if ((nsecs - @w) / 1000 > 2000) { @over_2ms[@e, @pr] = count(); } else { @under_2ms[@e, @pr] = count(); }
  @w = 0;
}
END { clear(@rt); clear(@e); clear(@pr); clear(@w); printf("[eligible, running slice protected]: wake-ups\n"); }
EOF
fi
if [ -f "$DIR/wake.bt" ]; then
    mount -t tracefs nodev /sys/kernel/tracing && MOUNTED=1
    timeout 14 bpftrace "$DIR/wake.bt" > "$DIR/bt.out" 2>&1 &
    TRACER=$!
    sleep 3
fi
sleep 1
rt-app "$DIR/render.json" > /dev/null 2>&1
python3 - "$DIR/rt-render-0.log" "$MODE" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith('#')]
wu = sorted(int(r[-1]) for r in rows)
print(f"{sys.argv[2]}: {len(rows)} frames logged (of 480), wake-up p99 {wu[int(len(wu) * 0.99)] / 1000:.2f} ms")
PY
if [ -f "$DIR/wake.bt" ]; then
    wait $TRACER || true
    grep -v "RLIMIT\|^Attaching\|^$" "$DIR/bt.out"
fi
