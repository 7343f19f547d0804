//! The simulated machine's CPU topology: which CPUs are SMT siblings of one core, which
//! share a last-level cache (LLC), and which belong to one NUMA node.
//!
//! A topology comes from a flat CPU count (`--cpus N`: one node, one LLC, no SMT), from
//! a `NxCxT` spec (nodes × cores per node × threads per core), or from a real machine:
//! the text of `lscpu -p` or a copy of its sysfs (`/sys/devices/system/cpu` and
//! `/sys/devices/system/node`). CPUs are numbered densely from 0, as the affinities of a
//! workload name them.

use std::collections::HashMap;
use std::path::Path;

/// Where a CPU sits: dense ids of its core, its LLC and its NUMA node. Cores nest in
/// LLCs and LLCs in nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    pub node: u32,
    pub llc: u32,
    pub core: u32,
}

/// A machine's CPUs and where each one sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    places: Vec<Place>,
}

/// Why a topology could not be read or built. Each variant says where: the spec, the
/// line of `lscpu -p` output, or the sysfs file.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// A `NxCxT` spec that is not three positive whole numbers.
    #[error("topology '{spec}': expected NODESxCORESxTHREADS with whole numbers of at least 1, e.g. 2x16x2")]
    Spec { spec: String },
    /// A machine without CPUs.
    #[error("a machine needs at least one CPU")]
    NoCpus,
    /// More CPUs than CPU numbers (32 bits) can name.
    #[error("{cpus} CPUs: CPU numbers are 32-bit, so at most {} CPUs", u32::MAX)]
    TooMany { cpus: u64 },
    /// A line of `lscpu -p` output that cannot be read.
    #[error("lscpu -p line {line}: {what}")]
    Lscpu { line: usize, what: String },
    /// A sysfs file whose content cannot be read.
    #[error("{file}: {what}")]
    Sysfs { file: String, what: String },
    /// The CPUs are not numbered 0 to n − 1 without a gap.
    #[error("CPU {cpu} is missing: CPUs must be numbered from 0 without gaps ({cpus} CPUs listed)")]
    Gap { cpu: u32, cpus: u32 },
    /// Two CPUs of one core (or LLC) are in different LLCs (or nodes).
    #[error("CPUs {a} and {b} share a {inner} but not a {outer}: cores must nest in LLCs, LLCs in nodes")]
    NotNested { a: u32, b: u32, inner: &'static str, outer: &'static str },
    /// A path that is neither a `NxCxT` spec nor a readable file or directory.
    #[error(
        "'{path}': not a NxCxT spec, and cannot read it as a lscpu -p file or a sysfs directory: {source}"
    )]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// One CPU as a source describes it, with keys that are unique per core, LLC and node
/// but not yet dense.
#[derive(Clone, Copy, Debug)]
struct Raw {
    cpu: u32,
    core: (u64, u64),
    llc: (u64, u64),
    node: u64,
}

impl Topology {
    /// `cpus` CPUs in one node and one LLC, each its own core (today's flat machine).
    pub fn flat(cpus: u32) -> Self {
        Topology { places: (0..cpus).map(|c| Place { node: 0, llc: 0, core: c }).collect() }
    }

    /// `nodes` nodes of `cores` cores with `threads` SMT threads each; every node is one
    /// LLC. CPUs are numbered as Linux numbers them on x86: the first thread of every
    /// core, node by node, then the second threads, and so on.
    pub fn uniform(nodes: u32, cores: u32, threads: u32) -> Result<Self, TopologyError> {
        let total = u64::from(nodes) * u64::from(cores) * u64::from(threads);
        if total == 0 {
            return Err(TopologyError::NoCpus);
        }
        if total > u64::from(u32::MAX) {
            return Err(TopologyError::TooMany { cpus: total });
        }
        let per_thread = nodes * cores;
        let places = (0..total as u32)
            .map(|cpu| {
                let core = cpu % per_thread;
                let node = core / cores;
                Place { node, llc: node, core }
            })
            .collect();
        Ok(Topology { places })
    }

