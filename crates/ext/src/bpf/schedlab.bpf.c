// SPDX-License-Identifier: GPL-2.0-only
/*
 * schedlab's sched_ext scheduler: the papers' mechanisms at dispatch time, fed by the
 * decision core in user space through maps (intf.h).
 *
 * Fair share (vtime). Every task that is not real-time or deadline is scheduled here.
 * A task belongs to a class (paper 000; class 0 when the plan names none) and each
 * class has a dispatch queue ordered by the tasks' virtual time: the CPU time they
 * used, scaled by 100 / their weight (p->scx.weight: 100 at nice 0), so a task of
 * weight w gets w / sum(w) of its class. Between classes the same rule holds one
 * level up: a CPU takes the next task from the class with the least class vtime (its
 * tasks' CPU time scaled by 100 / the class's weight), among the classes whose CPU set
 * holds the CPU, and from any class when those have none (so no CPU idles beside
 * waiting work). A task that slept gets at most one slice of credit: its vtime is
 * raised to the least vtime of its class's running tasks (clock_of) minus one slice
 * when it wakes; a class idle for a while likewise, against the classes' clock. So
 * nothing starves.
 *
 * Slice ends. A task whose slice ended keeps its CPU for another slice when it still
 * comes first (its vtime, or its class's, charged with the stretch it just ran, below
 * that of every task queued that the CPU may run): the kernel asks for the next task
 * before it queues the one whose slice ended, so without this the first of the queue
 * would run even when it is behind.
 *
 * Wake-up preemption. A waking task whose vtime is more than `wakeup_gran_ns` ahead of
 * a running task of its class (or whose class is that far ahead of the running task's
 * class) preempts the one furthest behind, as EEVDF preempts at wake-up; except at a
 * synchronous waking (SCX_WAKE_SYNC: a pipe or socket write, whose waker says it will
 * block soon), where the woken task waits for a CPU to free up. Without that exception,
 * on 2 CPUs with a thread each, every receiver hackbench's senders woke preempted a
 * sender at once and the two swapped at each message: 10 x the switches of a run
 * without preemption and 3-4 x its time. A timer's or a futex's waking still preempts
 * (cyclictest beside 2 hogs per CPU: 0.8 x bare Linux's mean latency; protecting a task
 * that just got its CPU for 1 ms instead, as EEVDF's RUN_TO_PARITY does, made it 20 x,
 * as cyclictest wakes every millisecond). A preempting task that would be first in its
 * class's queue goes straight to the victim's local queue (see schedlab_enqueue).
 *
 * Time sharing (`timeshare`, off by default): within a class, round robin instead of
 * vtime, as the time-sharing scheduler paper 001's PFS was built on: a woken task and a
 * task whose slice ended go to the back of the class's queue, and a waking never
 * preempts. (Under vtime, a sleeper's credit often lets a burst run past its slice
 * anyway, so PFS has less to delay.) Between classes, the class vtime still rules.
 *
 * PFS (paper 001). A process's main thread whose program has a flow sequence (the
 * `bursts` map: predicted CPU time T_p of each burst since exec) keeps the paper's
 * current information: C_s (when it started running this stretch), T_e (CPU time left
 * in the burst) and the burst index. At slice expiry (ops.tick sees the slice at 0:
 * the kernel checks slices at the tick, so the delay has the tick's granularity)
 * T_e -= now - C_s; if 0 <= T_e and T_e rounded up to the timeslot <= T_m, the task
 * keeps the CPU for T_e rounded up to the timeslot (at least one timeslot), else the
 * next task runs. At a block the prediction adapts: with r = T_e - (now - C_s),
 * T_p -= r * x / 100 when r < 0 (the burst ran longer) and T_p -= r * y / 100 when
 * r > 0, and the next burst's T_p becomes T_e.
 *
 * SWAP (paper 004). User space names each requester's provider once SWAP's confidence
 * passes its threshold (the `providers` map). When a requester wakes its provider, the
 * provider runs in the requester's turn until the requester wakes again or `lend_ns`
 * (the bound T) passes: it is queued at the requester's vtime rather than its own, and
 * its CPU time advances that turn as the requester's own would (at the requester's
 * weight: SWAP's proxy execution charges the requester), so it runs as soon as the
 * requester stops, for the requester's share, with no round trip through user space.
 * Along a chain (a provider that is itself a requester wakes its own provider while it
 * holds a turn) the turn is passed on, for no longer than it is held. The lend starts
 * at the waking (ops.select_cpu runs in the waker's context), which is where a
 * request-reply exchange hands over: the requester writes, then blocks on the reply;
 * and again whenever the requester blocks while its provider is runnable (a requester
 * woken for nothing, as a UNIX socket's reader is when its peer reads and frees write
 * space, ends the lend and must give it again; a provider that was still running when
 * the request came was never woken). A requester that blocks hands its CPU to its
 * provider at once when the provider waits in a queue (hand_off): the turn it leaves
 * is the one lent.
 * Communication-aware placement: a requester woken by its provider goes to the
 * provider's CPU when nothing is queued there.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kfuncs.bpf.h"
#include "intf.h"

char _license[] SEC("license") = "GPL";

_Static_assert(sizeof(struct class_plan) == 144, "class_plan layout is shared with plan.rs");
_Static_assert(sizeof(struct process_plan) == 8, "process_plan layout is shared with plan.rs");
_Static_assert(sizeof(struct burst_key) == 8, "burst_key layout is shared with plan.rs");
_Static_assert(sizeof(struct provider) == 8, "provider layout is shared with plan.rs");
_Static_assert(sizeof(struct exit_info) == 1168, "exit_info layout is shared with plan.rs");

/* Tunables, set by user space before the load. */
const volatile u64 slice_ns = 5000000;
const volatile u64 wakeup_gran_ns = 1000000;
/* PFS: the timeslot, T_m, x and y. */
const volatile u64 pfs_timeslot_ns = 1000000;
const volatile u64 pfs_t_m_ns = 20000000;
const volatile u32 pfs_x_pct = 10;
const volatile u32 pfs_y_pct = 10;
/* SWAP: how long a provider keeps its requester's turn at most (T). */
const volatile u64 lend_ns = 10000000;
/* Round robin within a class instead of vtime. */
const volatile bool timeshare;
/* The number of CPU ids (scanned for wake-up preemption). */
const volatile u32 nr_cpus = 1;
/* For user space: how many counters `stats` has. */
const volatile u32 stat_count = STAT_COUNT;

