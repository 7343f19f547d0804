//! Where a result came from: every JSON report a result-producing command writes
//! (`validate`, `bench deps|slices|policies|overhead|suite`, `reproduce`, `tune`,
//! `tune live`) starts with a `provenance` member, so that a file kept in `results/`
//! says which build ran it, on what machine, when, and how it was asked for.

use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// The facts that make a result reproducible, collected when it is written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Provenance {
    /// The git commit the binary was built from, with `-dirty` when tracked files had
    /// uncommitted changes; "unknown" when it was not built in a git checkout.
    pub commit: String,
    /// The running kernel's release (`uname -r`).
    pub kernel: String,
    /// How the binary was built: "debug" or "release".
    pub profile: String,
    /// The CPU's model name (`/proc/cpuinfo`), "unknown" where the platform does not say.
    pub cpu_model: String,
    /// The online CPUs.
    pub cpus: u32,
    /// When the report was written, UTC, RFC 3339 (`2026-11-27T09:14:03Z`).
    pub date: String,
    /// The command line as run, quoted as a shell would need it.
    pub command: String,
}

impl Provenance {
    /// The provenance of a report this process writes now.
    pub(crate) fn of_this_run() -> Provenance {
        let unix_secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Provenance {
            commit: env!("SCHEDLAB_COMMIT").to_string(),
            kernel: schedlab_ext::kernel::release(),
            profile: if cfg!(debug_assertions) { "debug" } else { "release" }.to_string(),
            cpu_model: std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|info| cpu_model(&info))
                .unwrap_or_else(|| "unknown".to_string()),
            cpus: schedlab_live::host::online_cpus().map_or(0, |c| c.cpus().len() as u32),
            date: rfc3339_utc(unix_secs),
            command: command_line(std::env::args_os().map(|a| a.to_string_lossy().into_owned())),
        }
    }
}

/// A report with its provenance as the first member (what [`write_json`] writes).
#[derive(Serialize)]
struct WithProvenance<'a, T> {
    provenance: &'a Provenance,
    #[serde(flatten)]
    report: &'a T,
}

/// Writes `report` to `out` as pretty JSON with `"provenance"` as its first member and
/// the report's own members after it, and ends the line. The report must serialize as
/// a JSON object (a struct or a map); anything else is an error.
pub(crate) fn write_json<T: Serialize>(
    mut out: impl Write,
    provenance: &Provenance,
    report: &T,
) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut out, &WithProvenance { provenance, report })?;
    writeln!(out)
}

/// The CPU's name in the text of `/proc/cpuinfo`: x86's `model name`, else the line
/// other architectures name it by (MIPS's `cpu model`, a board's `Model`, ARM's
/// `Hardware`, POWER's `cpu`).
fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "cpu model", "Model", "Hardware", "cpu"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
        })
    })
}

/// `unix_secs` (seconds since 1970-01-01T00:00:00Z) as an RFC 3339 UTC date and time.
fn rfc3339_utc(unix_secs: u64) -> String {
    let (days, secs) = (unix_secs / 86_400, unix_secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
}

/// The proleptic Gregorian (year, month, day) `days` days after 1970-01-01 (Howard
/// Hinnant's `civil_from_days`: counted in 400-year eras that start on a 1 March, so
/// that the leap day ends a year).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let doe = z % 146_097; // day of the era, 0..=146_096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of the era, 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the year from 1 March, 0..=365
    let mp = (5 * doy + 2) / 153; // month from March, 0..=11
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + yoe + u64::from(month <= 2);
    (year, month, day)
}

/// The words of a command line joined by spaces, each quoted for a POSIX shell where it
/// needs it, so that the line can be pasted to run the command again.
fn command_line(words: impl IntoIterator<Item = String>) -> String {
    words.into_iter().map(|w| shell_word(&w)).collect::<Vec<_>>().join(" ")
}

