//! `schedlab bench policies`: paper 002's benchmark of SCHED_OTHER, SCHED_FIFO and
//! SCHED_RR with a CPU-bound, an I/O-bound and a mixed program, live on a bounded CPU
//! set, optionally beside the simulator's model of the same cells; printed as the
//! paper's Appendix A, as JSON, or drawn as its bar charts.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use schedlab_lab::bench::policies::{
    policy_name, run_policies, simulate, CellResult, PoliciesConfig, PoliciesReport, Program, Sample, SimCell,
};
use schedlab_lab::papers::{Figure, Series};
use schedlab_model::{Ns, Policy};
use serde::Serialize;

use crate::provenance::{write_json, Provenance};
use crate::table::{Align, Table};

const EXAMPLES: &str = "\
Examples:
  # the paper's 27 cells, 3 repetitions each, beside the simulator's values
  sudo schedlab bench policies --reps 3 --sim

  # pi and rw only, 10 processes, as JSON; bar charts into ./fig
  sudo schedlab bench policies --programs pi,rw --sizes 10 --json --svg fig";

/// Paper 002: SCHED_OTHER, SCHED_FIFO and SCHED_RR with CPU-bound, I/O-bound and mixed
/// programs, N processes at a time, on a bounded CPU set.
///
/// Each cell (program × policy × number of processes) starts N workers of the program
/// ("sl-pi": a Monte-Carlo pi over --iterations points, two rand() calls each, as the
/// paper's pi-sched.c, by default as many as take 70 ms of CPU, as in the paper; "sl-rw": copies --bytes of a shared input file in --block-byte
/// reads and writes to its own output file opened O_SYNC, as rw.c; "sl-mixed": pi then
/// rw), pinned to the workers' CPUs. Once all are ready, each gets the policy (FIFO and
/// RR at priority 99, the paper's sched_get_priority_max) and all start together. Real
/// time runs from the start to the last exit; user and system time and the voluntary
/// and involuntary context switches are the sums of the children's wait4 usage; %CPU is
/// (user + sys) / real. Each cell runs --reps times; the table gives the mean ± the
/// standard deviation (the JSON also min and max and every repetition), laid out as the
/// paper's Appendix A: a block per program, a row per measure, a column per policy and
/// size.
///
/// Safety: the workers run on --cpus (default: the last CPU), which must leave a CPU
/// for the system and the runner, which is pinned there (--all-cpus lets the workers
/// take every CPU; the runner then runs at SCHED_FIFO 99 and the workers at 98). RT
/// cells need the kernel's RT throttling on (sched_rt_runtime_us not -1; see
/// --allow-unthrottled). A repetition past --cell-limit is killed and its cell reported
/// as timed out.
///
/// --sim runs the same cells in the simulator (paper 002's model: pi as the CPU time the
/// iterations take here, measured by the runner; 150 µs of CPU and 1.5 ms of device time
/// per O_SYNC block; EEVDF) with as
/// many CPUs as the workers had, and shows its values under the live ones (the
/// simulator does not split user from system time: its CPU time is in the user row).
///
/// Needs root for FIFO and RR.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct PoliciesOpts {
    /// The programs, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "pi,rw,mixed",
          value_parser = ["pi", "rw", "mixed"])]
    pub programs: Vec<String>,
    /// The policies, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "other,fifo,rr",
          value_parser = ["other", "fifo", "rr"])]
    pub policies: Vec<String>,
    /// The numbers of processes, comma-separated (the paper: LOW 10, MED 50, HIGH 100).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "10,50,100",
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub sizes: Vec<u32>,
    /// Repetitions per cell.
    #[arg(long, value_name = "N", default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
    /// The workers' CPUs, comma-separated [default: the last allowed CPU].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub cpus: Vec<usize>,
    /// Let the workers take every allowed CPU (the runner then runs at SCHED_FIFO 99).
    #[arg(long)]
    pub all_cpus: bool,
    /// Run FIFO and RR cells even with the kernel's RT throttling off.
    #[arg(long)]
    pub allow_unthrottled: bool,
    /// pi's iterations per process [default: as many as take 70 ms of CPU here, as one
    /// process took in the paper; pi-sched.c's own default is 1000000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: Option<u64>,
    /// Bytes each rw process copies (rw.c: 102400).
    #[arg(long, value_name = "N", default_value_t = 102_400, value_parser = clap::value_parser!(u64).range(1..))]
    pub bytes: u64,
    /// Bytes per read and write; must divide --bytes (rw.c: 1024).
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub block: u32,
    /// The wall-time limit of one repetition of a cell (with a unit: 120s).
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = crate::args::duration)]
    pub cell_limit: Ns,
    /// Also run the cells in the simulator and show its values.
    #[arg(long)]
    pub sim: bool,
    /// Print the whole report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write bar charts (real time, context switches; one pair per program) as SVG
    /// files into this directory.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
}

