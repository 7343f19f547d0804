//! The simulator's cost tunables measured on this machine.
//!
//! The simulator charges each system call `syscall_ns` plus `copy_ns_per_kib` per KiB it
//! moves (engine/ops.rs: `syscall_ns + bytes * copy_ns_per_kib / 1024`, for reads and
//! writes alike), each task it wakes `wakeup_ns` (to the waker), and each switch to a
//! task `context_switch_ns`. Measured here, each on one CPU, the median of repetitions:
//!
//! - **null system call**: `getppid()` in a tight loop (reported, not used: the
//!   workloads' system calls are pipe reads and writes);
//! - **pipe system call** (`syscall_ns`): a 1-byte `write` then `read` on a pipe in one
//!   thread, which never blocks: half the pair;
//! - **copy per KiB** (`copy_ns_per_kib`): the same with 32 KiB: the pair's extra time
//!   over the 1-byte pair, divided by the KiB moved by both calls (see
//!   [`copy_ns_per_kib`]);
//! - **wake-up** (`wakeup_ns`): a 1-byte `write` to a pipe whose reader, a forked
//!   process on the same CPU, is blocked in `read`, against the same `write` when nobody
//!   waits: the waker's extra CPU time (`try_to_wake_up`: the wakee's placement, its
//!   enqueue, the preemption check);
//! - **context switch** (`context_switch_ns`): two processes pinned to the same CPU
//!   ping-pong one byte over two pipes; a round trip is two writes, two reads, two
//!   wake-ups and two switches, so a switch is half the round trip less one write, one
//!   read and one wake-up (see [`context_switch_ns`]).
//!
//! - **remote wake-up** (`wakeup_remote_ns`): the same timed write with the echo on
//!   another CPU, less the wake-up on this one: what telling another CPU costs the
//!   waker (the inter-processor interrupt; a virtual machine's exit to send it);
//! - **idle exit** (`idle_exit_ns`): the same ping-pong in wall time, once on one CPU
//!   and once with the echo on another CPU, where each side's CPU idles while the other
//!   answers: half the difference (see [`idle_exit_ns`]); not measured when this
//!   process may use one CPU only;
//! - **memset per KiB** (`mem_ns_per_kib`): `memset` of a buffer of rt-app's default
//!   `mem_buffer_size` (4 MiB), touched once before it is timed, over and over: what
//!   rt-app's `mem` event does (and what the simulator charges it, and the page-cache copy
//!   of an `iorun` to a file);
//! - **fork and exit** (`fork_ns`, `exit_ns`): a small process (this program started
//!   afresh as a hidden worker, `bench worker forker`, pinned to the same CPU) forks
//!   children that exit at once: the parent's CPU time in `fork()` less a system call,
//!   and each child's whole CPU time from `wait4`'s usage — its return from `fork`, the
//!   page faults of its first touches, and the teardown of its address space. Both
//!   grow with the size of the process, so they are measured on a small one, the size
//!   of the C programs the validation runs (hackbench, rt-app).
//!
//! Times are CPU times, not wall-clock times: the calling thread's
//! (`CLOCK_THREAD_CPUTIME_ID`), plus the forked partner's (`wait4`) for the ping-pong,
//! whose two processes share one CPU. Another process that takes the CPU meanwhile then
//! does not count, so the costs hold on a loaded machine too.

use std::io;
use std::path::Path;

use serde::Serialize;

use super::fit::median;
use super::forker;
use super::{Result, ValidateError};
use crate::bench::workers::{allowed_cpus, thread_cpu_ns};

/// The measured costs, in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calibration {
    /// The CPU the measurements ran on.
    pub cpu: usize,
    /// Repetitions each median is over.
    pub reps: u32,
    /// `getppid()`: system-call entry and exit.
    pub null_syscall_ns: f64,
    /// One 1-byte pipe `write` or `read` that does not block.
    pub pipe_syscall_ns: f64,
    /// Copy cost per KiB through a pipe, per call.
    pub copy_ns_per_kib: f64,
    /// `memset` cost per KiB of a buffer of rt-app's default size ([`mem_ns_per_kib`]).
    pub mem_ns_per_kib: f64,
    /// One ping-pong round trip between two processes on one CPU.
    pub round_trip_ns: f64,
    /// The waker's cost of one wake-up.
    pub wakeup_ns: f64,
    /// One context switch, the wake-up before it not included.
    pub context_switch_ns: f64,
    /// The other CPU the idle exit was measured with (`None`: this process may use one
    /// CPU only, and the idle exit is not measured).
    pub other_cpu: Option<usize>,
    /// Ping-pong round trips in wall time: on one CPU, and across `cpu` and `other_cpu`.
    pub same_cpu_round_trip_wall_ns: f64,
    pub cross_cpu_round_trip_wall_ns: Option<f64>,
    /// An idle CPU's exit latency ([`idle_exit_ns`]).
    pub idle_exit_ns: Option<f64>,
    /// The waker's extra cost of a wake-up onto `other_cpu` over one onto its own CPU.
    pub wakeup_remote_ns: Option<f64>,
    /// A small process's `fork()` in the parent, beyond a system call.
    pub fork_ns: f64,
    /// A small forked process's CPU time from its start to its death when it exits at
    /// once.
    pub exit_ns: f64,
}

