/* SPDX-License-Identifier: MIT */
/* Credit (core/sched_credit.c): weighted fair share with caps and wake-up boost. */
#include <string.h>
#include <tern/sched.h>
#include "check.h"
#include "tests.h"
#include "test_sched_sim.h"

#define ACCT SCHED_CREDIT_PERIOD_NS

/* What each vCPU ran in each accounting period (the core starts at 0). */
struct per_period {
	uint64_t k[SIM_MAX_VCPUS], got[SIM_MAX_VCPUS], max[SIM_MAX_VCPUS];
};

static void watch_periods(struct sim *sim, struct sim_vcpu *v, uint64_t from, uint64_t to)
{
	struct per_period *w = sim->ctx;
	unsigned int i = v->id;

	while (from < to) {
		uint64_t k = from / ACCT, end = (k + 1) * ACCT < to ? (k + 1) * ACCT : to;

		if (k != w->k[i]) {
			w->k[i] = k;
			w->got[i] = 0;
		}
		w->got[i] += end - from;
		if (w->got[i] > w->max[i])
			w->max[i] = w->got[i];
		from = end;
	}
}

static bool within(uint64_t got, uint64_t total, uint64_t weight, uint64_t weights)
{
	uint64_t want = total * weight / weights;

	return got * 10 >= want * 9 && got * 10 <= want * 11;
}

void test_sched_credit_weights_share_the_core(void)
{
	static struct sim sim;
	struct sched_params p;
	static const uint32_t weight[] = { 256, 512, 1024 };
	uint64_t run = 10000000000ull;	/* 10 s */

	sim_init(&sim, SCHED_CREDIT, NULL);
	for (unsigned int i = 0; i < 3; i++) {
		p = sim_credit(weight[i], 0);
		sim_add(&sim, (uint16_t)i, &p);
	}
	sim_run(&sim, run);
	for (unsigned int i = 0; i < 3; i++)
		CHECK(within(sim.vcpu[i].s.total, run, weight[i], 1792));
	CHECK_EQ(sim.vcpu[0].s.total + sim.vcpu[1].s.total + sim.vcpu[2].s.total, run);
	/* and over every single period after the first */
	sim.observe = watch_periods;
	static struct per_period w;
	sim.ctx = &w;
	sim_run(&sim, run + ACCT * 10);
	for (unsigned int i = 0; i < 3; i++)
		CHECK(within(w.max[i], ACCT, weight[i], 1792));
}

/* A vCPU that never blocks, beside another: at most its share. */
void test_sched_credit_hostile_vcpu_held_to_its_share(void)
{
	static struct sim sim;
	struct sched_params ph = sim_credit(256, 0), pv = sim_credit(768, 0);
	uint64_t run = MS(3000);

	sim_init(&sim, SCHED_CREDIT, NULL);
	sim_add(&sim, 0, &ph);
	sim_add(&sim, 1, &pv);
	sim_run(&sim, run);
	CHECK(sim.vcpu[0].s.total <= run / 4 + run / 40);
	CHECK(within(sim.vcpu[1].s.total, run, 3, 4));
}

/* A capped vCPU never runs more than its cap in an accounting period, even on an idle core. */
void test_sched_credit_cap_is_never_exceeded(void)
{
	static struct sim sim;
	static struct per_period w;
	struct sched_params pc = sim_credit(1024, 20), po = sim_credit(256, 0);
	struct sim_vcpu *c, *o;

	sim_init(&sim, SCHED_CREDIT, NULL);
	sim.observe = watch_periods;
	sim.ctx = &w;
	c = sim_add(&sim, 0, &pc);
	o = sim_add(&sim, 1, &po);
	sim_run(&sim, MS(3000));
	CHECK_EQ(w.max[c->id], ACCT / 5);
	CHECK_EQ(c->s.total, MS(600));
	CHECK_EQ(o->s.total, MS(2400));
	/* Alone: the core idles rather than let it over its cap. */
	sched_remove(&o->s);
	sim_run(&sim, MS(6000));
	CHECK_EQ(w.max[c->id], ACCT / 5);
	CHECK_EQ(c->s.total, MS(1200));
}

/*
 * An I/O-like vCPU (wakes every 5 ms, works 200 us) beside two CPU hogs: it runs at each wake
 * at once (its boost preempts the hogs), and gets all it asks for.
 */
void test_sched_credit_woken_vcpu_runs_at_once(void)
{
	static struct sim sim;
	struct sched_params p = sim_credit(256, 0);
	struct sim_vcpu *io, *io2;

	sim_init(&sim, SCHED_CREDIT, NULL);
	sim_add(&sim, 0, &p);
	sim_add(&sim, 1, &p);
	io = sim_add(&sim, 2, &p);
	sim_periodic(&sim, io, US(333), MS(5), US(200));
	sim_run(&sim, MS(3000));
	CHECK_EQ(io->wakes, 600);
	CHECK_EQ(io->max_latency, 0);
	CHECK_EQ(io->s.total, 600 * US(200));
	/* Two of them waking together: the second waits for the first's burst, within its boost. */
	io2 = sim_add(&sim, 3, &p);
	sim_periodic(&sim, io2, MS(3000) + US(333), MS(5), US(200));
	sim_run(&sim, MS(6000));
	CHECK(io2->wakes == 600);
	CHECK(io2->max_latency + io->max_latency <= SCHED_CREDIT_BOOST_NS);
	CHECK(io2->max_latency + io->max_latency > 0);
}

