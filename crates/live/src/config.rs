//! The daemon's configuration: rules that give processes a class, and per class a CPU
//! plan, a nice value and a policy. TOML; every error names the file, the line and
//! column, and what is wrong, and nothing is applied from a bad file.

use crate::process::ProcFields;
use crate::settings::{CpuListError, CpuListProblem};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

/// The built-in configuration, printed by `schedlab config --default`.
pub const DEFAULT: &str = r#"# schedlab's built-in configuration (`schedlab config --default`).
#
# It is made to do no harm: `schedlab bench suite` judges it against bare Linux on real
# workloads. Nothing is bound to CPUs, PFS slices and co-location are off (neither
# showed a gain on this kind of machine), and the system-call model is off: its
# profiling windows cost other programs' wake-up latency (cyclictest's p99 beside CPU
# hogs +10 to +16 % in the suite, none with it off). What pays is on: learning which
# programs run CPU-bound from what the scheduler counts (at no cost but each exit's
# record) and lowering them, as a person's `renice` of a build would, so that a program
# a person uses beside a build keeps its frames (60 Hz beside 8 compressors: 40-50 %
# missed bare, none with learning). Programs a person looks at are never lowered: those
# the rule below names, and any process with a display library mapped.
#
# Rules give a process a class; the first rule that matches wins. A rule's `match`
# may test comm, exe, cmdline, cgroup (globs with * and ?, alternatives with |), uid and
# parent (the parent's comm, a glob). Processes no rule matches get their class from
# the learned model (INTERACTIVE or BACKGROUND, mapped to the classes below by name,
# lowercased) when it is at least `model_confidence` sure. Kernel threads are left
# alone: only a rule with `kernel = true` in its match names them (and such a rule
# matches nothing else), e.g.
#   [[rule]]
#   match = { comm = "kworker*", kernel = true }
#   class = "housekeeping"
# pid 1 and schedlab itself are never touched.
#
# A class says where and how its processes run:
#   cpus     = "0-1,3"  CPU list as `taskset -c` takes it (default: all CPUs)
#   plan     = "none" (not bound: the kernel places them; the default when neither
#              cpus nor plan is given), "fair-share" (each process bound to one CPU,
#              every CPU getting the same number of the class's processes: the
#              thesis's Table 4-7; the default when cpus is given), "weighted" (bound
#              to one CPU each, split by `shares`) or "isolate" (the class may use all
#              of `cpus`; other classes are kept off them)
#   shares   = [3, 7]   for plan = "weighted": one share per CPU of `cpus`
#              (30 % of the class's processes on the first, 70 % on the second)
#   cpuset   = false    confine with a cpuset cgroup instead of sched_setaffinity
#   nice     = 0        -20..19
#   policy   = "other"  other, batch, idle, fifo or rr (fifo/rr need rt_priority and
#              are bounded by rt_max_ms of CPU per second)
#   rt_priority = 1..99, rt_max_ms = 1..950
#   slice_ms = 1.5      the EEVDF slice of a fair policy (`sched_attr.sched_runtime`),
#              0.1..100 ms (default: the kernel's base slice, 0.75 ms times 1 + log2
#              of the CPUs up to 8; `se.slice` in /proc/PID/sched shows it): a task
#              with a shorter slice than the one running preempts it at its wake-up
#              (PREEMPT_SHORT), where an equal one waits out the running slice
#
# [daemon] sets what the daemon does besides the classes (defaults shown):
#   learn = true          learn each program's habits from its processes' lives (how
#                         much of each life it was runnable, as the scheduler counts
#                         it, at no cost but the exit), and give a program known to run
#                         CPU-bound the class `background` at its exec, before it has
#                         taken a slice from anyone; a process that runs CPU-bound now
#                         (runnable 90 % of its life when taken in, or of 5 s later)
#                         gets it too, and loses it when it stops. Only
#                         processes no rule matches, and never one with a display
#                         library mapped (a game, a browser, a viewer) or its program.
#                         A configuration without the class learns but lowers nothing
#   learn_confidence = 0.8  how sure (0.5..1) that a program runs CPU-bound before it
#                         is classed so (four CPU-bound runs in a row reach 0.8)
#   model = false         classify processes no rule matches with the learned model,
#                         from what they did in a profiling window
#   model_confidence      the least probability (0..1) of the model's prediction that
#                         is acted on; below it the process is left alone. Default: the
#                         model's own threshold, the confidence above which its
#                         predictions on programs it never saw were right 95 % of the
#                         time (0.85 for the shipped model)
#   model_after_ms = 2000 how long a process is profiled before the model decides
#                         (1..3600000)
#   profile_duty_pct = 5  the system-call hook (which slows every system call of the
#                         machine) is attached at most this share of the time (0..100)
#   min_age_ms = 500      a process is changed only once it has lived this long
#                         (short-lived ones would not repay the change; 0..86400000),
#                         unless its program is known to run CPU-bound
#   replan_ms = 1000      how often classes are applied and CPU plans recomputed
#                         (1..3600000)
#   colocate = false      keep processes joined by strong dependencies on one CPU
#   boost = true          provider boosting (SWAP): a blocked process's most confident
#                         runnable provider inherits its priority
#   boost_max_ms = 100    a boost never lasts longer than this (1..10000)
#   boost_realtime = false  a provider inherits a real-time requester's policy only
#                         if its own RLIMIT_RTPRIO allows that priority (else nice
#                         -20, the strongest fair rank); true: whatever its limit.
#                         Never above priority 49, below threaded interrupts (50)
#   slices = false        burst-aware slices (PFS): a predicted burst that ends
#                         within the default slice + slice_tm_ms gets that slice
#   slice_tm_ms = 20      T_m (1..100); slice_x and slice_y (percent, 0..100, default
#                         10) adapt predictions as the paper's rules 3-5
#   ext_slice_ms = 5      the slice of schedlab's sched_ext scheduler (1..1000), where
#                         it enforces (`run --enforcer`); PFS's T_m counts past it
#   ext_timeshare = false the scheduler runs a class round robin (the time sharing
#                         PFS was built on) instead of by vtime (weighted fair share)

