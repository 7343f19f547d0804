//! Paper 002's benchmark of SCHED_OTHER, SCHED_FIFO and SCHED_RR: `N` processes (10,
//! 50, 100 in the paper) each running a CPU-bound (`pi`), an I/O-bound (`rw`) or a
//! `mixed` program under one policy; per cell the real time, the children's user and
//! system time, %CPU and voluntary and involuntary context switches, over repetitions.
//!
//! A repetition of a cell: `N` workers ([`Role::Pi`], [`Role::Rw`], [`Role::Mixed`]) are
//! started with `--wait-go`, pinned to the cell's CPU set; once every one has said
//! `ready`, each gets the policy (`sched_setscheduler`, priority [`PAPER_RT_PRIORITY`]
//! for FIFO and RR as the paper's `sched_get_priority_max`), and the runner closes the
//! pipe that is their standard input: they start together, as the paper's children,
//! forked one after another by a parent that had set the policy, start within a
//! fraction of a millisecond. The real time runs from that moment to the last exit
//! (`spawn_s` keeps the time from the first spawn to it: fork, exec and set-up of the
//! re-executed binary, which the paper's forked children do not pay); user and system
//! time and the context switches are the sums of the children's `wait4` usage less each
//! child's own usage at the start (which it reports in its `done` line), so that exec,
//! set-up and the wait for the start are left out.
//!
//! Safety of the real-time cells (bounded work on a bounded CPU set; the machine never
//! freezes):
//! - the workers run on a CPU set that leaves at least one CPU to the system and the
//!   runner (default: the last allowed CPU); the runner's thread is pinned to the
//!   others. Only with [`PoliciesConfig::all_cpus`] may the workers take every CPU; the
//!   runner then runs at SCHED_FIFO 99 (reset on fork) and the workers at 98 at most;
//! - the kernel's RT throttling must be on (`sched_rt_runtime_us` not -1) unless
//!   [`PoliciesConfig::allow_unthrottled`];
//! - every repetition has a wall-time limit: past it, the workers are killed (each
//!   worker leads its own process group and gets SIGKILL if the runner's thread dies) and
//!   the cell is reported as timed out.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use schedlab_model::{Pid, Policy};
use schedlab_sim::{FairFlavor, SimConfig};
use serde::Serialize;

use super::ipc;
use super::named::named;
use super::workers::{self, Role, WorkerSpec};
use super::{BenchError, ChildProblem, Context, Invalid, Result};
use crate::child::{ChildGroup, Exit};
use schedlab_live::settings::{
    get_affinity, sched_getattr, sched_setattr, set_affinity, set_policy, CpuSet, PolicyValue, SchedAttr,
};

/// The priority of the paper's FIFO and RR runs: `sched_get_priority_max`.
pub const PAPER_RT_PRIORITY: i32 = 99;
/// The runner's priority when it shares the workers' CPUs (above theirs).
pub const RUNNER_RT_PRIORITY: i32 = 99;
/// The CPU time of one pi process in the paper (0.71 s of user time for 10 processes):
/// what the default iteration count is calibrated to.
pub const PAPER_PI_CPU_NS: u64 = 70_000_000;
/// How long the workers of a cell may take to say they are ready.
const READY_LIMIT: Duration = Duration::from_secs(30);

/// The paper's programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Program {
    /// pi-sched.c: CPU-bound.
    Pi,
    /// rw.c: I/O-bound.
    Rw,
    /// mixed.c: pi, then rw.
    Mixed,
}

impl Program {
    /// Every program, in the paper's order.
    pub const ALL: [Program; 3] = [Program::Pi, Program::Rw, Program::Mixed];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Program::Pi => "pi",
            Program::Rw => "rw",
            Program::Mixed => "mixed",
        }
    }

    /// The worker that runs it.
    pub fn role(self) -> Role {
        match self {
            Program::Pi => Role::Pi,
            Program::Rw => Role::Rw,
            Program::Mixed => Role::Mixed,
        }
    }
}

named!(Program, "program", Program::ALL, Program::name);

/// A policy's short name: `other`, `fifo`, `rr`.
pub fn policy_name(p: Policy) -> String {
    p.name()["SCHED_".len()..].to_ascii_lowercase()
}