/* For the harness only: a task (tid) that is never dispatched, so that the kernel's
 * watchdog must eject the scheduler (0: none). */
const volatile u32 stall_tid;
/* Where the stalled task waits: a queue no CPU takes from. */
#define STALL_DSQ MAX_CLASSES

/* Bumped by user space after it changed `classes` or `processes`: each task reads its
 * plan again at its next enqueue. */
u32 plan_gen;
/* One more than the highest class id user space set up: dispatch looks no further. */
u32 nr_classes = 1;
/* The exit of the scheduler, once it has exited (kind != 0). */
struct exit_info exit_info;
/* Sampled queue length of each class (at dispatch). */
u32 class_queued[MAX_CLASSES];

/* The class clocks: each class's vtime, and the highest vtime of a task of each class
 * that started running (a new task's vtime; a waking task's floor, less one slice,
 * when none of its class runs). */
static u64 class_vtime[MAX_CLASSES];
static u64 class_clock[MAX_CLASSES];
/* The least class vtime dispatched lately: the floor of a class that was idle. */
static u64 classes_clock;

/* What each CPU runs, for wake-up preemption. */
struct running {
	u64 vtime;
	u32 class_id;
	u32 busy;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CLASSES);
	__type(key, u32);
	__type(value, struct class_plan);
} classes SEC(".maps");

/* LRU: an entry user space did not delete (a lost exit) gives way to new ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct process_plan);
} processes SEC(".maps");

/* LRU: the bursts of programs not run for a while give way to new ones; a missing
 * burst only means no PFS for that burst. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 262144);
	__type(key, struct burst_key);
	__type(value, u64);
} bursts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, u32);
	__type(value, struct provider);
} providers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_COUNT);
	__type(key, u32);
	__type(value, u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CPUS);
	__type(key, u32);
	__type(value, struct running);
} cpu_running SEC(".maps");

/* Per task: its vtime, its plan, PFS's current information and SWAP's lend. */
struct task_ctx {
	u64 vtime;
	u64 started;
	/* PFS: C_s (0: not on the CPU this stretch), T_e, the burst index since exec. */
	u64 c_s;
	s64 t_e;
	u32 burst;
	u32 has_burst;
	/* The plan, as of plan generation `plan_gen`. */
	u32 class_id;
	u32 program;
	u32 plan_gen;
	/* SWAP: the requester whose turn this provider has, the turn's vtime (advanced by
	 * the provider's CPU time at the requester's weight), until when. */
	u32 lender;
	u32 lent_weight;
	u64 lent_vtime;
	u64 lent_until;
	/* Whether the waking select_cpu just saw was synchronous (no wake-up preemption). */
	u32 sync_wake;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} tasks SEC(".maps");