impl Calibration {
    /// The simulator tunables these costs set, by name, as whole nanoseconds.
    pub fn tunables(&self) -> Vec<(&'static str, u64)> {
        let ns = |v: f64| v.max(0.0).round() as u64;
        let mut t = vec![
            ("syscall_ns", ns(self.pipe_syscall_ns)),
            ("copy_ns_per_kib", ns(self.copy_ns_per_kib)),
            ("mem_ns_per_kib", ns(self.mem_ns_per_kib)),
            ("wakeup_ns", ns(self.wakeup_ns)),
            ("context_switch_ns", ns(self.context_switch_ns)),
            ("fork_ns", ns(self.fork_ns - self.pipe_syscall_ns)),
            ("exit_ns", ns(self.exit_ns)),
        ];
        if let Some(remote) = self.wakeup_remote_ns {
            t.push(("wakeup_remote_ns", ns(remote)));
        }
        if let Some(idle) = self.idle_exit_ns {
            t.push(("idle_exit_ns", ns(idle)));
        }
        t
    }
}

/// Copy cost per KiB and per call: a write and a read of `large_bytes` cost
/// `large_pair_ns`, of `small_bytes` `small_pair_ns`; both calls copy, so the extra
/// time is spread over `2 * (large - small) / 1024` KiB.
pub fn copy_ns_per_kib(small_pair_ns: f64, small_bytes: u64, large_pair_ns: f64, large_bytes: u64) -> f64 {
    let kib = 2.0 * (large_bytes.saturating_sub(small_bytes)) as f64 / 1024.0;
    if kib <= 0.0 {
        return 0.0;
    }
    ((large_pair_ns - small_pair_ns) / kib).max(0.0)
}

/// One context switch from a ping-pong round trip: half the round trip is one write,
/// one read, one wake-up and one switch.
pub fn context_switch_ns(round_trip_ns: f64, pipe_syscall_ns: f64, wakeup_ns: f64) -> f64 {
    (round_trip_ns / 2.0 - 2.0 * pipe_syscall_ns - wakeup_ns).max(0.0)
}

/// Iteration counts of one repetition.
const NULL_CALLS: u32 = 100_000;
const SMALL_PAIRS: u32 = 50_000;
const LARGE_PAIRS: u32 = 2_000;
const LARGE_BYTES: usize = 32 * 1024;
const ROUND_TRIPS: u32 = 10_000;
const WAKEUPS: u32 = 2_000;
const IDLE_ROUND_TRIPS: u32 = 2_000;
/// rt-app's default `mem_buffer_size`: the buffer its `mem` event writes, 4 MiB.
pub const RTAPP_MEM_BUFFER: usize = 4 << 20;
/// `memset`s of [`RTAPP_MEM_BUFFER`] per repetition (about 30 µs each at 8 ns per KiB).
const MEMSETS: u32 = 100;

/// Children the forker makes per repetition.
const FORKS: u32 = 200;

/// Measures the costs, `reps` times each (at least 1), on one CPU: a thread pinned to
/// the CPU it starts on runs them, and `exe` (this program) is started as the forker on
/// that CPU. Takes about 0.25 s per repetition.
pub fn measure(reps: u32, exe: &Path) -> Result<Calibration> {
    let reps = reps.max(1);
    let exe = exe.to_path_buf();
    let allowed = allowed_cpus().map_err(|e| ValidateError::io("cannot read the allowed CPUs", e))?;
    let (costs, cpu) = std::thread::spawn(move || measure_pinned(reps, &allowed))
        .join()
        .map_err(|_| ValidateError::Panicked { thread: "calibration" })??;
    let (fork_ns, exit_ns) = fork_and_exit(&exe, cpu, reps)?;
    Ok(Calibration { fork_ns, exit_ns, ..costs })
}

