//! `schedlab validate`'s pairing: the same workloads run here and simulated, side by
//! side per hackbench group count and per rt-app thread, with the lines fitted through
//! the pairs (paper 003's Figure 1 for LinSched and hackbench).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schedlab_sim::{FairFlavor, Report, SimConfig};
use serde::Serialize;

use schedlab_model::EventSink;

use crate::bench::{Invalid, OutputProblem};

use super::calibrate::{self, Calibration};
use super::fidelity::{self, relative_error, Verdict};
use super::fit::{linear_fit, median, LinearFit};
use super::hackbench::{self, HackbenchParams};
use super::rtapp;
use super::trace::{self, TraceStats};
use super::{Result, ValidateError};

/// What to validate, and how.
#[derive(Clone, Debug)]
pub struct ValidateConfig {
    /// Simulated CPUs.
    pub cpus: u32,
    /// Runs of each real workload (and of each calibration measurement).
    pub reps: u32,
    /// Measure the simulator's cost tunables here first.
    pub calibrate: bool,
    /// Tunables set after the calibration (name, value), already checked.
    pub sets: Vec<(String, String)>,
    /// hackbench's group counts, first to last.
    pub groups: (u32, u32),
    /// hackbench's senders and receivers per group (-f) and loops (-l).
    pub fds: u32,
    pub loops: u32,
    /// The rt-app files' directory (`None`: none run), and whether the user named it
    /// (then a missing directory or a failing rt-app is an error, not a note).
    pub rtapp: Option<(PathBuf, bool)>,
    /// Time limit of each real run.
    pub limit: Duration,
    /// This program, started as the calibration's fork probe
    /// ([`super::forker`]).
    pub exe: PathBuf,
    /// The spread (± %, the simulator's `jitter_pct`) of the simulated hackbench runs'
    /// system calls, unless `sets` sets `jitter_pct`: each group count is simulated with
    /// `reps` seeds, so that like the real runs the simulated ones sample hackbench's
    /// chaotic dynamics, and their median is compared.
    pub sim_jitter_pct: u64,
    /// Trace one hackbench run of this many groups in both worlds, the Perfetto files
    /// into this directory ([`super::trace`]); needs root (the observer).
    pub trace: Option<(PathBuf, u32)>,
}

/// One hackbench run traced here and in the simulator.
#[derive(Debug, Serialize)]
pub struct TraceSection {
    pub groups: u32,
    /// The Perfetto traces.
    pub real_file: String,
    pub sim_file: String,
    pub real: TraceStats,
    pub sim: TraceStats,
}

/// One tunable set from the calibration or `--set`.
#[derive(Debug, Serialize)]
pub struct TunableSet {
    pub name: String,
    pub value: String,
}

/// One hackbench group count: real (medians) beside simulated.
#[derive(Debug, Serialize)]
pub struct HackbenchRow {
    pub groups: u32,
    /// hackbench's `Time:`, median of the runs.
    pub real_ns: u64,
    /// Every run's `Time:`.
    pub real_runs_ns: Vec<u64>,
    /// The whole hackbench process (fork and setup included), median.
    pub real_wall_ns: u64,
    /// CPU time of hackbench and its workers, median.
    pub real_cpu_ns: u64,
    pub real_nvcsw: u64,
    pub real_nivcsw: u64,
    /// The simulated `Time:`, median over the seeds.
    pub sim_ns: u64,
    /// Every seed's.
    pub sim_runs_ns: Vec<u64>,
    /// Simulated CPU time of the tasks.
    pub sim_cpu_ns: u64,
    pub sim_nvcsw: u64,
    pub sim_nivcsw: u64,
    /// Relative errors of the simulated makespan, CPU time and voluntary switches
    /// ([`fidelity::relative_error`]).
    pub makespan_error: Option<f64>,
    pub cpu_error: Option<f64>,
    pub voluntary_switch_error: Option<f64>,
}

