/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel functions (kfuncs) of sched_ext and BPF that schedlab's scheduler calls,
 * and the wrappers that make one object load on every kernel with sched_ext (6.12 on).
 *
 * vmlinux.h (scripts/gen-vmlinux-h.sh) has the kernel's types but not its functions,
 * so each kfunc is declared here with the prototype the kernel's BTF gives it. A kfunc
 * that not every supported kernel has is declared __weak: libbpf leaves it unresolved
 * where it is missing, and bpf_ksym_exists() is a constant the verifier folds, so the
 * branch that calls a missing kfunc is never verified.
 *
 * Renames handled (kernel 6.13 renamed the dispatch kfuncs; 6.12 has only the old
 * names, 6.15 on only the new ones):
 *   scx_bpf_dispatch        -> scx_bpf_dsq_insert
 *   scx_bpf_dispatch_vtime  -> scx_bpf_dsq_insert_vtime
 *   scx_bpf_consume         -> scx_bpf_dsq_move_to_local
 *   scx_bpf_dispatch_from_dsq -> scx_bpf_dsq_move
 * and the slice: a task's slice is written through p->scx.slice up to 7.0, through
 * scx_bpf_task_set_slice() where the kernel has it.
 */
#ifndef SCHEDLAB_KFUNCS_BPF_H
#define SCHEDLAB_KFUNCS_BPF_H

/* sched_ext, on every supported kernel. */
s32 scx_bpf_create_dsq(u64 dsq_id, s32 node) __ksym;
s32 scx_bpf_select_cpu_dfl(struct task_struct *p, s32 prev_cpu, u64 wake_flags, bool *is_idle) __ksym;
s32 scx_bpf_dsq_nr_queued(u64 dsq_id) __ksym;
void scx_bpf_kick_cpu(s32 cpu, u64 flags) __ksym;
s32 scx_bpf_pick_idle_cpu(const struct cpumask *cpus_allowed, u64 flags) __ksym;
s32 scx_bpf_task_cpu(const struct task_struct *p) __ksym;
int bpf_iter_scx_dsq_new(struct bpf_iter_scx_dsq *it, u64 dsq_id, u64 flags) __ksym;
struct task_struct *bpf_iter_scx_dsq_next(struct bpf_iter_scx_dsq *it) __ksym;
void bpf_iter_scx_dsq_destroy(struct bpf_iter_scx_dsq *it) __ksym;
void scx_bpf_error_bstr(char *fmt, unsigned long long *data, u32 data__sz) __ksym;

/* sched_ext, 6.13 on. */
void scx_bpf_dsq_insert(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym __weak;
void scx_bpf_dsq_insert_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
			      u64 enq_flags) __ksym __weak;
bool scx_bpf_dsq_move_to_local(u64 dsq_id) __ksym __weak;
bool scx_bpf_task_set_slice(struct task_struct *p, u64 slice) __ksym __weak;
bool scx_bpf_dsq_move(struct bpf_iter_scx_dsq *it__iter, struct task_struct *p, u64 dsq_id,
		      u64 enq_flags) __ksym __weak;

/* sched_ext, 6.12 to 6.14. */
void scx_bpf_dispatch(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym __weak;
void scx_bpf_dispatch_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
			    u64 enq_flags) __ksym __weak;
bool scx_bpf_consume(u64 dsq_id) __ksym __weak;
bool scx_bpf_dispatch_from_dsq(struct bpf_iter_scx_dsq *it__iter, struct task_struct *p, u64 dsq_id,
			       u64 enq_flags) __ksym __weak;

/* BPF's task and cpumask kfuncs (6.3 on). */
struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
void bpf_task_release(struct task_struct *p) __ksym;
bool bpf_cpumask_test_cpu(u32 cpu, const struct cpumask *cpumask) __ksym;

/*
 * sched_ext's flags whose values moved between kernels are read from the running
 * kernel's BTF (CO-RE) rather than taken from vmlinux.h: SCX_ENQ_HEAD is 1 << 4 on 6.12
 * and 1 << 16 on 7.3. (The other flags used here have the same values on both, checked
 * against each kernel's BTF: bpftool btf dump file /sys/kernel/btf/vmlinux format c.)
 */
#define ENQ_HEAD bpf_core_enum_value(enum scx_enq_flags, SCX_ENQ_HEAD)

/* A sched_ext callback, and one that may sleep (ops.init, ops.init_task). */
#define BPF_STRUCT_OPS(name, args...) SEC("struct_ops/" #name) BPF_PROG(name, ##args)
#define BPF_STRUCT_OPS_SLEEPABLE(name, args...) SEC("struct_ops.s/" #name) BPF_PROG(name, ##args)

/* Puts `p` on dispatch queue `dsq_id` in FIFO order, for `slice` ns. */
static __always_inline void dsq_insert(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags)
{
	if (bpf_ksym_exists(scx_bpf_dsq_insert))
		scx_bpf_dsq_insert(p, dsq_id, slice, enq_flags);
	else
		scx_bpf_dispatch(p, dsq_id, slice, enq_flags);
}

/* Puts `p` on dispatch queue `dsq_id` in `vtime` order, for `slice` ns. */
static __always_inline void dsq_insert_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
					     u64 enq_flags)
{
	if (bpf_ksym_exists(scx_bpf_dsq_insert_vtime))
		scx_bpf_dsq_insert_vtime(p, dsq_id, slice, vtime, enq_flags);
	else
		scx_bpf_dispatch_vtime(p, dsq_id, slice, vtime, enq_flags);
}

/* Moves the first task of `dsq_id` that may run here to this CPU's local queue. */
static __always_inline bool dsq_move_to_local(u64 dsq_id)
{
	if (bpf_ksym_exists(scx_bpf_dsq_move_to_local))
		return scx_bpf_dsq_move_to_local(dsq_id);
	return scx_bpf_consume(dsq_id);
}

/* The iterator of the innermost bpf_for_each() around the use (libbpf names it ___it). */
#define DSQ_ITER (&___it)

/* Moves `p`, met by the DSQ iteration `it` in progress, to dispatch queue `dsq_id`
 * (ops.dispatch only). */
static __always_inline bool dsq_move(struct bpf_iter_scx_dsq *it, struct task_struct *p, u64 dsq_id,
				     u64 enq_flags)
{
	if (bpf_ksym_exists(scx_bpf_dsq_move))
		return scx_bpf_dsq_move(it, p, dsq_id, enq_flags);
	return scx_bpf_dispatch_from_dsq(it, p, dsq_id, enq_flags);
}

/* Gives the running or queued task `p` a slice of `slice` ns from now. */
static __always_inline void task_set_slice(struct task_struct *p, u64 slice)
{
	if (bpf_ksym_exists(scx_bpf_task_set_slice))
		scx_bpf_task_set_slice(p, slice);
	else
		p->scx.slice = slice;
}

/*
 * Ends the scheduler with an error the kernel reports as the reason (the scheduler is
 * ejected, every task goes back to the fair class). `fmt` takes up to two u64 values.
 */
#define fail(fmt, a, b)                                                   \
	({                                                                \
		static char ___fmt[] = fmt;                               \
		unsigned long long ___args[2] = { (a), (b) };             \
		scx_bpf_error_bstr(___fmt, ___args, sizeof(___args));     \
	})

#endif /* SCHEDLAB_KFUNCS_BPF_H */
