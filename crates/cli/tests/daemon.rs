//! `schedlab run` on the real kernel, as a user runs it: the configuration moves
//! a process named my-batch-job to CPU 1 with nice 10 within a second of its exec;
//! Ctrl-C restores it, and so does `schedlab restore` after a kill -9 (and the next
//! `run`); a manual renice wins; a reused pid is never touched; kernel threads are left
//! alone; `--dry-run` changes nothing; `explain` and `monitor` answer.
//!
//! Needs root and a machine with 2 CPUs online; fails with the reason otherwise. Each test
//! uses its own store, socket and process name, and kills what it started.
//!
//! **Nothing of the host is assumed.** The test process's own nice and CPUs (what its
//! children inherit, and what a restore must give back) are read at the start, so the
//! tests hold under `nice make test` and `taskset`; the batch class's nice and CPU are
//! chosen to differ from them ([`Batch`]). Waits are hang guards of tens of seconds, not
//! deadlines: how soon the daemon acts is printed here, never asserted (speed belongs to
//! the benchmarks: `bench deps` measures the boost's reaction). Tests that load a CPU or need the machine quiet take
//! [`exclusive`]; the others run beside each other under [`shared`].
#![cfg(target_os = "linux")]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SCHEDLAB: &str = env!("CARGO_BIN_EXE_schedlab");

/// The machine's quiet: tests that load it (a spinning real-time process, thousands of
/// processes, a busy pair) or need loads measured as light hold it alone; the others share
/// it. Under another test's load a daemon still reacts, only later: the waits below are
/// hang guards, not deadlines.
static QUIET: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held by a test that loads the machine or measures loads.
fn exclusive() -> std::sync::RwLockWriteGuard<'static, ()> {
    QUIET.write().unwrap_or_else(|e| e.into_inner())
}

/// Held by a test that neither loads the machine nor measures it.
fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    QUIET.read().unwrap_or_else(|e| e.into_inner())
}

/// How long a wait for the daemon may take before the test calls it hung: it acts within
/// its plan period (200 ms here) on a quiet machine, and far later beside a build on a
/// slow one.
const HANG: Duration = Duration::from_secs(30);

/// Fails with the reason unless this runs as root on a machine with 2 CPUs online (the
/// batch class moves a job to a CPU other than the test's own; the test's own affinity
/// may be one CPU).
fn require_root_and_two_cpus() {
    // SAFETY: no arguments.
    assert_eq!(unsafe { libc::geteuid() }, 0, "the daemon tests need root (BPF, changing other processes)");
    let online = schedlab_live::host::online_cpus().expect("read /sys/devices/system/cpu/online");
    assert!(
        online.cpus().len() >= 2,
        "the daemon tests move jobs between CPUs and need 2 online; this machine has {online}"
    );
}

/// This test process's nice and CPU list, read now: what every job it starts inherits,
/// and what a restore gives back.
fn own() -> (i64, String) {
    (nice(std::process::id()), affinity(std::process::id()))
}

/// What the tests' batch class sets, chosen to differ from what the test process runs
/// with, so that a change shows: a nice 5 away from its own, and one CPU that is not its
/// whole affinity.
#[derive(Clone, Copy, Debug)]
struct Batch {
    nice: i64,
    cpu: usize,
}

impl Batch {
    fn here() -> Batch {
        let (nice, cpus) = own();
        let online = schedlab_live::host::online_cpus().expect("the online CPUs");
        let cpu = *online.cpus().iter().rev().find(|&&c| cpus != c.to_string()).expect("2 CPUs online");
        Batch { nice: if nice <= 14 { nice + 5 } else { nice - 5 }, cpu }
    }

    /// The CPU as `Cpus_allowed_list` shows it.
    fn cpus(&self) -> String {
        self.cpu.to_string()
    }
}

/// A nice value that is none of `taken`: for a user's renice, a reload's new value.
fn other_nice(taken: &[i64]) -> i64 {
    (-5..=19).rev().find(|n| !taken.contains(n)).expect("a free nice value")
}

/// A directory for one test: config, store, socket, the renamed program.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("schedlab-daemon-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// A copy of `sleep` named `comm` (the kernel's comm is the file name, 15 bytes).
    fn program(&self, comm: &str) -> PathBuf {
        let p = self.path(comm);
        if !p.exists() {
            std::fs::copy("/bin/sleep", &p).unwrap();
        }
        p
    }

    /// The configuration with `comm` for my-batch-job (its class's CPU and nice
    /// those of [`Batch::here`]: the are CPU 1 and nice 10); learning, the model,
    /// boosting and slices off so that nothing else on the machine is touched, and
    /// `min_age_ms = 0`: these tests watch a rule act at exec.
    fn config(&self, comm: &str, extra: &str) -> PathBuf {
        let p = self.path("schedlab.toml");
        let b = Batch::here();
        std::fs::write(
            &p,
            format!(
                "[[rule]]\nmatch = {{ comm = \"{comm}\" }}\nclass = \"batch\"\n\n[class.batch]\ncpus = \"{}\"\nnice = {}\n\n\
                 [daemon]\nlearn = false\nmodel = false\nboost = false\nslices = false\nreplan_ms = 200\nmin_age_ms = 0\n{extra}",
                b.cpu, b.nice
            ),
        )
        .unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Spawning a program this process has just copied can fail with ETXTBSY while another
/// test thread is between a fork and an exec (the child holds the copy's descriptor
/// for that moment): such spawns are retried.
trait Launch {
    fn launch(&mut self) -> Child;
}

impl Launch for Command {
    fn launch(&mut self) -> Child {
        for _ in 0..100 {
            match self.spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                other => return other.unwrap_or_else(|e| panic!("spawn {:?}: {e}", self.get_program())),
            }
        }
        panic!("{:?} stayed busy (ETXTBSY) for a second", self.get_program())
    }
}