/// The benchmark's settings.
#[derive(Clone, Debug)]
pub struct PoliciesConfig {
    /// The programs, policies and process counts, in order.
    pub programs: Vec<Program>,
    pub policies: Vec<Policy>,
    pub sizes: Vec<u32>,
    /// Repetitions per cell.
    pub reps: u32,
    /// The workers' CPUs; `None`: the last allowed CPU.
    pub cpus: Option<Vec<usize>>,
    /// Let the workers take every allowed CPU (the runner then runs at SCHED_FIFO 99).
    pub all_cpus: bool,
    /// Run real-time cells even when the kernel's RT throttling is off.
    pub allow_unthrottled: bool,
    /// pi's iterations (`None`: as many as take [`PAPER_PI_CPU_NS`] of CPU here, from
    /// [`pi_ns_per_iteration`]); rw's bytes and block.
    pub iterations: Option<u64>,
    pub bytes: u64,
    pub block: u32,
    /// FIFO and RR workers' priority.
    pub rt_priority: i32,
    /// The wall-time limit of one repetition of a cell.
    pub cell_limit: Duration,
    /// The `schedlab` binary to re-execute for workers.
    pub exe: PathBuf,
}

impl Default for PoliciesConfig {
    fn default() -> Self {
        PoliciesConfig {
            programs: Program::ALL.to_vec(),
            policies: vec![Policy::Other, Policy::Fifo, Policy::Rr],
            sizes: vec![10, 50, 100],
            reps: 7,
            cpus: None,
            all_cpus: false,
            allow_unthrottled: false,
            iterations: None,
            bytes: workers::RW_BYTES,
            block: workers::RW_BLOCK,
            rt_priority: PAPER_RT_PRIORITY,
            cell_limit: Duration::from_secs(120),
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("schedlab")),
        }
    }
}

/// The paper's measures, of one repetition ([`Sample`]) or over them ([`Spread`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Metrics<T> {
    /// Wall-clock time from the start to the last exit, in s.
    pub real_s: T,
    /// The children's user and system time, summed, in s.
    pub user_s: T,
    pub sys_s: T,
    /// (user + sys) / real, in percent (100: one CPU's worth).
    pub cpu_pct: T,
    /// The children's voluntary and involuntary context switches, summed.
    pub nvcsw: T,
    pub nivcsw: T,
}

/// One repetition.
pub type Sample = Metrics<f64>;

impl Metrics<f64> {
    /// The values in the paper's row order: real, user, sys, %CPU, nivcsw, nvcsw.
    pub fn paper_rows(&self) -> [f64; 6] {
        [self.real_s, self.user_s, self.sys_s, self.cpu_pct, self.nivcsw, self.nvcsw]
    }
}

/// The mean of repetitions, their standard deviation and range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    pub mean: f64,
    /// Sample standard deviation (0 for one repetition).
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// The spread of `v` (not empty).
    pub fn of(v: &[f64]) -> Spread {
        let n = v.len().max(1) as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Spread { mean, sd: var.sqrt(), min, max }
    }
}

impl Metrics<Spread> {
    /// The spread of each measure over `samples` (not empty).
    pub fn of(samples: &[Sample]) -> Metrics<Spread> {
        let s = |f: fn(&Sample) -> f64| Spread::of(&samples.iter().map(f).collect::<Vec<_>>());
        Metrics {
            real_s: s(|m| m.real_s),
            user_s: s(|m| m.user_s),
            sys_s: s(|m| m.sys_s),
            cpu_pct: s(|m| m.cpu_pct),
            nvcsw: s(|m| m.nvcsw),
            nivcsw: s(|m| m.nivcsw),
        }
    }

    /// The means.
    pub fn means(&self) -> Sample {
        Metrics {
            real_s: self.real_s.mean,
            user_s: self.user_s.mean,
            sys_s: self.sys_s.mean,
            cpu_pct: self.cpu_pct.mean,
            nvcsw: self.nvcsw.mean,
            nivcsw: self.nivcsw.mean,
        }
    }
}

