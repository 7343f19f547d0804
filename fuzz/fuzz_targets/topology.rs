//! The simulator's topology parsers, as `--topology` reads them: a `NxCxT` spec, the
//! output of `lscpu -p`, a kernel CPU list, and a sysfs copy given as `PATH=TEXT` lines
//! (`cpu0/topology/thread_siblings_list=0-1`, `node/node0/cpulist=0-3`). The first byte
//! picks the parser.
#![no_main]
use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use schedlab_sim::topology::{parse_cpu_list, Topology};

/// Specs for more CPUs than this are not built: memory is the simulator's only limit,
/// and the fuzzer's is 1 GiB.
const MAX_FUZZ_CPUS: u64 = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    match which % 4 {
        0 => {
            let cpus: Option<u64> =
                text.split(['x', 'X']).map(|n| n.trim().parse::<u64>().ok()).try_fold(1u64, |a, n| a.checked_mul(n?));
            if cpus.is_some_and(|n| n <= MAX_FUZZ_CPUS) || cpus.is_none() {
                let _ = Topology::parse_spec(text);
            }
        }
        1 => {
            let _ = Topology::from_lscpu(text);
        }
        2 => {
            let _ = parse_cpu_list(text);
        }
        _ => {
            let files: HashMap<&str, &str> = text.lines().filter_map(|l| l.split_once('=')).collect();
            let numbered = |prefix: &str| -> Vec<u32> {
                let mut n: Vec<u32> = files
                    .keys()
                    .filter_map(|k| k.strip_prefix(prefix)?.split('/').next()?.parse().ok())
                    .collect();
                n.sort_unstable();
                n.dedup();
                n
            };
            let (cpus, nodes) = (numbered("cpu"), numbered("node/node"));
            let _ = Topology::from_sysfs_files(&cpus, &nodes, |f| files.get(f).map(|t| t.to_string()));
        }
    }
});
