//! A live process addressed the way the live world must address it: by a pidfd plus its
//! start time, never by a bare pid that may have been reused by another process.
//!
//! A [`ProcessHandle`] holds a pidfd (`pidfd_open`), which keeps referring to the same
//! process even after the pid is reused, and the process's start time (field 22 of
//! `/proc/PID/stat`, clock ticks since boot), which is the identity the journal records.
//! Before anything is changed, [`ProcessHandle::is_same`] checks both: the pidfd's process
//! is still alive, and the pid still has that start time. Once the start time has been
//! seen to match while the pidfd's process was alive, the pidfd alone answers: a pid is
//! not given to another process before its process is reaped, and a reaped process's
//! pidfd reads as gone, so re-reading `/proc` (tens of µs on a boost's reaction path)
//! would tell nothing more.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use schedlab_model::Pid;
use schedlab_store::ProcessKey;

/// A process, held by pidfd and identified by pid plus start time.
#[derive(Debug)]
pub struct ProcessHandle {
    key: ProcessKey,
    pidfd: OwnedFd,
    /// The start time has been seen to match while the pidfd's process was alive: the
    /// pid is this process's for as long as the pidfd says it is alive.
    verified: Cell<bool>,
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
        Ok(ProcessHandle { key: ProcessKey { pid, start_time }, pidfd, verified: Cell::new(true) })
    }

    /// Opens the process that has `key.pid` now, but records `key.start_time` as the
    /// identity expected, as the journal names a process: if the pid now belongs to
    /// another process, [`ProcessHandle::is_same`] is false and nothing is changed
    /// through the handle. Fails (`ESRCH`) if no process has that pid.
    pub fn for_key(key: ProcessKey) -> io::Result<ProcessHandle> {
        let pidfd = pidfd_open(key.pid)?;
        Ok(ProcessHandle { key, pidfd, verified: Cell::new(false) })
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
        if pidfd_alive(&self.pidfd).is_err() {
            return false;
        }
        if self.verified.get() {
            return true;
        }
        // The start time read while the pidfd's process lives is that process's: the
        // pid cannot have passed to another one before it was reaped.
        let same =
            start_time(self.key.pid).ok() == Some(self.key.start_time) && pidfd_alive(&self.pidfd).is_ok();
        self.verified.set(same);
        same
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

/// `pidfd_open(pid, 0)`: a descriptor that names the process until it is reaped, and
/// becomes readable when it exits.
pub fn pidfd_open(pid: Pid) -> io::Result<OwnedFd> {
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
    Ok(split_stat(&stat)?.1.into_iter().map(str::to_owned).collect())
}

/// The command name of a `/proc/PID/stat` line (field 2, between the first `(` and the
/// last `)`), and the fields after it (index 0 is field 3).
fn split_stat(stat: &str) -> io::Result<(&str, Vec<&str>)> {
    let (open, close) = stat
        .find('(')
        .zip(stat.rfind(')'))
        .filter(|(open, close)| open < close)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no (comm) in /proc/PID/stat"))?;
    Ok((&stat[open + 1..close], stat[close + 1..].split_whitespace().collect()))
}

/// Field `n` (1-based, as proc(5) numbers them; `n >= 3`) of `/proc/PID/stat`.
pub fn stat_field(pid: Pid, n: usize) -> io::Result<String> {
    stat_fields(pid)?.into_iter().nth(n - 3).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidData, format!("/proc/{}/stat has no field {n}", pid.0))
    })
}

/// The CPU time (user + system, all its threads, ns; fields 14 and 15) and the number
/// of threads (field 20) of process `pid`, from one read of `/proc/PID/stat`.
pub fn usage(pid: Pid) -> io::Result<(u64, u32)> {
    let fields = stat_fields(pid)?;
    let field = |n: usize| -> io::Result<u64> {
        fields.get(n - 3).and_then(|f| f.parse().ok()).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("/proc/{}/stat has no field {n}", pid.0))
        })
    };
    Ok(((field(14)? + field(15)?) * (1_000_000_000 / clock_ticks_per_s()), field(20)? as u32))
}

/// CPU time (user + system, all its threads) of process `pid` (fields 14 and 15 of
/// `/proc/PID/stat`), in nanoseconds.
pub fn cpu_time_ns(pid: Pid) -> io::Result<u64> {
    usage(pid).map(|(ns, _)| ns)
}

/// The time thread `tid` has run and the time it has waited runnable for a CPU, in ns
/// (the first two fields of `/proc/TID/schedstat`, the scheduler's own accounts: what
/// an exit's [`Life`](schedlab_model::Life) carries, read while it lives).
pub fn schedstat(tid: u32) -> io::Result<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/schedstat"))?;
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    match (fields.next(), fields.next()) {
        (Some(Ok(run)), Some(Ok(wait))) => Ok((run, wait)),
        _ => Err(io::Error::new(io::ErrorKind::InvalidData, format!("/proc/{tid}/schedstat: {text:?}"))),
    }
}

