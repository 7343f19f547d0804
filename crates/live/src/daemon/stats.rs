//! What the daemon reports: typed, serialized as JSON over the control socket (as
//! scx_stats does for sched_ext schedulers) and shown as the live table.

use serde::{Deserialize, Serialize};

use super::classes::ClassReason;

/// Percentiles of a latency, in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    /// How many took longer than 1 ms (the bound a boost's reaction is held to).
    /// Unlike a percentile it adds up over runs: p99 < 1 ms over several runs is
    /// `sum(over_1ms) < 1 %` of `sum(count)`.
    #[serde(default)]
    pub over_1ms: u64,
    /// The sum of all, in µs (with `count`, a mean that adds up over scrapes).
    #[serde(default)]
    pub sum: f64,
    /// How many took at most each of [`BUCKETS_US`], in µs: a histogram as Prometheus
    /// and OpenMetrics keep one.
    #[serde(default)]
    pub buckets: Vec<u64>,
}

/// The upper bounds of [`Latency::buckets`], in µs.
pub const BUCKETS_US: [u64; 10] = [50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 100_000, 1_000_000];

/// The boost reaction time in its three stages, each in µs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReactionStages {
    /// From the requester's block (the kernel's timestamp) to the daemon holding the
    /// event: the ring buffer's wake-up and the reaction thread getting a CPU.
    pub delivery: Latency,
    /// From then to the boost decided: the events before it in its batch, the
    /// dependency graph, the ranks read.
    pub decision: Latency,
    /// Journaling the change and making it (the system calls on every thread).
    pub enforcement: Latency,
}

/// [`ReactionStages`] as they are recorded.
#[derive(Debug, Default)]
pub struct StageHistograms {
    pub delivery: LatencyHistogram,
    pub decision: LatencyHistogram,
    pub enforcement: LatencyHistogram,
}

impl StageHistograms {
    /// Records one boost: blocked at `block`, read at `read`, decided at `decided`,
    /// made at `made` (monotonic ns).
    pub fn record(&mut self, block: u64, read: u64, decided: u64, made: u64) {
        self.delivery.record(read.saturating_sub(block));
        self.decision.record(decided.saturating_sub(read));
        self.enforcement.record(made.saturating_sub(decided));
    }

    pub fn summary(&self) -> ReactionStages {
        ReactionStages {
            delivery: self.delivery.summary(),
            decision: self.decision.summary(),
            enforcement: self.enforcement.summary(),
        }
    }
}

/// A latency histogram (1 µs to 10 s, 3 significant digits).
#[derive(Debug)]
pub struct LatencyHistogram(hdrhistogram::Histogram<u64>);

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram(
            hdrhistogram::Histogram::new_with_bounds(1, 10_000_000_000, 3).expect("valid bounds"),
        )
    }
}

impl LatencyHistogram {
    /// Records one latency in nanoseconds (clamped into the histogram's range).
    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns.max(1));
    }

    /// The percentiles so far.
    pub fn summary(&self) -> Latency {
        let us = |ns: u64| ns as f64 / 1000.0;
        Latency {
            count: self.0.len(),
            p50: us(self.0.value_at_quantile(0.5)),
            p99: us(self.0.value_at_quantile(0.99)),
            max: us(self.0.max()),
            // From the first bucket wholly above 1 ms (at 3 digits one spans 512 ns there).
            over_1ms: self.0.count_between(self.0.next_non_equivalent(1_000_000), self.0.high()),
            sum: us((self.0.mean() * self.0.len() as f64) as u64),
            buckets: BUCKETS_US.iter().map(|&b| self.0.count_between(0, b * 1000)).collect(),
        }
    }
}

