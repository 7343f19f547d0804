//! `--csv FILE`: one row per task of a simulation report, for spreadsheets and pandas.

use std::io::{self, Write};

use schedlab_sim::TaskReport;

/// The header row: [`TaskReport`]'s fields, with the wake-up latency flattened.
const HEADER: &str = "name,pid,ppid,policy,nice,rt_priority,runtime_ns,wait_ns,sleep_ns,turnaround_ns,\
exited,nvcsw,nivcsw,migrations,wakeups,wakeup_latency_p50_ns,wakeup_latency_p99_ns,wakeup_latency_max_ns";

/// Writes the header and one row per task (RFC 4180 quoting, times in nanoseconds).
pub fn write_tasks(out: &mut impl Write, tasks: &[TaskReport]) -> io::Result<()> {
    writeln!(out, "{HEADER}")?;
    for t in tasks {
        let l = t.wakeup_latency_ns;
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&t.name),
            t.pid,
            t.ppid,
            field(t.policy),
            t.nice,
            t.rt_priority,
            t.runtime_ns,
            t.wait_ns,
            t.sleep_ns,
            t.turnaround_ns,
            t.exited,
            t.nvcsw,
            t.nivcsw,
            t.migrations,
            t.wakeups,
            l.p50,
            l.p99,
            l.max,
        )?;
    }
    Ok(())
}

/// A text field, quoted when it holds a comma, a quote or a line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use schedlab_sim::Percentiles;

    /// A task report with the given name and runtime and small made-up numbers.
    pub(crate) fn task(name: &str, pid: u32, runtime_ns: u64) -> TaskReport {
        TaskReport {
            name: name.to_string(),
            pid,
            ppid: 0,
            policy: "SCHED_OTHER",
            nice: 0,
            rt_priority: 0,
            runtime_ns,
            wait_ns: 2_000,
            sleep_ns: 3_000,
            turnaround_ns: runtime_ns + 5_000,
            exited: true,
            nvcsw: 4,
            nivcsw: 1,
            migrations: 2,
            wakeups: 4,
            wakeup_latency_ns: Percentiles { p50: 1_000, p99: 9_000, max: 12_000 },
        }
    }

    #[test]
    fn rows_follow_the_header() {
        let mut out = Vec::new();
        write_tasks(&mut out, &[task("say \"hi\", world", 3, 100)]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].split(',').count(), 18);
        assert_eq!(
            lines[1],
            "\"say \"\"hi\"\", world\",3,0,SCHED_OTHER,0,0,100,2000,3000,5100,true,4,1,2,4,1000,9000,12000"
        );
    }
}
