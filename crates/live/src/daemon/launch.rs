//! A daemon process's options as a value: what `schedlab run` is given on its command
//! line, and what a benchmark gives the daemon it starts.
//!
//! The benchmarks measure the daemon as users run it, in a process of its own (its
//! threads, its real-time elevation, its exit and restore), so a process boundary stays
//! between them; what crosses it is this type, serialized, not a command line whose
//! spelling the benchmarks would have to know.

use std::path::PathBuf;

use super::Enforcer;

/// How to run one daemon.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Launch {
    /// The configuration file (`None`: the built-in configuration).
    pub config: Option<PathBuf>,
    /// The store: the journal, and what the daemon learns.
    pub store: PathBuf,
    /// The control socket.
    pub socket: PathBuf,
    /// What carries the decisions out.
    pub enforcer: Enforcer,
}

impl Launch {
    /// Its serialized form, for the process that runs it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a launch serializes")
    }

    /// Reads [`Launch::to_json`]'s form back.
    pub fn from_json(text: &str) -> Result<Launch, serde_json::Error> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_round_trips_and_names_its_enforcer_as_the_command_line_does() {
        let launch = Launch {
            config: Some("/tmp/d/daemon.toml".into()),
            store: "/tmp/d/schedlab.db".into(),
            socket: "/tmp/d/schedlab.sock".into(),
            enforcer: Enforcer::SchedExt,
        };
        let text = launch.to_json();
        assert!(text.contains(r#""enforcer":"sched-ext""#), "{text}");
        assert_eq!(Launch::from_json(&text).unwrap(), launch);
        assert!(Launch::from_json(r#"{"store":"s","socket":"t","enforcer":"fast"}"#).is_err());
    }
}
