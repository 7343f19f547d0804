//! Facts about the machine this runs on, read rather than assumed: the CPUs it has
//! online, the length of its tick, where its `cpu` cgroup controller is, and what its
//! kernel does with starved fair tasks. Tests and benchmarks that meet the real machine
//! read them here, so that a 4-CPU laptop with `CONFIG_HZ=1000` and pure cgroup v2 gets
//! the same verdicts as the 2-CPU virtual machines this project started on.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::settings::CpuSet;

/// The CPUs the kernel has online (`/sys/devices/system/cpu/online`), whatever this
/// process's own affinity.
pub fn online_cpus() -> io::Result<CpuSet> {
    let text = fs::read_to_string("/sys/devices/system/cpu/online")?;
    CpuSet::parse_list(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// How the tick's length was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HzSource {
    /// `CONFIG_HZ` of the kernel's configuration file.
    Config(PathBuf),
    /// Counted: the jiffies that passed over a known time (`/proc/timer_list`).
    Measured,
}

/// The kernel's tick rate (`CONFIG_HZ`) and how it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hz {
    pub hz: u64,
    pub source: HzSource,
}

impl Hz {
    /// One tick, in nanoseconds.
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / self.hz.max(1)
    }
}

/// The tick rates the kernel's configuration offers (`kernel/Kconfig.hz`).
const KERNEL_HZ: [u64; 4] = [100, 250, 300, 1000];

/// The running kernel's tick rate: `CONFIG_HZ` from `/boot/config-<release>` where
/// that file exists (Debian installs it), else counted from `/proc/timer_list`, which
/// shows the jiffies and the monotonic clock together (reading it needs root), over
/// 100 ms.
pub fn hz() -> io::Result<Hz> {
    let release = schedlab_ext::kernel::release();
    let config = PathBuf::from(format!("/boot/config-{release}"));
    if let Some(hz) = fs::read_to_string(&config).ok().as_deref().and_then(config_hz) {
        return Ok(Hz { hz, source: HzSource::Config(config) });
    }
    let sample = || -> io::Result<(u64, u64)> {
        let text = fs::read_to_string("/proc/timer_list")?;
        timer_list_clock(&text).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "/proc/timer_list shows no \"now at\" or \"jiffies:\"")
        })
    };
    let (ns0, j0) = sample()?;
    std::thread::sleep(Duration::from_millis(100));
    let (ns1, j1) = sample()?;
    Ok(Hz { hz: hz_from_jiffies(j1.saturating_sub(j0), ns1.saturating_sub(ns0)), source: HzSource::Measured })
}

/// `CONFIG_HZ` in the text of a kernel configuration file.
pub fn config_hz(config: &str) -> Option<u64> {
    config.lines().find_map(|l| l.strip_prefix("CONFIG_HZ=")).and_then(|v| v.trim().parse().ok())
}

/// The monotonic time (ns) and the jiffies in the text of `/proc/timer_list`: its first
/// `now at N nsecs` and its first `jiffies: N`.
pub fn timer_list_clock(text: &str) -> Option<(u64, u64)> {
    let now = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("now at ")?.strip_suffix(" nsecs")?.trim().parse().ok())?;
    let jiffies = text.lines().find_map(|l| l.trim().strip_prefix("jiffies:")?.trim().parse().ok())?;
    Some((now, jiffies))
}

/// The tick rate `jiffies` ticks over `ns` nanoseconds show: the nearest of the rates
/// the kernel offers (a reading's jiffies are ±1).
pub fn hz_from_jiffies(jiffies: u64, ns: u64) -> u64 {
    let rate = jiffies as f64 * 1e9 / ns.max(1) as f64;
    KERNEL_HZ
        .into_iter()
        .min_by(|a, b| (*a as f64 - rate).abs().total_cmp(&(*b as f64 - rate).abs()))
        .unwrap_or(250)
}

