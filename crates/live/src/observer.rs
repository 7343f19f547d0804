//! The live observer: eBPF programs on the scheduler's BTF raw tracepoints and, on
//! demand, on the system-call entry (`src/bpf/observer.bpf.c`), turned into the model's
//! [`Event`] stream.
//!
//! - Context switches, wakings, exec, fork and exit go through an 8 MiB ring buffer. The
//!   kernel side wakes the reader only past 256 KiB of unread data (at once for the
//!   blocking and the waking of a watched thread); [`Observer::poll`] drains it
//!   (call it on a timer, waiting up to 100 ms). Records lost to a full buffer are
//!   counted ([`Observer::lost_events`]).
//! - [`SchedEvents::All`] records every switch and waking (`schedlab observe`, PFS run
//!   bursts); [`SchedEvents::Watched`] records only the blocking switches and the
//!   wakings of the threads marked with [`Observer::set_watched`], so that a daemon
//!   observing a machine costs the other switches one task-storage lookup each and no
//!   record. While nothing is marked in that mode the switch and waking programs are
//!   detached altogether: a context switch costs what it costs without schedlab.
//!   Exec, fork and exit are always recorded.
//! - What a blocked thread waits for is read at its blocking switch from its saved user
//!   registers (the call it is in, its first three arguments) and a descriptor is
//!   resolved to its inode in the kernel, so a [`EventKind::Block`] names its
//!   [`Resource`] (`pipe:[N]`, `socket:[N]`, a FIFO or a locked file; SysV ids and
//!   signals directly) without any per-syscall hook.
//! - Providers (SWAP): when a waking's waker is a user thread inside a call SWAP's
//!   resource model looks at, the record carries that call, and the waker's
//!   [`EventKind::SyscallEnter`] is given just before the [`EventKind::Wakeup`]: SWAP
//!   learns providers from the calls that actually woke someone. (A waking from an
//!   interrupt is seen in the context of whatever task it interrupted, as the Wakeup's
//!   waker always was: if that task was inside such a call, the call is given too.)
//! - The system-call hook (per-(thread group, call) counts in the kernel, read with
//!   [`Observer::syscall_counts`], and the enter of the calls SWAP looks at) is attached
//!   only when asked ([`ObserverOptions::syscalls`], [`Observer::set_syscall_hook`]):
//!   while any program is attached to the system-call entry, every call on the machine
//!   takes the kernel's slow path (`hackbench -g 10 -l 100 -p` on a 2-CPU VM: about
//!   +50 % with the hook and every switch recorded, about +1 % in watched mode without
//!   it, with nothing watched). While it is attached with
//!   [`ObserverOptions::syscall_enters`], its enter records name the providers and the
//!   wakings carry no call; without (the daemon), it only counts, and a provider is
//!   only ever a thread whose call woke someone (a call that did what it asked, unlike an
//!   enter, which a refused `kill()` has too). The enter of a call is sent once per
//!   (thread, call, object) every 256 uses at most (`close`, `flock`, `kill` always; a
//!   `close` makes the next use of its descriptor number be sent at once): provider
//!   lists need to know who uses an object, not every use.
//! - The observer's own thread group is not traced, except for its context switches:
//!   the switch away from an observer thread is also the switch to the next task.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::rc::Rc;

use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, MapHandle, OpenObject, RingBuffer, RingBufferBuilder};
use schedlab_model::{Event, EventKind, FlockKind, Life, Ns, Pid, PrevState, Resource, SyscallArgs};

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
    #[error("the kernel has no tracepoint {0} in its BTF (needed by the observer)")]
    NoTracepoint(&'static str),
    #[error("cannot open thread {tid} (pidfd_open): {source}")]
    Thread {
        tid: u32,
        #[source]
        source: std::io::Error,
    },
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

const BTF: &str = "/sys/kernel/btf/vmlinux";
/// The BTF raw tracepoints the programs attach to (the kernel's `btf_trace_<name>`).
const TRACEPOINTS: [&str; 6] = [
    "sys_enter",
    "sched_switch",
    "sched_waking",
    "sched_process_exec",
    "sched_process_fork",
    "sched_process_exit",
];

/// Checks what the observer needs (root, the kernel's BTF and the tracepoints in it);
/// says exactly what is missing.
pub fn check_environment() -> Result<(), ObserverError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(ObserverError::NotRoot);
    }
    if !Path::new(BTF).exists() {
        return Err(ObserverError::NoBtf(BTF));
    }
    let btf = libbpf_rs::btf::Btf::from_vmlinux().map_err(bpf("reading the kernel's BTF"))?;
    for tp in TRACEPOINTS {
        let name = format!("btf_trace_{tp}");
        if btf.type_by_name::<libbpf_rs::btf::types::Typedef<'_>>(&name).is_none() {
            return Err(ObserverError::NoTracepoint(tp));
        }
    }
    Ok(())
}