static __always_inline void count(enum schedlab_stat s)
{
	u32 key = s;
	u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		(*v)++;
}

static __always_inline struct task_ctx *ctx_of(struct task_struct *p)
{
	return bpf_task_storage_get(&tasks, p, 0, 0);
}

/* Whether `t` runs in a requester's turn at `now`: a lend holds and that turn is ahead
 * of its own vtime. It is then queued at that turn, and its CPU time is charged to it. */
static __always_inline bool in_lent_turn(const struct task_ctx *t, u64 now)
{
	return t->lent_until > now && t->lent_vtime < t->vtime;
}

static __always_inline u32 class_index(u32 c)
{
	return c < MAX_CLASSES ? c : 0;
}

static __always_inline bool cpu_in(const struct class_plan *plan, s32 cpu)
{
	u32 word = (u32)cpu / 64;

	if (word >= CPU_WORDS)
		return false;
	return plan->cpus[word] & (1ULL << ((u32)cpu % 64));
}

static __always_inline u64 max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

/* Whether class `c` takes `cpu` first: it has no CPU set, or `cpu` is in it. */
static __always_inline bool class_has_cpu(u32 c, s32 cpu)
{
	u32 key = c;
	struct class_plan *plan = bpf_map_lookup_elem(&classes, &key);

	return !plan || !plan->in_use || cpu_in(plan, cpu);
}

/* A task's weight (p->scx.weight: 100 at nice 0). */
static __always_inline u64 task_weight(const struct task_struct *p)
{
	return p->scx.weight ? p->scx.weight : 100;
}

/* PFS: T_e of the task's current burst, from its program's flow sequence. */
static __always_inline void pfs_load(struct task_ctx *t)
{
	struct burst_key key = { .program = t->program, .index = t->burst };
	u64 *t_p;

	t->has_burst = 0;
	if (!t->program)
		return;
	t_p = bpf_map_lookup_elem(&bursts, &key);
	if (!t_p)
		return;
	t->t_e = (s64)*t_p;
	t->has_burst = 1;
}

/* Reads the task's plan again when user space changed it. */
static __always_inline void refresh(struct task_struct *p, struct task_ctx *t)
{
	u32 gen = plan_gen;
	u32 tgid = BPF_CORE_READ(p, tgid);
	struct process_plan *plan;
	u32 program = 0;

	if (t->plan_gen == gen)
		return;
	t->plan_gen = gen;
	plan = bpf_map_lookup_elem(&processes, &tgid);
	t->class_id = plan ? class_index(plan->class_id) : 0;
	/* A PFS describes a process's main flow: its main thread's bursts. */
	if (plan && BPF_CORE_READ(p, pid) == tgid)
		program = plan->program;
	if (program != t->program) {
		t->program = program;
		pfs_load(t);
	}
}

static __always_inline u64 slice_of(u32 class_id)
{
	u32 c = class_index(class_id);
	struct class_plan *plan = bpf_map_lookup_elem(&classes, &c);

	return plan && plan->slice_ns ? plan->slice_ns : slice_ns;
}

/* The requester `waker` wakes its provider `p`: p takes the requester's turn. */
static __always_inline void lend_turn(struct task_struct *waker, struct task_struct *p, struct task_ctx *pt)
{
	u32 requester = BPF_CORE_READ(waker, pid);
	struct provider *prov = bpf_map_lookup_elem(&providers, &requester);
	struct task_ctx *wt;
	u64 now;

	if (!prov || prov->tid != BPF_CORE_READ(p, pid))
		return;
	wt = ctx_of(waker);
	if (!wt)
		return;
	now = bpf_ktime_get_ns();
	if (pt->lender != requester || pt->lent_until <= now)
		count(STAT_LEND);
	pt->lender = requester;
	if (in_lent_turn(wt, now)) {
		/* A chain: the requester runs in its own requester's turn; it passes that
		 * turn on, for no longer than it holds it. */
		pt->lent_weight = wt->lent_weight;
		pt->lent_vtime = wt->lent_vtime;
		pt->lent_until = wt->lent_until < now + lend_ns ? wt->lent_until : now + lend_ns;
	} else {
		pt->lent_weight = task_weight(waker);
		pt->lent_vtime = wt->vtime;
		pt->lent_until = now + lend_ns;
	}
}

