//! The worked example of paper 004, section 4 (Figure 2), replayed through the event
//! stream, as a table of steps for tests and for `schedlab reproduce`.
//!
//! P1 is blocked requesting R1, whose providers are P2 and P3; P3 is blocked requesting
//! R2, whose providers are P4 and P5. P4 needs to run 40 ms to provide R2 (waking P3),
//! and P3 then 20 ms to provide R1 (waking P1); P2 and P5 provide nothing this time.
//! K = 20, T = 100 ms, and every confidence starts at K. The paper's narrative: P2 runs
//! first (all three candidates at 20, P2 first), gets negative feedback after 100 ms
//! (`C(P1, P2, R1)` = 19); P4 (indirect 20 · 20 / 20 = 20) runs next and after 40 ms
//! wakes P3; P3 (20, above P2's 19) runs 20 ms and wakes P1.
//!
//! The example is abstract about the resources; here R1 and R2 are two System V
//! semaphores ([`FIGURE2_R1`], [`FIGURE2_R2`]), which every process has incremented once
//! (so each is a provider) before P3 and then P1 block decrementing them. One CPU; the
//! scheduler always picks P1, and [`SwapDetector::most_confident_runnable_provider`]
//! runs in its place, until the next feedback ([`SwapDetector::feedback_due`]) or until
//! the provider provides.

use schedlab_model::{Event, EventKind, Ns, Pid, PrevState, Resource, Syscall, SyscallArgs, NSEC_PER_MSEC};
use serde::{Deserialize, Serialize};

use super::confidence::SwapParams;
use super::detector::SwapDetector;

/// R1 of the example: the semaphore P1 waits on.
pub const FIGURE2_R1: Resource = Resource::SysvSem { id: 1, num: 0 };
/// R2 of the example: the semaphore P3 waits on.
pub const FIGURE2_R2: Resource = Resource::SysvSem { id: 2, num: 0 };

/// The example's parameters: K = 20, T = 100 ms (L and the rest at their defaults).
pub fn figure2_params() -> SwapParams {
    SwapParams { k: 20, t_ns: 100 * NSEC_PER_MSEC, ..SwapParams::default() }
}

/// How one run of a provider in P1's place ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// A confidence quantum T was used up without providing: negative feedback.
    NegativeFeedback,
    /// The provider provided its resource and woke this process: positive feedback.
    Woke(Pid),
}

/// One confidence of the example, in the paper's notation `C(requester, provider,
/// resource)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeConfidence {
    /// The requester of the notation (P1 for R1, P3 for R2).
    pub requester: Pid,
    /// The provider.
    pub provider: Pid,
    /// The resource.
    pub resource: Resource,
    /// The confidence value (0 if the provider is no longer listed).
    pub confidence: u32,
}

/// One decision of the example: who ran in P1's place, for how long, with what result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figure2Step {
    /// When the decision was made, in nanoseconds from the start.
    pub at_ns: Ns,
    /// The runnable candidates and their (indirect) confidences, in the order SWAP
    /// examined them.
    pub candidates: Vec<(Pid, u32)>,
    /// The provider that ran.
    pub ran: Pid,
    /// The chain from P1 to the provider that ran (`[P1, P3, P4]` for P4).
    pub chain: Vec<Pid>,
    /// How long it ran.
    pub ran_ns: Ns,
    /// How the run ended.
    pub outcome: RunOutcome,
    /// The four confidences of the example after the run: `C(P1, P2, R1)`,
    /// `C(P1, P3, R1)`, `C(P3, P4, R2)`, `C(P3, P5, R2)`.
    pub confidences: Vec<EdgeConfidence>,
}

/// The paper's Figure 2 example with its own parameters (K = 20, T = 100 ms).
pub fn figure2_steps() -> Vec<Figure2Step> {
    figure2_replay(figure2_params())
}

