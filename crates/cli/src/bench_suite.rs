//! `schedlab bench suite`: the do-no-harm judge — real workloads on bare Linux and under
//! `schedlab run`, A-B-B-A, with a verdict per workload.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use schedlab_model::Ns;

use crate::table::{Align, Table};

const EXAMPLES: &str = "\
Examples:
  # the whole suite with the built-in configuration (about 16 minutes on 2 CPUs)
  sudo schedlab bench suite

  # a first look in under 2 minutes, with a chart
  sudo schedlab bench suite --quick --svg suite.svg

  # your own configuration, hackbench and make only, as JSON
  sudo schedlab bench suite --config my.toml --only hackbench-pipe-process,make --json";

/// The do-no-harm suite: real workloads on bare Linux and under `schedlab run`.
///
/// A round runs every workload bare and under `schedlab run` (started with the
/// built-in configuration or --config, its own store and socket in a temporary
/// directory, given 1 s to settle after its start-up profiling, stopped at the end,
/// which restores everything it changed): hackbench and the fork/exec loop 4 times
/// each (once with --quick), the others once, in an order shuffled anew each round and
/// cut in two halves, run A-B-B-A: the first half bare, both halves under the daemon,
/// the second half bare. A workload's bare and schedlab runs are thus half a round
/// apart, and the machine's slow and fast spells hit both alike; its value on a side is
/// the median of its runs in the round.
///
/// The workloads (`--only` takes their names): hackbench (rt-tests) over pipes and
/// sockets, as processes and threads (hackbench's own time); `xz -T<cpus> -3` of
/// generated text (wall time); `fork-exec`, a shell loop of /bin/true (wall time);
/// `make -j<cpus>` of generated small C files (wall time); `wakeup`, cyclictest as
/// SCHED_OTHER beside CPU hogs, every 1013 µs, off the tick's beat (the latency's p50
/// and p99 over all its runs pooled); `deps-KIND`, SWAP's
/// client-server round trip (a nice -20 client, a nice 0 server) over sock, pipe, msg,
/// sem, sig and flock with 8 hogs per CPU (the median round trip, and its ratio to the
/// unloaded round trip, measured bare in each round); `frames-HZhz-Nx`, a person's
/// interactive program beside a build: a render-like rt-app thread (SCHED_OTHER, nice 0,
/// 24 % of each period of work, HZ periods a second) beside N loops per CPU of `xz -6`
/// restarted as each job ends (fresh, unpinned processes), started 1 s before it: the
/// frames missed (%), the thread's wake-up latency p99 over all runs pooled, and the
/// load's pace (ms per job per loop, the harm guard); `frames-HZhz-Nx-spin`, the same
/// beside N hot loops per CPU of perl under a new random name each run (a program no rule
/// or habit knows), their pace the wall time per CPU second; `frames-HZhz-Nx-session`, the
/// compressor loops in a session of their own (a build started from its own terminal: on
/// a kernel with autogroups, one nice-0 task's weight together); `response-Nx`, 12 keystroke-like
/// programs (each sleeps a random 50-500 ms, wakes, works a random 1-5 ms of CPU time)
/// beside the same load (none at 0x, the unloaded reference): the response time's p99
/// and p99.9 from the wake-up each asked for to its work done, pooled, their ratio to
/// the unloaded row's, and the load's pace; `requests-Nx`, a schbench-like request
/// server of schedlab's own (2 message threads each handing a request to 4 worker
/// threads every 4 ms, each answered after 200 µs of CPU time) beside the same load:
/// the requests' latency p99 pooled, the pace (µs per request answered; a server that
/// falls behind skips periods) and their ratio to the unloaded row's, and the load's
/// pace; `…-reniced` is the same with the load at nice 19, what a person does by hand,
/// to hold schedlab against.
///
/// Per workload and metric the table gives both sides' medians, the median of the
/// per-round ratios schedlab/bare (lower is better), its 95 % bootstrap interval and
/// the verdict: loss when the ratio is above 1.03 or the interval reaches above 1.05,
/// win when the whole interval is below 1, neutral otherwise (and neutral when the
/// frames missed differ by one frame of a run or less: a ratio over a bare zero says
/// nothing then). Then the machine's own
/// noise (how far a timed workload's bare runs stray from their median between rounds:
/// where it passes a few percent, an interval within ±5 % takes more rounds or a
/// quieter hour), and what the daemon cost: its CPU time while it ran, its peak resident memory, its share of one CPU on the
/// idle machine (--idle), its boost reaction times and lost events.
///
/// The verdict is kept in the store (--store) as the enforcer's trial on the running
/// kernel: `schedlab run --enforcer auto` loads the sched_ext scheduler only where its
/// last trial there ran every workload (no --only) and lost none. Without --enforcer the
/// suite judges the enforcer `auto` would pick now.
///
/// Needs root (the daemon), rt-tests, rt-app, xz, make and cc. Every child runs in its own
/// process group and is killed on Ctrl-C, on an error or past --time-limit; nothing is
/// left changed.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct SuiteOpts {
    /// The daemon's configuration file (default: the built-in one).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The daemon's --enforcer (`schedlab run --help`) [default: what auto picks with
    /// --store's trials].
    #[arg(long, value_enum)]
    enforcer: Option<crate::bench::EnforcerName>,
    /// The store that keeps the verdict as the enforcer's trial on this kernel, for
    /// `schedlab run --enforcer auto` [default: schedlab run's].
    #[arg(long, value_name = "FILE")]
    store: Option<PathBuf>,
    /// Smaller workloads, 3 rounds and 10 s idle: under 2 minutes.
    #[arg(long)]
    quick: bool,
    /// Rounds, each running every workload on both sides (default 10; 3 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: Option<u32>,
    /// Only these workloads, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    only: Vec<schedlab_live_suite::Workload>,
    /// How long the daemon runs on the idle machine to measure its own CPU share
    /// (default 60s; 10s with --quick; 0 skips it).
    #[arg(long, value_parser = schedlab_sim::parse_duration, value_name = "DURATION")]
    idle: Option<Ns>,
    /// Start each round's daemon with a new store (cold: knowing no program's habits nor
    /// any provider). By default the daemons of one suite share a store, so that from
    /// the second round on each starts warm, as a daemon restarted on a machine does.
    #[arg(long)]
    cold: bool,
    /// The longest the whole suite may take.
    #[arg(long, value_parser = crate::args::duration, default_value = "40m", value_name = "DURATION")]
    time_limit: Ns,
    /// Also draw the ratios and their intervals as an SVG chart to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[cfg(target_os = "linux")]
