//! The benchmarks' processes: the server (a bubble sort per request), the client
//! (timed round trips), the CPU hogs (busy loops, one CPU each) and PFS's test program
//! (bursts of a given CPU time separated by sleeps; paper 001, section 5).
//!
//! The runner starts each as `<current exe> bench worker <args>` ([`WORKER_COMMAND`],
//! [`WorkerSpec::to_args`]); the hidden subcommand hands the arguments to
//! [`worker_main`]. A worker names itself ([`Role::comm`]) with `PR_SET_NAME`, sets its
//! nice value, and talks to the runner through its standard output: `ready` once it is
//! set up, then (the client) `t <nanoseconds>` per round trip and `done` (the client
//! and the test program).
//!
//! Paper 002's programs ([`Role::Pi`], [`Role::Rw`], [`Role::Mixed`]) run at once, or,
//! with `--wait-go`, say `ready` and start when their standard input reaches end of file
//! (the runner closes the pipe's other end: every process of a cell starts together).
//! They end with `done <result> ru <user µs> <system µs> <nvcsw> <nivcsw>`: pi's
//! estimate and the bytes copied, then their own usage at the start ([`START_USAGE`]),
//! which the runner takes from the `wait4` usage to leave exec and set-up out.

use std::hint::black_box;
use std::io::{self, Read, Write};
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::ipc::{Client, EndpointSpec, Server};
use super::{cvt, Context, Invalid, Result};
use crate::child::{guard_command, ChildGroup};

/// The arguments before a worker's own: `<exe> bench worker ...`.
pub const WORKER_COMMAND: [&str; 2] = ["bench", "worker"];

/// How many integers the server sorts per request by default: one bubble sort takes
/// about 12 ms on the 2-CPU development VM (release build: a median round trip of
/// 12.1 ms over a pipe, unloaded; [`sort_time`] measures it elsewhere).
pub const DEFAULT_SORT_LEN: usize = 4800;

/// pi-sched.c's default iterations (paper 002). Each is two `random()` calls and a
/// distance, as in the paper's code; on the 2-CPU development VM one process takes
/// about 25 ms of CPU in a release build (the paper's i7: about 70 ms).
pub const PI_ITERATIONS: u64 = 1_000_000;
/// rw.c's transfer size (paper 002).
pub const RW_BYTES: u64 = 102_400;
/// rw.c's block size.
pub const RW_BLOCK: u32 = 1_024;

/// What a worker process does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends requests and times the replies.
    Client,
    /// Sorts per request.
    Server,
    /// Spins on one CPU.
    Hog,
    /// PFS's test program: `loops` times, work A (count until the thread has used
    /// `work_ns` of CPU time) then work B (sleep `sleep_ns`).
    PfsTest,
    /// Paper 002's pi-sched.c: a Monte-Carlo estimate of pi over `iterations`.
    Pi,
    /// Paper 002's rw.c: copies `bytes` of `input` in `block`-byte reads and writes to
    /// its own output file (`output` followed by its pid), opened `O_SYNC`.
    Rw,
    /// Paper 002's mixed.c: pi, then rw.
    Mixed,
    /// The validation's fork and exit probe: `rounds` children, forked one at a time,
    /// each exiting at once (`crate::validate::forker`).
    Forker,
    /// A keystroke-like program: for `duration_ns`, sleeps a random
    /// [`KEYSTROKE_SLEEP_MS`], wakes, works a random [`KEYSTROKE_WORK_MS`] of CPU time;
    /// then says each response time (from the wake-up it asked for to its work done).
    Keystroke,
    /// A schbench-like request server, schedlab's own (schbench has no Debian package):
    /// for `duration_ns`, [`REQUEST_MESSENGERS`] message threads each hand a request to
    /// each of its [`REQUEST_WORKERS`] worker threads every [`REQUEST_PERIOD_US`] (a
    /// period whose batch is not all answered yet is skipped, as a server that falls
    /// behind serves fewer), and each worker answers after [`REQUEST_WORK_US`] of CPU
    /// time; then says each request's latency (from its period's start to its answer).
    Requests,
}

/// How many message threads a request server has (schbench's `-m`).
pub const REQUEST_MESSENGERS: usize = 2;
/// How many worker threads each message thread hands requests to (schbench's `-t`).
pub const REQUEST_WORKERS: usize = 4;
/// How often each message thread hands out a batch of requests, in µs: with
/// [`REQUEST_WORK_US`], 2 × 4 × 250 requests a second and 40 % of a CPU of work.
pub const REQUEST_PERIOD_US: u64 = 4000;
/// The CPU time a worker spends on a request, in µs.
pub const REQUEST_WORK_US: u64 = 200;

