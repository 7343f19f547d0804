//! Which class a process belongs to, and why: the configuration's rules first (the
//! first that matches wins), then the learned model for processes no rule matches.

use serde::Serialize;

use crate::config::{Config, Match};
use crate::process::ProcInfo;

/// Why a process has its class (or none): what `schedlab explain` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum ClassReason {
    /// Rule number `index` (1-based, in file order) matched.
    Rule { index: usize, rule: String },
    /// The learned model's prediction from the process's behavior.
    Model { label: String, confidence: f64 },
    /// Its program is known to run CPU-bound from its earlier runs (`runs`: the lives
    /// of evidence, decayed), with `confidence`.
    Learned { program: String, confidence: f64, runs: f64 },
    /// It runs CPU-bound now: its main thread was runnable for `runnable` (a share) of
    /// the last `over_ms`.
    Busy { runnable: f64, over_ms: u64 },
    /// A forked child that has not exec'd: its parent's class.
    Inherited { parent: u32 },
    /// No rule matched; the model will classify it once it has been watched long enough.
    Watching,
    /// No rule matched and the model is off, or its label names no class.
    Unclassified { why: String },
    /// A kernel thread no rule names: left alone.
    KernelThread,
}

impl ClassReason {
    /// Whether the class is a guess (the habits', the busyness', the model's) and so
    /// only ever lowers: a process already at or below it, or real time, keeps what it
    /// has.
    pub fn only_lowers(&self) -> bool {
        matches!(self, ClassReason::Learned { .. } | ClassReason::Busy { .. } | ClassReason::Model { .. })
    }
}

/// The first rule matching the process: its class and the reason.
pub fn by_rules(config: &Config, info: &ProcInfo, parent_comm: &str) -> Option<(String, ClassReason)> {
    config
        .rules
        .iter()
        .enumerate()
        .find(|(_, r)| matches(&r.matches, info, parent_comm))
        .map(|(i, r)| (r.class.clone(), ClassReason::Rule { index: i + 1, rule: describe(&r.matches) }))
}

/// Whether every key the rule gives matches.
pub fn matches(m: &Match, info: &ProcInfo, parent_comm: &str) -> bool {
    let glob_ok = |pattern: &Option<String>, text: &str| pattern.as_deref().is_none_or(|p| glob(p, text));
    glob_ok(&m.comm, &info.comm)
        && glob_ok(&m.exe, &info.exe)
        && glob_ok(&m.cmdline, &info.cmdline.join(" "))
        && glob_ok(&m.cgroup, &info.cgroup)
        && glob_ok(&m.parent, parent_comm)
        && m.uid.is_none_or(|u| u == info.uid)
        && m.kernel.unwrap_or(false) == info.kthread
}

/// The rule's keys as written: `comm=my-batch-job uid=1000`.
pub fn describe(m: &Match) -> String {
    let mut parts = Vec::new();
    for (key, value) in [
        ("comm", &m.comm),
        ("exe", &m.exe),
        ("cmdline", &m.cmdline),
        ("cgroup", &m.cgroup),
        ("parent", &m.parent),
    ] {
        if let Some(v) = value {
            // A long list of alternatives (the built-in guard) is shortened for tables.
            let alternatives: Vec<&str> = v.split('|').collect();
            match alternatives.len() {
                n if n > 4 => {
                    parts.push(format!("{key}={}|… ({n} alternatives)", alternatives[..3].join("|")))
                }
                _ => parts.push(format!("{key}={v}")),
            }
        }
    }
    if let Some(u) = m.uid {
        parts.push(format!("uid={u}"));
    }
    if m.kernel == Some(true) {
        parts.push("kernel".into());
    }
    parts.join(" ")
}

/// Shell-style matching of the whole text: `*` any run of characters, `?` one; `a|b`
/// matches what either alternative matches.
pub fn glob(pattern: &str, text: &str) -> bool {
    pattern.split('|').any(|alternative| glob_one(alternative, text))
}

/// [`glob`] without alternatives.
fn glob_one(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // Iterative matching with one backtrack point: the last `*` and where it resumed.
    let (mut i, mut j, mut star, mut resume) = (0, 0, None, 0);
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            resume = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            resume += 1;
            j = resume;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_the_whole_text() {
        assert!(glob("my-batch-job", "my-batch-job"));
        assert!(!glob("my-batch", "my-batch-job"));
        assert!(glob("kworker*", "kworker/0:1H"));
        assert!(glob("*.py", "/usr/bin/x.py"));
        assert!(glob("a?c*", "abcdef"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*", ""));
        assert!(glob("*a*b*", "xxaxxbxx"));
        assert!(!glob("*a*b", "xxaxxbxxc"));
        assert!(glob("bash|zsh", "zsh") && glob("tmux*|bash", "tmux: server"));
        assert!(!glob("bash|zsh", "bash|zsh"), "alternatives, not the literal text");
        let m = Match { comm: Some("a|b|c|d|e".into()), ..Match::default() };
        assert_eq!(describe(&m), "comm=a|b|c|… (5 alternatives)");
    }

    #[test]
    fn the_first_matching_rule_wins_and_every_key_must_match() {
        let config = Config::parse(
            "[[rule]]\nmatch = { comm = \"gzip\", uid = 1000 }\nclass = \"a\"\n\
             [[rule]]\nmatch = { exe = \"/usr/bin/*\" }\nclass = \"b\"\n\
             [[rule]]\nmatch = { parent = \"make\" }\nclass = \"a\"\n\
             [class.a]\n[class.b]\n",
            "t.toml",
        )
        .unwrap();
        let info = |comm: &str, uid| ProcInfo {
            comm: comm.into(),
            exe: format!("/usr/bin/{comm}"),
            uid,
            ..ProcInfo::default()
        };
        let (class, why) = by_rules(&config, &info("gzip", 1000), "bash").unwrap();
        assert_eq!(
            (class.as_str(), why),
            ("a", ClassReason::Rule { index: 1, rule: "comm=gzip uid=1000".into() })
        );
        assert_eq!(by_rules(&config, &info("gzip", 0), "bash").unwrap().0, "b", "uid differs: rule 2");
        let mut local = info("cc", 0);
        local.exe = "/opt/cc".into();
        assert_eq!(
            by_rules(&config, &local, "make").unwrap().1,
            ClassReason::Rule { index: 3, rule: "parent=make".into() }
        );
        assert!(by_rules(&config, &local, "sh").is_none());
    }

    #[test]
    fn only_rules_with_kernel_true_name_kernel_threads() {
        let config = Config::parse(
            "[[rule]]\nmatch = { comm = \"*\" }\nclass = \"a\"\n\
             [[rule]]\nmatch = { comm = \"kworker*\", kernel = true }\nclass = \"k\"\n[class.a]\n[class.k]\n",
            "t.toml",
        )
        .unwrap();
        let kworker = ProcInfo { comm: "kworker/0:1".into(), kthread: true, ..ProcInfo::default() };
        assert_eq!(by_rules(&config, &kworker, "kthreadd").unwrap().0, "k", "the catch-all does not name it");
        let user = ProcInfo { comm: "kworker-lookalike".into(), ..ProcInfo::default() };
        assert_eq!(by_rules(&config, &user, "sh").unwrap().0, "a");
    }
}
