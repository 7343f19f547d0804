//! Provider boosts (paper 004): the [`Booster`](crate::daemon::boost::Booster) decides
//! who inherits whose rank; here its actions become decisions, logged and counted.

use schedlab_model::{Ns, Pid};

use super::{Applied, Core, Decision, Machine, Outcome, Proc, Raise, RaiseId, State};
use crate::daemon::boost::{Action, Ended, Rank};
use crate::daemon::classes::ClassReason;

/// How long a boost outlives its requester's wake-up. A requester often blocks again at
/// once: a UNIX socket's reader is woken when its peer reads what it sent (the freed
/// space wakes the socket's one wait queue), finds nothing and blocks; a client gets its
/// answer and sends the next request. Ending the boost at each wake-up and raising it
/// at the next block costs two journaled changes and a reaction time each, with the
/// provider back at its own rank in between, where SWAP in the kernel pays nothing (its
/// requester is a virtual runnable process, paper 004 §3.2). So a boost ends only once
/// its requester has stayed awake this long (or exited); a block again before keeps it,
/// with the bound `boost_max_ms` counted from the new block. A provider keeps its
/// requester's rank at most this long after it is needed. The loop turns every 1 ms
/// while a boost lingers, so it ends 1–2 ms after the wake-up.
pub const BOOST_LINGER_NS: Ns = 1_000_000;

/// The highest real-time priority a provider inherits: below the kernel's threaded
/// interrupt handlers (50), which a boosted provider must never hold off.
pub const MAX_INHERITED_RT_PRIORITY: u32 = 49;

/// The most (provider, requester) pairs remembered as boosted (their first boost is
/// logged, later ones only kept for `explain`).
const MAX_BOOSTED_PAIRS: usize = 4096;

/// The raises boosts made on one provider process.
#[derive(Debug, Default)]
pub(super) struct Raised {
    /// Oldest first; ended last first.
    ids: Vec<RaiseId>,
    /// Until when they hold whatever the core does (the latest lease given): the
    /// requester's block plus `boost_max_ms` plus [`BOOST_LINGER_NS`].
    until: Ns,
}

impl Core {
    /// Decides the boosts in force again: confidences change, boosts expire, providers
    /// block. Only requesters with a boost in force are decided again (a machine has hundreds
    /// of threads blocked for good); one without a boost when it blocked is decided again
    /// at its next block.
    pub(super) fn decide_boosts(&mut self, m: &mut dyn Machine) {
        let Some(booster) = &self.booster else { return };
        let boosted: Vec<(Pid, Ns)> = booster
            .requesters()
            .into_iter()
            .filter_map(|p| self.blocked.get(&p).map(|&since| (p, since)))
            .collect();
        for (pid, since) in boosted {
            self.decide_boost(pid, since, m);
        }
    }

    /// Decides the boost of `requester`, blocked since `since`.
    pub(super) fn decide_boost(&mut self, requester: Pid, since: Ns, m: &mut dyn Machine) {
        let Some(booster) = &mut self.booster else { return };
        self.deps.advance_to(m.monotonic_ns().max(since));
        let tgids = &self.tgids;
        let tgid_of = |p: Pid| -> Option<u32> {
            tgids.get(&p.0).copied().or_else(|| m.task(p.0).map(|t| t.tgid).filter(|&t| t != 0))
        };
        let rank_of = |p: Pid| m.rank(p);
        let (actions, ended) =
            booster.decide(self.deps.detector(), requester, since, m.monotonic_ns(), &rank_of, &tgid_of);
        let lent =
            booster.lent(requester).map(|b| (b.provider_tgid, b.since + booster.max_ns + BOOST_LINGER_NS));
        if lent.is_some() {
            self.mark_urgent(requester.0, m);
        }
        for (b, why) in ended {
            self.counters.boosts_expired += u64::from(why == Ended::Expired);
            if why == Ended::Expired {
                let name = self.name(b.provider_tgid, m);
                self.note(Some(b.provider_tgid), format!("{name}: boost for {} expired", b.requester.0), m);
            }
        }
        self.boost_actions(actions, since, m);
        if let Some((tgid, until)) = lent {
            self.renew(tgid, until, m);
        }
    }

