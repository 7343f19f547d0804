//! Built-in workload specs: `NAME` or `NAME:key=value,key=value`, e.g.
//! `hackbench:groups=5,fds=40,ipc=pipe`. Keys not given take their defaults; unknown
//! keys, repeated keys and unusable values are errors that list what is accepted.

use std::ops::RangeInclusive;

use schedlab_model::Ns;

use super::{hackbench, paper002, WorkloadError};
use crate::{parse_duration, Workload};

/// A built-in workload generator: its name, what it is, and its keys.
pub struct Builtin {
    /// The name before the `:` of a spec.
    pub name: &'static str,
    /// One line saying what the workload is, for help output.
    pub about: &'static str,
    /// Each accepted key with its meaning and default, for help output and errors.
    pub keys: &'static [(&'static str, &'static str)],
    /// Builds the workload from the parsed keys.
    pub(crate) build: fn(&Args) -> Result<Workload, WorkloadError>,
}

/// Every built-in workload, in the order help lists them.
pub const BUILTINS: &[Builtin] = &[hackbench::BUILTIN, paper002::PI, paper002::RW, paper002::MIXED];

/// Builds the built-in workload a `NAME[:key=value,...]` spec names.
pub fn builtin(spec: &str) -> Result<Workload, WorkloadError> {
    let (name, params) = spec.split_once(':').unwrap_or((spec, ""));
    let name = name.trim();
    let Some(b) = BUILTINS.iter().find(|b| b.name == name) else {
        let known: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        return Err(WorkloadError::UnknownWorkload { name: name.to_string(), known: known.join(", ") });
    };
    (b.build)(&Args::parse(b, spec, params)?)
}

/// The `key=value` pairs of a spec, checked against the builtin's keys, with typed
/// accessors that fall back to defaults and explain bad values.
pub(crate) struct Args<'a> {
    builtin: &'static Builtin,
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Args<'a> {
    fn parse(builtin: &'static Builtin, spec: &str, params: &'a str) -> Result<Self, WorkloadError> {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for item in params.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let bad_spec = |problem: String| WorkloadError::BadSpec { spec: spec.to_string(), problem };
            let (key, value) =
                item.split_once('=').ok_or_else(|| bad_spec(format!("'{item}' is not key=value")))?;
            let (key, value) = (key.trim(), value.trim());
            if !builtin.keys.iter().any(|(k, _)| *k == key) {
                let accepted: Vec<String> =
                    builtin.keys.iter().map(|(k, help)| format!("{k} ({help})")).collect();
                return Err(WorkloadError::UnknownKey {
                    workload: builtin.name.to_string(),
                    key: key.to_string(),
                    accepted: accepted.join("; "),
                });
            }
            if pairs.iter().any(|(k, _)| *k == key) {
                return Err(bad_spec(format!("key '{key}' is given twice")));
            }
            pairs.push((key, value));
        }
        Ok(Args { builtin, pairs })
    }

    /// The value of `key`, if the spec gives it.
    pub(crate) fn get(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// An integer in `range`, or `default` when absent.
    pub(crate) fn int(
        &self,
        key: &str,
        default: i64,
        range: RangeInclusive<i64>,
    ) -> Result<i64, WorkloadError> {
        let Some(v) = self.get(key) else {
            return Ok(default);
        };
        match v.parse::<i64>() {
            Ok(n) if range.contains(&n) => Ok(n),
            _ => {
                Err(self.bad(key, format!("expected a whole number in {}..={}", range.start(), range.end())))
            }
        }
    }

    /// A duration such as `100ms` (see [`parse_duration`]), or `default` when absent.
    pub(crate) fn duration(&self, key: &str, default: Ns) -> Result<Ns, WorkloadError> {
        let Some(v) = self.get(key) else {
            return Ok(default);
        };
        parse_duration(v)
            .map_err(|e| self.bad(key, format!("expected a duration such as 100ms, 1.5us or 2s ({e})")))
    }

    /// One of the named `choices`, or `default` when absent.
    pub(crate) fn choice<T: Copy>(
        &self,
        key: &str,
        default: T,
        choices: &[(&str, T)],
    ) -> Result<T, WorkloadError> {
        let Some(v) = self.get(key) else {
            return Ok(default);
        };
        match choices.iter().find(|(name, _)| *name == v) {
            Some((_, t)) => Ok(*t),
            None => {
                let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
                Err(self.bad(key, format!("expected one of {}", names.join(", "))))
            }
        }
    }

    /// The error for `key`'s value; `problem` says what is wrong and what would do.
    pub(crate) fn bad(&self, key: &str, problem: impl Into<String>) -> WorkloadError {
        WorkloadError::BadValue {
            workload: self.builtin.name.to_string(),
            key: key.to_string(),
            value: self.get(key).unwrap_or_default().to_string(),
            problem: problem.into(),
        }
    }
}

/// Writes a duration with the largest unit that keeps it exact (`70ms`, `1500us`), in the
/// syntax [`parse_duration`] reads back.
pub(crate) fn fmt_duration(ns: Ns) -> String {
    for (unit, per) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns != 0 && ns.is_multiple_of(per) {
            return format!("{}{unit}", ns / per);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_workloads_list_the_builtins() {
        let e = builtin("hackbenc:groups=1").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown workload 'hackbenc': use one of hackbench, pi, rw, mixed, or the path of an rt-app .json file"
        );
    }

    #[test]
    fn malformed_specs_are_errors() {
        let e = builtin("hackbench:groups").unwrap_err().to_string();
        assert_eq!(e, "workload spec 'hackbench:groups': 'groups' is not key=value");
        let e = builtin("hackbench:groups=1,groups=2").unwrap_err().to_string();
        assert_eq!(e, "workload spec 'hackbench:groups=1,groups=2': key 'groups' is given twice");
        let e = builtin("hackbench:group=1").unwrap_err().to_string();
        assert!(e.starts_with("hackbench: unknown key 'group'; accepted keys: groups ("), "{e}");
        assert!(e.contains("mode ("), "{e}");
    }

    #[test]
    fn spaces_and_empty_items_are_tolerated() {
        let a = builtin(" hackbench : groups = 2 , , fds=3 ,").unwrap();
        assert_eq!(a.tasks.len(), 12);
        assert!(builtin("hackbench:").is_ok());
    }

    #[test]
    fn durations_print_in_the_largest_exact_unit() {
        assert_eq!(fmt_duration(70_000_000), "70ms");
        assert_eq!(fmt_duration(1_500_000), "1500us");
        assert_eq!(fmt_duration(2_000_000_000), "2s");
        assert_eq!(fmt_duration(1_001), "1001ns");
        assert_eq!(fmt_duration(0), "0ns");
        for ns in [70_000_000, 1_500_000, 1_001, 0] {
            assert_eq!(parse_duration(&fmt_duration(ns)).unwrap(), ns);
        }
    }
}
