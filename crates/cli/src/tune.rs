//! `schedlab tune`: search the fair class's tunables for the shortest turnaround of a
//! simulated workload, by paper 003's methods (particle swarm, its RSM
//! meta-optimization, golden section with the two parameter discovery algorithms). The
//! paper's comparison is the `tune_paper003` experiment of `schedlab reproduce`
//! (`schedlab_lab::papers::tuning`).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use schedlab_lab::papers::tuning::{convergence_figure, PAPER_WORKLOAD};
use schedlab_sim::{workloads, FairFlavor, SimConfig};
use schedlab_tune::rsm::{self, MetaOutcome};
use schedlab_tune::{
    particle_swarm, search_period, BatchCost, Knobs, PeriodSearch, PsoParams, SimObjective, Trace, TuneError,
};
use serde::Serialize;

use crate::human;
use crate::provenance::{write_json, Provenance};
use crate::report;
use crate::table::{Align, Table};
use crate::tunables::{self, Setting};

/// The search method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// Particle swarm over all of the fair class's tunables.
    Pso,
    /// Golden-section search over SchedPeriod (cfs only), through a discovery algorithm.
    Golden,
    /// The paper's meta-optimization: a 14-run Box-Behnken design of swarms over w, φp,
    /// φg, a second-order model, then a swarm with the chosen w, φp, φg.
    Rsm,
}

/// Search the fair class's tunables for the shortest turnaround (paper 003).
///
/// The objective is the makespan of a simulated workload (by default the paper's
/// hackbench, 5 groups of 40 tasks, 1 loop) as a function of CFS's sched_latency_ns,
/// sched_min_granularity_ns and sched_wakeup_granularity_ns (ranges 0.1 ms..1 s, and
/// 0..1 s for the wake-up granularity, as in the paper) or EEVDF's base_slice_ns. Every
/// candidate runs with the same simulator seeds; a repeated candidate is answered from a
/// cache; a swarm's particles are simulated in parallel.
///
/// Methods: `pso`, a particle swarm (default: the paper's 20 particles × 30 iterations
/// with its meta-optimized w = 0.4365, φp = φg = 3.020); `golden`, golden-section search
/// over CFS's SchedPeriod, turned into the three tunables by the paper's parameter
/// discovery algorithm 1 (many tasks) or 2 (few tasks); `rsm`, the paper's
/// meta-optimization of w, φp, φg (14 swarms on a Box-Behnken design, a second-order
/// model and its optimum), then a swarm with the chosen values.
///
/// Reports the best tunables, the makespan at the defaults and at the best, the
/// evaluations made and how many it took to reach the best (each request of the
/// objective counts, as the paper counts benchmark runs).
#[derive(Debug, Args)]
#[command(
    after_long_help = "Examples:\n  schedlab tune --method pso\n  schedlab tune --method golden --algorithm 2 --chart golden2.svg\n  schedlab tune --method rsm --json | jq .choice\n  schedlab tune --fair eevdf --workload 'hackbench:groups=2,loops=20' --cpus 4"
)]
pub struct TuneOpts {
    /// The search method.
    #[arg(long, value_enum, default_value = "pso")]
    pub method: Method,
    /// The fair class whose tunables are searched.
    #[arg(long, value_name = "CLASS", default_value = "cfs", value_parser = fair_parser())]
    pub fair: FairFlavor,
    /// The workload, as for `schedlab simulate` (an rt-app JSON file or a built-in).
    #[arg(long, value_name = "SPEC", default_value = PAPER_WORKLOAD)]
    pub workload: String,
    /// Number of simulated CPUs of a flat machine (the tunables' defaults scale with it
    /// as in the kernel).
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub cpus: u32,
    /// The simulated machine's topology instead of --cpus, as for `simulate`:
    /// NODESxCORESxTHREADS, a `lscpu -p` output file or a sysfs directory.
    #[arg(long, value_name = "NxCxT|FILE|DIR", conflicts_with = "cpus", value_parser = crate::args::topology)]
    pub topology: Option<schedlab_sim::Topology>,
    /// Set another tunable for every run, e.g. `--set hrtick=1` (as for `simulate`).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = tunables::parse_setting)]
    pub set: Vec<Setting>,
    /// Simulator seed of every candidate's run; repeat to average the makespan over
    /// several seeds (matters with `--set jitter_pct=N`).
    #[arg(long = "sim-seed", value_name = "S", default_values_t = [1u64])]
    pub sim_seeds: Vec<u64>,
    /// PSO: number of particles.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub particles: usize,
    /// PSO: iterations after the initial swarm (a run makes particles × (iterations + 1)
    /// evaluations).
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub iterations: u64,
    /// PSO: inertia weight w.
    #[arg(long, value_name = "W", default_value_t = 0.4365)]
    pub w: f64,
    /// PSO: cognitive parameter φp.
    #[arg(long, value_name = "PHI", default_value_t = 3.020)]
    pub phi_p: f64,
    /// PSO: social parameter φg.
    #[arg(long, value_name = "PHI", default_value_t = 3.020)]
    pub phi_g: f64,
    /// Golden section: the parameter discovery algorithm, 1 (many tasks: fixed latency,
    /// SchedPeriod = tasks × min_granularity) or 2 (few tasks: SchedPeriod = latency).
    #[arg(long, value_name = "1|2", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub algorithm: u8,
    /// Golden section: stop when the SchedPeriod interval is this narrow [default: 1 %
    /// of the searched interval].
    #[arg(long, value_name = "DURATION", value_parser = schedlab_sim::parse_duration)]
    pub tolerance: Option<u64>,
    /// Seed of the swarm's random numbers.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Write the convergence chart (best makespan so far vs evaluations) to FILE as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub chart: Option<PathBuf>,
    /// Print the result as one JSON object instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Tune on this machine instead of the simulator (root): the kernel's debugfs knobs
    /// are checked and reported (locked under lockdown), and what schedlab can change is
    /// tuned: the daemon's boost_max_ms, each candidate measured by `bench deps` over a
    /// pipe under `schedlab run` (golden: about 12 evaluations of ~2 s; pso: particles ×
    /// (iterations + 1); rsm is refused).
    #[arg(long)]
    pub live: bool,
}

