// SPDX-License-Identifier: GPL-2.0-only
// schedlab's live observer: per-(tgid, syscall) counts aggregated in the kernel, the
// identifying arguments of each thread's last system call, and a ring buffer of the
// scheduling events (switch, waking, exec, fork, exit, and the enter of the calls that
// SWAP's resource model looks at).
//
// The tracepoint records are declared by hand as /sys/kernel/tracing/events/*/format
// lays them out (stable ABI of these tracepoints); the one kernel structure read
// (task_struct) goes through CO-RE relocations, so no vmlinux.h is needed.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

typedef __u8 u8;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;

char LICENSE[] SEC("license") = "GPL";

/* --- tracepoint records (common header is 8 bytes) --- */
struct tp_sys_enter {
	u64 common;
	long id;
	unsigned long args[6];
};

struct tp_sched_switch {
	u64 common;
	char prev_comm[16];
	s32 prev_pid;
	s32 prev_prio;
	long prev_state;
	char next_comm[16];
	s32 next_pid;
	s32 next_prio;
};

struct tp_sched_waking {
	u64 common;
	char comm[16];
	s32 pid;
	s32 prio;
	s32 target_cpu;
};

struct tp_process_exec {
	u64 common;
	u32 data_loc_filename;
	s32 pid;
	s32 old_pid;
};

struct tp_process_fork {
	u64 common;
	u32 data_loc_parent_comm;
	s32 parent_pid;
	u32 data_loc_child_comm;
	s32 child_pid;
};

struct tp_process_exit {
	u64 common;
	char comm[16];
	s32 pid;
	s32 prio;
	u8 group_dead;
};

/* CO-RE: only the fields used; libbpf relocates their offsets from the kernel's BTF. */
struct task_struct {
	int exit_code;
} __attribute__((preserve_access_index));

/* --- shared with user space (crates/live/src/observer.rs mirrors these) --- */
enum rec_type {
	REC_SWITCH = 1,
	REC_WAKING = 2,
	REC_EXEC = 3,
	REC_FORK = 4,
	REC_EXIT = 5,
	REC_ENTER = 6,
};

#define NO_SYSCALL 0xffffffffu
#define FILENAME_LEN 256

struct rec {
	u64 ts;          /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	u32 type;
	u32 cpu;
	u32 pid;         /* switch: prev; waking: waker; fork: parent; exec/exit/enter: the task */
	u32 tgid;        /* thread group of `pid` where known (0 otherwise) */
	u32 pid2;        /* switch: next; waking: wakee; fork: child; exec: old pid */
	u32 nr;          /* enter: the call; switch: the blocked prev's last call (NO_SYSCALL if none) */
	s64 value;       /* switch: prev_state; waking: target cpu; exit: exit code; fork: 1 = thread */
	u64 args[3];     /* the call's first three arguments */
	char comm[16];
};

struct exec_rec {
	struct rec r;
	char filename[FILENAME_LEN];
};

struct last_call {
	u32 nr;
	u32 tgid;
	u64 args[3];
};

struct count_key {
	u32 tgid;
	u32 nr;
};

/* The observer's own thread group: its events are not recorded (it would trace itself),
 * except its switches (see on_sched_switch). */
const volatile u32 self_tgid = 0;
/* Emit REC_ENTER for the calls SWAP's resource model looks at. */
const volatile u8 emit_enter = 1;
/* Wake the reader only past this much unread data (bytes). */
const volatile u64 wakeup_bytes = 256 * 1024;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct count_key);
	__type(value, u64);
} counts SEC(".maps");

/* What the observer keeps per thread, in task-local storage (found from the task
 * itself: no hash lookup, freed with the task): the thread's last call, and when each of
 * the last few (call, first argument) pairs was sent as REC_ENTER. The same call on the
 * same object is sent again only every enter_repeat_uses uses (SWAP's provider lists only
 * need to learn that a task uses an object, not every use); a close forgets its
 * descriptor's pairs, so that the next object the number names is sent at once. The pairs sit in
 * SENT_SLOTS slots chosen by the call and its first argument (a descriptor, an IPC id, a
 * pid), so a thread using a few dozen objects in turn is throttled on each. */
