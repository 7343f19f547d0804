//! `schedlab monitor` and `schedlab explain`: ask a running daemon through its control
//! socket.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use schedlab_live::daemon::control::{default_socket, request, Request};
use schedlab_live::daemon::stats::{reason_text, Explanation, Stats};

use crate::human::duration;
use crate::table::{Align, Table};

/// Show a running daemon's statistics: the processes it manages (class, CPUs, nice,
/// boost, slice), boosts and their reaction time, slices, changes.
///
/// Refreshes every second in a terminal; `--json` prints the statistics as one JSON
/// object per line (once with `--once`), for scripts.
#[derive(Debug, Args)]
#[command(
    after_long_help = "Examples:\n  sudo schedlab monitor\n  sudo schedlab monitor --json --once | jq .boost_reaction_us"
)]
pub struct MonitorOpts {
    /// The daemon's control socket [default: /run/schedlab.sock as root].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Print once and exit.
    #[arg(long)]
    once: bool,
    /// How many processes the table shows.
    #[arg(long, value_name = "N", default_value_t = 20)]
    top: usize,
}

/// Explain what the running daemon decided about a process: its class and why (rule,
/// or the model and its confidence), its CPU plan, boosts with the dependency and
/// confidence behind them, its slice and the PFS prediction behind it, its
/// dependencies, and its latest decisions.
#[derive(Debug, Args)]
#[command(after_long_help = "Example:\n  sudo schedlab explain $(pgrep -n my-batch-job)")]
pub struct ExplainOpts {
    /// The process (or one of its threads).
    pid: u32,
    /// The daemon's control socket [default: /run/schedlab.sock as root].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

fn stats(socket: &Path) -> Result<Stats> {
    let v = request(socket, &Request::Stats)?;
    serde_json::from_value(v).context("the daemon's statistics are not what this schedlab reads")
}

pub fn run(opts: &MonitorOpts) -> Result<()> {
    let socket = opts.socket.clone().unwrap_or_else(default_socket);
    let refresh = !opts.once && io::stdout().is_terminal() && !opts.json;
    loop {
        let s = stats(&socket)?;
        let mut out = io::stdout().lock();
        if opts.json {
            writeln!(out, "{}", serde_json::to_string(&s)?)?;
        } else {
            if refresh {
                write!(out, "\x1b[H\x1b[2J")?;
            }
            write_stats(&mut out, &s, opts.top)?;
        }
        out.flush()?;
        if opts.once || !(refresh || opts.json) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The statistics as the live table shows them.
pub fn write_stats(out: &mut impl Write, s: &Stats, top: usize) -> io::Result<()> {
    writeln!(
        out,
        "schedlab{}  up {}  events {} (lost {})  managed {}  released {}  changes {} (failed {})",
        if s.dry_run { " (dry run)" } else { "" },
        duration((s.uptime_s * 1e9) as u64),
        s.events,
        s.lost_events,
        s.managed,
        s.released,
        s.changes,
        s.failed_changes
    )?;
    writeln!(
        out,
        "boosts: {} now, {} in all ({} ended by wakeup, {} expired); reaction p50 {:.0} µs p99 {:.0} µs ({} measured)",
        s.boosts_active,
        s.boosts_total,
        s.boosts_ended_by_wakeup,
        s.boosts_expired,
        s.boost_reaction_us.p50,
        s.boost_reaction_us.p99,
        s.boost_reaction_us.count
    )?;
    if !s.enforcer.is_empty() {
        writeln!(out, "enforcer: {}", s.enforcer)?;
    }
    if let Some(x) = &s.sched_ext {
        writeln!(
            out,
            "  sched_ext: {} dispatched ({} stolen, {} direct), {} preempted, {} kept; PFS {} extended; \
             SWAP {} lent ({} queued in the turn, {} handed the CPU, {} near the provider); {} queued now",
            x.dispatches,
            x.steals,
            x.direct,
            x.preemptions,
            x.kept,
            x.extensions,
            x.lends,
            x.lends_used,
            x.handoffs,
            x.near_provider,
            x.queued.iter().sum::<u32>()
        )?;
    }
    let st = &s.boost_reaction_stages;
    if st.delivery.count > 0 {
        writeln!(
            out,
            "  p50/p99 by stage: delivery {:.0}/{:.0} µs, decision {:.0}/{:.0} µs, enforcement {:.0}/{:.0} µs",
            st.delivery.p50,
            st.delivery.p99,
            st.decision.p50,
            st.decision.p99,
            st.enforcement.p50,
            st.enforcement.p99
        )?;
    }
    writeln!(
        out,
        "slices: {} set, {} reset; {} flows handed to sched_ext; {} programs with a PFS",
        s.slices_set, s.slices_reset, s.flows, s.programs_with_pfs
    )?;
    writeln!(
        out,
        "profiling: {}; {}\n",
        if s.profiling { "a window is open (system-call hook attached)" } else { "no window open" },
        s.reaction_thread
    )?;
    let mut t = Table::new(&[
        ("PID", Align::Right),
        ("COMM", Align::Left),
        ("CLASS", Align::Left),
        ("CPUS", Align::Left),
        ("NICE", Align::Right),
        ("POLICY", Align::Left),
        ("LOAD", Align::Right),
        ("BOOST", Align::Left),
        ("SLICE", Align::Right),
        ("WHY", Align::Left),
    ]);
    for p in s.processes.iter().take(top) {
        t.row(vec![
            p.pid.to_string(),
            p.comm.clone(),
            p.class.clone().unwrap_or_else(|| "-".into()),
            p.cpus.clone().unwrap_or_else(|| "-".into()),
            p.nice.map_or("-".into(), |n| n.to_string()),
            p.policy.clone().unwrap_or_else(|| "-".into()),
            format!("{:.2}", p.load),
            p.boost.as_ref().map_or("-".into(), |b| format!("{} for {}", b.inherited, b.requester)),
            p.slice.as_ref().map_or("-".into(), |sl| format!("{:.2}ms", sl.slice_ns as f64 / 1e6)),
            if p.state == "managed" { reason_text(&p.reason) } else { p.state.clone() },
        ]);
    }
    t.write(out)?;
    if s.processes.len() > top {
        writeln!(out, "({} more; --json for all)", s.processes.len() - top)?;
    }
    Ok(())
}

pub fn explain(opts: &ExplainOpts) -> Result<()> {
    let socket = opts.socket.clone().unwrap_or_else(default_socket);
    let v = request(&socket, &Request::Explain { pid: opts.pid })?;
    let mut out = io::stdout().lock();
    if opts.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    let e: Explanation =
        serde_json::from_value(v).context("the daemon's answer is not what this schedlab reads")?;
    let p = &e.process;
    writeln!(out, "process {} ({})", p.pid, schedlab_live::text::printable(&p.comm))?;
    writeln!(out, "  class:  {} — {}", p.class.as_deref().unwrap_or("none"), reason_text(&p.reason))?;
    writeln!(out, "  state:  {}", p.state)?;
    match (&p.cpus, &p.placement) {
        (Some(c), Some(why)) => writeln!(out, "  CPUs:   {c} — {why}")?,
        _ => writeln!(out, "  CPUs:   not bound by schedlab")?,
    }
    writeln!(
        out,
        "  nice:   {}   policy: {}",
        p.nice.map_or("not set".into(), |n| n.to_string()),
        p.policy.as_deref().unwrap_or("not set")
    )?;
    match &p.boost {
        Some(b) => writeln!(
            out,
            "  boost:  inherits {} from {} ({}) blocked on {}, confidence {}, chain {:?}, for {:.1} ms",
            b.inherited, b.requester, b.requester_comm, b.resource, b.confidence, b.chain, b.age_ms
        )?,
        None => writeln!(out, "  boost:  none now")?,
    }
    match &p.slice {
        Some(s) => writeln!(
            out,
            "  slice:  {:.2} ms — PFS of {} predicts the next burst at {:.2} ms",
            s.slice_ns as f64 / 1e6,
            s.program,
            s.predicted_ns as f64 / 1e6
        )?,
        None => writeln!(out, "  slice:  the default")?,
    }
    if !e.pfs_bursts_ns.is_empty() {
        let ms: Vec<String> = e.pfs_bursts_ns.iter().map(|b| format!("{:.2}", *b as f64 / 1e6)).collect();
        writeln!(out, "  PFS:    bursts (ms) {}", ms.join(" "))?;
    }
    if let Some(x) = &e.sched_ext {
        write!(out, "  sched_ext: class {} ({} queued)", x.class, x.queued)?;
        match x.flow {
            0 => writeln!(out, ", no flow")?,
            id => {
                let ms: Vec<String> = x.bursts_ns.iter().map(|b| format!("{:.2}", *b as f64 / 1e6)).collect();
                writeln!(out, ", flow {id}: bursts (ms) {} as adapted in the scheduler", ms.join(" "))?
            }
        }
    }
    if !e.dependencies.is_empty() {
        writeln!(out, "  dependencies:")?;
        for d in &e.dependencies {
            writeln!(
                out,
                "    {} waits for {} on {} (confidence {}, {} wakeups)",
                d.requester, d.provider, d.resource, d.confidence, d.wakeups
            )?;
        }
    }
    if !e.decisions.is_empty() {
        writeln!(out, "  decisions:")?;
        for d in &e.decisions {
            writeln!(out, "    {d}")?;
        }
    }
    Ok(())
}