/// The hackbench half: one row per group count, and the fitted lines.
#[derive(Debug, Serialize)]
pub struct HackbenchSection {
    pub command: String,
    pub sim_spec: String,
    pub rows: Vec<HackbenchRow>,
    /// The share of the machine's CPU time that other processes used during the real
    /// runs (from /proc/stat, 10 ms resolution): the real times are that much slower.
    pub other_load: Option<f64>,
    /// real_ns = slope * sim_ns + intercept.
    pub fit: Option<LinearFit>,
    /// The same over context switches (nvcsw + nivcsw).
    pub context_switch_fit: Option<LinearFit>,
}

/// One rt-app thread: real (medians) beside simulated.
#[derive(Debug, Serialize)]
pub struct RtAppTaskRow {
    pub name: String,
    pub real_runtime_ns: Option<u64>,
    pub sim_runtime_ns: Option<u64>,
    /// Share of all the file's threads' CPU time.
    pub real_share: Option<f64>,
    pub sim_share: Option<f64>,
    pub real_csw: Option<u64>,
    pub sim_csw: Option<u64>,
    /// Relative error of the simulated runtime.
    pub runtime_error: Option<f64>,
    /// Simulated minus real share, in percentage points.
    pub share_error_points: Option<f64>,
}

/// One rt-app file.
#[derive(Debug, Serialize)]
pub struct RtAppRow {
    pub file: String,
    pub real_makespan_ns: Option<u64>,
    pub sim_makespan_ns: Option<u64>,
    /// Context switches of the worker threads (nvcsw + nivcsw), median.
    pub real_csw: Option<u64>,
    pub sim_csw: Option<u64>,
    /// Relative errors of the simulated makespan and context switches.
    pub makespan_error: Option<f64>,
    pub switch_error: Option<f64>,
    /// How much slower than calibrated rt-app's busy loop ran in the real runs (median;
    /// [`rtapp::RtAppRun::slowdown`]): the simulated `run` events are that much longer,
    /// so that both do the same work.
    pub slowdown: Option<f64>,
    pub tasks: Vec<RtAppTaskRow>,
    /// Why the file could not be run or simulated.
    pub error: Option<String>,
}

/// The rt-app half: one row per file.
#[derive(Debug, Serialize)]
pub struct RtAppSection {
    pub dir: String,
    /// rt-app's busy loop here, ns per loop.
    pub ns_per_loop: Option<f64>,
    /// As in the hackbench section, during the rt-app runs.
    pub other_load: Option<f64>,
    pub files: Vec<RtAppRow>,
    /// Why no file ran.
    pub skipped: Option<String>,
}

/// Everything `validate` found.
#[derive(Debug, Serialize)]
pub struct ValidateReport {
    pub cpus: u32,
    pub fair: &'static str,
    pub reps: u32,
    pub calibration: Option<Calibration>,
    pub tunables: Vec<TunableSet>,
    pub hackbench: HackbenchSection,
    pub rtapp: Option<RtAppSection>,
    /// The traced run, when asked for.
    pub trace: Option<TraceSection>,
    /// The simulator against each fidelity target.
    pub verdicts: Vec<Verdict>,
}

/// The median of whole numbers.
fn med(v: &[u64]) -> u64 {
    median(&v.iter().map(|&x| x as f64).collect::<Vec<_>>()).unwrap_or(0.0).round() as u64
}