/// How long a keystroke-like worker sleeps between presses, in ms (uniform).
pub const KEYSTROKE_SLEEP_MS: (u64, u64) = (50, 500);
/// How much CPU time a keystroke-like worker's response takes, in ms (uniform).
pub const KEYSTROKE_WORK_MS: (u64, u64) = (1, 5);
/// What a keystroke-like worker's last line begins with, before its response times
/// (µs, space-separated).
pub const RESPONSES: &str = "responses";

impl Role {
    /// The process name (`comm`) the worker gives itself.
    pub fn comm(self) -> &'static str {
        match self {
            Role::Client => "sl-client",
            Role::Server => "sl-server",
            Role::Hog => "sl-hog",
            Role::PfsTest => "sl-pfs-test",
            Role::Pi => "sl-pi",
            Role::Rw => "sl-rw",
            Role::Mixed => "sl-mixed",
            Role::Forker => "sl-forker",
            Role::Keystroke => "sl-keystroke",
            Role::Requests => "sl-requests",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
            Role::Hog => "hog",
            Role::PfsTest => "pfs-test",
            Role::Pi => "pi",
            Role::Rw => "rw",
            Role::Mixed => "mixed",
            Role::Forker => "forker",
            Role::Keystroke => "keystroke",
            Role::Requests => "requests",
        }
    }
}

/// What separates a paper 002 worker's results from its usage at the start in its
/// `done` line.
pub const START_USAGE: &str = " ru ";

/// A worker's whole configuration, passed through `exec` as arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerSpec {
    /// What it does.
    pub role: Role,
    /// Its end of the channel (client and server).
    pub endpoint: Option<EndpointSpec>,
    /// How many integers the server sorts per request.
    pub sort_len: usize,
    /// How many round trips the client makes.
    pub rounds: u32,
    /// The test program's CPU time per burst (work A), in ns.
    pub work_ns: u64,
    /// The test program's bursts (loops of work A then work B).
    pub loops: u32,
    /// The test program's sleep after each burst (work B), in ns.
    pub sleep_ns: u64,
    /// The nice value it sets for itself (`None`: inherited).
    pub nice: Option<i32>,
    /// The CPU a hog pins itself to.
    pub cpu: Option<usize>,
    /// pi's iterations (pi and mixed).
    pub iterations: u64,
    /// Bytes rw copies, and per read and write (rw and mixed).
    pub bytes: u64,
    pub block: u32,
    /// The file rw reads, and its output's path before the pid (rw and mixed).
    pub input: Option<PathBuf>,
    pub output: Option<PathBuf>,
    /// Says `ready`, then waits for end of file on standard input before it starts.
    pub wait_go: bool,
    /// Server: bubble sorts per answer (paper 004's multi-server servers do 2, 5, 5, 10
    /// and 10).
    pub sorts: u32,
    /// Multi-server mode: the server posts `rounds` answers without waiting for
    /// requests, starting when its standard input reaches end of file (the runner's
    /// start), and the client only waits for answers (it sends none): the first server
    /// to post wakes it.
    pub unprompted: bool,
    /// How long a keystroke-like worker runs, in ns.
    pub duration_ns: u64,
}

impl WorkerSpec {
    /// A worker of `role` with nothing else set.
    pub fn new(role: Role) -> Self {
        WorkerSpec {
            role,
            endpoint: None,
            sort_len: DEFAULT_SORT_LEN,
            rounds: 0,
            work_ns: 0,
            loops: 0,
            sleep_ns: 0,
            nice: None,
            cpu: None,
            iterations: PI_ITERATIONS,
            bytes: RW_BYTES,
            block: RW_BLOCK,
            input: None,
            output: None,
            wait_go: false,
            sorts: 1,
            unprompted: false,
            duration_ns: 0,
        }
    }