/// The cgroup hierarchy that has the `cpu` controller (weights of groups of tasks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuController {
    /// cgroup v1: a `cgroup` mount with the `cpu` option (usually `/sys/fs/cgroup/cpu`
    /// or `/sys/fs/cgroup/cpu,cpuacct`); a group's weight is `cpu.shares` (1024 by
    /// default).
    V1(PathBuf),
    /// cgroup v2: the `cgroup2` mount whose root's `cgroup.controllers` lists `cpu`; a
    /// group's weight is `cpu.weight` (100 by default), and the controller must be in
    /// its parent's `cgroup.subtree_control`.
    V2(PathBuf),
}

impl CpuController {
    /// Where the hierarchy is mounted.
    pub fn mount_point(&self) -> &Path {
        match self {
            CpuController::V1(p) | CpuController::V2(p) => p,
        }
    }

    /// The file a group's weight is written to, and the value for `shares` in cgroup v1's
    /// unit (1024 = the default weight): `cpu.shares` as is, or `cpu.weight`, whose
    /// default is 100 (the kernel's own conversion, `sched_weight_from_cgroup`, maps
    /// weight 100 to 1024).
    pub fn weight(&self, shares: u64) -> (&'static str, u64) {
        match self {
            CpuController::V1(_) => ("cpu.shares", shares),
            CpuController::V2(_) => ("cpu.weight", (shares * 100).div_ceil(1024).clamp(1, 10_000)),
        }
    }
}

/// Finds the `cpu` controller's hierarchy from `/proc/self/mountinfo`: v1's mount with
/// the `cpu` option, else the v2 mount that offers `cpu`. `NotFound`, saying what was
/// seen, when neither exists.
pub fn cpu_controller() -> io::Result<CpuController> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")?;
    let v2_offers_cpu = |mount: &Path| {
        fs::read_to_string(mount.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == "cpu"))
    };
    cpu_controller_in(&mountinfo, v2_offers_cpu).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "no cgroup hierarchy has the cpu controller (no cgroup v1 mount with the cpu option, \
             no cgroup2 mount whose cgroup.controllers lists cpu)",
        )
    })
}

/// [`cpu_controller`] over the text of a mountinfo file, asking `v2_offers_cpu` of each
/// cgroup2 mount point.
pub fn cpu_controller_in(mountinfo: &str, v2_offers_cpu: impl Fn(&Path) -> bool) -> Option<CpuController> {
    let mut v2 = None;
    for line in mountinfo.lines() {
        // id parent major:minor root mount-point options [optional...] - type source super-options
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let Some(mount) = left.split_whitespace().nth(4) else { continue };
        let mut right = right.split_whitespace();
        let (kind, super_options) = (right.next(), right.nth(1).unwrap_or(""));
        let mount = PathBuf::from(mount.replace("\\040", " "));
        match kind {
            Some("cgroup") if super_options.split(',').any(|o| o == "cpu") => {
                return Some(CpuController::V1(mount))
            }
            Some("cgroup2") if v2.is_none() && v2_offers_cpu(&mount) => v2 = Some(CpuController::V2(mount)),
            _ => {}
        }
    }
    v2
}

/// The fair server, which gives fair tasks starved by real-time ones a little CPU time
/// (Linux ≥ 6.12): `runtime_ns` of every `period_ns`, deferred to the end of the period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FairServer {
    pub runtime_ns: u64,
    pub period_ns: u64,
    /// Whether the values were read from debugfs (`sched/fair_server/cpu0`); if not,
    /// they are the kernel's defaults (50 ms of 1 s): a locked-down kernel refuses to
    /// read those files, and debugfs may not be mounted.
    pub read: bool,
}

/// The running kernel's fair server, `None` before Linux 6.12, which has none (RT
/// throttling alone then leaves fair tasks their share).
pub fn fair_server() -> Option<FairServer> {
    if kernel_version(&schedlab_ext::kernel::release()) < Some((6, 12)) {
        return None;
    }
    let dir = Path::new("/sys/kernel/debug/sched/fair_server/cpu0");
    let read = |f: &str| fs::read_to_string(dir.join(f)).ok()?.trim().parse::<u64>().ok();
    Some(match (read("runtime"), read("period")) {
        (Some(runtime_ns), Some(period_ns)) => FairServer { runtime_ns, period_ns, read: true },
        _ => FairServer { runtime_ns: 50_000_000, period_ns: 1_000_000_000, read: false },
    })
}

