/* SPDX-License-Identifier: MIT */
/*
 * The schedulers (core/sched*.c): an operator's parameters (what `tern ctl sched-*` and the
 * description hand the hypervisor) and a core's life around them.  One core per input, its
 * scheduler chosen by the first byte; then steps: queue a vCPU with fuzzed parameters, change
 * a vCPU's or the core's parameters, pick after a fuzzed delay, run, block, wake, pause,
 * unpause, take a vCPU off.
 *
 * Oracle: a parameter set is accepted exactly when this harness's own reading of the rules
 * accepts it, and a refusal is one non-empty line; every decision lies in the future, runs a
 * vCPU that is queued on the core and ready, and (RTDS) has budget left, (credit) is under its
 * cap, (ARINC 653) is the first ready one of the window the time falls in, to that window's
 * exact end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tern/sched.h>

#define CHECK(cond) do {                                                        \
	if (!(cond)) {                                                          \
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);       \
		abort();                                                        \
	}                                                                       \
} while (0)

#define NV 6u

struct input {
	const uint8_t *p;
	size_t left;
};

static uint64_t take(struct input *in, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes && in->left != 0; i++, in->left--, in->p++)
		v |= (uint64_t)*in->p << (8 * i);
	return v;
}

/* Durations biased to the rules' edges. */
static uint64_t duration(struct input *in)
{
	static const uint64_t edge[] = { 0, 1, 9999, 10000, 99999, 100000, 1000000, 10000000,
					 SCHED_TIME_MAX_NS, SCHED_TIME_MAX_NS + 1 };
	uint8_t how = (uint8_t)take(in, 1);

	if (how < 64)
		return edge[how % 10];
	return take(in, how < 192 ? 3 : 5);
}

static void params_of(struct input *in, uint8_t kind, struct sched_params *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = take(in, 1) < 8 ? (uint8_t)(kind + 1) : kind;
	p->budget = duration(in);
	p->period = duration(in);
	p->weight = (uint32_t)take(in, 3) % 70000;
	p->cap = (uint32_t)take(in, 1) % 110;
	p->major = duration(in);
	p->nwindows = (uint32_t)take(in, 1) % (SCHED_MAX_WINDOWS + 3);
	for (unsigned int i = 0; i < SCHED_MAX_WINDOWS; i++) {
		uint8_t part = (uint8_t)take(in, 1);

		p->windows[i].partition = part >= 250 ? SCHED_NO_PARTITION : part % 10;
		p->windows[i].duration = i < p->nwindows ? duration(in) : 0;
	}
}

/* The rules, read independently of the library (tern/sched.h, docs/design.md). */
static bool acceptable(uint8_t kind, const struct sched_params *p, bool for_vcpu)
{
	uint64_t sum = 0;

	if (p->kind != kind)
		return false;
	switch (kind) {
	case SCHED_RTDS:
		return for_vcpu && p->period >= SCHED_RTDS_PERIOD_MIN_NS &&
		       p->period <= SCHED_TIME_MAX_NS && p->budget >= SCHED_RTDS_BUDGET_MIN_NS &&
		       p->budget <= p->period;
	case SCHED_CREDIT:
		return for_vcpu && p->weight >= 1 && p->weight <= 65535 && p->cap <= 100;
	case SCHED_ARINC653:
		if (for_vcpu || p->major == 0 || p->major > SCHED_TIME_MAX_NS || p->nwindows == 0 ||
		    p->nwindows > SCHED_MAX_WINDOWS)
			return false;
		for (unsigned int i = 0; i < p->nwindows; i++) {
			if (p->windows[i].duration == 0 || p->windows[i].duration > p->major ||
			    (p->windows[i].partition >= TERN_MAX_PARTITIONS &&
			     p->windows[i].partition != SCHED_NO_PARTITION))
				return false;
			sum += p->windows[i].duration;
		}
		return sum <= p->major;
	default:
		return false;
	}
}

static void one_line(const char *why)
{
	CHECK(why != NULL && why[0] != '\0' && strchr(why, '\n') == NULL);
}

/*
 * The window `now` falls in, by the core's own timeline, from its frame's start (what a pick
 * that follows on from the last one works out without): its partition, or none; its exact
 * start and end.
 */