    /// The raises on provider `tgid` hold until `until` now, if that is later.
    fn renew(&mut self, tgid: u32, until: Ns, m: &mut dyn Machine) {
        let Some(r) = self.raised.get_mut(&tgid).filter(|r| r.until < until) else { return };
        r.until = until;
        for &id in &r.ids {
            m.enforce(&Decision::Renew { id, until });
        }
    }

    /// `requester` woke up at `at` (the kernel's clock): a boost in force lingers
    /// ([`BOOST_LINGER_NS`]); otherwise what the booster keeps of it ends now.
    pub(super) fn requester_woke(&mut self, requester: Pid, at: Ns, m: &mut dyn Machine) {
        if self.booster.as_ref().is_some_and(|b| b.lends(requester)) {
            self.lingering.insert(requester, at);
        } else {
            self.end_boost(requester, Ended::Wakeup, m);
        }
    }

    /// Ends the boosts whose requesters have been awake for [`BOOST_LINGER_NS`].
    pub(super) fn end_lingering(&mut self, m: &mut dyn Machine) {
        let now = m.monotonic_ns();
        let mut over: Vec<Pid> = self
            .lingering
            .iter()
            .filter(|&(_, &woke)| now.saturating_sub(woke) >= BOOST_LINGER_NS)
            .map(|(&p, _)| p)
            .collect();
        over.sort();
        for requester in over {
            self.lingering.remove(&requester);
            self.end_boost(requester, Ended::Wakeup, m);
        }
    }

    /// `requester` woke up (or exited): its boost ends.
    pub(super) fn end_boost(&mut self, requester: Pid, why: Ended, m: &mut dyn Machine) {
        let Some(booster) = &mut self.booster else { return };
        let (actions, ended) = booster.woke(requester);
        if ended.is_some() && why == Ended::Wakeup {
            self.counters.boosts_ended_by_wakeup += 1;
        }
        self.boost_actions(actions, 0, m);
    }

    /// Carries out the booster's actions for a requester blocked since `since` (0: no
    /// reaction time to record).
    fn boost_actions(&mut self, actions: Vec<Action>, since: Ns, m: &mut dyn Machine) {
        for a in actions {
            match a {
                Action::Raise { tgid, rank } => {
                    let inherited = self.inheritable(rank, tgid, m);
                    let b = self.booster.as_ref().and_then(|b| b.on_provider(tgid)).cloned();
                    let why = b.as_ref().map_or_else(String::new, |b| {
                        format!(
                            "provider of {} blocked on {} (confidence {}), inherits {}",
                            self.name(b.requester.0, m),
                            b.resource,
                            b.confidence,
                            inherited.describe()
                        )
                    });
                    self.ensure_known(tgid, m);
                    let raise = match inherited {
                        Rank::Rt { policy, priority } => Raise::RealTime { policy, priority },
                        Rank::Fair { nice } => Raise::Nice(nice),
                        Rank::Idle => continue,
                    };
                    if self.boosted_pairs.len() >= MAX_BOOSTED_PAIRS {
                        // Forgetting the pairs only makes their next boosts logged again.
                        self.boosted_pairs.clear();
                    }
                    let first = b
                        .as_ref()
                        .is_some_and(|b| self.boosted_pairs.insert((b.provider_tgid, b.requester.0)));
                    if let Some(b) = &b {
                        let provider = Decision::Provider {
                            requester: b.requester,
                            provider: b.provider,
                            confidence: b.confidence,
                        };
                        if let Outcome::Failed(e) = m.enforce(&provider) {
                            self.counters.failed_changes += 1;
                            self.note_quietly(Some(tgid), format!("naming the provider failed: {e}"), m);
                        }
                    }
                    let max_ns = self.booster.as_ref().map_or(0, |b| b.max_ns);
                    let until = b.as_ref().map_or(since, |b| b.since) + max_ns + BOOST_LINGER_NS;
                    let decided = m.monotonic_ns();
                    // Held: the provider is there by itself; nothing to lower later.
                    if self.raise_noted(tgid, raise, until, &why, first, m) == Applied::Made {
                        self.counters.boosts_total += 1;
                        if since > 0 {
                            let made = m.monotonic_ns();
                            self.reaction.record(made.saturating_sub(since));
                            if let Some(read) = self.batch_read {
                                self.reaction_stages.record(since, read, decided, made);
                            }
                        }
                    }
                }
                Action::Lower { tgid } => {
                    let Some(raised) = self.raised.remove(&tgid) else { continue };
                    let Some(process) = self.procs.get(&tgid).map(|p| p.info.key()) else { continue };
                    for id in raised.ids.into_iter().rev() {
                        match m.enforce(&Decision::EndRaise { process, id }) {
                            Outcome::Shown => {
                                let name = self.name(tgid, m);
                                self.note_quietly(Some(tgid), format!("would end the boost of {name}"), m);
                            }
                            Outcome::Failed(e) => {
                                self.counters.failed_changes += 1;
                                let name = self.name(tgid, m);
                                self.note(Some(tgid), format!("{name}: ending its boost failed: {e}"), m);
                            }
                            Outcome::Made | Outcome::Skipped | Outcome::Gone => {}
                        }
                    }
                }
            }
        }
    }

