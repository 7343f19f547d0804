//! The plan user space hands the scheduler, and the scheduler's tunables, as checked
//! Rust values (the maps' C layouts are in `src/bpf/intf.h`).

/// Classes the scheduler has dispatch queues for; class 0 is the default class.
pub const MAX_CLASSES: u32 = 64;
/// CPUs a class's CPU set can name (ids 0 to MAX_CPUS − 1).
pub const MAX_CPUS: u32 = 1024;
/// Processes the plan can name at once (the `processes` map).
pub const MAX_PROCESSES: usize = 65_536;
/// Predicted bursts of all programs together (the `bursts` map, an LRU: the bursts of
/// programs not run for a while give way).
pub const MAX_BURSTS: usize = 262_144;
/// Bursts of one flow the scheduler follows: past the last, its default slice holds.
pub const MAX_FLOW_BURSTS: usize = 1024;
/// Requesters with a provider at once (the `providers` map).
pub const MAX_PROVIDERS: usize = 16_384;

/// A plan the scheduler cannot take, naming the limit.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("class id {0} is out of range (1 to {max}; 0 is the default class)", max = MAX_CLASSES - 1)]
    ClassId(u32),
    #[error("CPU {0} is out of range (the scheduler's CPU sets hold ids below {MAX_CPUS})")]
    Cpu(u32),
    #[error("a class weight must be 1 to 10000, not {0}")]
    Weight(u32),
    #[error("program id 0 is reserved for \"no PFS\"")]
    Program,
    #[error("a flow of {0} bursts is longer than the scheduler follows ({MAX_FLOW_BURSTS})")]
    FlowLength(usize),
}

/// One class: its CPUs (paper 000's plan), its share, its slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassPlan {
    /// The CPUs that take the class's tasks first (empty: every CPU).
    pub cpus: Vec<u32>,
    /// The class's share against the others: 100 is one nice-0 task's worth.
    pub weight: u32,
    /// Its tasks' slice in ns (0: the scheduler's default).
    pub slice_ns: u64,
}

impl ClassPlan {
    /// The CPU set as the scheduler's bitmap, every CPU for an empty set.
    pub fn cpu_words(&self) -> Result<[u64; (MAX_CPUS / 64) as usize], PlanError> {
        let mut words = [0u64; (MAX_CPUS / 64) as usize];
        if self.cpus.is_empty() {
            return Ok([u64::MAX; (MAX_CPUS / 64) as usize]);
        }
        for &cpu in &self.cpus {
            if cpu >= MAX_CPUS {
                return Err(PlanError::Cpu(cpu));
            }
            words[(cpu / 64) as usize] |= 1 << (cpu % 64);
        }
        Ok(words)
    }

    /// Checks the weight's range.
    pub fn check(&self) -> Result<(), PlanError> {
        if !(1..=10_000).contains(&self.weight) {
            return Err(PlanError::Weight(self.weight));
        }
        self.cpu_words().map(|_| ())
    }
}

/// The scheduler's tunables, fixed at load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Tunables {
    /// The slice of a task whose class sets none, ns.
    pub slice_ns: u64,
    /// How far (vtime, ns) a waking task must be ahead of a running one to preempt it
    /// (a synchronous waking never preempts).
    pub wakeup_gran_ns: u64,
    /// PFS (paper 001): the timeslot, `T_m` (ns) and the `x`, `y` adaptation (percent).
    pub pfs_timeslot_ns: u64,
    pub pfs_t_m_ns: u64,
    pub pfs_x_pct: u32,
    pub pfs_y_pct: u32,
    /// SWAP (paper 004): how long a provider keeps its requester's turn at most (`T`).
    pub lend_ns: u64,
    /// Round robin within a class (a woken task and one whose slice ended go to the
    /// back, a waking never preempts), the time sharing paper 001's PFS was built on,
    /// instead of vtime fairness.
    pub timeshare: bool,
    /// The kernel's watchdog: a runnable task not run for this long ejects the
    /// scheduler (every task goes back to the fair class).
    pub timeout_ms: u32,
    /// For testing the kernel's safety net only: a thread (tid) the scheduler never
    /// runs, so that the watchdog must eject it (0: none).
    pub stall_tid: u32,
}

impl Default for Tunables {
    /// The papers' values where they give one (PFS: timeslot 1 ms, `T_m` 20 ms, x = y =
    /// 10 %, paper 001 §5 and Figure 7); a 5 ms slice, a 1 ms wake-up granularity; a
    /// 10 ms lend; vtime order; the watchdog at 5 s.
    fn default() -> Self {
        Tunables {
            slice_ns: 5_000_000,
            wakeup_gran_ns: 1_000_000,
            pfs_timeslot_ns: 1_000_000,
            pfs_t_m_ns: 20_000_000,
            pfs_x_pct: 10,
            pfs_y_pct: 10,
            lend_ns: 10_000_000,
            timeshare: false,
            timeout_ms: 5_000,
            stall_tid: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_sets_become_bitmaps_and_out_of_range_ids_are_named() {
        let plan = ClassPlan { cpus: vec![0, 3, 64, 1023], weight: 100, slice_ns: 0 };
        let words = plan.cpu_words().unwrap();
        assert_eq!(words[0], 0b1001);
        assert_eq!(words[1], 1);
        assert_eq!(words[15], 1 << 63);
        assert_eq!(ClassPlan { cpus: vec![], ..plan.clone() }.cpu_words().unwrap(), [u64::MAX; 16]);
        let err = ClassPlan { cpus: vec![1024], ..plan.clone() }.check().unwrap_err();
        assert_eq!(err, PlanError::Cpu(1024));
        assert!(err.to_string().contains("below 1024"));
        assert_eq!(ClassPlan { weight: 0, ..plan }.check().unwrap_err(), PlanError::Weight(0));
    }
}
