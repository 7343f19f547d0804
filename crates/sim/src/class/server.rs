//! The fair server (`rq->fair_server`, kernel/sched/deadline.c `dl_server_*`, Linux
//! 6.12 and later): a `SCHED_DEADLINE` entity per CPU that runs fair tasks ahead of
//! real-time ones when these starve them, for `runtime` ns per `period` (50 ms per 1 s).
//!
//! The kernel's contract, as 6.18 keeps it for fair tasks that a real-time task starves:
//!
//! - **Deferred** (`dl_defer`): the server does not run as soon as it can, but at its
//!   zero-laxity instant `deadline - runtime` (`start_dl_timer` with `dl_defer_armed`),
//!   the last moment at which its budget still fits before its deadline. Until then,
//!   every nanosecond fair tasks run on their own (the real-time tasks sleep, or are
//!   throttled) is charged to its budget (`dl_server_update` from `update_curr`), which
//!   moves the zero-laxity instant later; a budget spent that way means the fair tasks
//!   had their share: a new period starts at once, deferred again
//!   (`update_curr_dl_se`, the `dl_defer && dl_throttled` branch). So the server only
//!   runs after real-time tasks have held the CPU for `period - runtime` since its
//!   period began.
//! - **Running** (`dl_defer_running`): at the zero-laxity instant (`dl_server_timer`)
//!   the server's CBS rule finds the old deadline unusable and starts a new period
//!   (`replenish_dl_entity`), and the server, a deadline entity, runs the CPU's fair
//!   tasks ahead of every real-time task until its budget is spent.
//! - **Spent** (`update_curr_dl_se` throttling it): the server is throttled, and the
//!   switch back to the real-time task charges the fair task's last moments to the
//!   already-throttled server, which takes the branch above: a new deferred period
//!   starts at the instant the budget ran out. Real-time tasks then get exactly
//!   `period - runtime` before the next window — measured: 950.0 ms every time.
//! - **Stopped** (`dl_server_stop`): no fair task on the CPU. (Simplified: 6.18 stops
//!   the server only once the server itself finds nothing to run, charging idle time
//!   until then; a fair task that sleeps and wakes under a real-time hog is served only
//!   approximately as the kernel serves it.) A fair task arriving starts it again
//!   (`dl_server_start`): the old deadline and budget are kept if the CBS wake-up rule
//!   allows (`dl_entity_overflow`), else a new period starts; a server that had found
//!   starvation (`dl_defer_running`) runs at once instead of deferring.
//! - **Idle** time is charged to the budget too, without making it negative
//!   (`dl_server_update_idle_time`), and clears the starvation.
//!
//! The budget is checked when the CPU's time is accounted (at ticks and scheduling
//! events; the kernel's HRTICK_DL is off by default), so a window lasts until the first
//! accounting after the budget is spent.

use schedlab_model::Ns;

/// Below this much of budget charged in the background, a zero-laxity timer that fires
/// runs the server instead of being pushed later (`dl_server_min_res`, 1 ms).
const MIN_RES: Ns = 1_000_000;

/// The server's budget (`dl_runtime`) and period (`dl_period` = `dl_deadline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ServerParams {
    pub runtime: Ns,
    pub period: Ns,
}

/// Where a CPU's fair server is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ServerState {
    /// No fair task is queued on the CPU (`!dl_server_active`).
    #[default]
    Stopped,
    /// Waiting for its zero-laxity instant (`dl_defer_armed`, throttled).
    Deferred,
    /// Queued: the CPU's fair tasks run ahead of its real-time tasks.
    Running,
}

/// What charging fair CPU time to the server did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Charge {
    /// Nothing the CPU must act on.
    Nothing,
    /// The running server spent its budget: the CPU picks again, and a new deferred
    /// period began.
    Spent,
    /// A deferred server's budget was used up in the background: a new deferred period
    /// began (its zero-laxity timer, if queued, is stale).
    Renewed,
}