/// One program under one policy with one number of processes.
#[derive(Clone, Debug, Serialize)]
pub struct CellResult {
    pub program: Program,
    /// `other`, `fifo`, `rr`.
    pub policy: String,
    /// Processes.
    pub size: u32,
    /// The real-time priority (FIFO and RR).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// Each repetition that finished.
    pub reps: Vec<Sample>,
    /// Per repetition, the time from the first spawn to the start, in s.
    pub spawn_s: Vec<f64>,
    /// A repetition ran out of its time limit (its workers were killed; the cell's
    /// other repetitions were skipped).
    pub timed_out: bool,
    /// Over `reps` (`None`: none finished).
    pub stats: Option<Metrics<Spread>>,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct PoliciesReport {
    /// The workers' CPUs, and the runner's (empty: it shared the workers').
    pub cpus: Vec<usize>,
    pub runner_cpus: Vec<usize>,
    /// The runner's real-time priority, when it shared the workers' CPUs.
    pub runner_rt_priority: Option<i32>,
    /// The kernel's RT throttling: `sched_rt_runtime_us` of `sched_rt_period_us`.
    pub rt_runtime_us: Option<i64>,
    pub rt_period_us: Option<i64>,
    /// pi's iterations per process, and the CPU time of one measured in the runner, in
    /// ns.
    pub iterations: u64,
    pub pi_ns_per_iteration: f64,
    pub bytes: u64,
    pub block: u32,
    pub reps: u32,
    pub cell_limit_s: f64,
    pub cells: Vec<CellResult>,
    /// Wall time of the run, in seconds.
    pub wall_s: f64,
}

/// Where the run is, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    /// The cell (from 0) and how many there are.
    pub cell: usize,
    pub cells: usize,
    pub program: Program,
    pub policy: Policy,
    pub size: u32,
    /// Repetitions done in the cell, and how many it has.
    pub done: u32,
    pub reps: u32,
}

/// The workers' CPUs and the runner's, from the allowed CPUs and the user's choice:
/// by default the last allowed CPU for the workers, the rest for the runner. With
/// real-time cells, the workers must leave a CPU free unless `all_cpus`.
pub fn plan_cpus(
    allowed: &[usize],
    requested: Option<&[usize]>,
    rt: bool,
    all_cpus: bool,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let mut cpus = match requested {
        Some(r) => r.to_vec(),
        None => allowed.last().map(|&c| vec![c]).unwrap_or_default(),
    };
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(Invalid::NoCpu.into());
    }
    if let Some(&cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(Invalid::CpuNotAllowed { cpu, allowed: allowed.to_vec() }.into());
    }
    let runner: Vec<usize> = allowed.iter().copied().filter(|c| !cpus.contains(c)).collect();
    if runner.is_empty() && rt && !all_cpus {
        return Err(Invalid::EveryCpu { cpus }.into());
    }
    Ok((cpus, runner))
}

/// A `/proc/sys/kernel` number.
fn kernel_number(name: &str) -> Option<i64> {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}")).ok()?.trim().parse().ok()
}

