//! The daemon's control socket: a UNIX stream socket that answers one JSON request per
//! connection with one JSON line (`schedlab monitor`, `schedlab explain`, scripts).
//!
//! Requests: `{"cmd":"stats"}` → [`super::stats::Stats`]; `{"cmd":"explain","pid":N}` →
//! [`super::stats::Explanation`], or `{"error": "..."}`.
//!
//! The daemon serves it from its event loop, so a client gets bounded time and room: a
//! request of at most [`MAX_REQUEST`] bytes within [`REQUEST_TIME`] in all, the answer
//! written within [`ANSWER_TIME`] in all; a client that is slower is dropped. The socket
//! is born mode 0600 (no moment in which others could connect), and only ever replaces a
//! stale socket at its path, never another kind of file.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The longest request read, in bytes.
pub const MAX_REQUEST: u64 = 4096;
/// The longest answer a client reads, in bytes.
pub const MAX_ANSWER: u64 = 64 << 20;
/// The time a client has to send its whole request.
pub const REQUEST_TIME: Duration = Duration::from_millis(200);
/// The time a client has to take the whole answer.
pub const ANSWER_TIME: Duration = Duration::from_millis(500);

/// The socket's default path: `/run/schedlab.sock` for root, else in the user's runtime
/// directory (`$XDG_RUNTIME_DIR`), or in a directory of the user's own under the
/// temporary directory (`/tmp/schedlab-UID`, mode 0700), never in a directory others
/// may write to.
pub fn default_socket() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if uid == 0 {
        return PathBuf::from("/run/schedlab.sock");
    }
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) => PathBuf::from(dir).join("schedlab.sock"),
        None => std::env::temp_dir().join(format!("schedlab-{uid}")).join("schedlab.sock"),
    }
}

/// A request to the daemon.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Request {
    Stats,
    Explain { pid: u32 },
}

/// The listening socket. Dropping it removes the file.
#[derive(Debug)]
pub struct ControlSocket {
    listener: UnixListener,
    path: PathBuf,
}

impl ControlSocket {
    /// Fails (`AddrInUse`) if a daemon answers on `path`: call it before starting a
    /// daemon, which would otherwise restore the running one's changes.
    pub fn check_free(path: &Path) -> io::Result<()> {
        if path.exists() && UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("a schedlab daemon already answers on {}", path.display()),
            ));
        }
        Ok(())
    }

    /// Binds `path`, once the daemon is ready: clients take a socket that answers as the
    /// sign that it is. A socket file that no daemon answers on is stale and replaced;
    /// one that answers means a daemon runs already (`AddrInUse`); anything else at the
    /// path is left alone and refused (`AlreadyExists`). A missing directory is made
    /// mode 0700; an existing one must be the user's or root's, and sticky if others may
    /// write in it. Only the owner may connect (mode 0600 from the start).
    pub fn bind(path: &Path) -> io::Result<ControlSocket> {
        Self::check_free(path)?;
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path)?,
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists and is not a socket; not replacing it", path.display()),
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        check_dir(dir)?;
        // The socket takes the mode the umask leaves: born 0600, no window after bind.
        // SAFETY: umask has no preconditions; the old mask is put back at once.
        let old = unsafe { libc::umask(0o177) };
        let bound = UnixListener::bind(path);
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        let listener = bound?;
        listener.set_nonblocking(true)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(ControlSocket { listener, path: path.to_path_buf() })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Answers every connection waiting now (never blocks on accept); each client has
    /// [`REQUEST_TIME`] for a request of at most [`MAX_REQUEST`] bytes and
    /// [`ANSWER_TIME`] to take the answer, in all.
    pub fn serve(&self, mut answer: impl FnMut(Result<Request, RequestError>) -> serde_json::Value) {
        while let Ok((stream, _)) = self.listener.accept() {
            let _ = stream.set_nonblocking(false);
            let request = read_request(&stream).map_err(RequestError::Unreadable).and_then(|line| {
                serde_json::from_str::<Request>(line.trim()).map_err(RequestError::Malformed)
            });
            let mut reply = answer(request).to_string();
            reply.push('\n');
            let _ = write_within(&stream, reply.as_bytes(), ANSWER_TIME);
        }
    }
}

/// Checks that `dir` is the user's or root's, and sticky if others may write in it.
fn check_dir(dir: &Path) -> io::Result<()> {
    let meta = std::fs::metadata(dir)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let why = if meta.uid() != me && meta.uid() != 0 {
        format!("it is owned by uid {}", meta.uid())
    } else if meta.mode() & 0o022 != 0 && meta.mode() & 0o1000 == 0 {
        "others may write in it and it is not sticky".to_string()
    } else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("the control socket's directory {} is not safe: {why}", dir.display()),
    ))
}