#[derive(Serialize)]
struct Output<'a> {
    #[serde(flatten)]
    live: &'a PoliciesReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    sim: Option<&'a [SimCell]>,
}

pub fn run(opts: &PoliciesOpts) -> Result<()> {
    let mut programs: Vec<Program> = Vec::new();
    for p in &opts.programs {
        let p: Program = p.parse()?;
        if !programs.contains(&p) {
            programs.push(p);
        }
    }
    let mut policies: Vec<Policy> = Vec::new();
    for p in &opts.policies {
        let p = Policy::parse(p).with_context(|| format!("unknown policy '{p}'"))?;
        if !policies.contains(&p) {
            policies.push(p);
        }
    }
    let mut sizes = opts.sizes.clone();
    sizes.dedup();
    if !opts.bytes.is_multiple_of(u64::from(opts.block)) {
        anyhow::bail!("--block {} must divide --bytes {}, as rw.c requires", opts.block, opts.bytes);
    }
    if let Some(dir) = &opts.svg {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let cfg = PoliciesConfig {
        programs,
        policies,
        sizes,
        reps: opts.reps,
        cpus: (!opts.cpus.is_empty()).then(|| opts.cpus.clone()),
        all_cpus: opts.all_cpus,
        allow_unthrottled: opts.allow_unthrottled,
        iterations: opts.iterations,
        bytes: opts.bytes,
        block: opts.block,
        cell_limit: Duration::from_nanos(opts.cell_limit),
        exe: std::env::current_exe().context("cannot find this program's path to start its workers")?,
        ..PoliciesConfig::default()
    };
    let bar = crate::progress::StepBar::new(false);
    let report = run_policies(&cfg, &mut |p| {
        bar.show(
            format!("cell {}/{}", p.cell + 1, p.cells),
            format!("{} {} ×{}", p.program.name(), policy_name(p.policy), p.size),
            u64::from(p.done),
            u64::from(p.reps),
        );
    });
    drop(bar);
    let report = report.context("the policies benchmark failed")?;
    let sim = if opts.sim { Some(simulate(&report)?) } else { None };
    if let Some(dir) = &opts.svg {
        write_svgs(dir, &report, sim.as_deref())?;
    }

    let mut out = io::stdout().lock();
    if opts.json {
        write_json(&mut out, &Provenance::of_this_run(), &Output { live: &report, sim: sim.as_deref() })?;
        return Ok(());
    }
    write_tables(&mut out, &report, sim.as_deref())?;
    Ok(())
}

/// The paper's names of its three sizes.
fn size_label(n: u32) -> String {
    match n {
        10 => "10 LOW".into(),
        50 => "50 MED".into(),
        100 => "100 HIGH".into(),
        n => n.to_string(),
    }
}

/// The rows of Appendix A, in its order.
const ROWS: [&str; 6] = [
    "Real time avg (s)",
    "User mode time avg (s)",
    "Kernel mode time avg (s)",
    "% CPU used avg",
    "Involuntary context switches avg",
    "Voluntary context switches avg",
];

/// A value of row `row` as the table shows it.
fn fmt_value(row: usize, v: f64) -> String {
    match row {
        0..=2 if v < 10.0 => format!("{v:.3}"),
        0..=2 => format!("{v:.2}"),
        3 => format!("{v:.0}%"),
        _ if v < 100.0 => format!("{v:.1}"),
        _ => format!("{v:.0}"),
    }
}

/// One block of Appendix A per program: a row per measure (the simulator's under each,
/// with `sim`), a column per policy and size.
fn write_tables(out: &mut impl Write, report: &PoliciesReport, sim: Option<&[SimCell]>) -> io::Result<()> {
    let mut programs: Vec<Program> = Vec::new();
    for c in &report.cells {
        if !programs.contains(&c.program) {
            programs.push(c.program);
        }
    }
    for (i, &program) in programs.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        program_table(report, program, sim).write(out)?;
    }
    let rt = report.cells.iter().find_map(|c| c.priority);
    let throttle = match (report.rt_runtime_us, report.rt_period_us) {
        (Some(r), Some(p)) => format!("RT throttling {r}/{p} µs"),
        _ => "RT throttling unknown".into(),
    };
    let runner = if report.runner_cpus.is_empty() {
        format!("the runner beside them at SCHED_FIFO {}", report.runner_rt_priority.unwrap_or(0))
    } else {
        format!("the runner on {:?}", report.runner_cpus)
    };
    writeln!(
        out,
        "\nmean ± sd of {} repetition{} per cell; workers on CPUs {:?}, {runner}; {}{throttle}; \
         pi {} iterations ({:.1} ms of CPU each); rw {} bytes in {}-byte O_SYNC writes; {:.1} s.",
        report.reps,
        if report.reps == 1 { "" } else { "s" },
        report.cpus,
        rt.map(|p| format!("FIFO/RR priority {p}; ")).unwrap_or_default(),
        report.iterations,
        report.iterations as f64 * report.pi_ns_per_iteration / 1e6,
        report.bytes,
        report.block,
        report.wall_s
    )?;
    if sim.is_some() {
        writeln!(
            out,
            "sim: the simulator on {} CPU{} (EEVDF); its CPU time is in the user row.",
            report.cpus.len(),
            if report.cpus.len() == 1 { "" } else { "s" }
        )?;
    }
    for c in report.cells.iter().filter(|c| c.timed_out) {
        writeln!(
            out,
            "note: {} {} ×{} timed out (limit {:.0} s); {} repetition(s) finished",
            c.program.name(),
            c.policy,
            c.size,
            report.cell_limit_s,
            c.reps.len()
        )?;
    }
    Ok(())
}

