/* SPDX-License-Identifier: MIT */
/* RTDS (core/sched_rtds.c): EDF over deferrable servers. */
#include <string.h>
#include <tern/sched.h>
#include "check.h"
#include "tests.h"
#include "test_sched_sim.h"

/* What each vCPU ran in each of its periods (anchored at 0, where the tests queue them). */
struct served {
	uint64_t period[SIM_MAX_VCPUS], budget[SIM_MAX_VCPUS];
	uint64_t k[SIM_MAX_VCPUS], got[SIM_MAX_VCPUS];
	uint64_t short_periods[SIM_MAX_VCPUS], over[SIM_MAX_VCPUS];
};

static void close_period(struct served *w, unsigned int i, uint64_t k)
{
	if (w->got[i] < w->budget[i])
		w->short_periods[i]++;
	if (w->got[i] > w->budget[i])
		w->over[i]++;
	/* Periods it never ran in at all. */
	if (k > w->k[i] + 1)
		w->short_periods[i] += k - w->k[i] - 1;
	w->k[i] = k;
	w->got[i] = 0;
}

static void watch_served(struct sim *sim, struct sim_vcpu *v, uint64_t from, uint64_t to)
{
	struct served *w = sim->ctx;
	unsigned int i = v->id;

	while (from < to) {
		uint64_t k = from / w->period[i];
		uint64_t end = (k + 1) * w->period[i] < to ? (k + 1) * w->period[i] : to;

		if (k != w->k[i])
			close_period(w, i, k);
		w->got[i] += end - from;
		from = end;
	}
}

/* Closes the last period of each vCPU at `end`, a multiple of every period. */
static void close_all(struct sim *sim, struct served *w, uint64_t end)
{
	for (unsigned int i = 0; i < sim->n; i++)
		close_period(w, i, end / w->period[i]);
}

/*
 * Random task sets whose utilisation is at most 1, every vCPU always runnable: every vCPU gets
 * its whole budget in every one of its periods, for 50 hyperperiods.
 */
void test_sched_rtds_no_deadline_miss_up_to_full_utilisation(void)
{
	static const uint64_t periods[] = { MS(1), MS(2), MS(4), MS(5), MS(10), MS(20) };
	uint32_t rng = 2024;

	for (unsigned int set = 0; set < 40; set++) {
		static struct sim sim;
		static struct served w;
		unsigned int n = 2 + sim_rand(&rng) % 7;
		uint64_t share[SIM_MAX_VCPUS], sum = 0, total = 0;
		/* utilisation in parts per million: 60 % to exactly 100 % */
		uint64_t target = set % 4 == 0 ? 1000000 : 600000 + sim_rand(&rng) % 400001;

		sim_init(&sim, SCHED_RTDS, NULL);
		memset(&w, 0, sizeof(w));
		sim.observe = watch_served;
		sim.ctx = &w;
		for (unsigned int i = 0; i < n; i++) {
			share[i] = 1 + sim_rand(&rng) % 100;
			sum += share[i];
		}
		for (unsigned int i = 0; i < n; i++) {
			uint64_t period = periods[sim_rand(&rng) % 6];
			/* Rounded down: the set's utilisation stays at most the target. */
			uint64_t budget = period * share[i] / sum * target / 1000000;
			struct sched_params p;

			if (budget < SCHED_RTDS_BUDGET_MIN_NS)
				budget = SCHED_RTDS_BUDGET_MIN_NS;
			p = sim_rtds(budget, period);
			w.period[i] = period;
			w.budget[i] = budget;
			total += budget * (MS(20) / period);
			sim_add(&sim, (uint16_t)i, &p);
		}
		if (total > MS(20))
			continue;	/* the minimum budget pushed it over: not this test's case */
		sim_run(&sim, MS(20) * 50);
		close_all(&sim, &w, MS(20) * 50);
		for (unsigned int i = 0; i < n; i++) {
			CHECK_EQ(w.short_periods[i], 0);
			CHECK_EQ(w.over[i], 0);
			CHECK_EQ(sim.vcpu[i].s.misses, 0);
			CHECK_EQ(sim.vcpu[i].s.total, w.budget[i] * (MS(20) * 50 / w.period[i]));
		}
	}
}

/* Over 100 %: the library still schedules; the periods served short are counted. */
void test_sched_rtds_overload_is_accepted_and_misses_show(void)
{
	static struct sim sim;
	static struct served w;
	struct sched_params p = sim_rtds(MS(6), MS(10));

	sim_init(&sim, SCHED_RTDS, NULL);
	sim.observe = watch_served;
	sim.ctx = &w;
	for (unsigned int i = 0; i < 2; i++) {
		sim_add(&sim, (uint16_t)i, &p);
		w.period[i] = MS(10);
		w.budget[i] = MS(6);
	}
	sim_run(&sim, MS(1000));
	close_all(&sim, &w, MS(1000));
	CHECK(sim.vcpu[0].s.misses + sim.vcpu[1].s.misses >= 90);
	CHECK(w.short_periods[0] + w.short_periods[1] >= 90);
	/* and the core is never idle */
	CHECK_EQ(sim.vcpu[0].s.total + sim.vcpu[1].s.total, MS(1000));
}