/// Which switches and wakings the kernel side records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchedEvents {
    /// Every switch and every waking (`schedlab observe`, PFS run bursts, tests).
    #[default]
    All,
    /// Only the blocking switches (to S or D) and the wakings of the threads marked with
    /// [`Observer::set_watched`], each waking with its waker's call (see the module
    /// docs): what the daemon needs to boost providers, at the price of one
    /// task-storage lookup per switch and waking for everything else.
    Watched,
}

/// What to record.
#[derive(Clone, Copy, Debug)]
pub struct ObserverOptions {
    /// Attach the system-call hook at start (per-(thread group, call) counts, and the
    /// enter records of [`ObserverOptions::syscall_enters`]). It makes every system
    /// call on the machine slower while attached; [`Observer::set_syscall_hook`]
    /// attaches and detaches it later.
    pub syscalls: bool,
    /// While the hook is attached, emit `SyscallEnter` events for the calls SWAP's
    /// resource model looks at (pipe, socket and file I/O, close, flock, SysV IPC,
    /// signals, wait, clone); the hook counts all calls regardless. Off (the daemon),
    /// the wakings carry their waker's call whether the hook is on or not, so that every
    /// `SyscallEnter` given is of a call that woke someone: an enter is given before the
    /// call's outcome is known, and a `kill()` refused with `EPERM` must not make its
    /// caller a provider of the process it failed to signal.
    pub syscall_enters: bool,
    /// Which switches and wakings are recorded at start
    /// ([`Observer::set_sched_events`] switches later).
    pub sched_events: SchedEvents,
    /// Wake the reader once this many bytes are unread in the ring buffer.
    pub wakeup_bytes: u64,
    /// The nice value the calling (reading) thread takes: under a load of many runnable
    /// tasks a reader at nice 0 gets too little CPU to keep up and records are lost.
    /// `None` leaves it.
    pub reader_nice: Option<i32>,
    /// Forget a task at its exit ([`Observer::task`] knows only live ones). Off, every
    /// task seen stays known, to name the exited ones in a report (`observe`); on, what
    /// is kept is bounded by the tasks alive (a daemon).
    pub forget_exited: bool,
}

impl Default for ObserverOptions {
    /// Everything, with the system-call hook attached (`schedlab observe`'s view).
    fn default() -> Self {
        ObserverOptions {
            syscalls: true,
            syscall_enters: true,
            sched_events: SchedEvents::All,
            wakeup_bytes: 256 * 1024,
            reader_nice: Some(-10),
            forget_exited: false,
        }
    }
}

impl ObserverOptions {
    /// The near-free view for a daemon: [`SchedEvents::Watched`], no system-call hook
    /// (attach it with [`Observer::set_syscall_hook`] while counts are needed), and
    /// providers only from calls that woke someone (no enter records).
    pub fn watched() -> Self {
        ObserverOptions {
            syscalls: false,
            syscall_enters: false,
            sched_events: SchedEvents::Watched,
            forget_exited: true,
            ..ObserverOptions::default()
        }
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
const REC_SIZE: usize = 96;
// What the descriptor in args[0] names, as resolved in the kernel (enum fd_kind).
const FD_PIPE: u32 = 1;
const FD_FIFO: u32 = 2;
const FD_SOCKET: u32 = 3;
const FD_FILE: u32 = 4;
const FD_OTHER: u32 = 5;

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
    /// What the descriptor `args[0]` names, when the call takes one and the kernel side
    /// could read it.
    target: Option<FdTarget>,
    /// The record's `ino` as it came (an exit's voluntary switches).
    ino: u64,
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
    let ino = u64_at(64);
    let target = match u32_at(72) {
        FD_PIPE => Some(FdTarget::Pipe(ino)),
        FD_FIFO => Some(FdTarget::Fifo(ino)),
        FD_SOCKET => Some(FdTarget::Socket(ino)),
        FD_FILE => Some(FdTarget::File(ino)),
        FD_OTHER => Some(FdTarget::Other),
        _ => None,
    };
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
        target,
        ino,
        comm: data[80..96].try_into().unwrap(),
        filename: (kind == REC_EXEC && data.len() > REC_SIZE).then(|| cstr(&data[REC_SIZE..])),
    })
}

