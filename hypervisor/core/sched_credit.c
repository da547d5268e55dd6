/* SPDX-License-Identifier: MIT */
/*
 * Credit: proportional share of one core.  Each accounting period (SCHED_CREDIT_PERIOD_NS,
 * anchored where the core started: no drift) gives every queued vCPU credit, its weight's share
 * of the period, and running takes it back.  The ready vCPU in the best class runs, the one
 * with the most credit within a class: boosted (woken with credit left, for at most
 * SCHED_CREDIT_BOOST_NS), then with credit, then without (spare time, which the others did not
 * want).  It runs for a slice, or until its boost or its credit runs out, so that a vCPU takes
 * its share and no more while others want the core.  `cap` parks a vCPU that has run its
 * percentage of the period until the next one.
 */
#include <tern/sched.h>

static uint64_t cap_ns(const struct sched_vcpu *v)
{
	return SCHED_CREDIT_PERIOD_NS * v->cap / 100u;
}

static bool parked(const struct sched_vcpu *v)
{
	return v->cap != 0u && v->used >= cap_ns(v);
}

static uint64_t weights(const struct sched_core *core)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < core->count; i++) {
		if (!core->runq[i]->paused)
			sum += core->runq[i]->weight;
	}
	return sum;
}

static int64_t share(const struct sched_vcpu *v, uint64_t sum)
{
	uint64_t ns;

	if (sum == 0u)
		return 0;
	ns = SCHED_CREDIT_PERIOD_NS * v->weight / sum;
	return (int64_t)ns;
}

/*
 * Out of line: a period's start is rare, and inlined it made every pick and every charge of a
 * switch save and restore the registers it needs.
 */
static __attribute__((noinline)) void new_period(struct sched_core *core, uint64_t now)
{
	struct sched_vcpu *v;
	uint64_t sum;
	uint32_t i;

	core->acct_start += (now - core->acct_start) / SCHED_CREDIT_PERIOD_NS *
			    SCHED_CREDIT_PERIOD_NS;
	for (i = 0; i < core->count; i++) {
		v = core->runq[i];
		if (v->credit_pending) {
			v->weight = v->next_weight;
			v->cap = v->next_cap;
			v->credit_pending = false;
		}
	}
	sum = weights(core);
	for (i = 0; i < core->count; i++) {
		v = core->runq[i];
		/*
		 * Refilled, not added to: credit unused while it slept cannot buy a burst that
		 * starves the others, and spare time it took when nobody else wanted the core
		 * (running without credit) is not held against it.
		 */
		v->credit = share(v, sum);
		v->used = 0;
	}
}

static inline void account(struct sched_core *core, uint64_t now)
{
	if (now >= core->acct_start + SCHED_CREDIT_PERIOD_NS)
		new_period(core, now);
}

static unsigned int class_of(const struct sched_vcpu *v)
{
	if (v->credit <= 0)
		return 0;
	return v->boost ? 2u : 1u;
}

static struct sched_vcpu *credit_pick(struct sched_core *core, uint64_t now, uint64_t *until)
{
	struct sched_vcpu *best = NULL;
	struct sched_vcpu *v;
	unsigned int best_class = 0;
	uint64_t u;
	bool any = false;
	uint32_t i;

	account(core, now);
	/* Not unrolled: a core holds a few vCPUs, and the unrolled loop's set-up cost more. */
#pragma clang loop unroll(disable)
	for (i = 0; i < core->count; i++) {
		unsigned int c;

		v = core->runq[i];
		if (!sched_ready(v))
			continue;
		any = true;
		if (parked(v))
			continue;
		/* The best's class kept, not worked out again for every vCPU it is compared with. */
		c = class_of(v);
		if (best == NULL || c > best_class || (c == best_class && v->credit > best->credit)) {
			best = v;
			best_class = c;
		}
	}
	/* The next period's credit (or a parked vCPU's return) is an event. */
	u = any ? core->acct_start + SCHED_CREDIT_PERIOD_NS : SCHED_NEVER;
	if (best != NULL) {
		uint64_t run = SCHED_CREDIT_SLICE_NS;

		if (best_class == 2u && best->boost_left < run)
			run = best->boost_left;
		if (best->credit > 0 && (uint64_t)best->credit < run)
			run = (uint64_t)best->credit;
		if (best->cap != 0u) {
			uint64_t left = cap_ns(best) - best->used;

			if (left < run)
				run = left;
		}
		if (now + run < u)
			u = now + run;
	}
	*until = u;
	return best;
}

