//! `--set NAME=VALUE`: parsing, applying and listing the simulator's tunables.

use std::io::{self, Write};

use anyhow::bail;
use schedlab_sim::{TunableError, TunableValue, Tunables};
use serde::Serialize;

use crate::human;
use crate::table::{Align, Table};

/// One `--set` argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `--set help`: list the tunables instead of running.
    Help,
    /// `--set NAME=VALUE`, already checked against the tunable's type and range.
    Assign { name: String, value: String },
}

/// Parses a `--set` argument for clap: `help`, or `NAME=VALUE` where the name is a
/// tunable and the value suits it (so a typo fails before a long run, not after).
pub fn parse_setting(arg: &str) -> anyhow::Result<Setting> {
    if arg == "help" {
        return Ok(Setting::Help);
    }
    let Some((name, value)) = arg.split_once('=') else {
        bail!("expected NAME=VALUE (e.g. base_slice_ns=3ms), or 'help' to list the tunables; got '{arg}'");
    };
    let (name, value) = (name.trim(), value.trim());
    // Values are checked by type and range only, which do not depend on the CPU count.
    Tunables::defaults(1).set(name, value)?;
    Ok(Setting::Assign { name: name.to_string(), value: value.to_string() })
}

/// Applies the `NAME=VALUE` settings in order (a later one wins) to `tunables`.
pub fn apply(tunables: &mut Tunables, settings: &[Setting]) -> Result<(), TunableError> {
    for s in settings {
        if let Setting::Assign { name, value } = s {
            tunables.set(name, value)?;
        }
    }
    Ok(())
}

/// A tunable's value as `--set` accepts it back, with a readable form for durations.
fn display(v: TunableValue) -> String {
    match v {
        TunableValue::Duration(ns) => format!("{ns} ({})", human::duration(ns)),
        TunableValue::Number(n) => n.to_string(),
        TunableValue::Flag(on) => if on { "1 (on)" } else { "0 (off)" }.to_string(),
        TunableValue::Unlimited => "-1 (no limit)".to_string(),
    }
}

/// One row of the tunables listing, as `--json` prints it.
#[derive(Debug, Serialize)]
struct Entry {
    name: &'static str,
    value: Option<TunableValue>,
    meaning: &'static str,
}

/// Prints every tunable with its value in `t` (the defaults for `cpus` CPUs plus any
/// `--set`) and its meaning, as a table or as one JSON object.
pub fn list(out: &mut impl Write, t: &Tunables, cpus: u32, json: bool) -> io::Result<()> {
    let entries: Vec<Entry> =
        Tunables::NAMES.iter().map(|&(name, meaning)| Entry { name, value: t.get(name), meaning }).collect();
    if json {
        #[derive(Serialize)]
        struct Listing {
            cpus: u32,
            tunables: Vec<Entry>,
        }
        serde_json::to_writer_pretty(&mut *out, &Listing { cpus, tunables: entries })?;
        return writeln!(out);
    }
    writeln!(
        out,
        "Tunables for {cpus} CPU(s) (the fair-class ones scale by 1 + ilog2(min(cpus, 8)) = {}).",
        schedlab_sim::tunable_scale(cpus)
    )?;
    writeln!(out, "Set with --set NAME=VALUE; durations take ns, us, ms or s; flags take 0/1/on/off.")?;
    writeln!(out)?;
    let mut table = Table::new(&[("NAME", Align::Left), ("VALUE", Align::Left), ("MEANING", Align::Left)]);
    for e in &entries {
        let value = e.value.map_or_else(|| "?".to_string(), display);
        table.row(vec![e.name.to_string(), value, e.meaning.to_string()]);
    }
    table.write(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::parse_simulate;

    #[test]
    fn settings_parse_into_tunables() {
        let o = parse_simulate(&[
            "w",
            "--set",
            "base_slice_ns=3ms",
            "--set",
            "hrtick=on",
            "--set",
            " hz = 1000",
            "--set",
            "base_slice_ns=2ms",
        ])
        .unwrap();
        let mut t = Tunables::defaults(2);
        apply(&mut t, &o.set).unwrap();
        assert_eq!(t.base_slice_ns, 2_000_000, "the last --set wins");
        assert!(t.hrtick);
        assert_eq!(t.hz, 1000);
        assert_eq!(t.sched_latency_ns, Tunables::defaults(2).sched_latency_ns);
    }

    #[test]
    fn bad_settings_say_what_is_wrong() {
        let err = |arg: &str| parse_simulate(&["w", "--set", arg]).unwrap_err().to_string();
        let e = err("base_slice_ns");
        assert!(e.contains("expected NAME=VALUE") && e.contains("'help'"), "{e}");
        let e = err("base_slise_ns=3ms");
        assert!(e.contains("unknown tunable 'base_slise_ns'") && e.contains("base_slice_ns"), "{e}");
        let e = err("base_slice_ns=3 weeks");
        assert!(e.contains("unknown time unit"), "{e}");
        let e = err("base_slice_ns=0");
        assert!(e.contains("greater than zero"), "{e}");
        let e = err("hrtick=maybe");
        assert!(e.contains("hrtick"), "{e}");
    }

    #[test]
    fn help_is_a_setting() {
        let o = parse_simulate(&["--set", "help"]).unwrap();
        assert_eq!(o.set, [Setting::Help]);
        assert_eq!(o.workload, None);
    }

    #[test]
    fn the_listing_shows_every_tunable() {
        let t = Tunables::defaults(2);
        let mut text = Vec::new();
        list(&mut text, &t, 2, false).unwrap();
        let text = String::from_utf8(text).unwrap();
        for (name, _) in Tunables::NAMES {
            assert!(text.contains(name), "{name} missing:\n{text}");
        }
        assert!(text.contains("1400000 (1.400 ms)"), "{text}");

        let mut json = Vec::new();
        list(&mut json, &t, 2, true).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["tunables"].as_array().unwrap().len(), Tunables::NAMES.len());
        assert_eq!(v["tunables"][0]["name"], "hz");
        assert_eq!(v["tunables"][0]["value"], 250);
    }
}