fn fair_parser() -> impl TypedValueParser<Value = FairFlavor> {
    PossibleValuesParser::new(["cfs", "eevdf"])
        .try_map(|s| FairFlavor::parse(&s).ok_or_else(|| format!("unknown fair class '{s}'")))
}

/// A candidate with its tunables' names and its makespan.
#[derive(Debug, Serialize)]
struct Point {
    tunables: BTreeMap<&'static str, u64>,
    makespan_ns: f64,
}

/// What `schedlab tune` reports.
#[derive(Debug, Serialize)]
struct Outcome {
    workload: String,
    cpus: u32,
    fair: &'static str,
    method: &'static str,
    default: Point,
    best: Point,
    /// (default − best) / default, in percent.
    improvement_pct: f64,
    evaluations: usize,
    evaluations_to_best: usize,
    /// Distinct candidates simulated (evaluations the cache did not answer).
    simulations: usize,
    cache_hits: usize,
    wall_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pso: Option<PsoParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    golden: Option<PeriodSearch>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rsm: Option<MetaOutcome>,
    /// Best makespan so far after each evaluation (of the final search).
    best_so_far_ns: Vec<f64>,
}

/// The objective as the searches see it, advancing a progress bar.
struct Progress<'a> {
    objective: &'a SimObjective,
    bar: &'a ProgressBar,
}

impl BatchCost for Progress<'_> {
    fn cost_batch(&self, xs: &[Vec<f64>]) -> Result<Vec<f64>, TuneError> {
        let v = self.objective.cost_batch(xs)?;
        self.bar.inc(xs.len() as u64);
        Ok(v)
    }
}