/// One process the daemon knows of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessRow {
    pub pid: u32,
    /// Its name, control characters escaped ([`crate::text::printable`]).
    pub comm: String,
    /// Its class, if it has one.
    pub class: Option<String>,
    /// Why it has that class.
    pub reason: serde_json::Value,
    /// Managed, released (a user's own change; with the reason) or left alone.
    pub state: String,
    /// The CPUs schedlab bound it to (CPU list), if it did.
    pub cpus: Option<String>,
    /// Why those CPUs.
    pub placement: Option<String>,
    /// The nice value and policy schedlab set, if it did.
    pub nice: Option<i32>,
    pub policy: Option<String>,
    /// A provider boost it has now: from whom (requester pid) and through what.
    pub boost: Option<BoostRow>,
    /// The EEVDF slice schedlab gave it (ns) and the PFS prediction behind it.
    pub slice: Option<SliceRow>,
    /// CPUs' worth of CPU time it used over the last planning period.
    pub load: f64,
}

/// A boost in force.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoostRow {
    /// The blocked process whose priority the provider inherits.
    pub requester: u32,
    pub requester_comm: String,
    /// The resource the requester waits on (`pipe:[1234]`, …).
    pub resource: String,
    /// SWAP's confidence in this provider (direct, or indirect along a chain).
    pub confidence: u32,
    /// The providers on the way, for a chain (requester → … → this one).
    pub chain: Vec<u32>,
    /// The nice value (or policy) inherited.
    pub inherited: String,
    /// How long it has lasted, in ms.
    pub age_ms: f64,
}

/// A burst-aware slice in force.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SliceRow {
    /// The slice set, in ns.
    pub slice_ns: u64,
    /// The predicted length of the next burst (PFS `T_e`), in ns.
    pub predicted_ns: i64,
    /// The program whose PFS predicted it.
    pub program: String,
}

/// The daemon's statistics: `schedlab monitor --json` prints this.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Seconds since the daemon started.
    pub uptime_s: f64,
    /// Decisions are printed, not applied.
    pub dry_run: bool,
    /// Events read from the observer, and records the kernel side lost.
    pub events: u64,
    pub lost_events: u64,
    /// Processes with a class schedlab manages; released after a user's own change.
    pub managed: usize,
    pub released: usize,
    /// Changes applied (or, in a dry run, decided), and changes that failed.
    pub changes: u64,
    pub failed_changes: u64,
    /// Entries a previous, killed daemon left that this one restored at start.
    pub restored_at_start: usize,
    /// Provider boosts: in force, begun in total, ended by the requester waking, ended
    /// by the time bound.
    pub boosts_active: usize,
    pub boosts_total: u64,
    pub boosts_ended_by_wakeup: u64,
    pub boosts_expired: u64,
    /// From the requester blocking (the kernel's timestamp) to the boost being applied.
    pub boost_reaction_us: Latency,
    /// Where that time goes, for the boosts decided as their block was read.
    #[serde(default)]
    pub boost_reaction_stages: ReactionStages,
    /// Burst-aware slices set (and reset to the default).
    pub slices_set: u64,
    pub slices_reset: u64,
    /// Flows (PFS) handed to the sched_ext scheduler at an exec, which follows them at
    /// each slice's end itself (its `extend` counter says how often it kept a task on).
    #[serde(default)]
    pub flows: u64,
    /// Programs with a PFS.
    pub programs_with_pfs: usize,
    /// Raises the expiry clock ended because the loop had not in time
    /// ([`super::expiry`]).
    #[serde(default)]
    pub raises_expired_by_clock: u64,
    /// CPU time the daemon has used, all its threads, in seconds.
    #[serde(default)]
    pub cpu_s: f64,
    /// How the daemon's own reaction thread runs (real time, bounded, or why not).
    #[serde(default)]
    pub reaction_thread: String,
    /// A profiling window is open: the system-call hook is attached.
    #[serde(default)]
    pub profiling: bool,
    /// What carries the decisions out: schedlab's sched_ext scheduler, or system calls
    /// (and why not the scheduler).
    #[serde(default)]
    pub enforcer: String,
    /// The sched_ext scheduler's counters, while it enforces.
    #[serde(default)]
    pub sched_ext: Option<schedlab_ext::stats::Stats>,
    /// The processes the daemon knows of, most CPU first.
    pub processes: Vec<ProcessRow>,
}