/// Runs the real workloads here and the same in the simulator (EEVDF, `cfg.cpus` CPUs,
/// the costs calibrated here unless told otherwise), and pairs them; `progress` hears
/// what is being done.
pub fn validate(cfg: &ValidateConfig, progress: &mut dyn FnMut(&str)) -> Result<ValidateReport> {
    let cpus = cfg.cpus;
    let mut config = SimConfig::new(cpus, FairFlavor::Eevdf);
    let mut set = Vec::new();
    let calibration = if !cfg.calibrate {
        None
    } else {
        progress("measuring the system call, copy and context switch costs...");
        let c = calibrate::measure(cfg.reps, &cfg.exe).map_err(|e| e.during("the calibration"))?;
        for (name, value) in c.tunables() {
            config.tunables.set(name, &value.to_string())?;
            set.push(TunableSet { name: name.to_string(), value: value.to_string() });
        }
        Some(c)
    };
    for (name, value) in &cfg.sets {
        config.tunables.set(name, value)?;
        set.push(TunableSet { name: name.clone(), value: value.clone() });
    }
    let mut hb_config = config.clone();
    if !cfg.sets.iter().any(|(name, _)| name == "jitter_pct") {
        hb_config.tunables.set("jitter_pct", &cfg.sim_jitter_pct.to_string())?;
        set.push(TunableSet {
            name: "jitter_pct".into(),
            value: format!("{} (hackbench)", cfg.sim_jitter_pct),
        });
    }
    let hackbench = hackbench_section(cfg, &hb_config, progress)?;
    let rtapp = rtapp_section(cfg, &config, progress)?;
    let trace = match &cfg.trace {
        Some((dir, groups)) => Some(trace_section(cfg, &hb_config, dir, *groups, progress)?),
        None => None,
    };
    let mut verdicts = fidelity::hackbench_verdicts(&hackbench);
    verdicts.extend(rtapp.iter().filter(|r| r.skipped.is_none()).flat_map(fidelity::rtapp_verdicts));
    Ok(ValidateReport {
        cpus,
        fair: FairFlavor::Eevdf.name(),
        reps: cfg.reps,
        calibration,
        tunables: set,
        hackbench,
        rtapp,
        trace,
        verdicts,
    })
}

/// Traces hackbench with `groups` groups once here and once simulated, into `dir`.
fn trace_section(
    cfg: &ValidateConfig,
    config: &SimConfig,
    dir: &Path,
    groups: u32,
    progress: &mut dyn FnMut(&str),
) -> Result<TraceSection> {
    let p = HackbenchParams {
        groups,
        fds: cfg.fds,
        loops: cfg.loops,
        size: 100,
        autogroup: hackbench::autogroups_enabled(),
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| ValidateError::io(format!("cannot create {}", dir.display()), e))?;
    let (real_file, sim_file) = (
        dir.join(format!("hackbench-g{groups}-real.json")),
        dir.join(format!("hackbench-g{groups}-sim.json")),
    );
    progress(&format!("tracing {} here...", p.command().join(" ")));
    let real = trace::real(&p, cfg.cpus, &real_file, cfg.limit).map_err(|e| e.during("tracing hackbench"))?;
    progress("tracing it in the simulator...");
    let sim = trace::simulated(&p, config, &sim_file)?;
    Ok(TraceSection {
        groups,
        real_file: real_file.display().to_string(),
        sim_file: sim_file.display().to_string(),
        real,
        sim,
    })
}

/// Simulates the rt-app file `file` with its `run` events `slowdown` times as long.
fn simulate_rtapp(file: &Path, slowdown: f64, config: &SimConfig) -> Result<Report> {
    let name = file.display().to_string();
    let text =
        std::fs::read_to_string(file).map_err(|e| ValidateError::io(format!("cannot read {name}"), e))?;
    let w = schedlab_sim::workloads::rtapp::parse(&rtapp::scaled(&text, slowdown), &name)?;
    schedlab_sim::simulate(&w, config, None)
        .map_err(|source| ValidateError::Simulate { workload: name, source })
}

/// One simulated hackbench run, measured as [`hackbench::HackbenchRun`] measures a real
/// one.
struct SimulatedRun {
    time_ns: u64,
    cpu_ns: u64,
    nvcsw: u64,
    nivcsw: u64,
}

