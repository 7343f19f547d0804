//! Provider boosting, live (paper 004's idea acted out from user space): when a process
//! blocks on a resource whose providers SWAP knows and it outranks them, the most
//! confident runnable provider inherits its priority (nice value, or real-time policy
//! and priority) until the requester wakes up, or until the bound passes.
//!
//! SWAP's detector keeps the confidences: a provider that runs a quantum `T` without
//! waking the requester loses one (the detector charges running time), so at every
//! [`Booster::decide`] the pick is taken again and the boost moves to the next provider
//! when the first one falls behind. A chain (the provider is itself blocked on another
//! provider) is followed with the indirect confidence `C1·C2/K`.
//!
//! This module decides; the daemon applies what it decides through the journaled
//! actuator.

use std::collections::HashMap;

use schedlab_behavior::swap::SwapDetector;
use schedlab_model::{Ns, Pid, Policy, Resource};

/// How a task ranks for the scheduler: a real-time task outranks every fair one (the
/// higher priority the higher); among fair ones, a lower nice value outranks (SCHED_IDLE
/// counts as below nice 19).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    /// SCHED_FIFO or SCHED_RR with its priority (1–99).
    Rt { policy: Policy, priority: u32 },
    /// SCHED_OTHER or SCHED_BATCH with its nice value.
    Fair { nice: i32 },
    /// SCHED_IDLE.
    Idle,
}

impl Rank {
    /// A number that orders ranks: larger outranks.
    fn level(self) -> i64 {
        match self {
            Rank::Rt { priority, .. } => 1000 + i64::from(priority),
            Rank::Fair { nice } => i64::from(-nice),
            Rank::Idle => -100,
        }
    }

    /// Whether `self` outranks `other`.
    pub fn outranks(self, other: Rank) -> bool {
        self.level() > other.level()
    }

    /// In words: `nice -20`, `SCHED_FIFO 10`, `SCHED_IDLE`.
    pub fn describe(self) -> String {
        match self {
            Rank::Rt { policy, priority } => format!("{} {priority}", policy.name()),
            Rank::Fair { nice } => format!("nice {nice}"),
            Rank::Idle => "SCHED_IDLE".into(),
        }
    }
}

/// A boost in force: `provider` runs with `requester`'s rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boost {
    pub requester: Pid,
    /// The process (thread group) of the provider thread: the unit the actuator changes.
    pub provider: Pid,
    pub provider_tgid: u32,
    /// The object the requester is blocked on, at the start of the chain.
    pub resource: Resource,
    /// The provider's confidence (indirect along a chain).
    pub confidence: u32,
    /// The providers from the requester's direct one to this one.
    pub chain: Vec<Pid>,
    /// The rank inherited.
    pub rank: Rank,
    /// When the requester blocked (the kernel's monotonic clock).
    pub since: Ns,
}

/// What the daemon must do after a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Give `tgid` the rank (it is not boosted yet, or by a lower rank).
    Raise { tgid: u32, rank: Rank },
    /// Put `tgid` back to what it had before its boosts (no boost is left on it).
    Lower { tgid: u32 },
}

/// Why a boost ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The requester woke up.
    Wakeup,
    /// The bound passed.
    Expired,
    /// The boost moved to another provider, or there is none left.
    Moved,
}

/// The boosts in force and the bookkeeping of which provider holds which.
#[derive(Debug, Default)]
pub struct Booster {
    /// The longest a requester's boosts last, in ns.
    pub max_ns: Ns,
    /// By requester thread.
    active: HashMap<Pid, Boost>,
    /// Requesters whose boost expired: no new boost until they wake up.
    spent: HashMap<Pid, Ns>,
    /// The rank each boosted provider process holds now.
    held: HashMap<u32, Rank>,
}

impl Booster {
    /// A booster whose boosts last at most `max_ns`.
    pub fn new(max_ns: Ns) -> Booster {
        Booster { max_ns, ..Booster::default() }
    }

    /// The boosts in force.
    pub fn active(&self) -> impl Iterator<Item = &Boost> {
        self.active.values()
    }

    /// The boost on provider process `tgid`, if any (the strongest).
    pub fn on_provider(&self, tgid: u32) -> Option<&Boost> {
        self.active.values().filter(|b| b.provider_tgid == tgid).max_by_key(|b| b.rank.level())
    }

    /// Whether `requester` has a boost in force (a map lookup, not a scan of them all).
    pub fn lends(&self, requester: Pid) -> bool {
        self.active.contains_key(&requester)
    }

    /// `requester`'s boost in force, if any.
    pub fn lent(&self, requester: Pid) -> Option<&Boost> {
        self.active.get(&requester)
    }

    /// Whether provider process `tgid` is boosted now.
    pub fn is_boosted(&self, tgid: u32) -> bool {
        self.held.contains_key(&tgid)
    }

