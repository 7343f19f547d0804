//! Loading schedlab's sched_ext scheduler, feeding it the plan, reading its stats, and
//! unloading it.
//!
//! The contract with the kernel (kernel/sched/ext.c): once attached, every task of the
//! fair policies is scheduled by the BPF code; if it fails (a runtime error, a runnable
//! task not run within the watchdog's `timeout_ms`) or the link is dropped, the kernel
//! unloads it and every task goes back to the fair class. So nothing is left changed:
//! dropping a [`Scheduler`] (or the process ending, even by SIGKILL, which closes the
//! link) restores the kernel's own scheduling.

use std::fs;
use std::mem::MaybeUninit;
use std::time::{Duration, Instant};

use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, OpenObject};

use crate::kernel::{State, SYSFS};
use crate::plan::{ClassPlan, PlanError, Tunables, MAX_CLASSES, MAX_FLOW_BURSTS};
use crate::skel::{types, SchedlabSkel, SchedlabSkelBuilder};
use crate::stats::{Exit, Stats};

/// The name the kernel shows for the scheduler in `/sys/kernel/sched_ext/root/ops`.
pub const OPS_NAME: &str = "schedlab";

/// Why the scheduler could not be loaded or fed.
#[derive(Debug, thiserror::Error)]
pub enum ExtError {
    #[error("this kernel has no sched_ext (built without CONFIG_SCHED_CLASS_EXT, or older than 6.12)")]
    NoSchedExt,
    #[error("another sched_ext scheduler is loaded: {0}")]
    Busy(State),
    #[error("reading {SYSFS}: {0}")]
    Sysfs(#[from] std::io::Error),
    #[error("{step} the BPF scheduler: {source}")]
    Bpf { step: &'static str, source: libbpf_rs::Error },
    #[error("the kernel did not enable the scheduler within {0:?} (state: {1})")]
    NotEnabled(Duration, State),
    #[error("the kernel ended the scheduler: {0}")]
    Exited(Exit),
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// schedlab's sched_ext scheduler, loaded and running.
pub struct Scheduler {
    /// The struct_ops link: while it is held, the scheduler runs.
    link: Option<Link>,
    /// The exec tracepoint's link (PFS counts bursts from an exec).
    _exec: Link,
    /// The skeleton, which borrows `_object`: declared (so dropped) before it.
    skel: SchedlabSkel<'static>,
    /// libbpf's object, boxed so that its address stays put while `skel` borrows it.
    _object: Box<MaybeUninit<OpenObject>>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").field("attached", &self.link.is_some()).finish()
    }
}

/// The bytes of a plain C value, for a map.
fn bytes<T: Copy>(value: &T) -> &[u8] {
    // SAFETY: T is one of the skeleton's plain `repr(C)` types (integers and arrays of
    // them); reading its bytes is what the kernel does with it.
    unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

fn update(map: &libbpf_rs::MapMut<'_>, key: u32, value: &[u8]) -> Result<(), ExtError> {
    map.update(&key.to_ne_bytes(), value, MapFlags::ANY)
        .map_err(|source| ExtError::Bpf { step: "writing the plan of", source })
}

/// Deletes `key` from `map`; a key not there is no error.
fn delete(map: &libbpf_rs::MapMut<'_>, key: u32) -> Result<(), ExtError> {
    match map.delete(&key.to_ne_bytes()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == libbpf_rs::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ExtError::Bpf { step: "writing the plan of", source }),
    }
}

/// A NUL-terminated C string of the BPF side.
fn c_string(chars: &[i8]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Scheduler {
    /// Loads the scheduler with `tunables` and attaches it, then waits (up to `wait`;
    /// BPF verification under an emulated CPU takes tens of seconds) until the kernel
    /// says it is enabled. Needs root and a kernel with sched_ext.
    pub fn load(tunables: &Tunables, wait: Duration) -> Result<Scheduler, ExtError> {
        match State::read()? {
            State::Absent => return Err(ExtError::NoSchedExt),
            State::Disabled => {}
            other => return Err(ExtError::Busy(other)),
        }
        let bpf = |step| move |source| ExtError::Bpf { step, source };
        let mut object = Box::new(MaybeUninit::uninit());
        // SAFETY: the box's contents never move and outlive the skeleton: both go into
        // the Scheduler, whose fields drop the skeleton first.
        let storage: &'static mut MaybeUninit<OpenObject> = unsafe { &mut *(object.as_mut() as *mut _) };
        let mut open = SchedlabSkelBuilder::default().open(storage).map_err(bpf("opening"))?;
        let rodata = open.maps.rodata_data.as_deref_mut().expect("the scheduler has read-only data");
        rodata.slice_ns = tunables.slice_ns;
        rodata.wakeup_gran_ns = tunables.wakeup_gran_ns;
        rodata.pfs_timeslot_ns = tunables.pfs_timeslot_ns;
        rodata.pfs_t_m_ns = tunables.pfs_t_m_ns;
        rodata.pfs_x_pct = tunables.pfs_x_pct;
        rodata.pfs_y_pct = tunables.pfs_y_pct;
        rodata.lend_ns = tunables.lend_ns;
        rodata.timeshare = tunables.timeshare;
        rodata.stall_tid = tunables.stall_tid;
        rodata.nr_cpus = libbpf_rs::num_possible_cpus().map_err(bpf("counting CPUs for"))? as u32;
        let ops = open.struct_ops.schedlab_ops_mut();
        ops.timeout_ms = tunables.timeout_ms;
        // The kernel refuses the load if CPUs came or went since this was read, rather
        // than run with a stale view of them.
        ops.hotplug_seq = fs::read_to_string(format!("{SYSFS}/hotplug_seq"))?.trim().parse().unwrap_or(0);
        let mut skel = open.load().map_err(bpf("loading"))?;
        let exec = skel.progs.schedlab_exec.attach().map_err(bpf("attaching the exec tracepoint of"))?;
        let link = skel.maps.schedlab_ops.attach_struct_ops().map_err(bpf("attaching"))?;
        let scheduler = Scheduler { link: Some(link), _exec: exec, skel, _object: object };
        scheduler.wait_enabled(wait)?;
        Ok(scheduler)
    }

    fn wait_enabled(&self, wait: Duration) -> Result<(), ExtError> {
        let start = Instant::now();
        loop {
            if let Some(exit) = self.exit() {
                return Err(ExtError::Exited(exit));
            }
            let state = State::read()?;
            if matches!(state, State::Enabled(_)) {
                return Ok(());
            }
            if start.elapsed() >= wait {
                return Err(ExtError::NotEnabled(wait, state));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Why the kernel ended the scheduler, once it has.
    pub fn exit(&self) -> Option<Exit> {
        let bss = self.skel.maps.bss_data.as_deref()?;
        // The BPF side writes the kind last.
        let kind = unsafe { std::ptr::read_volatile(&bss.exit_info.kind) };
        if kind == 0 {
            return None;
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        let info = &bss.exit_info;
        Some(Exit {
            kind,
            code: info.exit_code,
            reason: c_string(&info.reason),
            message: c_string(&info.msg),
        })
    }

    /// The scheduler's counters since it was loaded.
    pub fn stats(&self) -> Result<Stats, ExtError> {
        let map = &self.skel.maps.stats;
        let mut counters = Vec::new();
        let count = self.skel.maps.rodata_data.map_or(0, |r| r.stat_count);
        for key in 0..count {
            let per_cpu = map
                .lookup_percpu(&key.to_ne_bytes(), MapFlags::ANY)
                .map_err(|source| ExtError::Bpf { step: "reading the stats of", source })?;
            let sum = per_cpu
                .unwrap_or_default()
                .iter()
                .map(|v| u64::from_ne_bytes(v[..8].try_into().unwrap_or([0; 8])))
                .sum();
            counters.push(sum);
        }
        let queued = self.skel.maps.bss_data.as_deref().map(|b| b.class_queued.to_vec()).unwrap_or_default();
        Ok(Stats::from_counters(&counters, queued))
    }

    /// Sets class `id` (1 to MAX_CLASSES − 1) to `plan`.
    pub fn set_class(&mut self, id: u32, plan: &ClassPlan) -> Result<(), ExtError> {
        if id == 0 || id >= MAX_CLASSES {
            return Err(PlanError::ClassId(id).into());
        }
        plan.check()?;
        let value = types::class_plan {
            cpus: plan.cpu_words()?,
            weight: plan.weight,
            in_use: 1,
            slice_ns: plan.slice_ns,
        };
        update(&self.skel.maps.classes, id, bytes(&value))?;
        if let Some(data) = self.skel.maps.data_data.as_deref_mut() {
            data.nr_classes = data.nr_classes.max(id + 1);
        }
        Ok(())
    }

    /// Makes process `tgid` a member of class `class_id` (0: the default class), its main
    /// thread following PFS `program` (0: none).
    pub fn set_process(&mut self, tgid: u32, class_id: u32, program: u32) -> Result<(), ExtError> {
        if class_id >= MAX_CLASSES {
            return Err(PlanError::ClassId(class_id).into());
        }
        let value = types::process_plan { class_id, program };
        update(&self.skel.maps.processes, tgid, bytes(&value))
    }

    /// Forgets process `tgid` (it exited or left the plan).
    pub fn forget_process(&mut self, tgid: u32) -> Result<(), ExtError> {
        delete(&self.skel.maps.processes, tgid)
    }

    /// Sets the predicted bursts (`T_p`, ns, in order from exec) of PFS `program`, at
    /// most [`MAX_FLOW_BURSTS`]; the program's bursts past these (an earlier, longer
    /// flow's) are deleted.
    pub fn set_bursts(&mut self, program: u32, bursts: &[u64]) -> Result<(), ExtError> {
        if program == 0 {
            return Err(PlanError::Program.into());
        }
        if bursts.len() > MAX_FLOW_BURSTS {
            return Err(PlanError::FlowLength(bursts.len()).into());
        }
        let map = &self.skel.maps.bursts;
        let key = |index: usize| types::burst_key { program, index: index as u32 };
        for (index, t_p) in bursts.iter().enumerate() {
            map.update(bytes(&key(index)), &t_p.to_ne_bytes(), MapFlags::ANY)
                .map_err(|source| ExtError::Bpf { step: "writing the bursts of", source })?;
        }
        for index in bursts.len()..MAX_FLOW_BURSTS {
            match map.delete(bytes(&key(index))) {
                Ok(()) => {}
                Err(e) if e.kind() == libbpf_rs::ErrorKind::NotFound => break,
                Err(source) => return Err(ExtError::Bpf { step: "writing the bursts of", source }),
            }
        }
        Ok(())
    }

    /// The predicted bursts of PFS `program` as the scheduler has adapted them, the first
    /// `count` of them.
    pub fn bursts(&self, program: u32, count: usize) -> Result<Vec<u64>, ExtError> {
        let mut out = Vec::with_capacity(count);
        for index in 0..count as u32 {
            let key = types::burst_key { program, index };
            match self
                .skel
                .maps
                .bursts
                .lookup(bytes(&key), MapFlags::ANY)
                .map_err(|source| ExtError::Bpf { step: "reading the bursts of", source })?
            {
                Some(v) => out.push(u64::from_ne_bytes(v[..8].try_into().unwrap_or([0; 8]))),
                None => break,
            }
        }
        Ok(out)
    }

    /// Names `provider` (a tid) as the provider of `requester` (a tid).
    pub fn set_provider(&mut self, requester: u32, provider: u32, confidence: u32) -> Result<(), ExtError> {
        let value = types::provider { tid: provider, confidence };
        update(&self.skel.maps.providers, requester, bytes(&value))
    }

    /// `requester` has no provider any more.
    pub fn forget_provider(&mut self, requester: u32) -> Result<(), ExtError> {
        delete(&self.skel.maps.providers, requester)
    }

    /// Makes the changes of classes and processes count: each task reads its plan again
    /// at its next enqueue.
    pub fn publish(&mut self) {
        if let Some(bss) = self.skel.maps.bss_data.as_deref_mut() {
            bss.plan_gen = bss.plan_gen.wrapping_add(1);
        }
    }

    /// Unloads the scheduler and waits (up to 5 s) until the kernel has put every task
    /// back in the fair class; returns the exit the kernel reported.
    pub fn unload(mut self) -> Option<Exit> {
        drop(self.link.take());
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if matches!(State::read(), Ok(State::Disabled) | Ok(State::Absent)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.exit()
    }
}
