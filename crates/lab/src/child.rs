//! The one way the experiments run a child process: [`ChildGroup`], a child leading its
//! own process group, whose standard output (if piped) is read line by line with
//! deadlines, which is waited for by deadline (woken by a pidfd the moment it exits, so
//! that exits can be timed) with its resource usage and that of the descendants it
//! reaped ([`Exit`], from `wait4`), and which is killed with its whole group and reaped
//! on a time limit, a stop, an error or a panic: when it drops, at the latest.
//!
//! [`guard_command`] prepares the benchmarks' commands beside it: a death signal, the
//! IPC signals blocked, inherited descriptors, a nice value.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::bench::{cvt, ipc, BenchError, ChildProblem, Context, Result};

/// How often a wait looks at its stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);
/// How often a wait looks for the exit of a child it has no pidfd of (a kernel before
/// 5.3).
const NO_PIDFD_CHECK: Duration = Duration::from_millis(5);

/// How a child ended, and what it and the descendants it reaped used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exit {
    /// How it ended.
    pub status: ExitStatus,
    /// From just before the spawn to the moment the exit was seen.
    pub wall_ns: u64,
    /// User CPU time of the child and the descendants it waited for.
    pub user_ns: u64,
    /// System CPU time, likewise.
    pub sys_ns: u64,
    /// Voluntary context switches of the child and the descendants it waited for.
    pub nvcsw: u64,
    /// Involuntary context switches, likewise.
    pub nivcsw: u64,
}

impl Exit {
    /// Whether the child exited with status 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// User plus system CPU time.
    pub fn cpu_ns(&self) -> u64 {
        self.user_ns + self.sys_ns
    }

    /// The exit as words, for errors.
    pub fn describe(&self) -> String {
        if let Some(code) = self.status.code() {
            format!("exited with status {code}")
        } else if let Some(signal) = self.status.signal() {
            format!("was killed by signal {signal}")
        } else {
            format!("ended with wait status {:#x}", self.status.into_raw())
        }
    }
}

/// Where a child is: running (or exited but not yet reaped), reaped, or lost to a
/// failed wait (nothing left to wait for or kill: its pid may be another's by now).
#[derive(Clone, Copy, Debug)]
enum State {
    Running,
    Exited(Exit),
    Lost,
}

/// Where a child spawned by [`ChildGroup::spawn`] is scheduled among other processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement<'a> {
    /// Where this process is: its session (autogroup) and cgroups.
    Inherited,
    /// The cgroup whose directory this is (v1 or v2), joined before the exec, so that
    /// none of its threads ever runs elsewhere.
    Cgroup(&'a Path),
    /// A session of its own (`setsid`) whose autogroup has nice `autogroup_nice`: on a
    /// machine with autogroups (`kernel.sched_autogroup_enabled`), the weight of all its
    /// fair threads against other sessions' (each autogroup weighs as one task of its
    /// nice). Real-time threads are not weighed: autogroups leave them in the root
    /// group's real-time queue.
    Session { autogroup_nice: i32 },
}

/// A child process leading its own process group; dropping it kills the group and
/// reaps the child unless it was reaped already.
pub(crate) struct ChildGroup {
    pid: libc::pid_t,
    /// Wakes a wait as soon as the child exits; `None` where pidfds are missing.
    pidfd: Option<OwnedFd>,
    /// Its standard output, if piped.
    out: Option<Lines>,
    /// Just before the spawn.
    started: Instant,
    /// What it is called in messages.
    name: String,
    state: State,
}

impl ChildGroup {
    /// Starts `cmd` as the leader of a new process group, called `name` in messages
    /// ("the {name}"); its standard output, if piped, is read with
    /// [`ChildGroup::line`]. Piped standard input and error are closed.
    pub(crate) fn start(cmd: &mut Command, name: &str) -> Result<ChildGroup> {
        cmd.process_group(0);
        ChildGroup::start_leader(cmd, name)
    }

    /// [`ChildGroup::start`] in a session of its own (`setsid`; on a kernel with
    /// autogroups, an autogroup of its own at nice `autogroup_nice`), as a program
    /// started from its own terminal is.
    pub(crate) fn start_in_new_session(
        cmd: &mut Command,
        name: &str,
        autogroup_nice: i32,
    ) -> Result<ChildGroup> {
        new_session_at_exec(cmd, autogroup_nice);
        ChildGroup::start_leader(cmd, name)
    }