/// The forker's medians over `reps` runs of [`FORKS`] children each, on `cpu`: the
/// parent's CPU time per `fork()` and each child's CPU time.
fn fork_and_exit(exe: &Path, cpu: usize, reps: u32) -> Result<(f64, f64)> {
    let (mut forks, mut lives) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let samples = forker::run(exe, cpu, FORKS)?;
        forks.push(median(&samples.iter().map(|s| s.fork_ns as f64).collect::<Vec<_>>()).unwrap_or(0.0));
        lives.push(median(&samples.iter().map(|s| s.child_ns as f64).collect::<Vec<_>>()).unwrap_or(0.0));
    }
    Ok((median(&forks).unwrap_or(0.0), median(&lives).unwrap_or(0.0)))
}

/// The pipe, wake-up, switch and idle-exit costs (with another CPU of `allowed`, when
/// there is one), and the CPU they were measured on; the fork and exit costs are left 0.
fn measure_pinned(reps: u32, allowed: &[usize]) -> Result<(Calibration, usize)> {
    // SAFETY: no arguments.
    let cpu = usize::try_from(unsafe { libc::sched_getcpu() })
        .map_err(|_| ValidateError::io("sched_getcpu", io::Error::last_os_error()))?;
    pin(cpu)?;
    let other = allowed.iter().copied().find(|&c| c != cpu);
    let (mut null, mut small, mut large, mut rt, mut wake) = (vec![], vec![], vec![], vec![], vec![]);
    let mut mem = vec![];
    let (mut same_wall, mut cross_wall, mut remote_wake) = (vec![], vec![], vec![]);
    for _ in 0..reps {
        null.push(null_syscall());
        small.push(pipe_pair(1, SMALL_PAIRS)?);
        large.push(pipe_pair(LARGE_BYTES, LARGE_PAIRS)?);
        mem.push(mem_ns_per_kib(RTAPP_MEM_BUFFER, MEMSETS));
        rt.push(round_trip(cpu)?);
        wake.push(wakeup(None)?);
        same_wall.push(round_trip_wall(cpu)?);
        if let Some(other) = other {
            cross_wall.push(round_trip_wall(other)?);
            remote_wake.push(wakeup(Some(other))?);
        }
    }
    let m = |v: &[f64]| median(v).unwrap_or(0.0);
    let (small_pair, large_pair) = (m(&small), m(&large));
    let pipe_syscall_ns = small_pair / 2.0;
    let (round_trip_ns, wakeup_ns) = (m(&rt), m(&wake));
    let same_cpu_round_trip_wall_ns = m(&same_wall);
    let cross_cpu_round_trip_wall_ns = median(&cross_wall);
    let costs = Calibration {
        other_cpu: other,
        same_cpu_round_trip_wall_ns,
        cross_cpu_round_trip_wall_ns,
        idle_exit_ns: cross_cpu_round_trip_wall_ns.map(|x| idle_exit_ns(x, same_cpu_round_trip_wall_ns)),
        wakeup_remote_ns: median(&remote_wake).map(|r| (r - wakeup_ns).max(0.0)),
        cpu,
        reps,
        null_syscall_ns: m(&null),
        pipe_syscall_ns,
        copy_ns_per_kib: copy_ns_per_kib(small_pair, 1, large_pair, LARGE_BYTES as u64),
        mem_ns_per_kib: m(&mem),
        round_trip_ns,
        wakeup_ns,
        context_switch_ns: context_switch_ns(round_trip_ns, pipe_syscall_ns, wakeup_ns),
        fork_ns: 0.0,
        exit_ns: 0.0,
    };
    Ok((costs, cpu))
}

