//! SWAP's dependency-driven scheduling decision (paper 004, section 4): a blocked
//! requester with at least one runnable or virtual runnable provider other than itself
//! is *virtual runnable*; when a scheduler picks it, the runnable provider with the
//! highest (indirect) confidence runs in its place.
//!
//! Decisions are plain data ([`Pick`], [`Link`]) so that the simulator's scheduling
//! class, the live daemon and a future sched_ext scheduler act on the same answer.

use schedlab_model::{Ns, Pid, Resource};
use serde::{Deserialize, Serialize};

use super::confidence::indirect;
use super::detector::SwapDetector;

/// One dependency: `provider` may provide `resource`, which `requester` is blocked on,
/// with confidence `confidence` (the paper's `C(requester, provider, resource)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// The blocked process.
    pub requester: Pid,
    /// The object it requests.
    pub resource: Resource,
    /// A provider of that object.
    pub provider: Pid,
    /// The provider's direct confidence on that object.
    pub confidence: u32,
}

/// A runnable process to run in place of a virtual runnable requester: the chain of
/// dependencies from the requester to it (one link for a direct provider, more through
/// blocked providers) and its confidence (direct, or indirect along the chain).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pick {
    chain: Vec<Link>,
    confidence: u32,
}

impl Pick {
    /// The links from the requester (first) to the runnable provider (last); never empty.
    pub fn chain(&self) -> &[Link] {
        &self.chain
    }

    /// The confidence the decision was made on: the provider's confidence for a direct
    /// provider, the product `C1 · C2 / K …` along the chain for an indirect one.
    pub fn confidence(&self) -> u32 {
        self.confidence
    }

    /// The runnable process to run.
    pub fn provider(&self) -> Pid {
        self.chain[self.chain.len() - 1].provider
    }

    /// The virtual runnable requester it runs for.
    pub fn requester(&self) -> Pid {
        self.chain[0].requester
    }

    /// The requester's direct provider on the chain: the one whose confidence the
    /// feedback of this run is applied to (section 3.1).
    pub fn direct(&self) -> &Link {
        &self.chain[0]
    }
}

impl SwapDetector {
    /// The direct providers of the objects `requester` is blocked on, most confident
    /// first (among equals, the one that reached its confidence first), leaving out
    /// the requester itself and providers whose confidence dropped to zero.
    pub fn ranked_providers(&self, requester: Pid) -> Vec<Link> {
        let mut entries: Vec<(u64, Link)> = Vec::new();
        for r in self.requests(requester) {
            let Some(obj) = self.object(r) else { continue };
            for e in obj.ranked(requester) {
                let link =
                    Link { requester, resource: *r, provider: e.pid, confidence: e.confidence.value() };
                entries.push((e.since, link));
            }
        }
        entries.sort_by_key(|(since, l)| (std::cmp::Reverse(l.confidence), *since));
        entries.into_iter().map(|(_, l)| l).collect()
    }

    /// Every runnable provider that could run in place of `requester`, in the order
    /// SWAP examines them: depth first through the ranked providers, a blocked provider
    /// (`!is_runnable` and requesting something) standing for its own providers with
    /// the indirect confidence `C(P, P1, R) · C(P1, P2, R1) / K`. Empty when
    /// `requester` is runnable or is not blocked on anything with providers.
    ///
    /// Cycle-safe and bounded: the requester is never its own provider, and each
    /// blocked process is examined once per decision, through the first path that
    /// reaches it. A candidate whose indirect confidence rounds down to zero is left
    /// out, as a direct provider at zero is.
    pub fn runnable_candidates(&self, requester: Pid, is_runnable: impl Fn(Pid) -> bool) -> Vec<Pick> {
        let mut out = Vec::new();
        if !is_runnable(requester) {
            let mut expanded = vec![requester];
            self.collect(requester, None, &is_runnable, &mut Vec::new(), &mut expanded, &mut out);
        }
        out
    }

