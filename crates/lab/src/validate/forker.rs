//! The fork and exit probe of the calibration: a small process that forks children
//! which exit at once, and reports what each fork and each child's life cost.
//!
//! It runs as a worker of its own (`<exe> bench worker forker --rounds N --cpu C`,
//! [`Role::Forker`]), not in the validating process: what a fork and an exit cost grows
//! with the process's address space (page tables to copy, then to tear down), and the
//! validating process is large, while a program started afresh is as small as the C
//! programs the validation compares against.

use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::bench::workers::{pin_to, say, Role, WorkerSpec};
use crate::bench::{Context, OutputProblem};

use super::{Result, ValidateError};
use crate::bench::workers::thread_cpu_ns;

/// One child: the parent's CPU time in `fork()`, and the child's whole CPU time (from
/// `wait4`'s usage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForkSample {
    pub fork_ns: u64,
    pub child_ns: u64,
}

impl ForkSample {
    /// The sample's line in the forker's output.
    fn to_line(self) -> String {
        format!("fork {} child {}", self.fork_ns, self.child_ns)
    }

    /// The sample a [`to_line`](ForkSample::to_line) line holds.
    fn parse(line: &str) -> Option<ForkSample> {
        let mut w = line.split(' ');
        let (Some("fork"), Some(f), Some("child"), Some(c), None) =
            (w.next(), w.next(), w.next(), w.next(), w.next())
        else {
            return None;
        };
        Some(ForkSample { fork_ns: f.parse().ok()?, child_ns: c.parse().ok()? })
    }
}

/// The worker: pinned to `cpu`, forks `rounds` children one at a time, each of which
/// exits at once, and says a [`ForkSample`] line for each, then `done`.
pub fn forker_main(cpu: Option<usize>, rounds: u32) -> Result<()> {
    if let Some(cpu) = cpu {
        pin_to(cpu).ctx(|| format!("cannot pin to CPU {cpu}"))?;
    }
    for _ in 0..rounds {
        let before = thread_cpu_ns();
        // SAFETY: the child calls only _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: async-signal-safe, ends the child.
            unsafe { libc::_exit(0) };
        }
        let fork_ns = thread_cpu_ns() - before;
        if pid < 0 {
            return Err(ValidateError::io("cannot fork", io::Error::last_os_error()));
        }
        // SAFETY: an all-zero rusage is valid; wait4 writes only it and the status.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let mut status = 0;
        // SAFETY: pid is our child; the pointers are valid.
        if unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } != pid {
            return Err(ValidateError::io("cannot reap a child", io::Error::last_os_error()));
        }
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        let child_ns = (us(usage.ru_utime) + us(usage.ru_stime)) * 1_000;
        say(&ForkSample { fork_ns, child_ns }.to_line())?;
    }
    say("done")
}

/// Starts `exe` as the forker on `cpu` and collects its `rounds` samples.
pub fn run(exe: &Path, cpu: usize, rounds: u32) -> Result<Vec<ForkSample>> {
    let spec = WorkerSpec { rounds, cpu: Some(cpu), ..WorkerSpec::new(Role::Forker) };
    let mut child = spec.spawn(exe, &[])?;
    let deadline = Instant::now() + Duration::from_secs(10) + Duration::from_millis(u64::from(rounds));
    let what = "the fork probe";
    let mut samples = Vec::with_capacity(rounds as usize);
    loop {
        let line = child.line(deadline, what)?;
        if line == "done" {
            break;
        }
        let sample = ForkSample::parse(&line).ok_or_else(|| {
            ValidateError::output(what, OutputProblem::Lacks { thing: "fork sample", output: line.clone() })
        })?;
        samples.push(sample);
    }
    let exit = child.wait(deadline, what)?;
    if !exit.success() || samples.len() != rounds as usize {
        let output = format!("{} of {rounds} samples; {}", samples.len(), exit.describe());
        return Err(ValidateError::output(what, OutputProblem::Lacks { thing: "every sample", output }));
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_line_round_trips() {
        let s = ForkSample { fork_ns: 61_234, child_ns: 80_000 };
        assert_eq!(s.to_line(), "fork 61234 child 80000");
        assert_eq!(ForkSample::parse(&s.to_line()), Some(s));
        for bad in ["", "fork 1", "fork x child 2", "fork 1 child 2 more", "child 1 fork 2"] {
            assert_eq!(ForkSample::parse(bad), None, "{bad}");
        }
    }
}
