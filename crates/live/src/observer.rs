//! The live observer: eBPF programs on the scheduler and system-call tracepoints
//! (`src/bpf/observer.bpf.c`) turned into the model's [`Event`] stream.
//!
//! - System calls are counted in the kernel per (thread group, call number); read them
//!   with [`Observer::syscall_counts`].
//! - Context switches, wakings, exec, fork, exit, and the enter of the calls SWAP's
//!   resource model needs go through an 8 MiB ring buffer. The kernel side wakes the
//!   reader only past 256 KiB of unread data; [`Observer::poll`] drains it (call it on a
//!   timer, waiting up to 100 ms). Records lost to a full buffer are counted
//!   ([`Observer::lost_events`]).
//! - The observer's own thread group is not traced, except for its context switches:
//!   the switch away from an observer thread is also the switch to the next task.
//! - The enter of a call SWAP looks at is sent once per (thread, call, object) every
//!   250 ms at most (`close`, `flock`, `kill` always; a `close` makes the next use of
//!   its descriptor number be sent at once): provider lists need to know who uses an
//!   object, not every use, and hackbench-like loads would flood the buffer and cost
//!   the traced programs a record per call. The per-thread state (last call, throttle)
//!   is in task-local storage.
//!
//! Resources: the kernel side remembers each thread's last call and its first three
//! arguments; when a thread blocks, user space turns that call into a [`Resource`]
//! (`/proc/PID/fd/FD` → `pipe:[N]`, `socket:[N]`, a FIFO or a locked file; SysV ids and
//! signals directly). A descriptor that is already closed when the records are read
//! resolves to nothing.

use std::cell::RefCell;
use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::rc::Rc;

use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, MapHandle, OpenObject, RingBuffer, RingBufferBuilder};
use schedlab_model::{Event, EventKind, FlockKind, Ns, Pid, PrevState, Resource, SyscallArgs};

#[allow(clippy::all, dead_code, missing_docs, unused_imports)]
mod skel {
    include!(concat!(env!("OUT_DIR"), "/observer.skel.rs"));
}

use skel::{ObserverSkel, ObserverSkelBuilder};

/// Why the observer cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ObserverError {
    #[error("the live observer needs root (CAP_BPF and CAP_PERFMON): run it with sudo")]
    NotRoot,
    #[error(
        "the kernel has no BTF ({0} is missing): the observer's BPF programs need a kernel built with CONFIG_DEBUG_INFO_BTF=y"
    )]
    NoBtf(&'static str),
    #[error(
        "tracefs is missing ({0}) and could not be mounted: mount -t tracefs tracefs /sys/kernel/tracing"
    )]
    NoTracefs(String),
    #[error("the kernel has no tracepoint {0} (needed by the observer)")]
    NoTracepoint(&'static str),
    #[error("{what}: {source}")]
    Bpf {
        what: &'static str,
        #[source]
        source: libbpf_rs::Error,
    },
}

fn bpf(what: &'static str) -> impl FnOnce(libbpf_rs::Error) -> ObserverError {
    move |source| ObserverError::Bpf { what, source }
}

const TRACEFS: &str = "/sys/kernel/tracing";
const BTF: &str = "/sys/kernel/btf/vmlinux";
const TRACEPOINTS: [&str; 6] = [
    "raw_syscalls/sys_enter",
    "sched/sched_switch",
    "sched/sched_waking",
    "sched/sched_process_exec",
    "sched/sched_process_fork",
    "sched/sched_process_exit",
];

/// Checks what the observer needs, mounting tracefs if it is not mounted; says exactly
/// what is missing.
pub fn check_environment() -> Result<(), ObserverError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(ObserverError::NotRoot);
    }
    if !Path::new(BTF).exists() {
        return Err(ObserverError::NoBtf(BTF));
    }
    let events = Path::new(TRACEFS).join("events");
    if !events.exists() {
        let status = std::process::Command::new("mount").args(["-t", "tracefs", "tracefs", TRACEFS]).status();
        if !events.exists() {
            let why = match status {
                Ok(s) => format!("{} not found; mount exited with {s}", events.display()),
                Err(e) => format!("{} not found; running mount failed: {e}", events.display()),
            };
            return Err(ObserverError::NoTracefs(why));
        }
    }
    for tp in TRACEPOINTS {
        if !events.join(tp).exists() {
            return Err(ObserverError::NoTracepoint(tp));
        }
    }
    Ok(())
}

