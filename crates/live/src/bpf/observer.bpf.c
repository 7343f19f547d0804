// SPDX-License-Identifier: GPL-2.0-only
// schedlab's live observer.
//
// - Scheduling events (switch, waking, exec, fork, exit) come from BTF raw tracepoints
//   (tp_btf): the kernel calls the program directly with its own arguments (typed
//   `struct task_struct *`), without building a trace record first.
// - With `watched_only` set (the daemon), only what concerns the threads marked in the
//   `watched` task storage is recorded: their blocking switches and their wakings;
//   everything else costs one task-storage lookup and no record. Exec, fork and exit
//   are always recorded (they are rare).
// - What a blocked thread waits for is read at its blocking switch from its saved user
//   registers (the system call it is in and its first three arguments), and a
//   descriptor argument is resolved to its inode here (task->files), so that no
//   per-syscall hook is needed for it and a descriptor closed before user space reads
//   the record still names the right object.
// - The waker of a waking, when it is a user thread inside a call SWAP's resource model
//   looks at, has that call read from its registers into the waking record: user space
//   turns it into a SyscallEnter of the waker just before the Wakeup, and SWAP learns
//   providers from the calls that actually woke someone.
// - The per-syscall hook (raw_syscalls:sys_enter, as a BTF raw tracepoint) counts
//   calls per (tgid, nr) and sends the enter of the calls SWAP looks at; it is
//   attached only on demand (user space), because while any sys_enter program is
//   attached every system call on the machine takes the slow path.
//
// The kernel structures read are declared by hand with only the fields used; libbpf
// relocates their offsets from the kernel's BTF (CO-RE), so no vmlinux.h is needed.
// A `___k` suffix keeps a name clear of the system headers' own definitions and is
// ignored by the relocation.
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;

char LICENSE[] SEC("license") = "GPL";

/* --- kernel structures (CO-RE: only the fields used) --- */
struct thread_info {
	u32 status; /* TS_COMPAT while in a 32-bit system call */
	u32 cpu;    /* task_cpu() */
} __attribute__((preserve_access_index));

struct pt_regs___k {
	unsigned long r11;
	unsigned long cx;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax; /* the system call number, -1 outside one (exception, interrupt) */
	unsigned long ip;
	unsigned long flags;
} __attribute__((preserve_access_index));

struct super_block {
	unsigned long s_magic;
} __attribute__((preserve_access_index));

struct inode {
	u16 i_mode;
	struct super_block *i_sb;
	unsigned long i_ino;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
} __attribute__((preserve_access_index));

struct files_struct {
	struct fdtable *fdt;
} __attribute__((preserve_access_index));

struct sched_entity {
	u64 sum_exec_runtime;
} __attribute__((preserve_access_index));

struct sched_info {
	unsigned long long run_delay; /* time runnable on a run queue, not running */
} __attribute__((preserve_access_index));

struct task_struct {
	struct thread_info thread_info;
	unsigned int flags;
	int exit_state;
	int exit_code;
	int pid;
	int tgid;
	char comm[16];
	struct files_struct *files;
	struct sched_entity se;
	struct sched_info sched_info;
	unsigned long nvcsw;
	unsigned long nivcsw;
	u64 start_time; /* CLOCK_MONOTONIC at the fork, ns */
} __attribute__((preserve_access_index));

struct linux_binprm {
	struct file *file;
	const char *filename;
} __attribute__((preserve_access_index));

#define PF_USER_WORKER 0x00004000 /* io_uring / vhost workers: no user registers of their own */
#define PF_KTHREAD 0x00200000
#define TS_COMPAT 0x0002

#define S_IFMT 0170000
#define S_IFSOCK 0140000
#define S_IFIFO 0010000
#define PIPEFS_MAGIC 0x50495045
#define ANON_INODE_FS_MAGIC 0x09041934

/* Task states (include/linux/sched.h). */
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_REPORT 0x007f
#define TASK_NOLOAD 0x0400
#define TASK_RTLOCK_WAIT 0x1000
#define TASK_FROZEN 0x8000

/* --- shared with user space (crates/live/src/observer.rs mirrors these) --- */
enum rec_type {
	REC_SWITCH = 1,
	REC_WAKING = 2,
	REC_EXEC = 3,
	REC_FORK = 4,
	REC_EXIT = 5,
	REC_ENTER = 6,
};