mod schedlab_live_suite {
    pub use schedlab_lab::bench::suite::Workload;
}

#[cfg(not(target_os = "linux"))]
mod schedlab_live_suite {
    pub type Workload = String;
}

#[cfg(not(target_os = "linux"))]
pub fn run(_: &SuiteOpts) -> Result<()> {
    anyhow::bail!("schedlab bench suite needs Linux")
}

/// The daemon's configuration for a benchmark: the text of `path` (checked, so that a
/// bad file fails before the first run) or the built-in one, and what to call it.
pub(crate) fn daemon_config(path: Option<&std::path::Path>) -> Result<(String, String)> {
    Ok(match path {
        Some(path) => {
            schedlab_live::config::Config::load(path)?;
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            (text, path.display().to_string())
        }
        None => (schedlab_live::config::DEFAULT.to_string(), "built-in".to_string()),
    })
}

#[cfg(target_os = "linux")]
pub fn run(opts: &SuiteOpts) -> Result<()> {
    use std::time::Duration;

    use schedlab_lab::bench::suite::{run_suite, Sizes, SuiteConfig, Workload};

    use crate::provenance::{write_json, Provenance};

    let (daemon_config, config_name) = daemon_config(opts.config.as_deref())?;
    let mut workloads: Vec<Workload> = Vec::new();
    for w in if opts.only.is_empty() { Workload::all() } else { opts.only.clone() } {
        if !workloads.contains(&w) {
            workloads.push(w);
        }
    }
    let complete = Workload::all().iter().all(|w| workloads.contains(w));
    let store_path = opts.store.clone().unwrap_or_else(schedlab_store::Store::default_path);
    let store = schedlab_store::Store::open(&store_path)?;
    // The suite's daemon has a store of its own, without trials: `auto` is resolved here.
    let enforcer = opts.enforcer.or(match schedlab_live::daemon::auto_choice(&store)? {
        Ok(()) => Some(crate::bench::EnforcerName::SchedExt),
        Err(_) => None,
    });
    let default_idle = if opts.quick { 10 } else { 60 };
    let cfg = SuiteConfig {
        exe: std::env::current_exe().context("cannot find this program's path to start the daemon")?,
        daemon_config,
        config_name,
        enforcer: enforcer.map_or(schedlab_live::daemon::Enforcer::Auto, Into::into),
        workloads,
        sizes: if opts.quick { Sizes::quick() } else { Sizes::full() },
        cold: opts.cold,
        rounds: opts.rounds.map_or(if opts.quick { 3 } else { 10 }, |r| r as usize),
        idle: opts.idle.map_or(Duration::from_secs(default_idle), Duration::from_nanos),
        time_limit: Duration::from_nanos(opts.time_limit),
    };
    crate::run::install_signal_handlers().context("cannot install the signal handlers")?;
    let bar = crate::progress::StepBar::new(true);
    // Without a terminal (a log, CI) the bar is hidden: a line per step instead.
    let lines = !io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let report = run_suite(&cfg, &crate::run::STOP, &mut |p| {
        if lines {
            eprintln!(
                "[{:5.1} s] round {}/{} {}: {}",
                started.elapsed().as_secs_f64(),
                p.round + 1,
                cfg.rounds,
                side_name(p.side),
                p.what
            );
        }
        bar.show(
            format!("round {}/{} {}", p.round + 1, cfg.rounds, side_name(p.side)),
            p.what.clone(),
            p.done as u64,
            p.total as u64,
        );
    });
    drop(bar);
    let report = report.context("the suite failed")?;
    let kept = keep_trial(&store, &report, complete, opts.quick);
    if let Some(path) = &opts.svg {
        std::fs::write(path, chart(&report)?).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let mut out = io::stdout().lock();
    if opts.json {
        write_json(&mut out, &Provenance::of_this_run(), &report)?;
    } else {
        write_text(&mut out, &report)?;
    }
    match kept? {
        Some(t) => eprintln!(
            "schedlab: kept in {} as the {} enforcer's trial on kernel {} ({} workloads, {} loss(es))",
            store_path.display(),
            t.enforcer,
            t.kernel,
            if t.complete { "every one of the" } else { "only some" },
            t.losses
        ),
        None => eprintln!("schedlab: not kept as a trial: the daemon did not keep to one enforcer"),
    }
    Ok(())
}

/// Keeps the report as the trial of the enforcer the daemon used throughout (`None`
/// where it changed, e.g. the kernel ended the sched_ext scheduler mid-suite).
#[cfg(target_os = "linux")]
fn keep_trial(
    store: &schedlab_store::Store,
    r: &schedlab_lab::bench::suite::SuiteReport,
    complete: bool,
    quick: bool,
) -> Result<Option<schedlab_store::EnforcerTrial>> {
    let at_unix_s =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let Some(trial) = r.trial(&schedlab_ext::kernel::release(), complete, quick, at_unix_s) else {
        return Ok(None);
    };
    store.record_enforcer_trial(&trial).context("cannot keep the trial in the store")?;
    Ok(Some(trial))
}

#[cfg(target_os = "linux")]
fn side_name(side: schedlab_lab::bench::suite::Side) -> &'static str {
    match side {
        schedlab_lab::bench::suite::Side::Bare => "bare",
        schedlab_lab::bench::suite::Side::Schedlab => "schedlab",
    }
}

