//! A live process addressed the way the live world must address it: by a pidfd plus its
//! start time, never by a bare pid that may have been reused by another process.
//!
//! A [`ProcessHandle`] holds a pidfd (`pidfd_open`), which keeps referring to the same
//! process even after the pid is reused, and the process's start time (field 22 of
//! `/proc/PID/stat`, clock ticks since boot), which is the identity the journal records.
//! Before anything is changed, [`ProcessHandle::is_same`] checks both: the pidfd's process
//! is still alive, and the pid still has that start time.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use schedlab_model::Pid;
use schedlab_store::ProcessKey;

/// A process, held by pidfd and identified by pid plus start time.
#[derive(Debug)]
pub struct ProcessHandle {
    key: ProcessKey,
    pidfd: OwnedFd,
}

impl ProcessHandle {
    /// Opens the process that has `pid` now, recording its start time.
    ///
    /// The pidfd is opened first and checked alive after the start time is read, so the
    /// start time recorded is that of the process the pidfd refers to.
    pub fn open(pid: Pid) -> io::Result<ProcessHandle> {
        let pidfd = pidfd_open(pid)?;
        let start_time = start_time(pid)?;
        pidfd_alive(&pidfd)?;
        Ok(ProcessHandle { key: ProcessKey { pid, start_time }, pidfd })
    }

    /// Opens the process that has `key.pid` now, but records `key.start_time` as the
    /// identity expected, as the journal names a process: if the pid now belongs to
    /// another process, [`ProcessHandle::is_same`] is false and nothing is changed
    /// through the handle. Fails (`ESRCH`) if no process has that pid.
    pub fn for_key(key: ProcessKey) -> io::Result<ProcessHandle> {
        let pidfd = pidfd_open(key.pid)?;
        Ok(ProcessHandle { key, pidfd })
    }

    /// The pid.
    pub fn pid(&self) -> Pid {
        self.key.pid
    }

    /// The start time recorded, in clock ticks since boot.
    pub fn start_time(&self) -> u64 {
        self.key.start_time
    }

    /// The identity the journal records: pid plus start time.
    pub fn key(&self) -> ProcessKey {
        self.key
    }

    /// Whether the process is still the one this handle was opened for: the pidfd's
    /// process is alive (a zombie counts as alive) and the pid still has the recorded
    /// start time. A reused pid is never touched.
    pub fn is_same(&self) -> bool {
        pidfd_alive(&self.pidfd).is_ok() && start_time(self.key.pid).ok() == Some(self.key.start_time)
    }

    /// The thread ids of the process (`/proc/PID/task/*`), the main thread included.
    ///
    /// A thread that exits after the listing is the caller's to skip (`ESRCH`); a tid
    /// reused in the moment between the listing and its use is a race this cannot close.
    pub fn threads(&self) -> io::Result<Vec<Pid>> {
        let mut tids = Vec::new();
        for entry in std::fs::read_dir(format!("/proc/{}/task", self.key.pid.0))? {
            if let Some(tid) = entry?.file_name().to_str().and_then(|s| s.parse().ok()) {
                tids.push(Pid(tid));
            }
        }
        tids.sort();
        Ok(tids)
    }
}

/// `pidfd_open(pid, 0)`.
fn pidfd_open(pid: Pid) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new file descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.0 as libc::pid_t, 0u32) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `pidfd_send_signal(pidfd, 0)`: `ESRCH` once the process has exited and been reaped.
fn pidfd_alive(pidfd: &OwnedFd) -> io::Result<()> {
    // SAFETY: signal 0 with no siginfo only checks that the process exists and may be
    // signalled.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            0i32,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The fields of `/proc/PID/stat` after the command name, so that index 0 is field 3
/// (state). The command name may hold spaces and parentheses; it ends at the last `)`.
fn stat_fields(pid: Pid) -> io::Result<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.0))?;
    let rest = stat
        .rfind(')')
        .map(|i| &stat[i + 1..])
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no ')' in /proc/PID/stat"))?;
    Ok(rest.split_whitespace().map(str::to_owned).collect())
}

/// Field `n` (1-based, as proc(5) numbers them; `n >= 3`) of `/proc/PID/stat`.
pub fn stat_field(pid: Pid, n: usize) -> io::Result<String> {
    stat_fields(pid)?.into_iter().nth(n - 3).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidData, format!("/proc/{}/stat has no field {n}", pid.0))
    })
}

/// The start time of process `pid` (field 22 of `/proc/PID/stat`), in clock ticks since boot.
pub fn start_time(pid: Pid) -> io::Result<u64> {
    stat_field(pid, 22)?
        .parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("start time of {}: {e}", pid.0)))
}
