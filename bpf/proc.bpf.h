/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Processes followed: forks, execs (and --exe's executables), exits.
 * Part of jankwatch.bpf.c, the one BPF object: included there, after the parts it uses.
 */
#ifndef JW_BPF_PROC_H
#define JW_BPF_PROC_H

/*
 * The processes user space follows, by tgid (enum jw_follow_flags): their forks, execs and exits
 * are sent to it. follow_on is set once one is, so that until then a fork or exit does not look.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JW_MAX_FOLLOWED);
	__type(key, __u32);
	__type(value, __u32);
} followed SEC(".maps");

__u32 follow_on;

/* Sends a FORK, EXEC, EXIT or RENAME record of process @p; @name: its new name, or NULL. */
static void send_proc(struct task_struct *p, __u16 type, __u16 flags, __u32 parent,
		      const struct jw_name_key *name)
{
	struct jw_proc_rec *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

	if (!rec) {
		count_drop(JW_DROP_PROC);
		return;
	}
	rec->hdr.type = type;
	rec->hdr.flags = flags;
	rec->hdr.size = sizeof(*rec);
	rec->hdr.pid = KREAD(p, tgid);
	rec->hdr.tid = KREAD(p, pid);
	rec->hdr.ts_ns = bpf_ktime_get_ns();
	rec->start_boot_ns = KREAD(p, start_boottime);
	rec->parent = parent;
	rec->pad = 0;
	if (name)
		__builtin_memcpy(rec->comm, name->comm, sizeof(rec->comm));
	else
		bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), p->comm);
	/* Read within user space's poll period: a storm of processes must not wake it for each. */
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/*
 * A new process of a followed one that follows its children is followed as its parent is, here,
 * before it runs: it cannot fork or exec unseen. New threads return at the first comparison.
 */
JW_TRACEPOINT(sched_process_fork)
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, tgid = KREAD(child, tgid), *flags, inherited;

	if (stopped || !follow_on || KREAD(child, pid) != tgid)
		return 0;
	ptgid = KREAD(parent, tgid);
	flags = bpf_map_lookup_elem(&followed, &ptgid);
	if (!flags || !(*flags & JW_FOLLOW_CHILDREN))
		return 0;
	inherited = *flags;
	if (bpf_map_update_elem(&followed, &tgid, &inherited, BPF_ANY)) {
		count_drop(JW_DROP_PROC);
		return 0;
	}
	send_proc(child, JW_REC_FORK, 0, ptgid, NULL);
	return 0;
}

/*
 * A process execs: a watched one's task in flight ends there (the program that ran it is gone).
 * User space hears of every exec of a followed process, to hook the new program, and of every
 * process that execs an --exe file, which is followed from here. A process followed only while
 * it runs an --exe file (JW_FOLLOW_EXE) that execs another is followed no longer.
 */
JW_TRACEPOINT(sched_process_exec)
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
#if JW_COMPAT
	struct inode *inode = BPF_CORE_READ(bprm, file, f_inode);
	struct jw_exe_key key = { .dev = BPF_CORE_READ(inode, i_sb, s_dev),
				  .ino = BPF_CORE_READ(inode, i_ino) };
#else
	struct inode *inode = bprm->file->f_inode;
	struct jw_exe_key key = { .dev = inode->i_sb->s_dev, .ino = inode->i_ino };
#endif
	struct jw_task_state *s = task_state_of(p);
	__u32 tgid = KREAD(p, tgid), *flags, add;
	__u16 rec_flags = 0;

	if (stopped)
		return 0;
	if (s && s->depth) {
		s->depth = 0;
		s->flags |= JW_TASK_EXITED;
		finish_task(s, KREAD(p, pid), bpf_ktime_get_ns());
	}
	/* The new program's Python, if any, is known by its own probe's first hit. */
	if (s) {
		s->py_probe = 0;
		s->py_timer_type = 0;
	}
	flags = follow_on ? bpf_map_lookup_elem(&followed, &tgid) : NULL;
	if (bpf_map_lookup_elem(&watched_exes, &key)) {
		rec_flags = JW_EXEC_WATCHED_EXE;
		/* Its forks are processes of the file too; one followed for itself stays so. */
		if (!flags)
			add = JW_FOLLOW_CHILDREN | JW_FOLLOW_EXE;
		else
			add = *flags | JW_FOLLOW_CHILDREN;
		if (bpf_map_update_elem(&followed, &tgid, &add, BPF_ANY))
			count_drop(JW_DROP_PROC);
		else
			follow_on = 1;
	} else if (!flags) {
		return 0;
	} else if ((*flags & (JW_FOLLOW_EXE | JW_FOLLOW_NAME)) == JW_FOLLOW_EXE) {
		rec_flags = JW_EXEC_LEFT;
		bpf_map_delete_elem(&followed, &tgid);
	} else if (*flags & JW_FOLLOW_EXE) {
		/* Its name, which the exec's rename kept, keeps it followed. */
		add = *flags & ~JW_FOLLOW_EXE;
		bpf_map_update_elem(&followed, &tgid, &add, BPF_EXIST);
	}
	send_proc(p, JW_REC_EXEC, rec_flags, 0, NULL);
	return 0;
}

