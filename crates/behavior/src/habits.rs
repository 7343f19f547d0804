//! What each program does from run to run, learned from the lives of its processes
//! ([`Life`], which every exit carries in both worlds), so that a program known to run
//! CPU-bound (a compressor, a compiler) is classed at its next exec, before it has taken
//! a slice from anyone, and a build of a thousand short jobs is lowered job by job as a
//! person's `renice` of the whole build would lower it.
//!
//! The thesis classifies a process from its system calls over a profiling window, which
//! needs a hook on every system call and a process that lives through a window. The
//! scheduler already counts what tells a CPU hog from a program a person waits on: how
//! much of its life it was runnable. These are the decisions, where the idea leaves
//! them open:
//!
//! - **A life is evidence** only if it used at least [`MIN_EVIDENCE_CPU_NS`] of CPU: a
//!   shorter run (`ls`, a shell's helper) costs no one a frame and says little.
//! - **A life is CPU-bound** when it was runnable (on a CPU or waiting for one) for at
//!   least [`CPU_BOUND_SHARE`] of it: a hog stays runnable however many compete (its
//!   waiting grows as its running shrinks), while a program that waits for input, a
//!   timer, the disk or a child is runnable for much less.
//! - **Per program**, each life's weight decays by [`DECAY`] per later life (a half-life
//!   of 8 lives), so that a program that changes its habits is learned anew within a few
//!   runs; the confidence that it runs CPU-bound is the decayed count of CPU-bound lives
//!   plus one over the decayed count of lives plus two (Laplace's rule: ½ with no
//!   evidence). From 0.8, which four CPU-bound lives in a row reach and one life that
//!   slept among a dozen does not undo, the program is known to run CPU-bound.
//! - **A process's evidence is its main thread's life** (the thread whose id is the
//!   process's): a program whose main thread sleeps while workers compute (a browser
//!   compiling scripts, `xz -T4`) is not taken for a hog on its workers' word.
//! - Programs are known by their executable's path; an interpreter is one program
//!   whatever it runs, so a Python that runs CPU-bound jobs and a Python GUI share one
//!   confidence (mixed habits keep it below the threshold).
//! - **A program seen drawing for a person** (a process of it had a display library
//!   mapped: [`Habits::mark_draws`]) is never known to run CPU-bound, whatever its
//!   lives: an uncapped game runs as CPU-bound as a compressor, and only what it is
//!   made of tells them apart.

use std::collections::HashMap;

use schedlab_model::{Life, Ns};

/// The least CPU time of a life that counts as evidence.
pub const MIN_EVIDENCE_CPU_NS: Ns = 20_000_000;
/// The least share of its life a CPU-bound process is runnable.
pub const CPU_BOUND_SHARE: f64 = 0.9;
/// How much a life's weight keeps per later life of the same program: ½ after 8.
pub const DECAY: f64 = 0.917_004_043_204_671_2; // 2^(-1/8)
/// The least confidence from which a program is known to run CPU-bound, by default.
pub const MIN_CONFIDENCE: f64 = 0.8;
/// The most programs kept: the least recently seen go first.
pub const MAX_PROGRAMS: usize = 4096;

/// What one life says of its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// Runnable nearly all its life: a CPU hog.
    CpuBound,
    /// Asleep for a good part of it.
    Sleeper,
    /// Too short to say.
    None,
}

impl Evidence {
    /// What `life` says.
    pub fn of(life: &Life) -> Evidence {
        if life.runtime_ns < MIN_EVIDENCE_CPU_NS {
            Evidence::None
        } else if life.runnable_share() >= CPU_BOUND_SHARE {
            Evidence::CpuBound
        } else {
            Evidence::Sleeper
        }
    }
}

/// What is known of one program: its lives of evidence and how many ran CPU-bound, both
/// decayed, when it was last seen (a sequence number, for pruning), and whether it was
/// seen drawing for a person.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Habit {
    pub lives: f64,
    pub cpu_bound: f64,
    pub seen: u64,
    pub draws: bool,
}

impl Habit {
    /// The confidence that the program runs CPU-bound.
    pub fn confidence(&self) -> f64 {
        (self.cpu_bound + 1.0) / (self.lives + 2.0)
    }