    fn collect(
        &self,
        node: Pid,
        incoming: Option<u32>,
        is_runnable: &dyn Fn(Pid) -> bool,
        chain: &mut Vec<Link>,
        expanded: &mut Vec<Pid>,
        out: &mut Vec<Pick>,
    ) {
        for link in self.ranked_providers(node) {
            let p = link.provider;
            if expanded.contains(&p) {
                continue;
            }
            let k = self.params().for_resource(&link.resource).k;
            let confidence = incoming.map_or(link.confidence, |c| indirect(c, link.confidence, k));
            if confidence == 0 {
                continue;
            }
            chain.push(link);
            if is_runnable(p) {
                out.push(Pick { chain: chain.clone(), confidence });
            } else if !self.requests(p).is_empty() {
                expanded.push(p);
                self.collect(p, Some(confidence), is_runnable, chain, expanded, out);
            }
            chain.pop();
        }
    }

    /// The virtual runnable decision (section 4): the runnable provider to run in place
    /// of the blocked `requester`, the first of highest confidence among
    /// [`SwapDetector::runnable_candidates`]; `None` if `requester` is not virtual
    /// runnable. `is_runnable` says which processes the scheduler could run now.
    pub fn most_confident_runnable_provider(
        &self,
        requester: Pid,
        is_runnable: impl Fn(Pid) -> bool,
    ) -> Option<Pick> {
        let mut best: Option<Pick> = None;
        for c in self.runnable_candidates(requester, is_runnable) {
            if best.as_ref().is_none_or(|b| c.confidence > b.confidence) {
                best = Some(c);
            }
        }
        best
    }

    /// Whether `pid` is virtual runnable: blocked (`!is_runnable`) with at least one
    /// runnable or virtual runnable provider other than itself. A scheduler keeps such
    /// a process on its run queue.
    pub fn is_virtual_runnable(&self, pid: Pid, is_runnable: impl Fn(Pid) -> bool) -> bool {
        !self.runnable_candidates(pid, is_runnable).is_empty()
    }

    /// The blocked requesters that depend on `provider`, directly or through chains of
    /// blocked providers, nearest first: when `provider` wakes up, these become virtual
    /// runnable (section 5: "a process that wakes up will cause all blocked processes
    /// that depend on it to be added to the run queues as virtually runnable").
    pub fn dependents(&self, provider: Pid) -> Vec<Pid> {
        self.served_by(provider).1
    }