/// Pins the calling thread to `cpu`.
fn pin(cpu: usize) -> Result<()> {
    // SAFETY: cpu_set_t is plain data; the calls read and write only it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(ValidateError::io(format!("cannot pin to CPU {cpu}"), io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// Nanoseconds of CPU time per `getppid()`.
fn null_syscall() -> f64 {
    let t = thread_cpu_ns();
    for _ in 0..NULL_CALLS {
        // SAFETY: no arguments.
        std::hint::black_box(unsafe { libc::getppid() });
    }
    (thread_cpu_ns() - t) as f64 / f64::from(NULL_CALLS)
}

/// Nanoseconds of CPU time per KiB `memset` writes to a buffer of `bytes`, over `times`
/// `memset`s of the whole buffer after one untimed one (which takes its page faults, as
/// rt-app's buffer has taken them by its second `mem` event).
pub fn mem_ns_per_kib(bytes: usize, times: u32) -> f64 {
    let mut buf = vec![1u8; bytes.max(1)];
    let mut fill = |value: u8| {
        // SAFETY: buf is valid for its length; write_bytes is memset.
        unsafe { std::ptr::write_bytes(buf.as_mut_ptr(), value, buf.len()) };
        std::hint::black_box(&mut buf);
    };
    fill(0);
    let t = thread_cpu_ns();
    for i in 0..times {
        fill(i as u8);
    }
    let ns = (thread_cpu_ns() - t) as f64;
    ns / (f64::from(times.max(1)) * buf.len() as f64 / 1024.0)
}

/// Both ends of a new pipe, closed on drop.
struct Pipe([libc::c_int; 2]);

impl Pipe {
    fn new() -> Result<Pipe> {
        let mut fds = [0; 2];
        // SAFETY: fds is valid for two ints.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(ValidateError::io("cannot create a pipe", io::Error::last_os_error()));
        }
        Ok(Pipe(fds))
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        for fd in self.0 {
            // SAFETY: our own descriptors.
            unsafe { libc::close(fd) };
        }
    }
}

/// Writes then reads all of `buf` on a pipe; false on a short or failed call.
fn write_read(p: &Pipe, buf: &mut [u8]) -> bool {
    // SAFETY: buf is valid for its length.
    unsafe {
        libc::write(p.0[1], buf.as_ptr().cast(), buf.len()) == buf.len() as isize
            && libc::read(p.0[0], buf.as_mut_ptr().cast(), buf.len()) == buf.len() as isize
    }
}

/// Nanoseconds of CPU time per `write` + `read` pair of `bytes` on a pipe, in one
/// thread.
fn pipe_pair(bytes: usize, pairs: u32) -> Result<f64> {
    let p = Pipe::new()?;
    let mut buf = vec![7u8; bytes];
    // Warm up (the pipe's pages, the caches).
    for _ in 0..pairs / 10 + 1 {
        if !write_read(&p, &mut buf) {
            return Err(ValidateError::io("pipe write/read", io::Error::last_os_error()));
        }
    }
    let t = thread_cpu_ns();
    for _ in 0..pairs {
        if !write_read(&p, &mut buf) {
            return Err(ValidateError::io("pipe write/read", io::Error::last_os_error()));
        }
    }
    Ok((thread_cpu_ns() - t) as f64 / f64::from(pairs))
}

/// Forks a process at nice `nice` that echoes every byte it reads from `ping` to `pong`,
/// until killed; it runs on this thread's CPU (it inherits the affinity) unless given
/// another.
fn fork_echo(ping: &Pipe, pong: &Pipe, nice: libc::c_int, cpu: Option<usize>) -> Result<libc::pid_t> {
    // SAFETY: the child only makes async-signal-safe system calls, then _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(ValidateError::io("cannot fork", io::Error::last_os_error()));
    }
    if pid == 0 {
        let mut b = [0u8; 1];
        // SAFETY: raw system calls on inherited descriptors.
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS, 0, nice);
            if let Some(cpu) = cpu {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    libc::_exit(1);
                }
            }
            loop {
                if libc::read(ping.0[0], b.as_mut_ptr().cast(), 1) != 1 {
                    libc::_exit(0);
                }
                if libc::write(pong.0[1], b.as_ptr().cast(), 1) != 1 {
                    libc::_exit(1);
                }
            }
        }
    }
    Ok(pid)
}

/// Kills and reaps `pid`, returning its CPU time in nanoseconds.
fn kill_and_reap(pid: libc::pid_t) -> u64 {
    // The child holds both ends of its pipes, so closing ours would not end it: kill it
    // (it is blocked in read by now) and reap it with its CPU time.
    // SAFETY: our own child; ru is valid for writes.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::wait4(pid, &mut status, 0, &mut ru);
        let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
        tv(ru.ru_utime) + tv(ru.ru_stime)
    }
}