/// A request the control socket could not take.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// Not one of the requests ([`Request`]) as JSON.
    #[error("bad request: {0}")]
    Malformed(#[source] serde_json::Error),
    /// Not read in time or in size.
    #[error("reading the request: {0}")]
    Unreadable(#[source] io::Error),
}

/// Reads one request line of at most [`MAX_REQUEST`] bytes within [`REQUEST_TIME`].
fn read_request(stream: &UnixStream) -> io::Result<String> {
    let deadline = Instant::now() + REQUEST_TIME;
    let mut line = Vec::new();
    let mut buf = [0u8; 512];
    while !line.contains(&b'\n') {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no whole request in time"));
        }
        stream.set_read_timeout(Some(left))?;
        let n = (&*stream).read(&mut buf)?;
        if n == 0 {
            break;
        }
        line.extend_from_slice(&buf[..n]);
        if line.len() as u64 > MAX_REQUEST {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("longer than {MAX_REQUEST} bytes"),
            ));
        }
    }
    String::from_utf8(line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Writes `data` within `time` in all, or gives up.
fn write_within(stream: &UnixStream, mut data: &[u8], time: Duration) -> io::Result<()> {
    let deadline = Instant::now() + time;
    while !data.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not take the answer in time",
            ));
        }
        stream.set_write_timeout(Some(left))?;
        let n = (&*stream).write(data)?;
        data = &data[n..];
    }
    Ok(())
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Sends `request` to the daemon at `path` and returns its answer.
pub fn request(path: &Path, request: &Request) -> io::Result<serde_json::Value> {
    let mut stream = UnixStream::connect(path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("no schedlab daemon answers on {} ({e}); start one with `schedlab run`", path.display()),
        )
    })?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut line = serde_json::to_string(request).map_err(io::Error::other)?;
    line.push('\n');
    stream.write_all(line.as_bytes())?;
    let mut reply = String::new();
    BufReader::new((&stream).take(MAX_ANSWER)).read_line(&mut reply)?;
    let value: serde_json::Value = serde_json::from_str(&reply)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("the daemon's answer: {e}")))?;
    if let Some(err) = value.get("error").and_then(|e| e.as_str()) {
        return Err(io::Error::other(err.to_string()));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_requests_and_refuses_a_second_daemon() {
        let path = std::env::temp_dir().join(format!("schedlab-control-{}.sock", std::process::id()));
        let socket = ControlSocket::bind(&path).unwrap();
        assert_eq!(ControlSocket::bind(&path).unwrap_err().kind(), io::ErrorKind::AddrInUse);
        let client = std::thread::spawn({
            let path = path.clone();
            move || request(&path, &Request::Explain { pid: 42 })
        });
        // The probe of the second bind is queued first and answered with an error; the
        // client's request comes after it.
        for _ in 0..500 {
            socket.serve(|r| match r {
                Ok(Request::Explain { pid }) => serde_json::json!({ "pid": pid }),
                other => serde_json::json!({ "error": format!("{other:?}") }),
            });
            if client.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(client.join().unwrap().unwrap()["pid"], 42);
        drop(socket);
        assert!(!path.exists(), "the socket file is removed");
        let e = request(&path, &Request::Stats).unwrap_err().to_string();
        assert!(e.contains("schedlab run"), "{e}");
    }

    #[test]
    fn replaces_only_a_stale_socket_and_is_born_private() {
        let dir = std::env::temp_dir().join(format!("schedlab-control-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub/schedlab.sock");
        // A regular file at the path (someone's, or a mistyped --socket) is left alone.
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "precious").unwrap();
        assert_eq!(ControlSocket::bind(&path).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious");
        std::fs::remove_file(&path).unwrap();
        // A stale socket (no one answers) is replaced.
        drop(UnixListener::bind(&path).unwrap());
        let socket = ControlSocket::bind(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        // A directory anyone may write in, not sticky, is refused.
        let open = dir.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(
            ControlSocket::bind(&open.join("s.sock")).unwrap_err().kind(),
            io::ErrorKind::PermissionDenied
        );
        drop(socket);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_slow_or_long_request_is_cut_off() {
        let path = std::env::temp_dir().join(format!("schedlab-control-slow-{}.sock", std::process::id()));
        let socket = ControlSocket::bind(&path).unwrap();
        // One byte every 50 ms, never a whole line: dropped at the deadline, not held.
        let slow = std::thread::spawn({
            let path = path.clone();
            move || {
                let mut s = UnixStream::connect(&path).unwrap();
                // The bytes written before the server hung up.
                let mut sent = 0;
                for _ in 0..40 {
                    if s.write_all(b" ").is_err() {
                        break;
                    }
                    sent += 1;
                    std::thread::sleep(Duration::from_millis(50));
                }
                sent
            }
        });
        let long = std::thread::spawn({
            let path = path.clone();
            move || {
                let mut s = UnixStream::connect(&path).unwrap();
                let _ = s.write_all(&[b'x'; 100_000]);
                let mut answer = String::new();
                let _ = BufReader::new(&s).read_line(&mut answer);
                answer
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        let mut answers = Vec::new();
        let start = Instant::now();
        while answers.len() < 2 && start.elapsed() < Duration::from_secs(3) {
            socket.serve(|r| {
                answers.push((r.is_err(), format!("{r:?}")));
                serde_json::json!({ "error": format!("{r:?}") })
            });
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert!(answers.iter().all(|(is_err, _)| *is_err), "{answers:?}");
        assert!(long.join().unwrap().contains("4096"), "the long request is told its limit");
        // Cut off at its deadline, not held until its 40th byte, 2 s on (however slow the
        // machine: the count is the client's own).
        let sent = slow.join().unwrap();
        assert!(sent < 40, "the slow client sent all {sent} bytes: it was held, not cut off");
    }
}