    /// Parses `NxCxT`, e.g. `2x16x2`: nodes × cores per node × threads per core.
    pub fn parse_spec(spec: &str) -> Result<Self, TopologyError> {
        let bad = || TopologyError::Spec { spec: spec.to_string() };
        let n: Vec<u32> = spec
            .trim()
            .split(['x', 'X'])
            .map(|p| p.trim().parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        match n[..] {
            [nodes, cores, threads] if nodes > 0 && cores > 0 && threads > 0 => {
                Topology::uniform(nodes, cores, threads)
            }
            _ => Err(bad()),
        }
    }

    /// Reads the output of `lscpu -p` (`# CPU,Core,Socket,Node,,L1d,L1i,L2,L3` and one
    /// line per CPU). The columns are found by the last header comment naming a `CPU` column (that default
    /// order without one); a missing or empty Node is node 0, a missing or empty L3 makes
    /// the socket the LLC.
    pub fn from_lscpu(text: &str) -> Result<Self, TopologyError> {
        let mut columns: Vec<String> =
            ["CPU", "Core", "Socket", "Node", "", "L1d", "L1i", "L2", "L3"].map(String::from).to_vec();
        let mut raws = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            let err = |what: String| TopologyError::Lscpu { line: line_no, what };
            let line = line.trim();
            if let Some(comment) = line.strip_prefix('#') {
                let comment = comment.trim();
                if comment.split(',').any(|c| c.trim() == "CPU") {
                    columns = comment.split(',').map(|c| c.trim().to_string()).collect();
                }
                continue;
            }
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let field = |name: &str| -> Result<Option<u64>, TopologyError> {
                let Some(col) = columns.iter().position(|c| c.eq_ignore_ascii_case(name)) else {
                    return Ok(None);
                };
                match fields.get(col).copied().unwrap_or("") {
                    "" | "-" => Ok(None),
                    v => v.parse().map(Some).map_err(|_| err(format!("{name} '{v}' is not a whole number"))),
                }
            };
            let need = |name: &str| field(name)?.ok_or_else(|| err(format!("no {name} value")));
            let cpu = need("CPU")?;
            let cpu = u32::try_from(cpu).map_err(|_| err(format!("CPU {cpu} is too large")))?;
            let core = need("Core")?;
            let socket = field("Socket")?.unwrap_or(0);
            let node = field("Node")?.unwrap_or(0);
            let llc = field("L3")?.map_or((0, socket), |l3| (1, l3));
            raws.push(Raw { cpu, core: (socket, core), llc, node });
        }
        Topology::from_raw(raws)
    }

    /// Reads a copy of sysfs: `dir` is laid out as `/sys/devices/system/cpu` (with the
    /// nodes in `../node`) or as `/sys/devices/system` (with `cpu/` and `node/`). Per
    /// CPU it reads `cpuN/topology/thread_siblings_list` (the core),
    /// `cpuN/topology/physical_package_id` and `cpuN/cache/index3/shared_cpu_list` (the
    /// LLC; the package when there is no L3), and `nodeN/cpulist` for the nodes (all in
    /// node 0 without them).
    pub fn from_sysfs(dir: &Path) -> Result<Self, TopologyError> {
        let io = |path: &Path, source| TopologyError::Io { path: path.display().to_string(), source };
        let (cpu_dir, node_dir) = if dir.join("cpu0").is_dir() {
            (dir.to_path_buf(), dir.join("..").join("node"))
        } else {
            (dir.join("cpu"), dir.join("node"))
        };
        let numbered = |d: &Path, prefix: &str| -> Result<Vec<u32>, TopologyError> {
            let mut n = Vec::new();
            for entry in std::fs::read_dir(d).map_err(|e| io(d, e))? {
                let name = entry.map_err(|e| io(d, e))?.file_name();
                if let Some(k) =
                    name.to_str().and_then(|s| s.strip_prefix(prefix)).and_then(|s| s.parse().ok())
                {
                    n.push(k);
                }
            }
            n.sort_unstable();
            Ok(n)
        };
        let cpus = numbered(&cpu_dir, "cpu")?;
        let nodes = if node_dir.is_dir() { numbered(&node_dir, "node")? } else { Vec::new() };
        let read = |rel: &str| {
            let (base, rest) = match rel.strip_prefix("node/") {
                Some(rest) => (&node_dir, rest),
                None => (&cpu_dir, rel),
            };
            std::fs::read_to_string(base.join(rest)).ok()
        };
        Topology::from_sysfs_files(&cpus, &nodes, read)
    }