    /// Raises provider `tgid` (a boost) until `until` at the latest; whether it was
    /// raised (or, in a dry run, shown), or holds the rank by itself. Logged (`loud`)
    /// or only kept for `explain`, as [`Core::change_noted`].
    fn raise_noted(
        &mut self,
        tgid: u32,
        raise: Raise,
        until: Ns,
        why: &str,
        loud: bool,
        m: &mut dyn Machine,
    ) -> Applied {
        let change = raise.as_change();
        if m.holds(tgid, &change) {
            self.record(tgid, &change);
            return Applied::Held;
        }
        let Some(process) = self.procs.get(&tgid).map(|p| p.info.key()) else { return Applied::Not };
        let id = RaiseId(self.next_raise);
        self.next_raise += 1;
        let decision = Decision::Raise { process, raise, id, until };
        let applied = self.enforce_noted(tgid, &[change], &decision, why, loud, m);
        if applied == Applied::Made {
            let raised = self.raised.entry(tgid).or_default();
            raised.ids.push(id);
            raised.until = raised.until.max(until);
        }
        applied
    }

    /// What provider process `tgid` may inherit of a requester's `rank`, as the kernel's
    /// own priority inheritance would give it and no more: a real-time policy only up
    /// to [`MAX_INHERITED_RT_PRIORITY`], and only if the provider's `RLIMIT_RTPRIO`
    /// would let it take that priority itself (or `boost_realtime` allows any); else
    /// nice −20, the strongest fair rank. An unprivileged process that happens to
    /// provide for a real-time waiter is not made real time by the daemon.
    fn inheritable(&self, rank: Rank, tgid: u32, m: &dyn Machine) -> Rank {
        match rank {
            Rank::Rt { policy, priority } => {
                let priority = priority.min(MAX_INHERITED_RT_PRIORITY);
                let allowed = self.config.daemon.boost_realtime
                    || m.rt_priority_limit(tgid).is_some_and(|limit| limit >= priority);
                if allowed {
                    Rank::Rt { policy, priority }
                } else {
                    Rank::Fair { nice: -20 }
                }
            }
            other => other,
        }
    }

