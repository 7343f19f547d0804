//! SWAP's resource model (paper 004, section 3.1): resource objects identified by
//! (type, identifier), each with a list of requesters and a list of providers, kept in a
//! hash table whose key is the sum of the identifier's integers modulo the table size.
//!
//! A [`Resource`] of the model crate is exactly such a (type, identifier) tuple: a
//! socket endpoint, one side of a pipe or FIFO, a message queue, one semaphore, one kind
//! of `flock` on a file, the signals of one process.

use schedlab_model::{FlockKind, Pid, Resource};
use serde::{Deserialize, Serialize};

use super::confidence::{Category, Confidence};

/// The integers that identify a resource within its type (section 3.1: "the resource
/// identifier can consist of an arbitrary number of integers"); unused places are 0.
/// A side or a lock kind counts as 0 (read, shared) or 1 (write, exclusive); System V
/// ids are taken as unsigned.
pub fn identifier(resource: &Resource) -> [u64; 2] {
    match *resource {
        Resource::Socket { inode } => [inode, 0],
        Resource::Pipe { inode, write } | Resource::Fifo { inode, write } => [inode, u64::from(write)],
        Resource::SysvMsg { id } => [u64::from(id as u32), 0],
        Resource::SysvSem { id, num } => [u64::from(id as u32), u64::from(num)],
        Resource::Flock { inode, lock } => [inode, u64::from(lock == FlockKind::Exclusive)],
        Resource::Signal { pid } => [u64::from(pid), 0],
    }
}

/// The hash table bucket of `resource`: the sum of its identifier's integers modulo the
/// table size `buckets` (section 3.1). The type is not part of the key, so objects of
/// different types with the same identifier share a bucket, as in the paper.
pub fn bucket_of(resource: &Resource, buckets: usize) -> usize {
    let sum = identifier(resource).iter().fold(0u64, |s, &x| s.wrapping_add(x));
    (sum % buckets as u64) as usize
}

/// Whether `a` and `b` are objects of the same kernel object (both sides of a pipe or
/// FIFO, both lock kinds of a file, every semaphore of a set): what one destruction of
/// that kernel object removes.
pub fn same_kernel_object(a: &Resource, b: &Resource) -> bool {
    use Resource::*;
    match (*a, *b) {
        (Socket { inode: x }, Socket { inode: y }) => x == y,
        (Pipe { inode: x, .. }, Pipe { inode: y, .. }) => x == y,
        (Fifo { inode: x, .. }, Fifo { inode: y, .. }) => x == y,
        (SysvMsg { id: x }, SysvMsg { id: y }) => x == y,
        (SysvSem { id: x, .. }, SysvSem { id: y, .. }) => x == y,
        (Flock { inode: x, .. }, Flock { inode: y, .. }) => x == y,
        (Signal { pid: x }, Signal { pid: y }) => x == y,
        _ => false,
    }
}

/// The peer endpoint of a socket endpoint as the simulator numbers socket pairs: the
/// two ends are inodes `base` (even) and `base + 1`, so the peer of `inode` is
/// `inode ^ 1`. This is an assumption about the simulator, not about Linux; a live
/// observer supplies its own peer function to
/// [`SwapDetector::with_socket_peer`](super::SwapDetector::with_socket_peer).
pub fn simulator_socket_peer(inode: u64) -> Option<u64> {
    Some(inode ^ 1)
}