/// Appendix A's block of one program.
fn program_table(report: &PoliciesReport, program: Program, sim: Option<&[SimCell]>) -> Table {
    let cells: Vec<&CellResult> = report.cells.iter().filter(|c| c.program == program).collect();
    let mut columns = vec![("", Align::Left)];
    columns.extend(cells.iter().map(|_| ("", Align::Right)));
    let mut table = Table::new(&columns).headless();
    let mut header = vec![program.name().to_string()];
    header.extend(cells.iter().map(|c| format!("{} {}", c.policy.to_uppercase(), size_label(c.size))));
    table.row(header);
    let sim_of = |c: &CellResult| {
        sim.and_then(|s| {
            s.iter().find(|x| x.program == c.program && x.policy == c.policy && x.size == c.size)
        })
    };
    for (row, name) in ROWS.iter().enumerate() {
        let mut live = vec![name.to_string()];
        for c in &cells {
            live.push(match &c.stats {
                Some(s) => {
                    let spread = [s.real_s, s.user_s, s.sys_s, s.cpu_pct, s.nivcsw, s.nvcsw][row];
                    let mut v = fmt_value(row, spread.mean);
                    if c.reps.len() > 1 {
                        v += &format!(" ±{}", fmt_value(row, spread.sd).trim_end_matches('%'));
                    }
                    if c.timed_out {
                        v += " (timeout)";
                    }
                    v
                }
                None if c.timed_out => "timeout".into(),
                None => "-".into(),
            });
        }
        table.row(live);
        if sim.is_some() {
            let mut simulated = vec!["  sim".to_string()];
            for c in &cells {
                simulated.push(match sim_of(c) {
                    Some(_) if row == 2 => "-".into(),
                    Some(s) => fmt_value(row, s.metrics.paper_rows()[row]),
                    None => "-".into(),
                });
            }
            table.row(simulated);
        }
    }
    table
}