/// The shared libraries a program that draws for a person maps (the display protocols'
/// clients, the graphics APIs, the toolkits over them), as their file names begin. A
/// compiler, a compressor or an interpreter running a script maps none of them.
pub const DISPLAY_LIBRARIES: [&str; 12] = [
    "libX11.so",
    "libxcb.so",
    "libwayland-client.so",
    "libEGL",
    "libGL.so",
    "libGLX",
    "libvulkan.so",
    "libSDL2",
    "libSDL3",
    "libgtk-",
    "libQt5Gui",
    "libQt6Gui",
];

/// Whether process `pid` draws for a person: it has one of [`DISPLAY_LIBRARIES`]
/// mapped (`/proc/PID/maps`).
pub fn draws_for_a_person(pid: u32) -> io::Result<bool> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    Ok(maps
        .lines()
        .filter_map(|l| l.rsplit('/').next().filter(|_| l.contains('/')))
        .any(|file| DISPLAY_LIBRARIES.iter().any(|lib| file.starts_with(lib))))
}

/// The clock ticks of /proc's times per second (`_SC_CLK_TCK`, at least 1).
pub fn clock_ticks_per_s() -> u64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64
}

/// How long a process that started at `start_time` (clock ticks since boot, as
/// [`ProcInfo::start_time`]) has lived.
pub fn age(start_time: u64) -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    let now = Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
    now.saturating_sub(Duration::from_millis(start_time.saturating_mul(1000) / clock_ticks_per_s()))
}

/// `CLOCK_MONOTONIC` now, in ns: the clock of the observer's timestamps.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`): what the journal records with
/// each entry, so that an entry of an earlier boot is known for one (its pids, threads
/// and CPUs are of a machine that is no more). Read once per process.
pub fn boot_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    })
}

/// The task name (`comm`) of thread `pid`, while it exists.
pub fn comm_of(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|s| s.trim_end().to_string())
}

/// The program (executable path) thread or process `pid` runs; `None` for a kernel
/// thread, a process gone or one whose executable cannot be read.
pub fn exe_of(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok().map(|p| p.display().to_string())
}

/// The start time of process `pid` (field 22 of `/proc/PID/stat`), in clock ticks since boot.
pub fn start_time(pid: Pid) -> io::Result<u64> {
    stat_field(pid, 22)?
        .parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("start time of {}: {e}", pid.0)))
}

/// What `/proc` says of a process: what the daemon's rules match on and the store keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcInfo {
    /// The pid.
    pub pid: u32,
    /// Start time (field 22 of `/proc/PID/stat`), to tell a reused pid apart.
    pub start_time: u64,
    /// The task name (field 2 of `/proc/PID/stat`, what `/proc/PID/comm` holds).
    pub comm: String,
    /// The executable's path, empty for kernel threads or when unreadable.
    pub exe: String,
    /// The arguments.
    pub cmdline: Vec<String>,
    /// The last line of `/proc/PID/cgroup` (the v2 path on a pure v2 machine).
    pub cgroup: String,
    /// The real user id.
    pub uid: u32,
    /// The parent's pid.
    pub ppid: u32,
    /// A kernel thread (`PF_KTHREAD` in the flags of `/proc/PID/stat`).
    pub kthread: bool,
}

/// `PF_KTHREAD` from include/linux/sched.h.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Which of the fields of a [`ProcInfo`] that take a read of their own are read: the
/// daemon reads only what its rules match on, since it takes in a build's jobs by the
/// hundred a second and each read is time taken from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcFields {
    /// The real user id (`/proc/PID/status`).
    pub uid: bool,
    /// The arguments (`/proc/PID/cmdline`).
    pub cmdline: bool,
    /// The cgroup (`/proc/PID/cgroup`).
    pub cgroup: bool,
}

impl ProcFields {
    /// Every field.
    pub const ALL: ProcFields = ProcFields { uid: true, cmdline: true, cgroup: true };
}

impl ProcInfo {
    /// Reads `/proc/PID/…`; fails only if the process is gone (stat unreadable); other
    /// fields fall back to empty values.
    pub fn read(pid: u32) -> io::Result<ProcInfo> {
        ProcInfo::read_some(pid, ProcFields::ALL)
    }