/* What the descriptor in args[0] names (fd_kind). */
enum fd_kind {
	FD_UNKNOWN = 0, /* not a descriptor call, or not readable */
	FD_PIPE = 1,
	FD_FIFO = 2,
	FD_SOCKET = 3,
	FD_FILE = 4,
	FD_OTHER = 5, /* an anonymous inode (eventfd, epoll, …) */
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
	u32 nr;          /* enter: the call; switch: the call the blocked prev is in; waking: the
			    call the waker is in, when SWAP looks at it (NO_SYSCALL otherwise) */
	s64 value;       /* switch: prev_state (report form); waking: target cpu; exit: exit code;
			    fork: 1 = thread */
	u64 args[3];     /* the call's first three arguments; exit: the task's life: CPU time,
			    time runnable waiting, time since its fork (ns) */
	u64 ino;         /* the inode of the descriptor args[0] when fd_kind is set; exit: its
			    voluntary switches (and pid2, nr: the involuntary ones, low and
			    high 32 bits) */
	u32 fd_kind;     /* enum fd_kind */
	u32 pad;
	char comm[16];
};

struct exec_rec {
	struct rec r;
	char filename[FILENAME_LEN];
};

struct count_key {
	u32 tgid;
	u32 nr;
};

/* The observer's own thread group: its events are not recorded (it would trace itself),
 * except its switches (see on_sched_switch). */
const volatile u32 self_tgid = 0;
/* Emit REC_ENTER for the calls SWAP's resource model looks at (while the hook is on). */
const volatile u8 emit_enter = 1;
/* Wake the reader only past this much unread data (bytes). */
const volatile u64 wakeup_bytes = 256 * 1024;
/* Record only the blocking switches and the wakings of watched threads. Set by user
 * space, at start and when it switches (a load per event; no reload needed). */
volatile u8 watched_only = 0;
/* Clear: a watched thread's block and waking wake the reader at once (it boosts from
 * user space). Set by user space where the kernel carries the boosts out (schedlab's
 * sched_ext scheduler): the reader then drains in batches, off the critical path. */
volatile u8 batch_watched = 0;
/* Set by user space while the sys_enter hook is attached and sends REC_ENTER: they name the
 * providers, so the waking records need not carry the waker's call. */
volatile u8 hook_on = 0;
/* Set by user space while any thread is marked watched: without marks, the watched test
 * needs no task-storage lookup (which, cold, costs a wake-up microseconds). */
volatile u8 any_marked = 0;

/* Least recently used first out: the keys of processes that exited are never deleted,
 * and a plain hash would stop counting anything once 65,536 (process, call) pairs were
 * seen; an LRU hash drops the stale ones instead. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct count_key);
	__type(value, u64);
} counts SEC(".maps");

/* The REC_ENTER throttle, per thread in task-local storage (found from the task itself:
 * no hash lookup, freed with the task): when each of the last few (call, first argument)
 * pairs was sent. The same call on the same object is sent again only every
 * enter_repeat_uses uses (SWAP's provider lists only need to learn that a task uses an
 * object, not every use); a close forgets its descriptor's pairs, so that the next
 * object the number names is sent at once. The pairs sit in SENT_SLOTS slots chosen by
 * the call and its first argument (a descriptor, an IPC id, a pid), so a thread using a
 * few dozen objects in turn is throttled on each. */
#define SENT_SLOTS 64

struct sent_slot {
	u32 nr;
	u32 uses; /* uses since it was sent first; 0: free */
	u64 arg0;
};