/// The paper's figures for each program: real time per policy and size, and context
/// switches (voluntary and involuntary) per policy and size.
fn figures(report: &PoliciesReport, sim: Option<&[SimCell]>) -> Vec<(String, Figure)> {
    let mut programs: Vec<Program> = Vec::new();
    let mut sizes: Vec<u32> = Vec::new();
    let mut policies: Vec<String> = Vec::new();
    for c in &report.cells {
        if !programs.contains(&c.program) {
            programs.push(c.program);
        }
        if !sizes.contains(&c.size) {
            sizes.push(c.size);
        }
        if !policies.contains(&c.policy) {
            policies.push(c.policy.clone());
        }
    }
    let categories: Vec<String> = sizes.iter().map(|&n| size_label(n)).collect();
    let mut out = Vec::new();
    for &program in &programs {
        let live = |policy: &str, f: fn(&Sample) -> f64| -> Vec<(f64, f64)> {
            sizes
                .iter()
                .enumerate()
                .filter_map(|(x, &n)| {
                    let c = report
                        .cells
                        .iter()
                        .find(|c| c.program == program && c.policy == policy && c.size == n)?;
                    Some((x as f64, f(&c.stats.as_ref()?.means())))
                })
                .collect()
        };
        let simulated = |policy: &str, f: fn(&Sample) -> f64| -> Vec<(f64, f64)> {
            sizes
                .iter()
                .enumerate()
                .filter_map(|(x, &n)| {
                    let c =
                        sim?.iter().find(|c| c.program == program && c.policy == policy && c.size == n)?;
                    Some((x as f64, f(&c.metrics)))
                })
                .collect()
        };
        let mut time = Vec::new();
        let mut switches = Vec::new();
        for p in &policies {
            let upper = p.to_uppercase();
            time.push(Series { name: upper.clone(), points: live(p, |m| m.real_s) });
            if sim.is_some() {
                time.push(Series { name: format!("{upper} sim"), points: simulated(p, |m| m.real_s) });
            }
            switches.push(Series { name: format!("{upper} voluntary"), points: live(p, |m| m.nvcsw) });
            switches.push(Series { name: format!("{upper} involuntary"), points: live(p, |m| m.nivcsw) });
        }
        let name = program.name();
        out.push((
            format!("{name}-time.svg"),
            Figure {
                title: format!("{name}: real time"),
                x_label: "processes".into(),
                y_label: "seconds".into(),
                categories: categories.clone(),
                series: time,
            },
        ));
        out.push((
            format!("{name}-switches.svg"),
            Figure {
                title: format!("{name}: context switches"),
                x_label: "processes".into(),
                y_label: "context switches".into(),
                categories: categories.clone(),
                series: switches,
            },
        ));
    }
    out
}

