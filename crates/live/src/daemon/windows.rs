//! When the daemon profiles. The model needs each process's system-call counts and its
//! run bursts, and gathering them is what costs: while the system-call hook is attached
//! every system call on the machine takes the kernel's slow path (+55 % on hackbench),
//! and every switch goes through the ring buffer. So the daemon gathers them only in
//! windows: a window of `len` opens when some process waits for the model, and the next
//! one only after a gap that keeps the hook attached at most `duty` of the time. A
//! process is classified from a window it lived through from start to end.

use std::time::{Duration, Instant};

/// What [`Windows::tick`] asks the daemon to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Attach the hooks: a window begins now.
    Open,
    /// Detach them: the window that began at this instant is over; classify from it.
    Close(Instant),
}

/// The windows' schedule: pure, so that it is tested without a kernel.
#[derive(Clone, Debug)]
pub struct Windows {
    len: Duration,
    /// The least time between the end of a window and the start of the next.
    gap: Duration,
    open_since: Option<Instant>,
    closed_at: Option<Instant>,
}

impl Windows {
    /// Windows of `len`, attached at most `duty_pct` percent of the time (0: never).
    pub fn new(len: Duration, duty_pct: u32) -> Windows {
        let gap = match duty_pct {
            0 => Duration::MAX,
            d if d >= 100 => Duration::ZERO,
            d => len.mul_f64(f64::from(100 - d) / f64::from(d)),
        };
        Windows { len, gap, open_since: None, closed_at: None }
    }

    /// Whether a window is open.
    pub fn is_open(&self) -> bool {
        self.open_since.is_some()
    }

    /// Moves the schedule to `now`; `wanted`: some process waits for a profile.
    pub fn tick(&mut self, now: Instant, wanted: bool) -> Option<Turn> {
        match self.open_since {
            Some(since) if now.saturating_duration_since(since) >= self.len => {
                self.open_since = None;
                self.closed_at = Some(now);
                Some(Turn::Close(since))
            }
            Some(_) => None,
            None if wanted && self.gap != Duration::MAX => {
                let rested = self.closed_at.is_none_or(|at| now.saturating_duration_since(at) >= self.gap);
                rested.then(|| {
                    self.open_since = Some(now);
                    Turn::Open
                })
            }
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_opens_when_wanted_and_closes_after_its_length() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut w = Windows::new(s(2), 5);
        assert_eq!(w.tick(t0, false), None, "nobody waits: nothing opens");
        assert_eq!(w.tick(t0, true), Some(Turn::Open));
        assert!(w.is_open());
        assert_eq!(w.tick(t0 + s(1), true), None);
        assert_eq!(w.tick(t0 + s(2), true), Some(Turn::Close(t0)));
        // 5 % of the time: 2 s open, then at least 38 s closed.
        assert_eq!(w.tick(t0 + s(30), true), None);
        assert_eq!(w.tick(t0 + s(39), true), None);
        assert_eq!(w.tick(t0 + s(40), true), Some(Turn::Open));
    }

    #[test]
    fn the_duty_bounds_the_share_of_time_open() {
        let t0 = Instant::now();
        let mut w = Windows::new(Duration::from_millis(1500), 10);
        let mut open_ms = 0;
        for ms in 0..600_000u64 {
            w.tick(t0 + Duration::from_millis(ms), true);
            open_ms += u64::from(w.is_open());
        }
        let share = open_ms as f64 / 600_000.0;
        assert!((0.09..=0.101).contains(&share), "{share}");
        let mut never = Windows::new(Duration::from_secs(1), 0);
        assert_eq!(never.tick(t0, true), None);
    }
}
