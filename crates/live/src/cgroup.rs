//! cpuset cgroups: finding the hierarchy that has the cpuset controller, making groups
//! with a set of CPUs in it, and moving processes between groups.
//!
//! Two layouts are supported:
//!
//! - **cgroup v1**: a mount of type `cgroup` with the `cpuset` option (hybrid systems,
//!   usually `/sys/fs/cgroup/cpuset`). Groups are made as `<root>/schedlab/<name>`; a
//!   v1 cpuset group needs both `cpuset.cpus` and `cpuset.mems` before it takes tasks, so
//!   the intermediate `schedlab` group is given its parent's CPUs and memory nodes.
//! - **cgroup v2**: a `cgroup2` mount whose `cgroup.controllers` lists `cpuset` (pure v2
//!   systems, usually `/sys/fs/cgroup`). Groups are made as
//!   `<root>/schedlab.slice/<name>`, with `+cpuset` written to `cgroup.subtree_control`
//!   of the root and of `schedlab.slice` where it is not enabled yet; when schedlab
//!   enabled it on the root ([`ENABLED_MARK`] remembers that, across processes), it
//!   writes `-cpuset` again once `schedlab.slice` is removed. On a hybrid system whose
//!   cpuset controller is bound to v1, the v2 hierarchy does not offer cpuset.
//!
//! In v2 one tree holds every controller: a process moved into a group of
//! `schedlab.slice` leaves its systemd unit and, with it, the unit's `MemoryMax`,
//! `TasksMax`, device and IP filters. The daemon therefore makes no group in v2 (its
//! classes that ask for a cpuset are bound with `sched_setaffinity` instead); these
//! groups serve v1, where the cpuset hierarchy is a tree of its own.
//!
//! A cgroup path here is relative to the root of the mounted hierarchy and starts with
//! `/`: `"/"` is the root, `"/schedlab.slice/batch"` a group. It is what
//! `/proc/PID/cgroup` shows (minus the mount's own root when only a subtree is mounted).
//!
//! Membership is per process: writing any thread's id to `cgroup.procs` moves its whole
//! thread group, in both versions. Moving a process into a cpuset sets the affinity of
//! its threads to the group's CPUs; a later `sched_setaffinity` outside them fails with
//! `EINVAL`.

use std::fs;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use schedlab_model::Pid;

use crate::settings::CpuSet;

/// The group, under a hierarchy's root, that holds the groups schedlab makes in v2.
pub const V2_PARENT: &str = "schedlab.slice";
/// The group, under a hierarchy's root, that holds the groups schedlab makes in v1.
pub const V1_PARENT: &str = "schedlab";
/// Present while `+cpuset` that schedlab wrote to a v2 root's `cgroup.subtree_control`
/// is in force (it holds the mount point): what removing the last group undoes.
pub const ENABLED_MARK: &str = "/run/schedlab-cpuset-enabled";

/// The cgroup version of a hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    /// cgroup v1, a `cgroup` mount with the `cpuset` option.
    V1,
    /// cgroup v2, the unified `cgroup2` mount.
    V2,
}

/// A mounted cgroup hierarchy that has the cpuset controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    version: Version,
    /// Where it is mounted.
    mount_point: PathBuf,
    /// The cgroup the mount shows at its mount point (field 4 of mountinfo), `/` unless
    /// only a subtree is mounted.
    mount_root: String,
    /// Where the mark of a `+cpuset` schedlab enabled on the root is kept
    /// ([`ENABLED_MARK`] unless [`Hierarchy::with_mark`] says otherwise).
    mark: PathBuf,
}

impl Hierarchy {
    /// A hierarchy of `version` mounted at `mount_point` with its whole tree, trusted
    /// as given (nothing is checked). For configurations that name the mount, and tests.
    pub fn at(version: Version, mount_point: impl Into<PathBuf>) -> Hierarchy {
        Hierarchy {
            version,
            mount_point: mount_point.into(),
            mount_root: "/".to_string(),
            mark: PathBuf::from(ENABLED_MARK),
        }
    }