    fn add(&mut self, evidence: Evidence, seen: u64) {
        let bound = match evidence {
            Evidence::CpuBound => 1.0,
            Evidence::Sleeper => 0.0,
            Evidence::None => return,
        };
        self.lives = self.lives * DECAY + 1.0;
        self.cpu_bound = self.cpu_bound * DECAY + bound;
        self.seen = seen;
    }
}

/// A program known to run CPU-bound, and how sure that is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuBound {
    pub confidence: f64,
    /// Its lives of evidence, decayed.
    pub lives: f64,
}

/// Every program's habits.
#[derive(Clone, Debug, Default)]
pub struct Habits {
    by_program: HashMap<String, Habit>,
    /// Lives recorded so far (the clock of [`Habit::seen`]).
    clock: u64,
}

impl Habits {
    /// Habits kept from an earlier run.
    pub fn from_kept(kept: impl IntoIterator<Item = (String, Habit)>) -> Habits {
        let by_program: HashMap<String, Habit> = kept.into_iter().collect();
        let clock = by_program.values().map(|h| h.seen).max().unwrap_or(0);
        Habits { by_program, clock }
    }

    /// Learns from one life of `program`'s main thread; what it said.
    pub fn record(&mut self, program: &str, life: &Life) -> Evidence {
        let evidence = Evidence::of(life);
        if evidence == Evidence::None {
            return evidence;
        }
        let clock = self.tick();
        self.entry(program).add(evidence, clock);
        evidence
    }

    /// `program` was seen drawing for a person: it is never known to run CPU-bound.
    /// Whether that is news.
    pub fn mark_draws(&mut self, program: &str) -> bool {
        let clock = self.tick();
        let h = self.entry(program);
        h.seen = clock;
        !std::mem::replace(&mut h.draws, true)
    }

    /// The next value of the clock.
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// `program`'s habit, made if it is new (the least recently seen program making
    /// room for it).
    fn entry(&mut self, program: &str) -> &mut Habit {
        if !self.by_program.contains_key(program) && self.by_program.len() >= MAX_PROGRAMS {
            let oldest = self.by_program.iter().min_by_key(|(_, h)| h.seen).map(|(p, _)| p.clone());
            if let Some(p) = oldest {
                self.by_program.remove(&p);
            }
        }
        self.by_program.entry(program.to_string()).or_default()
    }

    /// Whether `program` is known to run CPU-bound: its confidence, if at least
    /// `min_confidence` (never for a program seen drawing).
    pub fn cpu_bound(&self, program: &str, min_confidence: f64) -> Option<CpuBound> {
        let h = self.by_program.get(program).filter(|h| !h.draws)?;
        let confidence = h.confidence();
        (confidence >= min_confidence).then_some(CpuBound { confidence, lives: h.lives })
    }

    /// What is known of `program`.
    pub fn get(&self, program: &str) -> Option<&Habit> {
        self.by_program.get(program)
    }

