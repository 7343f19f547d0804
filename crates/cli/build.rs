//! Records the git commit the binary is built from, for the provenance of its JSON
//! reports (`src/provenance.rs`): `SCHEDLAB_COMMIT` is `git rev-parse HEAD`, with
//! `-dirty` when tracked files had uncommitted changes, or "unknown" outside a git
//! checkout or without git.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let commit = match git(&manifest, &["rev-parse", "HEAD"]) {
        Some(head) => {
            // `--no-optional-locks`: status must not refresh the index, which would
            // touch it and make this script run again at every build.
            let changes =
                git(&manifest, &["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"]);
            match changes {
                Some(c) if !c.is_empty() => format!("{head}-dirty"),
                _ => head,
            }
        }
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=SCHEDLAB_COMMIT={commit}");

    // Run again when HEAD moves (a checkout, a commit), the index changes (git add)
    // or a source changes (the tree gets or loses its uncommitted changes).
    let workspace = manifest.parent().and_then(Path::parent).expect("crates/cli is two levels down");
    let mut watched =
        vec![workspace.join("crates"), workspace.join("Cargo.toml"), workspace.join("Cargo.lock")];
    // HEAD and the index are the worktree's; refs are shared by every worktree.
    if let Some(dir) = git(&manifest, &["rev-parse", "--git-dir"]) {
        let dir = manifest.join(dir);
        watched.extend([dir.join("HEAD"), dir.join("index")]);
    }
    if let Some(dir) = git(&manifest, &["rev-parse", "--git-common-dir"]) {
        let dir = manifest.join(dir);
        watched.extend([dir.join("refs"), dir.join("packed-refs")]);
    }
    // Cargo reruns a script at every build for a watched path that does not exist.
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// What `git ARGS` printed in `dir`, trimmed; `None` where git is missing or failed.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(dir).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}
