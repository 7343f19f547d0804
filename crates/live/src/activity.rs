//! Per-thread scheduling activity from the event stream: time on a CPU, time blocked,
//! voluntary and involuntary switches, and run bursts (CPU time from being switched in
//! until blocking, preemptions merged, as PFS measures them).
//!
//! Shared by `schedlab observe` (one report per window) and the daemon (profiles for the
//! model, load for the CPU plans).

use std::collections::HashMap;

use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, PrevState};

/// One thread's scheduling, as seen from its switches and wakeups.
#[derive(Clone, Debug, Default)]
pub struct ThreadActivity {
    /// Since when it is on a CPU, if it is.
    pub on_cpu_since: Option<Ns>,
    /// Since when it is blocked, if it is.
    pub blocked_since: Option<Ns>,
    /// Total time blocked, from blocking to the wakeup.
    pub sleep: Ns,
    /// Total time on a CPU.
    pub runtime: Ns,
    /// CPU time of the burst in progress.
    pub burst: Ns,
    /// Voluntary context switches (blocked).
    pub nvcsw: u64,
    /// Involuntary context switches (preempted).
    pub nivcsw: u64,
    /// Completed run bursts, in order.
    pub bursts: Vec<Ns>,
}

impl ThreadActivity {
    /// CPU time up to `now`, the stretch in progress included.
    pub fn runtime_at(&self, now: Ns) -> Ns {
        self.runtime + self.on_cpu_since.map_or(0, |s| now.saturating_sub(s))
    }
}

/// Every thread's activity; an [`EventSink`].
#[derive(Debug, Default)]
pub struct Activity {
    /// By thread id.
    pub threads: HashMap<Pid, ThreadActivity>,
    /// Events seen.
    pub events: u64,
}

impl Activity {
    /// Forgets a thread (it exited and its numbers were taken).
    pub fn remove(&mut self, tid: Pid) -> Option<ThreadActivity> {
        self.threads.remove(&tid)
    }
}

impl EventSink for Activity {
    fn event(&mut self, e: &Event) {
        self.events += 1;
        if let EventKind::Wakeup { wakee, .. } = e.kind {
            if let Some(since) = self.threads.get_mut(&wakee).and_then(|t| t.blocked_since.take()) {
                self.threads.entry(wakee).or_default().sleep += e.time.saturating_sub(since);
            }
            return;
        }
        let EventKind::Switch { prev, prev_state, next, .. } = e.kind else { return };
        if prev != Pid::IDLE {
            let t = self.threads.entry(prev).or_default();
            if let Some(since) = t.on_cpu_since.take() {
                let ran = e.time.saturating_sub(since);
                t.runtime += ran;
                t.burst += ran;
                match prev_state {
                    PrevState::Runnable => t.nivcsw += 1,
                    PrevState::Blocked | PrevState::Dead => {
                        if prev_state == PrevState::Blocked {
                            t.nvcsw += 1;
                            t.blocked_since = Some(e.time);
                        }
                        t.bursts.push(std::mem::take(&mut t.burst));
                    }
                }
            }
        }
        if next != Pid::IDLE {
            self.threads.entry(next).or_default().on_cpu_since = Some(e.time);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::Event;

    fn switch(time: Ns, prev: u32, prev_state: PrevState, next: u32) -> Event {
        Event { time, kind: EventKind::Switch { cpu: 0, prev: Pid(prev), prev_state, next: Pid(next) } }
    }

    #[test]
    fn bursts_merge_preemptions_and_end_at_a_block() {
        let mut s = Activity::default();
        for e in [
            switch(0, 0, PrevState::Runnable, 5),
            switch(10, 5, PrevState::Runnable, 6),
            switch(15, 6, PrevState::Blocked, 5),
            switch(20, 5, PrevState::Blocked, 0),
            Event { time: 25, kind: EventKind::Wakeup { waker: Pid(6), wakee: Pid(5), cpu: 0 } },
            switch(30, 0, PrevState::Runnable, 5),
            switch(33, 5, PrevState::Dead, 0),
        ] {
            s.event(&e);
        }
        let t = &s.threads[&Pid(5)];
        assert_eq!((t.runtime, t.nvcsw, t.nivcsw, t.sleep), (18, 1, 1, 5));
        assert_eq!(t.bursts, vec![15, 3]);
        assert_eq!(s.threads[&Pid(6)].bursts, vec![5]);
        s.event(&switch(40, 7, PrevState::Blocked, 0));
        assert_eq!(s.threads[&Pid(7)].nvcsw, 0, "7 was not seen switching in: nothing to count");
    }
}