    /// The arguments after [`WORKER_COMMAND`].
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![self.role.name().to_string()];
        if let Some(e) = &self.endpoint {
            a.extend(["--endpoint".into(), e.to_arg()]);
        }
        match self.role {
            Role::Server => a.extend([
                "--sort-len".into(),
                self.sort_len.to_string(),
                "--sorts".into(),
                self.sorts.to_string(),
                "--rounds".into(),
                self.rounds.to_string(),
            ]),
            Role::Client | Role::Forker => a.extend(["--rounds".into(), self.rounds.to_string()]),
            Role::Hog => {}
            Role::Keystroke | Role::Requests => a.extend(["--duration-ms".into(), ms_arg(self.duration_ns)]),
            Role::PfsTest => a.extend([
                "--work-ms".into(),
                ms_arg(self.work_ns),
                "--loops".into(),
                self.loops.to_string(),
                "--sleep-ms".into(),
                ms_arg(self.sleep_ns),
            ]),
            Role::Pi | Role::Rw | Role::Mixed => {
                if self.role.has_pi() {
                    a.extend(["--iterations".into(), self.iterations.to_string()]);
                }
                if self.role.has_rw() {
                    a.extend([
                        "--bytes".into(),
                        self.bytes.to_string(),
                        "--block".into(),
                        self.block.to_string(),
                    ]);
                    for (key, path) in [("--input", &self.input), ("--output", &self.output)] {
                        if let Some(p) = path {
                            a.extend([key.into(), p.display().to_string()]);
                        }
                    }
                }
                if self.wait_go {
                    a.push("--wait-go".into());
                }
            }
        }
        if let Some(n) = self.nice {
            a.push(format!("--nice={n}"));
        }
        if let Some(c) = self.cpu {
            a.extend(["--cpu".into(), c.to_string()]);
        }
        if self.unprompted {
            a.extend(["--unprompted".into(), "1".into()]);
        }
        a
    }

    /// `<exe> bench worker <spec>`, guarded ([`guard_command`]: SIGKILL when the
    /// spawning thread dies), inheriting `fds`, its output piped to the runner.
    pub(crate) fn command(&self, exe: &Path, fds: &[RawFd]) -> Command {
        let mut cmd = Command::new(exe);
        cmd.args(WORKER_COMMAND).args(self.to_args());
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        guard_command(&mut cmd, fds.to_vec(), libc::SIGKILL, self.nice);
        cmd
    }

    /// Starts [`WorkerSpec::command`], called by its role's name in messages.
    pub(crate) fn spawn(&self, exe: &Path, fds: &[RawFd]) -> Result<ChildGroup> {
        ChildGroup::start(&mut self.command(exe, fds), self.role.comm())
    }

    /// The spec from [`to_args`](WorkerSpec::to_args)'s form.
    pub fn from_args(args: &[String]) -> std::result::Result<Self, String> {
        let mut it = args.iter().map(String::as_str);
        let role = match it.next() {
            Some("client") => Role::Client,
            Some("server") => Role::Server,
            Some("hog") => Role::Hog,
            Some("pfs-test") => Role::PfsTest,
            Some("pi") => Role::Pi,
            Some("rw") => Role::Rw,
            Some("mixed") => Role::Mixed,
            Some("forker") => Role::Forker,
            Some("keystroke") => Role::Keystroke,
            Some("requests") => Role::Requests,
            other => {
                return Err(format!(
                    "the role must be client, server, hog, pfs-test, pi, rw, mixed, forker, keystroke or requests, not {other:?}"
                ))
            }
        };
        let mut spec = WorkerSpec::new(role);
        while let Some(arg) = it.next() {
            if arg == "--wait-go" {
                spec.wait_go = true;
                continue;
            }
            let (key, inline) = match arg.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (arg, None),
            };
            let value = match inline {
                Some(v) => v,
                None => it.next().ok_or_else(|| format!("{key} needs a value"))?,
            };
            let num = |v: &str| v.parse::<i64>().map_err(|e| format!("bad {key} '{v}': {e}"));
            let ms = |v: &str| match v.parse::<f64>() {
                Ok(ms) if ms.is_finite() && ms >= 0.0 => Ok((ms * 1e6).round() as u64),
                _ => Err(format!("bad {key} '{v}': not a number of milliseconds")),
            };
            match key {
                "--endpoint" => spec.endpoint = Some(EndpointSpec::parse(value)?),
                "--sort-len" => spec.sort_len = num(value)? as usize,
                "--rounds" => spec.rounds = num(value)? as u32,
                "--work-ms" => spec.work_ns = ms(value)?,
                "--loops" => spec.loops = num(value)? as u32,
                "--sleep-ms" => spec.sleep_ns = ms(value)?,
                "--duration-ms" => spec.duration_ns = ms(value)?,
                "--nice" => spec.nice = Some(num(value)? as i32),
                "--cpu" => spec.cpu = Some(num(value)? as usize),
                "--iterations" => spec.iterations = positive(value)?,
                "--bytes" => spec.bytes = positive(value)?,
                "--block" => {
                    spec.block = u32::try_from(positive(value)?).map_err(|e| format!("bad --block: {e}"))?
                }
                "--sorts" => {
                    spec.sorts = u32::try_from(positive(value)?).map_err(|e| format!("bad --sorts: {e}"))?
                }
                "--unprompted" => spec.unprompted = num(value)? != 0,
                "--input" => spec.input = Some(PathBuf::from(value)),
                "--output" => spec.output = Some(PathBuf::from(value)),
                _ => return Err(format!("unknown worker argument '{key}'")),
            }
        }
        if matches!(role, Role::Client | Role::Server) && spec.endpoint.is_none() {
            return Err(format!("a {} needs --endpoint", role.name()));
        }
        if role.has_rw() {
            if spec.input.is_none() || spec.output.is_none() {
                return Err(format!("{} needs --input and --output", role.name()));
            }
            if !spec.bytes.is_multiple_of(u64::from(spec.block)) {
                return Err(format!(
                    "--block {} must divide --bytes {}, as rw.c requires",
                    spec.block, spec.bytes
                ));
            }
        }
        Ok(spec)
    }
}

