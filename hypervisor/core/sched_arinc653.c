/* SPDX-License-Identifier: MIT */
/*
 * ARINC 653: a fixed timeline per core, repeated every major frame.  Every boundary is
 * epoch + n * major + the window's offset, never when the core got round to switching, so a
 * late decision does not move the next one: window starts neither drift nor jitter.  A pick
 * in the window the last one found, or in the next, takes the boundaries on from there (the
 * next window starts at that one's exact end: the same sum, one window further); any other
 * works them out from its frame's start.  A window whose partition has no ready vCPU here
 * leaves the core idle to its end: unused time is given to no one.
 */
#include <tern/sched.h>
#include <tern/lib.h>

static struct sched_vcpu *partition_vcpu(const struct sched_core *core, uint16_t partition)
{
	uint32_t i;

	for (i = 0; i < core->count; i++) {
		if (core->runq[i]->partition == partition && sched_ready(core->runq[i]))
			return core->runq[i];
	}
	return NULL;
}

/* Each slot's partition's one vCPU here, if it has exactly one: the queue or timeline changed. */
static __attribute__((noinline)) void find_only(struct sched_core *core)
{
	uint32_t w;
	uint32_t i;

	for (w = 0; w <= core->nwindows; w++) {
		struct sched_vcpu *only = NULL;
		uint32_t n = 0;

		for (i = 0; i < core->count; i++) {
			if (core->runq[i]->partition == core->a653_slot[w].partition) {
				only = core->runq[i];
				n++;
			}
		}
		core->a653_only[w] = n == 1u ? only : NULL;
	}
	core->a653_runq_seen = core->runq_changes;
}

/* The vCPU window w runs: its partition's first ready one on the queue. */
static struct sched_vcpu *window_vcpu(const struct sched_core *core, uint32_t w)
{
	struct sched_vcpu *v = core->a653_only[w];

	if (v == NULL)
		return partition_vcpu(core, core->a653_slot[w].partition);
	return sched_ready(v) ? v : NULL;
}

/* The timeline set for `next_epoch` rules from now on, window by window and its tail. */
static void take_timeline(struct sched_core *core)
{
	uint64_t sum = 0;
	uint32_t n;
	uint32_t i;

	core->epoch = core->next_epoch;
	core->major = core->next_major;
	core->nwindows = core->next_nwindows;
	(void)memcpy(core->windows, core->next_windows, sizeof(core->windows));
	core->a653_pending = false;
	n = core->nwindows;
	for (i = 0; i < n; i++) {
		core->a653_slot[i].length = core->windows[i].duration;
		core->a653_slot[i].partition = core->windows[i].partition;
		core->a653_slot[i].next = (uint8_t)(i + 1u);
		sum += core->windows[i].duration;
	}
	/* Windows that fill the frame leave no tail. */
	if (sum == core->major)
		core->a653_slot[n - 1u].next = 0;
	core->a653_slot[n].length = core->major - sum;
	core->a653_slot[n].partition = SCHED_NO_PARTITION;
	core->a653_slot[n].next = 0;
	find_only(core);
}

/*
 * The window `now` falls in, from its frame's start: the first pick, a late one that skipped
 * windows, a new timeline's first.
 */
static __attribute__((noinline)) struct sched_vcpu *a653_find(struct sched_core *core,
							     uint64_t now, uint64_t *until)
{
	uint64_t frame;
	uint64_t offset;
	uint64_t start = 0;
	uint32_t i = 0;

	if (core->a653_pending && now >= core->next_epoch)
		take_timeline(core);
	else if (core->a653_runq_seen != core->runq_changes)
		find_only(core);
	else {
		/* What it found of the queue holds. */
	}
	if (core->major == 0u) {
		*until = SCHED_NEVER;
		return NULL;
	}
	frame = core->epoch + (now - core->epoch) / core->major * core->major;
	offset = now - frame;
	while (i < core->nwindows && offset >= start + core->a653_slot[i].length) {
		start += core->a653_slot[i].length;
		i++;
	}
	core->window = i;
	core->window_start = frame + start;
	core->window_end = frame + start + core->a653_slot[i].length;
	*until = core->window_end;
	return window_vcpu(core, i);
}