/// What a descriptor names, as far as SWAP cares (the inode number is the one
/// `/proc/PID/fd/FD` shows: `pipe:[N]`, `socket:[N]`, or the file's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FdTarget {
    Pipe(u64),
    Fifo(u64),
    Socket(u64),
    File(u64),
    Other,
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
    // Field order is drop order: the system-call hook's link and the ring buffer before
    // the map handle it reads, all before the skeleton (whose drop detaches and closes
    // everything else).
    sys_enter: Option<Link>,
    /// The switch and waking programs' links, attached while they have something to
    /// record ([`Observer::sched_programs_attached`]).
    sched_links: Option<[Link; 2]>,
    ring: RingBuffer<'static>,
    _events_map: Box<MapHandle>,
    skel: ObserverSkel<'static>,
    records: Rc<RefCell<Vec<Rec>>>,
    tasks: HashMap<u32, TaskInfo>,
    forget_exited: bool,
    /// The hook sends the enter of SWAP's calls ([`ObserverOptions::syscall_enters`]).
    syscall_enters: bool,
    programs: ProgramPaths,
    sched_events: SchedEvents,
    /// The threads marked watched.
    marked: HashSet<u32>,
    events: u64,
    last_time: Ns,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("events", &self.events)
            .field("sched_events", &self.sched_events)
            .field("syscall_hook", &self.sys_enter.is_some())
            .field("sched_programs", &self.sched_links.is_some())
            .finish_non_exhaustive()
    }
}