static uint32_t window_at(const struct sched_core *core, uint64_t now, uint64_t *start,
			  uint64_t *end)
{
	uint64_t frame = now - (now - core->epoch) % core->major;

	*start = frame;
	for (uint32_t i = 0; i < core->nwindows; i++) {
		*end = *start + core->windows[i].duration;
		if (now < *end)
			return core->windows[i].partition;
		*start = *end;
	}
	*end = frame + core->major;
	return SCHED_NO_PARTITION;
}

/* A window's vCPU: its partition's first ready one in the run queue. */
static const struct sched_vcpu *first_ready(const struct sched_core *core, uint32_t partition)
{
	for (uint32_t i = 0; i < core->count; i++) {
		if (core->runq[i]->partition == partition && sched_ready(core->runq[i]))
			return core->runq[i];
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sched_core core;
	static struct sched_vcpu v[NV];
	struct input in = { data, size };
	struct sched_params p;
	struct sched_decision d;
	uint8_t kind = (uint8_t)(take(&in, 1) % 4);
	uint64_t now = take(&in, 4);
	const char *why;

	CHECK(sched_core_init(&core, sched_ops_of(kind), NULL, now) == NULL);
	for (unsigned int i = 0; i < NV; i++)
		sched_vcpu_init(&v[i], &v[i], (uint16_t)(i % 4));
	while (in.left != 0) {
		uint8_t op = (uint8_t)take(&in, 1);
		struct sched_vcpu *x = &v[(op >> 4) % NV];

		switch (op % 10) {
		case 0:	/* queue, with or without parameters */
			if (x->core != NULL)
				break;
			if (op & 0x80) {
				params_of(&in, kind, &p);
				why = sched_add(&core, x, &p, now);
				if (why != NULL)
					one_line(why);
				/* a null core holds one vCPU; otherwise exactly the rules */
				if (kind != SCHED_NULL)
					CHECK((why == NULL) == acceptable(kind, &p, true));
			} else {
				why = sched_add(&core, x, NULL, now);
				CHECK(why == NULL || (kind == SCHED_NULL && core.count == 1));
			}
			break;
		case 1:	/* an operator's change of a vCPU's, or the core's, parameters */
			params_of(&in, kind, &p);
			why = sched_params(&core, (op & 0x80) ? NULL : x, &p, now);
			if (why != NULL)
				one_line(why);
			if ((op & 0x80) || x->core == &core)
				CHECK((why == NULL) == acceptable(kind, &p, !(op & 0x80)));
			else
				CHECK(why != NULL);
			break;
		case 2:
		case 3:	/* a scheduling point, after a while */
			now += take(&in, op & 0x80 ? 4 : 2);
			d = sched_pick(&core, now);
			CHECK(d.until > now);
			if (kind == SCHED_ARINC653 && core.major != 0) {
				uint64_t start, end;
				uint32_t part = window_at(&core, now, &start, &end);

				CHECK(d.vcpu == first_ready(&core, part));
				CHECK(d.until == end && core.window_start == start);
			}
			if (d.vcpu == NULL)
				break;
			CHECK(d.vcpu->core == &core && sched_ready(d.vcpu));
			if (kind == SCHED_RTDS)
				CHECK(d.vcpu->left != 0 && d.until <= now + d.vcpu->left);
			if (kind == SCHED_CREDIT)
				CHECK(d.vcpu->cap == 0 ||
				      d.vcpu->used < SCHED_CREDIT_PERIOD_NS * d.vcpu->cap / 100);
			if (kind == SCHED_NULL)
				CHECK(d.until == SCHED_NEVER);
			/* it runs, to the event or an exit before it */
			{
				uint64_t end = now + take(&in, 3);

				if (end > d.until)
					end = d.until;
				sched_ran(d.vcpu, now, end);
				now = end;
			}
			break;
		case 4:
			sched_block(x, now);
			CHECK(x->core == NULL || x->state == SCHED_BLOCKED);
			CHECK(core.current != x);
			break;
		case 5:
		case 6:
			now += take(&in, 2);
			(void)sched_wake(x, now);
			CHECK(x->core == NULL || x->state != SCHED_BLOCKED || x->paused);
			break;
		case 7:
			sched_pause(x, now);
			CHECK(core.current != x);
			break;
		case 8:
			(void)sched_unpause(x, now);
			CHECK(!x->paused);
			break;
		default:
			sched_remove(x);
			CHECK(x->core == NULL && core.current != x);
			for (unsigned int i = 0; i < core.count; i++)
				CHECK(core.runq[i] != x);
			break;
		}
	}
	return 0;
}