/* The provider of requester `p`, if user space named one and it still exists
 * (acquired: the caller releases it). */
static __always_inline struct task_struct *provider_of(struct task_struct *p)
{
	u32 requester = BPF_CORE_READ(p, pid);
	struct provider *prov = bpf_map_lookup_elem(&providers, &requester);

	return prov ? bpf_task_from_pid(prov->tid) : NULL;
}

/* The requester `p` blocks: its provider, if runnable, takes its turn now. */
static __always_inline void lend_at_block(struct task_struct *p)
{
	struct task_struct *provider = provider_of(p);
	struct task_ctx *pt;

	if (!provider)
		return;
	if ((provider->scx.flags & SCX_TASK_QUEUED) && (pt = ctx_of(provider)))
		lend_turn(p, provider, pt);
	bpf_task_release(provider);
}

/* The requester `p` wakes: its provider's lend ends. */
static __always_inline void end_lend(struct task_struct *p)
{
	struct task_struct *provider = provider_of(p);
	struct task_ctx *pt;

	if (!provider)
		return;
	pt = ctx_of(provider);
	if (pt && pt->lender == BPF_CORE_READ(p, pid))
		pt->lent_until = 0;
	bpf_task_release(provider);
}

/* Whether `p` is a requester being woken by its provider `waker`. */
static __always_inline bool woken_by_provider(struct task_struct *p, struct task_struct *waker)
{
	u32 requester = BPF_CORE_READ(p, pid);
	struct provider *prov = bpf_map_lookup_elem(&providers, &requester);

	return prov && prov->tid == BPF_CORE_READ(waker, pid);
}

s32 BPF_STRUCT_OPS(schedlab_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_struct *waker = bpf_get_current_task_btf();
	struct task_ctx *t = ctx_of(p);
	bool idle = false;
	s32 cpu;

	if (!t)
		return prev_cpu;
	refresh(p, t);
	t->sync_wake = !!(wake_flags & SCX_WAKE_SYNC);
	lend_turn(waker, p, t);
	if (woken_by_provider(p, waker)) {
		cpu = bpf_get_smp_processor_id();
		if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr) &&
		    scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | (u32)cpu) == 0) {
			count(STAT_NEAR_PROVIDER);
			dsq_insert(p, SCX_DSQ_LOCAL, slice_of(t->class_id), 0);
			return cpu;
		}
	}
	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &idle);
	if (idle && class_has_cpu(class_index(t->class_id), cpu)) {
		count(STAT_DIRECT);
		dsq_insert(p, SCX_DSQ_LOCAL, slice_of(t->class_id), 0);
	}
	return cpu;
}

/*
 * How many CPUs a waking looks at (for its clock and a task to preempt): on bigger
 * machines the SCAN_CPUS ids from the waking task's CPU on, wrapping, so that a waking
 * costs the same on 1,024 CPUs as on 64, as the kernel's own search for an idle CPU
 * (select_idle_cpu) bounds its scan. Neighbouring ids usually share a cache.
 */
#define SCAN_CPUS 64

/* The `i`-th CPU a waking on `start` looks at. */
static __always_inline u32 scan_cpu(u32 start, u32 i)
{
	u32 cpu = start + i;

	return cpu < nr_cpus ? cpu : cpu - nr_cpus;
}

static __always_inline u32 scan_len(void)
{
	return nr_cpus < SCAN_CPUS ? nr_cpus : SCAN_CPUS;
}

/*
 * The clock a waking task of class `c` is placed against: the least vtime among the
 * class's running tasks (on the CPUs scanned from `start`), or the class clock when
 * none runs there. Not the class clock (the
 * highest vtime that started running): tasks bound to different CPUs never compete,
 * so their vtimes drift apart, and beside hogs bound to each CPU the highest pulled a
 * sleeper's vtime above the hogs of the other CPU, where it then waited for a slice
 * end (cyclictest's median wake-up latency 4 ms, bare Linux's 0.08 ms).
 */
static __always_inline u64 clock_of(u32 c, u32 start)
{
	u64 least = ~0ULL;
	u32 i;

	bpf_for(i, 0, scan_len()) {
		u32 cpu = scan_cpu(start, i);
		struct running *r;

		r = bpf_map_lookup_elem(&cpu_running, &cpu);
		if (r && r->busy && r->class_id == c && r->vtime < least)
			least = r->vtime;
	}
	return least != ~0ULL ? least : class_clock[c];
}