/// A positive whole number.
fn positive(v: &str) -> std::result::Result<u64, String> {
    match v.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("'{v}' is not a positive whole number")),
    }
}

impl Role {
    /// Runs paper 002's pi part (pi and mixed).
    fn has_pi(self) -> bool {
        matches!(self, Role::Pi | Role::Mixed)
    }

    /// Runs paper 002's rw part (rw and mixed).
    fn has_rw(self) -> bool {
        matches!(self, Role::Rw | Role::Mixed)
    }
}

/// The hidden `bench worker` subcommand: runs the worker `args` describe until it is
/// done (the client) or killed (the server when its client is gone; hogs never).
pub fn worker_main(args: &[String]) -> Result<()> {
    let spec = WorkerSpec::from_args(args).map_err(Invalid::WorkerArgs)?;
    set_comm(spec.role.comm()).ctx(|| "cannot set the process name".into())?;
    if let Some(nice) = spec.nice {
        set_nice(0, nice).ctx(|| format!("cannot set nice {nice} (needs root or CAP_SYS_NICE)"))?;
    }
    match spec.role {
        Role::Hog => hog(spec.cpu),
        Role::Server => server(&spec),
        Role::Client => client(&spec),
        Role::PfsTest => pfs_test(&spec),
        Role::Pi | Role::Rw | Role::Mixed => paper002(&spec),
        Role::Forker => crate::validate::forker::forker_main(spec.cpu, spec.rounds),
        Role::Keystroke => keystroke(spec.duration_ns),
        Role::Requests => requests(spec.duration_ns),
    }
}

/// Waits for the runner's start: it closes its end of our standard input.
fn wait_for_go() -> Result<()> {
    let mut sink = Vec::new();
    io::stdin().lock().read_to_end(&mut sink).ctx(|| "cannot wait for the start".into())?;
    Ok(())
}

/// Paper 002's programs: pi, rw, or pi then rw; with `--wait-go`, started by the runner.
fn paper002(spec: &WorkerSpec) -> Result<()> {
    if spec.wait_go {
        say("ready")?;
        wait_for_go()?;
    }
    let start = self_usage();
    let mut result = Vec::new();
    if spec.role.has_pi() {
        result.push(format!("pi {:.4}", monte_carlo_pi(spec.iterations)));
    }
    if spec.role.has_rw() {
        let (input, output) = (spec.input.as_ref(), spec.output.as_ref());
        let (input, output) = input.zip(output).expect("checked in from_args");
        let copied = sync_copy(input, output, spec.bytes, spec.block)?;
        result.push(format!("copied {copied}"));
    }
    let (user, sys) = (start.ru_utime, start.ru_stime);
    let us = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
    say(&format!(
        "done {}{START_USAGE}{} {} {} {}",
        result.join(" "),
        us(user),
        us(sys),
        start.ru_nvcsw,
        start.ru_nivcsw
    ))
}

/// The calling process's resource usage so far.
pub fn self_usage() -> libc::rusage {
    // SAFETY: an all-zero rusage is valid; getrusage fills it and cannot fail for SELF.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    }
}

/// pi-sched.c's loop: `iterations` points of two `random()` calls each in the square of
/// side 2 × RADIUS (glibc's `rand()`, which is `random()`); 4 × the share within RADIUS of the centre.
pub fn monte_carlo_pi(iterations: u64) -> f64 {
    const RADIUS: libc::c_long = libc::RAND_MAX as libc::c_long / 2;
    let (mut inside, mut all) = (0u64, 0u64);
    for _ in 0..iterations {
        // SAFETY: rand() has no preconditions; glibc's calls random(), as the paper's
        // program does.
        let (x, y) = unsafe { (libc::rand() as libc::c_long, libc::rand() as libc::c_long) };
        let (x, y) = ((x % (RADIUS * 2) - RADIUS) as f64, (y % (RADIUS * 2) - RADIUS) as f64);
        if (x * x + y * y).sqrt() < RADIUS as f64 {
            inside += 1;
        }
        all += 1;
    }
    black_box(4.0 * inside as f64 / all.max(1) as f64)
}

