//! The six IPC kinds of SWAP's client-server microbenchmark, as request/reply channels
//! between one client and one server.
//!
//! In every kind the client blocks in the kind's own system call while the server
//! works, and the server wakes it through the same object — what the observer has to
//! see to find the dependency:
//!
//! | kind    | request (client → server)   | reply: the client blocks in            |
//! |---------|-----------------------------|----------------------------------------|
//! | `sock`  | 1 byte on a UNIX socketpair | `read` of 4 KB from the socket          |
//! | `pipe`  | 1 byte on a pipe            | `read` of 4 KB from a second pipe       |
//! | `msg`   | message of type 1           | `msgrcv` of a 4 KB message of type 2    |
//! | `sem`   | `semop` +1 on semaphore 0   | `semtimedop` −1 on semaphore 1          |
//! | `sig`   | `tgkill` SIGUSR1            | `sigtimedwait` for SIGUSR2              |
//! | `flock` | 1 byte on a pipe            | `flock(LOCK_EX)` on a file the server holds |
//!
//! `flock` alternates two lock files so that the server always holds the next one
//! before it releases the current one: the server holds file `i % 2` from before
//! request `i` until its reply, when it takes file `(i + 1) % 2` (which the client
//! released before sending request `i`) and releases file `i % 2`, waking the client.
//!
//! A [`Channel`] creates the kernel objects (in the runner); [`EndpointSpec`]s name
//! them for each side, and survive `exec` as arguments; [`Client`] and [`Server`] use
//! them in the worker (or in a thread, for tests). Signals go to a thread (`tgkill`), so
//! the endpoints work between threads of one process too; the thread that opens a
//! `sig` endpoint blocks SIGUSR1 and SIGUSR2 for itself.

use std::fmt;
use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::named::{named, UnknownName};
use super::{cvt, Context, Invalid, Result};

/// How many bytes a reply carries (the paper's 4 KB buffer).
pub const REPLY_LEN: usize = 4096;

/// The signal of a request.
pub const SIG_REQUEST: libc::c_int = libc::SIGUSR1;
/// The signal of a reply.
pub const SIG_REPLY: libc::c_int = libc::SIGUSR2;

const MSG_REQUEST: libc::c_long = 1;
const MSG_REPLY: libc::c_long = 2;

/// How long a side waits in a call that can time out (`semtimedop`, `sigtimedwait`)
/// before it gives up: a peer that went away.
const WAIT_LIMIT: Duration = Duration::from_secs(120);

/// One of the IPC mechanisms the observer detects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IpcKind {
    /// A UNIX stream socketpair.
    Sock,
    /// A pair of pipes.
    Pipe,
    /// A SysV message queue.
    Msg,
    /// SysV semaphores.
    Sem,
    /// Signals (SIGUSR1 asks, SIGUSR2 answers).
    Sig,
    /// `flock` on files the server holds while it works.
    Flock,
}

impl IpcKind {
    /// All kinds, in the paper's order.
    pub const ALL: [IpcKind; 6] =
        [IpcKind::Sock, IpcKind::Pipe, IpcKind::Msg, IpcKind::Sem, IpcKind::Sig, IpcKind::Flock];

    /// The kind's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            IpcKind::Sock => "sock",
            IpcKind::Pipe => "pipe",
            IpcKind::Msg => "msg",
            IpcKind::Sem => "sem",
            IpcKind::Sig => "sig",
            IpcKind::Flock => "flock",
        }
    }
}

impl fmt::Display for IpcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

named!(IpcKind, "IPC kind", IpcKind::ALL, IpcKind::name);

/// A thread to signal: its thread group and thread id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    /// The process.
    pub tgid: i32,
    /// The thread.
    pub tid: i32,
}

impl Peer {
    /// The calling thread.
    pub fn current() -> Peer {
        // SAFETY: getpid and gettid cannot fail.
        unsafe { Peer { tgid: libc::getpid(), tid: libc::gettid() } }
    }

