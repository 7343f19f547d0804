//! A benchmark child in its own process group, waited for with its resource usage
//! (which includes the children it reaped), and killed with its whole group on a time
//! limit, an error or a panic.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Result, ValidateError};

/// How the child ended, and what it used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exit {
    /// The wait status (`WIFEXITED` etc.).
    pub status: i32,
    /// From the spawn to the moment the exit was seen.
    pub wall_ns: u64,
    /// User plus system CPU time of the child and the descendants it waited for.
    pub cpu_ns: u64,
    /// Voluntary context switches of the child and the descendants it waited for.
    pub nvcsw: u64,
    /// Involuntary context switches, likewise.
    pub nivcsw: u64,
}

impl Exit {
    /// Whether the child exited with status 0.
    pub fn success(&self) -> bool {
        libc::WIFEXITED(self.status) && libc::WEXITSTATUS(self.status) == 0
    }

    /// The exit as words, for errors.
    pub fn describe(&self) -> String {
        if libc::WIFEXITED(self.status) {
            format!("exited with status {}", libc::WEXITSTATUS(self.status))
        } else if libc::WIFSIGNALED(self.status) {
            format!("was killed by signal {}", libc::WTERMSIG(self.status))
        } else {
            format!("ended with wait status {:#x}", self.status)
        }
    }
}

/// A running child; dropping it unreaped kills its process group and reaps it.
pub struct Child {
    pid: libc::pid_t,
    started: Instant,
    reaped: bool,
    name: String,
}

impl Child {
    /// Starts `program args` in a new process group, its standard output and error
    /// sent to `out` (a file) or nowhere.
    pub fn spawn(program: &str, args: &[String], out: Option<std::fs::File>) -> Result<Child> {
        let mut cmd = Command::new(program);
        cmd.args(args).stdin(Stdio::null()).process_group(0);
        match out {
            Some(f) => {
                let err = f.try_clone().map_err(|e| ValidateError::io("cannot duplicate a file", e))?;
                cmd.stdout(f).stderr(err);
            }
            None => {
                cmd.stdout(Stdio::null()).stderr(Stdio::null());
            }
        }
        let started = Instant::now();
        let child = cmd.spawn().map_err(|e| {
            let hint =
                if e.kind() == io::ErrorKind::NotFound { " (is it installed and on PATH?)" } else { "" };
            ValidateError::io(format!("cannot start {program}{hint}"), e)
        })?;
        let pid = libc::pid_t::try_from(child.id()).expect("pids fit pid_t");
        // std's Child does not wait or kill on drop: we reap it with wait4 below.
        drop(child);
        Ok(Child { pid, started, reaped: false, name: program.to_string() })
    }

    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Waits for the exit, calling `each` about every `tick` meanwhile; past `limit`
    /// the group is killed and this fails.
    pub fn wait(&mut self, limit: Duration, tick: Duration, mut each: impl FnMut()) -> Result<Exit> {
        loop {
            if let Some(exit) = self.try_wait()? {
                return Ok(exit);
            }
            if self.started.elapsed() > limit {
                self.kill();
                return Err(ValidateError::Failed(format!(
                    "{} (pid {}) took longer than {:.1} s and was killed",
                    self.name,
                    self.pid,
                    limit.as_secs_f64()
                )));
            }
            each();
            std::thread::sleep(tick);
        }
    }

    fn try_wait(&mut self) -> Result<Option<Exit>> {
        let mut status = 0;
        // SAFETY: an all-zero rusage is valid.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: status and ru are valid for writes.
        let r = unsafe { libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut ru) };
        let wall_ns = self.started.elapsed().as_nanos() as u64;
        match r {
            0 => Ok(None),
            r if r == self.pid => {
                self.reaped = true;
                let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
                Ok(Some(Exit {
                    status,
                    wall_ns,
                    cpu_ns: tv(ru.ru_utime) + tv(ru.ru_stime),
                    nvcsw: ru.ru_nvcsw as u64,
                    nivcsw: ru.ru_nivcsw as u64,
                }))
            }
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    return Ok(None);
                }
                self.reaped = true;
                Err(ValidateError::io(format!("cannot wait for {} (pid {})", self.name, self.pid), e))
            }
        }
    }

    /// Kills the whole process group and reaps the child.
    fn kill(&mut self) {
        if self.reaped {
            return;
        }
        // SAFETY: plain system calls on our own child's group.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
            let mut status = 0;
            while libc::waitpid(self.pid, &mut status, 0) < 0
                && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
            {}
        }
        self.reaped = true;
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_reaped_with_its_usage() {
        let mut c = Child::spawn("sh", &["-c".into(), "exit 3".into()], None).unwrap();
        let exit = c.wait(Duration::from_secs(10), Duration::from_millis(1), || {}).unwrap();
        assert!(!exit.success());
        assert_eq!(exit.describe(), "exited with status 3");
    }

    #[test]
    fn a_child_past_its_limit_is_killed() {
        let mut c = Child::spawn("sleep", &["30".into()], None).unwrap();
        let t = Instant::now();
        let e = c.wait(Duration::from_millis(100), Duration::from_millis(5), || {}).unwrap_err();
        assert!(e.to_string().contains("was killed"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
        // SAFETY: probing a pid.
        assert_ne!(unsafe { libc::kill(c.pid(), 0) }, 0, "gone");
    }

    #[test]
    fn a_missing_program_says_so() {
        let e = Child::spawn("schedlab-no-such-program", &[], None).err().unwrap();
        assert!(e.to_string().contains("is it installed"), "{e}");
    }
}