/*
 * --name: a process takes a name (prctl(PR_SET_NAME), a write to its comm, an exec, here before
 * the exec's own record). One that takes a watched one is followed from here, its forks too (a
 * zygote child renames itself before it runs its loop); one followed only by its name that takes
 * another is followed no longer. A thread's name is not its process's: the main thread's only.
 * Attached only when names are watched; renames are rare.
 */
JW_TRACEPOINT(task_rename)
int BPF_PROG(on_rename, struct task_struct *p, const char *comm)
{
	struct jw_name_key key = {};
	__u32 tgid = KREAD(p, tgid), *flags, add;

	if (stopped || KREAD(p, pid) != tgid || (KREAD(p, flags) & PF_KTHREAD))
		return 0;
	bpf_probe_read_kernel_str(key.comm, sizeof(key.comm), comm);
	flags = bpf_map_lookup_elem(&followed, &tgid);
	if (bpf_map_lookup_elem(&watched_names, &key)) {
		/* One followed for good (-p, -- CMD) stays so; one for an --exe file, for either. */
		if (!flags)
			add = JW_FOLLOW_CHILDREN | JW_FOLLOW_NAME;
		else if (*flags & JW_FOLLOW_EXE)
			add = *flags | JW_FOLLOW_CHILDREN | JW_FOLLOW_NAME;
		else
			add = *flags | JW_FOLLOW_CHILDREN;
		if (bpf_map_update_elem(&followed, &tgid, &add, BPF_ANY)) {
			count_drop(JW_DROP_PROC);
			return 0;
		}
		follow_on = 1;
		send_proc(p, JW_REC_RENAME, JW_RENAME_NAMED |
			  (add & JW_FOLLOW_NAME ? JW_RENAME_BY_NAME : 0), 0, &key);
		return 0;
	}
	if (!flags || !(*flags & JW_FOLLOW_NAME))
		return 0;
	if (*flags & JW_FOLLOW_EXE) {
		/* Followed still for the file it runs. */
		add = *flags & ~JW_FOLLOW_NAME;
		bpf_map_update_elem(&followed, &tgid, &add, BPF_EXIST);
		send_proc(p, JW_REC_RENAME, JW_RENAME_LEFT | JW_RENAME_KEPT, 0, &key);
		return 0;
	}
	bpf_map_delete_elem(&followed, &tgid);
	send_proc(p, JW_REC_RENAME, JW_RENAME_LEFT, 0, &key);
	return 0;
}

/*
 * A watched thread that exits inside a task (the process crashed or was killed mid-jank): the
 * task ends there and is reported like any other. A followed process whose last thread exits is
 * unfollowed, and user space hears of it. One task storage lookup per thread exit, and a hash
 * lookup for a process's last one while some process is followed.
 */
JW_TRACEPOINT(sched_process_exit)
int BPF_PROG(on_exit, struct task_struct *p)
{
	struct jw_task_state *s;
	__u32 tgid;

	if (stopped)
		return 0;
	s = task_state_of(p);
	if (s && s->depth) {
		s->depth = 0;
		s->flags |= JW_TASK_EXITED;
		finish_task(s, KREAD(p, pid), bpf_ktime_get_ns());
	}
#if JW_COMPAT
	/* Task storage goes with its task; the hash standing for it, here. */
	if (s) {
		__u32 tid = KREAD(p, pid);

		bpf_map_delete_elem(&thread_link, &tid);
	}
#endif
	/* The group's last thread: the others exited (or an exec in a thread removed them). */
	if (!follow_on || BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	tgid = KREAD(p, tgid);
	if (bpf_map_delete_elem(&followed, &tgid))
		return 0;
	send_proc(p, JW_REC_EXIT, 0, 0, NULL);
	return 0;
}

#endif