    /// Decides the boost of blocked `requester` at `now`: the most confident runnable
    /// provider (through chains) inherits the requester's rank if the requester
    /// outranks it. `rank_of` reads a thread's rank (`None` if gone); `tgid_of` maps a
    /// thread to its process. Returns the actions and the boosts that ended.
    #[allow(clippy::too_many_arguments)]
    pub fn decide(
        &mut self,
        detector: &SwapDetector,
        requester: Pid,
        blocked_since: Ns,
        now: Ns,
        rank_of: &dyn Fn(Pid) -> Option<Rank>,
        tgid_of: &dyn Fn(Pid) -> Option<u32>,
    ) -> (Vec<Action>, Vec<(Boost, Ended)>) {
        let mut actions = Vec::new();
        let mut ended = Vec::new();
        if self.spent.contains_key(&requester) {
            return (actions, ended);
        }
        if now.saturating_sub(blocked_since) > self.max_ns {
            if let Some(b) = self.end(requester, &mut actions) {
                ended.push((b, Ended::Expired));
            }
            self.spent.insert(requester, now);
            return (actions, ended);
        }
        let requester_tgid = tgid_of(requester);
        let pick = detector.most_confident_runnable_provider(requester, |p| !detector.is_blocked(p));
        let candidate = pick.and_then(|pick| {
            let provider = pick.provider();
            let tgid = tgid_of(provider)?;
            if Some(tgid) == requester_tgid {
                return None;
            }
            let rank = rank_of(requester)?;
            // Compare with the provider's own rank, not the one a boost gave it.
            let own = if self.held.contains_key(&tgid) { None } else { rank_of(provider) };
            if own.is_some_and(|o| !rank.outranks(o)) {
                return None;
            }
            let chain = pick.chain().iter().map(|l| l.provider).collect();
            Some(Boost {
                requester,
                provider,
                provider_tgid: tgid,
                resource: pick.direct().resource,
                confidence: pick.confidence(),
                chain,
                rank,
                since: blocked_since,
            })
        });
        match (self.active.get(&requester), candidate) {
            (Some(cur), Some(new)) if cur.provider_tgid == new.provider_tgid && cur.rank == new.rank => {
                // Same provider: keep it, with the confidence of now.
                self.active.insert(requester, new);
            }
            (_, new) => {
                if let Some(b) = self.end(requester, &mut actions) {
                    ended.push((b, Ended::Moved));
                }
                if let Some(new) = new {
                    let held = self.held.get(&new.provider_tgid).copied();
                    if held.is_none_or(|h| new.rank.outranks(h)) {
                        self.held.insert(new.provider_tgid, new.rank);
                        actions.push(Action::Raise { tgid: new.provider_tgid, rank: new.rank });
                    }
                    self.active.insert(requester, new);
                }
            }
        }
        (actions, ended)
    }

    /// The requester woke up (or exited): its boost ends, and it may be boosted again
    /// the next time it blocks.
    pub fn woke(&mut self, requester: Pid) -> (Vec<Action>, Option<Boost>) {
        self.spent.remove(&requester);
        let mut actions = Vec::new();
        let b = self.end(requester, &mut actions);
        (actions, b)
    }

    /// A provider process exited: its boosts are dropped without lowering anything.
    pub fn provider_gone(&mut self, tgid: u32) {
        self.active.retain(|_, b| b.provider_tgid != tgid);
        self.held.remove(&tgid);
    }

    /// The requesters with a boost in force, in pid order: whose boosts to decide again.
    pub fn requesters(&self) -> Vec<Pid> {
        let mut v: Vec<Pid> = self.active.keys().copied().collect();
        v.sort();
        v
    }