# Programs a person looks at: terminals, multiplexers, shells, editors, display and
# audio servers. They are interactive by rule, never by the model's guess, and the
# interactive class changes nothing.
[[rule]]
match = { comm = "*term*|konsole|alacritty|kitty|foot|wezterm*|tilix|terminator|tmux*|screen|sshd|bash|zsh|fish|sh|dash|ksh|tcsh|vim|nvim|vi|emacs*|nano|code|gedit|kate|Xorg|Xwayland|gnome-shell|plasmashell|kwin*|mutter|sway|weston|Hyprland|pipewire*|wireplumber|pulseaudio|jackd" }
class = "interactive"

[class.interactive]

# What a program learned to run CPU-bound gets: the weight a person's `renice 19`
# leaves it (nice 5 left 2-3 % of a 60 Hz thread's frames missed beside a build where
# 19 leaves none), and no wake-up preemption of others (batch).
[class.background]
nice = 19
policy = "batch"
"#;

/// What a rule matches on; every given key must match.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Match {
    pub comm: Option<String>,
    pub exe: Option<String>,
    pub cmdline: Option<String>,
    pub cgroup: Option<String>,
    pub uid: Option<u32>,
    pub parent: Option<String>,
    /// The rule names kernel threads (and only them); without it a rule never matches one.
    pub kernel: Option<bool>,
}

/// A rule: processes it matches get `class`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    #[serde(rename = "match")]
    matches: Match,
    class: Spanned<String>,
}

/// A class as written in the file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClass {
    cpus: Option<Spanned<String>>,
    plan: Option<Spanned<String>>,
    shares: Option<Spanned<Vec<u32>>>,
    cpuset: Option<bool>,
    nice: Option<Spanned<i64>>,
    policy: Option<Spanned<String>>,
    rt_priority: Option<Spanned<i64>>,
    rt_max_ms: Option<Spanned<i64>>,
    slice_ms: Option<Spanned<f64>>,
    manage: Option<bool>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default, rename = "rule")]
    rules: Vec<RawRule>,
    #[serde(default, rename = "class")]
    classes: BTreeMap<String, RawClass>,
    #[serde(default)]
    daemon: Daemon,
}