/// rw.c: copies `bytes` of `input` (from its start) in `block`-byte reads and writes to
/// `<output><pid>`, opened `O_WRONLY | O_CREAT | O_TRUNC | O_SYNC`; returns the bytes
/// written.
pub fn sync_copy(input: &std::path::Path, output: &std::path::Path, bytes: u64, block: u32) -> Result<u64> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut src = std::fs::File::open(input).ctx(|| format!("cannot open {}", input.display()))?;
    let mut name = output.as_os_str().to_owned();
    name.push(std::process::id().to_string());
    let out_path = PathBuf::from(name);
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .custom_flags(libc::O_SYNC)
        .open(&out_path)
        .ctx(|| format!("cannot create {}", out_path.display()))?;
    let mut buf = vec![0u8; block as usize];
    let mut copied = 0;
    while copied < bytes {
        let n = src.read(&mut buf).ctx(|| format!("cannot read {}", input.display()))?;
        if n == 0 {
            return Err(Invalid::ShortInput { path: input.to_path_buf(), len: copied, bytes }.into());
        }
        dst.write_all(&buf[..n]).ctx(|| format!("cannot write {}", out_path.display()))?;
        copied += n as u64;
    }
    Ok(copied)
}

/// Nanoseconds as milliseconds, as short as exact: `2.3`, `100`.
fn ms_arg(ns: u64) -> String {
    format!("{}", ns as f64 / 1e6)
}

pub(crate) fn say(line: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).ctx(|| "cannot write to the runner".into())
}

fn hog(cpu: Option<usize>) -> Result<()> {
    if let Some(cpu) = cpu {
        pin_to(cpu).ctx(|| format!("cannot pin to CPU {cpu}"))?;
    }
    say("ready")?;
    let mut x = 0u64;
    loop {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
    }
}

fn server(spec: &WorkerSpec) -> Result<()> {
    let mut server = Server::open(spec.endpoint.as_ref().expect("checked in from_args"))?;
    say("ready")?;
    if spec.unprompted {
        // All servers start posting together, once the client is there.
        wait_for_go()?;
    }
    let mut seed = 1u64;
    let mut bytes = Vec::with_capacity(spec.sort_len * 4);
    let mut posts = 0;
    loop {
        if spec.unprompted {
            if posts == spec.rounds {
                return Ok(());
            }
            posts += 1;
        } else if !server.wait_request().ctx(|| "cannot wait for a request".into())? {
            return Ok(());
        }
        for _ in 0..spec.sorts {
            let mut v = random_ints(spec.sort_len, seed);
            seed += 1;
            bubble_sort(&mut v);
            bytes.clear();
            bytes.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        }
        server.reply(&bytes).ctx(|| "cannot answer a request".into())?;
    }
}

fn client(spec: &WorkerSpec) -> Result<()> {
    let mut client = Client::open(spec.endpoint.as_ref().expect("checked in from_args"))?;
    say("ready")?;
    let mut start = monotonic_ns();
    for i in 0..spec.rounds {
        if spec.unprompted {
            // An iteration runs from the end of the previous one (the paper's client
            // completion time per iteration).
            client.wait_reply().ctx(|| format!("wait {i} failed"))?;
        } else {
            start = monotonic_ns();
            client.round_trip().ctx(|| format!("round trip {i} failed"))?;
        }
        let now = monotonic_ns();
        say(&format!("t {}", now - start))?;
        start = now;
    }
    say("done")
}

fn pfs_test(spec: &WorkerSpec) -> Result<()> {
    say("ready")?;
    for _ in 0..spec.loops {
        // Work A, then work B.
        spin_cpu(spec.work_ns);
        std::thread::sleep(Duration::from_nanos(spec.sleep_ns));
    }
    say("done")
}

/// A keystroke-like program ([`Role::Keystroke`]) for `duration_ns`: its response
/// times, said in one line at the end (not as they come: a write to the runner's pipe
/// is no part of a response).
fn keystroke(duration_ns: u64) -> Result<()> {
    say("ready")?;
    let responses: Vec<String> = keystroke_responses(duration_ns).iter().map(u64::to_string).collect();
    say(&format!("{RESPONSES} {}", responses.join(" ")))
}