/// Runs the benchmark; `progress` hears of every repetition.
pub fn run_policies(cfg: &PoliciesConfig, progress: &mut dyn FnMut(&Progress)) -> Result<PoliciesReport> {
    if cfg.programs.is_empty() || cfg.policies.is_empty() || cfg.sizes.is_empty() || cfg.reps == 0 {
        return Err(Invalid::NothingToMeasure { lacking: "no programs, policies, sizes or reps" }.into());
    }
    if cfg.sizes.contains(&0) || cfg.iterations == Some(0) || cfg.block == 0 || cfg.bytes == 0 {
        return Err(Invalid::Zero { what: "sizes, iterations, bytes and block" }.into());
    }
    if !cfg.bytes.is_multiple_of(u64::from(cfg.block)) {
        return Err(Invalid::BlockNotDividing { block: cfg.block, bytes: cfg.bytes }.into());
    }
    if !(1..=99).contains(&cfg.rt_priority) {
        return Err(Invalid::RtPriority(cfg.rt_priority).into());
    }
    let start = Instant::now();
    let rt = cfg.policies.iter().any(|p| p.is_rt());
    let (rt_runtime_us, rt_period_us) =
        (kernel_number("sched_rt_runtime_us"), kernel_number("sched_rt_period_us"));
    if rt && rt_runtime_us == Some(-1) && !cfg.allow_unthrottled {
        return Err(Invalid::RtUnthrottled.into());
    }
    let allowed = workers::allowed_cpus().ctx(|| "cannot read this process's CPU affinity".into())?;
    let (cpus, runner_cpus) = plan_cpus(&allowed, cfg.cpus.as_deref(), rt, cfg.all_cpus)?;
    let placement = RunnerPlacement::apply(&runner_cpus, rt)?;
    let rt_priority = match placement.rt_priority {
        Some(p) => cfg.rt_priority.min(p - 1),
        None => cfg.rt_priority,
    };
    // Measured where the workers will run (the VM's CPUs need not be alike, and the
    // runner's may be busy with the system's work).
    let pin = |cpus: &[usize]| set_affinity(Pid(0), &CpuSet::new(cpus.iter().copied()));
    pin(&cpus).ctx(|| format!("cannot move the runner to {cpus:?} to time pi"))?;
    let pi_ns_per_iteration = pi_ns_per_iteration();
    let back = if runner_cpus.is_empty() { &allowed } else { &runner_cpus };
    pin(back).ctx(|| format!("cannot move the runner back to {back:?}"))?;
    let iterations = cfg
        .iterations
        .unwrap_or_else(|| (PAPER_PI_CPU_NS as f64 / pi_ns_per_iteration).round().max(1.0) as u64);
    let dir = super::scratch_dir("policies")?;
    let input = dir.path().join("input");
    write_input(&input, cfg.bytes)?;
    let cells = cfg.programs.len() * cfg.policies.len() * cfg.sizes.len();
    let mut results = Vec::new();
    for &program in &cfg.programs {
        for &policy in &cfg.policies {
            for &size in &cfg.sizes {
                let mut at =
                    Progress { cell: results.len(), cells, program, policy, size, done: 0, reps: cfg.reps };
                progress(&at);
                let priority = policy.is_rt().then_some(rt_priority);
                let mut cell = CellResult {
                    program,
                    policy: policy_name(policy),
                    size,
                    priority,
                    reps: Vec::new(),
                    spawn_s: Vec::new(),
                    timed_out: false,
                    stats: None,
                };
                for rep in 0..cfg.reps {
                    let run = Rep {
                        cfg,
                        program,
                        policy,
                        priority: priority.unwrap_or(0),
                        size,
                        iterations,
                        cpus: &cpus,
                    };
                    let what = format!("{} {} ×{size}, repetition {}", program.name(), cell.policy, rep + 1);
                    let outcome = run.run(&input, dir.path(), &what);
                    clear_outputs(dir.path());
                    match outcome? {
                        Some((sample, spawn_s)) => {
                            cell.reps.push(sample);
                            cell.spawn_s.push(spawn_s);
                        }
                        None => {
                            cell.timed_out = true;
                            break;
                        }
                    }
                    at.done = rep + 1;
                    progress(&at);
                }
                cell.stats = (!cell.reps.is_empty()).then(|| Metrics::of(&cell.reps));
                results.push(cell);
            }
        }
    }
    let runner_rt_priority = placement.rt_priority;
    drop(placement);
    Ok(PoliciesReport {
        cpus,
        runner_cpus,
        runner_rt_priority,
        rt_runtime_us,
        rt_period_us,
        iterations,
        pi_ns_per_iteration,
        bytes: cfg.bytes,
        block: cfg.block,
        reps: cfg.reps,
        cell_limit_s: cfg.cell_limit.as_secs_f64(),
        cells: results,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// The CPU time of one pi iteration on this thread (on its CPU), in ns: the fastest of three runs of
/// 1,000,000 iterations (pi-sched.c's count).
pub fn pi_ns_per_iteration() -> f64 {
    const N: u64 = workers::PI_ITERATIONS;
    (0..3)
        .map(|_| {
            let start = workers::thread_cpu_ns();
            workers::monte_carlo_pi(N);
            (workers::thread_cpu_ns() - start) as f64 / N as f64
        })
        .fold(f64::INFINITY, f64::min)
        .max(0.1)
}

/// The shared input: `bytes` pseudo-random bytes, on disk.
fn write_input(path: &Path, bytes: u64) -> Result<()> {
    let data: Vec<u8> = workers::random_ints(bytes.div_ceil(4) as usize, 2)
        .into_iter()
        .flat_map(i32::to_le_bytes)
        .take(bytes as usize)
        .collect();
    let write = || -> std::io::Result<()> {
        std::fs::write(path, &data)?;
        std::fs::File::open(path)?.sync_all()
    };
    write().ctx(|| format!("cannot write {}", path.display()))
}

/// Removes the rw outputs of a repetition.
fn clear_outputs(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with("out-") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The runner thread's placement for the run: pinned to the CPUs the workers leave
/// free, or, when they leave none and real-time cells run, at SCHED_FIFO 99 with
/// SCHED_RESET_ON_FORK (so workers start as SCHED_OTHER). Restored when dropped.
struct RunnerPlacement {
    affinity: Option<CpuSet>,
    attr: Option<SchedAttr>,
    rt_priority: Option<i32>,
}

impl RunnerPlacement {
    fn apply(runner_cpus: &[usize], rt: bool) -> Result<RunnerPlacement> {
        let mut placement = RunnerPlacement { affinity: None, attr: None, rt_priority: None };
        let me = Pid(0);
        if !runner_cpus.is_empty() {
            let old = get_affinity(me).ctx(|| "cannot read the runner's CPU affinity".into())?;
            set_affinity(me, &CpuSet::new(runner_cpus.iter().copied()))
                .ctx(|| format!("cannot pin the runner to {runner_cpus:?}"))?;
            placement.affinity = Some(old);
        } else if rt {
            let old = sched_getattr(me).ctx(|| "cannot read the runner's policy".into())?;
            let attr = SchedAttr {
                sched_policy: Policy::Fifo.number(),
                // SCHED_FLAG_RESET_ON_FORK: its children start as SCHED_OTHER.
                sched_flags: 0x01,
                sched_priority: RUNNER_RT_PRIORITY as u32,
                ..SchedAttr::default()
            };
            sched_setattr(me, &attr)
                .ctx(|| format!("cannot run the runner at SCHED_FIFO {RUNNER_RT_PRIORITY}"))?;
            placement.attr = Some(old);
            placement.rt_priority = Some(RUNNER_RT_PRIORITY);
        }
        Ok(placement)
    }
}

impl Drop for RunnerPlacement {
    fn drop(&mut self) {
        if let Some(old) = &self.affinity {
            let _ = set_affinity(Pid(0), old);
        }
        if let Some(old) = &self.attr {
            let _ = sched_setattr(Pid(0), &SchedAttr { size: 0, ..*old });
        }
    }
}

/// One repetition of a cell.
struct Rep<'a> {
    cfg: &'a PoliciesConfig,
    program: Program,
    policy: Policy,
    priority: i32,
    size: u32,
    iterations: u64,
    cpus: &'a [usize],
}

impl Rep<'_> {
    /// The sample and the time from the first spawn to the start; `None` if the time
    /// limit ran out (the workers are then killed).
    fn run(&self, input: &Path, dir: &Path, what: &str) -> Result<Option<(Sample, f64)>> {
        let mut spec = WorkerSpec::new(self.program.role());
        (spec.iterations, spec.bytes, spec.block) = (self.iterations, self.cfg.bytes, self.cfg.block);
        (spec.input, spec.output, spec.wait_go) = (Some(input.into()), Some(dir.join("out-")), true);
        let (go_read, go_write) = ipc::pipe().ctx(|| "cannot make the start pipe".into())?;
        let comm = spec.role.comm();
        let first_spawn = Instant::now();
        let mut children = Vec::with_capacity(self.size as usize);
        for _ in 0..self.size {
            let mut cmd = spec.command(&self.cfg.exe, &[]);
            cmd.stdin(Stdio::from(go_read.try_clone().ctx(|| "cannot share the start pipe".into())?));
            let cpus = CpuSet::new(self.cpus.iter().copied());
            // SAFETY: set_affinity only fills a cpu_set_t on the stack from the set, made
            // before the fork, and makes a system call.
            unsafe { cmd.pre_exec(move || set_affinity(Pid(0), &cpus)) };
            children.push(ChildGroup::start(&mut cmd, comm)?);
        }
        drop(go_read);
        let ready_by = Instant::now() + READY_LIMIT;
        for w in &mut children {
            w.expect_line("ready", ready_by, what)?;
        }
        if self.policy != Policy::Other {
            let value = PolicyValue::new(self.policy, self.priority as u32, 0)
                .map_err(|e| policy_error(e, self.policy, self.priority))?;
            for w in &children {
                set_policy(Pid(w.pid() as u32), &value)
                    .map_err(|e| policy_error(e, self.policy, self.priority))?;
            }
        }
        let go = Instant::now();
        let deadline = go + self.cfg.cell_limit;
        drop(go_write);
        let Some(exits) = wait_all(&mut children, deadline, what)? else {
            // Dropping the workers kills and reaps them.
            return Ok(None);
        };
        let real_s = go.elapsed().as_secs_f64();
        let mut sample = Sample { real_s, ..Sample::default() };
        for (w, exit) in children.iter_mut().zip(&exits) {
            let done = w.line(Instant::now() + READY_LIMIT, what)?;
            let Some([user_us, sys_us, nvcsw, nivcsw]) = start_usage(&done) else {
                let want =
                    format!("done <results>{}<user µs> <system µs> <nvcsw> <nivcsw>", workers::START_USAGE);
                return Err(w.error(what, ChildProblem::Said { line: done, want }));
            };
            sample.user_s += exit.user_ns as f64 / 1e9 - user_us as f64 / 1e6;
            sample.sys_s += exit.sys_ns as f64 / 1e9 - sys_us as f64 / 1e6;
            sample.nvcsw += (exit.nvcsw as i64 - nvcsw) as f64;
            sample.nivcsw += (exit.nivcsw as i64 - nivcsw) as f64;
        }
        sample.cpu_pct = if real_s > 0.0 { 100.0 * (sample.user_s + sample.sys_s) / real_s } else { 0.0 };
        Ok(Some((sample, (go - first_spawn).as_secs_f64())))
    }
}

/// Why a worker could not get its policy.
fn policy_error(e: std::io::Error, policy: Policy, priority: i32) -> BenchError {
    let hint = if e.raw_os_error() == Some(libc::EPERM) {
        " (needs root or CAP_SYS_NICE; with RT group scheduling, the cpu cgroup of this process must \
         have real-time runtime: cpu.rt_runtime_us 0 gives EPERM; run from the root cgroup)"
    } else {
        ""
    };
    BenchError::io(format!("cannot set {} priority {priority} on a worker{hint}", policy.name()), e)
}

/// The usage at the start in a worker's `done` line: user and system µs, voluntary and
/// involuntary context switches.
fn start_usage(done: &str) -> Option<[i64; 4]> {
    let (_, ru) = done.strip_prefix("done ")?.split_once(workers::START_USAGE)?;
    let v: Vec<i64> = ru.split(' ').map(str::parse).collect::<std::result::Result<_, _>>().ok()?;
    v.try_into().ok()
}

/// Reaps every child with `wait4` as it exits, by `deadline`: their exits, with their
/// usage, or `None` if some still run then. Fails as soon as one exits other than with
/// status 0.
fn wait_all(children: &mut [ChildGroup], deadline: Instant, what: &str) -> Result<Option<Vec<Exit>>> {
    loop {
        let mut exits = Vec::with_capacity(children.len());
        for w in children.iter_mut() {
            match w.try_wait().map_err(|e| e.during(what))? {
                Some(exit) if !exit.success() => return Err(w.error(what, ChildProblem::Exited(exit.status))),
                Some(exit) => exits.push(exit),
                None => {}
            }
        }
        if exits.len() == children.len() {
            return Ok(Some(exits));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        ChildGroup::wait_any(children, deadline).map_err(|e| e.during(what))?;
    }
}

/// A cell in the simulator.
#[derive(Clone, Debug, Serialize)]
pub struct SimCell {
    pub program: Program,
    pub policy: String,
    pub size: u32,
    /// The workload spec simulated.
    pub workload: String,
    /// The makespan as real time, CPU time (runtime) as user time, sys 0.
    pub metrics: Sample,
}

/// The simulator's spec of a cell.
fn sim_spec(report: &PoliciesReport, c: &CellResult) -> String {
    let mut s = format!("{}:procs={},policy={}", c.program.name(), c.size, c.policy);
    if let Some(p) = c.priority {
        s += &format!(",prio={p}");
    }
    if c.program != Program::Rw {
        // The CPU time the live iterations take here, not the model's 70 ns each.
        let work_us = (report.iterations as f64 * report.pi_ns_per_iteration / 1e3).round().max(1.0);
        s += &format!(",work={work_us}us");
    }
    if c.program != Program::Pi {
        s += &format!(",bytes={},block={}", report.bytes, report.block);
    }
    s
}

/// Every live cell in the simulator (paper 002's programs as the simulator's workloads),
/// with as many CPUs as the workers had: `bench policies --sim`.
pub fn simulate(report: &PoliciesReport) -> Result<Vec<SimCell>> {
    let config = SimConfig::new(report.cpus.len() as u32, FairFlavor::Eevdf);
    report
        .cells
        .iter()
        .map(|c| {
            let spec = sim_spec(report, c);
            let w = schedlab_sim::workloads::load(&spec)?;
            let r = schedlab_sim::simulate(&w, &config, None)
                .map_err(|source| BenchError::Simulate { workload: spec.clone(), source })?;
            let real_s = r.makespan_ns as f64 / 1e9;
            let cpu_s = r.tasks.iter().map(|t| t.runtime_ns).sum::<u64>() as f64 / 1e9;
            let metrics = Sample {
                real_s,
                user_s: cpu_s,
                sys_s: 0.0,
                cpu_pct: if real_s > 0.0 { 100.0 * cpu_s / real_s } else { 0.0 },
                nvcsw: r.tasks.iter().map(|t| t.nvcsw).sum::<u64>() as f64,
                nivcsw: r.tasks.iter().map(|t| t.nivcsw).sum::<u64>() as f64,
            };
            Ok(SimCell {
                program: c.program,
                policy: c.policy.clone(),
                size: c.size,
                workload: spec,
                metrics,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workers_leave_a_cpu_to_the_system() {
        let plan = |allowed: &[usize], req: Option<&[usize]>, rt, all| plan_cpus(allowed, req, rt, all);
        assert_eq!(plan(&[0, 1], None, true, false).unwrap(), (vec![1], vec![0]));
        assert_eq!(plan(&[0, 1, 2, 3], Some(&[3, 2, 2]), true, false).unwrap(), (vec![2, 3], vec![0, 1]));
        let e = plan(&[0, 1], Some(&[0, 1]), true, false).unwrap_err().to_string();
        assert!(e.contains("--all-cpus"), "{e}");
        assert_eq!(plan(&[0, 1], Some(&[1, 0]), true, true).unwrap(), (vec![0, 1], vec![]));
        assert_eq!(plan(&[0], None, false, false).unwrap(), (vec![0], vec![]), "SCHED_OTHER only: no risk");
        assert!(plan(&[0], None, true, false).is_err());
        assert!(plan(&[0, 1], Some(&[5]), false, false).unwrap_err().to_string().contains("not among"));
    }

    #[test]
    fn spreads_and_paper_row_order() {
        let s = Spread::of(&[1.0, 2.0, 3.0]);
        assert_eq!((s.mean, s.sd, s.min, s.max), (2.0, 1.0, 1.0, 3.0));
        assert_eq!(Spread::of(&[4.0]).sd, 0.0);
        let a = Sample { real_s: 1.0, user_s: 2.0, sys_s: 3.0, cpu_pct: 4.0, nvcsw: 5.0, nivcsw: 6.0 };
        assert_eq!(a.paper_rows(), [1.0, 2.0, 3.0, 4.0, 6.0, 5.0]);
        let m = Metrics::of(&[a, Sample { real_s: 3.0, ..a }]);
        assert_eq!((m.real_s.mean, m.real_s.min, m.real_s.max, m.nvcsw.sd), (2.0, 1.0, 3.0, 0.0));
        assert_eq!(m.means().real_s, 2.0);
        assert_eq!("mixed".parse::<Program>(), Ok(Program::Mixed));
        assert!("gzip".parse::<Program>().is_err());
        assert_eq!(policy_name(Policy::Rr), "rr");
        assert_eq!(start_usage("done pi 3.1416 copied 1024 ru 1200 30 2 0"), Some([1200, 30, 2, 0]));
        assert_eq!(start_usage("done pi 3.1 ru 1 2 3"), None);
        assert_eq!(start_usage("ready"), None);
    }
}