/// What the zero-laxity timer found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fire {
    /// Fair work charged meanwhile moved the zero-laxity instant: wait until then.
    Later(Ns),
    /// The server runs now.
    Run,
}

/// One CPU's fair server (`struct sched_dl_entity` with `dl_server` and `dl_defer`).
#[derive(Clone, Debug, Default)]
pub(crate) struct FairServer {
    pub state: ServerState,
    /// The absolute deadline of the current period.
    deadline: Ns,
    /// Budget left in the current period (negative once overdrawn).
    runtime: i64,
    /// Starvation was found (`dl_defer_running`): a restart runs at once.
    starving: bool,
    /// The generation of its queued zero-laxity timer, if one is queued.
    pub timer: Option<u32>,
    /// Generations handed out, so that a cancelled timer is recognized.
    timer_gen: u32,
}

impl FairServer {
    /// The zero-laxity instant of a deferred server.
    pub fn zero_laxity(&self) -> Ns {
        self.deadline.saturating_sub(self.runtime.max(0) as Ns)
    }

    /// A generation for a timer about to be queued.
    pub fn arm(&mut self) -> u32 {
        self.timer_gen = self.timer_gen.wrapping_add(1);
        self.timer = Some(self.timer_gen);
        self.timer_gen
    }

    /// `replenish_dl_new_period`: a full budget, the deadline a period from now;
    /// deferred unless starvation was found.
    fn new_period(&mut self, now: Ns, p: ServerParams) {
        self.deadline = now + p.period;
        self.runtime = p.runtime as i64;
        self.state = if self.starving { ServerState::Running } else { ServerState::Deferred };
        self.timer = None;
    }

    /// The starvation is over: a new deferred period from `now`.
    fn renew(&mut self, now: Ns, p: ServerParams) {
        self.starving = false;
        self.new_period(now, p);
    }

    /// `dl_server_start` (a fair task arrives on a CPU without one): the CBS wake-up rule
    /// keeps the deadline and budget unless the deadline passed or the budget left would
    /// exceed the server's bandwidth until it (`update_dl_entity`). True when the server
    /// runs at once.
    pub fn start(&mut self, now: Ns, p: ServerParams) -> bool {
        if self.state != ServerState::Stopped {
            return false;
        }
        if self.deadline <= now || self.overflows(now, p) {
            self.new_period(now, p);
        } else {
            self.state = if self.starving { ServerState::Running } else { ServerState::Deferred };
        }
        self.state == ServerState::Running
    }

    /// `dl_entity_overflow`: `runtime / (deadline - now) > dl_runtime / dl_deadline`,
    /// at the kernel's resolution (`DL_SCALE`, about a microsecond).
    fn overflows(&self, now: Ns, p: ServerParams) -> bool {
        const DL_SCALE: u32 = 10;
        let left = (p.period >> DL_SCALE) * ((self.runtime.max(0) as Ns) >> DL_SCALE);
        let right = ((self.deadline - now) >> DL_SCALE) * (p.runtime >> DL_SCALE);
        right < left
    }

    /// `dl_server_stop`: the CPU's last fair task left.
    pub fn stop(&mut self) {
        self.state = ServerState::Stopped;
        self.timer = None;
    }

    /// `dl_server_update`: `delta` ns of fair CPU time at `now`.
    ///
    /// A deferred server's budget spent in the background renews it (the kernel tests
    /// `runtime <= 0`). A running server is spent once its budget is overdrawn: one that
    /// runs out exactly at an accounting instant (a tick) still has a sliver left in the
    /// kernel, whose window began a few microseconds after its timer's instant (an
    /// hrtimer fires late, never early) while the tick reads the clock as late, so the
    /// window ends at the next accounting (measured: 54 ms windows for a 50 ms budget,
    /// the extra 4 ms one tick at 250 Hz).
    pub fn charge(&mut self, now: Ns, delta: Ns, p: ServerParams) -> Charge {
        self.runtime -= delta as i64;
        match self.state {
            ServerState::Deferred if self.runtime <= 0 => {
                self.renew(now, p);
                Charge::Renewed
            }
            ServerState::Running if self.runtime < 0 => {
                self.renew(now, p);
                Charge::Spent
            }
            _ => Charge::Nothing,
        }
    }