struct task_state {
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

/* The watched threads (the daemon's boost candidates), set by user space through a
 * pidfd of the thread. A task-storage lookup from the task pointer the tracepoint
 * gives is a per-task cache slot, cheaper than hashing the tid, and the mark dies with
 * the thread (no stale tid). Their blocking and their wakings wake the reader at once;
 * with watched_only they are all that is recorded of the switches and wakings. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, u32);
} watched SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024);
} events SEC(".maps");

/* The executables (by inode number) whose exec wakes the reader at once: the programs
 * the daemon knows to run CPU-bound and lowers at their exec, each of whose jobs should
 * start lowered rather than a poll period later. Keyed by the inode number alone (not
 * the device): a program of another file system with the same number only costs a
 * wake-up. Bounded as the daemon's habits are (MAX_PROGRAMS). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u64);
	__type(value, u8);
} exec_wake SEC(".maps");

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

static __always_inline void clear_call(struct rec *r)
{
	r->nr = NO_SYSCALL;
	r->args[0] = r->args[1] = r->args[2] = 0;
	r->ino = 0;
	r->fd_kind = FD_UNKNOWN;
	r->pad = 0;
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
	r->pid2 = 0;
	r->value = 0;
	clear_call(r);
	r->comm[0] = 0;
	return r;
}

/* Watched: marked by user space (the threads whose providers a boost may raise). Not
 * by priority alone: a record per block of every thread above nice 0 (a machine's audio
 * and session daemons block thousands of times a second) costs each of those blocks a
 * self-interrupt, microseconds of a real-time thread's latency, and the daemon a record
 * to read. Without marks no task storage is looked up at all. */
static __always_inline int is_watched(struct task_struct *task)
{
	return any_marked && bpf_task_storage_get(&watched, task, 0, 0) != 0;
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

/* The calls whose first argument is a descriptor user space resolves (observer.rs). */
static __always_inline int fd_call(u32 nr)
{
	switch (nr) {
	case 0: case 1: case 3: case 19: case 20: case 40: case 42: case 43: case 44: case 45:
	case 46: case 47: case 73: case 288: case 299: case 307:
		return 1;
	}
	return 0;
}

/* Resolves descriptor r->args[0] of `task` (the current task: its table cannot go away
 * under it) to an inode and its kind. Probe reads: a descriptor closed by another
 * thread meanwhile reads as nothing. */
static __always_inline void resolve_fd(struct task_struct *task, struct rec *r)
{
	s32 fd = (s32)r->args[0];
	if (fd < 0 || !fd_call(r->nr))
		return;
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt)
		return;
	unsigned int max_fds = BPF_CORE_READ(fdt, max_fds);
	if ((u32)fd >= max_fds)
		return;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *file = 0;
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return;
	struct inode *inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return;
	u16 mode = BPF_CORE_READ(inode, i_mode);
	unsigned long magic = BPF_CORE_READ(inode, i_sb, s_magic);
	r->ino = BPF_CORE_READ(inode, i_ino);
	if ((mode & S_IFMT) == S_IFIFO)
		r->fd_kind = magic == PIPEFS_MAGIC ? FD_PIPE : FD_FIFO;
	else if ((mode & S_IFMT) == S_IFSOCK)
		r->fd_kind = FD_SOCKET;
	else if (magic == ANON_INODE_FS_MAGIC)
		r->fd_kind = FD_OTHER;
	else
		r->fd_kind = FD_FILE;
}

/* The system call `task` (the current task) is in, from the user registers saved at its
 * entry: orig_ax is the number (-1 for an exception or an interrupt, which set it so),
 * di/si/dx the first three arguments (x86_64). Kernel threads and user workers have no
 * user registers; a 32-bit call has other numbers. Whether `task` is in a call at all. */
static __always_inline int current_call(struct task_struct *task, struct rec *r)
{
	if (task->flags & (PF_KTHREAD | PF_USER_WORKER))
		return 0;
	if (task->thread_info.status & TS_COMPAT)
		return 0;
	struct pt_regs___k *regs = (struct pt_regs___k *)bpf_task_pt_regs(task);
	if (!regs)
		return 0;
	long nr = (long)regs->orig_ax;
	if (nr < 0)
		return 0;
	r->nr = (u32)nr;
	r->args[0] = regs->di;
	r->args[1] = regs->si;
	r->args[2] = regs->dx;
	return 1;
}

/* The state sched_switch's classic tracepoint reports (__trace_sched_switch_state):
 * 0x100 when preempted, else the highest bit of the reportable state. */
static __always_inline s64 report_state(int preempt, unsigned int state, int exit_state)
{
	if (preempt)
		return 0x100;
	unsigned int s = (state | (unsigned int)exit_state) & TASK_REPORT;
	if ((state & (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)) == (TASK_UNINTERRUPTIBLE | TASK_NOLOAD))
		s = 0x80;
	if (state & (TASK_RTLOCK_WAIT | TASK_FROZEN))
		s = TASK_UNINTERRUPTIBLE;
	for (int b = 7; b >= 0; b--)
		if (s & (1u << b))
			return 1 << b;
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs___k *regs, long id)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	u32 tgid = pid_tgid >> 32, pid = (u32)pid_tgid;
	if (tgid == self_tgid)
		return 0;
	u32 nr = (u32)id;

	struct count_key key = { .tgid = tgid, .nr = nr };
	u64 *n = bpf_map_lookup_elem(&counts, &key);
	if (n) {
		*n += 1;
	} else {
		u64 one = 1;
		bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
	}