#define SENT_SLOTS 64

struct sent_slot {
	u32 nr;
	u32 uses; /* uses since it was sent first; 0: free */
	u64 arg0;
};

struct task_state {
	struct last_call last;
	struct sent_slot sent[SENT_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_states SEC(".maps");

/* A power of two. Counting uses, not time, keeps the clock out of the hot path. */
const volatile u32 enter_repeat_uses = 256;

/* Threads whose blocking wakes the reader at once (the daemon's boost candidates: a
 * boost is only useful if it comes quickly). Filled by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, u8);
} urgent SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} lost SEC(".maps");

static __always_inline void count_lost(void)
{
	u32 zero = 0;
	u64 *n = bpf_map_lookup_elem(&lost, &zero);
	if (n)
		*n += 1;
}

static __always_inline u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									     : BPF_RB_NO_WAKEUP;
}

static __always_inline struct rec *reserve(u32 type)
{
	struct rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count_lost();
		return 0;
	}
	r->ts = bpf_ktime_get_ns();
	r->type = type;
	r->cpu = bpf_get_smp_processor_id();
	r->tgid = 0;
	r->nr = NO_SYSCALL;
	r->value = 0;
	r->args[0] = r->args[1] = r->args[2] = 0;
	r->comm[0] = 0;
	return r;
}

/* The calls whose enter SWAP's resource model needs (x86_64 numbers). */
static __always_inline int swap_relevant(u32 nr)
{
	switch (nr) {
	case 0: case 1: case 3: case 19: case 20: case 34: case 40: case 42: case 43: case 44:
	case 45: case 46: case 47: case 56: case 57: case 58: case 61: case 62: case 65:
	case 69: case 70: case 73: case 128: case 130: case 200: case 220: case 234:
	case 247: case 288: case 299: case 307: case 435:
		return 1;
	}
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int on_sys_enter(struct tp_sys_enter *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, pid = (u32)id;
	if (tgid == self_tgid)
		return 0;
	u32 nr = (u32)ctx->id;

	struct count_key key = { .tgid = tgid, .nr = nr };
	u64 *n = bpf_map_lookup_elem(&counts, &key);
	if (n) {
		*n += 1;
	} else {
		u64 one = 1;
		bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
	}

	struct task_state *st = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0,
						     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return 0;
	st->last.nr = nr;
	st->last.tgid = tgid;
	st->last.args[0] = ctx->args[0];
	st->last.args[1] = ctx->args[1];
	st->last.args[2] = ctx->args[2];

	if (emit_enter && swap_relevant(nr)) {
		u64 arg0 = ctx->args[0];
		struct sent_slot *slot = &st->sent[(arg0 ^ (nr << 3)) & (SENT_SLOTS - 1)];
		/* close, flock and kill are always sent: they change the lists. A close also
		 * forgets the descriptor's slots, so the next object it names is sent at once. */
		if (nr == 3) {
			for (int i = 0; i < SENT_SLOTS; i++)
				if (st->sent[i].arg0 == arg0)
					st->sent[i].uses = 0;
		} else if (slot->nr == nr && slot->arg0 == arg0 && slot->uses && nr != 73 && nr != 62) {
			slot->uses += 1;
			if (slot->uses & (enter_repeat_uses - 1))
				return 0;
		} else {
			slot->nr = nr;
			slot->arg0 = arg0;
			slot->uses = 1;
		}
		struct rec *r = reserve(REC_ENTER);
		if (!r)
			return 0;
		r->pid = pid;
		r->tgid = tgid;
		r->nr = nr;
		r->args[0] = ctx->args[0];
		r->args[1] = ctx->args[1];
		r->args[2] = ctx->args[2];
		if (nr == 435) { /* clone3: the flags are the first field of struct clone_args */
			u64 flags = 0;
			bpf_probe_read_user(&flags, sizeof(flags), (void *)ctx->args[0]);
			r->args[1] = flags;
		}
		bpf_ringbuf_submit(r, wakeup_flag());
	}
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int on_sched_switch(struct tp_sched_switch *ctx)
{
	/* Not filtered on the observer's own thread group: dropping its switches out
	 * would also drop the switch in of the task after it, which would then seem never
	 * to run. The reader blocks once per drain, so these records are few. */
	u32 tgid = bpf_get_current_pid_tgid() >> 32; /* prev runs this tracepoint */
	struct rec *r = reserve(REC_SWITCH);
	if (!r)
		return 0;
	u32 prev = ctx->prev_pid;
	r->pid = prev;
	r->tgid = prev ? tgid : 0;
	r->pid2 = ctx->next_pid;
	r->value = ctx->prev_state;
	__builtin_memcpy(r->comm, ctx->next_comm, 16);
	u64 flag = wakeup_flag();
	if (prev && (ctx->prev_state & 0xcf)) {
		/* prev is the current task here: the switch runs in its context. */
		struct task_state *st = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0, 0);
		if (st) {
			r->nr = st->last.nr;
			r->args[0] = st->last.args[0];
			r->args[1] = st->last.args[1];
			r->args[2] = st->last.args[2];
		}
		if (bpf_map_lookup_elem(&urgent, &prev))
			flag = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(r, flag);
	return 0;
}

SEC("tracepoint/sched/sched_waking")
int on_sched_waking(struct tp_sched_waking *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	if ((u32)(id >> 32) == self_tgid)
		return 0;
	struct rec *r = reserve(REC_WAKING);
	if (!r)
		return 0;
	r->pid = (u32)id;
	r->tgid = id >> 32;
	r->pid2 = ctx->pid;
	r->value = ctx->target_cpu;
	__builtin_memcpy(r->comm, ctx->comm, 16);
	bpf_ringbuf_submit(r, wakeup_flag());
	return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int on_exec(struct tp_process_exec *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	struct exec_rec *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return 0;
	}
	e->r.ts = bpf_ktime_get_ns();
	e->r.type = REC_EXEC;
	e->r.cpu = bpf_get_smp_processor_id();
	e->r.pid = ctx->pid;
	e->r.tgid = id >> 32;
	e->r.pid2 = ctx->old_pid;
	e->r.nr = NO_SYSCALL;
	e->r.value = 0;
	e->r.args[0] = e->r.args[1] = e->r.args[2] = 0;
	bpf_get_current_comm(e->r.comm, sizeof(e->r.comm));
	unsigned off = ctx->data_loc_filename & 0xffff;
	bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), (void *)ctx + off);
	/* An exec is rare and the daemon classifies at exec: wake the reader now. */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("tracepoint/sched/sched_process_fork")
int on_fork(struct tp_process_fork *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	if ((u32)(id >> 32) == self_tgid)
		return 0;
	struct rec *r = reserve(REC_FORK);
	if (!r)
		return 0;
	r->pid = ctx->parent_pid;
	r->tgid = id >> 32;
	r->pid2 = ctx->child_pid;
	/* A thread when the parent's clone asked for CLONE_THREAD (0x10000). */
	struct task_state *st = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0, 0);
	struct last_call *lc = st ? &st->last : 0;
	if (lc) {
		r->nr = lc->nr;
		if (lc->nr == 56)
			r->value = (lc->args[0] & 0x10000) != 0;
		else if (lc->nr == 435) {
			u64 flags = 0;
			bpf_probe_read_user(&flags, sizeof(flags), (void *)lc->args[0]);
			r->value = (flags & 0x10000) != 0;
		}
	}
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, wakeup_flag());
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int on_exit(struct tp_process_exit *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	if ((u32)(id >> 32) == self_tgid)
		return 0;
	struct rec *r = reserve(REC_EXIT);
	if (!r)
		return 0;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	r->pid = ctx->pid;
	r->tgid = id >> 32;
	r->value = BPF_CORE_READ(task, exit_code);
	r->pid2 = ctx->group_dead;
	__builtin_memcpy(r->comm, ctx->comm, 16);
	bpf_ringbuf_submit(r, wakeup_flag());
	return 0;
}