/* The CPU (of those scanned from `start`) whose running task is furthest behind `p`
 * (vtime `vtime`, class `c`), if one is more than wakeup_gran_ns behind; -1 for none. */
static __always_inline s32 preempt_victim(struct task_struct *p, u32 c, u64 vtime, u32 start)
{
	s32 victim = -1;
	u64 worst = 0;
	u32 i;

	bpf_for(i, 0, scan_len()) {
		u32 cpu = scan_cpu(start, i);
		struct running *r;
		u64 ahead, mine;

		r = bpf_map_lookup_elem(&cpu_running, &cpu);
		if (!r || !r->busy || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		if (r->class_id == c) {
			ahead = r->vtime;
			mine = vtime;
		} else {
			ahead = class_vtime[class_index(r->class_id)];
			mine = class_vtime[class_index(c)];
		}
		if (ahead > mine + wakeup_gran_ns && ahead - mine > worst) {
			worst = ahead - mine;
			victim = cpu;
		}
	}
	return victim;
}

/* Whether a task of vtime `vtime` would be first in class `c`'s queue. */
static __always_inline bool first_in_class(u32 c, u64 vtime)
{
	struct task_struct *q;

	bpf_for_each(scx_dsq, q, c, 0)
		return q->scx.dsq_vtime >= vtime;
	return true;
}

void BPF_STRUCT_OPS(schedlab_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *t = ctx_of(p);
	u64 now = bpf_ktime_get_ns();
	u64 vtime, slice, floor;
	s32 idle, victim = -1;
	bool sync;
	u32 c, start;

	if (stall_tid && BPF_CORE_READ(p, pid) == stall_tid) {
		dsq_insert(p, STALL_DSQ, slice_ns, enq_flags);
		return;
	}
	if (!t) {
		dsq_insert(p, 0, slice_ns, enq_flags);
		return;
	}
	refresh(p, t);
	c = class_index(t->class_id);
	slice = slice_of(c);
	/* Read once: select_cpu sets it at each waking (it is skipped for a task bound to
	 * one CPU). */
	sync = t->sync_wake;
	t->sync_wake = 0;

	/* At most one slice of credit for a sleeper, and for a class that was idle. */
	start = (u32)scx_bpf_task_cpu(p);
	if (start >= nr_cpus)
		start = 0;
	floor = clock_of(c, start);
	floor = floor > slice ? floor - slice : 0;
	t->vtime = max_u64(t->vtime, floor);
	if (scx_bpf_dsq_nr_queued(c) == 0) {
		floor = classes_clock > slice ? classes_clock - slice : 0;
		class_vtime[c] = max_u64(class_vtime[c], floor);
	}
	vtime = t->vtime;
	if (in_lent_turn(t, now)) {
		vtime = t->lent_vtime;
		count(STAT_LEND_USED);
	}

	count(STAT_ENQUEUE);
	idle = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	/*
	 * An idle CPU the task's class may use takes it at once, on its local queue, as
	 * select_cpu's direct path does: a waking that skipped select_cpu (a task bound to
	 * one CPU, as cyclictest's measuring thread is) would otherwise go through the
	 * class's queue and that CPU's ops.dispatch after its kick, which in the VM was most
	 * of the 9 us an idle enqueue took.
	 */
	if (idle >= 0 && class_has_cpu(c, idle)) {
		count(STAT_DIRECT);
		dsq_insert(p, SCX_DSQ_LOCAL_ON | (u32)idle, slice, enq_flags);
		scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
		return;
	}
	if (idle < 0 && (enq_flags & SCX_ENQ_WAKEUP) && !timeshare && !sync)
		victim = preempt_victim(p, c, vtime, start);
	/*
	 * A waking task that preempts, and would be first in its class's queue anyway, goes
	 * straight to the victim's local queue, to run there next: as EEVDF's wake-up
	 * preemption, it costs no trip through ops.dispatch (and no second look at the
	 * queue) on the victim, which was half of a woken task's added latency
	 * (cyclictest beside hogs, in the VM). Its class's CPU set is kept.
	 */
	if (victim >= 0 && class_has_cpu(c, victim) && first_in_class(c, vtime)) {
		count(STAT_PREEMPT);
		dsq_insert(p, SCX_DSQ_LOCAL_ON | (u32)victim, slice, enq_flags | SCX_ENQ_PREEMPT);
		return;
	}
	if (timeshare)
		/* The back of the queue; a provider in its requester's turn, the front. */
		dsq_insert(p, c, slice, enq_flags | (vtime < t->vtime ? ENQ_HEAD : 0));
	else
		dsq_insert_vtime(p, c, slice, vtime, enq_flags);

	if (idle >= 0) {
		scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
	} else if (victim >= 0) {
		count(STAT_PREEMPT);
		scx_bpf_kick_cpu(victim, SCX_KICK_PREEMPT);
	}
}

/* How many queued tasks keep_prev() looks at for one that may run on the CPU. */
#define KEEP_SCAN 32

/* The weight a class's CPU time is charged at. */
static __always_inline u64 class_weight(u32 c)
{
	struct class_plan *plan = bpf_map_lookup_elem(&classes, &c);

	return plan && plan->in_use && plan->weight ? plan->weight : 100;
}

/*
 * Whether `prev`, whose slice ended on `cpu` while it can still run, comes before
 * every task queued that `cpu` may run; then it keeps the CPU for another slice.
 *
 * The kernel asks for the next task (ops.dispatch) before it puts `prev` back on a
 * queue (ops.enqueue), so without this `prev` would always give way, even to tasks
 * with more vtime, and a provider in its requester's turn would wait for another
 * CPU's slice to end at each of its own slices' ends. `prev` is compared as it would
 * be queued: its vtime (or its lent turn) charged with the CPU time of this stretch,
 * which ops.stopping has not charged yet; between classes, its class's vtime likewise.
 * Under `timeshare` only a provider in its requester's turn keeps the CPU (it would
 * go to the front of the queue). `best` is the class dispatch would take from
 * (`best_vtime` its class vtime, `best_own` whether the CPU is one of its own), -1
 * for none. Only the first KEEP_SCAN queued tasks are looked at; past them `prev`
 * gives way, as it did before.
 */
static __always_inline bool keep_prev(struct task_struct *prev, s32 cpu, s32 best, bool best_own,
				      u64 best_vtime)
{
	struct task_ctx *t = ctx_of(prev);
	struct task_struct *q;
	struct running *r;
	u64 now, used, mine;
	bool own, lent;
	u32 c, seen = 0;

	if (best < 0 || !t || !(prev->scx.flags & SCX_TASK_QUEUED))
		return false;
	c = class_index(t->class_id);
	own = class_has_cpu(c, cpu);
	if (best_own && !own)
		return false;
	now = bpf_ktime_get_ns();
	used = now - t->started;
	if (best != c && own == best_own && class_vtime[c] + used * 100 / class_weight(c) >= best_vtime)
		return false;

	lent = in_lent_turn(t, now);
	mine = lent ? t->lent_vtime + used * 100 / t->lent_weight : t->vtime + used * 100 / task_weight(prev);
	if (timeshare && !lent && scx_bpf_dsq_nr_queued(c) > 0)
		return false;
	bpf_for_each(scx_dsq, q, c, 0) {
		if (++seen > KEEP_SCAN)
			return false;
		if (!bpf_cpumask_test_cpu(cpu, q->cpus_ptr))
			continue;
		if (!timeshare && q->scx.dsq_vtime < mine)
			return false;
		break;
	}

	task_set_slice(prev, slice_of(c));
	/* A new stretch for PFS if ops.tick ended the last one. */
	if (!t->c_s)
		t->c_s = now;
	r = bpf_map_lookup_elem(&cpu_running, &cpu);
	if (r)
		r->vtime = mine;
	count(STAT_KEEP);
	return true;
}

/*
 * SWAP's hand-off: `prev` just blocked on `cpu` and lent its turn to its provider
 * (lend_at_block), which waits in a class queue: the provider moves to this CPU and runs
 * next, in the turn the requester leaves, as the requester would have gone on running.
 * Only where the provider's class may run (its CPU set, if it has one), and only if the
 * provider is among the first HANDOFF_SCAN tasks of its queue.
 */
#define HANDOFF_SCAN 64
static __always_inline bool hand_off(struct task_struct *prev, s32 cpu)
{
	struct task_struct *provider, *q;
	struct task_ctx *pt;
	bool moved = false;
	u32 c, tid, seen = 0;

	provider = provider_of(prev);
	if (!provider)
		return false;
	pt = ctx_of(provider);
	tid = BPF_CORE_READ(provider, pid);
	if (!pt || pt->lender != BPF_CORE_READ(prev, pid) || pt->lent_until <= bpf_ktime_get_ns() ||
	    !bpf_cpumask_test_cpu(cpu, provider->cpus_ptr))
		goto out;
	c = class_index(pt->class_id);
	if (!class_has_cpu(c, cpu))
		goto out;
	bpf_for_each(scx_dsq, q, c, 0) {
		if (++seen > HANDOFF_SCAN)
			break;
		if (q->pid == tid) {
			moved = dsq_move(DSQ_ITER, q, SCX_DSQ_LOCAL, 0);
			break;
		}
	}
	if (moved)
		count(STAT_HANDOFF);
out:
	bpf_task_release(provider);
	return moved;
}

void BPF_STRUCT_OPS(schedlab_dispatch, s32 cpu, struct task_struct *prev)
{
	u64 best_vtime = ~0ULL;
	bool best_own = false;
	s32 best = -1;
	u32 c;

	if (prev && !(prev->scx.flags & SCX_TASK_QUEUED) && hand_off(prev, cpu))
		return;
	bpf_for(c, 0, nr_classes) {
		struct class_plan *plan;
		u32 key = c;
		bool own;
		s32 queued;

		if (c >= MAX_CLASSES)
			break;
		/* The key is a copy: `c` stays in a register, with the bound just checked. */
		plan = bpf_map_lookup_elem(&classes, &key);
		if (c && (!plan || !plan->in_use))
			continue;
		queued = scx_bpf_dsq_nr_queued(c);
		class_queued[c] = queued > 0 ? queued : 0;
		if (queued <= 0)
			continue;
		own = !plan || !plan->in_use || cpu_in(plan, cpu);
		if ((own && !best_own) || (own == best_own && class_vtime[c] < best_vtime)) {
			best = c;
			best_own = own;
			best_vtime = class_vtime[c];
		}
	}
	if (best < 0)
		return;
	if (prev && keep_prev(prev, cpu, best, best_own, best_vtime))
		return;
	if (dsq_move_to_local(best)) {
		count(best_own ? STAT_DISPATCH : STAT_STEAL);
		classes_clock = max_u64(classes_clock, best_vtime);
		return;
	}
	/* Every task of the best class is bound elsewhere: take any that may run here. */
	bpf_for(c, 0, nr_classes) {
		if (scx_bpf_dsq_nr_queued(c) > 0 && dsq_move_to_local(c)) {
			count(STAT_STEAL);
			return;
		}
	}
}

void BPF_STRUCT_OPS(schedlab_runnable, struct task_struct *p, u64 enq_flags)
{
	end_lend(p);
}

void BPF_STRUCT_OPS(schedlab_running, struct task_struct *p)
{
	struct task_ctx *t = ctx_of(p);
	u32 cpu = bpf_get_smp_processor_id();
	struct running *r;
	u32 c;

	if (!t)
		return;
	t->started = bpf_ktime_get_ns();
	if (!t->c_s)
		t->c_s = t->started;
	c = class_index(t->class_id);
	class_clock[c] = max_u64(class_clock[c], t->vtime);
	r = bpf_map_lookup_elem(&cpu_running, &cpu);
	if (r) {
		r->vtime = in_lent_turn(t, t->started) ? t->lent_vtime : t->vtime;
		r->class_id = c;
		r->busy = 1;
	}
}

/* PFS at a block (phase 3): the burst's prediction adapts, the next burst begins. */
static __always_inline void pfs_block(struct task_ctx *t, u64 now)
{
	struct burst_key key = { .program = t->program, .index = t->burst };
	u64 ran = t->c_s ? now - t->c_s : 0;
	u64 *t_p;

	if (t->has_burst && (t_p = bpf_map_lookup_elem(&bursts, &key))) {
		s64 r = t->t_e - (s64)ran;
		u64 step;

		/* r < 0: the burst ran longer than predicted, T_p grows by |r| x / 100;
		 * r > 0: it ended early, T_p shrinks by r y / 100 (not below 0). */
		if (r < 0) {
			step = (u64)(-r) * pfs_x_pct / 100;
			*t_p += step;
		} else {
			step = (u64)r * pfs_y_pct / 100;
			*t_p = *t_p > step ? *t_p - step : 0;
		}
		count(STAT_ADAPT);
	}
	t->burst++;
	t->c_s = 0;
	pfs_load(t);
}

void BPF_STRUCT_OPS(schedlab_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *t = ctx_of(p);
	u32 cpu = bpf_get_smp_processor_id();
	u64 now = bpf_ktime_get_ns();
	struct running *r;
	u64 used;
	u32 c;

	if (!t)
		return;
	used = now - t->started;
	if (in_lent_turn(t, now)) {
		/* The provider ran in its requester's turn: the turn advances as the
		 * requester's would (its weight); the provider's own vtime is untouched.
		 * (A lend behind the provider's own vtime is not its turn: it was queued,
		 * and is charged, at its own.) */
		t->lent_vtime += used * 100 / t->lent_weight;
	} else {
		t->vtime += used * 100 / task_weight(p);
	}
	c = class_index(t->class_id);
	__sync_fetch_and_add(&class_vtime[c], used * 100 / class_weight(c));

	r = bpf_map_lookup_elem(&cpu_running, &cpu);
	if (r)
		r->busy = 0;

	if (!runnable) {
		pfs_block(t, now);
		lend_at_block(p);
	} else if (t->c_s) {
		/* Preempted, or its slice ended: the CPU time comes off T_e. */
		t->t_e -= (s64)(now - t->c_s);
		t->c_s = 0;
	}
}

void BPF_STRUCT_OPS(schedlab_tick, struct task_struct *p)
{
	struct task_ctx *t;
	u64 now, slots;

	if (p->scx.slice)
		return;
	t = ctx_of(p);
	if (!t)
		return;
	/* A flow handed over while the task ran (its first burst, from the exec). */
	refresh(p, t);
	if (!t->has_burst || !t->c_s)
		return;
	/* PFS phase 2: the slice is used up. */
	now = bpf_ktime_get_ns();
	t->t_e -= (s64)(now - t->c_s);
	t->c_s = now;
	if (t->t_e < 0)
		goto dispatch;
	slots = ((u64)t->t_e + pfs_timeslot_ns - 1) / pfs_timeslot_ns * pfs_timeslot_ns;
	if (slots > pfs_t_m_ns)
		goto dispatch;
	task_set_slice(p, slots ? slots : pfs_timeslot_ns);
	count(STAT_EXTEND);
	return;
dispatch:
	t->c_s = 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(schedlab_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *t = bpf_task_storage_get(&tasks, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	return t ? 0 : -12 /* ENOMEM */;
}

void BPF_STRUCT_OPS(schedlab_enable, struct task_struct *p)
{
	struct task_ctx *t = ctx_of(p);

	if (t)
		t->vtime = class_clock[0];
}

s32 BPF_STRUCT_OPS_SLEEPABLE(schedlab_init)
{
	u32 c;
	s32 err;

	bpf_for(c, 0, MAX_CLASSES + 1) {
		err = scx_bpf_create_dsq(c, -1);
		if (err) {
			fail("creating dispatch queue %llu: %lld", c, err);
			return err;
		}
	}
	return 0;
}

void BPF_STRUCT_OPS(schedlab_exit, struct scx_exit_info *ei)
{
	exit_info.exit_code = ei->exit_code;
	bpf_probe_read_kernel_str(exit_info.reason, sizeof(exit_info.reason), ei->reason);
	bpf_probe_read_kernel_str(exit_info.msg, sizeof(exit_info.msg), ei->msg);
	/* Last: user space reads the rest once it sees a kind. */
	__sync_val_compare_and_swap(&exit_info.kind, 0, ei->kind);
}

/* An exec starts a new flow: PFS counts bursts from here. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(schedlab_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct task_ctx *t = ctx_of(p);

	if (t) {
		t->burst = 0;
		t->c_s = 0;
		t->program = 0;
		t->has_burst = 0;
		t->plan_gen = plan_gen - 1;
	}
	return 0;
}

SEC(".struct_ops.link")
struct sched_ext_ops schedlab_ops = {
	.select_cpu = (void *)schedlab_select_cpu,
	.enqueue = (void *)schedlab_enqueue,
	.dispatch = (void *)schedlab_dispatch,
	.runnable = (void *)schedlab_runnable,
	.running = (void *)schedlab_running,
	.stopping = (void *)schedlab_stopping,
	.tick = (void *)schedlab_tick,
	.init_task = (void *)schedlab_init_task,
	.enable = (void *)schedlab_enable,
	.init = (void *)schedlab_init,
	.exit = (void *)schedlab_exit,
	.timeout_ms = 5000,
	.name = "schedlab",
};