    /// The same hierarchy keeping its `+cpuset` mark at `path` instead of
    /// [`ENABLED_MARK`] (a tree standing in for cgroupfs keeps it beside itself).
    pub fn with_mark(mut self, path: impl Into<PathBuf>) -> Hierarchy {
        self.mark = path.into();
        self
    }

    /// The hierarchy to use: the v2 one if it offers cpuset, else the v1 cpuset one.
    /// `NotFound`, "no cpuset cgroup controller: ...", with what was seen, when neither
    /// exists.
    pub fn detect() -> io::Result<Hierarchy> {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo")?;
        let (found, seen) = scan_mountinfo(&mountinfo);
        found.into_iter().next().ok_or_else(|| no_cpuset(&seen))
    }

    /// Every hierarchy with the cpuset controller, v2 first (at most one of each
    /// version: one v2 hierarchy exists, and a v1 controller is in one hierarchy only).
    /// Empty when there is none.
    pub fn detect_all() -> io::Result<Vec<Hierarchy>> {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo")?;
        Ok(scan_mountinfo(&mountinfo).0)
    }

    /// Its version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Where it is mounted.
    pub fn mount_point(&self) -> &Path {
        &self.mount_point
    }

    /// The directory of cgroup `path` (relative to the hierarchy's root, starting with
    /// `/`), checked with [`check_cgroup_path`].
    pub fn dir(&self, path: &str) -> io::Result<PathBuf> {
        check_cgroup_path(path)?;
        let rel = path.trim_start_matches('/');
        Ok(if rel.is_empty() { self.mount_point.clone() } else { self.mount_point.join(rel) })
    }

    /// The cgroup of thread `pid` in this hierarchy, from `/proc/PID/cgroup` (the line
    /// with the `cpuset` controller for v1, the `0::` line for v2), relative to the
    /// mounted root. A thread in a v2 group removed since shows the path it had.
    pub fn current_cgroup(&self, pid: Pid) -> io::Result<String> {
        let text = fs::read_to_string(format!("/proc/{}/cgroup", pid.0))?;
        let path = parse_proc_cgroup(&text, self.version).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "/proc/{}/cgroup has no {} line",
                    pid.0,
                    match self.version {
                        Version::V1 => "cpuset (v1)",
                        Version::V2 => "0:: (v2)",
                    }
                ),
            )
        })?;
        strip_mount_root(&path, &self.mount_root).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "process {} is in cgroup {path}, outside {} mounted at {}",
                    pid.0,
                    self.mount_root,
                    self.mount_point.display()
                ),
            )
        })
    }

    /// Moves the process of `pid` (its whole thread group; `pid` may be any of its
    /// threads) to cgroup `path` by writing to its `cgroup.procs`.
    pub fn move_to(&self, pid: Pid, path: &str) -> io::Result<()> {
        let dir = self.dir(path)?;
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no cgroup {path} (no directory {})", dir.display()),
            ));
        }
        write_file(&dir.join("cgroup.procs"), &pid.0.to_string())
    }

    /// An exclusive `flock` on the mount point's directory, held (until the file is
    /// dropped) while groups are made and while the parent is removed, so that one
    /// process's [`CpusetGroup::remove`] never takes the parent from under another's
    /// [`CpusetGroup::create`] (between setting the parent up and making the group in it).
    fn lock(&self) -> io::Result<fs::File> {
        let dir = fs::File::open(&self.mount_point)
            .map_err(|e| io::Error::new(e.kind(), format!("opening {}: {e}", self.mount_point.display())))?;
        // SAFETY: a valid descriptor, no memory arguments.
        if unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX) } != 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("locking {}: {e}", self.mount_point.display())));
        }
        Ok(dir)
    }

    /// The name of the directory groups are made in, under the root.
    fn parent_name(&self) -> &'static str {
        match self.version {
            Version::V1 => V1_PARENT,
            Version::V2 => V2_PARENT,
        }
    }

    /// The file holding the CPUs a group of this version may use.
    fn effective_cpus_file(&self) -> &'static str {
        match self.version {
            Version::V1 => "cpuset.effective_cpus",
            Version::V2 => "cpuset.cpus.effective",
        }
    }

    /// The file holding the memory nodes a group of this version may use.
    fn effective_mems_file(&self) -> &'static str {
        match self.version {
            Version::V1 => "cpuset.effective_mems",
            Version::V2 => "cpuset.mems.effective",
        }
    }

    /// v2: enables cpuset for the children of `dir`, unless it is enabled already;
    /// whether it wrote.
    fn enable_cpuset_below(&self, dir: &Path) -> io::Result<bool> {
        let control = dir.join("cgroup.subtree_control");
        let enabled = read_file(&control)?;
        if enabled.split_whitespace().any(|c| c == "cpuset") {
            return Ok(false);
        }
        let offered = read_file(&dir.join("cgroup.controllers")).unwrap_or_default();
        if !offered.split_whitespace().any(|c| c == "cpuset") {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "no cpuset cgroup controller: {} does not offer cpuset (cgroup.controllers: {:?})",
                    dir.display(),
                    offered.trim()
                ),
            ));
        }
        write_file(&control, "+cpuset").map(|()| true)
    }
}

