//! The store kept to its owner. Its journal names values that a restore writes to
//! processes, and its windows hold other users' command lines: a store another user
//! could write would let that user set any process's priority through the next root
//! command, and one they could read would show them what everyone runs. So a store is
//! opened only if the file, its SQLite companions (`-wal`, `-shm`, `-journal`) and its
//! directory are its user's: the file owned by the user opening it (made mode 0600 if
//! it is not), the directory owned by that user or root and, if others may write in it
//! (`/tmp`), sticky, so that no one else can replace the file. Directories schedlab
//! creates are mode 0700; the file is created 0600, and SQLite gives its companions the
//! file's mode.
//!
//! [`StoreLock`] is the other half: one daemon or restore at a time per store.

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// The companions SQLite keeps beside the file.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Creates the store's directory (0700) and file (0600) if missing, and checks that both,
/// and the companions that exist, are private to the user opening it (see the module).
pub(crate) fn prepare(path: &Path) -> Result<()> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|source| Error::CreateDir { path: dir.to_path_buf(), source })?;
            dir.to_path_buf()
        }
        None => PathBuf::from("."),
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let meta = std::fs::metadata(&dir).map_err(|source| Error::Open { path: dir.clone(), source })?;
    let others_write = meta.mode() & 0o022 != 0;
    if meta.uid() != me && meta.uid() != 0 {
        return Err(not_private(&dir, format!("the directory is owned by uid {}", meta.uid())));
    }
    if others_write && meta.mode() & 0o1000 == 0 {
        return Err(not_private(&dir, "others may write in the directory and it is not sticky".into()));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|source| Error::Open { path: path.to_path_buf(), source })?;
    own(&file, path, me)?;
    for suffix in COMPANIONS {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let companion = PathBuf::from(name);
        match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(&companion) {
            Ok(f) => own(&f, &companion, me)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(Error::Open { path: companion, source }),
        }
    }
    Ok(())
}

/// Checks that `file` is owned by `me`, and takes group and other access away.
fn own(file: &File, path: &Path, me: u32) -> Result<()> {
    let meta = file.metadata().map_err(|source| Error::Open { path: path.to_path_buf(), source })?;
    if !meta.is_file() {
        return Err(not_private(path, "it is not a regular file".into()));
    }
    if meta.uid() != me {
        return Err(not_private(path, format!("it is owned by uid {}, not {me}", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(Permissions::from_mode(0o600))
            .map_err(|source| Error::Open { path: path.to_path_buf(), source })?;
    }
    Ok(())
}

fn not_private(path: &Path, why: String) -> Error {
    Error::NotPrivate { path: path.to_path_buf(), why }
}

/// The store's lock, held while a daemon runs on it or a restore works on it
/// (`flock` on the file, which SQLite's own POSIX locks leave alone); released when
/// dropped, or when the process dies.
#[derive(Debug)]
pub struct StoreLock {
    _file: File,
}

impl StoreLock {
    /// Takes the lock of the store at `path`, or fails at once ([`Error::InUse`]) if
    /// another process holds it.
    pub(crate) fn take(path: &Path) -> Result<StoreLock> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|source| Error::Open { path: path.to_path_buf(), source })?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Err(Error::InUse { path: path.to_path_buf() });
            }
            return Err(Error::Open { path: path.to_path_buf(), source: e });
        }
        Ok(StoreLock { _file: file })
    }
}
