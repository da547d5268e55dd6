/* SPDX-License-Identifier: MIT */
/*
 * ARINC 653: a fixed timeline per core, repeated every major frame.  Every boundary is
 * computed from the frame's absolute start (epoch + n * major + the window's offset), never
 * from when the core got round to switching, so a late decision does not move the next one:
 * window starts neither drift nor jitter.  A window whose partition has no ready vCPU here
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

static struct sched_vcpu *a653_pick(struct sched_core *core, uint64_t now, uint64_t *until)
{
	uint64_t frame;
	uint64_t offset;
	uint64_t start = 0;
	uint32_t i;

	if (core->a653_pending && now >= core->next_epoch) {
		core->epoch = core->next_epoch;
		core->major = core->next_major;
		core->nwindows = core->next_nwindows;
		(void)memcpy(core->windows, core->next_windows, sizeof(core->windows));
		core->a653_pending = false;
	}
	if (core->major == 0u) {
		*until = SCHED_NEVER;
		return NULL;
	}
	frame = core->epoch + (now - core->epoch) / core->major * core->major;
	offset = now - frame;
	for (i = 0; i < core->nwindows; i++) {
		if (offset < start + core->windows[i].duration) {
			core->window_start = frame + start;
			core->window = i;
			*until = frame + start + core->windows[i].duration;
			return partition_vcpu(core, core->windows[i].partition);
		}
		start += core->windows[i].duration;
	}
	/* The frame's tail after its last window. */
	core->window_start = frame + start;
	core->window = core->nwindows;
	*until = frame + core->major;
	return NULL;
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