    /// A single-threaded process.
    pub fn process(pid: i32) -> Peer {
        Peer { tgid: pid, tid: pid }
    }
}

/// What one side needs to open its end of a channel; it survives `exec` as a string
/// ([`EndpointSpec::to_arg`], [`EndpointSpec::parse`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointSpec {
    /// The kind.
    pub kind: IpcKind,
    /// Inherited descriptors: `sock` the socket; `pipe` the request and the reply pipe
    /// ends; `flock` the request pipe end.
    pub fds: Vec<RawFd>,
    /// The SysV IPC id (`msg`, `sem`).
    pub sysv_id: Option<i32>,
    /// The two lock files (`flock`).
    pub paths: Vec<PathBuf>,
    /// Whom to signal (`sig`): the server for a client; for a server, the client, or
    /// `None` to answer the sender of each request.
    pub peer: Option<Peer>,
}

impl EndpointSpec {
    fn new(kind: IpcKind) -> Self {
        EndpointSpec { kind, fds: Vec::new(), sysv_id: None, paths: Vec::new(), peer: None }
    }

    /// The spec as one argument: `kind;fds=3,4;id=7;peer=10:11;path=/a;path=/b`
    /// (paths last; they may not contain `;`).
    pub fn to_arg(&self) -> String {
        let mut s = self.kind.name().to_string();
        if !self.fds.is_empty() {
            let fds: Vec<String> = self.fds.iter().map(|f| f.to_string()).collect();
            s.push_str(&format!(";fds={}", fds.join(",")));
        }
        if let Some(id) = self.sysv_id {
            s.push_str(&format!(";id={id}"));
        }
        if let Some(p) = self.peer {
            s.push_str(&format!(";peer={}:{}", p.tgid, p.tid));
        }
        for p in &self.paths {
            s.push_str(&format!(";path={}", p.display()));
        }
        s
    }

    /// The spec from [`to_arg`](EndpointSpec::to_arg)'s form.
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        let mut parts = s.split(';');
        let kind: IpcKind =
            parts.next().unwrap_or_default().parse().map_err(|e: UnknownName| e.to_string())?;
        let mut spec = EndpointSpec::new(kind);
        let int = |v: &str| v.parse::<i32>().map_err(|e| format!("bad number '{v}' in '{s}': {e}"));
        for part in parts {
            let (key, value) = part.split_once('=').ok_or_else(|| format!("bad part '{part}' in '{s}'"))?;
            match key {
                "fds" => spec.fds = value.split(',').map(int).collect::<std::result::Result<_, _>>()?,
                "id" => spec.sysv_id = Some(int(value)?),
                "peer" => {
                    let (g, t) = value.split_once(':').ok_or_else(|| format!("bad peer '{value}'"))?;
                    spec.peer = Some(Peer { tgid: int(g)?, tid: int(t)? });
                }
                "path" => spec.paths.push(PathBuf::from(value)),
                _ => return Err(format!("unknown key '{key}' in '{s}'")),
            }
        }
        let want_fds = match kind {
            IpcKind::Sock | IpcKind::Flock => 1,
            IpcKind::Pipe => 2,
            _ => 0,
        };
        if spec.fds.len() != want_fds {
            return Err(format!("{kind} needs {want_fds} descriptors, '{s}' has {}", spec.fds.len()));
        }
        if matches!(kind, IpcKind::Msg | IpcKind::Sem) && spec.sysv_id.is_none() {
            return Err(format!("{kind} needs an IPC id: '{s}'"));
        }
        if kind == IpcKind::Flock && spec.paths.len() != 2 {
            return Err(format!("flock needs two lock files: '{s}'"));
        }
        Ok(spec)
    }
}

/// The kernel objects of one channel. Dropping it closes its descriptors, removes the
/// SysV object and the lock files.
#[derive(Debug)]
pub struct Channel {
    kind: IpcKind,
    /// `sock`: [client, server]; `pipe`: [request read, request write, reply read,
    /// reply write]; `flock`: [request read, request write].
    fds: Vec<OwnedFd>,
    sysv_id: Option<i32>,
    paths: Vec<PathBuf>,
}

