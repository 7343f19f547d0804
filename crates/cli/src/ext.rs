//! `schedlab ext`: schedlab's sched_ext scheduler on its own.

use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use schedlab_ext::kernel::State;
use schedlab_ext::plan::Tunables;
use schedlab_ext::scheduler::Scheduler;
use schedlab_ext::stats::Stats;

use crate::run::{install_signal_handlers, STOP};

/// schedlab's sched_ext scheduler (kernels with CONFIG_SCHED_CLASS_EXT, 6.12 on).
///
/// The scheduler does at dispatch time what the daemon does from user space: fair
/// share by virtual time between and within classes on their CPU sets (paper 000),
/// PFS's delayed switch at slice expiry (paper 001), a provider run in its requester's
/// turn (paper 004). `schedlab run --enforcer sched-ext` feeds it what the daemon
/// learns; `ext run` runs it alone, every task in the default class, to measure it
/// or to check that this kernel runs it. If the scheduler fails, the kernel unloads it
/// and every task goes back to the fair class; so does Ctrl-C, and so does killing
/// schedlab.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:\n  schedlab ext status\n  \
    sudo schedlab ext run --seconds 60\n  \
    sudo schedlab ext run --slice-us 3000 --json")]
pub struct ExtOpts {
    #[command(subcommand)]
    command: ExtCommand,
}

#[derive(Debug, Subcommand)]
enum ExtCommand {
    /// Whether this kernel has sched_ext, and which scheduler runs now.
    Status {
        /// One JSON object: {"state": "absent|disabled|enabling|enabled|disabling", "ops": NAME}.
        #[arg(long)]
        json: bool,
    },
    /// Load the scheduler alone and print its counters until Ctrl-C or --seconds.
    Run(RunOpts),
}

#[derive(Debug, Args)]
struct RunOpts {
    /// Unload after this many seconds (0: run until Ctrl-C or SIGTERM).
    #[arg(long, default_value_t = 0, value_name = "S")]
    seconds: u64,
    /// Print the counters every this many milliseconds.
    #[arg(long, default_value_t = 1000, value_name = "MS", value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    interval_ms: u64,
    /// Each line of counters as one JSON object, then the exit as one.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    tunables: TunableOpts,
}

/// The scheduler's tunables (`--help` gives the defaults).
#[derive(Debug, Args)]
pub(crate) struct TunableOpts {
    /// The slice of a task, µs (100 to 100000).
    #[arg(long, default_value_t = Tunables::default().slice_ns / 1000, value_name = "US", value_parser = clap::value_parser!(u64).range(100..=100_000))]
    slice_us: u64,
    /// How far (µs of virtual time) a waking task must be ahead of a running one to
    /// preempt it (0 to 100000); a synchronous waking (a pipe or socket write) never
    /// preempts.
    #[arg(long, default_value_t = Tunables::default().wakeup_gran_ns / 1000, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=100_000))]
    wakeup_gran_us: u64,
    /// PFS's T_m: the longest a switch is delayed for a burst about to end, ms (0 to 1000).
    #[arg(long, default_value_t = Tunables::default().pfs_t_m_ns / 1_000_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(0..=1000))]
    t_m_ms: u64,
    /// SWAP's T: the longest a provider keeps its requester's turn, ms (1 to 1000).
    #[arg(long, default_value_t = Tunables::default().lend_ns / 1_000_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=1000))]
    lend_ms: u64,
    /// Run each class round robin (the time sharing paper 001's PFS was built on)
    /// rather than by vtime (weighted fair share).
    #[arg(long)]
    timeshare: bool,
    /// The kernel's watchdog: a runnable task not run within this ejects the scheduler,
    /// ms (100 to 30000).
    #[arg(long, default_value_t = Tunables::default().timeout_ms, value_name = "MS", value_parser = clap::value_parser!(u32).range(100..=30_000))]
    timeout_ms: u32,
    /// Never run thread TID, so that the kernel's watchdog ejects the scheduler after
    /// --timeout-ms: a test of the safety net, not for use.
    #[arg(long, value_name = "TID", hide = true, default_value_t = 0)]
    stall_tid: u32,
    /// How long to wait for the kernel to enable the scheduler (its BPF code is verified
    /// first: seconds on hardware, tens of seconds under an emulated CPU).
    #[arg(long, default_value_t = 120, value_name = "S")]
    load_wait_s: u64,
}

