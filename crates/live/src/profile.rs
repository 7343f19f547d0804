//! Process profiles from one observation window: what the learned model sees of a
//! process. The one builder `schedlab observe` (and so `classify` and the training
//! data it writes) and the daemon's profiling windows share, so that the model serves
//! on the very features it was trained on.
//!
//! A window is the observer's system-call counts at its end, the same counts at its
//! start (the hook counts cumulatively while attached), and the per-thread
//! [`Activity`] gathered in it. Threads are summed into their process; a call the
//! system-call table does not name is kept as `syscall_<nr>` (it counts as an "other"
//! call in the features, not as nothing); run bursts are sorted, shortest first.

use std::collections::{BTreeMap, HashMap};

use schedlab_behavior::learn::ProcessProfile;
use schedlab_model::Ns;

use crate::activity::Activity;

/// What one window saw.
#[derive(Clone, Copy, Debug)]
pub struct Window<'a> {
    /// How long it lasted.
    pub length_ns: Ns,
    /// System-call counts per (thread group, call number) at its end.
    pub counts: &'a HashMap<(u32, u32), u64>,
    /// The same counts at its start; empty when counting began with the window.
    pub baseline: &'a HashMap<(u32, u32), u64>,
    /// The threads' switches, bursts and sleeps in it.
    pub activity: &'a Activity,
}

/// The name a profile gives call `nr`.
pub fn call_name(nr: u32) -> String {
    schedlab_model::syscall_name(nr).map_or_else(|| format!("syscall_{nr}"), str::to_string)
}

/// The profile of every process `wanted` keeps that made a call or switched in the
/// window, by process id; `tgid_of` names a thread's process. Names are left empty
/// for the caller (it knows what the process is called).
pub fn profiles(
    window: &Window,
    tgid_of: impl Fn(u32) -> u32,
    wanted: impl Fn(u32) -> bool,
) -> BTreeMap<u32, ProcessProfile> {
    let mut out: BTreeMap<u32, ProcessProfile> = BTreeMap::new();
    let new_profile = || ProcessProfile { window_secs: window.length_ns as f64 / 1e9, ..Default::default() };
    for (&(tgid, nr), &n) in window.counts {
        let before = window.baseline.get(&(tgid, nr)).copied().unwrap_or(0);
        let made = n.saturating_sub(before);
        if made > 0 && wanted(tgid) {
            *out.entry(tgid).or_insert_with(new_profile).syscalls.entry(call_name(nr)).or_default() += made;
        }
    }
    for (tid, t) in &window.activity.threads {
        let tgid = tgid_of(tid.0);
        if !wanted(tgid) {
            continue;
        }
        let p = out.entry(tgid).or_insert_with(new_profile);
        p.voluntary_switches += t.nvcsw;
        p.involuntary_switches += t.nivcsw;
        p.run_bursts_ns.extend_from_slice(&t.bursts);
        p.runtime_ns += t.runtime;
        p.sleep_ns += t.sleep;
    }
    for p in out.values_mut() {
        p.run_bursts_ns.sort_unstable();
    }
    out
}

#[cfg(test)]
mod tests {
    use schedlab_model::{Event, EventKind, EventSink, Pid, PrevState};

    use super::*;

    fn switch(time: Ns, prev: u32, prev_state: PrevState, next: u32) -> Event {
        Event { time, kind: EventKind::Switch { cpu: 0, prev: Pid(prev), prev_state, next: Pid(next) } }
    }

    #[test]
    fn threads_add_up_into_their_process_and_counts_start_at_the_window() {
        let mut activity = Activity::default();
        // Threads 10 and 11 of process 10; thread 20 of process 20.
        for e in [
            switch(0, 0, PrevState::Runnable, 10),
            switch(5, 10, PrevState::Blocked, 11),
            switch(12, 11, PrevState::Runnable, 20),
            switch(20, 20, PrevState::Blocked, 11),
            switch(21, 11, PrevState::Blocked, 0),
        ] {
            activity.event(&e);
        }
        let read = schedlab_model::syscall_nr("read").unwrap();
        let counts = HashMap::from([((10, read), 50), ((10, 999), 3), ((20, read), 7), ((30, read), 4)]);
        let baseline = HashMap::from([((10, read), 20), ((30, read), 4)]);
        let window =
            Window { length_ns: 2_000_000_000, counts: &counts, baseline: &baseline, activity: &activity };
        let tgid_of = |tid: u32| if tid == 11 { 10 } else { tid };
        let all = profiles(&window, tgid_of, |_| true);
        assert_eq!(all.keys().copied().collect::<Vec<_>>(), [10, 20], "30 made no call in the window");
        let p = &all[&10];
        assert_eq!(p.syscalls, BTreeMap::from([("read".to_string(), 30), ("syscall_999".to_string(), 3)]));
        assert_eq!((p.voluntary_switches, p.involuntary_switches), (2, 1));
        assert_eq!(p.runtime_ns, 5 + 7 + 1);
        assert_eq!(p.run_bursts_ns, [5, 8], "thread 11's preempted stretches merge into one burst");
        assert_eq!(p.window_secs, 2.0);
        assert_eq!(all[&20].syscalls["read"], 7);
        let only = profiles(&window, tgid_of, |p| p == 20);
        assert_eq!(only.keys().copied().collect::<Vec<_>>(), [20]);
    }
}
