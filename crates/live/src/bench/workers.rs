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

use std::hint::black_box;
use std::io::{self, Write};
use std::time::Duration;

use super::ipc::{Client, EndpointSpec, Server};
use super::{cvt, BenchError, Context, Result};

/// The arguments before a worker's own: `<exe> bench worker ...`.
pub const WORKER_COMMAND: [&str; 2] = ["bench", "worker"];

/// How many integers the server sorts per request by default: one bubble sort takes
/// about 12 ms on the 2-CPU development VM (release build: a median round trip of
/// 12.1 ms over a pipe, unloaded; [`sort_time`] measures it elsewhere).
pub const DEFAULT_SORT_LEN: usize = 4800;

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
}

impl Role {
    /// The process name (`comm`) the worker gives itself.
    pub fn comm(self) -> &'static str {
        match self {
            Role::Client => "sl-client",
            Role::Server => "sl-server",
            Role::Hog => "sl-hog",
            Role::PfsTest => "sl-pfs-test",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
            Role::Hog => "hog",
            Role::PfsTest => "pfs-test",
        }
    }
}

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
        }
    }

    /// The arguments after [`WORKER_COMMAND`].
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![self.role.name().to_string()];
        if let Some(e) = &self.endpoint {
            a.extend(["--endpoint".into(), e.to_arg()]);
        }
        match self.role {
            Role::Server => a.extend(["--sort-len".into(), self.sort_len.to_string()]),
            Role::Client => a.extend(["--rounds".into(), self.rounds.to_string()]),
            Role::Hog => {}
            Role::PfsTest => a.extend([
                "--work-ms".into(),
                ms_arg(self.work_ns),
                "--loops".into(),
                self.loops.to_string(),
                "--sleep-ms".into(),
                ms_arg(self.sleep_ns),
            ]),
        }
        if let Some(n) = self.nice {
            a.push(format!("--nice={n}"));
        }
        if let Some(c) = self.cpu {
            a.extend(["--cpu".into(), c.to_string()]);
        }
        a
    }

    /// The spec from [`to_args`](WorkerSpec::to_args)'s form.
    pub fn from_args(args: &[String]) -> std::result::Result<Self, String> {
        let mut it = args.iter().map(String::as_str);
        let role = match it.next() {
            Some("client") => Role::Client,
            Some("server") => Role::Server,
            Some("hog") => Role::Hog,
            Some("pfs-test") => Role::PfsTest,
            other => return Err(format!("the role must be client, server, hog or pfs-test, not {other:?}")),
        };
        let mut spec = WorkerSpec::new(role);
        while let Some(arg) = it.next() {
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
                "--nice" => spec.nice = Some(num(value)? as i32),
                "--cpu" => spec.cpu = Some(num(value)? as usize),
                _ => return Err(format!("unknown worker argument '{key}'")),
            }
        }
        if matches!(role, Role::Client | Role::Server) && spec.endpoint.is_none() {
            return Err(format!("a {} needs --endpoint", role.name()));
        }
        Ok(spec)
    }
}

/// The hidden `bench worker` subcommand: runs the worker `args` describe until it is
/// done (the client) or killed (the server when its client is gone; hogs never).
pub fn worker_main(args: &[String]) -> Result<()> {
    let spec = WorkerSpec::from_args(args).map_err(BenchError::Failed)?;
    set_comm(spec.role.comm()).ctx(|| "cannot set the process name".into())?;
    if let Some(nice) = spec.nice {
        set_nice(0, nice).ctx(|| format!("cannot set nice {nice} (needs root or CAP_SYS_NICE)"))?;
    }
    match spec.role {
        Role::Hog => hog(spec.cpu),
        Role::Server => server(&spec),
        Role::Client => client(&spec),
        Role::PfsTest => pfs_test(&spec),
    }
}

/// Nanoseconds as milliseconds, as short as exact: `2.3`, `100`.
fn ms_arg(ns: u64) -> String {
    format!("{}", ns as f64 / 1e6)
}

fn say(line: &str) -> Result<()> {
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
    let mut seed = 1u64;
    let mut bytes = Vec::with_capacity(spec.sort_len * 4);
    while server.wait_request().ctx(|| "cannot wait for a request".into())? {
        let mut v = random_ints(spec.sort_len, seed);
        seed += 1;
        bubble_sort(&mut v);
        bytes.clear();
        bytes.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        server.reply(&bytes).ctx(|| "cannot answer a request".into())?;
    }
    Ok(())
}

fn client(spec: &WorkerSpec) -> Result<()> {
    let mut client = Client::open(spec.endpoint.as_ref().expect("checked in from_args"))?;
    say("ready")?;
    for i in 0..spec.rounds {
        let start = monotonic_ns();
        client.round_trip().ctx(|| format!("round trip {i} failed"))?;
        say(&format!("t {}", monotonic_ns() - start))?;
    }
    say("done")
}

fn pfs_test(spec: &WorkerSpec) -> Result<()> {
    say("ready")?;
    let mut x = 0u64;
    for _ in 0..spec.loops {
        // Work A: count until this thread has run `work_ns` more.
        let until = thread_cpu_ns() + spec.work_ns;
        while thread_cpu_ns() < until {
            for _ in 0..1000 {
                x = black_box(x + 1);
            }
        }
        // Work B.
        std::thread::sleep(Duration::from_nanos(spec.sleep_ns));
    }
    black_box(x);
    say("done")
}

/// CLOCK_THREAD_CPUTIME_ID (the CPU time of the calling thread) in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is valid; the clock always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is valid; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

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
        let before = thread_cpu_ns();
        let mut x = 0u64;
        while thread_cpu_ns() < before + 1_000_000 {
            x = black_box(x + 1);
        }
        assert!(x > 0);
    }
}