    /// [`Topology::from_sysfs`] over any file source: `read("cpu3/topology/...")` and
    /// `read("node/node1/cpulist")` give a file's text, or `None` when it does not exist.
    pub fn from_sysfs_files(
        cpus: &[u32],
        nodes: &[u32],
        read: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, TopologyError> {
        let err = |file: &str, what: String| TopologyError::Sysfs { file: file.to_string(), what };
        let mut node_of = HashMap::new();
        for &n in nodes {
            let file = format!("node/node{n}/cpulist");
            let text = read(&file).ok_or_else(|| err(&file, "missing".into()))?;
            for cpu in parse_cpu_list(&text).map_err(|what| err(&file, what))? {
                node_of.insert(cpu, u64::from(n));
            }
        }
        let mut raws = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let list_min = |file: String| -> Result<Option<u64>, TopologyError> {
                let Some(text) = read(&file) else { return Ok(None) };
                let list = parse_cpu_list(&text).map_err(|what| err(&file, what))?;
                let first = list.first().ok_or_else(|| err(&file, "empty CPU list".into()))?;
                Ok(Some(u64::from(*first)))
            };
            let siblings = format!("cpu{cpu}/topology/thread_siblings_list");
            let core = list_min(siblings.clone())?.ok_or_else(|| err(&siblings, "missing".into()))?;
            let package_file = format!("cpu{cpu}/topology/physical_package_id");
            let package = match read(&package_file) {
                Some(t) => t
                    .trim()
                    .parse()
                    .map_err(|_| err(&package_file, format!("'{}' is not a whole number", t.trim())))?,
                None => 0,
            };
            let llc =
                list_min(format!("cpu{cpu}/cache/index3/shared_cpu_list"))?.map_or((0, package), |l| (1, l));
            let node = node_of.get(&cpu).copied().unwrap_or(0);
            raws.push(Raw { cpu, core: (0, core), llc, node });
        }
        Topology::from_raw(raws)
    }

    /// A `NxCxT` spec, or else a `lscpu -p` output file or a sysfs directory.
    pub fn load(spec_or_path: &str) -> Result<Self, TopologyError> {
        let path = Path::new(spec_or_path);
        let spec_like =
            spec_or_path.chars().all(|c| c.is_ascii_digit() || c.is_whitespace() || c == 'x' || c == 'X');
        if spec_like && !path.exists() {
            return Topology::parse_spec(spec_or_path);
        }
        let io = |source| TopologyError::Io { path: spec_or_path.to_string(), source };
        if path.is_dir() {
            Topology::from_sysfs(path)
        } else {
            Topology::from_lscpu(&std::fs::read_to_string(path).map_err(io)?)
        }
    }

    /// Makes the keys dense, checks that CPUs are numbered 0..n and that cores nest in
    /// LLCs and LLCs in nodes.
    fn from_raw(mut raws: Vec<Raw>) -> Result<Self, TopologyError> {
        if raws.is_empty() {
            return Err(TopologyError::NoCpus);
        }
        raws.sort_by_key(|r| r.cpu);
        let n = raws.len() as u32;
        if let Some(cpu) = (0..n).find(|&i| raws[i as usize].cpu != i) {
            return Err(TopologyError::Gap { cpu, cpus: n });
        }
        fn dense<K: std::hash::Hash + Eq>(ids: &mut HashMap<K, u32>, k: K) -> u32 {
            let next = ids.len() as u32;
            *ids.entry(k).or_insert(next)
        }
        let (mut nodes, mut llcs, mut cores) = (HashMap::new(), HashMap::new(), HashMap::new());
        // The first CPU of each core and LLC, to check nesting.
        let (mut core_first, mut llc_first) = (HashMap::new(), HashMap::new());
        let mut places: Vec<Place> = Vec::with_capacity(raws.len());
        for r in &raws {
            let place = Place {
                node: dense(&mut nodes, r.node),
                llc: dense(&mut llcs, r.llc),
                core: dense(&mut cores, r.core),
            };
            let core_cpu = *core_first.entry(place.core).or_insert(r.cpu);
            if core_cpu != r.cpu && places[core_cpu as usize].llc != place.llc {
                return Err(TopologyError::NotNested { a: core_cpu, b: r.cpu, inner: "core", outer: "LLC" });
            }
            let llc_cpu = *llc_first.entry(place.llc).or_insert(r.cpu);
            if llc_cpu != r.cpu && places[llc_cpu as usize].node != place.node {
                return Err(TopologyError::NotNested { a: llc_cpu, b: r.cpu, inner: "LLC", outer: "node" });
            }
            places.push(place);
        }
        Ok(Topology { places })
    }