/// The kernel's RT throttling: real-time tasks may use `runtime_ns` of every
/// `period_ns` (`/proc/sys/kernel/sched_rt_runtime_us` and `_period_us`); `None` as
/// runtime when it is -1 (no limit).
pub fn rt_throttling() -> io::Result<(Option<u64>, u64)> {
    let read = |f: &str| -> io::Result<i64> {
        fs::read_to_string(format!("/proc/sys/kernel/{f}"))?
            .trim()
            .parse()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{f}: {e}")))
    };
    let (runtime, period) = (read("sched_rt_runtime_us")?, read("sched_rt_period_us")?);
    Ok((u64::try_from(runtime).ok().map(|us| us * 1_000), period.max(0) as u64 * 1_000))
}

/// The major and minor version of a kernel release (`6.18.44-fc-v669` is 6.18).
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_hz_is_read_from_a_kernel_configuration() {
        assert_eq!(config_hz("# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"), Some(250));
        assert_eq!(config_hz("CONFIG_HZ_1000=y\nCONFIG_HZ=1000"), Some(1000));
        assert_eq!(config_hz("CONFIG_HZ_PERIODIC=y\n"), None);
    }

    #[test]
    fn the_tick_rate_is_counted_from_timer_list() {
        let text = "Timer List Version: v0.10\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at 663206934990 nsecs\n\n\
                    cpu: 0\n  .idle_jiffies   : 4295058031\njiffies: 4295058419\n";
        assert_eq!(timer_list_clock(text), Some((663_206_934_990, 4_295_058_419)));
        assert_eq!(timer_list_clock("jiffies: 3\n"), None);
        // 25 jiffies in 100 ms is 250 Hz; one jiffy more or less still is.
        assert_eq!(hz_from_jiffies(25, 100_000_000), 250);
        assert_eq!(hz_from_jiffies(26, 100_000_000), 250);
        assert_eq!(hz_from_jiffies(101, 100_000_000), 1000);
        assert_eq!(hz_from_jiffies(10, 100_000_000), 100);
        assert_eq!(Hz { hz: 250, source: HzSource::Measured }.tick_ns(), 4_000_000);
    }

    #[test]
    fn the_cpu_controller_is_found_in_v1_hybrid_and_v2_layouts() {
        // This project's machines: hybrid, cpu bound to v1.
        let hybrid = "35 25 0:30 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n\
                      36 25 0:31 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n\
                      37 25 0:32 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n";
        assert_eq!(
            cpu_controller_in(hybrid, |_| false),
            Some(CpuController::V1("/sys/fs/cgroup/cpu,cpuacct".into()))
        );
        // v1's cpuacct alone is not cpu.
        let acct = "36 25 0:31 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n";
        assert_eq!(cpu_controller_in(acct, |_| true), None);
        // Pure v2, as most users' machines.
        let v2 =
            "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";
        assert_eq!(
            cpu_controller_in(v2, |p| p == Path::new("/sys/fs/cgroup")),
            Some(CpuController::V2("/sys/fs/cgroup".into()))
        );
        assert_eq!(cpu_controller_in(v2, |_| false), None, "a v2 mount that does not offer cpu");
    }

    #[test]
    fn weights_convert_between_shares_and_cpu_weight() {
        let (v1, v2) = (CpuController::V1("/a".into()), CpuController::V2("/b".into()));
        assert_eq!(v1.weight(2048), ("cpu.shares", 2048));
        assert_eq!(v2.weight(1024), ("cpu.weight", 100));
        assert_eq!(v2.weight(2048), ("cpu.weight", 200));
        assert_eq!(v2.weight(2), ("cpu.weight", 1));
    }

    #[test]
    fn kernel_versions_are_read_from_releases() {
        assert_eq!(kernel_version("6.18.44-fc-v669"), Some((6, 18)));
        assert_eq!(kernel_version("7.3.4+deb13-amd64"), Some((7, 3)));
        assert_eq!(kernel_version("6.1"), Some((6, 1)));
        assert!(kernel_version("6.11.0") < Some((6, 12)));
        assert_eq!(kernel_version("unknown"), None);
    }
}