impl Observer {
    /// Loads every program, attaches the scheduler ones, and the system-call hook if
    /// `options.syscalls` (after [`check_environment`]).
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
        let bss = open.maps.bss_data.as_deref_mut().expect("the BPF object has .bss");
        bss.watched_only = u8::from(options.sched_events == SchedEvents::Watched);
        // Loaded always (so that they can be attached later), attached on demand.
        open.progs.on_sys_enter.set_autoattach(false);
        open.progs.on_sched_switch.set_autoattach(false);
        open.progs.on_sched_waking.set_autoattach(false);
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
        let mut observer = Observer {
            sys_enter: None,
            sched_links: None,
            ring,
            _events_map: handle,
            skel,
            records,
            tasks: HashMap::new(),
            forget_exited: options.forget_exited,
            syscall_enters: options.syscall_enters,
            programs: ProgramPaths::default(),
            sched_events: options.sched_events,
            marked: HashSet::new(),
            events: 0,
            last_time: 0,
        };
        if options.syscalls {
            observer.set_syscall_hook(true)?;
        }
        observer.sync_sched_programs()?;
        Ok(observer)
    }

    /// Attaches (`on`) or detaches the system-call hook. While attached, every system
    /// call on the machine is counted per (thread group, call) and pays for it (the
    /// kernel's slow system-call path plus the program); the counts gathered stay
    /// readable with [`Observer::syscall_counts`] after it is detached. Doing what is
    /// already done is a no-op.
    pub fn set_syscall_hook(&mut self, on: bool) -> Result<(), ObserverError> {
        if on && self.sys_enter.is_none() {
            let link =
                self.skel.progs.on_sys_enter.attach().map_err(bpf("attaching the system-call hook"))?;
            self.sys_enter = Some(link);
            self.set_hook_flag(true);
        } else if !on && self.sys_enter.is_some() {
            // Wakings carry their waker's call again from now on, then the hook goes.
            self.set_hook_flag(false);
            self.sys_enter = None;
        }
        Ok(())
    }

    /// Whether the system-call hook is attached.
    pub fn syscall_hook(&self) -> bool {
        self.sys_enter.is_some()
    }

    /// Which switches and wakings are recorded.
    pub fn sched_events(&self) -> SchedEvents {
        self.sched_events
    }

    /// Switches which switches and wakings are recorded from now on (records already in
    /// the ring buffer are given as they are): a daemon can record everything for a
    /// profiling window and go back to [`SchedEvents::Watched`] after it. Consumers see
    /// the switches and wakings of unwatched threads start and stop mid-stream.
    pub fn set_sched_events(&mut self, sched_events: SchedEvents) -> Result<(), ObserverError> {
        let bss = self.skel.maps.bss_data.as_deref_mut().expect("the BPF object has .bss");
        // SAFETY: a byte of the map's memory, mapped for the skeleton's life; the BPF
        // side only reads it. Volatile: nothing in this process reads it back.
        unsafe {
            std::ptr::write_volatile(&mut bss.watched_only, u8::from(sched_events == SchedEvents::Watched))
        };
        self.sched_events = sched_events;
        self.sync_sched_programs()
    }

    /// Whether a watched thread's block or waking wakes the reader at once (the default:
    /// a boost from user space must follow at once) or waits for the next batch (where
    /// the kernel carries the boosts out, the reader need not preempt the threads it
    /// watches).
    pub fn set_wake_on_watched(&mut self, wake: bool) {
        let bss = self.skel.maps.bss_data.as_deref_mut().expect("the BPF object has .bss");
        // SAFETY: as in set_sched_events.
        unsafe { std::ptr::write_volatile(&mut bss.batch_watched, u8::from(!wake)) };
    }

    /// Whether the switch and waking programs are attached: always with
    /// [`SchedEvents::All`], with [`SchedEvents::Watched`] only while some thread is
    /// marked (with none, each would only return at once, and running it is the cost).
    pub fn sched_programs_attached(&self) -> bool {
        self.sched_links.is_some()
    }

    /// Attaches or detaches the switch and waking programs as
    /// [`Observer::sched_programs_attached`] says they should be.
    fn sync_sched_programs(&mut self) -> Result<(), ObserverError> {
        let wanted = self.sched_events == SchedEvents::All || !self.marked.is_empty();
        if wanted && self.sched_links.is_none() {
            let switch = self
                .skel
                .progs
                .on_sched_switch
                .attach()
                .map_err(bpf("attaching the sched_switch program"))?;
            let waking = self
                .skel
                .progs
                .on_sched_waking
                .attach()
                .map_err(bpf("attaching the sched_waking program"))?;
            self.sched_links = Some([switch, waking]);
        } else if !wanted {
            self.sched_links = None;
        }
        Ok(())
    }

    /// Tells the kernel side whether the hook's enter records name the providers (the
    /// hook is on and sends them); while they do not, the wakings carry their waker's call.
    fn set_hook_flag(&mut self, on: bool) {
        let on = on && self.syscall_enters;
        let bss = self.skel.maps.bss_data.as_deref_mut().expect("the BPF object has .bss");
        // SAFETY: a byte of the map's memory, mapped for the skeleton's life; the BPF
        // side only reads it. Volatile: nothing in this process reads it back.
        unsafe { std::ptr::write_volatile(&mut bss.hook_on, u8::from(on)) };
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
            // A signal (SIGCONT after a stop, a handler's) ends the wait early: drain
            // what there is, as after a timeout.
            match self.ring.poll(timeout) {
                Err(e) if e.kind() == libbpf_rs::ErrorKind::Interrupted => {}
                r => r.map_err(bpf("waiting on the ring buffer"))?,
            }
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

    /// Forgets the tasks that are gone (their exit was lost to a full ring buffer):
    /// what is kept stays bounded by the tasks alive. Returns how many.
    pub fn forget_gone_tasks(&mut self) -> usize {
        let before = self.tasks.len();
        self.tasks.retain(|tid, _| Path::new(&format!("/proc/{tid}")).exists());
        before - self.tasks.len()
    }

    /// Watches thread `tid` (or stops): its blocking switches and its wakings wake the
    /// reader at once instead of waiting for the wake-up threshold, so the daemon reacts
    /// to a block within microseconds rather than a poll period; with
    /// [`SchedEvents::Watched`] they are the only switches and wakings recorded. The
    /// mark lives in the thread's task storage (set through a pidfd of the thread,
    /// Linux ≥ 6.9 for a thread other than a process's main one) and dies with it.
    /// Unwatching a thread that is gone or was not watched is not an error, and a gone
    /// thread's mark counts no more: the last mark gone detaches the switch programs.
    pub fn set_watched(&mut self, tid: u32, watched: bool) -> Result<(), ObserverError> {
        if !watched && self.marked.remove(&tid) {
            self.marks_changed()?;
        }
        // SAFETY: pidfd_open has no memory arguments; the descriptor it returns is owned
        // here and closed on return. PIDFD_THREAD (O_EXCL) names the thread itself;
        // kernels before 6.9 refuse the flag (EINVAL) and name only main threads.
        let open =
            |flags: libc::c_int| unsafe { libc::syscall(libc::SYS_pidfd_open, tid as libc::c_int, flags) };
        let mut fd = open(libc::O_EXCL);
        if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
            fd = open(0);
        }
        if fd < 0 {
            let source = std::io::Error::last_os_error();
            // Unwatched: its mark died with it, and it is out of `marked` already.
            return if watched { Err(ObserverError::Thread { tid, source }) } else { Ok(()) };
        }
        // SAFETY: a fresh descriptor owned by nothing else.
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
        let key = pidfd.as_raw_fd().to_ne_bytes();
        let map = &self.skel.maps.watched;
        if !watched {
            let _ = map.delete(&key);
            return Ok(());
        }
        map.update(&key, &1u32.to_ne_bytes(), MapFlags::ANY).map_err(bpf("marking a thread watched"))?;
        if self.marked.insert(tid) {
            self.marks_changed()?;
        }
        Ok(())
    }

    /// Makes an exec of `program` (an executable's path) wake the reader at once (`on`),
    /// or no longer: a program the daemon acts on at its exec. The kernel side knows the
    /// executable by its inode, read here; a path that names nothing now (a program
    /// removed since, a path relative to another directory) has no inode and is left
    /// out: its execs are read at the next drain, as every other exec is.
    pub fn set_exec_wake(&mut self, program: &str, on: bool) -> Result<(), ObserverError> {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(program) else { return Ok(()) };
        let key = meta.ino().to_ne_bytes();
        let map = &self.skel.maps.exec_wake;
        if on {
            map.update(&key, &[1u8], MapFlags::ANY).map_err(bpf("marking an executable to wake at exec"))
        } else {
            // Unmarking one never marked is not an error.
            let _ = map.delete(&key);
            Ok(())
        }
    }

    /// After the set of marked threads changed: the kernel side's flag and the switch
    /// programs follow it.
    fn marks_changed(&mut self) -> Result<(), ObserverError> {
        // The kernel side looks a mark up only while there may be one: a cold
        // task-storage lookup on every wake-up costs more than the rest of the program.
        let bss = self.skel.maps.bss_data.as_deref_mut().expect("the BPF object has .bss");
        // SAFETY: a byte of the map's memory, mapped for the skeleton's life; the BPF
        // side only reads it.
        unsafe { std::ptr::write_volatile(&mut bss.any_marked, u8::from(!self.marked.is_empty())) };
        self.sync_sched_programs()
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

    /// The identifying arguments of call `nr` made by `pid`, with the resource named
    /// (`target`: what descriptor `a[0]` names, as the kernel side read it).
    fn args_of(pid: u32, nr: u32, a: [u64; 3], target: Option<FdTarget>) -> SyscallArgs {
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
                out.resource = match target {
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
                if let Some(FdTarget::File(inode) | FdTarget::Fifo(inode)) = target {
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
                let args = Self::args_of(r.pid, r.nr, r.args, r.target);
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
                        Self::args_of(r.pid, r.nr, r.args, r.target).resource
                    };
                    vec![at(EventKind::Block { pid: Pid(r.pid), resource }), switch]
                } else {
                    vec![switch]
                }
            }
            REC_WAKING => {
                self.note_comm(r.pid, r.tgid, &[]);
                self.note_comm(r.pid2, 0, &r.comm);
                let wakeup =
                    at(EventKind::Wakeup { waker: Pid(r.pid), wakee: Pid(r.pid2), cpu: r.value as u32 });
                if r.nr == NO_SYSCALL {
                    vec![wakeup]
                } else {
                    // The call the waker is in (the hook is off): given as its enter, just
                    // before the wakeup it caused, so that SWAP lists the waker as a
                    // provider of the object before it credits the wakeup.
                    let args = Self::args_of(r.pid, r.nr, r.args, r.target);
                    vec![at(EventKind::SyscallEnter { pid: Pid(r.pid), nr: r.nr, args }), wakeup]
                }
            }
            REC_EXEC => {
                let path = self.programs.path(r.pid, r.filename.as_deref().unwrap_or_default());
                self.note_comm(r.pid, r.tgid, &r.comm);
                if let Some(t) = self.tasks.get_mut(&r.pid) {
                    t.exe = Some(path.clone());
                }
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
                if self.forget_exited {
                    self.tasks.remove(&r.pid);
                }
                let life = Life {
                    runtime_ns: r.args[0],
                    wait_ns: r.args[1],
                    lived_ns: r.args[2],
                    nvcsw: r.ino,
                    nivcsw: u64::from(r.pid2) | u64::from(r.nr) << 32,
                };
                vec![at(EventKind::Exit { pid: Pid(r.pid), code: r.value as i32, life: Some(life) })]
            }
            _ => Vec::new(),
        }
    }
}