    /// Every program's habits, to keep.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Habit)> {
        self.by_program.iter()
    }

    pub fn len(&self) -> usize {
        self.by_program.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_program.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    /// A life of `cpu_ms` on a CPU and `wait_ms` waiting for one in `lived_ms`.
    fn life(cpu_ms: u64, wait_ms: u64, lived_ms: u64) -> Life {
        Life { runtime_ns: cpu_ms * MS, wait_ns: wait_ms * MS, lived_ns: lived_ms * MS, ..Life::default() }
    }

    #[test]
    fn a_life_is_cpu_bound_when_runnable_nearly_all_of_it() {
        // A compressor beside 7 others on 2 CPUs: 35 ms running, 105 ms waiting, 141 ms.
        assert_eq!(Evidence::of(&life(35, 105, 141)), Evidence::CpuBound);
        // A 60 Hz frame loop: 4 ms of every 16.7, waiting 2: runnable 36 %.
        assert_eq!(Evidence::of(&life(240, 120, 1000)), Evidence::Sleeper);
        // Runnable 89 % is not enough; 90 % is.
        assert_eq!(Evidence::of(&life(89, 0, 100)), Evidence::Sleeper);
        assert_eq!(Evidence::of(&life(90, 0, 100)), Evidence::CpuBound);
        // `ls`: all of its 2 ms on the CPU, but too short to say.
        assert_eq!(Evidence::of(&life(2, 0, 2)), Evidence::None);
        assert_eq!(Evidence::of(&life(19, 1, 20)), Evidence::None, "just under 20 ms of CPU");
    }

    #[test]
    fn four_cpu_bound_lives_make_a_program_known_and_its_habits_can_change() {
        let mut h = Habits::default();
        let hog = life(35, 100, 135);
        for n in 1..=3 {
            assert_eq!(h.record("/usr/bin/xz", &hog), Evidence::CpuBound);
            assert!(h.cpu_bound("/usr/bin/xz", MIN_CONFIDENCE).is_none(), "not after {n}");
        }
        h.record("/usr/bin/xz", &hog);
        // Decayed: 1 + d + d² + d³ = 3.525 lives, all CPU-bound: 4.525 / 5.525 = 0.819.
        let known = h.cpu_bound("/usr/bin/xz", MIN_CONFIDENCE).expect("known after 4");
        let lives = 1.0 + DECAY + DECAY * DECAY + DECAY.powi(3);
        assert!((known.lives - lives).abs() < 1e-12, "{known:?}");
        assert!((known.confidence - (lives + 1.0) / (lives + 2.0)).abs() < 1e-12, "{known:?}");
        // Learned long enough, one sleeping life does not undo it; a few do.
        for _ in 0..20 {
            h.record("/usr/bin/xz", &hog);
        }
        h.record("/usr/bin/xz", &life(30, 0, 1000));
        assert!(h.cpu_bound("/usr/bin/xz", MIN_CONFIDENCE).is_some(), "{:?}", h.get("/usr/bin/xz"));
        for _ in 0..2 {
            h.record("/usr/bin/xz", &life(30, 0, 1000));
        }
        assert!(h.cpu_bound("/usr/bin/xz", MIN_CONFIDENCE).is_none(), "{:?}", h.get("/usr/bin/xz"));
        // Short lives change nothing.
        let before = *h.get("/usr/bin/xz").unwrap();
        assert_eq!(h.record("/usr/bin/xz", &life(1, 0, 1)), Evidence::None);
        assert_eq!(h.get("/usr/bin/xz"), Some(&before));
        assert!(h.get("/bin/ls").is_none() && h.record("/bin/ls", &life(1, 0, 1)) == Evidence::None);
        assert!(h.get("/bin/ls").is_none(), "no evidence, no entry");
    }

    #[test]
    fn a_program_seen_drawing_is_never_known_cpu_bound() {
        let mut h = Habits::default();
        for _ in 0..10 {
            h.record("/usr/games/uncapped", &life(35, 100, 135));
        }
        assert!(h.cpu_bound("/usr/games/uncapped", MIN_CONFIDENCE).is_some());
        assert!(h.mark_draws("/usr/games/uncapped"), "news the first time");
        assert!(!h.mark_draws("/usr/games/uncapped"), "not the second");
        assert!(h.cpu_bound("/usr/games/uncapped", 0.5).is_none());
        // A program seen drawing before any life it lived is kept so.
        assert!(h.mark_draws("/usr/bin/glxgears"));
        for _ in 0..10 {
            h.record("/usr/bin/glxgears", &life(35, 100, 135));
        }
        assert!(h.cpu_bound("/usr/bin/glxgears", 0.5).is_none() && h.get("/usr/bin/glxgears").unwrap().draws);
    }

    #[test]
    fn habits_are_bounded_and_kept() {
        let mut h = Habits::default();
        let hog = life(50, 0, 50);
        for i in 0..MAX_PROGRAMS + 10 {
            h.record(&format!("/p/{i}"), &hog);
        }
        assert_eq!(h.len(), MAX_PROGRAMS);
        assert!(
            h.get("/p/0").is_none() && h.get(&format!("/p/{}", MAX_PROGRAMS + 9)).is_some(),
            "oldest out"
        );
        let kept: Vec<(String, Habit)> = h.iter().map(|(p, h)| (p.clone(), *h)).collect();
        let mut again = Habits::from_kept(kept);
        again.record("/p/new", &hog);
        assert_eq!(again.get("/p/new").unwrap().seen, (MAX_PROGRAMS + 11) as u64, "the clock goes on");
    }
}