/// A cpuset group schedlab made (or found): `<root>/schedlab.slice/<name>` (v2) or
/// `<root>/schedlab/<name>` (v1). Dropping it leaves the group in place; [`remove`]
/// removes it.
///
/// [`remove`]: CpusetGroup::remove
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpusetGroup {
    hierarchy: Hierarchy,
    name: String,
}

impl CpusetGroup {
    /// Makes group `name` with CPUs `cpus` in the detected hierarchy
    /// ([`Hierarchy::detect`]); see [`CpusetGroup::create_in`].
    pub fn create(name: &str, cpus: &CpuSet) -> io::Result<CpusetGroup> {
        CpusetGroup::create_in(&Hierarchy::detect()?, name, cpus)
    }

    /// Makes group `name` (one path component) in `hierarchy` and sets its
    /// `cpuset.cpus` to `cpus` and its `cpuset.mems` to the memory nodes its parent may
    /// use (required in v1; in v2 an empty value would inherit them too). A group that
    /// exists already is reused and given `cpus`. The CPUs must be among those its
    /// parent may use (`InvalidInput` otherwise, with the parent's CPUs); a group this
    /// call made is removed again if setting it up fails.
    pub fn create_in(hierarchy: &Hierarchy, name: &str, cpus: &CpuSet) -> io::Result<CpusetGroup> {
        check_name(name)?;
        if cpus.cpus().is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cpuset group {name} needs at least one CPU"),
            ));
        }
        let group = CpusetGroup { hierarchy: hierarchy.clone(), name: name.to_string() };
        let _lock = hierarchy.lock()?;
        // A `remove` elsewhere that does not take the lock may rmdir the shared parent
        // between our mkdirs: start again then.
        let mut attempts = 0;
        let made = loop {
            attempts += 1;
            match group.make_dirs() {
                Err(e) if e.kind() == io::ErrorKind::NotFound && attempts < 5 => continue,
                other => break other?,
            }
        };
        let set_up = group.set_cpus(cpus).and_then(|()| {
            let parent = group.parent_dir();
            let mems = read_file(&parent.join(hierarchy.effective_mems_file()))?;
            write_file(&group.dir().join("cpuset.mems"), mems.trim())
        });
        match set_up {
            Ok(()) => Ok(group),
            Err(e) => {
                if made {
                    let _ = fs::remove_dir(group.dir());
                    group.remove_parent_if_empty();
                }
                Err(e)
            }
        }
    }

    /// The group `name` of the detected hierarchy as it is, for one made before (by
    /// this process or an earlier one); `NotFound` if there is none.
    pub fn open(name: &str) -> io::Result<CpusetGroup> {
        CpusetGroup::open_in(&Hierarchy::detect()?, name)
    }

    /// The group `name` of `hierarchy` as it is; `NotFound` if there is none.
    pub fn open_in(hierarchy: &Hierarchy, name: &str) -> io::Result<CpusetGroup> {
        check_name(name)?;
        let group = CpusetGroup { hierarchy: hierarchy.clone(), name: name.to_string() };
        if !group.dir().is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no cpuset group {}", group.dir().display()),
            ));
        }
        Ok(group)
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its hierarchy.
    pub fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    /// Its cgroup path relative to the hierarchy's root: `"/schedlab.slice/<name>"` or
    /// `"/schedlab/<name>"`, as [`Hierarchy::current_cgroup`] reports it for its members
    /// and [`Hierarchy::move_to`] takes it.
    pub fn path(&self) -> String {
        format!("/{}/{}", self.hierarchy.parent_name(), self.name)
    }

    /// Its directory.
    pub fn dir(&self) -> PathBuf {
        self.parent_dir().join(&self.name)
    }

    fn parent_dir(&self) -> PathBuf {
        self.hierarchy.mount_point.join(self.hierarchy.parent_name())
    }

    /// Makes the parent and the group's directory as needed (v2: enabling cpuset for
    /// their children; v1: giving a new parent its parent's CPUs and nodes). True if it
    /// made the group's directory.
    fn make_dirs(&self) -> io::Result<bool> {
        let h = &self.hierarchy;
        let parent = self.parent_dir();
        if h.version == Version::V2 && h.enable_cpuset_below(&h.mount_point)? {
            fs::write(&h.mark, h.mount_point.display().to_string())?;
        }
        let made_parent = mkdir(&parent)?;
        match h.version {
            Version::V2 => {
                h.enable_cpuset_below(&parent)?;
            }
            Version::V1 => {
                // A new v1 cpuset has no CPUs and no nodes (unless cgroup.clone_children).
                let empty = |f: &str| read_file(&parent.join(f)).map(|v| v.trim().is_empty());
                if made_parent || empty("cpuset.cpus")? || empty("cpuset.mems")? {
                    for f in ["cpuset.cpus", "cpuset.mems"] {
                        let value = read_file(&h.mount_point.join(f))?;
                        write_file(&parent.join(f), value.trim())?;
                    }
                }
            }
        }
        mkdir(&self.dir())
    }

    /// The CPUs it is given (`cpuset.cpus`; empty in v2 means all its parent's).
    pub fn cpus(&self) -> io::Result<CpuSet> {
        parse_cpus(&self.dir().join("cpuset.cpus"))
    }

    /// The CPUs its members may use (`cpuset.effective_cpus` / `cpuset.cpus.effective`).
    pub fn effective_cpus(&self) -> io::Result<CpuSet> {
        parse_cpus(&self.dir().join(self.hierarchy.effective_cpus_file()))
    }

    /// Gives it CPUs `cpus` (its members' affinity follows). `InvalidInput`, naming the
    /// CPUs the parent may use, if the kernel refuses them (not the parent's, or no such
    /// CPU).
    pub fn set_cpus(&self, cpus: &CpuSet) -> io::Result<()> {
        let text = cpus.to_string();
        fs::OpenOptions::new()
            .write(true)
            .open(self.dir().join("cpuset.cpus"))
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| {
                let parent = self.parent_dir().join(self.hierarchy.effective_cpus_file());
                let allowed = read_file(&parent).map(|v| v.trim().to_string()).unwrap_or_default();
                io::Error::new(
                    match e.raw_os_error() {
                        // EINVAL: not among the parent's; ERANGE: no such CPU.
                        Some(libc::EINVAL | libc::ERANGE) => io::ErrorKind::InvalidInput,
                        _ => e.kind(),
                    },
                    format!(
                        "setting CPUs {text:?} of cpuset group {}: {e} (its parent may use {allowed:?})",
                        self.dir().display()
                    ),
                )
            })
    }

    /// The processes in it (`cgroup.procs`).
    pub fn procs(&self) -> io::Result<Vec<Pid>> {
        let text = read_file(&self.dir().join("cgroup.procs"))?;
        Ok(text.split_whitespace().filter_map(|p| p.parse().ok()).map(Pid).collect())
    }

    /// Moves the process of `pid` (its whole thread group) into the group.
    pub fn move_process(&self, pid: Pid) -> io::Result<()> {
        write_file(&self.dir().join("cgroup.procs"), &pid.0.to_string())
    }

    /// Removes the group, and its parent (`schedlab` / `schedlab.slice`) if that is then
    /// empty. It does not move processes out: a group that still has some is left as it
    /// is and this fails with `ResourceBusy`, naming them (move them, e.g. back to where
    /// they were, first). A group gone already is not an error. A process that has just
    /// exited may keep the group busy for a moment: `EBUSY` is retried for up to 100 ms.
    pub fn remove(&self) -> io::Result<()> {
        let dir = self.dir();
        let mut attempts = 0;
        loop {
            attempts += 1;
            match fs::remove_dir(&dir) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && attempts < 10 => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => {
                    let procs = self.procs().unwrap_or_default();
                    let pids: Vec<u32> = procs.iter().map(|p| p.0).collect();
                    return Err(io::Error::new(
                        if procs.is_empty() { e.kind() } else { io::ErrorKind::ResourceBusy },
                        format!("removing cpuset group {}: {e} (processes in it: {pids:?})", dir.display()),
                    ));
                }
            }
        }
        if let Ok(_lock) = self.hierarchy.lock() {
            self.remove_parent_if_empty();
        }
        Ok(())
    }

    /// Removes the parent if nothing is left in it (best effort: another group in it
    /// keeps it), and then, in v2, the `+cpuset` schedlab enabled on the root (if no
    /// other group needs it: the kernel refuses while one does). Callers hold the
    /// hierarchy's lock.
    fn remove_parent_if_empty(&self) {
        let h = &self.hierarchy;
        if fs::remove_dir(self.parent_dir()).is_err() || h.version != Version::V2 {
            return;
        }
        let ours = fs::read_to_string(&h.mark).is_ok_and(|m| Path::new(m.trim()) == h.mount_point);
        if ours && write_file(&h.mount_point.join("cgroup.subtree_control"), "-cpuset").is_ok() {
            let _ = fs::remove_file(&h.mark);
        }
    }
}

