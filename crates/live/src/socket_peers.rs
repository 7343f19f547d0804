//! The peer of a UNIX socket endpoint, from the kernel's `sock_diag` netlink interface
//! (`NETLINK_SOCK_DIAG`, `SOCK_DIAG_BY_FAMILY` for `AF_UNIX` with `UDIAG_SHOW_PEER`):
//! SWAP needs it to turn "blocked on socket endpoint A" into "requests endpoint B".
//!
//! [`UnixPeers`] keeps a table inode → peer inode of every UNIX socket with a peer,
//! dumped from the kernel. A lookup that misses dumps again, but at most once per
//! [`UnixPeers::min_refresh`]: inodes of other families (TCP, …) or of sockets without a
//! peer miss every time, and must not make every lookup a dump.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use netlink_packet_core::{NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST};
use netlink_packet_sock_diag::unix::{ShowFlags, StateFlags, UnixRequest};
use netlink_packet_sock_diag::SockDiagMessage;
use netlink_sys::protocols::NETLINK_SOCK_DIAG;
use netlink_sys::{Socket, SocketAddr};

/// Every UNIX socket's (inode, peer inode) pair the kernel reports, listening and
/// unconnected sockets left out.
pub fn dump_unix_peers() -> std::io::Result<HashMap<u64, u64>> {
    let mut socket = Socket::new(NETLINK_SOCK_DIAG)?;
    socket.bind_auto()?;
    socket.connect(&SocketAddr::new(0, 0))?;
    // A dump is answered at once; the timeout only guards against a kernel that does
    // not answer at all.
    let timeout = libc::timeval { tv_sec: 1, tv_usec: 0 };
    // SAFETY: a valid socket and a timeval of the size given.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }

    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_DUMP;
    header.sequence_number = 1;
    let mut request = NetlinkMessage::new(
        header,
        SockDiagMessage::UnixRequest(UnixRequest {
            // Every state (datagram pairs are "established", unconnected ones "close").
            state_flags: StateFlags::from_bits_retain(u32::MAX),
            inode: 0,
            show_flags: ShowFlags::PEER,
            cookie: [0xff; 8],
        })
        .into(),
    );
    request.finalize();
    let mut buf = vec![0; request.buffer_len()];
    request.serialize(&mut buf);
    socket.send(&buf, 0)?;

    let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let mut peers = HashMap::new();
    let mut receive = vec![0u8; 64 * 1024];
    loop {
        let size = socket.recv(&mut &mut receive[..], 0)?;
        if size > receive.len() {
            return Err(invalid(format!("a sock_diag datagram of {size} bytes was truncated")));
        }
        let mut offset = 0;
        while offset < size {
            let bytes = &receive[offset..size];
            let message = NetlinkMessage::<SockDiagMessage>::deserialize(bytes)
                .map_err(|e| invalid(format!("an unreadable sock_diag message: {e}")))?;
            let length = message.header.length as usize;
            match message.payload {
                NetlinkPayload::InnerMessage(SockDiagMessage::UnixResponse(r)) => {
                    if let Some(peer) = r.peer().filter(|&p| p != 0) {
                        peers.insert(u64::from(r.header.inode), u64::from(peer));
                    }
                }
                NetlinkPayload::Done(_) => return Ok(peers),
                NetlinkPayload::Error(e) => {
                    return match e.code {
                        Some(code) => Err(std::io::Error::from_raw_os_error(-code.get())),
                        None => Ok(peers),
                    };
                }
                _ => {}
            }
            if length == 0 {
                break;
            }
            // Messages are aligned to 4 bytes.
            offset += (length + 3) & !3;
        }
    }
}

#[derive(Debug, Default)]
struct Table {
    peers: HashMap<u64, u64>,
    refreshed: Option<Instant>,
    dumps: u64,
    last_error: Option<String>,
}

/// A cache of UNIX socket peers, shared by its clones (and thread-safe, so a clone can
/// be the detector's peer function).
#[derive(Clone, Debug)]
pub struct UnixPeers {
    table: Arc<Mutex<Table>>,
    min_refresh: Duration,
}

impl Default for UnixPeers {
    fn default() -> Self {
        Self::new(Duration::from_millis(100))
    }
}

impl UnixPeers {
    /// A cache that dumps the kernel's table on a miss at most once per `min_refresh`.
    pub fn new(min_refresh: Duration) -> Self {
        UnixPeers { table: Arc::new(Mutex::new(Table::default())), min_refresh }
    }

    /// The least time between two dumps.
    pub fn min_refresh(&self) -> Duration {
        self.min_refresh
    }

    /// The peer endpoint of UNIX socket endpoint `inode`, `None` when it is not a
    /// connected UNIX socket (or the kernel cannot say).
    pub fn peer(&self, inode: u64) -> Option<u64> {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&p) = t.peers.get(&inode) {
            return Some(p);
        }
        if t.refreshed.is_some_and(|at| at.elapsed() < self.min_refresh) {
            return None;
        }
        t.refreshed = Some(Instant::now());
        t.dumps += 1;
        match dump_unix_peers() {
            Ok(peers) => {
                // Inodes are reused: the old table is replaced, not merged.
                t.peers = peers;
                t.last_error = None;
            }
            Err(e) => t.last_error = Some(e.to_string()),
        }
        t.peers.get(&inode).copied()
    }

    /// How many times the kernel's table was dumped.
    pub fn dumps(&self) -> u64 {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).dumps
    }

    /// Why the latest dump failed, if it did.
    pub fn last_error(&self) -> Option<String> {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).last_error.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::net::UnixStream;

    fn inode(s: &UnixStream) -> u64 {
        std::fs::metadata(format!("/proc/self/fd/{}", s.as_raw_fd())).unwrap().ino()
    }

    #[test]
    fn a_socketpair_s_endpoints_are_each_other_s_peers() {
        let (a, b) = UnixStream::pair().unwrap();
        let (ia, ib) = (inode(&a), inode(&b));
        let peers = UnixPeers::new(Duration::from_millis(50));
        assert_eq!(peers.peer(ia), Some(ib), "{:?}", peers.last_error());
        assert_eq!(peers.peer(ib), Some(ia));
        assert_eq!(peers.dumps(), 1, "the second lookup hits the cache");

        // A miss right after a dump does not dump again; after min_refresh it does,
        // and finds a pair made since.
        let (c, d) = UnixStream::pair().unwrap();
        let (ic, id) = (inode(&c), inode(&d));
        let _ = peers.peer(ic);
        assert!(peers.dumps() <= 2);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(peers.peer(id), Some(ic));
        assert!(peers.dumps() <= 3);
        assert_eq!(peers.peer(u64::from(u32::MAX) + 7), None);
        assert_eq!(peers.peer(u64::from(u32::MAX) + 8), None);
        assert!(peers.dumps() <= 4, "misses do not dump more than once per min_refresh");
    }
}