/// The presses of a keystroke-like program for `duration_ns` (the last one ending
/// within it): their response times, in µs.
fn keystroke_responses(duration_ns: u64) -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(u64::from(std::process::id()) ^ monotonic_ns());
    let end = monotonic_ns() + duration_ns;
    let mut responses = Vec::new();
    loop {
        let sleep_ns = rng.random_range(KEYSTROKE_SLEEP_MS.0..=KEYSTROKE_SLEEP_MS.1) * 1_000_000;
        let work_ns = rng.random_range(KEYSTROKE_WORK_MS.0 * 1000..=KEYSTROKE_WORK_MS.1 * 1000) * 1000;
        let wake = monotonic_ns() + sleep_ns;
        if wake + work_ns > end {
            break;
        }
        sleep_until(wake);
        spin_cpu(work_ns);
        responses.push((monotonic_ns() - wake) / 1000);
    }
    responses
}

/// A request server ([`Role::Requests`]) for `duration_ns`: its requests' latencies,
/// said in one line at the end as a keystroke-like program says its response times.
fn requests(duration_ns: u64) -> Result<()> {
    say("ready")?;
    let latencies: Vec<String> = request_latencies(duration_ns).iter().map(u64::to_string).collect();
    say(&format!("{RESPONSES} {}", latencies.join(" ")))
}

/// The requests a [`Role::Requests`] server answers in `duration_ns` (every batch
/// handed out ending within it): their latencies in µs, from the start of the period
/// that handed each out (the time asked for, as a timer's) to its answer.
fn request_latencies(duration_ns: u64) -> Vec<u64> {
    let end = monotonic_ns() + duration_ns;
    let messengers: Vec<_> =
        (0..REQUEST_MESSENGERS).map(|_| std::thread::spawn(move || messenger(end))).collect();
    messengers.into_iter().flat_map(|m| m.join().expect("a message thread never panics")).collect()
}

/// One message thread of a request server until `end`: hands a request to each of its
/// workers at the start of each period, waits for their answers, and skips the periods
/// that passed meanwhile. Its requests' latencies, in µs.
fn messenger(end: u64) -> Vec<u64> {
    use std::sync::mpsc;
    let (answer, answers) = mpsc::channel::<u64>();
    let workers: Vec<mpsc::Sender<()>> = (0..REQUEST_WORKERS)
        .map(|_| {
            let (request, requests) = mpsc::channel::<()>();
            let answer = answer.clone();
            std::thread::spawn(move || {
                while requests.recv().is_ok() {
                    spin_cpu(REQUEST_WORK_US * 1000);
                    if answer.send(monotonic_ns()).is_err() {
                        break;
                    }
                }
            });
            request
        })
        .collect();
    let period = REQUEST_PERIOD_US * 1000;
    let mut latencies = Vec::new();
    let mut due = monotonic_ns() + period;
    while due + period <= end {
        sleep_until(due);
        for w in &workers {
            w.send(()).expect("a worker waits while its message thread runs");
        }
        for _ in 0..REQUEST_WORKERS {
            let done = answers.recv().expect("each worker answers");
            latencies.push(done.saturating_sub(due) / 1000);
        }
        let now = monotonic_ns();
        due += period * (1 + now.saturating_sub(due) / period);
    }
    latencies
}

/// Sleeps until `CLOCK_MONOTONIC` reads `ns` (an absolute timer: the wake-up asked for
/// is `ns`, whatever the time it took to ask).
fn sleep_until(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: ts is a valid timespec; no remaining time is asked for with TIMER_ABSTIME.
    while unsafe {
        libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut())
    } == libc::EINTR
    {}
}

/// Counts until this thread has run `ns` more nanoseconds of CPU time (the PFS test
/// program's burst: CPU time, however long the thread waits for the CPU meanwhile).
fn spin_cpu(ns: u64) {
    let until = thread_cpu_ns() + ns;
    let mut x = 0u64;
    while thread_cpu_ns() < until {
        for _ in 0..1000 {
            x = black_box(x + 1);
        }
    }
    black_box(x);
}

/// CLOCK_THREAD_CPUTIME_ID (the CPU time of the calling thread) in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is valid; the clock always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub use schedlab_live::process::monotonic_ns;

/// `n` pseudo-random integers (xorshift64*, from `seed`).
pub fn random_ints(n: usize, seed: u64) -> Vec<i32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as i32
        })
        .collect()
}