/*
 * In the last pick's window, or in the next one, which starts exactly where it ended (the
 * common pick, at a window's end): found without the division and the walk.  Before the first
 * timeline every slot is empty and every pick goes to a653_find.
 */
static struct sched_vcpu *a653_pick(struct sched_core *core, uint64_t now, uint64_t *until)
{
	uint32_t next;
	uint64_t length;

	if ((core->a653_pending && now >= core->next_epoch) ||
	    core->a653_runq_seen != core->runq_changes)
		return a653_find(core, now, until);
	next = core->a653_slot[core->window].next;
	length = core->a653_slot[next].length;
	if (now - core->window_end < length) {
		core->window_start = core->window_end;
		core->window_end += length;
		core->window = next;
	} else if (now - core->window_start >= core->window_end - core->window_start) {
		return a653_find(core, now, until);
	} else {
		/* In the window the last pick found. */
	}
	*until = core->window_end;
	return window_vcpu(core, core->window);
}

static bool a653_wake(struct sched_vcpu *v, uint64_t now)
{
	uint64_t until;

	return v->core->current == NULL && a653_pick(v->core, now, &until) == v;
}

static void a653_block(struct sched_vcpu *v, uint64_t now)
{
	(void)v;
	(void)now;
}

static void a653_ran(struct sched_vcpu *v, uint64_t from, uint64_t to)
{
	(void)v;
	(void)from;
	(void)to;
}

static const char *a653_check(const struct sched_core *core, const struct sched_vcpu *v,
			      const struct sched_params *p)
{
	uint64_t sum = 0;
	uint32_t i;

	(void)core;
	if (v != NULL)
		return "ARINC 653 parameters are a core's timeline, not a vCPU's";
	if (p->major == 0u)
		return "the major frame is zero";
	if (p->major > SCHED_TIME_MAX_NS)
		return "the major frame is longer than an hour";
	if (p->nwindows == 0u || p->nwindows > SCHED_MAX_WINDOWS)
		return "a timeline has 1 to 16 windows";
	for (i = 0; i < p->nwindows; i++) {
		if (p->windows[i].duration == 0u)
			return "a window is empty";
		if (p->windows[i].partition >= TERN_MAX_PARTITIONS &&
		    p->windows[i].partition != SCHED_NO_PARTITION)
			return "a window names no partition";
		if (p->windows[i].duration > p->major)
			return "the windows are longer than the major frame";
		sum += p->windows[i].duration;
	}
	if (sum > p->major)
		return "the windows are longer than the major frame";
	return NULL;
}

static void a653_apply(struct sched_core *core, struct sched_vcpu *v,
		       const struct sched_params *p, uint64_t now, bool at_once)
{
	(void)v;
	(void)memset(core->next_windows, 0, sizeof(core->next_windows));
	(void)memcpy(core->next_windows, p->windows, p->nwindows * sizeof(p->windows[0]));
	core->next_major = p->major;
	core->next_nwindows = p->nwindows;
	core->a653_pending = true;
	if (at_once || core->major == 0u)
		core->next_epoch = now;
	else
		core->next_epoch = core->epoch +
			((now - core->epoch) / core->major + 1u) * core->major;
}

static void a653_added(struct sched_vcpu *v, uint64_t now)
{
	(void)v;
	(void)now;
}

const struct sched_ops sched_arinc653_ops = {
	.name = "arinc653",
	.kind = SCHED_ARINC653,
	.pick = a653_pick,
	.wake = a653_wake,
	.block = a653_block,
	.ran = a653_ran,
	.check = a653_check,
	.apply = a653_apply,
	.added = a653_added,
};