/// A value with its unit, for the table.
fn value(v: f64, unit: &str) -> String {
    match unit {
        "s" => format!("{v:.3} s"),
        "ms" => format!("{v:.1} ms"),
        _ => format!("{v:.0} {unit}"),
    }
}

#[cfg(target_os = "linux")]
fn write_text(out: &mut impl Write, r: &schedlab_lab::bench::suite::SuiteReport) -> io::Result<()> {
    writeln!(
        out,
        "schedlab run ({} configuration, {}) against bare Linux: {} CPUs, {} rounds A-B-B-A, {:.0} s",
        r.config,
        if r.cold { "each daemon cold" } else { "warm from the second round" },
        r.cpus,
        r.rounds,
        r.wall_s
    )?;
    let mut t = Table::new(&[
        ("WORKLOAD", Align::Left),
        ("METRIC", Align::Left),
        ("BARE", Align::Right),
        ("SCHEDLAB", Align::Right),
        ("RATIO", Align::Right),
        ("95% CI", Align::Right),
        ("VERDICT", Align::Left),
        ("×UNLOADED bare→schedlab", Align::Right),
    ]);
    for row in &r.rows {
        let unloaded = match (row.bare_vs_unloaded, row.schedlab_vs_unloaded) {
            (Some(b), Some(s)) => format!("{b:.2} → {s:.2}"),
            _ => String::new(),
        };
        t.row(vec![
            row.workload.clone(),
            row.metric.clone(),
            value(row.bare_median, &row.unit),
            value(row.schedlab_median, &row.unit),
            format!("{:.3}", row.ratio),
            format!("{:.3}–{:.3}", row.ci_low, row.ci_high),
            row.verdict.name().to_string(),
            unloaded,
        ]);
    }
    t.write(out)?;
    let d = &r.daemon;
    writeln!(
        out,
        "\n{} loss(es), {} win(s), {} neutral",
        r.losses,
        r.wins,
        r.rows.len() - r.losses - r.wins
    )?;
    if let Some(noise) = r.machine_noise_pct {
        writeln!(
            out,
            "the machine's own noise: a timed workload's bare runs strayed {noise:.1} % from their median \
             between rounds (a loss is an interval reaching past +5 %: more rounds narrow it)"
        )?;
    }
    write!(
        out,
        "the daemon: {:.2} s of CPU over the {:.0} s it ran ({:.1} % of one CPU), peak RSS {:.1} MiB",
        d.cpu_s,
        d.wall_s,
        d.busy_pct,
        d.peak_rss_kib as f64 / 1024.0
    )?;
    match d.idle_cpu_pct {
        Some(p) => writeln!(out, "; idle machine: {p:.2} % of one CPU over {:.0} s", d.idle_s)?,
        None => writeln!(out)?,
    }
    // Blocks without a client-server workload boost nothing: no reaction to show.
    let boosted: Vec<_> = d.boost_reaction_us.iter().filter(|b| b.count > 0).collect();
    if !boosted.is_empty() {
        let p50: Vec<String> = boosted.iter().map(|b| format!("{:.0}", b.p50)).collect();
        let p99: Vec<String> = boosted.iter().map(|b| format!("{:.0}", b.p99)).collect();
        let count: u64 = boosted.iter().map(|b| b.count).sum();
        let over: u64 = boosted.iter().map(|b| b.over_1ms).sum();
        writeln!(
            out,
            "boost reaction per round: p50 {} µs; p99 {} µs; over 1 ms: {over} of {count} ({:.1} %)",
            p50.join(" "),
            p99.join(" "),
            over as f64 / count as f64 * 100.0
        )?;
    }
    if !d.enforcers.is_empty() {
        writeln!(out, "the daemon's enforcer: {}", d.enforcers.join("; "))?;
    }
    if d.lost_events > 0 {
        writeln!(out, "the daemon's observer lost {} event(s)", d.lost_events)?;
    }
    for n in &r.notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(())
}