/// What the daemon does besides applying classes: the `[daemon]` table.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Daemon {
    /// Learn each program's habits from its processes' lives, and class a program known
    /// to run CPU-bound `background` at its exec (behavior::habits), and a process that
    /// runs CPU-bound now when taken in or at a planning (daemon::core::learning).
    pub learn: bool,
    /// How sure the habits must be that a program runs CPU-bound (0.5..1).
    pub learn_confidence: f64,
    /// Classify processes no rule matches with the learned model.
    pub model: bool,
    /// The least probability of the model's prediction that is acted on (0..1);
    /// `None`: the model's own calibrated threshold.
    pub model_confidence: Option<f64>,
    /// How long a process is profiled before the model classifies it, in ms.
    pub model_after_ms: u64,
    /// The largest share of the time, in percent, that the system-call hook (which
    /// slows every system call on the machine) may be attached for profiling.
    pub profile_duty_pct: u32,
    /// A process is changed only once it has lived this long, in ms.
    pub min_age_ms: u64,
    /// How often the CPU plans are recomputed, in ms.
    pub replan_ms: u64,
    /// Keep processes joined by strong dependency edges on one CPU.
    pub colocate: bool,
    /// Provider boosting (paper 004).
    pub boost: bool,
    /// The longest a boost lasts, in ms.
    pub boost_max_ms: u64,
    /// A provider may inherit a real-time policy its own `RLIMIT_RTPRIO` forbids.
    pub boost_realtime: bool,
    /// Burst-aware slices (paper 001).
    pub slices: bool,
    /// PFS's T_m, in ms.
    pub slice_tm_ms: u64,
    /// PFS's x, in percent.
    pub slice_x: u32,
    /// PFS's y, in percent.
    pub slice_y: u32,
    /// The sched_ext scheduler's slice, in ms.
    pub ext_slice_ms: u64,
    /// The sched_ext scheduler runs each class round robin rather than by vtime.
    pub ext_timeshare: bool,
}

impl Daemon {
    /// Each number of the section with the range it must be in: a duration past its
    /// bound is a mistake (a boost of an hour), and the daemon's arithmetic in ns stays
    /// far from overflow. A T_m past the kernel's longest slice (100 ms) would change
    /// nothing more.
    fn bounded(&self) -> [(&'static str, u64, (u64, u64)); 9] {
        const HOUR_MS: u64 = 3_600_000;
        [
            ("model_after_ms", self.model_after_ms, (1, HOUR_MS)),
            ("profile_duty_pct", u64::from(self.profile_duty_pct), (0, 100)),
            ("min_age_ms", self.min_age_ms, (0, 24 * HOUR_MS)),
            ("replan_ms", self.replan_ms, (1, HOUR_MS)),
            ("boost_max_ms", self.boost_max_ms, (1, 10_000)),
            ("slice_tm_ms", self.slice_tm_ms, (1, 100)),
            ("slice_x", u64::from(self.slice_x), (0, 100)),
            ("slice_y", u64::from(self.slice_y), (0, 100)),
            ("ext_slice_ms", self.ext_slice_ms, (1, 1000)),
        ]
    }
}

impl Default for Daemon {
    fn default() -> Self {
        Daemon {
            learn: true,
            learn_confidence: schedlab_behavior::habits::MIN_CONFIDENCE,
            // Off until it shows no loss in the suite (see the built-in configuration).
            model: false,
            model_confidence: None,
            model_after_ms: 2000,
            profile_duty_pct: 5,
            min_age_ms: 500,
            replan_ms: 1000,
            colocate: false,
            boost: true,
            boost_max_ms: 100,
            boost_realtime: false,
            slices: false,
            slice_tm_ms: 20,
            slice_x: 10,
            slice_y: 10,
            ext_slice_ms: 5,
            ext_timeshare: false,
        }
    }
}

/// How a class is spread over its CPUs (paper 000's distribution).
pub use schedlab_behavior::distribution::Plan;

/// A scheduling policy a class may ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassPolicy {
    Other,
    Batch,
    Idle,
    Fifo { priority: u8, max_ms_per_s: u32 },
    Rr { priority: u8, max_ms_per_s: u32 },
}