/// The objects a process blocked on `resource` requests (section 3.2): a blocked socket
/// call requests the peer endpoint; a blocked read of a pipe or FIFO requests its write
/// object and a blocked write its read object; a message queue, a semaphore and a
/// signal object are requested themselves; a blocked `LOCK_SH` requests the exclusive
/// lock object and a blocked `LOCK_EX` both the exclusive and the shared one.
/// `resource` is the side, endpoint or lock kind the call used, as the event vocabulary
/// reports it. A socket whose peer `socket_peer` does not know requests nothing.
pub fn requested_objects(resource: &Resource, socket_peer: &dyn Fn(u64) -> Option<u64>) -> Vec<Resource> {
    match *resource {
        Resource::Socket { inode } => {
            socket_peer(inode).map(|p| Resource::Socket { inode: p }).into_iter().collect()
        }
        Resource::Pipe { inode, write } => vec![Resource::Pipe { inode, write: !write }],
        Resource::Fifo { inode, write } => vec![Resource::Fifo { inode, write: !write }],
        Resource::Flock { inode, lock: FlockKind::Shared } => {
            vec![Resource::Flock { inode, lock: FlockKind::Exclusive }]
        }
        Resource::Flock { inode, lock: FlockKind::Exclusive } => vec![
            Resource::Flock { inode, lock: FlockKind::Exclusive },
            Resource::Flock { inode, lock: FlockKind::Shared },
        ],
        Resource::SysvMsg { .. } | Resource::SysvSem { .. } | Resource::Signal { .. } => vec![*resource],
    }
}

/// One entry of a provider list: a process that may provide the resource, with its
/// confidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderEntry {
    /// The provider.
    pub pid: Pid,
    /// Its confidence and the running time counted towards its next negative feedback.
    pub confidence: Confidence,
    /// When (in the table's sequence of changes) the confidence last changed or the
    /// entry was added: among equal confidences, the earlier one comes first.
    pub since: u64,
}

impl ProviderEntry {
    /// The group of the entry when the base confidence is `k`.
    pub fn category(&self, k: u32) -> Category {
        Category::of(self.confidence.value(), k)
    }
}

/// A resource object: the resource, the processes blocked requesting it, and the
/// processes that may provide it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceObject {
    resource: Resource,
    requesters: Vec<Pid>,
    providers: Vec<ProviderEntry>,
}

impl ResourceObject {
    fn new(resource: Resource) -> Self {
        ResourceObject { resource, requesters: Vec::new(), providers: Vec::new() }
    }

    /// The resource this object stands for.
    pub fn resource(&self) -> &Resource {
        &self.resource
    }

    /// The requesters, in the order they blocked.
    pub fn requesters(&self) -> &[Pid] {
        &self.requesters
    }

    /// The provider list, in the order providers were added.
    pub fn providers(&self) -> &[ProviderEntry] {
        &self.providers
    }

    /// The entry of provider `pid`, if it is listed.
    pub fn provider(&self, pid: Pid) -> Option<&ProviderEntry> {
        self.providers.iter().find(|e| e.pid == pid)
    }

    pub(super) fn provider_mut(&mut self, pid: Pid) -> Option<&mut ProviderEntry> {
        self.providers.iter_mut().find(|e| e.pid == pid)
    }

    /// The providers still considered (confidence above zero) other than `requester`,
    /// most confident first; among equal confidences the one that reached its value
    /// first ("the first provider with the highest confidence value", section 4).
    pub fn ranked(&self, requester: Pid) -> Vec<ProviderEntry> {
        let mut v: Vec<ProviderEntry> = self
            .providers
            .iter()
            .filter(|e| e.pid != requester && e.confidence.considered())
            .copied()
            .collect();
        v.sort_by_key(|e| (std::cmp::Reverse(e.confidence.value()), e.since));
        v
    }

    /// Whether nobody uses the object any more (section 3.1: it is then deleted).
    pub fn is_unused(&self) -> bool {
        self.requesters.is_empty() && self.providers.is_empty()
    }

    /// Appends `pid` to the requesters unless it is there already.
    pub(super) fn add_requester(&mut self, pid: Pid) {
        if !self.requesters.contains(&pid) {
            self.requesters.push(pid);
        }
    }

    /// Removes `pid` from the requesters.
    pub(super) fn remove_requester(&mut self, pid: Pid) {
        self.requesters.retain(|&p| p != pid);
    }