/// What to record.
#[derive(Clone, Copy, Debug)]
pub struct ObserverOptions {
    /// Emit `SyscallEnter` events for the calls SWAP's resource model looks at (pipe,
    /// socket and file I/O, close, flock, SysV IPC, signals, wait, clone). Counting all
    /// calls in the kernel happens regardless.
    pub syscall_enters: bool,
    /// Wake the reader once this many bytes are unread in the ring buffer.
    pub wakeup_bytes: u64,
    /// The nice value the calling (reading) thread takes: under a load of many runnable
    /// tasks a reader at nice 0 gets too little CPU to keep up and records are lost.
    /// `None` leaves it.
    pub reader_nice: Option<i32>,
}

impl Default for ObserverOptions {
    fn default() -> Self {
        ObserverOptions { syscall_enters: true, wakeup_bytes: 256 * 1024, reader_nice: Some(-10) }
    }
}

/// What the observer knows of a task (thread).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskInfo {
    /// Thread group (process) id, 0 when not yet seen.
    pub tgid: u32,
    /// The task name (15 characters at most).
    pub comm: String,
    /// The program it exec'd while observed, if it did.
    pub exe: Option<String>,
}

// Record types, as in observer.bpf.c.
const REC_SWITCH: u32 = 1;
const REC_WAKING: u32 = 2;
const REC_EXEC: u32 = 3;
const REC_FORK: u32 = 4;
const REC_EXIT: u32 = 5;
const REC_ENTER: u32 = 6;
const NO_SYSCALL: u32 = u32::MAX;
const REC_SIZE: usize = 80;

/// One decoded ring-buffer record (`struct rec` of observer.bpf.c).
#[derive(Clone, Debug)]
struct Rec {
    ts: u64,
    kind: u32,
    cpu: u32,
    pid: u32,
    tgid: u32,
    pid2: u32,
    nr: u32,
    value: i64,
    args: [u64; 3],
    comm: [u8; 16],
    filename: Option<String>,
}

fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn decode(data: &[u8]) -> Option<Rec> {
    if data.len() < REC_SIZE {
        return None;
    }
    let u32_at = |o: usize| u32::from_ne_bytes(data[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_ne_bytes(data[o..o + 8].try_into().unwrap());
    let kind = u32_at(8);
    Some(Rec {
        ts: u64_at(0),
        kind,
        cpu: u32_at(12),
        pid: u32_at(16),
        tgid: u32_at(20),
        pid2: u32_at(24),
        nr: u32_at(28),
        value: u64_at(32) as i64,
        args: [u64_at(40), u64_at(48), u64_at(56)],
        comm: data[64..80].try_into().unwrap(),
        filename: (kind == REC_EXEC && data.len() > 80).then(|| cstr(&data[80..])),
    })
}

/// What a descriptor names, as far as SWAP cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FdTarget {
    Pipe(u64),
    Fifo(u64),
    Socket(u64),
    File(u64),
    Other,
}

/// `/proc/PID/fd/FD` → what it names; `None` when it is gone.
fn resolve_fd(pid: u32, tgid: u32, fd: i32) -> Option<FdTarget> {
    if fd < 0 {
        return None;
    }
    for p in [pid, tgid] {
        if p == 0 {
            continue;
        }
        let link = format!("/proc/{p}/fd/{fd}");
        let Ok(target) = std::fs::read_link(&link) else { continue };
        let target = target.to_string_lossy().into_owned();
        let bracketed = |prefix: &str| {
            target.strip_prefix(prefix).and_then(|s| s.strip_suffix(']')).and_then(|n| n.parse::<u64>().ok())
        };
        if let Some(n) = bracketed("pipe:[") {
            return Some(FdTarget::Pipe(n));
        }
        if let Some(n) = bracketed("socket:[") {
            return Some(FdTarget::Socket(n));
        }
        if !target.starts_with('/') {
            return Some(FdTarget::Other);
        }
        let Ok(meta) = std::fs::metadata(&link) else { continue };
        return Some(if meta.file_type().is_fifo() {
            FdTarget::Fifo(meta.ino())
        } else {
            FdTarget::File(meta.ino())
        });
    }
    None
}

/// System-call numbers used below (x86_64).
mod nr {
    pub const READ: u32 = 0;
    pub const WRITE: u32 = 1;
    pub const CLOSE: u32 = 3;
    pub const READV: u32 = 19;
    pub const WRITEV: u32 = 20;
    pub const PAUSE: u32 = 34;
    pub const SENDFILE: u32 = 40;
    pub const CONNECT: u32 = 42;
    pub const ACCEPT: u32 = 43;
    pub const SENDTO: u32 = 44;
    pub const RECVFROM: u32 = 45;
    pub const SENDMSG: u32 = 46;
    pub const RECVMSG: u32 = 47;
    pub const WAIT4: u32 = 61;
    pub const KILL: u32 = 62;
    pub const SEMOP: u32 = 65;
    pub const MSGSND: u32 = 69;
    pub const MSGRCV: u32 = 70;
    pub const FLOCK: u32 = 73;
    pub const RT_SIGTIMEDWAIT: u32 = 128;
    pub const RT_SIGSUSPEND: u32 = 130;
    pub const TKILL: u32 = 200;
    pub const SEMTIMEDOP: u32 = 220;
    pub const TGKILL: u32 = 234;
    pub const WAITID: u32 = 247;
    pub const ACCEPT4: u32 = 288;
    pub const RECVMMSG: u32 = 299;
    pub const SENDMMSG: u32 = 307;
}

/// The live observer. Dropping it detaches the programs.
pub struct Observer {
    // Field order is drop order: the ring buffer before the map handle it reads, both
    // before the skeleton (whose drop detaches and closes everything).
    ring: RingBuffer<'static>,
    _events_map: Box<MapHandle>,
    skel: ObserverSkel<'static>,
    records: Rc<RefCell<Vec<Rec>>>,
    fds: HashMap<(u32, i32), Option<FdTarget>>,
    tasks: HashMap<u32, TaskInfo>,
    events: u64,
    last_time: Ns,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer").field("events", &self.events).finish_non_exhaustive()
    }
}

impl Observer {
    /// Loads and attaches the programs (after [`check_environment`]).
    pub fn start(options: ObserverOptions) -> Result<Self, ObserverError> {
        check_environment()?;
        // The skeleton borrows its object for its whole life and drops it in place;
        // only the small box is leaked, once per observer.
        let object: &'static mut MaybeUninit<OpenObject> = Box::leak(Box::new(MaybeUninit::uninit()));
        let mut open = ObserverSkelBuilder::default().open(object).map_err(bpf("opening the BPF object"))?;
        let rodata = open.maps.rodata_data.as_deref_mut().expect("the BPF object has .rodata");
        rodata.self_tgid = std::process::id();
        rodata.emit_enter = u8::from(options.syscall_enters);
        rodata.wakeup_bytes = options.wakeup_bytes;
        let mut skel = open.load().map_err(bpf("loading the BPF programs into the kernel"))?;
        skel.attach().map_err(bpf("attaching the BPF programs to their tracepoints"))?;
        if let Some(nice) = options.reader_nice {
            // SAFETY: plain system calls on the calling thread. Best effort: a failure
            // only makes losses under load more likely (they are counted).
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::setpriority(libc::PRIO_PROCESS, tid, nice);
            }
        }