/* A vCPU that blocks mid-period keeps what is left of its budget for when it wakes. */
void test_sched_rtds_budget_kept_while_blocked(void)
{
	static struct sim sim;
	struct sched_params pa = sim_rtds(MS(4), MS(10)), pb = sim_rtds(MS(12), MS(20));
	struct sched_decision d;
	struct sim_vcpu *a, *b;

	sim_init(&sim, SCHED_RTDS, NULL);
	a = sim_add(&sim, 0, &pa);
	b = sim_add(&sim, 1, &pb);
	d = sched_pick(&sim.core, 0);
	CHECK(d.vcpu == &a->s);
	CHECK_EQ(d.until, MS(4));
	sched_ran(&a->s, 0, MS(1));
	sched_block(&a->s, MS(1));
	d = sched_pick(&sim.core, MS(1));
	CHECK(d.vcpu == &b->s);
	/* b's budget end; a's refill at 10 ms need not be an event: a is blocked */
	CHECK_EQ(d.until, MS(13));
	sched_ran(&b->s, MS(1), MS(3));
	CHECK(sched_wake(&a->s, MS(3)));	/* earlier deadline: preempts */
	CHECK_EQ(a->s.left, MS(3));
	d = sched_pick(&sim.core, MS(3));
	CHECK(d.vcpu == &a->s);
	CHECK_EQ(d.until, MS(6));
	sched_ran(&a->s, MS(3), MS(6));
	d = sched_pick(&sim.core, MS(6));
	CHECK(d.vcpu == &b->s);
	/* a exhausted: its refill at 10 ms (deadline 20 ms) does not come before b's 20 ms */
	CHECK_EQ(d.until, MS(6) + MS(10));
	/* A whole period blocked: refilled at the boundary all the same, unused. */
	sched_block(&a->s, MS(6));
	sched_ran(&b->s, MS(6), MS(16));
	CHECK(!sched_wake(&a->s, MS(16)));	/* deadline 20 ms, not before b's */
	CHECK_EQ(a->s.left, MS(4));
	CHECK_EQ(a->s.deadline, MS(20));
	CHECK_EQ(a->s.misses, 0);
}

/* The next event: the running one's budget end, or a refill that would preempt it. */
void test_sched_rtds_next_event_is_a_preempting_refill(void)
{
	static struct sim sim;
	struct sched_params pa = sim_rtds(MS(1), MS(5)), pb = sim_rtds(MS(8), MS(20));
	struct sched_decision d;
	struct sim_vcpu *a, *b;

	sim_init(&sim, SCHED_RTDS, NULL);
	a = sim_add(&sim, 0, &pa);
	b = sim_add(&sim, 1, &pb);
	d = sched_pick(&sim.core, 0);
	CHECK(d.vcpu == &a->s);
	sched_ran(&a->s, 0, MS(1));
	d = sched_pick(&sim.core, MS(1));
	CHECK(d.vcpu == &b->s);
	CHECK_EQ(d.until, MS(5));	/* a's refill, deadline 10 ms < b's 20 ms */
	sched_ran(&b->s, MS(1), MS(5));
	d = sched_pick(&sim.core, MS(5));
	CHECK(d.vcpu == &a->s);
	sched_ran(&a->s, MS(5), MS(6));
	/* Nobody with budget: idle until the first refill; a woken exhausted vCPU re-arms. */
	sched_block(&b->s, MS(6));
	d = sched_pick(&sim.core, MS(6));
	CHECK(d.vcpu == NULL);
	CHECK_EQ(d.until, MS(10));
	sched_block(&a->s, MS(6));
	d = sched_pick(&sim.core, MS(6));
	CHECK_EQ(d.until, SCHED_NEVER);
	CHECK(sched_wake(&a->s, MS(7)));	/* exhausted, refill at 10 ms: an event to arm */
	d = sched_pick(&sim.core, MS(7));
	CHECK(d.vcpu == NULL);
	CHECK_EQ(d.until, MS(10));
	/* The core decided late, after a's refill and b's period: it accounts each period. */
	sched_wake(&b->s, MS(7));
	d = sched_pick(&sim.core, MS(7));
	CHECK(d.vcpu == &b->s);
	sched_ran(&b->s, MS(7), MS(23));	/* across b's boundary at 20 ms */
	CHECK_EQ(b->s.deadline, MS(40));
	CHECK_EQ(b->s.left, MS(5));
}