/// `schedlab explain PID`: everything the daemon decided about one process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    pub process: ProcessRow,
    /// Processes this one is joined to by dependency edges (SWAP), strongest first.
    pub dependencies: Vec<DependencyRow>,
    /// The PFS of its program: the predicted bursts, in ns, in order (up to 20).
    pub pfs_bursts_ns: Vec<u64>,
    /// Its recent decisions, oldest first.
    pub decisions: Vec<String>,
    /// How schedlab's sched_ext scheduler holds it, where that scheduler enforces.
    #[serde(default)]
    pub sched_ext: Option<ExtProcess>,
}

/// A process as schedlab's sched_ext scheduler holds it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtProcess {
    /// Its class in the scheduler (0: the default class), and how many tasks that
    /// class's queue held when a CPU last looked.
    pub class: u32,
    pub queued: u32,
    /// The id of the flow (PFS) it follows (0: none), and that flow's first predicted
    /// bursts as the scheduler holds them now (adapted there by x/y), in ns.
    pub flow: u32,
    pub bursts_ns: Vec<u64>,
}

/// A dependency edge seen by the daemon.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DependencyRow {
    pub requester: u32,
    pub provider: u32,
    pub resource: String,
    pub confidence: u32,
    pub wakeups: u64,
}

/// Turns a class reason into the JSON the rows carry.
pub fn reason_json(reason: &ClassReason) -> serde_json::Value {
    serde_json::to_value(reason).unwrap_or(serde_json::Value::Null)
}

/// A class reason in words, for the table and `explain`.
pub fn reason_text(reason: &serde_json::Value) -> String {
    let s = |k: &str| reason.get(k).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));
    match reason.get("by").and_then(|v| v.as_str()) {
        Some("rule") => format!("rule {}: {}", s("index").unwrap_or_default(), s("rule").unwrap_or_default()),
        Some("model") => format!(
            "model: {} ({:.0} %)",
            s("label").unwrap_or_default(),
            reason.get("confidence").and_then(|v| v.as_f64()).unwrap_or(0.0) * 100.0
        ),
        Some("inherited") => format!("parent {}'s class", s("parent").unwrap_or_default()),
        Some("learned") => format!(
            "learned: {} runs CPU-bound ({:.0} % sure over {:.1} runs)",
            s("program").unwrap_or_default(),
            reason.get("confidence").and_then(|v| v.as_f64()).unwrap_or(0.0) * 100.0,
            reason.get("runs").and_then(|v| v.as_f64()).unwrap_or(0.0)
        ),
        Some("busy") => format!(
            "runs CPU-bound now (runnable {:.0} % of its last {} ms)",
            reason.get("runnable").and_then(|v| v.as_f64()).unwrap_or(0.0) * 100.0,
            s("over_ms").unwrap_or_default()
        ),
        Some("watching") => "watching (no rule; the model decides soon)".into(),
        Some("unclassified") => format!("unclassified: {}", s("why").unwrap_or_default()),
        Some("kernel_thread") => "kernel thread (left alone)".into(),
        _ => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_as_words() {
        let r = reason_json(&ClassReason::Rule { index: 2, rule: "comm=x".into() });
        assert_eq!(reason_text(&r), "rule 2: comm=x");
        let r = reason_json(&ClassReason::Model { label: "BACKGROUND".into(), confidence: 0.93 });
        assert_eq!(reason_text(&r), "model: BACKGROUND (93 %)");
    }

    #[test]
    fn latency_percentiles_are_in_microseconds() {
        let mut h = LatencyHistogram::default();
        for us in 1..=100u64 {
            h.record(us * 1000);
        }
        let s = h.summary();
        assert_eq!((s.count, s.over_1ms), (100, 0));
        assert!((s.p50 - 50.0).abs() < 0.1 && (s.p99 - 99.0).abs() < 0.1, "{s:?}");
        h.record(1_000_000);
        h.record(1_001_000);
        h.record(40_000_000);
        assert_eq!(h.summary().over_1ms, 2, "1 ms itself is within the bound");
    }
}