/// The textbook bubble sort: the server's work.
pub fn bubble_sort(v: &mut [i32]) {
    let n = v.len();
    for i in 0..n {
        let mut swapped = false;
        for j in 0..n - 1 - i {
            if v[j] > v[j + 1] {
                v.swap(j, j + 1);
                swapped = true;
            }
        }
        if !swapped {
            break;
        }
        black_box(&mut *v);
    }
}

/// How long one sort of `len` random integers takes here (the fastest of three).
pub fn sort_time(len: usize) -> Duration {
    (0..3)
        .map(|seed| {
            let mut v = random_ints(len, seed);
            let start = std::time::Instant::now();
            bubble_sort(black_box(&mut v));
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Sets the calling thread's `comm`.
pub fn set_comm(name: &str) -> io::Result<()> {
    let c = std::ffi::CString::new(name).map_err(io::Error::other)?;
    // SAFETY: c is a NUL-terminated string.
    cvt(unsafe { libc::prctl(libc::PR_SET_NAME, c.as_ptr() as libc::c_ulong, 0, 0, 0) }).map(drop)
}

/// Sets the nice value of process `pid` (0: the caller).
pub fn set_nice(pid: i32, nice: i32) -> io::Result<()> {
    // SAFETY: plain system call.
    cvt(unsafe { libc::setpriority(libc::PRIO_PROCESS, pid as libc::id_t, nice) }).map(drop)
}

/// Pins the calling thread to `cpu`.
pub fn pin_to(cpu: usize) -> io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is empty; CPU_SET stays in bounds for cpu < 1024.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        libc::CPU_SET(cpu, &mut set);
        cvt(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)).map(drop)
    }
}

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: an all-zero cpu_set_t is valid; CPU_ISSET stays in bounds.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        cvt(libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set))?;
        Ok((0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::ipc::{IpcKind, Peer};

    #[test]
    fn bubble_sort_sorts() {
        let mut v = random_ints(500, 7);
        let mut w = v.clone();
        bubble_sort(&mut v);
        w.sort();
        assert_eq!(v, w);
        assert_ne!(random_ints(10, 1), random_ints(10, 2));
    }

    #[test]
    fn worker_specs_survive_exec_as_arguments() {
        let mut s = WorkerSpec::new(Role::Client);
        s.endpoint = Some(EndpointSpec {
            kind: IpcKind::Sig,
            fds: vec![],
            sysv_id: None,
            paths: vec![],
            peer: Some(Peer::process(42)),
        });
        s.rounds = 33;
        s.nice = Some(-20);
        assert_eq!(WorkerSpec::from_args(&s.to_args()).unwrap(), s);
        let mut h = WorkerSpec::new(Role::Hog);
        h.cpu = Some(1);
        assert_eq!(WorkerSpec::from_args(&h.to_args()).unwrap(), h);
        assert!(WorkerSpec::from_args(&["server".into()]).unwrap_err().contains("--endpoint"));
        assert!(!allowed_cpus().unwrap().is_empty());
    }

    #[test]
    fn pfs_test_arguments_round_trip_in_milliseconds() {
        let mut t = WorkerSpec::new(Role::PfsTest);
        (t.work_ns, t.loops, t.sleep_ns) = (2_300_000, 20, 100_000_000);
        let args = t.to_args();
        assert_eq!(args, ["pfs-test", "--work-ms", "2.3", "--loops", "20", "--sleep-ms", "100"]);
        assert_eq!(WorkerSpec::from_args(&args).unwrap(), t);
        let parsed = WorkerSpec::from_args(&["pfs-test".into(), "--work-ms=0.5".into(), "--loops=3".into()]);
        assert_eq!(parsed.map(|s| (s.work_ns, s.loops, s.sleep_ns)), Ok((500_000, 3, 0)));
        assert!(WorkerSpec::from_args(&["pfs-test".into(), "--work-ms".into(), "-1".into()]).is_err());
        assert_eq!(Role::PfsTest.comm(), "sl-pfs-test");
    }

    #[test]
    fn a_request_takes_at_least_its_work_and_a_period_serves_a_batch_at_most() {
        let t = WorkerSpec { duration_ns: 1_000_000_000, ..WorkerSpec::new(Role::Requests) };
        assert_eq!(t.to_args(), ["requests", "--duration-ms", "1000"]);
        assert_eq!(WorkerSpec::from_args(&t.to_args()).unwrap(), t);
        let latencies = request_latencies(1_000_000_000);
        // At most one batch per period and message thread, the first a period in, the
        // last ending within the second; at least one, however slow this machine.
        let most = REQUEST_MESSENGERS * REQUEST_WORKERS * (1_000_000 / REQUEST_PERIOD_US as usize - 1);
        let batch = REQUEST_MESSENGERS * REQUEST_WORKERS;
        assert!((batch..=most).contains(&latencies.len()), "{} of {most}", latencies.len());
        assert!(latencies.iter().all(|&us| us >= REQUEST_WORK_US), "{latencies:?}");
    }

    #[test]
    fn a_keystroke_takes_at_least_its_work_after_the_wake_up_it_asked_for() {
        let t = WorkerSpec { duration_ns: 1_500_000_000, ..WorkerSpec::new(Role::Keystroke) };
        assert_eq!(t.to_args(), ["keystroke", "--duration-ms", "1500"]);
        assert_eq!(WorkerSpec::from_args(&t.to_args()).unwrap(), t);
        let responses = keystroke_responses(1_500_000_000);
        // Sleeps of at least 50 ms: at most 29 presses end within 1.5 s; a sleep of at
        // most 500 ms and a press's work ended within it leave room for one at least.
        assert!((1..=29).contains(&responses.len()), "{responses:?}");
        // Each at least its 1 ms of CPU time after its wake-up.
        assert!(responses.iter().all(|&us| us >= 1000), "{responses:?}");
    }

    #[test]
    fn a_burst_is_the_cpu_time_it_is_given() {
        // 5 ms of this thread's CPU time, however long that takes on a loaded machine: at
        // least 5 ms of its CPU clock, and at least as much wall time (the wall clock is
        // read around the CPU clock; the two are kept by different clocks, which may
        // differ by a microsecond).
        let wall = std::time::Instant::now();
        let cpu = thread_cpu_ns();
        spin_cpu(5_000_000);
        let cpu = thread_cpu_ns() - cpu;
        let wall = wall.elapsed().as_nanos() as u64;
        assert!(cpu >= 5_000_000, "{cpu} ns of CPU time");
        assert!(wall + 1_000 >= cpu, "{wall} ns of wall time for {cpu} of CPU time");
    }

    #[test]
    fn paper002_worker_arguments_round_trip() {
        let mut m = WorkerSpec::new(Role::Mixed);
        (m.iterations, m.bytes, m.block, m.wait_go) = (5000, 8192, 512, true);
        (m.input, m.output) = (Some("/tmp/in".into()), Some("/tmp/out-".into()));
        let args = m.to_args();
        assert_eq!(
            args,
            ["mixed", "--iterations", "5000", "--bytes", "8192", "--block", "512", "--input", "/tmp/in"]
                .into_iter()
                .chain(["--output", "/tmp/out-", "--wait-go"])
                .collect::<Vec<_>>()
        );
        assert_eq!(WorkerSpec::from_args(&args).unwrap(), m);
        let pi = WorkerSpec::from_args(&["pi".into()]).unwrap();
        assert_eq!((pi.iterations, pi.wait_go), (PI_ITERATIONS, false));
        assert_eq!(pi.to_args(), ["pi", "--iterations", "1000000"]);
        assert_eq!((Role::Pi.comm(), Role::Rw.comm(), Role::Mixed.comm()), ("sl-pi", "sl-rw", "sl-mixed"));
        let bad = |a: &[&str]| WorkerSpec::from_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(bad(&["rw"]).unwrap_err().contains("--input and --output"));
        assert!(bad(&["rw", "--input", "a", "--output", "b", "--bytes", "1000", "--block", "300"])
            .unwrap_err()
            .contains("must divide"));
        assert!(bad(&["pi", "--iterations", "0"]).is_err());
        assert!(bad(&["pi", "--iterations=-3"]).is_err());
        let rw = bad(&["rw", "--input=a", "--output=b", "--bytes=2048"]).unwrap();
        assert_eq!((rw.bytes, rw.block, rw.iterations), (2048, RW_BLOCK, PI_ITERATIONS));
    }

    #[test]
    fn pi_estimates_and_rw_copies() {
        let pi = monte_carlo_pi(200_000);
        assert!((pi - std::f64::consts::PI).abs() < 0.05, "{pi}");
        let dir = std::env::temp_dir().join(format!("schedlab-rw-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("input");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&input, &data).unwrap();
        assert_eq!(sync_copy(&input, &dir.join("out-"), 4096, 1024).unwrap(), 4096);
        let copy = std::fs::read(dir.join(format!("out-{}", std::process::id()))).unwrap();
        assert_eq!(copy, data[..4096]);
        assert!(sync_copy(&input, &dir.join("out-"), 20_000, 1000).is_err(), "the input is too short");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