fn point(objective: &SimObjective, knobs: &Knobs, makespan_ns: f64) -> Point {
    Point {
        tunables: objective.space().names().iter().copied().zip(knobs.iter().copied()).collect(),
        makespan_ns,
    }
}

fn bar(len: Option<u64>, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    let template = if len.is_some() {
        "{bar:30} {pos}/{len} evaluations {msg}"
    } else {
        "{spinner} {pos} evaluations {msg}"
    };
    bar.set_style(ProgressStyle::with_template(template).expect("a valid progress template"));
    bar
}

impl TuneOpts {
    /// The swarm the options describe.
    pub(crate) fn pso_params(&self) -> PsoParams {
        PsoParams {
            particles: self.particles,
            iterations: self.iterations,
            w: self.w,
            phi_p: self.phi_p,
            phi_g: self.phi_g,
            seed: self.seed,
        }
    }
}

/// Runs `schedlab tune`.
pub fn run(opts: &TuneOpts) -> Result<()> {
    if opts.live {
        return crate::tune_live::run(opts);
    }
    if opts.method == Method::Golden && opts.fair != FairFlavor::Cfs {
        bail!("--method golden searches CFS's SchedPeriod: use it with --fair cfs");
    }
    let workload = workloads::load(&opts.workload)
        .with_context(|| format!("cannot load the workload '{}'", opts.workload))?;
    let topology = crate::args::machine(Some(opts.cpus), opts.topology.as_ref(), || 2);
    let mut config = SimConfig::with_topology(topology, opts.fair);
    tunables::apply(&mut config.tunables, &opts.set).map_err(|e| anyhow!("--set {e}"))?;
    if opts.set.contains(&Setting::Help) {
        return tunables::list(&mut io::stdout().lock(), &config.tunables, config.cpus(), opts.json)
            .map_err(Into::into);
    }
    let objective = SimObjective::new(workload, config, opts.sim_seeds.clone())?;
    let (lower, upper) = objective.space().bounds();
    let pso = opts.pso_params();
    let per_swarm = (opts.particles as u64) * (opts.iterations + 1);
    let started = Instant::now();
    let defaults = objective.defaults();
    let default_value = objective.evaluate(&defaults)?;
    let (best, best_value, trace, golden_report, meta, used_pso): (Knobs, f64, Trace, _, _, _) = match opts
        .method
    {
        Method::Pso => {
            let bar = bar(Some(per_swarm), opts.json);
            let out = particle_swarm(&Progress { objective: &objective, bar: &bar }, &lower, &upper, &pso)?;
            bar.finish_and_clear();
            (objective.knobs(&out.best), out.best_value, out.trace, None, None, Some(pso))
        }
        Method::Golden => {
            let bar = bar(None, opts.json);
            let (out, report) =
                search_period(&objective, opts.algorithm, opts.tolerance, &mut || bar.inc(1))?;
            bar.finish_and_clear();
            let d = report.discovered;
            (
                vec![d.latency, d.min_granularity, d.wakeup_granularity],
                out.value,
                out.trace,
                Some(report),
                None,
                None,
            )
        }
        Method::Rsm => {
            let bar = bar(Some(per_swarm * 15), opts.json);
            let progress = Progress { objective: &objective, bar: &bar };
            let meta = rsm::meta_optimize(&progress, &lower, &upper, &pso, 2, 1_000.0, |run, _| {
                bar.set_message(format!("design run w={} φp={} φg={}", run.w, run.phi_p, run.phi_g));
            })?;
            bar.set_message("the chosen swarm");
            let chosen =
                PsoParams { w: meta.choice.w, phi_p: meta.choice.phi_p, phi_g: meta.choice.phi_g, ..pso };
            let out = particle_swarm(&progress, &lower, &upper, &chosen)?;
            bar.finish_and_clear();
            (objective.knobs(&out.best), out.best_value, out.trace, None, Some(meta), Some(chosen))
        }
    };
    let outcome = Outcome {
        workload: objective.workload().name.clone(),
        cpus: objective.config().cpus(),
        fair: opts.fair.name(),
        method: match opts.method {
            Method::Pso => "pso",
            Method::Golden => "golden",
            Method::Rsm => "rsm",
        },
        improvement_pct: (default_value - best_value) / default_value * 100.0,
        default: point(&objective, &defaults, default_value),
        best: point(&objective, &best, best_value),
        evaluations: trace.evaluations(),
        evaluations_to_best: trace.evaluations_to_best(),
        simulations: objective.simulations(),
        cache_hits: objective.cache_hits(),
        wall_s: started.elapsed().as_secs_f64(),
        pso: used_pso,
        golden: golden_report,
        rsm: meta,
        best_so_far_ns: trace.best_so_far(),
    };
    if let Some(path) = &opts.chart {
        let fig = convergence_figure(
            &format!("schedlab tune --method {}", outcome.method),
            &[(outcome.method, &trace)],
        );
        let svg = report::svg(&fig)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write the chart {}", path.display()))?;
    }
    let mut out = io::stdout().lock();
    if opts.json {
        write_json(&mut out, &Provenance::of_this_run(), &outcome)?;
        return Ok(());
    }
    print_outcome(&mut out, &outcome)?;
    if let Some(path) = &opts.chart {
        writeln!(out, "wrote {}", path.display())?;
    }
    Ok(())
}