/* A vCPU that keeps waking cannot turn its boost into more than its share. */
void test_sched_credit_boost_does_not_buy_more_than_the_share(void)
{
	static struct sim sim;
	struct sched_params p = sim_credit(256, 0);
	struct sim_vcpu *b;

	sim_init(&sim, SCHED_CREDIT, NULL);
	sim_add(&sim, 0, &p);
	b = sim_add(&sim, 1, &p);
	/* wakes every 2 ms with 5 ms of work: never blocks for long */
	sim_periodic(&sim, b, 0, MS(2), MS(5));
	sim_run(&sim, MS(3000));
	CHECK(b->s.total <= MS(1500) + MS(150));
	CHECK(sim.vcpu[0].s.total >= MS(1500) - MS(150));
}

void test_sched_credit_params_checked(void)
{
	static struct sched_core core;
	static struct sched_vcpu v;
	struct sched_params p = sim_credit(0, 0);

	CHECK(sched_core_init(&core, &sched_credit_ops, NULL, 0) == NULL);
	sched_vcpu_init(&v, &v, 0);
	CHECK(sched_add(&core, &v, NULL, 0) == NULL);
	CHECK_EQ(v.weight, SCHED_CREDIT_WEIGHT_DEFAULT);
	CHECK(strcmp(sched_params(&core, NULL, &p, 0), "credit parameters are a vCPU's") == 0);
	CHECK(strcmp(sched_params(&core, &v, &p, 0), "the weight is not between 1 and 65535") == 0);
	p.weight = SCHED_CREDIT_WEIGHT_MAX + 1;
	CHECK(strcmp(sched_params(&core, &v, &p, 0), "the weight is not between 1 and 65535") == 0);
	p = sim_credit(1, 101);
	CHECK(strcmp(sched_params(&core, &v, &p, 0), "the cap is more than 100 % of a core") == 0);
	p = sim_credit(SCHED_CREDIT_WEIGHT_MAX, 100);
	CHECK(sched_params(&core, &v, &p, 0) == NULL);
	/* An idle core decides again at any wake. */
	sched_block(&v, 0);
	CHECK(sched_pick(&core, 0).vcpu == NULL);
	CHECK(sched_wake(&v, 1));
}

/* A new weight or cap counts from the next accounting period. */
void test_sched_credit_params_from_the_next_period(void)
{
	static struct sim sim;
	static struct per_period w;
	struct sched_params p = sim_credit(256, 0), q = sim_credit(768, 0), c = sim_credit(256, 10);
	struct sim_vcpu *a, *b;
	uint64_t a0, b0;

	sim_init(&sim, SCHED_CREDIT, NULL);
	a = sim_add(&sim, 0, &p);
	b = sim_add(&sim, 1, &p);
	sim_run(&sim, ACCT * 10);
	a0 = a->s.total;
	b0 = b->s.total;
	CHECK_EQ(a0, ACCT * 5);
	CHECK(sched_params(&sim.core, &a->s, &q, ACCT * 10) == NULL);
	CHECK(sched_params(&sim.core, &b->s, &c, ACCT * 10) == NULL);
	CHECK_EQ(a->s.weight, 256);
	sim_run(&sim, ACCT * 11);
	/* this period as before */
	CHECK_EQ(a->s.total - a0, ACCT / 2);
	CHECK_EQ(b->s.total - b0, ACCT / 2);
	sim.observe = watch_periods;
	sim.ctx = &w;
	sim_run(&sim, ACCT * 111);
	CHECK_EQ(a->s.weight, 768);
	CHECK_EQ(b->s.cap, 10);
	CHECK_EQ(w.max[b->id], ACCT / 10);
	CHECK_EQ(b->s.total - b0, ACCT / 2 + ACCT / 10 * 100);
}

/* Credit a vCPU did not use while it slept does not pile up into a burst when it wakes. */
void test_sched_credit_unused_credit_does_not_pile_up(void)
{
	static struct sim sim;
	static struct per_period w;
	struct sched_params p = sim_credit(256, 0);
	struct sim_vcpu *a, *b;

	sim_init(&sim, SCHED_CREDIT, NULL);
	a = sim_add(&sim, 0, &p);
	b = sim_add(&sim, 1, &p);
	/* b sleeps 10 periods, then never blocks again */
	sim_periodic(&sim, b, ACCT * 10, ACCT * 1000, ACCT * 1000);
	sim.observe = watch_periods;
	sim.ctx = &w;
	sim_run(&sim, ACCT * 20);
	CHECK_EQ(a->s.total, ACCT * 10 + ACCT / 2 * 10);
	CHECK_EQ(w.max[b->id], ACCT / 2);
}
