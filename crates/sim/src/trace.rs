//! Chrome/Perfetto trace JSON from the event stream: one track per CPU.
//!
//! [`PerfettoTrace`] is an [`EventSink`] that turns `Switch` events into one complete
//! slice (`"ph":"X"`) per run of a task on a CPU, and `Wakeup` events into instant
//! markers on the wakee's CPU, in the JSON object format that ui.perfetto.dev and
//! `chrome://tracing` open (`{"traceEvents":[...]}`). It writes each slice as soon as
//! it ends, so memory stays proportional to the number of CPUs and task names however
//! long the run is.
//!
//! All tracks belong to one process named `CPUs`; CPU `n` is its thread `n + 1`, named
//! `CPU n`. Ids start at 1 because Perfetto treats pid and tid 0 as the kernel's idle
//! task and handles them specially.

use std::collections::HashMap;
use std::io::{self, Write};

use schedlab_model::{Cpu, Event, EventKind, EventSink, Ns, Pid, PrevState};

/// The trace-format process id that holds the CPU tracks.
const CPUS_PID: u32 = 1;

/// A task running on a CPU since `start`: the slice that the next switch closes.
#[derive(Clone, Copy)]
struct Slice {
    pid: Pid,
    start: Ns,
}

/// Writes a Chrome/Perfetto JSON trace of the events it receives, streaming.
///
/// Slices are named `comm pid`, so that tasks running the same program stay apart; the
/// `comm` is learned from `Exec` events and inherited across `Fork` as the kernel does,
/// and a task never named is `pid N`. Their args hold the
/// task's pid and the state it left the CPU in (`runnable`, `blocked`, `dead`, or
/// `running` for a slice that [`finish`](PerfettoTrace::finish) closed).
///
/// [`EventSink::event`] cannot return errors, so the first write error is kept, writing
/// stops, and `finish` returns it. Give it a buffered writer (`BufWriter`): it writes
/// in many small pieces. Without `finish` the JSON is left unterminated.
pub struct PerfettoTrace<W: Write> {
    out: W,
    /// Whether an element of `traceEvents` was written (the next one needs a comma).
    wrote_any: bool,
    /// Per CPU: the task it runs, `None` when idle. Its length is the number of CPU
    /// tracks whose metadata has been written.
    running: Vec<Option<Slice>>,
    names: HashMap<Pid, String>,
    /// The latest event time seen: where `finish` closes the open slices.
    last_time: Ns,
    error: Option<io::Error>,
}