	if (!emit_enter || !swap_relevant(nr))
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	struct task_state *st = bpf_task_storage_get(&task_states, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return 0;
	u64 arg0 = regs->di;
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
	r->args[0] = arg0;
	r->args[1] = regs->si;
	r->args[2] = regs->dx;
	if (nr == 435) { /* clone3: the flags are the first field of struct clone_args */
		u64 flags = 0;
		bpf_probe_read_user(&flags, sizeof(flags), (void *)arg0);
		r->args[1] = flags;
	}
	resolve_fd(task, r);
	bpf_ringbuf_submit(r, wakeup_flag());
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	int blocking = !preempt && (prev_state & (TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE));
	/* The one check every switch pays in this mode. */
	if (watched_only && (!blocking || !is_watched(prev)))
		return 0;
	/* Not filtered on the observer's own thread group: dropping its switches out
	 * would also drop the switch in of the task after it, which would then seem never
	 * to run. The reader blocks once per drain, so these records are few. */
	struct rec *r = reserve(REC_SWITCH);
	if (!r)
		return 0;
	u32 prev_pid = prev->pid;
	r->pid = prev_pid;
	r->tgid = prev_pid ? prev->tgid : 0;
	r->pid2 = next->pid;
	r->value = report_state(preempt, prev_state, prev->exit_state);
	bpf_probe_read_kernel(r->comm, sizeof(r->comm), next->comm);
	u64 flag = wakeup_flag();
	if (prev_pid && (r->value & 0xcf)) {
		/* prev is the current task here: the switch runs in its context. */
		if (current_call(prev, r))
			resolve_fd(prev, r);
		if (!batch_watched && is_watched(prev))
			flag = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(r, flag);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct *p)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	if ((u32)(pid_tgid >> 32) == self_tgid)
		return 0;
	int watched_wakee = is_watched(p);
	if (watched_only && !watched_wakee)
		return 0;
	struct rec *r = reserve(REC_WAKING);
	if (!r)
		return 0;
	r->pid = (u32)pid_tgid;
	r->tgid = pid_tgid >> 32;
	r->pid2 = p->pid;
	r->value = p->thread_info.cpu;
	bpf_probe_read_kernel(r->comm, sizeof(r->comm), p->comm);
	/* The waker (the current task, unless an interrupt woke p: then the registers are
	 * those of the call the interrupted task was in, if any) in a call SWAP looks at. */
	if (!hook_on && r->pid) {
		struct task_struct *waker = bpf_get_current_task_btf();
		if (current_call(waker, r) && swap_relevant(r->nr)) {
			if (r->nr == 435) {
				u64 flags = 0;
				bpf_probe_read_user(&flags, sizeof(flags), (void *)r->args[0]);
				r->args[1] = flags;
			}
			resolve_fd(waker, r);
		} else {
			clear_call(r);
		}
	}
	bpf_ringbuf_submit(r, watched_wakee && !batch_watched ? BPF_RB_FORCE_WAKEUP : wakeup_flag());
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, int old_pid, struct linux_binprm *bprm)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	struct exec_rec *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return 0;
	}
	e->r.ts = bpf_ktime_get_ns();
	e->r.type = REC_EXEC;
	e->r.cpu = bpf_get_smp_processor_id();
	e->r.pid = p->pid;
	e->r.tgid = pid_tgid >> 32;
	e->r.pid2 = old_pid;
	e->r.value = 0;
	clear_call(&e->r);
	bpf_get_current_comm(e->r.comm, sizeof(e->r.comm));
	const char *filename = BPF_CORE_READ(bprm, filename);
	if (bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), filename) < 0)
		e->filename[0] = 0;
	/* Not at once, unless the daemon acts at this program's exec: a build runs hundreds
	 * of execs a second, and the daemon changes no other process before it has lived
	 * min_age_ms; the reader's next drain is soon enough for those. */
	u64 ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
	bpf_ringbuf_submit(e, bpf_map_lookup_elem(&exec_wake, &ino) ? BPF_RB_FORCE_WAKEUP : wakeup_flag());
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	if ((u32)(pid_tgid >> 32) == self_tgid)
		return 0;
	struct rec *r = reserve(REC_FORK);
	if (!r)
		return 0;
	r->pid = parent->pid;
	r->tgid = pid_tgid >> 32;
	int child_pid = child->pid;
	r->pid2 = child_pid;
	/* A thread shares its creator's thread group (CLONE_THREAD): its pid is not its tgid. */
	r->value = child_pid != child->tgid;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, wakeup_flag());
	return 0;
}

/* Only the exiting task (the tracepoint's `group_dead` exists from kernel 6.16 on, and a
 * program that names it does not load on older kernels). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	if ((u32)(pid_tgid >> 32) == self_tgid)
		return 0;
	struct rec *r = reserve(REC_EXIT);
	if (!r)
		return 0;
	r->pid = p->pid;
	r->tgid = pid_tgid >> 32;
	r->value = p->exit_code;
	r->args[0] = p->se.sum_exec_runtime;
	r->args[1] = p->sched_info.run_delay;
	r->args[2] = r->ts - p->start_time;
	r->ino = p->nvcsw;
	u64 nivcsw = p->nivcsw;
	r->pid2 = (u32)nivcsw;
	r->nr = (u32)(nivcsw >> 32);
	bpf_probe_read_kernel(r->comm, sizeof(r->comm), p->comm);
	bpf_ringbuf_submit(r, wakeup_flag());
	return 0;
}