/// A pipe, both ends close-on-exec: (read, write).
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: pipe2 returned two new descriptors that nothing else owns.
    unsafe { Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))) }
}

impl Channel {
    /// Creates the objects of a `kind` channel; `flock`'s lock files go into `dir`.
    /// Descriptors are close-on-exec; the runner clears that for the ones a worker
    /// inherits.
    pub fn new(kind: IpcKind, dir: &Path) -> Result<Channel> {
        let mut ch = Channel { kind, fds: Vec::new(), sysv_id: None, paths: Vec::new() };
        match kind {
            IpcKind::Sock => {
                let mut fds = [0; 2];
                // SAFETY: fds has room for two descriptors.
                cvt(unsafe {
                    libc::socketpair(
                        libc::AF_UNIX,
                        libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                        0,
                        fds.as_mut_ptr(),
                    )
                })
                .ctx(|| "cannot create a UNIX socketpair".into())?;
                // SAFETY: socketpair returned two new descriptors that nothing else owns.
                ch.fds = unsafe { vec![OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])] };
            }
            IpcKind::Pipe => {
                let (a, b) = pipe().ctx(|| "cannot create a pipe".into())?;
                let (c, d) = pipe().ctx(|| "cannot create a pipe".into())?;
                ch.fds = vec![a, b, c, d];
            }
            IpcKind::Msg => {
                // SAFETY: plain system call.
                let id = cvt(unsafe { libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | 0o600) })
                    .ctx(|| "cannot create a SysV message queue".into())?;
                ch.sysv_id = Some(id);
            }
            IpcKind::Sem => {
                // SAFETY: plain system call; new semaphores start at 0.
                let id = cvt(unsafe { libc::semget(libc::IPC_PRIVATE, 2, libc::IPC_CREAT | 0o600) })
                    .ctx(|| "cannot create SysV semaphores".into())?;
                ch.sysv_id = Some(id);
            }
            IpcKind::Sig => {}
            IpcKind::Flock => {
                let (a, b) = pipe().ctx(|| "cannot create a pipe".into())?;
                ch.fds = vec![a, b];
                for i in 0..2 {
                    let path = dir.join(format!("lock{i}"));
                    std::fs::File::create(&path).ctx(|| format!("cannot create {}", path.display()))?;
                    ch.paths.push(path);
                }
            }
        }
        Ok(ch)
    }

    /// The kind.
    pub fn kind(&self) -> IpcKind {
        self.kind
    }

    fn raw(&self, i: &[usize]) -> Vec<RawFd> {
        i.iter().map(|&i| self.fds[i].as_raw_fd()).collect()
    }

    /// The client's end (for `sig`, `server` is whom it signals).
    pub fn client_spec(&self, server: Option<Peer>) -> EndpointSpec {
        let mut s = EndpointSpec::new(self.kind);
        s.sysv_id = self.sysv_id;
        s.paths = self.paths.clone();
        s.fds = match self.kind {
            IpcKind::Sock => self.raw(&[0]),
            IpcKind::Pipe => self.raw(&[1, 2]),
            IpcKind::Flock => self.raw(&[1]),
            _ => Vec::new(),
        };
        if self.kind == IpcKind::Sig {
            s.peer = server;
        }
        s
    }

    /// The server's end (for `sig`, `client` is whom it answers; `None`: the sender).
    pub fn server_spec(&self, client: Option<Peer>) -> EndpointSpec {
        let mut s = EndpointSpec::new(self.kind);
        s.sysv_id = self.sysv_id;
        s.paths = self.paths.clone();
        s.fds = match self.kind {
            IpcKind::Sock => self.raw(&[1]),
            IpcKind::Pipe => self.raw(&[0, 3]),
            IpcKind::Flock => self.raw(&[0]),
            _ => Vec::new(),
        };
        if self.kind == IpcKind::Sig {
            s.peer = client;
        }
        s
    }

    /// Closes this process's descriptors (after the workers inherited them, so that a
    /// server sees end-of-file when its client goes). The SysV object and the files
    /// stay until the channel is dropped.
    pub fn close_fds(&mut self) {
        self.fds.clear();
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        if let Some(id) = self.sysv_id {
            // SAFETY: removing an IPC object we created; errors are harmless.
            unsafe {
                match self.kind {
                    IpcKind::Msg => libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()),
                    _ => libc::semctl(id, 0, libc::IPC_RMID),
                };
            }
        }
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A SysV message with a 4 KB payload.
#[repr(C)]
struct Message {
    mtype: libc::c_long,
    mtext: [u8; REPLY_LEN],
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message").field("mtype", &self.mtype).finish_non_exhaustive()
    }
}

