//! What the running kernel says of sched_ext (`/sys/kernel/sched_ext`).

use std::fs;
use std::io;
use std::path::Path;

/// Where the kernel shows sched_ext's state.
pub const SYSFS: &str = "/sys/kernel/sched_ext";

/// The running kernel's release (`uname -r`), "unknown" where /proc does not say.
pub fn release() -> String {
    fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The state of sched_ext on this kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "ops")]
pub enum State {
    /// The kernel was built without `CONFIG_SCHED_CLASS_EXT`.
    Absent,
    /// No BPF scheduler is loaded.
    Disabled,
    /// A BPF scheduler is being loaded (BPF verification can take a while).
    Enabling,
    /// The named BPF scheduler runs.
    Enabled(String),
    /// A BPF scheduler is being unloaded.
    Disabling,
}

impl State {
    /// Reads the state of the running kernel.
    pub fn read() -> io::Result<State> {
        Self::read_from(Path::new(SYSFS))
    }

    /// Reads the state from a sysfs directory laid out as `/sys/kernel/sched_ext`.
    pub fn read_from(dir: &Path) -> io::Result<State> {
        let state = match fs::read_to_string(dir.join("state")) {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(State::Absent),
            Err(e) => return Err(e),
        };
        Ok(match state.trim() {
            "disabled" => State::Disabled,
            "enabling" => State::Enabling,
            "disabling" => State::Disabling,
            // `root/ops` exists only while a scheduler is loaded.
            "enabled" => State::Enabled(
                fs::read_to_string(dir.join("root/ops")).map(|s| s.trim().to_string()).unwrap_or_default(),
            ),
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("unknown sched_ext state {other:?}"),
                ))
            }
        })
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            State::Absent => write!(f, "absent (the kernel has no CONFIG_SCHED_CLASS_EXT)"),
            State::Disabled => write!(f, "disabled (no BPF scheduler loaded)"),
            State::Enabling => write!(f, "enabling"),
            State::Enabled(ops) => write!(f, "enabled ({ops})"),
            State::Disabling => write!(f, "disabling"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory laid out as /sys/kernel/sched_ext, removed when dropped.
    struct Dir(std::path::PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    impl std::ops::Deref for Dir {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    fn dir(files: &[(&str, &str)]) -> Dir {
        let d =
            std::env::temp_dir().join(format!("schedlab-ext-state-{}-{}", std::process::id(), files.len()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(d.join("root")).unwrap();
        for (name, text) in files {
            fs::write(d.join(name), text).unwrap();
        }
        Dir(d)
    }

    #[test]
    fn states_are_read_as_the_kernel_writes_them() {
        assert_eq!(State::read_from(Path::new("/nonexistent/sched_ext")).unwrap(), State::Absent);
        let d = dir(&[("state", "disabled\n")]);
        assert_eq!(State::read_from(&d).unwrap(), State::Disabled);
        let d = dir(&[("state", "enabled\n"), ("root/ops", "schedlab_1.0\n")]);
        assert_eq!(State::read_from(&d).unwrap(), State::Enabled("schedlab_1.0".into()));
        let d = dir(&[("state", "sideways\n"), ("x", "")]);
        assert!(State::read_from(&d).is_err());
    }
}