/* A vCPU that never blocks gets its budget per period and not a nanosecond more. */
void test_sched_rtds_hostile_vcpu_held_to_its_budget(void)
{
	static struct sim sim;
	static struct served w;
	struct sched_params ph = sim_rtds(MS(2), MS(10)), pv = sim_rtds(MS(5), MS(10));

	sim_init(&sim, SCHED_RTDS, NULL);
	sim.observe = watch_served;
	sim.ctx = &w;
	sim_add(&sim, 0, &ph);
	sim_add(&sim, 1, &pv);
	w.period[0] = w.period[1] = MS(10);
	w.budget[0] = MS(2);
	w.budget[1] = MS(5);
	sim_run(&sim, MS(1000));
	close_all(&sim, &w, MS(1000));
	CHECK_EQ(w.over[0], 0);
	CHECK_EQ(w.short_periods[1], 0);
	CHECK_EQ(sim.vcpu[0].s.total, MS(200));
	CHECK_EQ(sim.vcpu[1].s.total, MS(500));
}

void test_sched_rtds_params_checked(void)
{
	static struct sched_core core;
	static struct sched_vcpu v;
	struct sched_params p = sim_rtds(MS(1), MS(10));

	CHECK(sched_core_init(&core, &sched_rtds_ops, NULL, 0) == NULL);
	sched_vcpu_init(&v, &v, 0);
	/* Queued without parameters: Xen's defaults, 4 ms every 10 ms. */
	CHECK(sched_add(&core, &v, NULL, 0) == NULL);
	CHECK_EQ(v.budget, MS(4));
	CHECK_EQ(v.period, MS(10));
	CHECK(strcmp(sched_params(&core, NULL, &p, 0), "RTDS parameters are a vCPU's") == 0);
	p.period = US(99);
	CHECK(strcmp(sched_params(&core, &v, &p, 0), "the period is shorter than 100 us") == 0);
	p.period = SCHED_TIME_MAX_NS + 1;
	CHECK(strcmp(sched_params(&core, &v, &p, 0), "the period is longer than an hour") == 0);
	p = sim_rtds(US(9), MS(10));
	CHECK(strcmp(sched_params(&core, &v, &p, 0), "the budget is shorter than 10 us") == 0);
	p = sim_rtds(MS(10) + 1, MS(10));
	CHECK(strcmp(sched_params(&core, &v, &p, 0), "the budget is longer than the period") == 0);
	p = sim_rtds(MS(10), MS(10));
	CHECK(sched_params(&core, &v, &p, 0) == NULL);
}

/* A change of budget and period takes effect at the vCPU's next period boundary. */
void test_sched_rtds_params_from_the_next_period(void)
{
	static struct sim sim;
	struct sched_params p = sim_rtds(MS(2), MS(10)), q = sim_rtds(MS(6), MS(20));
	struct sim_vcpu *a;

	sim_init(&sim, SCHED_RTDS, NULL);
	a = sim_add(&sim, 0, &p);
	sim_run(&sim, MS(5));
	CHECK(sched_params(&sim.core, &a->s, &q, MS(5)) == NULL);
	CHECK_EQ(a->s.period, MS(10));
	sim_run(&sim, MS(10));
	CHECK_EQ(a->s.total, MS(2));
	/* From 10 ms: 6 ms every 20 ms, periods [10, 30), [30, 50), ... */
	sim_run(&sim, MS(30));
	CHECK_EQ(a->s.total, MS(8));
	CHECK_EQ(a->s.period, MS(20));
	sim_run(&sim, MS(30) + MS(20) * 10);
	CHECK_EQ(a->s.total, MS(8) + MS(6) * 10);
	CHECK_EQ(a->s.deadline, MS(30) + MS(20) * 10);
	CHECK_EQ(a->s.misses, 0);
}

/* A server's budget is refilled, never added to: a vCPU blocked for periods gets one budget. */
void test_sched_rtds_unused_budget_does_not_pile_up(void)
{
	static struct sim sim;
	struct sched_params p = sim_rtds(MS(2), MS(10));
	struct sched_decision d;
	struct sim_vcpu *a;

	sim_init(&sim, SCHED_RTDS, NULL);
	a = sim_add(&sim, 0, &p);
	d = sched_pick(&sim.core, 0);
	sched_ran(&a->s, 0, US(500));
	sched_block(&a->s, US(500));
	CHECK(d.vcpu == &a->s);
	CHECK(sched_wake(&a->s, MS(25)));
	CHECK_EQ(a->s.left, MS(2));
	CHECK_EQ(a->s.deadline, MS(30));
	d = sched_pick(&sim.core, MS(25));
	CHECK(d.vcpu == &a->s);
	CHECK_EQ(d.until, MS(27));
	/* Blocked with budget left: not a miss. */
	CHECK_EQ(a->s.misses, 0);
}
