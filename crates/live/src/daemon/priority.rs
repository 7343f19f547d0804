//! The daemon's own priority: its reaction path (reading events, deciding, boosting)
//! must not queue behind the load it exists to fix, so, where it boosts through the
//! system calls, its thread runs as `SCHED_FIFO` 1 — the lowest real-time priority,
//! below every threaded interrupt handler (50) and every real-time program that asks
//! for more than the minimum.
//!
//! The bound: `RLIMIT_RTTIME` makes the kernel send `SIGXCPU` once the thread has run
//! [`RTTIME_SOFT`] without blocking, and `SIGKILL` at [`RTTIME_HARD`]; the handler only
//! sets a flag, and the loop then drops the thread to `SCHED_OTHER` at nice −20 for
//! good ([`Elevation::check`]). A daemon that never blocks for a whole second is
//! broken, and its journal is restored at the next start. The kernel's RT throttling
//! (95 % of each second) applies meanwhile. `SCHED_FLAG_RESET_ON_FORK` keeps any child
//! (none is started) from inheriting the policy.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use schedlab_model::{Pid, Policy};

use crate::settings::{self, PolicyValue};

/// CPU time without blocking after which the daemon gives up real time (µs).
pub const RTTIME_SOFT: u64 = 200_000;
/// CPU time without blocking after which the kernel kills the daemon (µs).
pub const RTTIME_HARD: u64 = 1_000_000;
/// The nice value of the daemon's thread when it is not (or no longer) real time.
pub const FALLBACK_NICE: i32 = -20;

/// Set by `SIGXCPU`.
static OVER_BOUND: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigxcpu(_: libc::c_int) {
    OVER_BOUND.store(true, Ordering::Relaxed);
}

/// How the daemon's thread runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Elevation {
    /// `SCHED_FIFO` 1, bounded by `RLIMIT_RTTIME`.
    RealTime,
    /// `SCHED_OTHER` at [`FALLBACK_NICE`], and why not real time.
    Nice(String),
}

impl Elevation {
    /// Raises the calling thread (see the module's documentation); falls back to nice
    /// −20 and says why when real time cannot be had or bounded.
    pub fn raise() -> Elevation {
        match raise_rt() {
            Ok(()) => Elevation::RealTime,
            Err(e) => {
                let _ = lower();
                Elevation::Nice(format!("SCHED_FIFO 1 not possible ({e}); nice {FALLBACK_NICE} instead"))
            }
        }
    }

    /// Leaves the calling thread at nice −20, not real time: where schedlab's sched_ext
    /// scheduler carries the boosts out in the kernel, the daemon's reaction is off the
    /// critical path, and a real-time daemon would only preempt the threads it watches.
    pub fn in_kernel() -> Elevation {
        let why = match lower() {
            Ok(()) => {
                format!("reaction thread nice {FALLBACK_NICE}: the sched_ext scheduler boosts in the kernel")
            }
            Err(e) => {
                format!("reaction thread left as it was ({e}): the sched_ext scheduler boosts in the kernel")
            }
        };
        Elevation::Nice(why)
    }

    /// If the thread ran past its bound, drops it to nice −20 for good: the reason.
    pub fn check(&mut self) -> Option<String> {
        if !matches!(self, Elevation::RealTime) || !OVER_BOUND.swap(false, Ordering::Relaxed) {
            return None;
        }
        let why = format!(
            "the daemon ran {} ms without blocking: it gives up SCHED_FIFO for nice {FALLBACK_NICE}",
            RTTIME_SOFT / 1000
        );
        let _ = lower();
        *self = Elevation::Nice(why.clone());
        Some(why)
    }

    /// In words, for the start-up line.
    pub fn describe(&self) -> String {
        match self {
            Elevation::RealTime => format!(
                "reaction thread SCHED_FIFO 1 (RLIMIT_RTTIME {} ms, then nice {FALLBACK_NICE})",
                RTTIME_SOFT / 1000
            ),
            Elevation::Nice(why) => why.clone(),
        }
    }
}

/// The thread is real time only while its [`Elevation`] lives (the daemon's loop): what
/// the thread does after (a shutdown, starting again after a reload or after the sched_ext
/// scheduler's end, which loads BPF programs for seconds) is not bounded by
/// `RLIMIT_RTTIME`, whose hard limit would kill the daemon.
impl Drop for Elevation {
    fn drop(&mut self) {
        if matches!(self, Elevation::RealTime) {
            let _ = lower();
        }
    }
}

fn raise_rt() -> io::Result<()> {
    // The handler first, then the limit, then the policy: never real time unbounded.
    // SAFETY: a zeroed sigaction with a handler that only stores to an atomic.
    let rc = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigxcpu as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGXCPU, &sa, std::ptr::null_mut())
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let limit = libc::rlimit { rlim_cur: RTTIME_SOFT, rlim_max: RTTIME_HARD };
    // SAFETY: a valid rlimit for the calling process.
    if unsafe { libc::setrlimit(libc::RLIMIT_RTTIME, &limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut attr = settings::sched_getattr(this_thread())?;
    attr.sched_policy = Policy::Fifo.number();
    attr.sched_priority = 1;
    attr.sched_nice = 0;
    attr.sched_runtime = 0;
    attr.sched_flags = settings::SCHED_FLAG_RESET_ON_FORK;
    settings::sched_setattr(this_thread(), &attr)
}

/// SCHED_OTHER at [`FALLBACK_NICE`].
fn lower() -> io::Result<()> {
    settings::set_policy(this_thread(), &PolicyValue::new(Policy::Other, 0, 0)?)?;
    settings::set_nice(this_thread(), FALLBACK_NICE)
}

fn this_thread() -> Pid {
    // SAFETY: gettid has no preconditions.
    Pid(unsafe { libc::syscall(libc::SYS_gettid) } as u32)
}
