//! Value parsers the subcommands share.

use anyhow::bail;
use schedlab_model::Ns;
use schedlab_sim::{Topology, TopologyError};

/// A positive duration with a unit (`30s`, `250ms`, `20m`; none means ns), for clap.
/// Durations that may be 0 take [`schedlab_sim::parse_duration`] itself.
pub(crate) fn duration(s: &str) -> anyhow::Result<Ns> {
    match schedlab_sim::parse_duration(s)? {
        0 => bail!("the duration must be positive"),
        d => Ok(d),
    }
}

/// `--topology`: a `NxCxT` spec, a `lscpu -p` output file or a sysfs directory.
pub(crate) fn topology(s: &str) -> Result<Topology, TopologyError> {
    Topology::load(s)
}

/// The simulated machine of `--cpus` and `--topology` (at most one is given): the
/// topology, else a flat machine of `cpus`, else of `default_cpus()`.
pub(crate) fn machine(cpus: Option<u32>, topology: Option<&Topology>, default_cpus: fn() -> u32) -> Topology {
    match (topology, cpus) {
        (Some(t), _) => t.clone(),
        (None, Some(n)) => Topology::flat(n),
        (None, None) => Topology::flat(default_cpus()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_must_be_positive_and_have_a_known_unit() {
        assert_eq!(duration("20m").unwrap(), 1_200_000_000_000);
        assert_eq!(duration("250ms").unwrap(), 250_000_000);
        assert!(duration("0s").unwrap_err().to_string().contains("positive"));
        assert!(duration("3 parsecs").is_err());
    }

    #[test]
    fn a_topology_is_a_spec_or_a_file() {
        assert_eq!(topology("2x16x2").unwrap().cpus(), 64);
        let e = topology("2x16").unwrap_err().to_string();
        assert!(e.contains("NODESxCORESxTHREADS"), "{e}");
        let e = topology("/no/such/lscpu.txt").unwrap_err().to_string();
        assert!(e.contains("/no/such/lscpu.txt"), "{e}");
        assert_eq!(machine(Some(3), None, || 2).cpus(), 3);
        assert_eq!(machine(None, None, || 2).cpus(), 2);
    }
}
