/* SPDX-License-Identifier: MIT */
/*
 * What every scheduler shares (tern/sched.h): the run queue, the run states, parameter checks,
 * and the null scheduler, whose core runs its one vCPU for ever.
 */
#include <tern/sched.h>
#include <tern/lib.h>

const struct sched_ops *sched_ops_of(uint8_t kind)
{
	switch (kind) {
	case SCHED_NULL:
		return &sched_null_ops;
	case SCHED_ARINC653:
		return &sched_arinc653_ops;
	case SCHED_RTDS:
		return &sched_rtds_ops;
	case SCHED_CREDIT:
		return &sched_credit_ops;
	default:
		return NULL;
	}
}

const char *sched_core_init(struct sched_core *core, const struct sched_ops *ops,
			    const struct sched_params *p, uint64_t now)
{
	const char *why;

	(void)memset(core, 0, sizeof(*core));
	core->ops = ops;
	core->epoch = now;
	core->acct_start = now;
	core->next_event = SCHED_NEVER;
	if (p == NULL)
		return NULL;
	if (p->kind != ops->kind)
		return "parameters of another scheduler";
	why = ops->check(core, NULL, p);
	if (why == NULL)
		ops->apply(core, NULL, p, now, true);
	return why;
}

void sched_vcpu_init(struct sched_vcpu *v, void *owner, uint16_t partition)
{
	(void)memset(v, 0, sizeof(*v));
	v->owner = owner;
	v->partition = partition;
	v->state = SCHED_BLOCKED;
	v->weight = SCHED_CREDIT_WEIGHT_DEFAULT;
	v->next_weight = SCHED_CREDIT_WEIGHT_DEFAULT;
}

const char *sched_add(struct sched_core *core, struct sched_vcpu *v,
		      const struct sched_params *p, uint64_t now)
{
	const char *why = NULL;

	if (v->core != NULL)
		return "the vCPU is already on a core";
	if (core->count == SCHED_RUNQ_MAX)
		return "the core's run queue is full";
	if (core->ops == &sched_null_ops && core->count != 0u)
		return "a core of a null pool runs one vCPU";
	if (p != NULL) {
		if (p->kind != core->ops->kind)
			return "parameters of another scheduler";
		why = core->ops->check(core, v, p);
		if (why != NULL)
			return why;
	}
	core->runq[core->count] = v;
	core->count++;
	core->runq_changes++;
	v->core = core;
	v->state = SCHED_RUNNABLE;
	if (p != NULL)
		core->ops->apply(core, v, p, now, true);
	core->ops->added(v, now);
	return NULL;
}

void sched_remove(struct sched_vcpu *v)
{
	struct sched_core *core = v->core;
	uint32_t i;
	uint32_t j;

	if (core == NULL)
		return;
	for (i = 0; i < core->count; i++) {
		if (core->runq[i] == v) {
			/* Keeps the others in order: ties go to the earlier queued. */
			for (j = i + 1u; j < core->count; j++)
				core->runq[j - 1u] = core->runq[j];
			core->count--;
			core->runq[core->count] = NULL;
			core->runq_changes++;
			break;
		}
	}
	if (core->current == v)
		core->current = NULL;
	if (v->state == (uint8_t)SCHED_RUNNING)
		v->state = SCHED_RUNNABLE;
	v->core = NULL;
}

struct sched_decision sched_pick(struct sched_core *core, uint64_t now)
{
	struct sched_decision d;

	/* Every pick sets its `until`: written in place, not through a copy on the stack. */
	d.vcpu = core->ops->pick(core, now, &core->next_event);
	if (core->current != NULL && core->current != d.vcpu &&
	    core->current->state == (uint8_t)SCHED_RUNNING)
		core->current->state = SCHED_RUNNABLE;
	if (d.vcpu != NULL)
		d.vcpu->state = SCHED_RUNNING;
	core->current = d.vcpu;
	d.until = core->next_event;
	return d;
}

bool sched_wake(struct sched_vcpu *v, uint64_t now)
{
	if (v->core == NULL || v->state != (uint8_t)SCHED_BLOCKED)
		return false;
	v->state = SCHED_RUNNABLE;
	if (v->paused)
		return false;
	return v->core->ops->wake(v, now);
}

void sched_block(struct sched_vcpu *v, uint64_t now)
{
	if (v->core == NULL || v->state == (uint8_t)SCHED_BLOCKED)
		return;
	if (v->core->current == v)
		v->core->current = NULL;
	v->state = SCHED_BLOCKED;
	v->core->ops->block(v, now);
}

void sched_ran(struct sched_vcpu *v, uint64_t from, uint64_t to)
{
	if (v->core == NULL || to <= from)
		return;
	v->total += to - from;
	v->core->ops->ran(v, from, to);
}

void sched_pause(struct sched_vcpu *v, uint64_t now)
{
	(void)now;
	if (v->core != NULL && v->core->current == v)
		v->core->current = NULL;
	if (v->state == (uint8_t)SCHED_RUNNING)
		v->state = SCHED_RUNNABLE;
	v->paused = true;
}

bool sched_unpause(struct sched_vcpu *v, uint64_t now)
{
	if (!v->paused)
		return false;
	v->paused = false;
	if (v->core == NULL || v->state == (uint8_t)SCHED_BLOCKED)
		return false;
	return v->core->ops->wake(v, now);
}

const char *sched_params(struct sched_core *core, struct sched_vcpu *v,
			 const struct sched_params *p, uint64_t now)
{
	const char *why;

	if (p->kind != core->ops->kind)
		return "parameters of another scheduler";
	if (v != NULL && v->core != core)
		return "the vCPU is not on this core";
	why = core->ops->check(core, v, p);
	if (why != NULL)
		return why;
	core->ops->apply(core, v, p, now, false);
	return NULL;
}

/* null: the core's one vCPU, whenever it is ready. */

static struct sched_vcpu *null_pick(struct sched_core *core, uint64_t now, uint64_t *until)
{
	(void)now;
	*until = SCHED_NEVER;
	if (core->count != 0u && sched_ready(core->runq[0]))
		return core->runq[0];
	return NULL;
}

static bool null_wake(struct sched_vcpu *v, uint64_t now)
{
	(void)now;
	return v->core->current == NULL;
}

static void null_block(struct sched_vcpu *v, uint64_t now)
{
	(void)v;
	(void)now;
}

static void null_ran(struct sched_vcpu *v, uint64_t from, uint64_t to)
{
	(void)v;
	(void)from;
	(void)to;
}

static const char *null_check(const struct sched_core *core, const struct sched_vcpu *v,
			      const struct sched_params *p)
{
	(void)core;
	(void)v;
	(void)p;
	return "the null scheduler has no parameters";
}

static void null_apply(struct sched_core *core, struct sched_vcpu *v,
		       const struct sched_params *p, uint64_t now, bool at_once)
{
	(void)core;
	(void)v;
	(void)p;
	(void)now;
	(void)at_once;
}

static void null_added(struct sched_vcpu *v, uint64_t now)
{
	(void)v;
	(void)now;
}

const struct sched_ops sched_null_ops = {
	.name = "null",
	.kind = SCHED_NULL,
	.pick = null_pick,
	.wake = null_wake,
	.block = null_block,
	.ran = null_ran,
	.check = null_check,
	.apply = null_apply,
	.added = null_added,
};
