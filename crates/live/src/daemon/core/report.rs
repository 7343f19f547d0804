//! What the core reports: the statistics and the process table, `explain`, and the
//! knowledge worth keeping across runs.

use std::collections::BTreeMap;

use schedlab_behavior::pfs::PfsStore;
use schedlab_store::ProgramConfidence;

use super::{cpu_set, Core, Proc, State, YOUNG};
use crate::daemon::classes::ClassReason;
use crate::daemon::kernel::Kernel;
use crate::daemon::slices::Slices;
use crate::daemon::stats::{self, BoostRow, DependencyRow, Explanation, ProcessRow, Stats};

impl Core {
    /// The statistics now, with the processes schedlab acts on, most CPU first. The
    /// observer's counts and what only the daemon knows are the daemon's to fill in.
    pub fn stats(&self, k: &dyn Kernel) -> Stats {
        let mut s = self.counters.clone();
        s.uptime_s = self.uptime(k).as_secs_f64();
        s.managed = self.procs.values().filter(|p| p.state == State::Managed).count();
        s.released = self.procs.values().filter(|p| matches!(p.state, State::Released(_))).count();
        if let Some(b) = &self.booster {
            s.boosts_active = b.active().count();
        }
        s.boost_reaction_us = self.reaction.summary();
        s.boost_reaction_stages = self.reaction_stages.summary();
        s.programs_with_pfs = self.slices.as_ref().map_or(0, Slices::programs);
        s.profiling = self.windows.is_open();
        let mut rows: Vec<ProcessRow> = self
            .procs
            .values()
            .filter(|p| {
                p.class.is_some()
                    || matches!(p.state, State::Released(_))
                    || self.booster.as_ref().is_some_and(|b| b.is_boosted(p.info.pid))
                    || self.slices.as_ref().is_some_and(|s| s.slice_of(p.info.pid).is_some())
            })
            .map(|p| self.row(p, k))
            .collect();
        rows.sort_by(|a, b| b.load.total_cmp(&a.load).then(a.pid.cmp(&b.pid)));
        s.processes = rows;
        s
    }

    fn row(&self, p: &Proc, k: &dyn Kernel) -> ProcessRow {
        let boost = self.booster.as_ref().and_then(|b| b.on_provider(p.info.pid)).map(|b| BoostRow {
            requester: b.requester.0,
            requester_comm: self.comm_of(b.requester.0, k),
            resource: b.resource.to_string(),
            confidence: b.confidence,
            chain: b.chain.iter().map(|p| p.0).collect(),
            inherited: b.rank.describe(),
            age_ms: k.monotonic_ns().saturating_sub(b.since) as f64 / 1e6,
        });
        ProcessRow {
            pid: p.info.pid,
            comm: crate::text::printable(&p.info.comm).into_owned(),
            class: p.class.clone(),
            reason: stats::reason_json(&p.reason),
            state: match &p.state {
                State::Managed => "managed".into(),
                State::Young => YOUNG.into(),
                State::Released(why) => format!("released: {why}"),
                State::Left(why) => format!("left alone: {why}"),
            },
            cpus: p.cpus.as_ref().map(|(c, _)| cpu_set(c).to_string()),
            placement: p.cpus.as_ref().map(|(_, why)| why.clone()),
            nice: p.nice,
            policy: p.policy.clone(),
            boost,
            slice: self.slices.as_ref().and_then(|s| s.slice_of(p.info.pid)).cloned(),
            load: p.load,
        }
    }

    /// Everything decided about process `pid` (or the process of thread `pid`); a
    /// process not yet taken in says so.
    pub fn explain(&self, pid: u32, k: &dyn Kernel) -> Option<Explanation> {
        let tgid = self.tgids.get(&pid).copied().unwrap_or(pid);
        let arrived;
        let p = match self.procs.get(&tgid) {
            Some(p) => p,
            None if self.arrivals.waiting(tgid) => {
                let mut p = Proc::new(k.process(tgid)?, k.now());
                p.reason = ClassReason::Unclassified { why: "new: not taken in yet".into() };
                p.state = State::Left(format!(
                    "new: taken in once it has lived min_age_ms ({} ms)",
                    self.config.daemon.min_age_ms
                ));
                arrived = p;
                &arrived
            }
            None => return None,
        };
        let tgid_of = |t: u32| self.tgids.get(&t).copied().unwrap_or(t);
        let dependencies = self
            .deps
            .dependencies()
            .into_iter()
            .filter(|d| tgid_of(d.requester.0) == tgid || tgid_of(d.provider.0) == tgid)
            .take(10)
            .map(|d| DependencyRow {
                requester: d.requester.0,
                provider: d.provider.0,
                resource: d.resource.to_string(),
                confidence: d.confidence,
                wakeups: d.wakeups,
            })
            .collect();
        let program = if p.info.exe.is_empty() { p.info.comm.clone() } else { p.info.exe.clone() };
        Some(Explanation {
            process: self.row(p, k),
            dependencies,
            pfs_bursts_ns: self.slices.as_ref().map(|s| s.bursts_of(&program)).unwrap_or_default(),
            decisions: p.decisions.iter().cloned().collect(),
            sched_ext: None,
        })
    }

    /// Every program's PFS, as learned and adapted so far (when slices are on).
    pub fn pfs(&self) -> Option<&PfsStore> {
        self.slices.as_ref().map(Slices::store)
    }

    /// SWAP's confidence per provider program and resource kind: the mean over its
    /// provider entries now.
    pub fn confidences(&self, k: &dyn Kernel) -> Vec<ProgramConfidence> {
        let mut sums: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
        for obj in self.deps.detector().table().iter() {
            for e in obj.providers() {
                if let Some(program) = k.program(e.pid.0) {
                    let s = sums.entry((program, obj.resource().kind().to_string())).or_default();
                    s.0 += u64::from(e.confidence.value());
                    s.1 += 1;
                }
            }
        }
        sums.into_iter()
            .map(|((program, kind), (sum, n))| ProgramConfidence {
                program,
                kind,
                confidence: (sum / n) as u32,
            })
            .collect()
    }
}