/// `word` as a shell reads it back: as is when it has only characters no shell treats
/// specially, else in single quotes (a quote inside written `'\''`).
fn shell_word(word: &str) -> String {
    let plain =
        !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_rfc3339_in_utc() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        // 54 years with 13 leap days to 2024-01-01, then 31 + 28 days, then 12:34:56.
        assert_eq!(rfc3339_utc(19_782 * 86_400 + 45_296), "2024-02-29T12:34:56Z");
        assert_eq!(rfc3339_utc(19_783 * 86_400 - 1), "2024-02-29T23:59:59Z");
        assert_eq!(rfc3339_utc(19_783 * 86_400), "2024-03-01T00:00:00Z");
        // 2000 is a leap year (divisible by 400): 10 957 days to 2000-01-01, then 59.
        assert_eq!(rfc3339_utc(11_016 * 86_400), "2000-02-29T00:00:00Z");
        // 56 years with 14 leap days to 2026-01-01, then 330 days to 27 November.
        assert_eq!(rfc3339_utc(1_795_737_600), "2026-11-27T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_737_600 + 9 * 3600 + 14 * 60 + 3), "2026-11-27T09:14:03Z");
        assert_eq!(rfc3339_utc(1_795_737_600 - 1), "2026-11-26T23:59:59Z");
    }

    #[test]
    fn the_command_is_quoted_where_a_shell_needs_it() {
        let line = |words: &[&str]| command_line(words.iter().map(|w| w.to_string()));
        assert_eq!(
            line(&["target/release/schedlab", "bench", "deps", "--ipc=pipe,sem", "--json"]),
            "target/release/schedlab bench deps --ipc=pipe,sem --json"
        );
        assert_eq!(
            line(&["schedlab", "tune", "--workload", "hackbench:groups=2,loops=20", "--set", "jitter_pct=5"]),
            "schedlab tune --workload hackbench:groups=2,loops=20 --set jitter_pct=5"
        );
        assert_eq!(line(&["schedlab", "--chart", "my chart.svg"]), "schedlab --chart 'my chart.svg'");
        assert_eq!(line(&["echo", "it's", ""]), r"echo 'it'\''s' ''");
        assert_eq!(line(&["a$b", "*", "~", "x;y", "é"]), "'a$b' '*' '~' 'x;y' 'é'");
    }

    #[test]
    fn the_cpu_model_is_read_from_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\n\
                   model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nflags\t\t: fpu\n\n\
                   processor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(cpu_model(x86).as_deref(), Some("Intel(R) Xeon(R) CPU @ 2.20GHz"));
        let power = "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n";
        assert_eq!(cpu_model(power).as_deref(), Some("POWER9 (raw), altivec supported"));
        assert_eq!(cpu_model("processor\t: 0\nBogoMIPS\t: 48.00\n"), None);
    }

    /// A provenance with every field set by hand.
    fn sample() -> Provenance {
        Provenance {
            commit: "0123456789abcdef0123456789abcdef01234567-dirty".into(),
            kernel: "6.12.0-1-amd64".into(),
            profile: "debug".into(),
            cpu_model: "Intel(R) Xeon(R) CPU @ 2.20GHz".into(),
            cpus: 2,
            date: "2026-11-27T09:14:03Z".into(),
            command: "schedlab tune --json".into(),
        }
    }

    #[test]
    fn the_provenance_comes_first_and_the_report_after_it() {
        #[derive(Serialize)]
        struct Report {
            workload: &'static str,
            evaluations: u32,
            best: Vec<f64>,
        }
        let report = Report { workload: "hackbench", evaluations: 620, best: vec![1.5, 2.0] };
        let mut out = Vec::new();
        write_json(&mut out, &sample(), &report).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("{\n  \"provenance\": {\n    \"commit\": "), "{text}");
        assert!(text.ends_with("}\n"), "one line ends it: {text:?}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let p = value["provenance"].as_object().unwrap();
        let mut fields: Vec<&str> = p.keys().map(String::as_str).collect();
        fields.sort_unstable();
        let mut expected = ["commit", "kernel", "profile", "cpu_model", "cpus", "date", "command"];
        expected.sort_unstable();
        assert_eq!(fields, expected);
        assert_eq!(value["provenance"], serde_json::to_value(sample()).unwrap());
        assert_eq!(p["cpus"], 2);
        // The report's members follow, in the report's order.
        let order =
            ["\"provenance\"", "\"workload\"", "\"evaluations\"", "\"best\""].map(|k| text.find(k).unwrap());
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert_eq!(value["workload"], "hackbench");
        assert_eq!(value["evaluations"], 620);
        assert_eq!(value["best"], serde_json::json!([1.5, 2.0]));
        assert_eq!(value.as_object().unwrap().len(), 4);
    }

    #[test]
    fn a_map_report_gets_it_too_and_a_list_is_refused() {
        let report = std::collections::BTreeMap::from([("pfs_fig1", 1), ("swap_fig2", 2)]);
        let mut out = Vec::new();
        write_json(&mut out, &sample(), &report).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value["pfs_fig1"], 1);
        assert_eq!(value["provenance"]["kernel"], "6.12.0-1-amd64");
        assert!(write_json(Vec::new(), &sample(), &[1, 2]).is_err());
    }

    #[test]
    fn this_run_has_every_fact() {
        let p = Provenance::of_this_run();
        let hex = p.commit.strip_suffix("-dirty").unwrap_or(&p.commit);
        assert!(
            p.commit == "unknown" || (hex.len() == 40 && hex.chars().all(|c| c.is_ascii_hexdigit())),
            "{}",
            p.commit
        );
        assert!(["debug", "release"].contains(&p.profile.as_str()), "{}", p.profile);
        assert!(p.cpus >= 1 && !p.kernel.is_empty() && !p.cpu_model.is_empty());
        assert!(p.date.len() == 20 && p.date.starts_with("20") && p.date.ends_with('Z'), "{}", p.date);
        assert!(p.command.contains("schedlab"), "the test binary's path: {}", p.command);
    }
}