/// The cgroup of thread `pid` in the detected cpuset hierarchy; see
/// [`Hierarchy::current_cgroup`].
pub fn current_cpuset_cgroup(pid: Pid) -> io::Result<String> {
    Hierarchy::detect()?.current_cgroup(pid)
}

/// Moves the process of `pid` to cgroup `path` of the detected cpuset hierarchy; see
/// [`Hierarchy::move_to`].
pub fn move_to(pid: Pid, path: &str) -> io::Result<()> {
    Hierarchy::detect()?.move_to(pid, path)
}

/// Checks a cgroup path: `/`, or `/` followed by `/`-separated names, none empty, `.`
/// or `..`, and no control characters. `InvalidInput` otherwise.
pub fn check_cgroup_path(path: &str) -> io::Result<()> {
    let ok = path == "/"
        || (path.starts_with('/')
            && path[1..].split('/').all(|c| !c.is_empty() && c != "." && c != "..")
            && !path.chars().any(char::is_control));
    if ok {
        Ok(())
    } else {
        Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad cgroup path {path:?}")))
    }
}

fn check_name(name: &str) -> io::Result<()> {
    check_cgroup_path(&format!("/{name}"))?;
    if name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cpuset group name {name:?} is more than one path component"),
        ));
    }
    Ok(())
}