/// A child killed (with its process group, if it leads one) and reaped when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let pid = self.0.id() as i32;
        // SAFETY: signalling our own child's process group, only if it leads one.
        unsafe {
            if libc::getpgid(pid) == pid {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `schedlab run` and waits until its control socket answers.
fn start_daemon(s: &Scratch, config: &Path, extra: &[&str]) -> Killed {
    start_daemon_with(Command::new(SCHEDLAB), s, config, extra)
}

/// [`start_daemon`] from a command made by the caller (limits, environment). The daemon
/// may run on every online CPU, as a service does, whatever this test's own affinity
/// (under `taskset -c 0` a real-time job the test starts would otherwise share the one
/// CPU with the daemon that must bound it).
fn start_daemon_with(mut command: Command, s: &Scratch, config: &Path, extra: &[&str]) -> Killed {
    let online = schedlab_live::host::online_cpus().expect("the online CPUs");
    // SAFETY: sched_setaffinity in the child between fork and exec touches only that child.
    unsafe {
        command.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in online.cpus() {
                libc::CPU_SET(cpu, &mut set);
            }
            match libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let socket = s.path("schedlab.sock");
    let child = command
        .args(["run", "--quiet", "--config"])
        .arg(config)
        .arg("--store")
        .arg(s.path("schedlab.db"))
        .arg("--socket")
        .arg(&socket)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn schedlab run");
    let mut daemon = Killed(child);
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        if let Some(status) = daemon.0.try_wait().unwrap() {
            let mut err = String::new();
            daemon.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("schedlab run exited with {status} before answering: {err}");
        }
        assert!(start.elapsed() < HANG, "schedlab run did not open its socket in {HANG:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    daemon
}

/// Sends SIGINT and waits for the daemon (a hang guard); returns its stderr.
fn interrupt(mut daemon: Killed) -> String {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(daemon.0.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    while daemon.0.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < HANG, "schedlab run did not stop within {HANG:?} of SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut err = String::new();
    daemon.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(daemon.0.wait().unwrap().success(), "schedlab run failed: {err}");
    err
}

fn affinity(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_string()
}

fn nice(pid: u32) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit_once(')').unwrap().1.split_whitespace().nth(16).unwrap().parse().unwrap()
}

/// Waits until `pid` has the batch class's CPU and nice; returns how long that took.
fn wait_for_batch_settings(pid: u32, since: Instant) -> Duration {
    let b = Batch::here();
    loop {
        if affinity(pid) == b.cpus() && nice(pid) == b.nice {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < HANG,
            "after {HANG:?} process {pid} has CPUs {} and nice {}, not the class's {b:?}",
            affinity(pid),
            nice(pid)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The running daemon's statistics (`schedlab monitor --json --once`).
fn monitor_stats(socket: &Path) -> serde_json::Value {
    serde_json::from_str(&schedlab(&["monitor", "--json", "--once", "--socket", socket.to_str().unwrap()]))
        .expect("monitor prints JSON")
}

fn schedlab(args: &[&str]) -> String {
    let out = Command::new(SCHEDLAB).args(args).output().expect("run schedlab");
    assert!(out.status.success(), "schedlab {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn my_batch_job_moves_within_a_second_of_exec_and_ctrl_c_restores_it() {
    require_root_and_two_cpus();
    let _quiet = shared();
    let s = Scratch::new("ctrl-c");
    // The configuration, plus switches keeping the test to itself.
    let config = s.config("my-batch-job", "");
    let daemon = start_daemon(&s, &config, &[]);
    let (nice0, cpus0) = own();
    let exec = Instant::now();
    let job = Killed(Command::new(s.program("my-batch-job")).arg("30").launch());
    let pid = job.0.id();
    let took = wait_for_batch_settings(pid, exec);
    // How soon is the daemon's speed: printed, not asserted.
    eprintln!("my-batch-job got {:?} {took:?} after its exec", Batch::here());

    let socket = s.path("schedlab.sock");
    let explained = schedlab(&["explain", &pid.to_string(), "--socket", socket.to_str().unwrap()]);
    assert!(
        explained.contains("rule 1: comm=my-batch-job")
            && explained.contains(&format!("CPUs:   {}", Batch::here().cpus())),
        "{explained}"
    );
    let stats = monitor_stats(&socket);
    assert!(stats["processes"].as_array().unwrap().iter().any(|p| p["pid"] == pid), "{stats}");

    let err = interrupt(daemon);
    assert!(err.contains("restored 2 change(s)"), "{err}");
    assert_eq!(
        (nice(pid), affinity(pid)),
        (nice0, cpus0),
        "Ctrl-C gives back the original nice and affinity"
    );
}

/// SIGHUP reloads the configuration: a file that does not check leaves the one in
/// force running; one that does replaces it. Nothing is left changed at the end.
#[test]
fn sighup_reloads_a_good_configuration_and_keeps_the_one_in_force_on_a_bad_one() {
    require_root_and_two_cpus();
    let _quiet = shared();
    let s = Scratch::new("hup");
    let config = s.config("sd-hup-job", "");
    let job = Killed(Command::new(s.program("sd-hup-job")).arg("30").launch());
    let pid = job.0.id();
    let original = (affinity(pid), nice(pid));
    let daemon = start_daemon(&s, &config, &[]);
    wait_for_batch_settings(pid, Instant::now());
    let hangup = || {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(daemon.0.id() as i32, libc::SIGHUP) };
    };
    let good = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, "[class.batch]\nnice = 99\n").unwrap();
    hangup();
    std::thread::sleep(Duration::from_millis(500));
    assert!(std::os::unix::net::UnixStream::connect(s.path("schedlab.sock")).is_ok(), "still running");
    let b = Batch::here();
    assert_eq!(nice(pid), b.nice, "the configuration in force stays");

    let reloaded = other_nice(&[b.nice, original.1]);
    std::fs::write(&config, good.replace(&format!("nice = {}", b.nice), &format!("nice = {reloaded}")))
        .unwrap();
    hangup();
    let start = Instant::now();
    while nice(pid) != reloaded {
        assert!(start.elapsed() < HANG, "the reloaded class's nice {reloaded} after {HANG:?}: {}", nice(pid));
        std::thread::sleep(Duration::from_millis(10));
    }
    let err = interrupt(daemon);
    assert!(err.contains("nice = 99") || err.contains("99"), "the bad file's error is printed: {err}");
    assert!(err.contains("the configuration in force stays") && err.contains("SIGHUP: reloaded"), "{err}");
    assert_eq!((affinity(pid), nice(pid)), original);
}

/// `--metrics` serves the monitor's counters to Prometheus: the managed job counts,
/// the format ends as OpenMetrics asks.
#[test]
fn metrics_are_served_in_the_openmetrics_format() {
    use std::io::Write;
    require_root_and_two_cpus();
    let _quiet = shared();
    let s = Scratch::new("metrics");
    let config = s.config("sd-metrics-job", "");
    let job = Killed(Command::new(s.program("sd-metrics-job")).arg("30").launch());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let address = format!("127.0.0.1:{port}");
    let daemon = start_daemon(&s, &config, &["--metrics", &address]);
    wait_for_batch_settings(job.0.id(), Instant::now());
    let start = Instant::now();
    let text = loop {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        if text.contains("schedlab_managed_processes 1\n") || start.elapsed() > HANG {
            break text;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(text.contains("schedlab_managed_processes 1\n"), "{text}");
    assert!(text.contains("schedlab_changes_total 2\n"), "{text}");
    assert!(text.contains("schedlab_boost_reaction_seconds_count 0\n"), "{text}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    interrupt(daemon);
}

#[test]
fn a_short_lived_process_is_never_touched_and_a_long_lived_one_only_after_min_age() {
    require_root_and_two_cpus();
    let _quiet = shared();
    let s = Scratch::new("young");
    // The configuration with the default min_age_ms (0.5 s).
    let config = s.config("sd-young-job", "");
    let text = std::fs::read_to_string(&config).unwrap().replace("min_age_ms = 0\n", "");
    std::fs::write(&config, text).unwrap();
    let daemon = start_daemon(&s, &config, &[]);
    let socket = s.path("schedlab.sock");
    // Five jobs of 0.2 s: each matches the rule, none lives long enough to be changed.
    for _ in 0..5 {
        let mut job = Command::new(s.program("sd-young-job")).arg("0.2").launch();
        assert!(job.wait().unwrap().success());
    }
    std::thread::sleep(Duration::from_millis(400));
    let stats = monitor_stats(&socket);
    assert_eq!(stats["changes"], 0, "short-lived processes were changed: {stats}");
    // A long job: changed once it is 0.5 s old, not before. The job starts after `exec`,
    // so a state read before 400 ms from `exec` is one the job had before it was 400 ms
    // old: however slow the machine, it must be the job's own (the test's).
    let exec = Instant::now();
    let job = Killed(Command::new(s.program("sd-young-job")).arg("30").launch());
    let pid = job.0.id();
    let before = own();
    loop {
        let state = (nice(pid), affinity(pid));
        let read_by = exec.elapsed();
        if read_by >= Duration::from_millis(400) {
            break;
        }
        assert_eq!(state, before, "changed at most {read_by:?} after its exec");
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = wait_for_batch_settings(pid, exec);
    eprintln!("the long job changed {took:?} after its exec");
    let err = interrupt(daemon);
    assert!(err.contains("restored 2 change(s)"), "{err}");
}

#[test]
fn after_kill_9_schedlab_restore_and_the_next_run_give_everything_back() {
    require_root_and_two_cpus();
    let _quiet = shared();
    let s = Scratch::new("kill9");
    let config = s.config("sd-kill9-job", "");
    let original = (affinity(std::process::id()), nice(std::process::id()));
    let b = Batch::here();
    let store = s.path("schedlab.db");

    // kill -9, then `schedlab restore`.
    let mut daemon = start_daemon(&s, &config, &[]);
    let job = Killed(Command::new(s.program("sd-kill9-job")).arg("30").launch());
    wait_for_batch_settings(job.0.id(), Instant::now());
    daemon.0.kill().unwrap();
    daemon.0.wait().unwrap();
    assert_eq!(
        (affinity(job.0.id()), nice(job.0.id())),
        (b.cpus(), b.nice),
        "a killed daemon restores nothing"
    );
    let out = schedlab(&["restore", "--store", store.to_str().unwrap()]);
    assert!(out.contains("restored 2 change(s)"), "{out}");
    assert_eq!((affinity(job.0.id()), nice(job.0.id())), original);

    // kill -9, then the next `run` restores first.
    let mut daemon = start_daemon(&s, &config, &[]);
    let job2 = Killed(Command::new(s.program("sd-kill9-job")).arg("30").launch());
    wait_for_batch_settings(job2.0.id(), Instant::now());
    daemon.0.kill().unwrap();
    daemon.0.wait().unwrap();
    let daemon = start_daemon(&s, &s.config("sd-nothing-here", ""), &[]);
    let stats = monitor_stats(&s.path("schedlab.sock"));
    // Both jobs run: the second daemon found the first one at its start too.
    assert_eq!(stats["restored_at_start"], 4, "{stats}");
    for pid in [job.0.id(), job2.0.id()] {
        assert_eq!((affinity(pid), nice(pid)), original, "restored before anything else");
    }
    interrupt(daemon);
    let out = schedlab(&["restore", "--store", store.to_str().unwrap()]);
    assert!(out.starts_with("restored 0 change(s)"), "the next run left nothing pending: {out}");
}

#[test]
fn a_manual_renice_is_respected() {
    require_root_and_two_cpus();
    let _quiet = shared();
    let s = Scratch::new("renice");
    let config = s.config("sd-renice-job", "");
    let b = Batch::here();
    let manual = other_nice(&[b.nice, own().0]);
    let daemon = start_daemon(&s, &config, &[]);
    let job = Killed(Command::new(s.program("sd-renice-job")).arg("30").launch());
    let pid = job.0.id();
    wait_for_batch_settings(pid, Instant::now());
    let status =
        Command::new("renice").args(["-n", &manual.to_string(), "-p", &pid.to_string()]).output().unwrap();
    assert!(status.status.success());
    let socket = s.path("schedlab.sock");
    let start = Instant::now();
    loop {
        let out = schedlab(&["explain", &pid.to_string(), "--socket", socket.to_str().unwrap()]);
        if out.contains("released: someone else changed it") {
            break;
        }
        assert!(start.elapsed() < HANG, "not released {HANG:?} after the renice: {out}");
        std::thread::sleep(Duration::from_millis(100));
    }
    interrupt(daemon);
    assert_eq!(nice(pid), manual, "the user's nice stays after the daemon stops");
    assert_eq!(affinity(pid), b.cpus(), "released: schedlab does not touch it again, not even to restore");
}

#[test]
fn a_reused_pid_is_never_touched() {
    require_root_and_two_cpus();
    let _quiet = shared();
    let s = Scratch::new("reuse");
    let (nice0, _) = own();
    let journaled = other_nice(&[nice0]);
    let store_path = s.path("schedlab.db");
    // A journal entry as a killed daemon leaves it for a process that has exited; its
    // pid now belongs to another process (this sleep), told apart by the start time.
    let other = Killed(Command::new("sleep").arg("30").launch());
    let pid = other.0.id();
    let start_time: u64 = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap()
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    let store = schedlab_store::Store::open(&store_path).unwrap();
    let id = store
        .journal_insert(&schedlab_store::Change {
            time_unix_ns: 0,
            target: schedlab_store::ProcessKey { pid: schedlab_model::Pid(pid), start_time: start_time - 1 },
            what: schedlab_store::Setting::Nice,
            old_value: journaled.to_string(),
            new_value: Batch::here().nice.to_string(),
            boot_id: String::new(),
        })
        .unwrap();
    store.journal_mark_applied(id).unwrap();
    drop(store);
    let out = schedlab(&["restore", "--store", store_path.to_str().unwrap()]);
    assert!(out.contains("restored 0 change(s); 1 of processes gone"), "{out}");
    assert_eq!(nice(pid), nice0, "the process now holding the pid keeps its nice");
}

#[test]
fn kernel_threads_are_left_alone_and_a_dry_run_changes_nothing() {
    require_root_and_two_cpus();
    let _quiet = shared();
    let s = Scratch::new("dry");
    let (nice0, _) = own();
    let all = Batch::here().nice;
    // A catch-all rule: every user process matches, no kernel thread does.
    let config = s.path("catch-all.toml");
    std::fs::write(
        &config,
        format!("[[rule]]\nmatch = {{ comm = \"*\" }}\nclass = \"all\"\n[class.all]\nnice = {all}\n[daemon]\nlearn = false\nmodel = false\nboost = false\nslices = false\n"),
    )
    .unwrap();
    let job = Killed(Command::new(s.program("sd-dry-job")).arg("30").launch());
    let out = Command::new(SCHEDLAB)
        .args(["run", "--dry-run", "--duration", "2s", "--config"])
        .arg(&config)
        .arg("--store")
        .arg(s.path("schedlab.db"))
        .arg("--socket")
        .arg(s.path("schedlab.sock"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("would set nice {all} of {} (sd-dry-job)", job.0.id())), "{text}");
    assert_eq!(nice(job.0.id()), nice0, "a dry run changes nothing");
    for line in text.lines().filter(|l| l.contains("would ")) {
        let pid: u32 = line.split(" of ").nth(1).and_then(|r| r.split(' ').next()).unwrap().parse().unwrap();
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let flags: u64 = stat.rsplit_once(')').unwrap().1.split_whitespace().nth(6).unwrap().parse().unwrap();
        assert_eq!(flags & 0x0020_0000, 0, "kernel thread {pid} was in a decision: {line}");
        assert!(pid != 1, "pid 1 was in a decision: {line}");
    }
}

/// The daemon hands out nothing an unprivileged process could not have had: a writer of
/// user nobody that a root `SCHED_FIFO` reader waits on is raised (to nice −20) but
/// never runs real time; a child it forks while raised keeps none of it; its raise is
/// gone right after its requester exits; a process of nobody whose `kill()` of a root
/// waiter is refused is never anyone's provider. (crates/cli/tests/scripts/hostile.py.)
#[test]
fn an_unprivileged_provider_gets_no_real_time_and_passes_nothing_on() {
    require_root_and_two_cpus();
    let _quiet = exclusive();
    let s = Scratch::new("hostile");
    let config = s.path("boost.toml");
    std::fs::write(
        &config,
        "[daemon]\nlearn = false\nmodel = false\nslices = false\nboost = true\nmin_age_ms = 0\n",
    )
    .unwrap();
    // nobody must reach the FIFO.
    std::fs::set_permissions(&s.0, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let daemon = start_daemon(&s, &config, &[]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scripts/hostile.py");
    let out = Command::new("timeout").args(["20", "python3", script]).arg(s.path("fifo")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let value = |key: &str| -> u64 {
        text.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {text:?}"))
            .parse()
            .unwrap()
    };
    eprintln!("{text}");
    assert!(value("boosted") >= 20, "the writer was raised while the waiter waited: {text}");
    assert_eq!(value("rt_seen"), 0, "never real time: {text}");
    assert_eq!(value("bad_children"), 0, "no child kept a raise: {text}");
    assert_eq!(value("left_raised"), 0, "the raise ended with its requester: {text}");
    assert_eq!(value("refused"), 100, "{text}");
    assert_eq!(value("killer_raised"), 0, "a refused kill makes no provider: {text}");
    let err = interrupt(daemon);
    assert!(err.contains("restored"), "{err}");
}

/// Faults: the daemon killed with SIGKILL at 20 pseudo-random instants while processes
/// come and go, each time followed by `schedlab restore`: every thread of the
/// long-lived processes has its own values back (a thread's own nice included), and a
/// user's renice made after the kill stays.
#[test]
fn killed_at_random_instants_the_daemon_leaves_nothing_changed_after_restore() {
    require_root_and_two_cpus();
    let _quiet = exclusive();
    let s = Scratch::new("faults");
    let (nice0, _) = own();
    // The jobs' second thread keeps a nice of its own; a user renices a main thread.
    let thread_own = other_nice(&[nice0, Batch::here().nice]);
    let users = other_nice(&[nice0, Batch::here().nice, thread_own]);
    let config = s.config("sd-fault-job", "");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scripts/fault_job.py");
    let mut jobs = Vec::new();
    let mut threads = Vec::new();
    for _ in 0..4 {
        let mut job = Killed(
            Command::new("python3").arg(script).arg(thread_own.to_string()).stdout(Stdio::piped()).launch(),
        );
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(job.0.stdout.as_mut().unwrap()), &mut line)
            .unwrap();
        let ids: Vec<u32> = line.split_whitespace().map(|w| w.parse().unwrap()).collect();
        threads.push((ids[0], ids[1]));
        jobs.push(job);
    }
    let all_cpus = affinity(std::process::id());
    let thread_nice = |tid: u32| -> i64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/task/{tid}/stat", tid)).unwrap_or_default();
        stat.rsplit_once(')').map_or(i64::MIN, |r| r.1.split_whitespace().nth(16).unwrap().parse().unwrap())
    };
    // Churn: short jobs of the class, exec'd all along.
    let churn_program = s.program("sd-fault-job");
    let churn = Killed(
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "while :; do {} 0.05 & {} 0.02; done",
                churn_program.display(),
                churn_program.display()
            ))
            .process_group(0)
            .launch(),
    );
    let mut seed: u64 = (std::process::id() as u64).wrapping_mul(6_364_136_223_846_793_005) | 1;
    let mut next = |range: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % range
    };
    let store = s.path("schedlab.db");
    for round in 0..20 {
        let mut daemon = start_daemon(&s, &config, &[]);
        std::thread::sleep(Duration::from_millis(next(600)));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(daemon.0.id() as i32, libc::SIGKILL) };
        daemon.0.wait().unwrap();
        // A user's change after the kill, on one job's main thread in every third round.
        let user = (round % 3 == 0).then(|| threads[next(threads.len() as u64) as usize].0);
        if let Some(pid) = user {
            // SAFETY: no memory arguments.
            assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, pid, users as i32) }, 0);
        }
        let out = schedlab(&["restore", "--store", store.to_str().unwrap()]);
        let count = |before: &str| -> usize {
            let words: Vec<&str> = out.split_whitespace().collect();
            words.windows(2).find(|w| w[1].starts_with(before)).and_then(|w| w[0].parse().ok()).unwrap_or(0)
        };
        // Nice and CPUs of each job: written back, or kept where the user changed them.
        assert!(
            count("change") + count("kept") >= 2 * threads.len(),
            "round {round}: the daemon had changed the jobs: {out}"
        );
        for &(pid, own) in &threads {
            let want = if Some(pid) == user { users } else { nice0 };
            assert_eq!(thread_nice(pid), want, "round {round}: main thread of {pid} after restore ({out})");
            assert_eq!(
                thread_nice(own),
                thread_own,
                "round {round}: thread {own} keeps its own nice ({out})"
            );
            assert_eq!(affinity(pid), all_cpus, "round {round}: {pid}'s CPUs ({out})");
            let own_cpus = std::fs::read_to_string(format!("/proc/{pid}/task/{own}/status")).unwrap();
            assert!(
                own_cpus.contains(&format!("Cpus_allowed_list:\t{all_cpus}")),
                "round {round}: thread {own}"
            );
        }
        if let Some(pid) = user {
            // The user puts it back for the next round.
            // SAFETY: no memory arguments.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, pid, nice0 as i32) };
        }
    }
    drop(churn);
}

/// Soak: 2,000 long-lived processes of a class and a stream of short-lived ones, under a
/// daemon limited to 1,024 descriptors: all long-lived ones managed, the daemon's
/// memory and descriptors flat once warm, everything restored at the end.
#[test]
fn thousands_of_processes_under_a_descriptor_limit_are_all_managed_with_flat_resources() {
    require_root_and_two_cpus();
    let _quiet = exclusive();
    let s = Scratch::new("soak");
    let (nice0, _) = own();
    let config = s.config("sd-soak-job", "");
    // The default plan period (1 s): the cost of a plan grows with the processes managed.
    let config_text = std::fs::read_to_string(&config)
        .unwrap()
        .replace(&format!("cpus = \"{}\"\n", Batch::here().cpu), "")
        .replace("replan_ms = 200\n", "");
    std::fs::write(&config, config_text).unwrap();
    let program = s.program("sd-soak-job");
    let long: Vec<Killed> = (0..2000).map(|_| Killed(Command::new(&program).arg("300").launch())).collect();
    let churn = Killed(
        Command::new("sh")
            .arg("-c")
            .arg(format!("while :; do {p} 0.01 & {p} 0.01 & {p} 0.02; done", p = program.display()))
            .process_group(0)
            .launch(),
    );
    let mut command = Command::new(SCHEDLAB);
    // SAFETY: setrlimit in the child between fork and exec touches only that child.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 1024, rlim_max: 1024 };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let daemon = start_daemon_with(command, &s, &config, &[]);
    let socket = s.path("schedlab.sock");
    let managed = || -> usize {
        let stats = monitor_stats(&socket);
        let pids: std::collections::HashSet<u64> = long.iter().map(|k| k.0.id() as u64).collect();
        stats["processes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["class"] == "batch" && pids.contains(&p["pid"].as_u64().unwrap()))
            .count()
    };
    let start = Instant::now();
    while managed() < long.len() {
        assert!(start.elapsed() < 4 * HANG, "{} of {} managed after {:?}", managed(), long.len(), 4 * HANG);
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(long.iter().all(|k| nice(k.0.id()) == Batch::here().nice));
    let usage = || {
        let status = std::fs::read_to_string(format!("/proc/{}/status", daemon.0.id())).unwrap();
        let rss: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap();
        let fds = std::fs::read_dir(format!("/proc/{}/fd", daemon.0.id())).unwrap().count();
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", daemon.0.id())).unwrap();
        let fields: Vec<u64> =
            stat.rsplit_once(')').unwrap().1.split_whitespace().map(|f| f.parse().unwrap_or(0)).collect();
        // utime + stime (fields 14 and 15), clock ticks.
        (rss, fds, fields[11] + fields[12])
    };
    std::thread::sleep(Duration::from_secs(5));
    let warm = usage();
    std::thread::sleep(Duration::from_secs(15));
    let end = usage();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    eprintln!(
        "daemon RSS {} → {} KiB, descriptors {} → {}, CPU {:.1} % of one CPU over 15 s",
        warm.0,
        end.0,
        warm.1,
        end.1,
        (end.2 - warm.2) as f64 / hz / 15.0 * 100.0
    );
    assert!(end.0 <= warm.0 + warm.0 / 10 + 2048, "RSS grew: {warm:?} → {end:?}");
    assert!(end.1 <= warm.1 + 8 && end.1 < 512, "descriptors grew: {warm:?} → {end:?}");
    assert_eq!(managed(), long.len(), "still all managed");
    drop(churn);
    let err = interrupt(daemon);
    assert!(err.contains("restored"), "{err}");
    let raised: Vec<u32> = long.iter().map(|k| k.0.id()).filter(|&p| nice(p) != nice0).collect();
    assert!(raised.is_empty(), "{} processes keep a nice after the restore", raised.len());
}

#[test]
fn a_blocked_client_boosts_its_server_and_the_confidence_is_kept() {
    require_root_and_two_cpus();
    let _quiet = exclusive();
    let s = Scratch::new("boost");
    let config = s.path("boost.toml");
    std::fs::write(&config, "[daemon]\nlearn = false\nmodel = false\nslices = false\nboost = true\n")
        .unwrap();
    let daemon = start_daemon(&s, &config, &[]);
    // A shell server that computes a while per line, piped into a nice -20 client that
    // blocks reading: the client waits on the pipe the server writes.
    let server = "while :; do i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; echo x; done";
    let pair = Killed(
        Command::new("sh")
            .arg("-c")
            .arg(format!("({server}) | nice -n -20 sh -c 'while read l; do :; done'"))
            .process_group(0)
            .launch(),
    );
    let socket = s.path("schedlab.sock");
    let start = Instant::now();
    // The client blocks again as soon as it has read a line, so the boost lingers
    // across lines (one raise); the server wakes the client at every line, and each
    // such wake-up rewards its confidence.
    let boosts = loop {
        let stats = monitor_stats(&socket);
        let n = stats["boosts_total"].as_u64().unwrap();
        if n >= 1 {
            break n;
        }
        assert!(start.elapsed() < HANG, "no boosts after {HANG:?}: {stats}");
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_secs(1));
    eprintln!("{boosts} boosts");
    interrupt(daemon);
    drop(pair);
    let store = schedlab_store::Store::open(s.path("schedlab.db")).unwrap();
    let kept = store.confidences().unwrap();
    let server_pipe = kept.iter().find(|c| c.program.ends_with("sh") && c.kind == "pipe");
    assert!(
        server_pipe.is_some_and(|c| c.confidence > 20),
        "the server was rewarded and that is kept: {kept:?}"
    );
}

/// The policy of `pid` (`sched_getscheduler`).
fn policy(pid: u32) -> i32 {
    // SAFETY: no memory arguments.
    unsafe { libc::sched_getscheduler(pid as i32) }
}

#[test]
fn a_real_time_class_is_bounded_and_a_cpuset_class_gets_its_cgroup() {
    require_root_and_two_cpus();
    let _quiet = exclusive();
    let s = Scratch::new("rt");
    let b = Batch::here();
    let config = s.path("rt.toml");
    std::fs::write(
        &config,
        format!(
            "[[rule]]\nmatch = {{ comm = \"sd-rt-hog\" }}\nclass = \"rt\"\n\
             [class.rt]\ncpus = \"{}\"\ncpuset = true\npolicy = \"fifo\"\nrt_priority = 5\nrt_max_ms = 100\n\
             [daemon]\nlearn = false\nmodel = false\nboost = false\nslices = false\nreplan_ms = 200\nmin_age_ms = 0\n",
            b.cpu
        ),
    )
    .unwrap();
    let original_cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let daemon = start_daemon(&s, &config, &[]);
    // A busy loop named sd-rt-hog: a copy of the shell, spinning (bounded: killed below).
    let shell = s.path("sd-rt-hog");
    std::fs::copy("/bin/dash", &shell).unwrap();
    let hog = Killed(Command::new(&shell).args(["-c", "while :; do :; done"]).launch());
    let pid = hog.0.id();
    let start = Instant::now();
    while policy(pid) != libc::SCHED_FIFO {
        assert!(start.elapsed() < HANG, "never made SCHED_FIFO");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The policy comes first, then the plan: the cgroup, then the CPUs.
    loop {
        let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
        if cgroup.contains("schedlab") && cgroup.contains("/rt") && affinity(pid) == b.cpus() {
            break;
        }
        assert!(start.elapsed() < HANG, "not in the class's cpuset cgroup on CPU {}: {cgroup}", b.cpu);
        std::thread::sleep(Duration::from_millis(5));
    }
    // It spins: over 100 ms a second, it loses the real-time policy.
    while policy(pid) == libc::SCHED_FIFO {
        assert!(start.elapsed() < HANG, "a spinning real-time process was not bounded");
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!("real time taken back {:?} after the exec", start.elapsed());
    let explained =
        schedlab(&["explain", &pid.to_string(), "--socket", s.path("schedlab.sock").to_str().unwrap()]);
    assert!(explained.contains("used more than its bound of 100 ms"), "{explained}");
    interrupt(daemon);
    assert_eq!(policy(pid), libc::SCHED_OTHER);
    let back = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    assert!(!back.contains("schedlab"), "moved back out of schedlab's cgroup: {back}");
    assert_eq!(back, original_cgroup, "back where it started (the test's own cgroups)");
    assert!(
        !Path::new("/sys/fs/cgroup/cpuset/schedlab/rt").exists()
            && !Path::new("/sys/fs/cgroup/unified/schedlab.slice/rt").exists(),
        "the class's cgroup is removed"
    );
}

#[test]
fn processes_joined_by_a_pipe_share_a_cpu() {
    require_root_and_two_cpus();
    let _quiet = exclusive();
    let s = Scratch::new("colocate");
    let config = s.path("pair.toml");
    std::fs::write(
        &config,
        "[[rule]]\nmatch = { comm = \"sd-pair\" }\nclass = \"pair\"\n[class.pair]\nplan = \"fair-share\"\n\
         [daemon]\nlearn = false\nmodel = false\nboost = false\nslices = false\nreplan_ms = 200\ncolocate = true\n",
    )
    .unwrap();
    let daemon = start_daemon(&s, &config, &[]);
    // Three processes named sd-pair: the shell, a light writer and the reader it wakes.
    let shell = s.path("sd-pair");
    std::fs::copy("/bin/dash", &shell).unwrap();
    let writer = "while :; do i=0; while [ $i -lt 100 ]; do i=$((i+1)); done; echo x; sleep 0.005; done";
    let pair = Killed(
        Command::new(&shell)
            .arg("-c")
            .arg(format!("({writer}) | {} -c 'while read l; do :; done'", shell.display()))
            .process_group(0)
            .launch(),
    );
    let socket = s.path("schedlab.sock");
    let start = Instant::now();
    let (a, b) = loop {
        let children: Vec<u32> = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", pair.0.id()))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if let [a, b] = children[..] {
            // The one that moved says why.
            let why = |p: u32| schedlab(&["explain", &p.to_string(), "--socket", socket.to_str().unwrap()]);
            let moved = why(a).contains("communication-aware") || why(b).contains("communication-aware");
            let one_cpu = |p: u32| {
                schedlab_live::settings::CpuSet::parse(&affinity(p)).is_some_and(|c| c.cpus().len() == 1)
            };
            if moved && affinity(a) == affinity(b) && one_cpu(a) {
                break (a, b);
            }
        }
        assert!(start.elapsed() < HANG, "not co-located after {HANG:?}: {children:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("{a} and {b} share CPU {} after {:?}", affinity(a), start.elapsed());
    interrupt(daemon);
    drop(pair);
}

/// A daemon with learning on and nothing else, its scratch directory, the test's own
/// nice and the one the class `background` gives (below the test's: a learned class
/// only lowers).
struct Learning {
    s: Scratch,
    nice0: i64,
    lowered: i64,
    daemon: Killed,
}

impl Learning {
    /// Starts it in a scratch directory of `name`, with `extra` in its `[daemon]` table.
    fn start(name: &str, extra: &str) -> Learning {
        let s = Scratch::new(name);
        let (nice0, _) = own();
        assert!(nice0 < 19, "the test runs at nice 19: there is no lower nice to learn into");
        let lowered = (nice0 + 5).min(19);
        let config = s.path("learn.toml");
        std::fs::write(
            &config,
            format!(
                "[class.background]\nnice = {lowered}\n\
                 [daemon]\nlearn = true\nmodel = false\nboost = false\nslices = false\n{extra}\n"
            ),
        )
        .unwrap();
        let daemon = start_daemon(&s, &config, &[]);
        Learning { s, nice0, lowered, daemon }
    }
}

/// `learn = true`: a CPU-bound program run four times (each too short for `min_age_ms`
/// and untouched) is known by its fifth exec, which gets the `background` class at once;
/// `explain` says it was learned; the habit is kept in the store; Ctrl-C restores.
#[test]
fn a_program_learned_cpu_bound_is_lowered_at_its_next_exec() {
    require_root_and_two_cpus();
    let _quiet = exclusive();
    let Learning { s, nice0, lowered, daemon } = Learning::start("learn", "min_age_ms = 1000");
    // A busy shell loop under a name and path of its own: runnable all its life.
    let hog = s.path("sd-learn-hog");
    std::fs::copy("/bin/dash", &hog).unwrap();
    let spin = |loops: u32| {
        Command::new(&hog)
            .arg("-c")
            .arg(format!("i=0; while [ $i -lt {loops} ]; do i=$((i+1)); done"))
            .launch()
    };
    for _ in 0..4 {
        let mut job = spin(200_000);
        assert!(job.wait().unwrap().success());
    }
    // Timed from the spawn's return (the exec done: the standard library waits for it).
    let job = Killed(spin(50_000_000));
    let exec = Instant::now();
    let pid = job.0.id();
    while nice(pid) != lowered {
        assert!(exec.elapsed() < HANG, "the fifth run keeps nice {} after {HANG:?}", nice(pid));
        std::thread::sleep(Duration::from_micros(200));
    }
    eprintln!("the fifth run of a learned hog lowered at most {:?} after its exec", exec.elapsed());
    let socket = s.path("schedlab.sock");
    let explained = schedlab(&["explain", &pid.to_string(), "--socket", socket.to_str().unwrap()]);
    assert!(explained.contains(&format!("learned: {} runs CPU-bound", hog.display())), "{explained}");
    let err = interrupt(daemon);
    assert!(err.contains("restored"), "{err}");
    assert_eq!(nice(pid), nice0, "Ctrl-C gives the nice back");
    let kept = schedlab_store::Store::open(s.path("schedlab.db")).unwrap().load_habits().unwrap();
    let habit = kept.get(&hog.display().to_string()).copied();
    // Four CPU-bound lives, decayed (1 + d + d² + d³ = 3.53), all of them CPU-bound.
    assert!(habit.is_some_and(|h| h.lives > 3.5 && h.cpu_bound == h.lives), "kept: {habit:?}");
}

/// `learn = true`: a busy loop under a name never seen is lowered once it has run
/// CPU-bound for `min_age_ms`, and explained so; stopped (`SIGSTOP`: runnable no more),
/// it gets its nice back at a planning; a busy loop with a display library mapped is
/// never lowered, and explained so.
#[test]
fn a_new_hog_is_lowered_while_it_runs_cpu_bound_and_one_that_draws_never() {
    require_root_and_two_cpus();
    let _quiet = exclusive();
    let Learning { s, nice0, lowered, daemon } = Learning::start("busy", "replan_ms = 200");
    let socket = s.path("schedlab.sock");
    let explain = |pid: u32| schedlab(&["explain", &pid.to_string(), "--socket", socket.to_str().unwrap()]);
    let hog = s.path(&format!("sd-busy-{}", std::process::id()));
    std::fs::copy("/bin/dash", &hog).unwrap();
    let exec = Instant::now();
    let job = Killed(Command::new(&hog).args(["-c", "while :; do :; done"]).launch());
    let pid = job.0.id();
    while nice(pid) != lowered {
        assert!(exec.elapsed() < HANG, "the hog keeps nice {} after {HANG:?}", nice(pid));
        std::thread::sleep(Duration::from_millis(5));
    }
    eprintln!("a new hog lowered {:?} after its exec", exec.elapsed());
    assert!(explain(pid).contains("runs CPU-bound now (runnable"), "{}", explain(pid));
    // Stopped, it is runnable no more: it gets back what it had.
    // SAFETY: a signal to the test's own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGSTOP) }, 0);
    let stopped = Instant::now();
    while nice(pid) != nice0 {
        assert!(stopped.elapsed() < HANG, "the stopped hog keeps nice {} after {HANG:?}", nice(pid));
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(explain(pid).contains("no longer runs CPU-bound"), "{}", explain(pid));
    // SAFETY: as above.
    unsafe { libc::kill(pid as i32, libc::SIGCONT) };
    drop(job);
    // A busy loop with a display library mapped (a file under libX11's name, as the
    // loader maps the library): left alone, and explained so.
    let lib = s.path("libX11.so.6");
    std::fs::write(&lib, [0u8; 4096]).unwrap();
    let game = Killed(
        Command::new("python3")
            .args(["-c", "import mmap, sys\nf = open(sys.argv[1], 'rb')\nm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\nwhile True: pass\n"])
            .arg(&lib)
            .launch(),
    );
    let gpid = game.0.id();
    let started = Instant::now();
    while !explain(gpid).contains("draws for a person") {
        assert!(started.elapsed() < HANG, "not seen drawing after {HANG:?}: {}", explain(gpid));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(nice(gpid), nice0, "a process that draws is never lowered");
    drop(game);
    interrupt(daemon);
}