    /// Ends `requester`'s boost; lowers its provider if no boost is left on it, or
    /// re-raises it to the strongest remaining one.
    fn end(&mut self, requester: Pid, actions: &mut Vec<Action>) -> Option<Boost> {
        let b = self.active.remove(&requester)?;
        let tgid = b.provider_tgid;
        let remaining = self
            .active
            .values()
            .filter(|o| o.provider_tgid == tgid)
            .map(|o| o.rank)
            .max_by_key(|r| r.level());
        match remaining {
            None => {
                self.held.remove(&tgid);
                actions.push(Action::Lower { tgid });
            }
            Some(r) if self.held.get(&tgid) != Some(&r) => {
                // The strongest boost ended: fall back to the next one.
                self.held.insert(tgid, r);
                actions.push(Action::Lower { tgid });
                actions.push(Action::Raise { tgid, rank: r });
            }
            Some(_) => {}
        }
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_behavior::swap::SwapParams;
    use schedlab_model::{Event, EventKind, PrevState, SyscallArgs};

    const MS: Ns = 1_000_000;

    /// A detector that has seen server 20 write pipe 5 (so it provides it) and client 10
    /// block reading it.
    fn detector_with_client_blocked() -> SwapDetector {
        let mut d = SwapDetector::new(SwapParams::default());
        let pipe_w = Resource::Pipe { inode: 5, write: true };
        let pipe_r = Resource::Pipe { inode: 5, write: false };
        let ev = |time, kind| Event { time, kind };
        for e in [
            ev(
                0,
                EventKind::Switch { cpu: 0, prev: Pid::IDLE, prev_state: PrevState::Runnable, next: Pid(20) },
            ),
            ev(
                1,
                EventKind::SyscallEnter {
                    pid: Pid(20),
                    nr: 1,
                    args: SyscallArgs { fd: Some(4), resource: Some(pipe_w), ..Default::default() },
                },
            ),
            ev(
                2,
                EventKind::Switch { cpu: 1, prev: Pid::IDLE, prev_state: PrevState::Runnable, next: Pid(10) },
            ),
            ev(3, EventKind::Block { pid: Pid(10), resource: Some(pipe_r) }),
            ev(
                3,
                EventKind::Switch { cpu: 1, prev: Pid(10), prev_state: PrevState::Blocked, next: Pid::IDLE },
            ),
        ] {
            d.observe(&e);
        }
        d
    }

    fn ranks(p: Pid) -> Option<Rank> {
        Some(if p == Pid(10) { Rank::Fair { nice: -20 } } else { Rank::Fair { nice: 0 } })
    }

    fn tgid(p: Pid) -> Option<u32> {
        Some(p.0)
    }

    #[test]
    fn ranks_order_rt_over_fair_over_idle() {
        let fifo = Rank::Rt { policy: Policy::Fifo, priority: 1 };
        assert!(fifo.outranks(Rank::Fair { nice: -20 }));
        assert!(Rank::Fair { nice: -20 }.outranks(Rank::Fair { nice: 0 }));
        assert!(!Rank::Fair { nice: 0 }.outranks(Rank::Fair { nice: 0 }));
        assert!(Rank::Fair { nice: 19 }.outranks(Rank::Idle));
    }

    #[test]
    fn a_blocked_outranking_client_boosts_its_server_until_it_wakes() {
        let d = detector_with_client_blocked();
        let mut b = Booster::new(100 * MS);
        let (actions, ended) = b.decide(&d, Pid(10), 3, 4, &ranks, &tgid);
        assert_eq!(actions, vec![Action::Raise { tgid: 20, rank: Rank::Fair { nice: -20 } }]);
        assert!(ended.is_empty());
        let boost = b.on_provider(20).unwrap();
        assert_eq!((boost.requester, boost.chain.clone()), (Pid(10), vec![Pid(20)]));
        // Deciding again keeps it without a new action.
        assert!(b.decide(&d, Pid(10), 3, 5, &ranks, &tgid).0.is_empty());
        let (actions, ended) = b.woke(Pid(10));
        assert_eq!((actions, ended.is_some()), (vec![Action::Lower { tgid: 20 }], true));
        assert!(!b.is_boosted(20));
    }

    #[test]
    fn no_boost_when_the_requester_does_not_outrank() {
        let d = detector_with_client_blocked();
        let mut b = Booster::new(100 * MS);
        let same = |_: Pid| Some(Rank::Fair { nice: 0 });
        assert_eq!(b.decide(&d, Pid(10), 3, 4, &same, &tgid), (vec![], vec![]));
    }

    #[test]
    fn boosts_are_bounded_in_time() {
        let d = detector_with_client_blocked();
        let mut b = Booster::new(100 * MS);
        b.decide(&d, Pid(10), 3, 4, &ranks, &tgid);
        let (actions, ended) = b.decide(&d, Pid(10), 3, 3 + 101 * MS, &ranks, &tgid);
        assert_eq!(actions, vec![Action::Lower { tgid: 20 }]);
        assert_eq!(ended[0].1, Ended::Expired);
        assert!(b.decide(&d, Pid(10), 3, 3 + 102 * MS, &ranks, &tgid).0.is_empty(), "spent until it wakes");
        b.woke(Pid(10));
        assert_eq!(b.decide(&d, Pid(10), 200 * MS, 200 * MS + 1, &ranks, &tgid).0.len(), 1);
    }

    #[test]
    fn two_requesters_share_a_provider_and_it_is_lowered_after_the_last() {
        let d = detector_with_client_blocked();
        let mut b = Booster::new(100 * MS);
        b.decide(&d, Pid(10), 3, 4, &ranks, &tgid);
        // A second boost record of the same provider at the same rank raises nothing.
        let mut second = b.active[&Pid(10)].clone();
        second.requester = Pid(11);
        b.active.insert(Pid(11), second);
        assert!(b.woke(Pid(10)).0.is_empty(), "11's boost still holds");
        assert_eq!(b.woke(Pid(11)).0, vec![Action::Lower { tgid: 20 }]);
    }
}
