/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What user space and schedlab's sched_ext scheduler exchange: the plan user space
 * writes (classes, processes, PFS bursts, providers) and the counters the scheduler
 * keeps. crates/ext/src/plan.rs mirrors these layouts; the sizes are checked on both
 * sides.
 */
#ifndef SCHEDLAB_INTF_H
#define SCHEDLAB_INTF_H

/* Classes: 0 is the default class of every task no plan names. Class c has dispatch
 * queue c. */
#define MAX_CLASSES 64
/* CPUs a class plan can name (a bitmap of CPU_WORDS u64). */
#define CPU_WORDS 16
#define MAX_CPUS (CPU_WORDS * 64)

/* A class of the plan (paper 000's distribution): its CPUs and its share. */
struct class_plan {
	/* The CPUs that take the class's tasks first; an idle CPU outside them takes
	 * its tasks only when its own classes have none (no CPU idles beside work). */
	__u64 cpus[CPU_WORDS];
	/* The class's share against the other classes, 100 for one nice-0 task. */
	__u32 weight;
	/* Nonzero when the class exists. */
	__u32 in_use;
	/* The slice of its tasks in ns, 0 for the scheduler's default. */
	__u64 slice_ns;
};

/* What the plan says of one process (key: its tgid). */
struct process_plan {
	__u32 class_id;
	/* The id of its program's PFS (paper 001) in the `bursts` map, 0 for none. */
	__u32 program;
};

/* One predicted CPU burst of a program's PFS: the index-th burst since exec. */
struct burst_key {
	__u32 program;
	__u32 index;
};

/* A requester's provider (paper 004; key: the requester's tid). */
struct provider {
	__u32 tid;
	/* SWAP's confidence in percent of its threshold's scale, for the stats. */
	__u32 confidence;
};

/* Counters, per CPU, summed by user space. */
enum schedlab_stat {
	STAT_ENQUEUE,        /* tasks put on a class queue */
	STAT_DIRECT,         /* wakings sent straight to an idle CPU of their class */
	STAT_DISPATCH,       /* tasks moved from a class queue of the CPU's own */
	STAT_STEAL,          /* ... from a class queue of other CPUs (this one idled) */
	STAT_PREEMPT,        /* wakings that preempted a task further behind */
	STAT_EXTEND,         /* PFS: slices extended at expiry (T_e <= T_m) */
	STAT_ADAPT,          /* PFS: predictions adapted at a block (rules 3-5) */
	STAT_NEAR_PROVIDER,  /* requesters woken on their provider's CPU */
	STAT_LEND,           /* SWAP: providers given their requester's turn */
	STAT_LEND_USED,      /* ... and queued in it */
	STAT_KEEP,           /* slices renewed at dispatch: the task still came first */
	STAT_HANDOFF,        /* SWAP: providers run on the CPU their requester blocked on */
	STAT_COUNT,
};

/* Why the scheduler exited, copied from the kernel's scx_exit_info. */
#define EXIT_REASON_LEN 128
#define EXIT_MSG_LEN 1024
struct exit_info {
	__s32 kind;
	__s32 pad;
	__s64 exit_code;
	char reason[EXIT_REASON_LEN];
	char msg[EXIT_MSG_LEN];
};

#endif /* SCHEDLAB_INTF_H */