fn no_cpuset(seen: &[String]) -> io::Error {
    let seen = if seen.is_empty() { "no cgroup mount at all".to_string() } else { seen.join("; ") };
    io::Error::new(io::ErrorKind::NotFound, format!("no cpuset cgroup controller: {seen}"))
}

/// The cpuset hierarchies of a mountinfo text (v2 first), and a note on each cgroup
/// mount that was passed over, for the error when none is found.
fn scan_mountinfo(mountinfo: &str) -> (Vec<Hierarchy>, Vec<String>) {
    let mut v1 = None;
    let mut v2 = None;
    let mut seen = Vec::new();
    for mount in mountinfo.lines().filter_map(parse_mount_line) {
        match mount.fstype.as_str() {
            // A v1 controller is in one hierarchy; prefer a mount of its whole tree.
            "cgroup"
                if mount.super_options.split(',').any(|o| o == "cpuset")
                    && v1.as_ref().is_none_or(|h: &Hierarchy| h.mount_root != "/") =>
            {
                v1 = Some(Hierarchy {
                    version: Version::V1,
                    mount_point: mount.mount_point,
                    mount_root: mount.root,
                    mark: PathBuf::from(ENABLED_MARK),
                });
            }
            "cgroup2" => {
                if v2.as_ref().is_some_and(|h: &Hierarchy| h.mount_root == "/") {
                    continue;
                }
                let controllers = mount.mount_point.join("cgroup.controllers");
                match fs::read_to_string(&controllers) {
                    Ok(c) if c.split_whitespace().any(|c| c == "cpuset") => {
                        v2 = Some(Hierarchy {
                            version: Version::V2,
                            mount_point: mount.mount_point,
                            mount_root: mount.root,
                            mark: PathBuf::from(ENABLED_MARK),
                        })
                    }
                    Ok(c) => seen.push(format!(
                        "cgroup2 at {} does not offer cpuset (cgroup.controllers: {:?})",
                        mount.mount_point.display(),
                        c.trim()
                    )),
                    Err(e) => seen.push(format!("{}: {e}", controllers.display())),
                }
            }
            _ => {}
        }
    }
    if v1.is_none() {
        seen.push("no cgroup v1 mount has the cpuset option".to_string());
    }
    (v2.into_iter().chain(v1).collect(), seen)
}

