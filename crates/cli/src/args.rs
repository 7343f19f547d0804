//! Value parsers the subcommands share.

use anyhow::bail;
use schedlab_model::Ns;

/// A positive duration with a unit (`30s`, `250ms`, `20m`; none means ns), for clap.
/// Durations that may be 0 take [`schedlab_sim::parse_duration`] itself.
pub(crate) fn duration(s: &str) -> anyhow::Result<Ns> {
    match schedlab_sim::parse_duration(s)? {
        0 => bail!("the duration must be positive"),
        d => Ok(d),
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
}
