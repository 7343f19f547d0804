//! The dependencies SWAP finds in an event stream, kept after the fact: SWAP's own
//! table forgets a request when the call returns, so a report of what was observed
//! records each (requester, provider, resource) edge when the provider wakes the
//! requester.

use std::collections::HashMap;

use schedlab_behavior::swap::{SwapDetector, SwapParams};
use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, Resource};
use serde::Serialize;

/// One dependency: `requester` blocked on `resource` and `provider` woke it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Dependency {
    pub requester: Pid,
    pub provider: Pid,
    /// The object the requester requested (the provider's side of a pipe, the peer
    /// endpoint of a socket, …).
    pub resource: Resource,
    /// The provider's confidence on that object after its latest wakeup of the requester.
    pub confidence: u32,
    /// How many times the provider woke the requester while it was blocked on it.
    pub wakeups: u64,
}

/// The most edges a recorder keeps: past it, the half with the fewest wakeups goes.
pub const MAX_EDGES: usize = 10_000;

/// A [`SwapDetector`] that also remembers every confirmed dependency edge.
pub struct DependencyRecorder {
    detector: SwapDetector,
    edges: HashMap<(Pid, Pid, Resource), Dependency>,
    /// How many edges each thread is in: what [`DependencyRecorder::forget`] looks up.
    involved: HashMap<Pid, u32>,
}

impl std::fmt::Debug for DependencyRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DependencyRecorder").field("edges", &self.edges.len()).finish_non_exhaustive()
    }
}

impl DependencyRecorder {
    /// With SWAP's default parameters. On Linux the peer of a UNIX socket endpoint comes
    /// from the kernel ([`crate::socket_peers::UnixPeers`]); other sockets' peers (and,
    /// elsewhere, all) are unknown, so they give no dependencies.
    pub fn new() -> Self {
        #[cfg(target_os = "linux")]
        {
            let peers = crate::socket_peers::UnixPeers::default();
            Self::with_detector(SwapDetector::with_socket_peer(SwapParams::default(), move |inode| {
                peers.peer(inode)
            }))
        }
        #[cfg(not(target_os = "linux"))]
        {
            Self::with_detector(SwapDetector::with_socket_peer(SwapParams::default(), |_| None))
        }
    }

    /// Around a given detector.
    pub fn with_detector(detector: SwapDetector) -> Self {
        DependencyRecorder { detector, edges: HashMap::new(), involved: HashMap::new() }
    }

    /// Forgets the edges of thread `tid` (it exited): a daemon's edges are those of
    /// threads alive. Costs a lookup for a thread in no edge.
    pub fn forget(&mut self, tid: Pid) {
        if self.involved.remove(&tid).is_some() {
            self.edges.retain(|&(r, p, _), _| r != tid && p != tid);
            self.recount();
        }
    }

    /// The number of edges kept.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// Whether no edge is kept.
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// Keeps the edges within [`MAX_EDGES`]: past it, the half with the fewest wakeups
    /// is dropped.
    fn bound(&mut self) {
        if self.edges.len() <= MAX_EDGES {
            return;
        }
        let mut wakeups: Vec<u64> = self.edges.values().map(|d| d.wakeups).collect();
        let (_, &mut median, _) = wakeups.select_nth_unstable(MAX_EDGES / 2);
        self.edges.retain(|_, d| d.wakeups > median);
        self.recount();
    }

    fn recount(&mut self) {
        self.involved.clear();
        for &(r, p, _) in self.edges.keys() {
            *self.involved.entry(r).or_default() += 1;
            *self.involved.entry(p).or_default() += 1;
        }
    }

    /// The detector.
    pub fn detector(&self) -> &SwapDetector {
        &self.detector
    }

    /// The detector, to configure.
    pub fn detector_mut(&mut self) -> &mut SwapDetector {
        &mut self.detector
    }

    /// Charges running time up to `now` (SWAP's confidence feedback) without an event.
    pub fn advance_to(&mut self, now: Ns) {
        self.detector.advance_to(now);
    }

    /// The edges found, most wakeups first.
    pub fn dependencies(&self) -> Vec<Dependency> {
        let mut v: Vec<Dependency> = self.edges.values().copied().collect();
        v.sort_by(|a, b| {
            (b.wakeups, b.confidence, a.requester, a.provider).cmp(&(
                a.wakeups,
                a.confidence,
                b.requester,
                b.provider,
            ))
        });
        v
    }
}

impl Default for DependencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl EventSink for DependencyRecorder {
    fn event(&mut self, event: &Event) {
        let links = match event.kind {
            EventKind::Wakeup { waker, wakee, .. } if waker != wakee && self.detector.is_blocked(wakee) => {
                let mut resources: Vec<Resource> = Vec::new();
                for r in self.detector.requests(wakee) {
                    if self.detector.object(r).and_then(|o| o.provider(waker)).is_some() {
                        resources.push(*r);
                    }
                }
                resources.into_iter().map(|r| (wakee, waker, r)).collect()
            }
            _ => Vec::new(),
        };
        self.detector.observe(event);
        for (requester, provider, resource) in links {
            let confidence = self.detector.confidence(&resource, provider).map_or(0, |c| c.value());
            let e = self.edges.entry((requester, provider, resource)).or_insert_with(|| {
                *self.involved.entry(requester).or_default() += 1;
                *self.involved.entry(provider).or_default() += 1;
                Dependency { requester, provider, resource, confidence, wakeups: 0 }
            });
            e.confidence = confidence;
            e.wakeups += 1;
        }
        self.bound();
    }
}