        let handle =
            Box::new(MapHandle::try_from(&skel.maps.events).map_err(bpf("opening the ring buffer"))?);
        // SAFETY: the handle lives in a box owned by the observer, which drops the ring
        // buffer (declared first) before it; the box never moves its contents.
        let handle_ref: &'static MapHandle = unsafe { &*(handle.as_ref() as *const MapHandle) };
        let records = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::clone(&records);
        let mut builder = RingBufferBuilder::new();
        builder
            .add(handle_ref, move |data: &[u8]| {
                if let Some(r) = decode(data) {
                    sink.borrow_mut().push(r);
                }
                0
            })
            .map_err(bpf("setting up the ring buffer reader"))?;
        let ring = builder.build().map_err(bpf("setting up the ring buffer reader"))?;
        Ok(Observer {
            ring,
            _events_map: handle,
            skel,
            records,
            fds: HashMap::new(),
            tasks: HashMap::new(),
            events: 0,
            last_time: 0,
        })
    }

    /// Waits up to `timeout` for the kernel side to signal a filled buffer (past the
    /// wake-up threshold), then drains the ring buffer: every record becomes one or more
    /// events, given to `sink` in time order. Returns the number of events given.
    pub fn poll(
        &mut self,
        sink: &mut dyn schedlab_model::EventSink,
        timeout: std::time::Duration,
    ) -> Result<usize, ObserverError> {
        if !timeout.is_zero() {
            self.ring.poll(timeout).map_err(bpf("waiting on the ring buffer"))?;
        }
        self.ring.consume().map_err(bpf("reading the ring buffer"))?;
        let mut recs = std::mem::take(&mut *self.records.borrow_mut());
        recs.sort_by_key(|r| r.ts);
        let mut n = 0;
        for r in recs {
            for e in self.convert(&r) {
                sink.event(&e);
                n += 1;
            }
        }
        self.events += n as u64;
        Ok(n)
    }

    /// Events given so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The time of the latest record read (`CLOCK_MONOTONIC` ns), 0 before any.
    pub fn last_time(&self) -> Ns {
        self.last_time
    }

    /// What is known of task `pid` (name, process, program).
    pub fn task(&self, pid: u32) -> Option<&TaskInfo> {
        self.tasks.get(&pid)
    }

    /// Every task seen.
    pub fn tasks(&self) -> &HashMap<u32, TaskInfo> {
        &self.tasks
    }

    /// System calls counted in the kernel since the start: (thread group, call number) →
    /// count. The observer's own calls are not counted.
    pub fn syscall_counts(&self) -> Result<HashMap<(u32, u32), u64>, ObserverError> {
        let map = &self.skel.maps.counts;
        let mut out = HashMap::new();
        for key in map.keys() {
            let Some(per_cpu) =
                map.lookup_percpu(&key, MapFlags::ANY).map_err(bpf("reading the syscall counts"))?
            else {
                continue;
            };
            let tgid = u32::from_ne_bytes(key[0..4].try_into().unwrap());
            let nr = u32::from_ne_bytes(key[4..8].try_into().unwrap());
            let total: u64 = per_cpu.iter().map(|v| u64::from_ne_bytes(v[..8].try_into().unwrap())).sum();
            out.insert((tgid, nr), total);
        }
        Ok(out)
    }

    /// Marks thread `tid` urgent (or not): when an urgent thread blocks, the kernel side
    /// wakes the reader at once instead of waiting for the wake-up threshold, so the
    /// daemon reacts to that block within microseconds rather than a poll period.
    pub fn set_urgent(&self, tid: u32, urgent: bool) -> Result<(), ObserverError> {
        let map = &self.skel.maps.urgent;
        let key = tid.to_ne_bytes();
        if urgent {
            map.update(&key, &[1u8], MapFlags::ANY).map_err(bpf("marking a thread urgent"))
        } else {
            // Deleting a key that is not there is not an error here.
            let _ = map.delete(&key);
            Ok(())
        }
    }

    /// Records the kernel side could not put in the full ring buffer.
    pub fn lost_events(&self) -> Result<u64, ObserverError> {
        let per_cpu = self
            .skel
            .maps
            .lost
            .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(bpf("reading the lost-event counter"))?
            .unwrap_or_default();
        Ok(per_cpu.iter().map(|v| u64::from_ne_bytes(v[..8].try_into().unwrap())).sum())
    }

    /// Detaches the programs (as dropping does).
    pub fn stop(self) {}

    fn note_comm(&mut self, pid: u32, tgid: u32, comm: &[u8]) {
        if pid == 0 {
            return;
        }
        let t = self.tasks.entry(pid).or_default();
        if tgid != 0 {
            t.tgid = tgid;
        }
        let len = comm.iter().position(|&c| c == 0).unwrap_or(comm.len());
        if len > 0 && t.comm.as_bytes() != &comm[..len] {
            t.comm = String::from_utf8_lossy(&comm[..len]).into_owned();
        }
    }

    fn fd_target(&mut self, pid: u32, tgid: u32, fd: i32) -> Option<FdTarget> {
        let key = (if tgid != 0 { tgid } else { pid }, fd);
        if let Some(t) = self.fds.get(&key) {
            return *t;
        }
        let t = resolve_fd(pid, tgid, fd);
        if self.fds.len() > 100_000 {
            self.fds.clear();
        }
        self.fds.insert(key, t);
        t
    }

    /// The identifying arguments of call `nr` made by `pid`, with the resource resolved.
    fn args_of(&mut self, pid: u32, tgid: u32, nr: u32, a: [u64; 3]) -> SyscallArgs {
        let mut out = SyscallArgs::default();
        let fd = a[0] as i32;
        match nr {
            nr::READ
            | nr::WRITE
            | nr::READV
            | nr::WRITEV
            | nr::SENDTO
            | nr::RECVFROM
            | nr::SENDMSG
            | nr::RECVMSG
            | nr::SENDMMSG
            | nr::RECVMMSG
            | nr::SENDFILE
            | nr::CONNECT
            | nr::ACCEPT
            | nr::ACCEPT4
            | nr::CLOSE => {
                out.fd = Some(fd);
                if matches!(nr, nr::READ | nr::WRITE) {
                    out.count = Some(a[2] as i64);
                }
                let write = matches!(
                    nr,
                    nr::WRITE | nr::WRITEV | nr::SENDTO | nr::SENDMSG | nr::SENDMMSG | nr::SENDFILE
                );
                out.resource = match self.fd_target(pid, tgid, fd) {
                    Some(FdTarget::Pipe(inode)) => Some(Resource::Pipe { inode, write }),
                    Some(FdTarget::Fifo(inode)) => Some(Resource::Fifo { inode, write }),
                    Some(FdTarget::Socket(inode)) => Some(Resource::Socket { inode }),
                    _ => None,
                };
            }
            nr::FLOCK => {
                let op = a[1] as i32;
                out.fd = Some(fd);
                out.flock_op = Some(op);
                if let Some(FdTarget::File(inode) | FdTarget::Fifo(inode)) = self.fd_target(pid, tgid, fd) {
                    let lock = if op & 1 != 0 { FlockKind::Shared } else { FlockKind::Exclusive };
                    out.resource = Some(Resource::Flock { inode, lock });
                }
            }
            nr::SEMOP | nr::SEMTIMEDOP => {
                out.sysv_id = Some(a[0] as i32);
                // The semaphore number is in the user's sembuf array, not read: 0.
                out.resource = Some(Resource::SysvSem { id: a[0] as i32, num: 0 });
            }
            nr::MSGSND | nr::MSGRCV => {
                out.sysv_id = Some(a[0] as i32);
                if nr == nr::MSGSND {
                    out.count = Some(a[2] as i64);
                }
                out.resource = Some(Resource::SysvMsg { id: a[0] as i32 });
            }
            nr::KILL | nr::TKILL => {
                let target = a[0] as i32;
                out.target_pid = Some(target);
                out.signal = Some(a[1] as i32);
                out.resource = (target > 0).then_some(Resource::Signal { pid: target as u32 });
            }
            nr::TGKILL => {
                let target = a[1] as i32;
                out.target_pid = Some(target);
                out.signal = Some(a[2] as i32);
                out.resource = (target > 0).then_some(Resource::Signal { pid: target as u32 });
            }
            nr::WAIT4 | nr::WAITID | nr::PAUSE | nr::RT_SIGSUSPEND | nr::RT_SIGTIMEDWAIT => {
                if nr == nr::WAIT4 {
                    out.target_pid = Some(a[0] as i32);
                }
                out.resource = Some(Resource::Signal { pid });
            }
            _ => {}
        }
        out
    }

    fn convert(&mut self, r: &Rec) -> Vec<Event> {
        self.last_time = self.last_time.max(r.ts);
        let at = |kind| Event { time: r.ts, kind };
        match r.kind {
            REC_ENTER => {
                self.note_comm(r.pid, r.tgid, &[]);
                let args = self.args_of(r.pid, r.tgid, r.nr, r.args);
                if r.nr == nr::CLOSE {
                    self.fds.remove(&(r.tgid, r.args[0] as i32));
                }
                vec![at(EventKind::SyscallEnter { pid: Pid(r.pid), nr: r.nr, args })]
            }
            REC_SWITCH => {
                self.note_comm(r.pid, r.tgid, &[]);
                self.note_comm(r.pid2, 0, &r.comm);
                let state = r.value;
                // The report form of the state: R 0 (0x100 preempted), S 1, D 2, T 4,
                // t 8, X 0x10, Z 0x20, P 0x40, I 0x80.
                let prev_state = if state & 0x30 != 0 {
                    PrevState::Dead
                } else if state & 0xcf != 0 {
                    PrevState::Blocked
                } else {
                    PrevState::Runnable
                };
                let switch =
                    at(EventKind::Switch { cpu: r.cpu, prev: Pid(r.pid), prev_state, next: Pid(r.pid2) });
                if prev_state == PrevState::Blocked && r.pid != 0 {
                    let resource = if r.nr == NO_SYSCALL {
                        None
                    } else {
                        self.args_of(r.pid, r.tgid, r.nr, r.args).resource
                    };
                    vec![at(EventKind::Block { pid: Pid(r.pid), resource }), switch]
                } else {
                    vec![switch]
                }
            }
            REC_WAKING => {
                self.note_comm(r.pid, r.tgid, &[]);
                self.note_comm(r.pid2, 0, &r.comm);
                vec![at(EventKind::Wakeup { waker: Pid(r.pid), wakee: Pid(r.pid2), cpu: r.value as u32 })]
            }
            REC_EXEC => {
                // The kernel gives the name as passed to execve (`./a.out`, a symlink);
                // the program is its canonical path, the same for every way it is run.
                // A process that is gone by now, or that has exec'd a program of another
                // name since, keeps the raw name.
                let raw = r.filename.clone().unwrap_or_default();
                let path = std::fs::read_link(format!("/proc/{}/exe", r.pid))
                    .ok()
                    .map(|p| p.display().to_string())
                    .filter(|p| raw.is_empty() || Path::new(&raw).file_name() == Path::new(p).file_name())
                    .unwrap_or(raw);
                self.note_comm(r.pid, r.tgid, &r.comm);
                if let Some(t) = self.tasks.get_mut(&r.pid) {
                    t.exe = Some(path.clone());
                }
                // Close-on-exec descriptors are gone.
                let tgid = r.tgid;
                self.fds.retain(|k, _| k.0 != tgid);
                vec![at(EventKind::Exec { pid: Pid(r.pid), tgid: Pid(r.tgid), comm: cstr(&r.comm), path })]
            }
            REC_FORK => {
                let thread = r.value == 1;
                let parent = self.tasks.get(&r.pid).cloned().unwrap_or_default();
                let child = self.tasks.entry(r.pid2).or_default();
                child.tgid = if thread { r.tgid } else { r.pid2 };
                child.comm = cstr(&r.comm);
                child.exe = parent.exe;
                vec![at(EventKind::Fork { parent: Pid(r.pid), child: Pid(r.pid2), thread })]
            }
            REC_EXIT => {
                if r.pid2 != 0 {
                    let tgid = r.tgid;
                    self.fds.retain(|k, _| k.0 != tgid);
                }
                vec![at(EventKind::Exit { pid: Pid(r.pid), code: r.value as i32 })]
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_decode_as_the_bpf_side_lays_them_out() {
        let mut b = vec![0u8; REC_SIZE + 8];
        b[0..8].copy_from_slice(&7u64.to_ne_bytes());
        b[8..12].copy_from_slice(&REC_EXEC.to_ne_bytes());
        b[16..20].copy_from_slice(&42u32.to_ne_bytes());
        b[28..32].copy_from_slice(&NO_SYSCALL.to_ne_bytes());
        b[64..67].copy_from_slice(b"cat");
        b[80..84].copy_from_slice(b"/bin");
        let r = decode(&b).unwrap();
        assert_eq!((r.ts, r.kind, r.pid, r.nr), (7, REC_EXEC, 42, NO_SYSCALL));
        assert_eq!((cstr(&r.comm).as_str(), r.filename.as_deref()), ("cat", Some("/bin")));
        assert!(decode(&b[..10]).is_none());
    }
}