/// A class, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    pub name: String,
    /// The CPUs, `None` for all.
    pub cpus: Option<Vec<u32>>,
    /// How its processes are spread over `cpus`; `None`: not bound at all.
    pub plan: Option<Plan>,
    pub cpuset: bool,
    pub nice: Option<i8>,
    pub policy: Option<ClassPolicy>,
    /// The EEVDF slice of a fair policy (`sched_attr.sched_runtime`, ns); `None`: the
    /// kernel's.
    pub slice_ns: Option<u64>,
    /// False for a class whose processes are left alone.
    pub manage: bool,
}

/// A rule, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub matches: Match,
    pub class: String,
}

/// A checked configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub rules: Vec<Rule>,
    pub classes: BTreeMap<String, Class>,
    pub daemon: Daemon,
}

/// What is wrong with a configuration, and where.
#[derive(Debug, thiserror::Error)]
pub struct ConfigError {
    pub file: String,
    /// 1-based line and column, when the problem has a place.
    pub at: Option<(usize, usize)>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some((line, col)) => write!(f, "{}:{line}:{col}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Parses a CPU list as `taskset -c` takes it: `0-3,5,7-8`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, CpuListError> {
    if s.trim().is_empty() {
        return Err(CpuListError {
            part: String::new(),
            list: s.to_string(),
            problem: CpuListProblem::Empty,
        });
    }
    let set = crate::settings::CpuSet::parse_list(s)?;
    Ok(set.cpus().iter().map(|&c| c as u32).collect())
}

/// Line and column (1-based) of a byte offset.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl Config {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: file.clone(),
            at: None,
            message: format!("cannot read it: {e}"),
        })?;
        Config::parse(&text, &file)
    }

    /// What of a process the rules match on, of what takes a read of its own.
    pub fn rule_fields(&self) -> ProcFields {
        let any = |f: fn(&Match) -> bool| self.rules.iter().any(|r| f(&r.matches));
        ProcFields {
            uid: any(|m| m.uid.is_some()),
            cmdline: any(|m| m.cmdline.is_some()),
            cgroup: any(|m| m.cgroup.is_some()),
        }
    }

    /// The built-in configuration.
    pub fn builtin() -> Config {
        Config::parse(DEFAULT, "<built-in>").expect("the built-in configuration is valid (a test checks it)")
    }

    /// Parses and checks `text` (named `file` in errors).
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let err = |span: Option<Range<usize>>, message: String| ConfigError {
            file: file.to_string(),
            at: span.map(|s| position(text, s.start)),
            message,
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| err(e.span(), e.message().to_string()))?;
        let mut classes = BTreeMap::new();
        for (name, c) in &raw.classes {
            let cpus = match &c.cpus {
                Some(s) => Some(parse_cpu_list(s.get_ref()).map_err(|e| err(Some(s.span()), e.to_string()))?),
                None => None,
            };
            // A class that names neither CPUs nor a plan is not bound: binding is what
            // can hurt most (a process kept off an idle CPU), so it is asked for.
            let plan = match c.plan.as_ref().map(|p| (p.get_ref().as_str(), p.span())) {
                None if cpus.is_none() => None,
                Some(("none", span)) if cpus.is_some() || c.cpuset == Some(true) => {
                    return Err(err(
                        Some(span),
                        "plan 'none' binds nothing: it takes no cpus or cpuset".into(),
                    ))
                }
                Some(("none", _)) => None,
                None | Some(("fair-share", _)) => Some(Plan::FairShare),
                Some(("weighted", span)) => {
                    let Some(shares) = &c.shares else {
                        return Err(err(
                            Some(span),
                            "plan 'weighted' needs shares = [..], one per CPU".into(),
                        ));
                    };
                    let n = cpus.as_ref().map_or(0, Vec::len);
                    if cpus.is_none()
                        || shares.get_ref().len() != n
                        || shares.get_ref().iter().all(|&w| w == 0)
                    {
                        return Err(err(
                            Some(shares.span()),
                            format!(
                                "shares needs one share per CPU of `cpus` ({n} CPUs), not all 0; got {}",
                                shares.get_ref().len()
                            ),
                        ));
                    }
                    Some(Plan::Weighted(shares.get_ref().clone()))
                }
                Some(("isolate", _)) => Some(Plan::Isolate),
                Some((other, span)) => {
                    return Err(err(
                        Some(span),
                        format!("plan '{other}': use none, fair-share, weighted or isolate"),
                    ))
                }
            };
            let nice = match &c.nice {
                Some(n) if !(-20..=19).contains(n.get_ref()) => {
                    return Err(err(Some(n.span()), format!("nice {} is outside -20..19", n.get_ref())))
                }
                Some(n) => Some(*n.get_ref() as i8),
                None => None,
            };
            let rt = |field: &Option<Spanned<i64>>, what: &str, range: Range<i64>| match field {
                Some(v) if range.contains(v.get_ref()) => Ok(Some(*v.get_ref())),
                Some(v) => Err(err(
                    Some(v.span()),
                    format!("{what} {} is outside {}..{}", v.get_ref(), range.start, range.end - 1),
                )),
                None => Ok(None),
            };
            let priority = rt(&c.rt_priority, "rt_priority", 1..100)?;
            let max_ms = rt(&c.rt_max_ms, "rt_max_ms", 1..951)?.unwrap_or(100) as u32;
            let policy = match c.policy.as_ref().map(|p| (p.get_ref().to_ascii_lowercase(), p.span())) {
                None => None,
                Some((p, span)) => Some(match p.as_str() {
                    "other" | "normal" => ClassPolicy::Other,
                    "batch" => ClassPolicy::Batch,
                    "idle" => ClassPolicy::Idle,
                    "fifo" | "rr" => {
                        let Some(priority) = priority else {
                            return Err(err(Some(span), format!("policy {p} needs rt_priority (1..99)")));
                        };
                        let (priority, max_ms_per_s) = (priority as u8, max_ms);
                        if p == "fifo" {
                            ClassPolicy::Fifo { priority, max_ms_per_s }
                        } else {
                            ClassPolicy::Rr { priority, max_ms_per_s }
                        }
                    }
                    _ => {
                        return Err(err(
                            Some(span),
                            format!("policy '{p}': use other, batch, idle, fifo or rr"),
                        ))
                    }
                }),
            };
            let slice_ns = match &c.slice_ms {
                Some(ms) if !(0.1..=100.0).contains(ms.get_ref()) => {
                    return Err(err(
                        Some(ms.span()),
                        format!("slice_ms {} is outside 0.1..100", ms.get_ref()),
                    ))
                }
                Some(_) if matches!(policy, Some(ClassPolicy::Fifo { .. } | ClassPolicy::Rr { .. })) => {
                    return Err(err(
                        c.slice_ms.as_ref().map(Spanned::span),
                        "slice_ms is the slice of a fair policy (other, batch, idle), not of fifo or rr"
                            .into(),
                    ))
                }
                Some(ms) => Some((ms.get_ref() * 1e6).round() as u64),
                None => None,
            };
            let class = Class {
                name: name.clone(),
                cpus,
                plan,
                cpuset: c.cpuset.unwrap_or(false),
                nice,
                policy,
                slice_ns,
                manage: c.manage.unwrap_or(true),
            };
            classes.insert(name.clone(), class);
        }
        let mut rules = Vec::new();
        for r in &raw.rules {
            let class = r.class.get_ref();
            if !classes.contains_key(class) {
                let known: Vec<&str> = classes.keys().map(String::as_str).collect();
                return Err(err(
                    Some(r.class.span()),
                    format!("class '{class}' is not defined (defined: {})", known.join(", ")),
                ));
            }
            if r.matches == Match::default() {
                return Err(err(Some(r.class.span()), "a rule's match must test at least one key".into()));
            }
            rules.push(Rule { matches: r.matches.clone(), class: class.clone() });
        }
        let d = &raw.daemon;
        for (key, value, (lo, hi)) in d.bounded() {
            if !(lo..=hi).contains(&value) {
                return Err(err(None, format!("[daemon] {key} = {value} is outside {lo}..{hi}")));
            }
        }
        if let Some(c) = d.model_confidence.filter(|c| !(0.0..=1.0).contains(c)) {
            return Err(err(None, format!("[daemon] model_confidence = {c} is outside 0..1")));
        }
        if !(0.5..=1.0).contains(&d.learn_confidence) {
            let c = d.learn_confidence;
            return Err(err(None, format!("[daemon] learn_confidence = {c} is outside 0.5..1")));
        }
        Ok(Config { rules, classes, daemon: raw.daemon })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_works() {
        let c = Config::parse(
            "[[rule]]\nmatch = { comm = \"my-batch-job\" }\nclass = \"batch\"\n\n[class.batch]\ncpus = \"1\"\nnice = 10\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(c.rules[0].matches.comm.as_deref(), Some("my-batch-job"));
        let b = &c.classes["batch"];
        assert_eq!(
            (b.cpus.clone(), b.nice, b.plan.clone()),
            (Some(vec![1]), Some(10), Some(Plan::FairShare))
        );
    }

    #[test]
    fn a_class_slice_is_read_in_ms_and_kept_in_ns() {
        let c = Config::parse("[class.b]\npolicy = \"batch\"\nslice_ms = 12.5\n", "x.toml").unwrap();
        assert_eq!(c.classes["b"].slice_ns, Some(12_500_000));
        assert_eq!(Config::builtin().classes["background"].slice_ns, None);
    }

    #[test]
    fn only_what_the_rules_match_on_is_read() {
        let none = ProcFields { uid: false, cmdline: false, cgroup: false };
        assert_eq!(Config::builtin().rule_fields(), none, "the built-in rule names comms");
        let rules = "[[rule]]\nmatch = { cmdline = \"*--batch*\" }\nclass = \"b\"\n\n\
                     [[rule]]\nmatch = { uid = 1000, comm = \"x\" }\nclass = \"b\"\n\n[class.b]\nnice = 5\n";
        let c = Config::parse(rules, "x.toml").unwrap();
        assert_eq!(c.rule_fields(), ProcFields { uid: true, cmdline: true, cgroup: false });
    }

    #[test]
    fn the_builtin_configuration_is_valid() {
        let c = Config::builtin();
        assert!(c.classes["interactive"].manage);
        assert_eq!(c.classes["background"].policy, Some(ClassPolicy::Batch));
    }

    #[test]
    fn the_builtin_configuration_binds_nothing_and_guards_what_people_look_at() {
        let c = Config::builtin();
        for class in c.classes.values() {
            assert_eq!(
                (class.plan.clone(), class.cpus.clone(), class.cpuset),
                (None, None, false),
                "{}",
                class.name
            );
        }
        let interactive = &c.classes["interactive"];
        assert_eq!(
            (interactive.nice, interactive.policy),
            (None, None),
            "the interactive class changes nothing"
        );
        let d = &c.daemon;
        assert!(!d.slices && !d.colocate && !d.model && d.min_age_ms >= 500 && d.model_confidence.is_none());
        // Learning is on, and what it gives is what a person's `renice 19` gives.
        let background = &c.classes["background"];
        assert!(d.learn && background.nice == Some(19) && background.policy == Some(ClassPolicy::Batch));
        let rule = &c.rules[0];
        assert_eq!(rule.class, "interactive");
        let comm = rule.matches.comm.as_deref().unwrap();
        for program in [
            "tmux: server",
            "bash",
            "zsh",
            "gnome-terminal-",
            "xterm",
            "vim",
            "Xorg",
            "pipewire-pulse",
            "sshd",
        ] {
            assert!(crate::daemon::classes::glob(comm, program), "{program}");
        }
        assert!(!crate::daemon::classes::glob(comm, "xz"));
    }

    #[test]
    fn plans_are_asked_for() {
        let c = Config::parse(
            "[class.a]\nnice = 1\n[class.b]\ncpus = \"0\"\n[class.c]\nplan = \"isolate\"\n",
            "f",
        )
        .unwrap();
        assert_eq!(c.classes["a"].plan, None);
        assert_eq!(c.classes["b"].plan, Some(Plan::FairShare));
        assert_eq!(c.classes["c"].plan, Some(Plan::Isolate));
        let e = Config::parse("[class.a]\ncpus = \"0\"\nplan = \"none\"\n", "f").unwrap_err();
        assert!(e.to_string().contains("binds nothing"), "{e}");
        let e = Config::parse("[daemon]\nmodel_confidence = 1.5\n", "f").unwrap_err();
        assert!(e.to_string().contains("model_confidence"), "{e}");
        let e = Config::parse("[daemon]\nlearn_confidence = 0.4\n", "f").unwrap_err();
        assert!(e.to_string().contains("learn_confidence = 0.4 is outside 0.5..1"), "{e}");
    }

    #[test]
    fn daemon_numbers_past_their_bounds_are_refused_with_the_key_and_the_bound() {
        for (text, message) in [
            ("boost_max_ms = 9223372036854775807", "boost_max_ms = 9223372036854775807 is outside 1..10000"),
            ("boost_max_ms = 0", "boost_max_ms = 0 is outside 1..10000"),
            ("slice_tm_ms = 100000000000", "slice_tm_ms = 100000000000 is outside 1..100"),
            ("replan_ms = 0", "replan_ms = 0 is outside 1..3600000"),
            ("slice_x = 101", "slice_x = 101 is outside 0..100"),
            ("profile_duty_pct = 500", "profile_duty_pct = 500 is outside 0..100"),
        ] {
            let e = Config::parse(&format!("[daemon]\n{text}\n"), "f").unwrap_err();
            assert!(e.to_string().contains(message), "{text}: {e}");
        }
        let bounds_hold = "[daemon]\nboost_max_ms = 10000\nslice_tm_ms = 100\nmin_age_ms = 0\n";
        assert!(Config::parse(bounds_hold, "f").is_ok());
    }

    #[test]
    fn errors_name_the_line_and_what_is_wrong() {
        let cases = [
            ("[class.a]\nnice = 30\n", (2, 8), "outside -20..19"),
            ("[class.a]\ncpus = \"0-x\"\n", (2, 8), "not a CPU number"),
            ("[class.a]\nwhat = 1\n", (2, 1), "unknown field"),
            ("[[rule]]\nmatch = { comm = \"x\" }\nclass = \"nope\"\n", (3, 9), "not defined"),
            ("[class.a]\npolicy = \"fifo\"\n", (2, 10), "needs rt_priority"),
            ("[class.a]\nslice_ms = 0.05\n", (2, 12), "slice_ms 0.05 is outside 0.1..100"),
            ("[class.a]\npolicy = \"rr\"\nrt_priority = 2\nslice_ms = 1\n", (4, 12), "not of fifo or rr"),
            ("[class.a]\nplan = \"spread\"\n", (2, 8), "none, fair-share"),
            ("[class.a]\ncpus = \"0-1\"\nplan = \"weighted\"\nshares = [1]\n", (4, 10), "one share per CPU"),
            ("[daemon]\nboost = 1\n", (2, 9), "expected a boolean"),
            ("[class.a\n", (1, 9), ""),
        ];
        for (text, at, message) in cases {
            let e = Config::parse(text, "f.toml").unwrap_err();
            assert_eq!(e.at, Some(at), "{text:?}: {e}");
            assert!(e.to_string().contains(message), "{text:?}: {e}");
            assert!(e.to_string().starts_with(&format!("f.toml:{}:{}: ", at.0, at.1)), "{e}");
        }
    }

    #[test]
    fn cpu_lists_read_like_taskset() {
        assert_eq!(parse_cpu_list("0-2,5, 7").unwrap(), vec![0, 1, 2, 5, 7]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("").is_err());
        // Refused with the limit named, before anything is allocated.
        let err = parse_cpu_list("0-4294967295").unwrap_err().to_string();
        assert!(err.contains("1024"), "{err}");
    }
}