/// The canonical path of the program a process exec'd: the same for every way it is
/// run (`./a.out`, a symlinked directory such as `/bin` → `usr/bin`).
///
/// The kernel gives the name as passed to execve; `/proc/<pid>/exe` gives the file.
/// The file's path is taken only where it has the same file name as the one given (a
/// process that is gone by now, or that has exec'd a program of another name since,
/// keeps the given name). Taken, it differs from an absolute given name only by the
/// symlinks on its way, which do not change under a running system: such a name is
/// resolved once and remembered, and a loop of short programs (a build, a shell
/// script) costs no readlink per exec (measured: a fifth of the daemon's time on a
/// `/bin/true` loop). Relative names, and names kept as given, are resolved each time.
#[derive(Debug, Default)]
struct ProgramPaths(HashMap<String, String>);

impl ProgramPaths {
    /// At most this many absolute names are remembered (then all are forgotten).
    const MAX: usize = 4096;

    /// The path of the program process `pid` exec'd, given to execve as `given`.
    fn path(&mut self, pid: u32, given: &str) -> String {
        if let Some(path) = self.0.get(given) {
            return path.clone();
        }
        let resolved = std::fs::read_link(format!("/proc/{pid}/exe"))
            .ok()
            .map(|p| p.display().to_string())
            .filter(|p| given.is_empty() || Path::new(given).file_name() == Path::new(p).file_name());
        match resolved {
            Some(path) if given.starts_with('/') => {
                if self.0.len() >= Self::MAX {
                    self.0.clear();
                }
                self.0.insert(given.to_string(), path.clone());
                path
            }
            Some(path) => path,
            None => given.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_run_through_a_symlinked_directory_is_its_file_and_is_resolved_once() {
        let exe = std::env::current_exe().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("bin");
        std::os::unix::fs::symlink(exe.parent().unwrap(), &link).unwrap();
        let given = link.join(exe.file_name().unwrap()).display().to_string();
        let mut paths = ProgramPaths::default();
        let me = std::process::id();
        assert_eq!(paths.path(me, &given), exe.display().to_string());
        // Remembered: a process gone before it is read (no /proc entry) gets it too.
        assert_eq!(paths.path(u32::MAX, &given), exe.display().to_string());
        // Not remembered: a relative name, and one whose process runs another file.
        assert_eq!(paths.path(u32::MAX, "./a.out"), "./a.out");
        assert_eq!(paths.path(me, "/usr/bin/another-name"), "/usr/bin/another-name");
        assert_eq!(paths.0.len(), 1);
    }

    #[test]
    fn records_decode_as_the_bpf_side_lays_them_out() {
        let mut b = vec![0u8; REC_SIZE + 8];
        b[0..8].copy_from_slice(&7u64.to_ne_bytes());
        b[8..12].copy_from_slice(&REC_EXEC.to_ne_bytes());
        b[16..20].copy_from_slice(&42u32.to_ne_bytes());
        b[28..32].copy_from_slice(&NO_SYSCALL.to_ne_bytes());
        b[80..83].copy_from_slice(b"cat");
        b[96..100].copy_from_slice(b"/bin");
        let r = decode(&b).unwrap();
        assert_eq!((r.ts, r.kind, r.pid, r.nr, r.target), (7, REC_EXEC, 42, NO_SYSCALL, None));
        assert_eq!((cstr(&r.comm).as_str(), r.filename.as_deref()), ("cat", Some("/bin")));
        assert!(decode(&b[..10]).is_none());

        let mut b = vec![0u8; REC_SIZE];
        b[8..12].copy_from_slice(&REC_WAKING.to_ne_bytes());
        b[28..32].copy_from_slice(&1u32.to_ne_bytes());
        b[40..48].copy_from_slice(&4u64.to_ne_bytes());
        b[64..72].copy_from_slice(&1234u64.to_ne_bytes());
        b[72..76].copy_from_slice(&FD_PIPE.to_ne_bytes());
        let r = decode(&b).unwrap();
        assert_eq!((r.nr, r.args[0], r.target, r.filename), (1, 4, Some(FdTarget::Pipe(1234)), None));
        let args = Observer::args_of(9, r.nr, r.args, r.target);
        assert_eq!(args.resource, Some(Resource::Pipe { inode: 1234, write: true }));
    }
}