/// The Figure 2 example replayed with `params` (to show, for instance, how a shorter
/// quantum T makes SWAP alternate between providers). Stops when P1 is woken, or
/// after 1000 decisions.
pub fn figure2_replay(params: SwapParams) -> Vec<Figure2Step> {
    let (p1, p2, p3, p4, p5) = (Pid(1), Pid(2), Pid(3), Pid(4), Pid(5));
    let (r1, r2) = (FIGURE2_R1, FIGURE2_R2);
    let mut x = Replay { d: SwapDetector::new(params), now: 0 };
    for (pid, r) in [(p2, r1), (p3, r1), (p4, r2), (p5, r2)] {
        x.semop(pid, r, 1);
        x.returns(pid);
    }
    for (pid, r) in [(p3, r2), (p1, r1)] {
        x.semop(pid, r, -1);
        x.ev(EventKind::Block { pid, resource: Some(r) });
    }
    // Who provides what after how much running: (provider, ns left, resource, wakes).
    let mut work = vec![(p4, 40 * NSEC_PER_MSEC, r2, p3), (p3, 20 * NSEC_PER_MSEC, r1, p1)];
    let edges = [(p1, p2, r1), (p1, p3, r1), (p3, p4, r2), (p3, p5, r2)];
    let mut steps = Vec::new();
    while x.d.is_blocked(p1) && steps.len() < 1000 {
        let runnable = |q: Pid| !x.d.is_blocked(q);
        let candidates =
            x.d.runnable_candidates(p1, runnable).iter().map(|c| (c.provider(), c.confidence())).collect();
        let Some(pick) = x.d.most_confident_runnable_provider(p1, runnable) else { break };
        let Some(due) = x.d.feedback_due(&pick) else { break };
        let (ran, at_ns) = (pick.provider(), x.now);
        x.ev(EventKind::Switch { cpu: 0, prev: Pid::IDLE, prev_state: PrevState::Runnable, next: ran });
        if !x.d.requests(ran).is_empty() {
            // Woken earlier, it first returns from the call it blocked in.
            x.returns(ran);
        }
        let job = work.iter().position(|w| w.0 == ran);
        let (ran_ns, outcome) = match job {
            Some(i) if work[i].1 <= due => {
                let (_, need, r, wakee) = work.remove(i);
                x.now += need;
                x.semop(ran, r, 1);
                x.ev(EventKind::Wakeup { waker: ran, wakee, cpu: 0 });
                x.returns(ran);
                (need, RunOutcome::Woke(wakee))
            }
            _ => {
                if let Some(i) = job {
                    work[i].1 -= due;
                }
                x.now += due;
                (due, RunOutcome::NegativeFeedback)
            }
        };
        x.ev(EventKind::Switch { cpu: 0, prev: ran, prev_state: PrevState::Runnable, next: Pid::IDLE });
        let confidences = edges
            .iter()
            .map(|&(requester, provider, resource)| EdgeConfidence {
                requester,
                provider,
                resource,
                confidence: x.d.confidence(&resource, provider).map_or(0, |c| c.value()),
            })
            .collect();
        let mut chain = vec![p1];
        chain.extend(pick.chain().iter().map(|l| l.provider));
        steps.push(Figure2Step { at_ns, candidates, ran, chain, ran_ns, outcome, confidences });
    }
    steps
}

/// The detector and the clock of the replay.
struct Replay {
    d: SwapDetector,
    now: Ns,
}

impl Replay {
    fn ev(&mut self, kind: EventKind) {
        self.d.observe(&Event { time: self.now, kind });
    }

    /// `pid` enters `semop` adding `delta` to `r`.
    fn semop(&mut self, pid: Pid, r: Resource, delta: i64) {
        let Resource::SysvSem { id, .. } = r else { unreachable!("the example's resources are semaphores") };
        let args =
            SyscallArgs { sysv_id: Some(id), count: Some(delta), resource: Some(r), ..Default::default() };
        self.ev(EventKind::SyscallEnter { pid, nr: Syscall::Semop.nr(), args });
    }

    /// `pid`'s `semop` returns 0.
    fn returns(&mut self, pid: Pid) {
        self.ev(EventKind::SyscallExit { pid, nr: Syscall::Semop.nr(), ret: 0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = NSEC_PER_MSEC;

    #[test]
    fn the_paper_order_is_p2_p4_p3() {
        let steps = figure2_steps();
        let ran: Vec<(u32, Ns)> = steps.iter().map(|s| (s.ran.0, s.ran_ns / MS)).collect();
        assert_eq!(ran, vec![(2, 100), (4, 40), (3, 20)]);
        assert_eq!(steps[0].confidences[0].confidence, 19, "C(P1, P2, R1) after P2's quantum");
    }

    #[test]
    fn a_shorter_quantum_alternates_providers() {
        // With T = 20 ms, P2's first quantum ends at 19, and P4 (through P3) gets only 20
        // ms before both C(P3, P4, R2) and C(P1, P3, R1) fall to 19.
        let steps = figure2_replay(SwapParams { t_ns: 20 * MS, ..figure2_params() });
        assert_eq!((steps[0].ran, steps[0].ran_ns), (Pid(2), 20 * MS));
        assert_eq!(
            (steps[1].ran, steps[1].ran_ns, steps[1].outcome),
            (Pid(4), 20 * MS, RunOutcome::NegativeFeedback)
        );
        let after: Vec<u32> = steps[1].confidences.iter().map(|c| c.confidence).collect();
        assert_eq!(after, vec![19, 19, 19, 20]);
        // Then P2 (19, reached first) beats P5 (19 · 20 / 20 = 19) and P4 (19 · 19 / 20 = 18).
        assert_eq!(steps[2].candidates, vec![(Pid(2), 19), (Pid(5), 19), (Pid(4), 18)]);
        let last = steps.last().unwrap();
        assert_eq!(last.outcome, RunOutcome::Woke(Pid(1)), "P1 is eventually woken");
        let ran = |p: u32| steps.iter().filter(|s| s.ran == Pid(p)).map(|s| s.ran_ns).sum::<Ns>();
        assert_eq!((ran(4), ran(3)), (40 * MS, 20 * MS), "P4 and P3 did their work");
        assert!(steps.len() > 3);
    }
}