    /// Adds `pid` as a provider with base confidence `k` (or `initial`, what earlier
    /// runs learned of its program) unless it is listed already.
    /// With the list full (`limit` > 0 entries), the new provider joins the end of the
    /// default group and an existing provider leaves from the front of the lowest
    /// non-empty group (section 3.1). Each group is kept in ascending confidence, equal
    /// confidences in the order they were reached, so the one leaving is the least
    /// confident: SWAP "only keeps the L providers with highest confidence values".
    /// Returns the evicted provider.
    pub(super) fn add_provider(
        &mut self,
        pid: Pid,
        k: u32,
        initial: Option<u32>,
        limit: usize,
        since: u64,
    ) -> Option<Pid> {
        if self.provider(pid).is_some() {
            return None;
        }
        let evicted = if limit > 0 && self.providers.len() >= limit {
            let front = (0..self.providers.len()).min_by_key(|&i| {
                let e = &self.providers[i];
                (e.category(k), e.confidence.value(), e.since)
            });
            front.map(|i| self.providers.remove(i).pid)
        } else {
            None
        };
        let confidence = initial.map_or_else(|| Confidence::base(k), |v| Confidence::starting_at(v, k));
        self.providers.push(ProviderEntry { pid, confidence, since });
        evicted
    }

    /// Removes provider `pid`; returns whether it was listed.
    pub(super) fn remove_provider(&mut self, pid: Pid) -> bool {
        let before = self.providers.len();
        self.providers.retain(|e| e.pid != pid);
        self.providers.len() != before
    }
}

/// The resource object hash table (section 3.1): objects are created when first
/// accessed and deleted when no requester or provider is left; colliding objects share
/// a bucket (a list, as the paper's doubly-linked chain).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceTable {
    buckets: Vec<Vec<ResourceObject>>,
    len: usize,
}

impl ResourceTable {
    /// An empty table of `buckets` buckets (at least one).
    pub fn new(buckets: usize) -> Self {
        ResourceTable { buckets: vec![Vec::new(); buckets.max(1)], len: 0 }
    }

    /// The number of resource objects.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table holds no object.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The object of `resource`, if it exists.
    pub fn get(&self, resource: &Resource) -> Option<&ResourceObject> {
        self.buckets[bucket_of(resource, self.buckets.len())].iter().find(|o| o.resource == *resource)
    }

    pub(super) fn get_mut(&mut self, resource: &Resource) -> Option<&mut ResourceObject> {
        let b = bucket_of(resource, self.buckets.len());
        self.buckets[b].iter_mut().find(|o| o.resource == *resource)
    }

    /// The object of `resource`, created (empty) if it does not exist yet.
    pub(super) fn get_or_insert(&mut self, resource: Resource) -> &mut ResourceObject {
        let b = bucket_of(&resource, self.buckets.len());
        let chain = &mut self.buckets[b];
        match chain.iter().position(|o| o.resource == resource) {
            Some(i) => &mut chain[i],
            None => {
                self.len += 1;
                chain.push(ResourceObject::new(resource));
                chain.last_mut().expect("just pushed")
            }
        }
    }

    /// Deletes the object of `resource` if nobody uses it any more.
    pub(super) fn remove_if_unused(&mut self, resource: &Resource) {
        let b = bucket_of(resource, self.buckets.len());
        let chain = &mut self.buckets[b];
        if let Some(i) = chain.iter().position(|o| o.resource == *resource && o.is_unused()) {
            chain.remove(i);
            self.len -= 1;
        }
    }

    /// Deletes the object of `resource` whatever its lists hold, and returns it.
    pub(super) fn remove(&mut self, resource: &Resource) -> Option<ResourceObject> {
        let b = bucket_of(resource, self.buckets.len());
        let chain = &mut self.buckets[b];
        let i = chain.iter().position(|o| o.resource == *resource)?;
        self.len -= 1;
        Some(chain.remove(i))
    }

