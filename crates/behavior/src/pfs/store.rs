//! Where PFS knowledge lives between runs: one PFS per program, kept in a JSON file
//! (the live daemon's SQLite store comes with the store issue).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::pfs::Pfs;

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read or write PFS store {path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("PFS store {path} is not a valid store")]
    Format {
        path: String,
        #[source]
        source: serde_json::Error,
    },
}

/// The PFS of every program seen, by program name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PfsStore {
    pub programs: BTreeMap<String, Pfs>,
}

impl PfsStore {
    pub fn get(&self, program: &str) -> Option<&Pfs> {
        self.programs.get(program)
    }

    pub fn get_mut(&mut self, program: &str) -> Option<&mut Pfs> {
        self.programs.get_mut(program)
    }

    /// Keeps `pfs` unless the program already has one (the first finished process of a
    /// program creates its PFS; later ones adapt it instead).
    pub fn insert_new(&mut self, pfs: Pfs) {
        self.programs.entry(pfs.program.clone()).or_insert(pfs);
    }

    /// Reads a store; a missing file is an empty store.
    pub fn load(path: &Path) -> Result<Self, StoreError> {
        let p = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|source| StoreError::Format { path: p, source }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(source) => Err(StoreError::Io { path: p, source }),
        }
    }

    /// Writes the store (through a temporary file, so a crash leaves the old one).
    pub fn save(&self, path: &Path) -> Result<(), StoreError> {
        let p = path.display().to_string();
        let tmp = path.with_extension("tmp");
        let text = serde_json::to_string_pretty(self).expect("a store always serializes");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|source| StoreError::Io { path: p, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pfs::{PfsEntry, PfsState};

    #[test]
    fn round_trips_and_reports_bad_files() {
        let dir = std::env::temp_dir().join(format!("schedlab-pfs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pfs.json");
        assert_eq!(PfsStore::load(&path).unwrap(), PfsStore::default());
        let mut s = PfsStore::default();
        let run = PfsEntry { state: PfsState::Run, time_ns: 5 };
        s.insert_new(Pfs { program: "a".into(), entries: vec![run] });
        s.insert_new(Pfs { program: "a".into(), entries: vec![] });
        assert_eq!(s.get("a").unwrap().entries, vec![run], "the first PFS stays");
        s.save(&path).unwrap();
        assert_eq!(PfsStore::load(&path).unwrap(), s);
        std::fs::write(&path, "{not json").unwrap();
        let e = PfsStore::load(&path).unwrap_err();
        assert!(e.to_string().contains("not a valid store"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
