/* SPDX-License-Identifier: MIT */
/*
 * RTDS: earliest deadline first over a core's vCPUs, each a deferrable server.  A server's
 * periods are anchored where it was queued (start + n * period), its budget is refilled at
 * each boundary whether it was used or not, kept while its vCPU blocks, and taken while it
 * runs.  With every server's deadline at its period's end, EDF serves all budgets in full
 * while the budgets' utilisation on the core is at most 1; beyond that the library still
 * schedules (the tool refuses such a pool) and the periods that end with budget left are
 * counted as misses.
 */
#include <tern/sched.h>

/* Xen RTDS's defaults, for a vCPU queued without parameters. */
#define RTDS_DEFAULT_BUDGET_NS 4000000ULL
#define RTDS_DEFAULT_PERIOD_NS 10000000ULL

/* was_ready: the vCPU was ready to run when its period ended (it did not wait for a wake). */
static void replenish(struct sched_vcpu *v, uint64_t now, bool was_ready)
{
	uint64_t start;

	if (now < v->deadline)
		return;
	if (v->left != 0u && was_ready)
		v->misses++;
	start = v->deadline;
	if (v->rtds_pending) {
		v->budget = v->next_budget;
		v->period = v->next_period;
		v->rtds_pending = false;
	}
	/* Periods that passed while nobody asked (the core idle or away) refill nothing more. */
	start += (now - start) / v->period * v->period;
	v->deadline = start + v->period;
	v->left = v->budget;
}

static uint64_t next_period(const struct sched_vcpu *v)
{
	return v->rtds_pending ? v->next_period : v->period;
}

static struct sched_vcpu *rtds_pick(struct sched_core *core, uint64_t now, uint64_t *until)
{
	struct sched_vcpu *best = NULL;
	struct sched_vcpu *v;
	uint64_t u = SCHED_NEVER;
	uint32_t i;

	for (i = 0; i < core->count; i++) {
		v = core->runq[i];
		replenish(v, now, sched_ready(v));
		if (sched_ready(v) && v->left != 0u && (best == NULL || v->deadline < best->deadline))
			best = v;
	}
	if (best != NULL)
		u = (now + best->left < best->deadline) ? now + best->left : best->deadline;
	for (i = 0; i < core->count; i++) {
		v = core->runq[i];
		if (v == best || !sched_ready(v) || v->deadline >= u)
			continue;
		/* Its refill at v->deadline matters if it then comes before the running one. */
		if (best == NULL || v->deadline + next_period(v) < best->deadline)
			u = v->deadline;
	}
	*until = u;
	return best;
}

static bool rtds_wake(struct sched_vcpu *v, uint64_t now)
{
	const struct sched_vcpu *cur = v->core->current;

	replenish(v, now, false);
	if (v->left != 0u)
		return cur == NULL || v->deadline < cur->deadline;
	/* Exhausted: its refill must become one of the core's events. */
	return v->deadline < v->core->next_event;
}

static void rtds_block(struct sched_vcpu *v, uint64_t now)
{
	(void)v;
	(void)now;
}

static void rtds_ran(struct sched_vcpu *v, uint64_t from, uint64_t to)
{
	uint64_t t = from;

	while (t < to) {
		uint64_t end;

		replenish(v, t, true);
		end = to < v->deadline ? to : v->deadline;
		v->left -= (end - t < v->left) ? end - t : v->left;
		t = end;
	}
}

static const char *rtds_check(const struct sched_core *core, const struct sched_vcpu *v,
			      const struct sched_params *p)
{
	(void)core;
	if (v == NULL)
		return "RTDS parameters are a vCPU's";
	if (p->period < SCHED_RTDS_PERIOD_MIN_NS)
		return "the period is shorter than 100 us";
	if (p->period > SCHED_TIME_MAX_NS)
		return "the period is longer than an hour";
	if (p->budget < SCHED_RTDS_BUDGET_MIN_NS)
		return "the budget is shorter than 10 us";
	if (p->budget > p->period)
		return "the budget is longer than the period";
	return NULL;
}

static void rtds_apply(struct sched_core *core, struct sched_vcpu *v,
		       const struct sched_params *p, uint64_t now, bool at_once)
{
	(void)core;
	if (at_once) {
		v->budget = p->budget;
		v->period = p->period;
		v->rtds_pending = false;
	} else {
		/* A boundary already passed starts this period, not the change's. */
		replenish(v, now, sched_ready(v));
		v->next_budget = p->budget;
		v->next_period = p->period;
		v->rtds_pending = true;
	}
}

static void rtds_added(struct sched_vcpu *v, uint64_t now)
{
	if (v->period == 0u) {
		v->budget = RTDS_DEFAULT_BUDGET_NS;
		v->period = RTDS_DEFAULT_PERIOD_NS;
	}
	v->deadline = now + v->period;
	v->left = v->budget;
}

const struct sched_ops sched_rtds_ops = {
	.name = "rtds",
	.kind = SCHED_RTDS,
	.pick = rtds_pick,
	.wake = rtds_wake,
	.block = rtds_block,
	.ran = rtds_ran,
	.check = rtds_check,
	.apply = rtds_apply,
	.added = rtds_added,
};