fn us(ns: f64) -> String {
    human::duration(ns.round() as u64)
}

fn print_outcome(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
    writeln!(out, "workload          {}", o.workload)?;
    writeln!(out, "cpus, fair class  {}, {}", o.cpus, o.fair)?;
    if let Some(m) = &o.rsm {
        writeln!(
            out,
            "\nmeta-optimization (Box-Behnken design, 14 runs; R* in µs, I* counts the initial swarm as 1):"
        )?;
        let mut t = Table::new(&[
            ("run", Align::Right),
            ("w", Align::Right),
            ("φp", Align::Right),
            ("φg", Align::Right),
            ("R*", Align::Right),
            ("I*", Align::Right),
            ("rsum", Align::Right),
            ("evals to best", Align::Right),
        ]);
        for (i, r) in m.runs.iter().enumerate() {
            t.row(vec![
                (i + 1).to_string(),
                report::num(r.w),
                report::num(r.phi_p),
                report::num(r.phi_g),
                format!("{:.3}", r.r_star),
                r.i_star.to_string(),
                format!("{:.3}", r.rsum),
                r.evaluations_to_best.to_string(),
            ]);
        }
        t.write(out)?;
        let c = &m.fit.coefficients;
        writeln!(
            out,
            "model (coded): rsum = {:.3} {:+.3}·w {:+.3}·φp {:+.3}·φg {:+.3}·w·φp {:+.3}·w·φg {:+.3}·φp·φg {:+.3}·w² {:+.3}·φp² {:+.3}·φg²",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]
        )?;
        let ch = &m.choice;
        match ch.stationary_point {
            Some(s) => writeln!(
                out,
                "stationary point (coded) ({:.3}, {:.3}, {:.3}): a {}, eigenvalues {:.3}, {:.3}, {:.3}",
                s[0], s[1], s[2], ch.nature, ch.eigenvalues[0], ch.eigenvalues[1], ch.eigenvalues[2]
            )?,
            None => writeln!(out, "no stationary point (the quadratic part is singular)")?,
        }
        writeln!(
            out,
            "chosen ({}): w = {:.4}, φp = {:.3}, φg = {:.3}{}, predicted rsum {:.3}\n",
            match ch.how {
                rsm::Optimum::Stationary => "the stationary point",
                rsm::Optimum::RidgePath => "lowest point of the ridge path in the region",
            },
            ch.w,
            ch.phi_p,
            ch.phi_g,
            if ch.phi_p_significant {
                ""
            } else {
                " (φp had no significant effect: set to φg, as the paper did)"
            },
            ch.predicted_rsum
        )?;
    }
    if let Some(p) = &o.pso {
        writeln!(
            out,
            "method            pso: {} particles × {} iterations, w = {:.4}, φp = {:.3}, φg = {:.3}, seed {}",
            p.particles, p.iterations, p.w, p.phi_p, p.phi_g, p.seed
        )?;
    }
    if let Some(g) = &o.golden {
        writeln!(
            out,
            "method            golden section, discovery algorithm {} ({} tasks), SchedPeriod in [{}, {}], tolerance {}",
            g.algorithm,
            g.tasks,
            human::duration(g.interval_ns.0),
            human::duration(g.interval_ns.1),
            human::duration(g.tolerance_ns)
        )?;
        writeln!(
            out,
            "best SchedPeriod  {} ({} iterations)",
            human::duration(g.sched_period_ns),
            g.iterations
        )?;
    }
    writeln!(out)?;
    let names: Vec<&str> = o.default.tunables.keys().copied().collect();
    let mut columns: Vec<(&'static str, Align)> = vec![("", Align::Left)];
    for n in &o.default.tunables {
        columns.push((n.0, Align::Right));
    }
    columns.push(("makespan", Align::Right));
    let mut t = Table::new(&columns);
    for (label, p) in [("default", &o.default), ("best", &o.best)] {
        let mut row = vec![label.to_string()];
        row.extend(names.iter().map(|n| human::duration(p.tunables[n])));
        row.push(us(p.makespan_ns));
        t.row(row);
    }
    t.write(out)?;
    let change = o.improvement_pct;
    let (amount, word) = if change >= 0.0 { (change, "shorter") } else { (-change, "longer") };
    writeln!(out, "\nimprovement       {amount:.2}% {word} makespan than the defaults")?;
    writeln!(
        out,
        "evaluations       {} (simulations {} with the defaults', cache hits {}); evaluations_to_best {}",
        o.evaluations, o.simulations, o.cache_hits, o.evaluations_to_best
    )?;
    if o.rsm.is_some() {
        writeln!(out, "                  (evaluations: the chosen swarm; simulated/cache count the design's 14 swarms too)")?;
    }
    writeln!(out, "wall time         {:.2} s", o.wall_s)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::parse;

    fn parse_tune(args: &[&str]) -> TuneOpts {
        let mut all = vec!["tune"];
        all.extend_from_slice(args);
        match parse(&all).unwrap().command {
            crate::Command::Tune(t) => t,
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn defaults_are_the_papers() {
        let o = parse_tune(&[]);
        assert_eq!(
            (o.method, o.fair, o.cpus, o.particles, o.iterations),
            (Method::Pso, FairFlavor::Cfs, 2, 20, 30)
        );
        assert_eq!((o.w, o.phi_p, o.phi_g), (0.4365, 3.02, 3.02));
        assert_eq!(o.workload, PAPER_WORKLOAD);
        assert!(parse(&["tune", "--fair", "timeshare"]).is_err());
        assert!(parse(&["tune", "--algorithm", "3"]).is_err());
    }

    #[test]
    fn golden_needs_cfs_and_a_small_search_runs() {
        let o = parse_tune(&["--method", "golden", "--fair", "eevdf"]);
        assert!(run(&o).unwrap_err().to_string().contains("--fair cfs"));
        let chart = std::env::temp_dir().join(format!("schedlab-tune-{}.svg", std::process::id()));
        let o = parse_tune(&[
            "--workload",
            "hackbench:groups=1,fds=4,loops=2,ipc=pipe",
            "--particles",
            "4",
            "--iterations",
            "2",
            "--json",
            "--chart",
            chart.to_str().unwrap(),
        ]);
        run(&o).unwrap();
        assert!(std::fs::read_to_string(&chart).unwrap().contains("<svg"));
        std::fs::remove_file(&chart).unwrap();
    }
}