/// The ratios with their intervals as a horizontal SVG chart: one bar per row, the
/// interval as a whisker, 1.0 (no effect) and the loss threshold as vertical lines.
#[cfg(target_os = "linux")]
fn chart(r: &schedlab_lab::bench::suite::SuiteReport) -> Result<String> {
    use plotters::prelude::*;
    use schedlab_lab::bench::suite::{Verdict, LOSS_RATIO};

    let n = r.rows.len();
    let hi = r.rows.iter().map(|row| row.ci_high.max(row.ratio)).fold(1.1_f64, f64::max) * 1.05;
    let lo = r.rows.iter().map(|row| row.ci_low.min(row.ratio)).fold(0.9_f64, f64::min) * 0.95;
    let labels: Vec<String> = r.rows.iter().map(|row| format!("{} {}", row.workload, row.metric)).collect();
    let mut out = String::new();
    let draw = |out: &mut String| -> std::result::Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(out, (760, 120 + 26 * n as u32)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut c = ChartBuilder::on(&root)
            .caption(
                format!("schedlab run ({}) / bare Linux, {} rounds (lower is better)", r.config, r.rounds),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(210)
            .build_cartesian_2d(lo..hi, 0.0..n as f64)?;
        c.configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_desc("time or latency under schedlab / bare (median of per-round ratios, 95 % CI)")
            .draw()?;
        for (i, row) in r.rows.iter().enumerate() {
            let y = n as f64 - i as f64 - 0.5;
            let color = match row.verdict {
                Verdict::Loss => RGBColor(214, 39, 40),
                Verdict::Win => RGBColor(44, 160, 44),
                Verdict::Neutral => RGBColor(127, 127, 127),
            };
            c.draw_series(std::iter::once(Rectangle::new(
                [(row.ratio.min(1.0), y - 0.3), (row.ratio.max(1.0), y + 0.3)],
                color.mix(0.6).filled(),
            )))?;
            c.draw_series(std::iter::once(PathElement::new(
                vec![(row.ci_low, y), (row.ci_high, y)],
                BLACK.stroke_width(2),
            )))?;
            let (px, py) = c.backend_coord(&(lo, y));
            let style =
                ("sans-serif", 12).into_font().color(&BLACK).pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Right,
                    plotters::style::text_anchor::VPos::Center,
                ));
            root.draw(&Text::new(labels[i].clone(), (px - 6, py), style))?;
        }
        for (x, style) in [(1.0, BLACK.stroke_width(1)), (LOSS_RATIO, RGBColor(214, 39, 40).stroke_width(1))]
        {
            c.draw_series(std::iter::once(PathElement::new(vec![(x, 0.0), (x, n as f64)], style)))?;
        }
        root.present()?;
        Ok(())
    };
    draw(&mut out).map_err(|e| anyhow::anyhow!("cannot draw the chart: {e}"))?;
    Ok(out)
}