    /// `dl_server_update_idle_time`: the CPU was idle for `delta` ns, time the fair tasks
    /// did not need; the budget does not go below zero, and reaching it ends the
    /// starvation.
    pub fn idle(&mut self, delta: Ns) {
        if self.runtime < 0 {
            return;
        }
        self.runtime -= delta as i64;
        if self.runtime < 0 {
            self.starving = false;
            self.runtime = 0;
        }
    }

    /// `dl_server_timer` at `now` for the timer of generation `gen`; `None` when that
    /// timer was cancelled. Fair work charged since the timer was set pushes it later
    /// (by at least [`MIN_RES`]); otherwise starvation is found, a new period starts and
    /// the server runs.
    pub fn fire(&mut self, now: Ns, gen: u32, p: ServerParams) -> Option<Fire> {
        if self.timer != Some(gen) || self.state != ServerState::Deferred {
            return None;
        }
        self.timer = None;
        let at = self.zero_laxity();
        if now + MIN_RES < at {
            return Some(Fire::Later(at));
        }
        self.starving = true;
        self.new_period(now, p);
        Some(Fire::Run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;
    const P: ServerParams = ServerParams { runtime: 50 * MS, period: 1_000 * MS };

    #[test]
    fn a_starved_server_runs_at_zero_laxity_then_defers_again() {
        let mut s = FairServer::default();
        assert!(!s.start(0, P));
        assert_eq!((s.state, s.zero_laxity()), (ServerState::Deferred, 950 * MS));
        let gen = s.arm();
        assert_eq!(s.fire(950 * MS, gen, P), Some(Fire::Run));
        assert_eq!(s.state, ServerState::Running);
        // 50 ms exactly is not yet overdrawn; the next tick finds it spent.
        assert_eq!(s.charge(1_000 * MS, 50 * MS, P), Charge::Nothing);
        assert_eq!(s.charge(1_004 * MS, 4 * MS, P), Charge::Spent);
        assert_eq!((s.state, s.zero_laxity()), (ServerState::Deferred, 1_954 * MS));
    }

    #[test]
    fn fair_work_in_the_background_moves_or_renews_the_period() {
        let mut s = FairServer::default();
        s.start(0, P);
        let gen = s.arm();
        // 30 ms of fair work: the timer, set for 950 ms, waits until 980 ms.
        assert_eq!(s.charge(500 * MS, 30 * MS, P), Charge::Nothing);
        assert_eq!(s.fire(950 * MS, gen, P), Some(Fire::Later(980 * MS)));
        // 20 ms more spend the budget: a new period from now, the old timer stale.
        let gen = s.arm();
        assert_eq!(s.charge(960 * MS, 20 * MS, P), Charge::Renewed);
        assert_eq!(s.fire(980 * MS, gen, P), None);
        assert_eq!(s.zero_laxity(), 1_910 * MS);
    }

    #[test]
    fn a_restart_keeps_the_period_if_the_cbs_rule_allows_and_runs_at_once_when_starving() {
        let mut s = FairServer::default();
        s.start(0, P);
        let gen = s.arm();
        s.fire(950 * MS, gen, P);
        s.charge(951 * MS, MS, P);
        s.stop();
        // 49 ms left until 1950: 49/999 < 50/1000, kept; starving, so it runs at once.
        assert!(s.start(951 * MS, P));
        assert_eq!(s.zero_laxity(), 1_901 * MS);
        s.stop();
        // Idle time uses the budget up: no longer starving, deferred to its deadline.
        s.idle(100 * MS);
        assert!(!s.start(1_100 * MS, P));
        assert_eq!(s.zero_laxity(), 1_950 * MS);
    }
}
