//! New processes waiting to be taken in.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// A process that exec'd (`parent: None`) or was forked, when the event was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Arrival {
    pub pid: u32,
    pub parent: Option<u32>,
    pub seen: Instant,
}

/// The new processes not yet taken in, oldest first.
///
/// Only a process's latest arrival counts (after an exec it is the program it exec'd,
/// whatever its fork said), and a process that exits before its turn is dropped at its
/// exit. The hundreds of short programs a build or a shell loop runs a second thus
/// cost a queue entry each and no /proc read: measured on a loop of `/bin/true`, the
/// reads of the gone ones held the daemon's real-time loop for 256 µs–1 ms per turn,
/// a turn a millisecond, a second after the loop (and whatever ran then waited).
#[derive(Debug, Default)]
pub(super) struct Arrivals {
    /// Every arrival in order, with its sequence number; superseded and gone ones are
    /// skipped when their turn comes.
    queue: VecDeque<(u64, Arrival)>,
    /// The sequence number of each waiting process's latest arrival.
    latest: HashMap<u32, u64>,
    next: u64,
}

impl Arrivals {
    pub fn push(&mut self, arrival: Arrival) {
        self.latest.insert(arrival.pid, self.next);
        self.queue.push_back((self.next, arrival));
        self.next += 1;
    }

    /// Process `pid` exited: it is not taken in.
    pub fn gone(&mut self, pid: u32) {
        self.latest.remove(&pid);
    }

    /// Whether process `pid` waits to be taken in.
    pub fn waiting(&self, pid: u32) -> bool {
        self.latest.contains_key(&pid)
    }

    /// Whether any process waits to be taken in.
    pub fn any_waiting(&self) -> bool {
        !self.latest.is_empty()
    }

    /// Whether the oldest entry (waiting or to be skipped) is `min_age` old at `now`.
    pub fn due(&self, now: Instant, min_age: Duration) -> bool {
        self.queue.front().is_some_and(|(_, a)| now.saturating_duration_since(a.seen) >= min_age)
    }

    /// The oldest waiting process that is `min_age` old at `now`, taken out of the
    /// queue, with the entries before it that no longer count.
    pub fn pop_due(&mut self, now: Instant, min_age: Duration) -> Option<Arrival> {
        while self.due(now, min_age) {
            let (seq, arrival) = self.queue.pop_front()?;
            if self.latest.get(&arrival.pid) == Some(&seq) {
                self.latest.remove(&arrival.pid);
                return Some(arrival);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{Arrival, Arrivals};

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_process_is_taken_in_once_by_its_latest_arrival_and_never_once_gone() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut a = Arrivals::default();
        let fork = |pid, ms| Arrival { pid, parent: Some(1), seen: at(ms) };
        let exec = |pid, ms| Arrival { pid, parent: None, seen: at(ms) };
        a.push(fork(10, 0));
        a.push(fork(11, 1));
        a.push(exec(10, 2));
        a.push(fork(12, 3));
        a.gone(11);
        assert!(a.waiting(10) && !a.waiting(11) && a.waiting(12));
        assert_eq!(a.pop_due(at(999), S), None, "nothing 1 s old yet");
        assert!(a.due(at(1000), S), "the fork of 10 is due, though it no longer counts");
        assert_eq!(a.pop_due(at(1002), S), Some(exec(10, 2)), "10 as the program it exec'd");
        assert_eq!(a.pop_due(at(1002), S), None, "12 is 999 ms old");
        assert_eq!(a.pop_due(at(1003), S), Some(fork(12, 3)));
        assert!(!a.any_waiting() && !a.due(at(5000), S));
        // A pid used again after its exit arrives again.
        a.push(fork(11, 4000));
        assert_eq!(a.pop_due(at(5000), S), Some(fork(11, 4000)));
    }
}