    /// [`ChildGroup::start`] of a `cmd` that makes itself a process group's leader.
    fn start_leader(cmd: &mut Command, name: &str) -> Result<ChildGroup> {
        let started = Instant::now();
        let mut child = cmd.spawn().map_err(|e| {
            let line: Vec<String> = std::iter::once(cmd.get_program())
                .chain(cmd.get_args())
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let hint =
                if e.kind() == io::ErrorKind::NotFound { " (is it installed and on PATH?)" } else { "" };
            BenchError::io(format!("cannot start {}{hint}", line.join(" ")), e)
        })?;
        let pid = libc::pid_t::try_from(child.id()).expect("pids fit pid_t");
        // Unreaped, the pid cannot be reused: the pidfd is this child's.
        let pidfd = schedlab_live::process::pidfd_open(schedlab_model::Pid(child.id())).ok();
        let out = child.stdout.take().map(Lines::new);
        // std's Child neither waits nor kills when dropped: this guard reaps it with wait4.
        drop(child);
        Ok(ChildGroup { pid, pidfd, out, started, name: name.to_string(), state: State::Running })
    }

    /// Starts `program args` ([`ChildGroup::start`], called `program`) reading nothing,
    /// its standard output and error sent to `out` (a file) or nowhere, placed as
    /// `placement` says.
    pub(crate) fn spawn(
        program: &str,
        args: &[String],
        out: Option<File>,
        placement: Placement,
    ) -> Result<ChildGroup> {
        let mut cmd = Command::new(program);
        cmd.args(args).stdin(Stdio::null());
        match out {
            Some(f) => {
                let err = f.try_clone().ctx(|| "cannot duplicate a file".into())?;
                cmd.stdout(f).stderr(err);
            }
            None => {
                cmd.stdout(Stdio::null()).stderr(Stdio::null());
            }
        }
        match placement {
            Placement::Inherited => ChildGroup::start(&mut cmd, program),
            Placement::Cgroup(dir) => {
                join_cgroup_at_exec(&mut cmd, dir)?;
                ChildGroup::start(&mut cmd, program)
            }
            // A new session is a new process group too (and setsid refuses a group's leader).
            Placement::Session { autogroup_nice } => {
                ChildGroup::start_in_new_session(&mut cmd, program, autogroup_nice)
            }
        }
    }