impl TunableOpts {
    pub(crate) fn tunables(&self) -> Tunables {
        Tunables {
            slice_ns: self.slice_us * 1000,
            wakeup_gran_ns: self.wakeup_gran_us * 1000,
            pfs_t_m_ns: self.t_m_ms * 1_000_000,
            lend_ns: self.lend_ms * 1_000_000,
            timeshare: self.timeshare,
            timeout_ms: self.timeout_ms,
            stall_tid: self.stall_tid,
            ..Tunables::default()
        }
    }

    pub(crate) fn load_wait(&self) -> Duration {
        Duration::from_secs(self.load_wait_s)
    }
}

pub fn run(opts: &ExtOpts) -> Result<()> {
    match &opts.command {
        ExtCommand::Status { json } => status(*json),
        ExtCommand::Run(o) => run_alone(o),
    }
}

fn status(json: bool) -> Result<()> {
    let state = State::read().context("cannot read /sys/kernel/sched_ext")?;
    if json {
        println!("{}", serde_json::to_string(&state)?);
    } else {
        println!("sched_ext: {state}");
    }
    Ok(())
}

fn run_alone(opts: &RunOpts) -> Result<()> {
    install_signal_handlers().context("cannot install the signal handlers")?;
    let scheduler = Scheduler::load(&opts.tunables.tunables(), opts.tunables.load_wait())
        .context("cannot load schedlab's sched_ext scheduler")?;
    let state = State::read().unwrap_or(State::Absent);
    if !opts.json {
        println!("loaded: sched_ext {state}; Ctrl-C unloads it");
    }
    let start = Instant::now();
    let interval = Duration::from_millis(opts.interval_ms);
    let mut next = start + interval;
    let mut last = Stats::default();
    let mut out = io::stdout().lock();
    while !STOP.load(Ordering::Relaxed) && scheduler.exit().is_none() {
        if opts.seconds > 0 && start.elapsed() >= Duration::from_secs(opts.seconds) {
            break;
        }
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        next += interval;
        let stats = scheduler.stats()?;
        if opts.json {
            writeln!(out, "{}", serde_json::to_string(&stats)?)?;
        } else {
            writeln!(out, "{}", describe(&stats, &last))?;
        }
        last = stats;
    }
    let ejected = scheduler.exit();
    let exit = scheduler.unload();
    if opts.json {
        writeln!(out, "{}", serde_json::json!({ "exit": exit }))?;
    } else if let Some(exit) = &exit {
        writeln!(out, "unloaded: {exit}")?;
    }
    match ejected {
        Some(exit) if exit.is_error() => anyhow::bail!("the kernel ejected the scheduler: {exit}"),
        _ => Ok(()),
    }
}

/// One line of counters since the last line.
fn describe(now: &Stats, last: &Stats) -> String {
    let d = |a: u64, b: u64| a.saturating_sub(b);
    let queued: u32 = now.queued.iter().sum();
    format!(
        "enqueued {} direct {} dispatched {} stolen {} preempted {} kept {} | PFS extended {} adapted {} | SWAP lent {} used {} handoffs {} near {} | queued {}",
        d(now.enqueues, last.enqueues),
        d(now.direct, last.direct),
        d(now.dispatches, last.dispatches),
        d(now.steals, last.steals),
        d(now.preemptions, last.preemptions),
        d(now.kept, last.kept),
        d(now.extensions, last.extensions),
        d(now.adaptations, last.adaptations),
        d(now.lends, last.lends),
        d(now.lends_used, last.lends_used),
        d(now.handoffs, last.handoffs),
        d(now.near_provider, last.near_provider),
        queued,
    )
}