fn write_svgs(dir: &Path, report: &PoliciesReport, sim: Option<&[SimCell]>) -> Result<()> {
    for (file, fig) in figures(report, sim) {
        if fig.series.iter().all(|s| s.points.is_empty()) {
            continue;
        }
        let svg = crate::report::svg(&fig)?;
        let path = dir.join(file);
        std::fs::write(&path, svg).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use schedlab_lab::bench::policies::Metrics;

    use super::*;

    fn cell(program: Program, policy: &str, size: u32, reps: &[f64]) -> CellResult {
        let reps: Vec<Sample> = reps
            .iter()
            .map(|&real| Sample {
                real_s: real,
                user_s: 0.5,
                sys_s: 0.01,
                cpu_pct: 51.0,
                nvcsw: 20.0,
                nivcsw: 200.0,
            })
            .collect();
        CellResult {
            program,
            policy: policy.into(),
            size,
            priority: (policy != "other").then_some(99),
            stats: (!reps.is_empty()).then(|| Metrics::of(&reps)),
            spawn_s: vec![0.01; reps.len()],
            timed_out: reps.is_empty(),
            reps,
        }
    }

    fn report() -> PoliciesReport {
        PoliciesReport {
            cpus: vec![1],
            runner_cpus: vec![0],
            runner_rt_priority: None,
            rt_runtime_us: Some(950_000),
            rt_period_us: Some(1_000_000),
            iterations: 1_000_000,
            pi_ns_per_iteration: 70.0,
            bytes: 102_400,
            block: 1024,
            reps: 2,
            cell_limit_s: 120.0,
            cells: vec![
                cell(Program::Pi, "other", 10, &[1.0, 3.0]),
                cell(Program::Pi, "fifo", 10, &[2.0, 2.0]),
                cell(Program::Pi, "fifo", 100, &[]),
                cell(Program::Rw, "other", 10, &[12.5, 12.5]),
            ],
            wall_s: 30.0,
        }
    }

    #[test]
    fn the_table_is_laid_out_as_appendix_a() {
        let r = report();
        let mut out = Vec::new();
        write_tables(&mut out, &r, None).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // The pi block: a header of policy × size, then the six measures in the paper's order.
        let head: Vec<&str> = lines[0].split("  ").map(str::trim).filter(|s| !s.is_empty()).collect();
        assert_eq!(head, ["pi", "OTHER 10 LOW", "FIFO 10 LOW", "FIFO 100 HIGH"]);
        let labels: Vec<&str> = lines[1..7].iter().map(|l| l.split("  ").next().unwrap()).collect();
        assert_eq!(labels, ROWS);
        assert!(lines[1].contains("2.000 ±1.414") && lines[1].contains("2.000 ±0.000"), "{}", lines[1]);
        assert!(lines[1].trim_end().ends_with("timeout"), "{}", lines[1]);
        assert!(lines[4].contains("51% ±0"), "{}", lines[4]);
        assert!(lines[5].contains("200 ±0") && lines[6].contains("20.0 ±0.0"), "{}\n{}", lines[5], lines[6]);
        // Then the rw block.
        assert_eq!(lines[7], "");
        assert!(lines[8].starts_with("rw") && lines[8].trim_end().ends_with("OTHER 10 LOW"), "{}", lines[8]);
        assert!(lines[9].contains("12.50"), "{}", lines[9]);
        assert!(text.contains("workers on CPUs [1], the runner on [0]; FIFO/RR priority 99;"), "{text}");
        assert!(text.contains("pi 1000000 iterations (70.0 ms of CPU each)"), "{text}");
        assert!(text.contains("note: pi fifo ×100 timed out"), "{text}");
    }

    #[test]
    fn simulated_values_sit_under_the_live_ones() {
        let r = report();
        let sim = simulate(&r).unwrap();
        assert_eq!(sim[1].workload, "pi:procs=10,policy=fifo,prio=99,work=70000us");
        assert_eq!(sim[3].workload, "rw:procs=10,policy=other,bytes=102400,block=1024");
        assert_eq!(sim.len(), 4);
        // One CPU, 10 × 70 ms of pi: 0.7 s.
        assert!((sim[0].metrics.real_s - 0.7).abs() < 0.05, "{:?}", sim[0]);
        let mut out = Vec::new();
        write_tables(&mut out, &r, Some(&sim)).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with(ROWS[0]) && lines[2].starts_with("  sim"), "{text}");
        assert!(lines[2].contains("0.70"), "{}", lines[2]);
        assert!(
            lines[6].starts_with("  sim") && lines[6].contains('-'),
            "sys is not simulated: {}",
            lines[6]
        );
        assert_eq!(lines.iter().filter(|l| l.starts_with("  sim")).count(), 12);
        let figs = figures(&r, Some(&sim));
        let names: Vec<&str> = figs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["pi-time.svg", "pi-switches.svg", "rw-time.svg", "rw-switches.svg"]);
        assert_eq!(figs[0].1.categories, ["10 LOW", "100 HIGH"]);
        assert_eq!(figs[0].1.series.len(), 4, "OTHER, OTHER sim, FIFO, FIFO sim");
        assert!(crate::report::svg(&figs[0].1).unwrap().contains("<svg"));
    }
}