/// Nanoseconds of CPU time per ping-pong round trip between this thread and a forked
/// process, both on `cpu`: this thread's CPU time plus the child's, over every round
/// trip the child made.
fn round_trip(cpu: usize) -> Result<f64> {
    let (ping, pong) = (Pipe::new()?, Pipe::new()?);
    let pid = fork_echo(&ping, &pong, 0, None)?;
    let t = thread_cpu_ns();
    let mut b = [1u8; 1];
    let step = |b: &mut [u8; 1]| -> bool {
        // SAFETY: b is valid for one byte.
        unsafe {
            libc::write(ping.0[1], b.as_ptr().cast(), 1) == 1
                && libc::read(pong.0[0], b.as_mut_ptr().cast(), 1) == 1
        }
    };
    let ok = (0..ROUND_TRIPS).all(|_| step(&mut b));
    let ours = thread_cpu_ns() - t;
    let err = io::Error::last_os_error();
    let child_ns = kill_and_reap(pid);
    if !ok {
        return Err(ValidateError::io(format!("ping-pong on CPU {cpu}"), err));
    }
    Ok((ours + child_ns) as f64 / f64::from(ROUND_TRIPS))
}

/// Wall nanoseconds per ping-pong round trip between this thread (on its CPU) and a
/// forked echo on `echo_cpu`: on two CPUs each side's CPU goes idle while the other
/// answers.
fn round_trip_wall(echo_cpu: usize) -> Result<f64> {
    let (ping, pong) = (Pipe::new()?, Pipe::new()?);
    let pid = fork_echo(&ping, &pong, 0, Some(echo_cpu))?;
    let mut b = [1u8; 1];
    let step = |b: &mut [u8; 1]| -> bool {
        // SAFETY: b is valid for one byte.
        unsafe {
            libc::write(ping.0[1], b.as_ptr().cast(), 1) == 1
                && libc::read(pong.0[0], b.as_mut_ptr().cast(), 1) == 1
        }
    };
    // The first round trips wait for the echo to be pinned and running.
    let warm = (0..IDLE_ROUND_TRIPS / 10).all(|_| step(&mut b));
    let t = std::time::Instant::now();
    let ok = warm && (0..IDLE_ROUND_TRIPS).all(|_| step(&mut b));
    let wall = t.elapsed().as_nanos() as f64;
    let err = io::Error::last_os_error();
    kill_and_reap(pid);
    if !ok {
        return Err(ValidateError::io(format!("ping-pong with CPU {echo_cpu}"), err));
    }
    Ok(wall / f64::from(IDLE_ROUND_TRIPS))
}

/// How long an idle CPU takes to run a task woken onto it: half the difference between
/// a ping-pong round trip across two CPUs (each idles while the other answers, so each
/// half of the trip includes one exit from idle) and one on a single CPU (wall times).
pub fn idle_exit_ns(cross_round_trip_ns: f64, same_round_trip_ns: f64) -> f64 {
    ((cross_round_trip_ns - same_round_trip_ns) / 2.0).max(0.0)
}

