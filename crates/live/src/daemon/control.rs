//! The daemon's control socket: a UNIX stream socket that answers one JSON request per
//! connection with one JSON line (`schedlab monitor`, `schedlab explain`, scripts).
//!
//! Requests: `{"cmd":"stats"}` → [`super::stats::Stats`]; `{"cmd":"explain","pid":N}` →
//! [`super::stats::Explanation`], or `{"error": "..."}`.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The socket's default path: `/run/schedlab.sock` for root, else in the runtime
/// directory (`$XDG_RUNTIME_DIR`, falling back to the temporary directory).
pub fn default_socket() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/run/schedlab.sock");
    }
    std::env::var_os("XDG_RUNTIME_DIR").map_or_else(std::env::temp_dir, PathBuf::from).join("schedlab.sock")
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
    /// one that answers means a daemon runs already (`AddrInUse`). Only the owner may
    /// connect (mode 0600).
    pub fn bind(path: &Path) -> io::Result<ControlSocket> {
        Self::check_free(path)?;
        if path.exists() {
            std::fs::remove_file(path)?;
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let listener = UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(ControlSocket { listener, path: path.to_path_buf() })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Answers every connection waiting now (never blocks on accept); a client that does
    /// not send its request within 200 ms is dropped.
    pub fn serve(&self, mut answer: impl FnMut(Result<Request, String>) -> serde_json::Value) {
        while let Ok((stream, _)) = self.listener.accept() {
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
            let _ = stream.set_write_timeout(Some(Duration::from_millis(500)));
            let mut line = String::new();
            let mut reader = BufReader::new(&stream);
            let request = match reader.read_line(&mut line) {
                Ok(_) => {
                    serde_json::from_str::<Request>(line.trim()).map_err(|e| format!("bad request: {e}"))
                }
                Err(e) => Err(format!("reading the request: {e}")),
            };
            let mut reply = answer(request).to_string();
            reply.push('\n');
            let _ = (&stream).write_all(reply.as_bytes());
        }
    }
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
    BufReader::new(&stream).read_line(&mut reply)?;
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
}