    /// The number of CPUs.
    pub fn cpus(&self) -> u32 {
        self.places.len() as u32
    }

    /// Where `cpu` sits.
    pub fn place(&self, cpu: u32) -> Place {
        self.places[cpu as usize]
    }

    /// Counts of nodes, LLCs, cores and CPUs.
    pub fn counts(&self) -> (u32, u32, u32, u32) {
        let max = |f: fn(&Place) -> u32| self.places.iter().map(f).max().map_or(0, |m| m + 1);
        (max(|p| p.node), max(|p| p.llc), max(|p| p.core), self.cpus())
    }

    /// `2 nodes, 2 LLCs, 32 cores, 64 CPUs`, for reports.
    pub fn describe(&self) -> String {
        let (nodes, llcs, cores, cpus) = self.counts();
        let s = |n: u32, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        format!("{}, {}, {}, {}", s(nodes, "node"), s(llcs, "LLC"), s(cores, "core"), s(cpus, "CPU"))
    }
}

/// Parses a kernel CPU list such as `0-3,8,10-11` (ranges inclusive), in increasing
/// order without duplicates.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.trim().is_empty()) {
        let num =
            |s: &str| s.trim().parse::<u32>().map_err(|_| format!("'{}' is not a CPU number", s.trim()));
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi {
            return Err(format!("range '{}' runs backwards", part.trim()));
        }
        if hi - lo >= 1 << 20 {
            return Err(format!("range '{}' is larger than any machine", part.trim()));
        }
        cpus.extend(lo..=hi);
        if cpus.len() > 1 << 22 {
            return Err("the list names more CPUs than any machine has".to_string());
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cores(t: &Topology) -> Vec<u32> {
        (0..t.cpus()).map(|c| t.place(c).core).collect()
    }

    #[test]
    fn specs_number_cpus_as_linux_does_on_x86() {
        let t = Topology::parse_spec("2x16x2").unwrap();
        assert_eq!(t.counts(), (2, 2, 32, 64));
        // CPU 0 and 32 are the threads of core 0; 16 is the first core of node 1.
        assert_eq!(t.place(0), Place { node: 0, llc: 0, core: 0 });
        assert_eq!(t.place(32), Place { node: 0, llc: 0, core: 0 });
        assert_eq!(t.place(16), Place { node: 1, llc: 1, core: 16 });
        assert_eq!(t.place(63), Place { node: 1, llc: 1, core: 31 });
        assert_eq!(t.describe(), "2 nodes, 2 LLCs, 32 cores, 64 CPUs");
        assert_eq!(Topology::parse_spec("1x2x1").unwrap(), Topology::flat(2));
        for bad in ["2x16", "0x4x2", "2x4x", "axbxc", "2x4x2x1", "", "-1x2x2"] {
            let e = Topology::parse_spec(bad).unwrap_err().to_string();
            assert!(e.contains("NODESxCORESxTHREADS"), "{bad}: {e}");
        }
        assert!(matches!(Topology::uniform(65536, 65536, 2), Err(TopologyError::TooMany { .. })));
    }

    #[test]
    fn lscpu_of_this_machine_is_two_cores_one_llc() {
        let text = "# The following is the parsable format, which can be fed to other\n\
                    # CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n";
        assert_eq!(Topology::from_lscpu(text).unwrap(), Topology::flat(2));
    }

    #[test]
    fn lscpu_reads_smt_llcs_and_nodes_by_header() {
        // Two sockets (nodes), each one L3 with two cores of two threads; siblings
        // adjacent; columns in an unusual order.
        let text = "# Socket,CPU,Core,Node,L3\n\
                    0,0,0,0,0\n0,1,0,0,0\n0,2,1,0,0\n0,3,1,0,0\n\
                    1,4,2,1,1\n1,5,2,1,1\n1,6,3,1,1\n1,7,3,1,1\n";
        let t = Topology::from_lscpu(text).unwrap();
        assert_eq!(t.counts(), (2, 2, 4, 8));
        assert_eq!(cores(&t), [0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(t.place(5).node, 1);
        // No Node and no L3 column: one node, the socket is the LLC.
        let t = Topology::from_lscpu("# CPU,Core,Socket\n0,0,0\n1,1,1\n").unwrap();
        assert_eq!(t.counts(), (1, 2, 2, 2));
    }

    #[test]
    fn lscpu_errors_name_the_line() {
        let e = Topology::from_lscpu("# CPU,Core,Socket,Node\n0,0,0,0\n1,x,0,0\n").unwrap_err().to_string();
        assert_eq!(e, "lscpu -p line 3: Core 'x' is not a whole number");
        let e = Topology::from_lscpu("0,0,0,0\n2,1,0,0\n").unwrap_err().to_string();
        assert!(e.contains("CPU 1 is missing"), "{e}");
        let e = Topology::from_lscpu("# CPU,Core,Socket,Node,L3\n0,0,0,0,0\n1,0,0,0,1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("CPUs 0 and 1 share a core but not a LLC"), "{e}");
        assert!(matches!(Topology::from_lscpu("# only comments\n"), Err(TopologyError::NoCpus)));
        let e = Topology::from_lscpu("0\n").unwrap_err().to_string();
        assert_eq!(e, "lscpu -p line 1: no Core value");
    }

    #[test]
    fn cpu_lists_read_ranges() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n").unwrap(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("5,1,1").unwrap(), [1, 5]);
        assert!(parse_cpu_list("3-1").unwrap_err().contains("backwards"));
        assert!(parse_cpu_list("a").unwrap_err().contains("'a'"));
        assert!(parse_cpu_list("0-4000000000").is_err());
    }

    #[test]
    fn sysfs_files_give_siblings_llcs_and_nodes() {
        // 4 CPUs in 2 nodes; a node is one L3 holding one core of two threads,
        // numbered as x86 does (siblings 0 and 2, 1 and 3).
        let files: HashMap<String, String> = [
            ("cpu0/topology/thread_siblings_list", "0,2"),
            ("cpu1/topology/thread_siblings_list", "1,3"),
            ("cpu2/topology/thread_siblings_list", "0,2"),
            ("cpu3/topology/thread_siblings_list", "1,3"),
            ("cpu0/cache/index3/shared_cpu_list", "0,2"),
            ("cpu1/cache/index3/shared_cpu_list", "1,3"),
            ("cpu2/cache/index3/shared_cpu_list", "0,2"),
            ("cpu3/cache/index3/shared_cpu_list", "1,3"),
            ("node/node0/cpulist", "0,2"),
            ("node/node1/cpulist", "1,3"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let t = Topology::from_sysfs_files(&[0, 1, 2, 3], &[0, 1], |f| files.get(f).cloned()).unwrap();
        assert_eq!(t.counts(), (2, 2, 2, 4));
        assert_eq!(cores(&t), [0, 1, 0, 1]);
        assert_eq!((t.place(2).node, t.place(3).node), (0, 1));
        let e = Topology::from_sysfs_files(&[0, 4], &[], |f| files.get(f).cloned()).unwrap_err().to_string();
        assert_eq!(e, "cpu4/topology/thread_siblings_list: missing");
        let e = Topology::from_sysfs_files(&[0, 2], &[], |_| Some("0".into())).unwrap_err().to_string();
        assert!(e.contains("CPU 1 is missing"), "{e}");
        let e = Topology::from_sysfs_files(&[0], &[], |_| Some("zz".into())).unwrap_err().to_string();
        assert_eq!(e, "cpu0/topology/thread_siblings_list: 'zz' is not a CPU number");
    }

    #[test]
    fn this_machines_sysfs_reads_like_its_lscpu() {
        // The real /sys of the machine running the tests: it must parse, and agree with
        // the number of CPUs the kernel reports online.
        let t = Topology::from_sysfs(Path::new("/sys/devices/system/cpu")).unwrap();
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
        assert_eq!(t.cpus() as usize, parse_cpu_list(&online).unwrap().len());
    }
}