    /// [`ProcInfo::read`], the fields not in `fields` left empty: its pid, start time,
    /// name, parent and flags come from `/proc/PID/stat`, its executable from
    /// `/proc/PID/exe`.
    pub fn read_some(pid: u32, fields: ProcFields) -> io::Result<ProcInfo> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
        let (comm, stat_fields) = split_stat(&stat)?;
        // stat_fields[0] is field 3 (state): ppid is field 4, flags 9, start time 22.
        let field = |n: usize| stat_fields.get(n - 3).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
        let uid = match fields.uid {
            true => std::fs::read_to_string(format!("/proc/{pid}/status"))
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().next())
                .and_then(|u| u.parse().ok())
                .unwrap_or(0),
            false => 0,
        };
        let cmdline = match fields.cmdline {
            true => std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|b| {
                    b.split(|&c| c == 0)
                        .filter(|a| !a.is_empty())
                        .map(|a| String::from_utf8_lossy(a).into())
                        .collect()
                })
                .unwrap_or_default(),
            false => Vec::new(),
        };
        let cgroup = match fields.cgroup {
            true => std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
                .unwrap_or_default()
                .trim_end()
                .lines()
                .last()
                .unwrap_or_default()
                .to_string(),
            false => String::new(),
        };
        Ok(ProcInfo {
            pid,
            start_time: field(22),
            comm: comm.to_string(),
            exe: exe_of(pid).unwrap_or_default(),
            cmdline,
            cgroup,
            uid,
            ppid: field(4) as u32,
            kthread: field(9) & PF_KTHREAD != 0,
        })
    }

    /// The process identity the journal records.
    pub fn key(&self) -> ProcessKey {
        ProcessKey { pid: Pid(self.pid), start_time: self.start_time }
    }
}

/// The pids of every process (`/proc/[0-9]*`), in increasing order.
pub fn all_pids() -> io::Result<Vec<u32>> {
    let mut pids: Vec<u32> =
        std::fs::read_dir("/proc")?.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
    pids.sort_unstable();
    Ok(pids)
}

/// The thread group (process) of thread `tid`, from `/proc/TID/status`.
pub fn tgid_of(tid: u32) -> Option<u32> {
    status_number(tid, "Tgid").and_then(|v| u32::try_from(v).ok())
}

/// A number of `/proc/TID/status` by its key (`Tgid`, `nonvoluntary_ctxt_switches`).
pub fn status_number(tid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(':')).and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process_and_knows_kernel_threads() {
        let me = ProcInfo::read(std::process::id()).unwrap();
        assert!(!me.kthread && !me.exe.is_empty() && me.start_time > 0 && me.ppid > 0, "{me:?}");
        let kthreadd = ProcInfo::read(2).unwrap();
        assert!(kthreadd.kthread && kthreadd.exe.is_empty(), "{kthreadd:?}");
        assert_eq!(tgid_of(std::process::id()), Some(std::process::id()));
        assert!(all_pids().unwrap().contains(&1));
    }

    #[test]
    fn a_stat_line_splits_at_the_last_parenthesis_of_its_name() {
        let (comm, rest) = split_stat("42 (a (b) c) S 1 2\n").unwrap();
        assert_eq!((comm, rest), ("a (b) c", vec!["S", "1", "2"]));
        assert!(split_stat("42 a) S").is_err() && split_stat("42 )a( S").is_err());
    }

    #[test]
    fn the_fields_not_asked_for_are_left_empty_and_the_name_comes_from_stat() {
        let pid = std::process::id();
        let all = ProcInfo::read(pid).unwrap();
        assert!(!all.cmdline.is_empty() && !all.cgroup.is_empty(), "{all:?}");
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
        assert_eq!(all.comm, comm.trim_end(), "stat's name is comm's");
        let none = ProcFields { uid: false, cmdline: false, cgroup: false };
        let some = ProcInfo::read_some(pid, none).unwrap();
        let expected = ProcInfo { cmdline: Vec::new(), cgroup: String::new(), uid: 0, ..all.clone() };
        assert_eq!(some, expected);
        let only_cmdline = ProcInfo::read_some(pid, ProcFields { cmdline: true, ..none }).unwrap();
        assert_eq!((only_cmdline.cmdline, only_cmdline.cgroup), (all.cmdline, String::new()));
    }

    #[test]
    fn schedstat_counts_this_threads_cpu_time() {
        // Spun by this thread's own CPU clock, which counts what schedstat counts
        // (sum_exec_runtime): however loaded the machine, schedstat has it all.
        let cpu = || {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: ts is valid to write; the clock always exists.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        };
        while cpu() < 30_000_000 {}
        // SAFETY: gettid has no arguments.
        let tid = unsafe { libc::gettid() } as u32;
        let (run, _) = schedstat(tid).unwrap();
        assert!(run >= 30_000_000, "schedstat has {run} ns of a thread that ran 30 ms");
    }

    #[test]
    fn a_process_with_a_display_library_mapped_draws_and_this_one_does_not() {
        assert!(!draws_for_a_person(std::process::id()).unwrap(), "a test binary draws nothing");
        // A file under a display library's name, mapped: what the loader's mapping of
        // the library looks like in /proc/PID/maps, with no library installed.
        let dir = std::env::temp_dir().join(format!("schedlab-draws-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("libX11.so.6");
        std::fs::write(&lib, [0u8; 4096]).unwrap();
        let script = "import mmap, sys, time\n\
                      f = open(sys.argv[1], 'rb')\n\
                      m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n\
                      print('mapped', flush=True)\n\
                      time.sleep(30)\n";
        let mut child = std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&lib)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs (installed by scripts/setup.sh)");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line)
            .unwrap();
        let drew = draws_for_a_person(child.id());
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(line.trim(), "mapped");
        assert!(drew.unwrap(), "libX11.so.6 mapped");
    }
}