/// Simulates hackbench `p` with `seed`: its `Time:` ([`hackbench::SimulatedTime`]), CPU
/// time and context switches.
fn simulate_hackbench(p: &HackbenchParams, config: &SimConfig, seed: u64) -> Result<SimulatedRun> {
    let spec = p.sim_spec();
    let mut time = hackbench::SimulatedTime::default();
    let r = simulate(&spec, &SimConfig { seed, ..config.clone() }, Some(&mut time))?;
    let time_ns = time.ns().ok_or_else(|| {
        let problem = OutputProblem::Lacks {
            thing: "start byte and last wait4 of hackbench's parent",
            output: format!("a run of {} ns", r.makespan_ns),
        };
        ValidateError::output(format!("simulating '{spec}'"), problem)
    })?;
    Ok(SimulatedRun {
        time_ns,
        cpu_ns: r.tasks.iter().map(|t| t.runtime_ns).sum(),
        nvcsw: r.tasks.iter().map(|t| t.nvcsw).sum(),
        nivcsw: r.tasks.iter().map(|t| t.nivcsw).sum(),
    })
}

fn simulate(spec: &str, config: &SimConfig, sink: Option<&mut dyn EventSink>) -> Result<Report> {
    let w = schedlab_sim::workloads::load(spec)?;
    // A shorter-lived trait object for the workload's lifetime (no coercion through Option).
    let sink = sink.map(|s| -> &mut dyn EventSink { s });
    schedlab_sim::simulate(&w, config, sink)
        .map_err(|source| ValidateError::Simulate { workload: spec.to_string(), source })
}

fn hackbench_section(
    cfg: &ValidateConfig,
    config: &SimConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<HackbenchSection> {
    let autogroup = hackbench::autogroups_enabled();
    let params = |groups| HackbenchParams { groups, fds: cfg.fds, loops: cfg.loops, size: 100, autogroup };
    let groups: Vec<u32> = (cfg.groups.0..=cfg.groups.1).collect();
    let mut runs: BTreeMap<u32, Vec<hackbench::HackbenchRun>> = BTreeMap::new();
    let before = hackbench::cpu_time_ns();
    // Interleaved, so that a drift of the machine's load spreads over every G.
    for rep in 1..=cfg.reps {
        let (first, last) = cfg.groups;
        progress(&format!("hackbench run {rep} of {} for groups {first}-{last}...", cfg.reps));
        for &g in &groups {
            let p = params(g);
            let run = hackbench::run(&p, cfg.limit).map_err(|e| e.during(&p.command().join(" ")))?;
            runs.entry(g).or_default().push(run);
        }
    }
    let ours: u64 = runs.values().flatten().map(|r| r.cpu_ns).sum();
    let other_load =
        before.zip(hackbench::cpu_time_ns()).and_then(|(b, a)| hackbench::other_load(b, a, ours));
    progress(&format!("simulating hackbench, {} seeds each...", cfg.reps));
    let mut rows = Vec::new();
    for &g in &groups {
        let sim: Vec<SimulatedRun> = (1..=u64::from(cfg.reps))
            .map(|seed| simulate_hackbench(&params(g), config, seed))
            .collect::<Result<_>>()?;
        let real = &runs[&g];
        let pick = |f: fn(&hackbench::HackbenchRun) -> u64| med(&real.iter().map(f).collect::<Vec<_>>());
        let (real_ns, real_cpu_ns, real_nvcsw) = (pick(|r| r.time_ns), pick(|r| r.cpu_ns), pick(|r| r.nvcsw));
        let pick_sim = |f: fn(&SimulatedRun) -> u64| med(&sim.iter().map(f).collect::<Vec<_>>());
        let (sim_ns, sim_cpu_ns, sim_nvcsw) =
            (pick_sim(|r| r.time_ns), pick_sim(|r| r.cpu_ns), pick_sim(|r| r.nvcsw));
        rows.push(HackbenchRow {
            groups: g,
            real_ns,
            real_runs_ns: real.iter().map(|r| r.time_ns).collect(),
            real_wall_ns: pick(|r| r.wall_ns),
            real_cpu_ns,
            real_nvcsw,
            real_nivcsw: pick(|r| r.nivcsw),
            sim_ns,
            sim_runs_ns: sim.iter().map(|r| r.time_ns).collect(),
            sim_cpu_ns,
            sim_nvcsw,
            sim_nivcsw: pick_sim(|r| r.nivcsw),
            makespan_error: relative_error(sim_ns, real_ns),
            cpu_error: relative_error(sim_cpu_ns, real_cpu_ns),
            voluntary_switch_error: relative_error(sim_nvcsw, real_nvcsw),
        });
    }
    let fit = linear_fit(&rows.iter().map(|r| (r.sim_ns as f64, r.real_ns as f64)).collect::<Vec<_>>());
    let csw: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| ((r.sim_nvcsw + r.sim_nivcsw) as f64, (r.real_nvcsw + r.real_nivcsw) as f64))
        .collect();
    let p = params(0);
    Ok(HackbenchSection {
        command: p.command().join(" ").replace("-g 0", "-g G"),
        sim_spec: p.sim_spec().replace("groups=0", "groups=G"),
        rows,
        other_load,
        fit,
        context_switch_fit: linear_fit(&csw),
    })
}