    /// Every object, bucket by bucket.
    pub fn iter(&self) -> impl Iterator<Item = &ResourceObject> {
        self.buckets.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEM: Resource = Resource::SysvSem { id: 3, num: 4 };

    #[test]
    fn bucket_is_identifier_sum_modulo_size() {
        assert_eq!(identifier(&SEM), [3, 4]);
        assert_eq!(bucket_of(&SEM, 5), 2);
        assert_eq!(bucket_of(&Resource::Pipe { inode: 10, write: true }, 4), 3);
        assert_eq!(bucket_of(&Resource::Flock { inode: 10, lock: FlockKind::Shared }, 4), 2);
        assert_eq!(bucket_of(&Resource::SysvMsg { id: -1 }, 1 << 40), 0xffff_ffff);
    }

    #[test]
    fn colliding_objects_share_a_bucket_and_stay_apart() {
        let mut t = ResourceTable::new(8);
        let a = Resource::Socket { inode: 7 };
        let b = Resource::SysvSem { id: 3, num: 4 }; // 3 + 4 = 7: same bucket as a
        assert_eq!(bucket_of(&a, 8), bucket_of(&b, 8));
        t.get_or_insert(a).add_requester(Pid(1));
        t.get_or_insert(b).add_requester(Pid(2));
        assert_eq!(t.len(), 2);
        assert_eq!(t.get(&a).unwrap().requesters(), &[Pid(1)]);
        assert_eq!(t.get(&b).unwrap().requesters(), &[Pid(2)]);
        t.get_mut(&a).unwrap().remove_requester(Pid(1));
        t.remove_if_unused(&a);
        assert_eq!(t.len(), 1);
        assert!(t.get(&a).is_none());
        assert_eq!(t.get(&b).unwrap().requesters(), &[Pid(2)], "the other object of the chain survives");
        t.remove_if_unused(&b);
        assert_eq!(t.len(), 1, "an object still used is kept");
        assert_eq!(t.remove(&b).unwrap().requesters(), &[Pid(2)]);
        assert!(t.is_empty());
    }

    #[test]
    fn requested_objects_per_kind() {
        let peer = |i: u64| Some(i ^ 1);
        let none = |_: u64| None;
        assert_eq!(
            requested_objects(&Resource::Socket { inode: 10 }, &peer),
            vec![Resource::Socket { inode: 11 }]
        );
        assert_eq!(
            requested_objects(&Resource::Socket { inode: 11 }, &peer),
            vec![Resource::Socket { inode: 10 }]
        );
        assert!(requested_objects(&Resource::Socket { inode: 11 }, &none).is_empty());
        assert_eq!(
            requested_objects(&Resource::Pipe { inode: 5, write: false }, &peer),
            vec![Resource::Pipe { inode: 5, write: true }]
        );
        assert_eq!(
            requested_objects(&Resource::Fifo { inode: 5, write: true }, &peer),
            vec![Resource::Fifo { inode: 5, write: false }]
        );
        assert_eq!(requested_objects(&SEM, &peer), vec![SEM]);
        assert_eq!(requested_objects(&Resource::SysvMsg { id: 2 }, &peer), vec![Resource::SysvMsg { id: 2 }]);
        assert_eq!(requested_objects(&Resource::Signal { pid: 9 }, &peer), vec![Resource::Signal { pid: 9 }]);
        let (sh, ex) = (FlockKind::Shared, FlockKind::Exclusive);
        assert_eq!(
            requested_objects(&Resource::Flock { inode: 1, lock: sh }, &peer),
            vec![Resource::Flock { inode: 1, lock: ex }]
        );
        assert_eq!(
            requested_objects(&Resource::Flock { inode: 1, lock: ex }, &peer),
            vec![Resource::Flock { inode: 1, lock: ex }, Resource::Flock { inode: 1, lock: sh }]
        );
        assert_eq!(simulator_socket_peer(10_000), Some(10_001));
        assert_eq!(simulator_socket_peer(10_001), Some(10_000));
    }

    #[test]
    fn same_kernel_object_groups_sides_kinds_and_sets() {
        let p = |w| Resource::Pipe { inode: 1, write: w };
        assert!(same_kernel_object(&p(true), &p(false)));
        assert!(!same_kernel_object(&p(true), &Resource::Fifo { inode: 1, write: true }));
        assert!(same_kernel_object(&SEM, &Resource::SysvSem { id: 3, num: 0 }));
        assert!(!same_kernel_object(&SEM, &Resource::SysvSem { id: 4, num: 4 }));
        assert!(!same_kernel_object(&Resource::Socket { inode: 10 }, &Resource::Socket { inode: 11 }));
    }

    fn set(o: &mut ResourceObject, pid: u32, value: u32, since: u64) {
        let e = o.provider_mut(Pid(pid)).unwrap();
        while e.confidence.value() > value {
            e.confidence.charge(1, 1, 0);
        }
        while e.confidence.value() < value {
            e.confidence.reward(20, 0);
        }
        e.since = since;
    }

    fn pids(o: &ResourceObject) -> Vec<u32> {
        o.providers().iter().map(|e| e.pid.0).collect()
    }

    #[test]
    fn list_limit_evicts_the_front_of_the_lowest_non_empty_group() {
        let mut o = ResourceObject::new(SEM);
        for p in 1..=4 {
            assert_eq!(o.add_provider(Pid(p), 20, None, 4, u64::from(p)), None);
        }
        assert_eq!(o.add_provider(Pid(2), 20, None, 4, 9), None, "listed already: nothing changes");
        set(&mut o, 1, 25, 10); // high
        set(&mut o, 2, 18, 11); // low
        set(&mut o, 3, 15, 12); // low, lower
                                // p4 stays default (20).
        assert_eq!(
            o.add_provider(Pid(5), 20, None, 4, 13),
            Some(Pid(3)),
            "lowest confidence of the low group"
        );
        assert_eq!(o.add_provider(Pid(6), 20, None, 4, 14), Some(Pid(2)));
        assert_eq!(pids(&o), vec![1, 4, 5, 6]);
        // No low provider left: the front of the default group (the oldest) goes.
        assert_eq!(o.add_provider(Pid(7), 20, None, 4, 15), Some(Pid(4)));
        assert_eq!(o.add_provider(Pid(8), 20, None, 4, 16), Some(Pid(5)));
        assert_eq!(pids(&o), vec![1, 6, 7, 8]);
        assert_eq!(o.providers().iter().map(|e| e.category(20)).collect::<Vec<_>>(), {
            use Category::*;
            vec![High, Default, Default, Default]
        });
        // Only high providers: the least confident of them goes; the newcomer stays.
        let mut h = ResourceObject::new(SEM);
        h.add_provider(Pid(1), 20, None, 2, 1);
        h.add_provider(Pid(2), 20, None, 2, 2);
        set(&mut h, 1, 30, 3);
        set(&mut h, 2, 22, 4);
        assert_eq!(h.add_provider(Pid(3), 20, None, 2, 5), Some(Pid(2)));
        assert_eq!(pids(&h), vec![1, 3]);
    }

    #[test]
    fn no_limit_when_l_is_zero() {
        let mut o = ResourceObject::new(SEM);
        for p in 1..=50 {
            assert_eq!(o.add_provider(Pid(p), 20, None, 0, u64::from(p)), None);
        }
        assert_eq!(o.providers().len(), 50);
    }

    #[test]
    fn ranking_excludes_the_requester_and_zero_and_breaks_ties_by_age() {
        let mut o = ResourceObject::new(SEM);
        for p in 1..=4 {
            o.add_provider(Pid(p), 20, None, 0, u64::from(p));
        }
        set(&mut o, 1, 0, 5);
        set(&mut o, 4, 21, 6);
        let ranked: Vec<u32> = o.ranked(Pid(2)).iter().map(|e| e.pid.0).collect();
        assert_eq!(ranked, vec![4, 3], "p1 dropped out at 0; p2 is the requester");
        let ranked: Vec<u32> = o.ranked(Pid(9)).iter().map(|e| e.pid.0).collect();
        assert_eq!(ranked, vec![4, 2, 3]);
        assert!(o.remove_provider(Pid(4)));
        assert!(!o.remove_provider(Pid(4)));
    }
}