    /// How long the picked provider can run before one of the chain's confidences gets
    /// its next negative feedback (the least quantum left along the chain), so that a
    /// scheduler can decide again then, as the paper's example does; `None` if the
    /// chain's entries are gone.
    pub fn feedback_due(&self, pick: &Pick) -> Option<Ns> {
        pick.chain
            .iter()
            .filter_map(|l| {
                let t = self.params().for_resource(&l.resource).t_ns;
                self.confidence(&l.resource, l.provider).map(|c| c.quantum_left(t))
            })
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swap::SwapParams;
    use schedlab_model::{Event, EventKind, PrevState, Syscall, SyscallArgs, NSEC_PER_MSEC};

    const MS: Ns = NSEC_PER_MSEC;

    fn sem(id: i32) -> Resource {
        Resource::SysvSem { id, num: 0 }
    }

    /// A detector and its clock.
    struct World {
        d: SwapDetector,
        now: Ns,
    }

    impl World {
        /// Each (provider, id) of `provides` does a semop on `sem(id)`, then each
        /// (requester, id) of `blocks` blocks in one.
        fn new(params: SwapParams, provides: &[(u32, i32)], blocks: &[(u32, i32)]) -> Self {
            let mut w = World { d: SwapDetector::new(params), now: 0 };
            let nr = Syscall::Semop.nr();
            for &(p, id) in provides {
                let args = SyscallArgs { resource: Some(sem(id)), ..Default::default() };
                w.ev(EventKind::SyscallEnter { pid: Pid(p), nr, args }, 0);
                w.ev(EventKind::SyscallExit { pid: Pid(p), nr, ret: 0 }, 0);
            }
            for &(p, id) in blocks {
                let args = SyscallArgs { resource: Some(sem(id)), ..Default::default() };
                w.ev(EventKind::SyscallEnter { pid: Pid(p), nr, args }, 0);
                w.ev(EventKind::Block { pid: Pid(p), resource: Some(sem(id)) }, 0);
            }
            w
        }

        /// Feeds one event now, then lets `dt` pass.
        fn ev(&mut self, kind: EventKind, dt: Ns) {
            self.d.observe(&Event { time: self.now, kind });
            self.now += dt;
        }

        /// Brings the confidence of `provider` on `sem(id)` to `value` by feedback: a
        /// requester 99 (not a provider) blocks on it, and the provider wakes it or runs
        /// a quantum without doing so.
        fn set(&mut self, provider: u32, id: i32, value: u32) {
            let t = self.d.params().t_ns;
            let (p, r) = (Pid(provider), Pid(99));
            let conf = |w: &World| w.d.confidence(&sem(id), p).unwrap().value();
            while conf(self) != value {
                self.ev(EventKind::Block { pid: r, resource: Some(sem(id)) }, 0);
                if conf(self) < value {
                    self.ev(EventKind::Wakeup { waker: p, wakee: r, cpu: 0 }, 0);
                } else {
                    self.ev(
                        EventKind::Switch {
                            cpu: 7,
                            prev: Pid::IDLE,
                            prev_state: PrevState::Runnable,
                            next: p,
                        },
                        t,
                    );
                    self.ev(
                        EventKind::Switch {
                            cpu: 7,
                            prev: p,
                            prev_state: PrevState::Runnable,
                            next: Pid::IDLE,
                        },
                        0,
                    );
                    self.ev(EventKind::Wakeup { waker: Pid::IDLE, wakee: r, cpu: 0 }, 0);
                }
                self.ev(EventKind::SyscallExit { pid: r, nr: Syscall::Semop.nr(), ret: 0 }, 0);
            }
        }
    }

    fn summary(picks: &[Pick]) -> Vec<(u32, u32)> {
        picks.iter().map(|p| (p.provider().0, p.confidence())).collect()
    }

    #[test]
    fn indirect_confidence_ranks_chains() {
        // P1 waits on R1 (providers P2, P3); P3 waits on R2 (providers P4, P5).
        let mut w = World::new(SwapParams::default(), &[(2, 1), (3, 1), (4, 2), (5, 2)], &[(3, 2), (1, 1)]);
        let runnable = |p: Pid| [2, 4, 5].contains(&p.0);
        let all = w.d.runnable_candidates(Pid(1), runnable);
        assert_eq!(summary(&all), vec![(2, 20), (4, 20), (5, 20)]);
        let pick = w.d.most_confident_runnable_provider(Pid(1), runnable).unwrap();
        assert_eq!(pick.provider(), Pid(2), "the first of the highest confidence");
        w.set(3, 1, 30); // C(P1, P3, R1) = 30
        w.set(5, 2, 27); // C(P3, P5, R2) = 27
        w.set(2, 1, 35);
        let all = w.d.runnable_candidates(Pid(1), runnable);
        // P4: 30 · 20 / 20 = 30; P5: 30 · 27 / 20 = 40 (rounded down from 40.5).
        assert_eq!(summary(&all), vec![(2, 35), (5, 40), (4, 30)]);
        let pick = w.d.most_confident_runnable_provider(Pid(1), runnable).unwrap();
        assert_eq!(pick.provider(), Pid(5));
        assert_eq!(pick.requester(), Pid(1));
        assert_eq!(pick.direct().provider, Pid(3), "feedback goes to the direct provider");
        let chain: Vec<(u32, u32, u32)> =
            pick.chain().iter().map(|l| (l.requester.0, l.provider.0, l.confidence)).collect();
        assert_eq!(chain, vec![(1, 3, 30), (3, 5, 27)]);
        assert_eq!(w.d.ranked_providers(Pid(1)).iter().map(|l| l.provider.0).collect::<Vec<_>>(), vec![2, 3]);
    }

    #[test]
    fn indirect_uses_the_inner_resources_k() {
        let mut p = SwapParams::default();
        p.per_kind.insert("sysv_sem".into(), crate::swap::KindParams { k: 10, t_ns: 20 * MS });
        let w = World::new(p, &[(3, 1), (4, 2)], &[(3, 2), (1, 1)]);
        // Both edges at their base 10: 10 · 10 / 10 = 10.
        let pick = w.d.most_confident_runnable_provider(Pid(1), |p| p == Pid(4)).unwrap();
        assert_eq!((pick.provider(), pick.confidence()), (Pid(4), 10));
    }

    #[test]
    fn zero_confidence_and_runnable_requesters_are_not_picked() {
        let mut w = World::new(SwapParams::default(), &[(2, 1), (3, 1)], &[(1, 1)]);
        w.set(2, 1, 0);
        let runnable = |p: Pid| p != Pid(1);
        assert_eq!(summary(&w.d.runnable_candidates(Pid(1), runnable)), vec![(3, 20)]);
        w.set(3, 1, 0);
        assert!(!w.d.is_virtual_runnable(Pid(1), runnable), "every provider dropped out");
        let w = World::new(SwapParams::default(), &[(2, 1)], &[(1, 1)]);
        assert!(w.d.is_virtual_runnable(Pid(1), |p| p == Pid(2)));
        assert!(!w.d.is_virtual_runnable(Pid(1), |_| true), "a runnable requester runs itself");
        assert!(!w.d.is_virtual_runnable(Pid(1), |_| false), "nobody can run");
        assert!(!w.d.is_virtual_runnable(Pid(2), |p| p != Pid(2)), "not blocked on anything");
        // Indirect confidence that rounds to zero drops out too: 1 · 1 / 20 = 0.
        let mut w = World::new(SwapParams::default(), &[(3, 1), (4, 2)], &[(3, 2), (1, 1)]);
        w.set(3, 1, 1);
        w.set(4, 2, 1);
        assert!(w.d.most_confident_runnable_provider(Pid(1), |p| p == Pid(4)).is_none());
    }

    #[test]
    fn cycles_end() {
        // P1 and P2 each wait for the other (both provide both objects); P3 provides R1.
        let w =
            World::new(SwapParams::default(), &[(1, 1), (2, 1), (1, 2), (2, 2), (3, 1)], &[(1, 2), (2, 1)]);
        let runnable = |p: Pid| p == Pid(3);
        assert_eq!(summary(&w.d.runnable_candidates(Pid(1), runnable)), vec![(3, 20)]);
        let pick = w.d.most_confident_runnable_provider(Pid(1), runnable).unwrap();
        let chain: Vec<u32> = pick.chain().iter().map(|l| l.provider.0).collect();
        assert_eq!(chain, vec![2, 3]);
        assert!(
            w.d.most_confident_runnable_provider(Pid(1), |_| false).is_none(),
            "a pure cycle is a deadlock"
        );
        assert_eq!(w.d.dependents(Pid(3)), vec![Pid(2), Pid(1)]);
    }

    #[test]
    fn dependents_follow_chains_of_blocked_providers() {
        let w = World::new(SwapParams::default(), &[(3, 1), (4, 2), (5, 2)], &[(3, 2), (1, 1), (6, 2)]);
        assert_eq!(w.d.dependents(Pid(4)), vec![Pid(3), Pid(6), Pid(1)]);
        assert_eq!(w.d.dependents(Pid(3)), vec![Pid(1), Pid(6)], "P3's semop made it a provider of R2 too");
        assert!(w.d.dependents(Pid(1)).is_empty());
    }

    #[test]
    fn feedback_is_due_at_the_least_quantum_left_on_the_chain() {
        let mut w = World::new(SwapParams::default(), &[(3, 1), (4, 2)], &[(3, 2), (1, 1)]);
        let pick = w.d.most_confident_runnable_provider(Pid(1), |p| p == Pid(4)).unwrap();
        assert_eq!(w.d.feedback_due(&pick), Some(20 * MS));
        w.ev(
            EventKind::Switch { cpu: 0, prev: Pid::IDLE, prev_state: PrevState::Runnable, next: Pid(4) },
            7 * MS,
        );
        w.ev(
            EventKind::Switch { cpu: 0, prev: Pid(4), prev_state: PrevState::Runnable, next: Pid::IDLE },
            MS,
        );
        assert_eq!(w.d.feedback_due(&pick), Some(13 * MS));
        w.ev(EventKind::Wakeup { waker: Pid(4), wakee: Pid(3), cpu: 0 }, 0);
        assert_eq!(w.d.feedback_due(&pick), Some(13 * MS), "P3's entry still has 7 ms run");
        w.ev(EventKind::Exit { pid: Pid(3), code: 0, life: None }, 0);
        w.ev(EventKind::Exit { pid: Pid(4), code: 0, life: None }, 0);
        assert_eq!(w.d.feedback_due(&pick), None);
    }
}