    /// Its pid, which is also its process group's id.
    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The next line it writes, by `deadline`; `what` (what is being done) starts the
    /// errors.
    pub(crate) fn line(&mut self, deadline: Instant, what: &str) -> Result<String> {
        let Some(out) = self.out.as_mut() else {
            return Err(self.error(what, ChildProblem::NotPiped));
        };
        match out.next(deadline) {
            Ok(Some(line)) => Ok(line),
            Ok(None) => {
                let problem = match self.wait_by(deadline) {
                    Ok(Some(exit)) => ChildProblem::Exited(exit.status),
                    Ok(None) | Err(_) => ChildProblem::ClosedOutput,
                };
                Err(self.error(what, problem))
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => Err(self.error(what, ChildProblem::Silent)),
            Err(e) => Err(e).ctx(|| format!("{what}: cannot read from the {}", self.name)),
        }
    }

    /// Reads the next line by `deadline` and fails unless it is `want`.
    pub(crate) fn expect_line(&mut self, want: &str, deadline: Instant, what: &str) -> Result<()> {
        let line = self.line(deadline, what)?;
        if line != want {
            return Err(self.error(what, ChildProblem::Said { line, want: want.to_string() }));
        }
        Ok(())
    }

    /// The error of this child having done `problem` while `what` was being done.
    pub(crate) fn error(&self, what: &str, problem: ChildProblem) -> BenchError {
        BenchError::Child { what: what.to_string(), name: self.name.clone(), problem }
    }

    /// Reaps it if it has exited, without blocking: its exit (the same again once
    /// reaped), `None` while it runs.
    pub(crate) fn try_wait(&mut self) -> Result<Option<Exit>> {
        self.reap(libc::WNOHANG)
    }

    /// Waits for the exit by `deadline`, woken by the exit itself: the exit, `None` if
    /// it still runs then.
    pub(crate) fn wait_by(&mut self, deadline: Instant) -> Result<Option<Exit>> {
        loop {
            if let Some(exit) = self.try_wait()? {
                return Ok(Some(exit));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            ChildGroup::wait_any(std::slice::from_ref(self), deadline)?;
        }
    }

    /// Sleeps until one of `children` not yet reaped exits (woken by its pidfd) or
    /// `until` passes, whichever is first, or a signal interrupts; at once if every one
    /// is reaped. The caller reaps ([`ChildGroup::try_wait`]).
    pub(crate) fn wait_any(children: &[ChildGroup], until: Instant) -> Result<()> {
        let running: Vec<&ChildGroup> =
            children.iter().filter(|c| matches!(c.state, State::Running)).collect();
        if running.is_empty() {
            return Ok(());
        }
        let mut pfds: Vec<libc::pollfd> = running
            .iter()
            .filter_map(|c| c.pidfd.as_ref())
            .map(|fd| libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        let mut left = until.saturating_duration_since(Instant::now());
        if pfds.len() < running.len() {
            left = left.min(NO_PIDFD_CHECK);
        }
        if pfds.is_empty() {
            std::thread::sleep(left);
            return Ok(());
        }
        let ms = left.as_micros().div_ceil(1_000).min(i32::MAX as u128) as i32;
        // SAFETY: pfds is valid for its length.
        match cvt(unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) }) {
            Err(e) if e.kind() != io::ErrorKind::Interrupted => {
                Err(e).ctx(|| "cannot wait for a child's exit".into())
            }
            _ => Ok(()),
        }
    }

    /// Waits for the exit by `deadline` and fails unless it exited with status 0;
    /// `what` starts the errors. Past `deadline` it fails, and its group is killed when
    /// it drops.
    pub(crate) fn wait(&mut self, deadline: Instant, what: &str) -> Result<Exit> {
        self.wait_or_stop(deadline, &AtomicBool::new(false), what)
    }

    /// [`ChildGroup::wait`], giving up (and killing its group) as soon as `stop` is set.
    pub(crate) fn wait_or_stop(&mut self, deadline: Instant, stop: &AtomicBool, what: &str) -> Result<Exit> {
        let mut check = || match stop.load(Ordering::Relaxed) {
            true => Err(BenchError::Interrupted.during(what)),
            false => Ok(()),
        };
        match self.wait_checking(deadline, STOP_CHECK, &mut check)? {
            Some(exit) if exit.success() => Ok(exit),
            Some(exit) => Err(self.error(what, ChildProblem::Exited(exit.status))),
            None => Err(self.error(what, ChildProblem::NoExit)),
        }
    }

    /// Waits for the exit within `limit` of the spawn, calling `each` about every `tick`
    /// meanwhile: the exit, whatever its status. Past `limit` the group is killed and
    /// this fails; `what` starts the error.
    pub(crate) fn wait_within(
        &mut self,
        limit: Duration,
        tick: Duration,
        what: &str,
        mut each: impl FnMut(),
    ) -> Result<Exit> {
        let mut check = || {
            each();
            Ok(())
        };
        match self.wait_checking(self.started + limit, tick, &mut check)? {
            Some(exit) => Ok(exit),
            None => {
                self.kill();
                Err(self.error(what, ChildProblem::Killed { limit }))
            }
        }
    }

    /// Waits for the exit by `deadline`, calling `check` before every wait of at most
    /// `tick`: the exit, `None` if it still runs at `deadline`. A failed check kills
    /// the group and is returned.
    fn wait_checking(
        &mut self,
        deadline: Instant,
        tick: Duration,
        check: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Option<Exit>> {
        loop {
            if let Err(e) = check() {
                self.kill();
                return Err(e);
            }
            if let Some(exit) = self.wait_by(deadline.min(Instant::now() + tick))? {
                return Ok(Some(exit));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    /// Sends `signal` to the child alone (not its group), unless it was reaped.
    pub(crate) fn signal(&self, signal: libc::c_int) -> Result<()> {
        if !matches!(self.state, State::Running) {
            return Ok(());
        }
        // SAFETY: a plain system call on our own unreaped child.
        cvt(unsafe { libc::kill(self.pid, signal) })
            .map(drop)
            .ctx(|| format!("cannot send signal {signal} to the {}", self.name))
    }

    /// Kills its whole process group (SIGKILL) and reaps the child, unless it was
    /// reaped already: its exit, `None` if waiting for it failed.
    pub(crate) fn kill(&mut self) -> Option<Exit> {
        if let State::Running = self.state {
            // SAFETY: the child leads its own process group (start) and is not reaped,
            // so the group is ours.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
            let _ = self.reap(0);
        }
        match self.state {
            State::Exited(exit) => Some(exit),
            State::Running | State::Lost => None,
        }
    }

    /// `wait4` with `flags` (`WNOHANG` or 0), retried when interrupted unless `WNOHANG`:
    /// the exit once reaped (kept: the same again on every call), `None` while it runs.
    fn reap(&mut self, flags: libc::c_int) -> Result<Option<Exit>> {
        loop {
            match self.state {
                State::Exited(exit) => return Ok(Some(exit)),
                State::Lost => return Err(BenchError::Lost { name: self.name.clone(), pid: self.pid }),
                State::Running => {}
            }
            let mut status = 0;
            // SAFETY: an all-zero rusage is valid.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: status and ru are valid for writes.
            let r = unsafe { libc::wait4(self.pid, &mut status, flags, &mut ru) };
            if r == 0 {
                return Ok(None);
            }
            if r == self.pid {
                let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
                self.state = State::Exited(Exit {
                    status: ExitStatus::from_raw(status),
                    wall_ns: self.started.elapsed().as_nanos() as u64,
                    user_ns: ns(ru.ru_utime),
                    sys_ns: ns(ru.ru_stime),
                    nvcsw: ru.ru_nvcsw as u64,
                    nivcsw: ru.ru_nivcsw as u64,
                });
                continue;
            }
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                if flags & libc::WNOHANG != 0 {
                    return Ok(None);
                }
                continue;
            }
            self.state = State::Lost;
            return Err(BenchError::io(format!("cannot wait for the {} (pid {})", self.name, self.pid), e));
        }
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Lines from a pipe, with a deadline.
struct Lines {
    out: ChildStdout,
    buf: Vec<u8>,
    eof: bool,
}

impl Lines {
    fn new(out: ChildStdout) -> Self {
        Lines { out, buf: Vec::new(), eof: false }
    }

    /// The next line (without its newline); `None` at end of file; `TimedOut` after
    /// `deadline`.
    fn next(&mut self, deadline: Instant) -> io::Result<Option<String>> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Ok(Some(String::from_utf8_lossy(&line[..i]).into_owned()));
            }
            if self.eof {
                return Ok(None);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            let mut pfd = libc::pollfd { fd: self.out.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
            // SAFETY: pfd is valid for one entry.
            match cvt(unsafe { libc::poll(&mut pfd, 1, ms) }) {
                Ok(0) => continue,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let mut chunk = [0u8; 4096];
            let n = self.out.read(&mut chunk)?;
            if n == 0 {
                self.eof = true;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Makes `cmd` start a session of its own between its fork and its exec, and give its
/// autogroup nice `nice` (`/proc/self/autogroup`; a kernel without autogroups has no
/// such file, and the session alone is kept).
fn new_session_at_exec(cmd: &mut Command, nice: i32) {
    let mut text = nice.to_string().into_bytes();
    text.push(b'\n');
    // SAFETY: the closure only makes async-signal-safe calls (setsid, open, write, close)
    // on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            cvt(libc::setsid())?;
            let fd = libc::open(c"/proc/self/autogroup".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return match io::Error::last_os_error() {
                    e if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    e => Err(e),
                };
            }
            let written = libc::write(fd, text.as_ptr().cast(), text.len());
            let err = io::Error::last_os_error();
            libc::close(fd);
            if written == text.len() as isize {
                Ok(())
            } else {
                Err(err)
            }
        });
    }
}

/// Makes `cmd` join the cgroup whose directory is `dir` (its `cgroup.procs`: the whole
/// process, in cgroup v1 and v2 alike) between its fork and its exec.
fn join_cgroup_at_exec(cmd: &mut Command, dir: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let procs = dir.join("cgroup.procs");
    let path = std::ffi::CString::new(procs.as_os_str().as_bytes()).map_err(|_| {
        BenchError::io(format!("{} holds a NUL byte", procs.display()), io::ErrorKind::InvalidInput.into())
    })?;
    // SAFETY: the closure only makes async-signal-safe calls (open, write, close) on a
    // path prepared before the fork; "0" names the writing process itself.
    unsafe {
        cmd.pre_exec(move || {
            let fd = cvt(libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC))?;
            let written = libc::write(fd, b"0".as_ptr().cast(), 1);
            let err = io::Error::last_os_error();
            libc::close(fd);
            if written == 1 {
                Ok(())
            } else {
                Err(err)
            }
        });
    }
    Ok(())
}

/// Makes `cmd` (for [`ChildGroup::start`]) get `death_signal` when the spawning thread
/// dies, and inherit `fds`; SIGUSR1 and SIGUSR2 start blocked (the `sig` kind waits for
/// them), SIGINT and SIGTERM with their default action; `nice` is set before the exec.
pub(crate) fn guard_command(
    cmd: &mut Command,
    fds: Vec<RawFd>,
    death_signal: libc::c_int,
    nice: Option<i32>,
) {
    // SAFETY: the closure only makes async-signal-safe calls (prctl, getppid,
    // sigprocmask, signal, fcntl) on data prepared before the fork.
    unsafe {
        let set = {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, ipc::SIG_REQUEST);
            libc::sigaddset(&mut set, ipc::SIG_REPLY);
            set
        };
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            cvt(libc::prctl(libc::PR_SET_PDEATHSIG, death_signal as libc::c_ulong, 0, 0, 0))?;
            if libc::getppid() != parent {
                return Err(io::Error::other("the runner is gone"));
            }
            cvt(libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()))?;
            // A runner started in the background ignores SIGINT; the daemon must not.
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            for &fd in &fds {
                ipc::inherit_fd(fd)?;
            }
            // Started at its nice value, as `nice -n -20 client` starts it: the daemon
            // sees the client's priority at its exec.
            if let Some(n) = nice {
                cvt(libc::setpriority(libc::PRIO_PROCESS, 0, n))?;
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_reaped_with_its_usage() {
        let mut c =
            ChildGroup::spawn("sh", &["-c".into(), "exit 3".into()], None, Placement::Inherited).unwrap();
        let exit = c.wait_within(Duration::from_secs(10), Duration::from_millis(1), "test", || {}).unwrap();
        assert!(!exit.success());
        assert_eq!(exit.describe(), "exited with status 3");
    }

    #[test]
    fn a_child_past_its_limit_is_killed() {
        let mut c = ChildGroup::spawn("sleep", &["30".into()], None, Placement::Inherited).unwrap();
        let t = Instant::now();
        let e =
            c.wait_within(Duration::from_millis(100), Duration::from_millis(5), "test", || {}).unwrap_err();
        assert!(e.to_string().contains("was killed"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
        // SAFETY: probing a pid.
        assert_ne!(unsafe { libc::kill(c.pid(), 0) }, 0, "gone");
    }

    #[test]
    fn lines_are_read_and_the_whole_group_is_killed_on_drop() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & echo $!; echo ready; wait"]).stdout(Stdio::piped());
        let mut c = ChildGroup::start(&mut cmd, "shell").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let grandchild: libc::pid_t = c.line(deadline, "test").unwrap().parse().unwrap();
        c.expect_line("ready", deadline, "test").unwrap();
        let e = c.wait(Instant::now() + Duration::from_millis(50), "test").unwrap_err();
        assert!(e.to_string().contains("the shell did not exit in time"), "{e}");
        drop(c);
        // Killed with the group: gone, or a zombie until init reaps it.
        let gone = || {
            std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
                .map_or(true, |s| s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')))
        };
        while !gone() {
            assert!(Instant::now() < deadline, "the grandchild {grandchild} survived");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_signal_reaches_the_child_and_its_exit_is_kept() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "trap 'exit 7' INT; echo ready; while :; do sleep 0.01; done"]);
        // SIGINT as the default: a shell started with it ignored (the tests run from a
        // background job, `make test &`, inherit that) may not trap it (POSIX), and the
        // signal would reach nothing.
        // SAFETY: signal() is async-signal-safe; only the child's disposition changes.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            })
        };
        let mut c = ChildGroup::start(cmd.stdout(Stdio::piped()), "shell").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        c.expect_line("ready", deadline, "test").unwrap();
        c.signal(libc::SIGINT).unwrap();
        let exit = c.wait_by(deadline).unwrap().expect("exited");
        assert_eq!(exit.status.code(), Some(7));
        assert_eq!(c.try_wait().unwrap(), Some(exit), "kept once reaped");
        assert_eq!(c.kill(), Some(exit), "nothing left to kill");
        let e = c.wait(deadline, "test").unwrap_err();
        assert!(e.to_string().contains("the shell exited with exit status: 7"), "{e}");
    }

    #[test]
    fn a_missing_program_says_so() {
        let e = ChildGroup::spawn("schedlab-no-such-program", &[], None, Placement::Inherited).err().unwrap();
        assert!(e.to_string().contains("is it installed"), "{e}");
    }
}