    /// Makes sure a process (a provider no class covers) is known.
    pub(super) fn ensure_known(&mut self, tgid: u32, m: &mut dyn Machine) {
        if self.procs.contains_key(&tgid) {
            return;
        }
        if let Some(info) = m.process(tgid) {
            let mut p = Proc::new(info, m.now());
            p.reason = ClassReason::Unclassified { why: "a provider, boosted".into() };
            p.state = State::Left("a provider (boosted only)".into());
            self.procs.insert(tgid, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use schedlab_model::{EventKind, Ns, Pid, Policy, PrevState, Resource, SyscallArgs};

    use crate::daemon::core::fake::{FakeMachine, Settings};
    use crate::daemon::core::{Core, Decision, Raise, RaiseId};
    use crate::daemon::kernel::Kernel;

    const MS: Ns = 1_000_000;

    /// Server 20 named the provider of requester `requester` (SWAP's base confidence, 20,
    /// on a first wake-up), then raised (raise `id`) for the requester blocked at
    /// `since`: it holds until `boost_max_ms` (100) plus the linger after, whatever the
    /// loop does.
    fn boost_server(m: &FakeMachine, requester: u32, raise: Raise, id: u64, since: Ns) -> Vec<Decision> {
        let provider = Decision::Provider { requester: Pid(requester), provider: Pid(20), confidence: 20 };
        vec![
            provider,
            Decision::Raise { process: m.key(20), raise, id: RaiseId(id), until: since + 101 * MS },
        ]
    }

    fn end_server(m: &FakeMachine) -> Decision {
        Decision::EndRaise { process: m.key(20), id: RaiseId(1) }
    }

    const BOOST: &str =
        "[daemon]\nmodel = false\nslices = false\nboost = true\nboost_max_ms = 100\nmin_age_ms = 0\n";

    /// Client 10 (nice −20) blocks reading pipe 5, which server 20 (nice 0) writes.
    fn client_blocked_on_its_server() -> (FakeMachine, Core) {
        blocked_on_server(BOOST, |s| s.nice = -20, 0)
    }

    /// Client 10 (its rank set by `client`) blocks reading pipe 5, which server 20
    /// (nice 0, `RLIMIT_RTPRIO` `server_rt_limit`) writes.
    fn blocked_on_server(
        config: &str,
        client: impl FnOnce(&mut Settings),
        server_rt_limit: u32,
    ) -> (FakeMachine, Core) {
        let mut m = FakeMachine::new();
        let mut core = m.core(config, None);
        client(&mut m.spawn(10, "client", Duration::from_secs(10)).settings);
        m.spawn(20, "server", Duration::from_secs(10)).settings.rt_limit = server_rt_limit;
        core.running(&[10, 20], &mut m);
        assert_eq!(m.take(), vec![Decision::Watch { tid: 10, on: true }], "the client outranks nice 0");
        let switch = |prev, prev_state, next| EventKind::Switch { cpu: 0, prev, prev_state, next };
        let write = SyscallArgs {
            fd: Some(4),
            resource: Some(Resource::Pipe { inode: 5, write: true }),
            ..Default::default()
        };
        let events = [
            m.event(switch(Pid::IDLE, PrevState::Runnable, Pid(20))),
            m.event(EventKind::SyscallEnter { pid: Pid(20), nr: 1, args: write }),
            m.event(switch(Pid(20), PrevState::Runnable, Pid(10))),
            m.event(EventKind::Block {
                pid: Pid(10),
                resource: Some(Resource::Pipe { inode: 5, write: false }),
            }),
            m.event(switch(Pid(10), PrevState::Blocked, Pid(20))),
        ];
        core.events(&events, &mut m);
        (m, core)
    }

    #[test]
    fn a_blocked_requester_raises_its_provider_until_it_wakes() {
        let (mut m, mut core) = client_blocked_on_its_server();
        let since = m.monotonic_ns();
        assert_eq!(
            m.take(),
            boost_server(&m, 10, Raise::Nice(-20), 1, since),
            "the server inherits the client's rank"
        );
        let row = core.explain(20, &m).unwrap().process;
        assert_eq!(row.boost.map(|b| (b.requester, b.inherited)), Some((10, "nice -20".into())));
        let wakeup = m.event(EventKind::Wakeup { waker: Pid(20), wakee: Pid(10), cpu: 0 });
        core.events(&[wakeup], &mut m);
        core.tick(&mut m);
        assert_eq!(m.take(), vec![], "the boost lingers after the wake-up");
        m.advance(Duration::from_micros(999));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![]);
        assert_eq!(core.next_wait(&m), Duration::from_millis(1), "the loop turns in time to end it");
        m.advance(Duration::from_micros(1));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![end_server(&m)]);
        assert_eq!(m.settings_of(20).nice, 0, "the server has its own rank again");
        let stats = core.stats(&m);
        assert_eq!((stats.boosts_total, stats.boosts_ended_by_wakeup, stats.boosts_active), (1, 1, 0));
    }

    #[test]
    fn a_real_time_requester_lends_real_time_only_within_the_providers_own_limit() {
        let fifo_80 = |s: &mut Settings| {
            s.policy = Policy::Fifo;
            s.priority = 80;
        };
        let fifo_49 = Raise::RealTime { policy: Policy::Fifo, priority: 49 };
        for (config, limit, inherited) in [
            // No RLIMIT_RTPRIO of its own: the strongest fair rank instead.
            (BOOST.to_string(), 0, Raise::Nice(-20)),
            // A limit below the priority: the same.
            (BOOST.to_string(), 10, Raise::Nice(-20)),
            // Allowed to take 80 itself: real time, capped below threaded interrupts.
            (BOOST.to_string(), 99, fifo_49),
            // The configuration allows real time whatever the limit: capped all the same.
            (format!("{BOOST}boost_realtime = true\n"), 0, fifo_49),
        ] {
            let (mut m, _core) = blocked_on_server(&config, fifo_80, limit);
            let since = m.monotonic_ns();
            assert_eq!(m.take(), boost_server(&m, 10, inherited, 1, since), "limit {limit}, {config}");
        }
    }

    #[test]
    fn a_requester_blocking_again_at_once_keeps_its_providers_boost() {
        let (mut m, mut core) = client_blocked_on_its_server();
        let since = m.monotonic_ns();
        assert_eq!(m.take(), boost_server(&m, 10, Raise::Nice(-20), 1, since));
        let read = Resource::Pipe { inode: 5, write: false };
        for _ in 0..3 {
            // Woken (a spurious wake-up, or the answer), blocked again 200 µs later.
            let wakeup = m.event(EventKind::Wakeup { waker: Pid(20), wakee: Pid(10), cpu: 0 });
            core.events(&[wakeup], &mut m);
            m.advance(Duration::from_micros(200));
            core.tick(&mut m);
            let block = m.event(EventKind::Block { pid: Pid(10), resource: Some(read) });
            core.events(std::slice::from_ref(&block), &mut m);
            m.advance(Duration::from_millis(2));
            core.tick(&mut m);
            assert_eq!(
                m.take(),
                vec![Decision::Renew { id: RaiseId(1), until: block.time + 101 * MS }],
                "no change: the provider keeps the rank, for longer"
            );
        }
        assert_eq!(core.stats(&m).boosts_active, 1);
        // Exits while its boost lingers: the boost ends at once.
        let wakeup = m.event(EventKind::Wakeup { waker: Pid(20), wakee: Pid(10), cpu: 0 });
        let exit = m.event(EventKind::Exit { pid: Pid(10), code: 0, life: None });
        core.events(&[wakeup, exit], &mut m);
        assert!(m.take().contains(&end_server(&m)));
    }

    #[test]
    fn a_boost_ends_when_it_has_lasted_boost_max_ms() {
        let (mut m, mut core) = client_blocked_on_its_server();
        let since = m.monotonic_ns();
        assert_eq!(m.take(), boost_server(&m, 10, Raise::Nice(-20), 1, since));
        m.advance(Duration::from_millis(100));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![], "100 ms: still on");
        m.advance(Duration::from_millis(1));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![end_server(&m)]);
        let last = core.explain(20, &m).unwrap().decisions.pop().unwrap();
        assert!(last.ends_with("20 (server): boost for 10 expired"), "{last}");
        m.advance(Duration::from_millis(100));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![], "no new boost until the client wakes");
        assert_eq!(core.stats(&m).boosts_expired, 1);
    }

    #[test]
    fn a_nice_raise_under_a_real_time_one_is_undone_with_it() {
        let mut m = FakeMachine::new();
        let mut core = m.core(&format!("{BOOST}boost_realtime = true\n"), None);
        m.spawn(10, "client", Duration::from_secs(10)).settings.nice = -20;
        let rt = &mut m.spawn(11, "rt-client", Duration::from_secs(10)).settings;
        (rt.policy, rt.priority) = (Policy::Fifo, 10);
        m.spawn(20, "server", Duration::from_secs(10));
        core.running(&[10, 11, 20], &mut m);
        m.take();
        let switch = |prev, prev_state, next| EventKind::Switch { cpu: 0, prev, prev_state, next };
        let write = SyscallArgs {
            fd: Some(4),
            resource: Some(Resource::Pipe { inode: 5, write: true }),
            ..Default::default()
        };
        let read = Some(Resource::Pipe { inode: 5, write: false });
        let events = [
            m.event(switch(Pid::IDLE, PrevState::Runnable, Pid(20))),
            m.event(EventKind::SyscallEnter { pid: Pid(20), nr: 1, args: write }),
            m.event(EventKind::Block { pid: Pid(10), resource: read }),
            m.event(switch(Pid(10), PrevState::Blocked, Pid(20))),
        ];
        core.events(&events, &mut m);
        let since = m.monotonic_ns();
        assert_eq!(m.take(), boost_server(&m, 10, Raise::Nice(-20), 1, since));
        m.advance(Duration::from_millis(1));
        let block = m.event(EventKind::Block { pid: Pid(11), resource: read });
        core.events(std::slice::from_ref(&block), &mut m);
        let fifo = Raise::RealTime { policy: Policy::Fifo, priority: 10 };
        assert_eq!(m.take(), boost_server(&m, 11, fifo, 2, block.time));
        assert_eq!((m.settings_of(20).policy, m.settings_of(20).nice), (Policy::Fifo, -20));

        // The real-time client is answered: both raises end, the nice one is raised again.
        core.events(&[m.event(EventKind::Wakeup { waker: Pid(20), wakee: Pid(11), cpu: 0 })], &mut m);
        m.advance(Duration::from_millis(1));
        core.tick(&mut m);
        let decisions = m.take();
        assert_eq!(
            decisions[..2],
            [
                Decision::EndRaise { process: m.key(20), id: RaiseId(2) },
                Decision::EndRaise { process: m.key(20), id: RaiseId(1) }
            ],
            "{decisions:?}"
        );
        assert!(
            matches!(decisions[2], Decision::Provider { requester: Pid(10), provider: Pid(20), .. }),
            "{decisions:?}"
        );
        assert!(
            matches!(decisions[3], Decision::Raise { raise: Raise::Nice(-20), id: RaiseId(3), .. }),
            "{decisions:?}"
        );
        assert_eq!((m.settings_of(20).policy, m.settings_of(20).nice), (Policy::Other, -20));

        // Then the other: nothing is left of either.
        core.events(&[m.event(EventKind::Wakeup { waker: Pid(20), wakee: Pid(10), cpu: 0 })], &mut m);
        m.advance(Duration::from_millis(1));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![Decision::EndRaise { process: m.key(20), id: RaiseId(3) }]);
        assert_eq!((m.settings_of(20).policy, m.settings_of(20).nice), (Policy::Other, 0));
    }
}
