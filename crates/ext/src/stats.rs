//! What the scheduler reports: its counters and, once it has exited, why.

/// The scheduler's counters since it was loaded (summed over CPUs), and its queues now.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Tasks put on a class's queue.
    pub enqueues: u64,
    /// Wakings sent straight to an idle CPU of their class.
    pub direct: u64,
    /// Tasks a CPU took from a queue of one of its own classes.
    pub dispatches: u64,
    /// Tasks an idle CPU took from a class of other CPUs.
    pub steals: u64,
    /// Wakings that preempted a task further behind.
    pub preemptions: u64,
    /// PFS: slices extended at their expiry (T_e ≤ T_m).
    pub extensions: u64,
    /// PFS: predictions adapted at a block.
    pub adaptations: u64,
    /// Requesters woken on their provider's CPU.
    pub near_provider: u64,
    /// SWAP: providers given their requester's turn.
    pub lends: u64,
    /// ... and queued in it.
    pub lends_used: u64,
    /// Slices renewed at dispatch: the task whose slice ended still came first (by
    /// vtime, or a provider in its requester's turn), so it kept its CPU.
    #[serde(default)]
    pub kept: u64,
    /// SWAP: providers moved to the CPU their requester just blocked on, to run in its
    /// turn at once.
    #[serde(default)]
    pub handoffs: u64,
    /// Tasks waiting in each class's queue, by class id, as last seen at a dispatch.
    pub queued: Vec<u32>,
}

impl Stats {
    /// The counters in the order of `enum schedlab_stat` (intf.h).
    pub(crate) fn from_counters(c: &[u64], queued: Vec<u32>) -> Stats {
        let at = |i: usize| c.get(i).copied().unwrap_or(0);
        Stats {
            enqueues: at(0),
            direct: at(1),
            dispatches: at(2),
            steals: at(3),
            preemptions: at(4),
            extensions: at(5),
            adaptations: at(6),
            near_provider: at(7),
            lends: at(8),
            lends_used: at(9),
            kept: at(10),
            handoffs: at(11),
            queued,
        }
    }
}

/// Why the scheduler ended, as the kernel reported it (`struct scx_exit_info`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Exit {
    /// The kernel's `enum scx_exit_kind`.
    pub kind: i32,
    pub code: i64,
    /// The kernel's reason, e.g. "runnable task stall" or "unregistered from user space".
    pub reason: String,
    /// The details (for a stall: which task, for how long).
    pub message: String,
}

impl Exit {
    /// The name of the kind, as the kernel's `enum scx_exit_kind` spells it.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            0 => "none",
            1 => "done",
            64 => "unregistered",
            65 => "unregistered by BPF",
            66 => "unregistered by the kernel",
            67 => "sysrq",
            1024 => "error",
            1025 => "BPF error",
            1026 => "stall",
            _ => "other",
        }
    }

    /// Whether the kernel ejected the scheduler (an error, a stall) rather than it being
    /// unloaded.
    pub fn is_error(&self) -> bool {
        self.kind >= 1024
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.reason, self.kind_name())?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}