/// One line of `/proc/self/mountinfo`, the fields used.
#[derive(Debug, PartialEq, Eq)]
struct Mount {
    root: String,
    mount_point: PathBuf,
    fstype: String,
    super_options: String,
}

/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`:
/// root (4), mount point (5), and after `-`: type, source, super options.
fn parse_mount_line(line: &str) -> Option<Mount> {
    let (before, after) = line.split_once(" - ")?;
    let mut fields = before.split(' ');
    let root = unescape(fields.nth(3)?);
    let mount_point = PathBuf::from(unescape(fields.next()?));
    let mut after = after.split(' ');
    let fstype = after.next()?.to_string();
    let _source = after.next()?;
    let super_options = after.next().unwrap_or("").to_string();
    Some(Mount { root, mount_point, fstype, super_options })
}

/// Undoes mountinfo's octal escapes (`\040` for a space, ...).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b))
        {
            let v = bytes[i + 1..i + 4].iter().fold(0u32, |a, b| a * 8 + u32::from(b - b'0'));
            if let Ok(v) = u8::try_from(v) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup path of a `/proc/PID/cgroup` text in the hierarchy of `version`: the v1
/// line whose controllers include `cpuset` (`3:cpuset:/a`), or the v2 line `0::/a`.
/// A trailing ` (deleted)` (a removed v2 group) is dropped.
fn parse_proc_cgroup(text: &str, version: Version) -> Option<String> {
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let id = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        let ours = match version {
            Version::V1 => id != "0" && controllers.split(',').any(|c| c == "cpuset"),
            Version::V2 => id == "0" && controllers.is_empty(),
        };
        ours.then(|| path.strip_suffix(" (deleted)").unwrap_or(path).to_string())
    })
}

/// `path` relative to `mount_root`, starting with `/`; `None` if it is outside.
fn strip_mount_root(path: &str, mount_root: &str) -> Option<String> {
    if mount_root == "/" {
        return Some(path.to_string());
    }
    let rest = path.strip_prefix(mount_root.trim_end_matches('/'))?;
    if rest.is_empty() {
        Some("/".to_string())
    } else if rest.starts_with('/') {
        Some(rest.to_string())
    } else {
        None
    }
}

/// Makes directory `dir`; false if it existed.
fn mkdir(dir: &Path) -> io::Result<bool> {
    match fs::create_dir(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io::Error::new(e.kind(), format!("making cgroup {}: {e}", dir.display()))),
    }
}

fn read_file(path: &Path) -> io::Result<String> {
    fs::read_to_string(path).map_err(|e| io::Error::new(e.kind(), format!("reading {}: {e}", path.display())))
}

/// Writes `value` to an existing control file (never creates one: a missing file, e.g.
/// `cpuset.cpus` of a v2 group without the cpuset controller, is `NotFound`).
fn write_file(path: &Path, value: &str) -> io::Result<()> {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(|e| io::Error::new(e.kind(), format!("writing {value:?} to {}: {e}", path.display())))
}

fn parse_cpus(path: &Path) -> io::Result<CpuSet> {
    let text = read_file(path)?;
    CpuSet::parse(&text).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: bad CPU list {:?}", path.display(), text.trim()),
        )
    })
}

/// Removes the empty class groups schedlab's parent group holds in every cpuset
/// hierarchy (what a daemon killed before it could clean up leaves behind, once its
/// processes are moved back), and the parent when it is empty too. A group that still
/// has processes is kept. Returns how many groups were removed.
pub fn remove_empty_groups() -> io::Result<usize> {
    let mut removed = 0;
    for h in Hierarchy::detect_all()? {
        let parent = h.mount_point().join(h.parent_name());
        let Ok(entries) = std::fs::read_dir(&parent) else { continue };
        for entry in entries.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            if !entry.path().is_dir() {
                continue;
            }
            let group = CpusetGroup::open_in(&h, &name)?;
            if group.procs().is_ok_and(|p| p.is_empty()) && group.remove().is_ok() {
                removed += 1;
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_parse() {
        let hybrid = "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let m = parse_mount_line(hybrid.lines().next().unwrap()).unwrap();
        assert_eq!(
            m,
            Mount {
                root: "/".into(),
                mount_point: "/sys/fs/cgroup/cpuset".into(),
                fstype: "cgroup".into(),
                super_options: "rw,cpuset".into(),
            }
        );
        let m = parse_mount_line(
            "30 23 0:26 /a\\040b /sys/fs/cgroup rw,nosuid shared:9 master:2 - cgroup2 cgroup2 rw,nsdelegate",
        )
        .unwrap();
        assert_eq!((m.root.as_str(), m.fstype.as_str()), ("/a b", "cgroup2"));
        assert_eq!(m.mount_point, PathBuf::from("/sys/fs/cgroup"));
        // v1 cpuset co-mounted with cpu; the cpuacct mount has no cpuset.
        let (found, _) = scan_mountinfo(
            "1 0 0:1 / /c rw - cgroup cgroup rw,cpuacct\n2 0 0:2 / /cs rw - cgroup cgroup rw,cpu,cpuset\n",
        );
        assert_eq!(found, vec![Hierarchy::at(Version::V1, "/cs")]);
        let (found, seen) = scan_mountinfo("1 0 0:1 / /c rw - cgroup cgroup rw,cpuacct\n");
        assert!(found.is_empty());
        assert!(no_cpuset(&seen).to_string().starts_with("no cpuset cgroup controller: "), "{seen:?}");
    }

    #[test]
    fn proc_cgroup_lines_parse() {
        let text = "9:name=systemd:/\n4:memory:/x/y\n3:cpu,cpuset:/schedlab/batch\n0::/u (deleted)\n";
        assert_eq!(parse_proc_cgroup(text, Version::V1).as_deref(), Some("/schedlab/batch"));
        assert_eq!(parse_proc_cgroup(text, Version::V2).as_deref(), Some("/u"));
        assert_eq!(parse_proc_cgroup("0::/\n", Version::V1), None);
        assert_eq!(strip_mount_root("/a/b", "/a").as_deref(), Some("/b"));
        assert_eq!(strip_mount_root("/a", "/a").as_deref(), Some("/"));
        assert_eq!(strip_mount_root("/ab", "/a"), None);
        assert_eq!(strip_mount_root("/ab", "/").as_deref(), Some("/ab"));
    }

    #[test]
    fn cgroup_paths_are_checked() {
        for ok in ["/", "/a", "/schedlab.slice/batch"] {
            assert!(check_cgroup_path(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a", "/a/", "//", "/a//b", "/..", "/a/./b", "/a\nb"] {
            assert!(check_cgroup_path(bad).is_err(), "{bad:?}");
        }
        assert!(check_name("a/b").is_err());
        assert!(check_name("..").is_err());
        assert!(check_name("batch").is_ok());
        let h = Hierarchy::at(Version::V2, "/sys/fs/cgroup");
        assert_eq!(h.dir("/").unwrap(), PathBuf::from("/sys/fs/cgroup"));
        assert_eq!(h.dir("/a/b").unwrap(), PathBuf::from("/sys/fs/cgroup/a/b"));
    }

    /// The v2 sequence of writes, on a directory tree standing in for cgroupfs (every
    /// control file made beforehand, as the kernel would): the machines this runs on
    /// may have cpuset bound to v1 only.
    #[test]
    fn v2_group_is_set_up_in_a_fake_tree() {
        let root = std::env::temp_dir().join(format!("schedlab-cgroup-fake-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let slice = root.join(V2_PARENT);
        let group = slice.join("batch");
        fs::create_dir_all(&group).unwrap();
        let files: [(&Path, &str, &str); 8] = [
            (&root, "cgroup.controllers", "cpu cpuset memory\n"),
            (&root, "cgroup.subtree_control", ""),
            (&slice, "cgroup.controllers", "cpuset\n"),
            (&slice, "cgroup.subtree_control", ""),
            (&slice, "cpuset.mems.effective", "0\n"),
            (&slice, "cpuset.cpus.effective", "0-3\n"),
            (&group, "cpuset.cpus", ""),
            (&group, "cpuset.mems", ""),
        ];
        for (dir, f, v) in files {
            fs::write(dir.join(f), v).unwrap();
        }
        fs::write(group.join("cgroup.procs"), "").unwrap();
        let mark = root.with_extension("mark");
        let h = Hierarchy::at(Version::V2, &root).with_mark(&mark);
        let g = CpusetGroup::create_in(&h, "batch", &CpuSet::new([1, 2])).unwrap();
        assert_eq!(fs::read_to_string(&mark).unwrap(), root.display().to_string(), "schedlab enabled it");
        let read = |p: PathBuf| fs::read_to_string(p).unwrap();
        assert_eq!(read(root.join("cgroup.subtree_control")), "+cpuset");
        assert_eq!(read(slice.join("cgroup.subtree_control")), "+cpuset");
        assert_eq!(read(group.join("cpuset.cpus")), "1-2");
        assert_eq!(read(group.join("cpuset.mems")), "0");
        assert_eq!(g.path(), "/schedlab.slice/batch");
        assert_eq!(g.dir(), group);
        g.move_process(Pid(42)).unwrap();
        assert_eq!(read(group.join("cgroup.procs")), "42");
        assert!(CpusetGroup::create_in(&h, "x", &CpuSet::default()).is_err());
        // The last group gone (a real cgroupfs has no files to empty first), the
        // `+cpuset` schedlab enabled on the root is undone, and its mark with it.
        for dir in [&group, &slice] {
            for f in fs::read_dir(dir).unwrap() {
                let f = f.unwrap().path();
                if f.is_file() {
                    fs::remove_file(f).unwrap();
                }
            }
        }
        g.remove().unwrap();
        assert!(!slice.exists());
        assert_eq!(read(root.join("cgroup.subtree_control")), "-cpuset");
        assert!(!mark.exists());
        fs::remove_dir_all(&root).unwrap();
    }
}
