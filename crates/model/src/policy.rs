//! Linux scheduling policies, shared by the simulator and the live actuator.

/// A Linux scheduling policy (`SCHED_*`; `SCHED_DEADLINE` is not one schedlab uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// `SCHED_OTHER` (`SCHED_NORMAL`): the fair class.
    #[default]
    Other,
    /// `SCHED_BATCH`: fair class, never preempts on wake-up.
    Batch,
    /// `SCHED_IDLE`: fair class with the minimum weight (3).
    Idle,
    /// `SCHED_FIFO`: real-time, priority 1–99, runs until it blocks or yields.
    Fifo,
    /// `SCHED_RR`: real-time round robin among equal priorities.
    Rr,
}

impl Policy {
    /// Every policy.
    pub const ALL: [Policy; 5] = [Policy::Other, Policy::Batch, Policy::Idle, Policy::Fifo, Policy::Rr];

    /// The real-time policies, which take a priority 1–99.
    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// The kernel's number for it (`include/uapi/linux/sched.h`).
    pub fn number(self) -> u32 {
        match self {
            Policy::Other => 0,
            Policy::Fifo => 1,
            Policy::Rr => 2,
            Policy::Batch => 3,
            Policy::Idle => 5,
        }
    }

    /// The policy with kernel number `n`.
    pub fn from_number(n: u32) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.number() == n)
    }

    /// The name as the kernel headers, `chrt` and rt-app write it (`SCHED_OTHER`, …).
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
        }
    }

    /// Parses `other`/`normal`, `batch`, `idle`, `fifo`, `rr`, with or without the
    /// `SCHED_` prefix, in any case.
    pub fn parse(s: &str) -> Option<Policy> {
        let lower = s.to_ascii_lowercase();
        Some(match lower.strip_prefix("sched_").unwrap_or(&lower) {
            "other" | "normal" => Policy::Other,
            "batch" => Policy::Batch,
            "idle" => Policy::Idle,
            "fifo" => Policy::Fifo,
            "rr" => Policy::Rr,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_round_trip() {
        for p in Policy::ALL {
            assert_eq!(Policy::from_number(p.number()), Some(p));
            assert_eq!(Policy::parse(p.name()), Some(p));
        }
        assert_eq!(Policy::from_number(6), None, "SCHED_DEADLINE is not one");
        assert_eq!(Policy::parse("Normal"), Some(Policy::Other));
        assert_eq!(Policy::parse("deadline"), None);
    }
}