static bool credit_wake(struct sched_vcpu *v, uint64_t now)
{
	const struct sched_vcpu *cur = v->core->current;

	account(v->core, now);
	if (v->credit > 0) {
		v->boost = true;
		v->boost_left = SCHED_CREDIT_BOOST_NS;
	}
	/* An idle core may be waiting for no event at all: it must decide again. */
	if (cur == NULL)
		return true;
	return class_of(v) == 2u && class_of(cur) != 2u && !parked(v);
}

static void credit_block(struct sched_vcpu *v, uint64_t now)
{
	(void)now;
	v->boost = false;
}

/* d ns run, all inside one accounting period. */
static void take(struct sched_vcpu *v, uint64_t d)
{
	v->credit -= (int64_t)d;
	v->used += d;
	if (v->boost) {
		v->boost_left = d < v->boost_left ? v->boost_left - d : 0u;
		v->boost = v->boost_left != 0u;
	}
}

/* A run across a period's start: each period charged its own part. */
static __attribute__((noinline)) void ran_across(struct sched_vcpu *v, uint64_t from, uint64_t to)
{
	struct sched_core *core = v->core;
	uint64_t t = from;

	while (t < to) {
		uint64_t end;

		account(core, t);
		end = core->acct_start + SCHED_CREDIT_PERIOD_NS;
		if (to < end)
			end = to;
		take(v, end - t);
		t = end;
	}
}

static void credit_ran(struct sched_vcpu *v, uint64_t from, uint64_t to)
{
	/* The run of nearly every switch lies inside the current period: one step, no frame. */
	if (from < to && to <= v->core->acct_start + SCHED_CREDIT_PERIOD_NS)
		take(v, to - from);
	else
		ran_across(v, from, to);
}

static const char *credit_check(const struct sched_core *core, const struct sched_vcpu *v,
				const struct sched_params *p)
{
	(void)core;
	if (v == NULL)
		return "credit parameters are a vCPU's";
	if (p->weight == 0u || p->weight > SCHED_CREDIT_WEIGHT_MAX)
		return "the weight is not between 1 and 65535";
	if (p->cap > 100u)
		return "the cap is more than 100 % of a core";
	return NULL;
}

static void credit_apply(struct sched_core *core, struct sched_vcpu *v,
			 const struct sched_params *p, uint64_t now, bool at_once)
{
	/* A boundary already passed is this period's start, not the change's. */
	account(core, now);
	if (at_once) {
		v->weight = p->weight;
		v->cap = p->cap;
		v->credit_pending = false;
	} else {
		v->next_weight = p->weight;
		v->next_cap = p->cap;
		v->credit_pending = true;
	}
}

static void credit_added(struct sched_vcpu *v, uint64_t now)
{
	struct sched_core *core = v->core;
	uint64_t sum;
	uint32_t i;

	account(core, now);
	sum = weights(core);
	/*
	 * A share at once, so that a vCPU queued mid-period need not wait for the next one; the
	 * others' credit shrinks to their new shares.
	 */
	for (i = 0; i < core->count; i++) {
		int64_t s = share(core->runq[i], sum);

		if (core->runq[i] == v || core->runq[i]->credit > s)
			core->runq[i]->credit = s;
	}
	v->used = 0;
	v->boost = false;
}

const struct sched_ops sched_credit_ops = {
	.name = "credit",
	.kind = SCHED_CREDIT,
	.pick = credit_pick,
	.wake = credit_wake,
	.block = credit_block,
	.ran = credit_ran,
	.check = credit_check,
	.apply = credit_apply,
	.added = credit_added,
};