impl<W: Write> PerfettoTrace<W> {
    /// Starts a trace on `out` with tracks for CPUs `0..cpus` (tracks for higher CPUs
    /// are added when they first appear).
    pub fn new(out: W, cpus: u32) -> io::Result<Self> {
        let mut trace = PerfettoTrace {
            out,
            wrote_any: false,
            running: Vec::new(),
            names: HashMap::new(),
            last_time: 0,
            error: None,
        };
        trace.out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
        trace.begin_element()?;
        write!(trace.out, r#"{{"ph":"M","name":"process_name","pid":{CPUS_PID},"args":{{"name":"CPUs"}}}}"#)?;
        if cpus > 0 {
            trace.track(cpus - 1)?;
        }
        Ok(trace)
    }

    /// Closes the slices still open at the time of the last event, ends the JSON and
    /// returns the writer (flushed), or the first error met while writing.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let end = self.last_time;
        for cpu in 0..self.running.len() {
            if let Some(slice) = self.running[cpu].take() {
                self.slice(cpu as Cpu, slice, end, "running")?;
            }
        }
        self.out.write_all(b"]}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }

    /// Handles one event; the `EventSink` impl keeps its error.
    fn handle(&mut self, event: &Event) -> io::Result<()> {
        self.last_time = self.last_time.max(event.time);
        match &event.kind {
            EventKind::Exec { pid, comm, .. } => {
                self.names.insert(*pid, comm.clone());
            }
            EventKind::Fork { parent, child, .. } => {
                if let Some(name) = self.names.get(parent).cloned() {
                    self.names.entry(*child).or_insert(name);
                }
            }
            &EventKind::Switch { cpu, prev_state, next, .. } => {
                self.track(cpu)?;
                if let Some(slice) = self.running[cpu as usize].take() {
                    self.slice(cpu, slice, event.time, state_name(prev_state))?;
                }
                if next != Pid::IDLE {
                    self.running[cpu as usize] = Some(Slice { pid: next, start: event.time });
                }
            }
            &EventKind::Wakeup { waker, wakee, cpu } => {
                self.track(cpu)?;
                self.begin_element()?;
                self.out.write_all(b"{\"ph\":\"i\",\"s\":\"t\",\"name\":\"wakeup ")?;
                self.write_name(wakee)?;
                write!(
                    self.out,
                    "\",\"pid\":{CPUS_PID},\"tid\":{},\"ts\":{},\"args\":{{\"wakee\":{wakee},\"waker\":{waker}}}}}",
                    cpu + 1,
                    Micros(event.time),
                )?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Makes sure CPU `cpu` and every lower one have a named track.
    fn track(&mut self, cpu: Cpu) -> io::Result<()> {
        while self.running.len() <= cpu as usize {
            let n = self.running.len();
            self.running.push(None);
            self.begin_element()?;
            write!(
                self.out,
                r#"{{"ph":"M","name":"thread_name","pid":{CPUS_PID},"tid":{},"args":{{"name":"CPU {n}"}}}}"#,
                n + 1
            )?;
            self.begin_element()?;
            write!(
                self.out,
                r#"{{"ph":"M","name":"thread_sort_index","pid":{CPUS_PID},"tid":{},"args":{{"sort_index":{n}}}}}"#,
                n + 1
            )?;
        }
        Ok(())
    }

    /// Writes the complete event of `slice` on `cpu`, ended at `end` in `state`.
    fn slice(&mut self, cpu: Cpu, slice: Slice, end: Ns, state: &str) -> io::Result<()> {
        self.begin_element()?;
        self.out.write_all(b"{\"ph\":\"X\",\"name\":\"")?;
        self.write_name(slice.pid)?;
        write!(
            self.out,
            "\",\"pid\":{CPUS_PID},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"pid\":{},\"prev_state\":\"{state}\"}}}}",
            cpu + 1,
            Micros(slice.start),
            Micros(end.saturating_sub(slice.start)),
            slice.pid,
        )
    }

    /// Writes `comm pid` as Perfetto's own scheduling tracks label a task (`pid N`
    /// without a comm), escaped for the inside of a JSON string.
    fn write_name(&mut self, pid: Pid) -> io::Result<()> {
        match self.names.get(&pid) {
            Some(name) => {
                write_escaped(&mut self.out, name)?;
                write!(self.out, " {pid}")
            }
            None => write!(self.out, "pid {pid}"),
        }
    }

    /// Writes the comma that separates array elements, except before the first.
    fn begin_element(&mut self) -> io::Result<()> {
        if self.wrote_any {
            self.out.write_all(b",\n")
        } else {
            self.wrote_any = true;
            self.out.write_all(b"\n")
        }
    }
}

impl<W: Write> EventSink for PerfettoTrace<W> {
    fn event(&mut self, event: &Event) {
        if self.error.is_none() {
            if let Err(e) = self.handle(event) {
                self.error = Some(e);
            }
        }
    }
}

/// How `prev_state` is named in slice args (the names of [`PrevState`]'s JSON form).
fn state_name(state: PrevState) -> &'static str {
    match state {
        PrevState::Runnable => "runnable",
        PrevState::Blocked => "blocked",
        PrevState::Dead => "dead",
    }
}

/// Nanoseconds shown as the trace format's microseconds, exactly: `1234567` → `1234.567`.
struct Micros(Ns);

impl std::fmt::Display for Micros {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1_000, self.0 % 1_000)
    }
}

/// Writes `s` with JSON string escapes (quotes, backslashes, control characters).
fn write_escaped(out: &mut impl Write, s: &str) -> io::Result<()> {
    let mut rest = s;
    while let Some(i) = rest.find(|c: char| c == '"' || c == '\\' || c < ' ') {
        out.write_all(&rest.as_bytes()[..i])?;
        let c = rest.as_bytes()[i];
        match c {
            b'"' => out.write_all(b"\\\"")?,
            b'\\' => out.write_all(b"\\\\")?,
            b'\n' => out.write_all(b"\\n")?,
            b'\t' => out.write_all(b"\\t")?,
            _ => write!(out, "\\u{c:04x}")?,
        }
        rest = &rest[i + 1..];
    }
    out.write_all(rest.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn ev(time: Ns, kind: EventKind) -> Event {
        Event { time, kind }
    }

    fn switch(time: Ns, cpu: Cpu, prev: u32, prev_state: PrevState, next: u32) -> Event {
        ev(time, EventKind::Switch { cpu, prev: Pid(prev), prev_state, next: Pid(next) })
    }

    fn exec(time: Ns, pid: u32, comm: &str) -> Event {
        let (pid, comm) = (Pid(pid), comm.to_string());
        ev(time, EventKind::Exec { pid, tgid: pid, path: format!("/bin/{comm}"), comm })
    }

    /// Runs `events` through a trace of `cpus` CPUs and parses the result.
    fn trace_of(cpus: u32, events: &[Event]) -> Vec<Value> {
        let mut trace = PerfettoTrace::new(Vec::new(), cpus).unwrap();
        for e in events {
            trace.event(e);
        }
        let bytes = trace.finish().unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
        json["traceEvents"].as_array().unwrap().clone()
    }

    fn with_ph<'a>(events: &'a [Value], ph: &str) -> Vec<&'a Value> {
        events.iter().filter(|e| e["ph"] == ph).collect()
    }

    #[test]
    fn empty_trace_is_valid_and_names_the_cpus() {
        let events = trace_of(2, &[]);
        let meta = with_ph(&events, "M");
        assert!(meta.iter().any(|e| e["name"] == "process_name" && e["args"]["name"] == "CPUs"));
        let names: Vec<_> = meta
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| (e["tid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap()))
            .collect();
        assert_eq!(names, [(1, "CPU 0"), (2, "CPU 1")]);
        assert!(with_ph(&events, "X").is_empty());
        assert!(trace_of(0, &[]).iter().all(|e| e["ph"] == "M"));
    }

    #[test]
    fn switches_become_slices_named_after_the_task() {
        let events = trace_of(
            2,
            &[
                exec(0, 7, "worker"),
                ev(500, EventKind::Fork { parent: Pid(7), child: Pid(8), thread: false }),
                switch(1_000, 0, 0, PrevState::Runnable, 7),
                switch(2_500, 1, 0, PrevState::Runnable, 8),
                switch(3_001, 0, 7, PrevState::Blocked, 9),
                ev(3_500, EventKind::Wakeup { waker: Pid(9), wakee: Pid(7), cpu: 1 }),
                switch(4_000, 1, 8, PrevState::Dead, 0),
                switch(5_000, 0, 9, PrevState::Runnable, 7),
                ev(6_250, EventKind::Exit { pid: Pid(7), code: 0, life: None }),
            ],
        );
        let slices: Vec<_> = with_ph(&events, "X")
            .iter()
            .map(|e| {
                (
                    e["tid"].as_u64().unwrap(),
                    e["name"].as_str().unwrap().to_string(),
                    e["ts"].as_f64().unwrap(),
                    e["dur"].as_f64().unwrap(),
                    e["args"]["prev_state"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let s = |tid, name: &str, ts, dur, state: &str| (tid, name.to_string(), ts, dur, state.to_string());
        assert_eq!(
            slices,
            [
                s(1, "worker 7", 1.0, 2.001, "blocked"),
                s(2, "worker 8", 2.5, 1.5, "dead"),
                s(1, "pid 9", 3.001, 1.999, "runnable"),
                s(1, "worker 7", 5.0, 1.25, "running"),
            ]
        );
        let wakeups = with_ph(&events, "i");
        assert_eq!(wakeups.len(), 1);
        assert_eq!(wakeups[0]["tid"], 2);
        assert_eq!(wakeups[0]["name"], "wakeup worker 7");
        assert_eq!(wakeups[0]["args"]["waker"], 9);
    }

    #[test]
    fn timestamps_are_exact_microseconds() {
        assert_eq!(Micros(0).to_string(), "0.000");
        assert_eq!(Micros(1_234_567).to_string(), "1234.567");
        assert_eq!(Micros(42).to_string(), "0.042");
    }

    #[test]
    fn odd_names_and_unseen_cpus_stay_valid_json() {
        let events = trace_of(
            1,
            &[
                exec(0, 3, "a\"b\\c\nd\u{1}é"),
                switch(10, 3, 0, PrevState::Runnable, 3),
                switch(20, 3, 3, PrevState::Runnable, 0),
            ],
        );
        let x = with_ph(&events, "X");
        assert_eq!(x[0]["name"], "a\"b\\c\nd\u{1}é 3");
        assert_eq!(x[0]["tid"], 4);
        let tracks = events.iter().filter(|e| e["name"] == "thread_name").count();
        assert_eq!(tracks, 4);
    }

    #[test]
    fn write_errors_surface_in_finish() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        assert!(PerfettoTrace::new(Full, 1).is_err());
        let mut trace = PerfettoTrace::new(io::Cursor::new([0u8; 400]), 1).unwrap();
        for i in 0..100 {
            trace.event(&switch(i * 10, 0, 0, PrevState::Runnable, 5));
        }
        assert!(trace.finish().is_err());
    }
}