fn retry<T: Copy + PartialOrd + Default>(mut f: impl FnMut() -> T) -> io::Result<T> {
    loop {
        match cvt(f()) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: buf is valid for its length.
        let n = retry(|| unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) })?;
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` at end-of-file before the first byte.
fn read_exact(fd: RawFd, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: the rest of buf is valid for writing.
        let n = retry(|| unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) })?;
        if n == 0 {
            if got == 0 {
                return Ok(false);
            }
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the peer closed mid-message"));
        }
        got += n as usize;
    }
    Ok(true)
}

fn signal_set(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigemptyset initializes the set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks SIGUSR1 and SIGUSR2 in the calling thread (so that they wait for
/// `sigtimedwait` instead of killing the process).
pub fn block_signals() -> io::Result<()> {
    let set = signal_set(&[SIG_REQUEST, SIG_REPLY]);
    // SAFETY: set is initialized.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

fn timespec(d: Duration) -> libc::timespec {
    libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long }
}

/// Waits for `sig` (blocked in this thread); `Ok(None)` after [`WAIT_LIMIT`].
fn wait_signal(sig: libc::c_int) -> io::Result<Option<libc::siginfo_t>> {
    let set = signal_set(&[sig]);
    let limit = timespec(WAIT_LIMIT);
    // SAFETY: an all-zero siginfo_t is valid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: set, info and limit are valid.
    match retry(|| unsafe { libc::sigtimedwait(&set, &mut info, &limit) }) {
        Ok(_) => Ok(Some(info)),
        Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => Ok(None),
        Err(e) => Err(e),
    }
}

fn tgkill(peer: Peer, sig: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call.
    cvt(unsafe { libc::syscall(libc::SYS_tgkill, peer.tgid, peer.tid, sig) }).map(drop)
}

/// `semtimedop` of one operation; `Ok(false)` on timeout or a removed set.
fn sem_op(id: i32, num: u16, op: i16, limit: Option<Duration>) -> io::Result<bool> {
    let mut buf = libc::sembuf { sem_num: num, sem_op: op, sem_flg: 0 };
    let ts = limit.map(timespec);
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: buf and ts are valid for the call.
    match retry(|| unsafe { libc::syscall(libc::SYS_semtimedop, id, &mut buf as *mut libc::sembuf, 1, tsp) })
    {
        Ok(_) => Ok(true),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EIDRM | libc::EINVAL)) => Ok(false),
        Err(e) => Err(e),
    }
}

fn open_locks(paths: &[PathBuf]) -> Result<Vec<OwnedFd>> {
    paths
        .iter()
        .map(|p| {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .open(p)
                .ctx(|| format!("cannot open {}", p.display()))?;
            Ok(OwnedFd::from(f))
        })
        .collect()
}

fn flock(fd: &OwnedFd, op: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call on a descriptor we own.
    retry(|| unsafe { libc::flock(fd.as_raw_fd(), op) }).map(drop)
}

fn need_peer(spec: &EndpointSpec, who: &'static str) -> Result<Peer> {
    spec.peer.ok_or_else(|| Invalid::NoPeer { who }.into())
}

/// The client's end: [`request`](Client::request), then block in
/// [`wait_reply`](Client::wait_reply).
#[derive(Debug)]
pub struct Client {
    spec: EndpointSpec,
    locks: Vec<OwnedFd>,
    round: u64,
    buf: Box<Message>,
}

impl Client {
    /// Opens the client's end in the calling thread (for `sig`: blocks the signals in
    /// it).
    pub fn open(spec: &EndpointSpec) -> Result<Client> {
        let mut locks = Vec::new();
        match spec.kind {
            IpcKind::Sig => {
                need_peer(spec, "client")?;
                block_signals().ctx(|| "cannot block SIGUSR1 and SIGUSR2".into())?;
            }
            IpcKind::Flock => locks = open_locks(&spec.paths)?,
            _ => {}
        }
        Ok(Client {
            spec: spec.clone(),
            locks,
            round: 0,
            buf: Box::new(Message { mtype: 0, mtext: [0; REPLY_LEN] }),
        })
    }

    /// Sends a request (never blocks for long).
    pub fn request(&mut self) -> io::Result<()> {
        let s = &self.spec;
        match s.kind {
            IpcKind::Sock | IpcKind::Pipe | IpcKind::Flock => write_all(s.fds[0], &[1]),
            IpcKind::Msg => {
                let msg = Message { mtype: MSG_REQUEST, mtext: [0; REPLY_LEN] };
                let id = s.sysv_id.unwrap_or(-1);
                // SAFETY: msg is a valid message of at least 1 byte of text.
                retry(|| unsafe { libc::msgsnd(id, (&msg as *const Message).cast(), 1, 0) }).map(drop)
            }
            IpcKind::Sem => {
                if sem_op(s.sysv_id.unwrap_or(-1), 0, 1, None)? {
                    Ok(())
                } else {
                    Err(io::Error::other("the semaphores were removed"))
                }
            }
            IpcKind::Sig => tgkill(s.peer.expect("checked at open"), SIG_REQUEST),
        }
    }

    /// Blocks until the server answers.
    pub fn wait_reply(&mut self) -> io::Result<()> {
        let s = &self.spec;
        let gone = || io::Error::other(format!("the {} server went away", s.kind));
        match s.kind {
            IpcKind::Sock => read_exact(s.fds[0], &mut self.buf.mtext)?.then_some(()).ok_or_else(gone),
            IpcKind::Pipe => read_exact(s.fds[1], &mut self.buf.mtext)?.then_some(()).ok_or_else(gone),
            IpcKind::Msg => {
                let id = s.sysv_id.unwrap_or(-1);
                let buf: *mut Message = &mut *self.buf;
                // SAFETY: buf has room for REPLY_LEN bytes of text.
                retry(|| unsafe { libc::msgrcv(id, buf.cast(), REPLY_LEN, MSG_REPLY, 0) }).map(drop)
            }
            IpcKind::Sem => {
                sem_op(s.sysv_id.unwrap_or(-1), 1, -1, Some(WAIT_LIMIT))?.then_some(()).ok_or_else(gone)
            }
            IpcKind::Sig => wait_signal(SIG_REPLY)?.map(drop).ok_or_else(gone),
            IpcKind::Flock => {
                let lock = &self.locks[(self.round % 2) as usize];
                flock(lock, libc::LOCK_EX)?;
                flock(lock, libc::LOCK_UN)
            }
        }?;
        self.round += 1;
        Ok(())
    }

    /// A request and its reply.
    pub fn round_trip(&mut self) -> io::Result<()> {
        self.request()?;
        self.wait_reply()
    }
}

/// The server's end: block in [`wait_request`](Server::wait_request), work, then
/// [`reply`](Server::reply).
#[derive(Debug)]
pub struct Server {
    spec: EndpointSpec,
    locks: Vec<OwnedFd>,
    round: u64,
    /// Whom to answer (`sig`).
    client: Option<Peer>,
    buf: Box<Message>,
}

impl Server {
    /// Opens the server's end in the calling thread (for `sig`: blocks the signals in
    /// it; for `flock`: takes the first lock, so the client must start after this).
    pub fn open(spec: &EndpointSpec) -> Result<Server> {
        let mut locks = Vec::new();
        match spec.kind {
            IpcKind::Sig => block_signals().ctx(|| "cannot block SIGUSR1 and SIGUSR2".into())?,
            IpcKind::Flock => {
                locks = open_locks(&spec.paths)?;
                flock(&locks[0], libc::LOCK_EX).ctx(|| format!("cannot lock {}", spec.paths[0].display()))?;
            }
            _ => {}
        }
        Ok(Server {
            spec: spec.clone(),
            locks,
            round: 0,
            client: spec.peer,
            buf: Box::new(Message { mtype: 0, mtext: [0; REPLY_LEN] }),
        })
    }

    /// Blocks until the next request; `Ok(false)` when the client is gone (end of file,
    /// the object removed, or nothing for two minutes).
    pub fn wait_request(&mut self) -> io::Result<bool> {
        let s = &self.spec;
        let mut one = [0u8; 1];
        match s.kind {
            IpcKind::Sock | IpcKind::Pipe | IpcKind::Flock => read_exact(s.fds[0], &mut one),
            IpcKind::Msg => {
                let id = s.sysv_id.unwrap_or(-1);
                let buf: *mut Message = &mut *self.buf;
                // SAFETY: buf has room for REPLY_LEN bytes of text.
                match retry(|| unsafe { libc::msgrcv(id, buf.cast(), REPLY_LEN, MSG_REQUEST, 0) }) {
                    Ok(_) => Ok(true),
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EIDRM | libc::EINVAL)) => Ok(false),
                    Err(e) => Err(e),
                }
            }
            IpcKind::Sem => sem_op(s.sysv_id.unwrap_or(-1), 0, -1, Some(WAIT_LIMIT)),
            IpcKind::Sig => match wait_signal(SIG_REQUEST)? {
                None => Ok(false),
                Some(info) => {
                    if s.peer.is_none() {
                        // SAFETY: a signal sent by tgkill/kill carries the sender's pid.
                        self.client = Some(Peer::process(unsafe { info.si_pid() }));
                    }
                    Ok(true)
                }
            },
        }
    }

    /// Answers the pending request with `data` (at most [`REPLY_LEN`] bytes; the rest
    /// of the 4 KB reply is zeros), waking the client.
    pub fn reply(&mut self, data: &[u8]) -> io::Result<()> {
        let n = data.len().min(REPLY_LEN);
        self.buf.mtext[..n].copy_from_slice(&data[..n]);
        self.buf.mtext[n..].fill(0);
        let s = &self.spec;
        match s.kind {
            IpcKind::Sock => write_all(s.fds[0], &self.buf.mtext),
            IpcKind::Pipe => write_all(s.fds[1], &self.buf.mtext),
            IpcKind::Msg => {
                self.buf.mtype = MSG_REPLY;
                let id = s.sysv_id.unwrap_or(-1);
                let buf: *const Message = &*self.buf;
                // SAFETY: buf is a valid message of REPLY_LEN bytes of text.
                retry(|| unsafe { libc::msgsnd(id, buf.cast(), REPLY_LEN, 0) }).map(drop)
            }
            IpcKind::Sem => {
                if sem_op(s.sysv_id.unwrap_or(-1), 1, 1, None)? {
                    Ok(())
                } else {
                    Err(io::Error::other("the semaphores were removed"))
                }
            }
            IpcKind::Sig => {
                let client = self.client.ok_or_else(|| io::Error::other("no client to answer"))?;
                tgkill(client, SIG_REPLY)
            }
            IpcKind::Flock => {
                let i = (self.round % 2) as usize;
                flock(&self.locks[1 - i], libc::LOCK_EX)?;
                flock(&self.locks[i], libc::LOCK_UN)
            }
        }?;
        self.round += 1;
        Ok(())
    }
}

/// Clears close-on-exec on `fd`; for `pre_exec` (async-signal-safe).
pub(crate) fn inherit_fd(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor number; harmless if it is not open.
    unsafe {
        let flags = cvt(libc::fcntl(fd, libc::F_GETFD))?;
        cvt(libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("schedlab-ipc-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A client and a server thread do `n` round trips over a `kind` channel; the
    /// client checks the server's data.
    fn round_trips(kind: IpcKind, n: u64) {
        let dir = temp_dir(kind.name());
        let ch = Channel::new(kind, &dir).unwrap();
        let (tid_tx, tid_rx) = mpsc::channel();
        let (spec_tx, spec_rx) = mpsc::channel::<EndpointSpec>();
        let (ready_tx, ready_rx) = mpsc::channel();
        let server = std::thread::spawn(move || {
            tid_tx.send(Peer::current()).unwrap();
            let spec = spec_rx.recv().unwrap();
            let mut server = Server::open(&spec).unwrap();
            ready_tx.send(()).unwrap();
            let mut served = 0u64;
            while served < n && server.wait_request().unwrap() {
                served += 1;
                server.reply(&served.to_le_bytes()).unwrap();
            }
            served
        });
        let server_peer = tid_rx.recv().unwrap();
        let me = Peer::current();
        spec_tx.send(ch.server_spec(Some(me))).unwrap();
        ready_rx.recv().unwrap();
        let mut client = Client::open(&ch.client_spec(Some(server_peer))).unwrap();
        for i in 1..=n {
            client.round_trip().unwrap();
            if matches!(kind, IpcKind::Sock | IpcKind::Pipe | IpcKind::Msg) {
                assert_eq!(client.buf.mtext[..8], i.to_le_bytes(), "{kind} reply {i}");
            }
        }
        assert_eq!(server.join().unwrap(), n);
        drop(ch);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sock_round_trips() {
        round_trips(IpcKind::Sock, 3);
    }

    #[test]
    fn pipe_round_trips() {
        round_trips(IpcKind::Pipe, 3);
    }

    #[test]
    fn msg_round_trips() {
        round_trips(IpcKind::Msg, 3);
    }

    #[test]
    fn sem_round_trips() {
        round_trips(IpcKind::Sem, 3);
    }

    #[test]
    fn sig_round_trips() {
        round_trips(IpcKind::Sig, 3);
    }

    #[test]
    fn flock_round_trips() {
        round_trips(IpcKind::Flock, 3);
    }

    #[test]
    fn the_client_really_waits_for_the_flock_server() {
        let dir = temp_dir("flock-wait");
        let ch = Channel::new(IpcKind::Flock, &dir).unwrap();
        let spec = ch.server_spec(None);
        let (ready_tx, ready_rx) = mpsc::channel();
        let server = std::thread::spawn(move || {
            let mut server = Server::open(&spec).unwrap();
            ready_tx.send(()).unwrap();
            for _ in 0..2 {
                assert!(server.wait_request().unwrap());
                std::thread::sleep(Duration::from_millis(30));
                server.reply(&[]).unwrap();
            }
        });
        ready_rx.recv().unwrap();
        let mut client = Client::open(&ch.client_spec(None)).unwrap();
        for _ in 0..2 {
            let t = std::time::Instant::now();
            client.round_trip().unwrap();
            assert!(t.elapsed() >= Duration::from_millis(25), "{:?}", t.elapsed());
        }
        server.join().unwrap();
        drop(ch);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn specs_survive_exec_as_arguments() {
        let dir = temp_dir("spec");
        for kind in IpcKind::ALL {
            let ch = Channel::new(kind, &dir).unwrap();
            for spec in [ch.client_spec(Some(Peer { tgid: 5, tid: 6 })), ch.server_spec(None)] {
                assert_eq!(EndpointSpec::parse(&spec.to_arg()).unwrap(), spec, "{}", spec.to_arg());
            }
        }
        assert!(EndpointSpec::parse("pipe;fds=3").unwrap_err().contains("needs 2"));
        assert!(EndpointSpec::parse("nope").unwrap_err().contains("unknown IPC kind"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
