//! Where the store lives when the caller does not say (`--store PATH` overrides it).

use std::path::{Path, PathBuf};

/// The file name of the store inside its directory.
const FILE_NAME: &str = "schedlab.db";

/// The default store file (see `Store::default_path`): `/var/lib/schedlab/schedlab.db` for root (the daemon's
/// journal must be found by every later root command, whatever its environment), else
/// `$XDG_DATA_HOME/schedlab/schedlab.db`, falling back to
/// `~/.local/share/schedlab/schedlab.db`, and to `./schedlab.db` without a home.
pub(crate) fn default_path() -> PathBuf {
    let env = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    default_path_for(is_root(), env("XDG_DATA_HOME").as_deref(), env("HOME").as_deref())
}

/// [`default_path`] for a given identity and environment (what it decides, testable).
fn default_path_for(root: bool, xdg_data_home: Option<&Path>, home: Option<&Path>) -> PathBuf {
    let dir = if root {
        PathBuf::from("/var/lib")
    } else if let Some(xdg) = xdg_data_home.filter(|p| p.is_absolute()) {
        xdg.to_path_buf()
    } else if let Some(home) = home {
        home.join(".local/share")
    } else {
        return PathBuf::from(FILE_NAME);
    };
    dir.join("schedlab").join(FILE_NAME)
}

/// Whether this process runs with effective uid 0: `/proc/self` belongs to the
/// effective uid, which spares a libc dependency.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_directory_by_identity_and_environment() {
        let xdg = Path::new("/x/data");
        let home = Path::new("/home/u");
        let expect = |s: &str| PathBuf::from(s);
        assert_eq!(default_path_for(true, Some(xdg), Some(home)), expect("/var/lib/schedlab/schedlab.db"));
        assert_eq!(default_path_for(false, Some(xdg), Some(home)), expect("/x/data/schedlab/schedlab.db"));
        assert_eq!(
            default_path_for(false, Some(Path::new("relative")), Some(home)),
            expect("/home/u/.local/share/schedlab/schedlab.db"),
            "the XDG spec says to ignore a relative XDG_DATA_HOME"
        );
        assert_eq!(
            default_path_for(false, None, Some(home)),
            expect("/home/u/.local/share/schedlab/schedlab.db")
        );
        assert_eq!(default_path_for(false, None, None), expect("schedlab.db"));
        assert!(default_path().ends_with("schedlab/schedlab.db") || default_path() == expect("schedlab.db"));
    }
}