fn rtapp_section(
    cfg: &ValidateConfig,
    config: &SimConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<RtAppSection>> {
    let Some((dir, explicit)) = cfg.rtapp.clone() else { return Ok(None) };
    let limit = cfg.limit;
    let section = |files, ns_per_loop, other_load, skipped: Option<String>| {
        Ok(Some(RtAppSection { dir: dir.display().to_string(), ns_per_loop, other_load, files, skipped }))
    };
    if !dir.is_dir() {
        if explicit {
            return Err(Invalid::RtAppDir { dir: dir.clone() }.into());
        }
        return section(vec![], None, None, Some(format!("{} does not exist", dir.display())));
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| ValidateError::io(format!("cannot list {}", dir.display()), e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return section(vec![], None, None, Some(format!("no .json file in {}", dir.display())));
    }
    progress("calibrating rt-app's busy loop...");
    let ns_per_loop = match rtapp::calibrate_loop(cfg.reps.min(3), limit) {
        Ok(n) => n,
        Err(e) if !explicit => return section(vec![], None, None, Some(format!("rt-app cannot run: {e}"))),
        Err(e) => return Err(e.during("calibrating rt-app's busy loop")),
    };
    let before = hackbench::cpu_time_ns();
    let mut ours = 0;
    let rows = files
        .iter()
        .map(|f| {
            progress(&format!("rt-app {}...", f.display()));
            rtapp_file(f, ns_per_loop, cfg.reps, config, limit, &mut ours)
        })
        .collect();
    let other_load =
        before.zip(hackbench::cpu_time_ns()).and_then(|(b, a)| hackbench::other_load(b, a, ours));
    section(rows, Some(ns_per_loop), other_load, None)
}

/// Runs and simulates one rt-app file; adds the real runs' CPU time to `cpu_ns`.
fn rtapp_file(
    file: &Path,
    ns_per_loop: f64,
    reps: u32,
    config: &SimConfig,
    limit: Duration,
    cpu_ns: &mut u64,
) -> RtAppRow {
    let name = file.display().to_string();
    let mut row = RtAppRow {
        file: name.clone(),
        real_makespan_ns: None,
        sim_makespan_ns: None,
        real_csw: None,
        sim_csw: None,
        makespan_error: None,
        switch_error: None,
        slowdown: None,
        tasks: vec![],
        error: None,
    };
    let mut real = Vec::new();
    let mut error = None;
    for _ in 0..reps {
        match rtapp::run(file, ns_per_loop, limit) {
            Ok(r) => {
                *cpu_ns += r.cpu_ns;
                real.push(r)
            }
            Err(e) => {
                error = Some(format!("rt-app: {e}"));
                break;
            }
        }
    }
    // The simulated file does the work the real runs did: its `run`s at their speed.
    let slowdowns: Vec<f64> = real.iter().filter_map(|r| r.slowdown(ns_per_loop)).collect();
    row.slowdown = median(&slowdowns);
    let sim = simulate_rtapp(file, row.slowdown.unwrap_or(1.0), config);
    // The simulator's name of each (key, instance): its tasks are `<key>-<n>`, `n`
    // counting all threads of the file in order; the kernel keeps 15 bytes of a name.
    let mut sim_names: BTreeMap<(String, usize), String> = BTreeMap::new();
    if let Ok(s) = &sim {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for t in &s.tasks {
            let key = t.name.rsplit_once('-').map_or(t.name.as_str(), |(k, _)| k);
            let key: String = key.bytes().take(15).map(char::from).collect();
            let n = seen.entry(key.clone()).or_default();
            sim_names.insert((key, *n), t.name.clone());
            *n += 1;
        }
    }
    // Per thread name: the medians over the runs.
    let mut by_name: BTreeMap<String, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
    for r in &real {
        for t in &r.tasks {
            let name = sim_names
                .get(&(t.key.clone(), t.instance))
                .cloned()
                .unwrap_or_else(|| format!("{}[{}]", t.key, t.instance));
            let e = by_name.entry(name).or_default();
            e.0.push(t.runtime_ns);
            e.1.push(t.nvcsw + t.nivcsw);
        }
    }
    if !real.is_empty() {
        row.real_makespan_ns = Some(med(&real.iter().map(|r| r.makespan_ns).collect::<Vec<_>>()));
        let csw: Vec<u64> = real.iter().map(|r| r.tasks.iter().map(|t| t.nvcsw + t.nivcsw).sum()).collect();
        row.real_csw = Some(med(&csw));
    }
    let real_med: BTreeMap<&str, (u64, u64)> =
        by_name.iter().map(|(n, (rt, cs))| (n.as_str(), (med(rt), med(cs)))).collect();
    let real_total: u64 = real_med.values().map(|v| v.0).sum();
    let mut names: Vec<String> = Vec::new();
    let sim = match sim {
        Ok(s) => Some(s),
        Err(e) => {
            let e = crate::bench::error_chain(&e);
            error = Some(format!("{}{e}", error.map(|e| e + "; ").unwrap_or_default()));
            None
        }
    };
    if let Some(s) = &sim {
        row.sim_makespan_ns = Some(s.makespan_ns);
        row.sim_csw = Some(s.tasks.iter().map(|t| t.nvcsw + t.nivcsw).sum());
        names.extend(s.tasks.iter().map(|t| t.name.clone()));
    }
    for n in real_med.keys() {
        if !names.iter().any(|m| m == n) {
            names.push(n.to_string());
        }
    }
    let sim_total: u64 = sim.as_ref().map_or(0, |s| s.tasks.iter().map(|t| t.runtime_ns).sum());
    let share = |part: u64, total: u64| (total > 0).then(|| part as f64 / total as f64);
    for n in names {
        let st = sim.as_ref().and_then(|s| s.tasks.iter().find(|t| t.name == n));
        let rt = real_med.get(n.as_str());
        let (real_share, sim_share) =
            (rt.and_then(|v| share(v.0, real_total)), st.and_then(|t| share(t.runtime_ns, sim_total)));
        row.tasks.push(RtAppTaskRow {
            real_runtime_ns: rt.map(|v| v.0),
            sim_runtime_ns: st.map(|t| t.runtime_ns),
            real_share,
            sim_share,
            real_csw: rt.map(|v| v.1),
            sim_csw: st.map(|t| t.nvcsw + t.nivcsw),
            runtime_error: rt.zip(st).and_then(|(r, s)| relative_error(s.runtime_ns, r.0)),
            share_error_points: sim_share.zip(real_share).map(|(s, r)| (s - r) * 100.0),
            name: n,
        });
    }
    let both = |s: Option<u64>, r: Option<u64>| s.zip(r).and_then(|(s, r)| relative_error(s, r));
    row.makespan_error = both(row.sim_makespan_ns, row.real_makespan_ns);
    row.switch_error = both(row.sim_csw, row.real_csw);
    row.error = error;
    row
}