/// The waker's extra nanoseconds of CPU time per wake-up: each 1-byte `write` to a pipe
/// whose reader (a forked echo, on this thread's CPU or on `echo_cpu`) is blocked, timed
/// alone, against the same timed `write` to a pipe nobody waits on. Between the timed
/// writes the echo's answer is read and the writer sleeps 20 µs, so that the echo is
/// blocked in `read` again when the next one starts. The echo runs at nice 19, so that
/// on this CPU it does not preempt the writer: the timed write holds the wake-up and no
/// switch.
fn wakeup(echo_cpu: Option<usize>) -> Result<f64> {
    let (ping, pong, idle) = (Pipe::new()?, Pipe::new()?, Pipe::new()?);
    let pid = fork_echo(&ping, &pong, 19, echo_cpu)?;
    let mut b = [1u8; 1];
    let timed_write = |fd: libc::c_int, b: &[u8; 1]| -> Option<u64> {
        let t = thread_cpu_ns();
        // SAFETY: b is valid for one byte.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), 1) };
        let ns = thread_cpu_ns() - t;
        (n == 1).then_some(ns)
    };
    let read1 = |fd: libc::c_int, b: &mut [u8; 1]| -> bool {
        // SAFETY: b is valid for one byte.
        unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) == 1 }
    };
    let (mut waking, mut plain) = (0u64, 0u64);
    let mut ok = true;
    for _ in 0..WAKEUPS {
        // The echo is blocked in read: this write wakes it; its answer tells us it is
        // about to block again (and blocks before we run, on one CPU).
        match timed_write(ping.0[1], &b) {
            Some(ns) if read1(pong.0[0], &mut b) => waking += ns,
            _ => ok = false,
        }
        std::thread::sleep(std::time::Duration::from_micros(20));
        match timed_write(idle.0[1], &b) {
            Some(ns) if read1(idle.0[0], &mut b) => plain += ns,
            _ => ok = false,
        }
        if !ok {
            break;
        }
    }
    let err = io::Error::last_os_error();
    kill_and_reap(pid);
    if !ok {
        return Err(ValidateError::io("wake-ups through a pipe", err));
    }
    Ok((waking.saturating_sub(plain)) as f64 / f64::from(WAKEUPS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_cost_is_the_extra_time_per_kib_moved() {
        // 1-byte pair 800 ns; 32 KiB pair 800 + 2 * 32 * 50 ns: 50 ns per KiB per call
        // (the 1 byte is negligible but counted).
        let c = copy_ns_per_kib(800.0, 0, 800.0 + 3200.0, 32 * 1024);
        assert!((c - 50.0).abs() < 1e-9, "{c}");
        assert_eq!(copy_ns_per_kib(800.0, 1, 700.0, 1024), 0.0, "never negative");
        assert_eq!(copy_ns_per_kib(800.0, 10, 900.0, 10), 0.0, "no extra bytes");
    }

    #[test]
    fn a_switch_is_half_a_round_trip_less_a_write_a_read_and_a_wakeup() {
        // Round trip 5 µs: 2.5 µs per half, of which 2 x 400 ns are the calls and 300 ns
        // the wake-up.
        assert_eq!(context_switch_ns(5_000.0, 400.0, 300.0), 1_400.0);
        assert_eq!(context_switch_ns(500.0, 400.0, 0.0), 0.0, "never negative");
    }

    #[test]
    fn tunables_are_rounded_whole_nanoseconds() {
        let c = Calibration {
            cpu: 0,
            reps: 1,
            null_syscall_ns: 90.0,
            pipe_syscall_ns: 412.6,
            copy_ns_per_kib: 31.2,
            mem_ns_per_kib: 7.6,
            round_trip_ns: 5_000.0,
            wakeup_ns: 250.4,
            context_switch_ns: 1_424.4,
            other_cpu: Some(1),
            same_cpu_round_trip_wall_ns: 5_000.0,
            cross_cpu_round_trip_wall_ns: Some(65_000.0),
            idle_exit_ns: Some(30_000.0),
            wakeup_remote_ns: Some(5_600.4),
            fork_ns: 60_412.6,
            exit_ns: 80_000.2,
        };
        assert_eq!(
            c.tunables(),
            [
                ("syscall_ns", 413),
                ("copy_ns_per_kib", 31),
                ("mem_ns_per_kib", 8),
                ("wakeup_ns", 250),
                ("context_switch_ns", 1_424),
                ("fork_ns", 60_000),
                ("exit_ns", 80_000),
                ("wakeup_remote_ns", 5_600),
                ("idle_exit_ns", 30_000)
            ]
        );
        let one_cpu = Calibration { idle_exit_ns: None, wakeup_remote_ns: None, ..c };
        assert_eq!(one_cpu.tunables().len(), 7, "nothing across CPUs measured, nothing set");
    }

    #[test]
    fn measuring_gives_plausible_costs() {
        let allowed = allowed_cpus().unwrap();
        let (c, _) = std::thread::spawn(move || measure_pinned(1, &allowed)).join().unwrap().unwrap();
        assert!(c.null_syscall_ns > 1.0 && c.null_syscall_ns < 100_000.0, "{c:?}");
        assert!(c.pipe_syscall_ns > c.null_syscall_ns * 0.5, "{c:?}");
        assert!(c.round_trip_ns > 2.0 * c.pipe_syscall_ns, "{c:?}");
        assert!(c.wakeup_ns > 0.0 && c.wakeup_ns < c.round_trip_ns / 2.0, "{c:?}");
        // A memset that the compiler kept: it takes time.
        assert!(c.mem_ns_per_kib > 0.0 && c.mem_ns_per_kib < 100_000.0, "{c:?}");
        let two_cpus = c.other_cpu.is_some();
        assert_eq!(c.tunables().len(), 7 + 2 * usize::from(two_cpus));
        if two_cpus {
            assert!(c.cross_cpu_round_trip_wall_ns.unwrap() > 0.0 && c.idle_exit_ns.is_some(), "{c:?}");
            assert!(c.wakeup_remote_ns.is_some(), "{c:?}");
        }
    }

    #[test]
    fn the_idle_exit_is_half_the_extra_round_trip_across_cpus() {
        assert_eq!(idle_exit_ns(65_000.0, 5_000.0), 30_000.0);
        assert_eq!(idle_exit_ns(4_000.0, 5_000.0), 0.0, "never negative");
    }
}
