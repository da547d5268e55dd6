/* SPDX-License-Identifier: MIT */
/* The scheduler simulator (test_sched_sim.h). */
#include <string.h>
#include "test_sched_sim.h"
#include "check.h"

void sim_init(struct sim *sim, uint8_t kind, const struct sched_params *p)
{
	memset(sim, 0, sizeof(*sim));
	CHECK(sched_core_init(&sim->core, sched_ops_of(kind), p, 0) == NULL);
}

struct sim_vcpu *sim_add(struct sim *sim, uint16_t partition, const struct sched_params *p)
{
	struct sim_vcpu *v = &sim->vcpu[sim->n];

	v->id = sim->n++;
	v->load = SIM_HOG;
	sched_vcpu_init(&v->s, v, partition);
	CHECK(sched_add(&sim->core, &v->s, p, sim->now) == NULL);
	return v;
}

void sim_periodic(struct sim *sim, struct sim_vcpu *v, uint64_t phase, uint64_t interval,
		  uint64_t burst)
{
	v->load = SIM_PERIODIC;
	v->phase = phase;
	v->interval = interval;
	v->burst = burst;
	v->next_wake = phase;
	v->burst_left = 0;
	sched_block(&v->s, sim->now);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Wakes the guests whose time has come; true if one asks the core to decide again. */
static bool wakes(struct sim *sim)
{
	bool again = false;

	for (unsigned int i = 0; i < sim->n; i++) {
		struct sim_vcpu *v = &sim->vcpu[i];

		if (v->load != SIM_PERIODIC || v->next_wake > sim->now)
			continue;
		/* A wake while it still works on the last burst adds to it. */
		v->burst_left += v->burst;
		v->next_wake += v->interval;
		if (v->s.state == SCHED_BLOCKED) {
			v->waiting = true;
			v->woke_at = sim->now;
			v->wakes++;
			if (sched_wake(&v->s, sim->now)) {
				again = true;
				sim->preemptions++;
			}
		}
	}
	return again;
}

void sim_run(struct sim *sim, uint64_t end)
{
	struct sched_decision d = { NULL, 0 };
	bool decide = true;

	while (sim->now < end) {
		uint64_t next;
		struct sim_vcpu *v;

		if (decide) {
			d = sched_pick(&sim->core, sim->now);
			sim->picks++;
			CHECK(d.until > sim->now);
			if (d.until <= sim->now)
				return;
			decide = false;
		}
		v = d.vcpu != NULL ? d.vcpu->owner : NULL;
		if (v != NULL && v->waiting) {
			v->waiting = false;
			if (sim->now - v->woke_at > v->max_latency)
				v->max_latency = sim->now - v->woke_at;
		}
		next = min64(d.until, end);
		for (unsigned int i = 0; i < sim->n; i++) {
			if (sim->vcpu[i].load == SIM_PERIODIC)
				next = min64(next, sim->vcpu[i].next_wake);
		}
		if (v != NULL && v->load == SIM_PERIODIC)
			next = min64(next, sim->now + v->burst_left);
		if (v != NULL && next > sim->now) {
			sched_ran(&v->s, sim->now, next);
			if (sim->observe != NULL)
				sim->observe(sim, v, sim->now, next);
		}
		if (v != NULL && v->load == SIM_PERIODIC) {
			v->burst_left -= next - sim->now;
			if (v->burst_left == 0) {
				sched_block(&v->s, next);
				decide = true;
			}
		}
		sim->now = next;
		if (wakes(sim))
			decide = true;
		if (sim->now >= d.until)
			decide = true;
	}
}

struct sched_params sim_rtds(uint64_t budget, uint64_t period)
{
	struct sched_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCHED_RTDS;
	p.budget = budget;
	p.period = period;
	return p;
}

struct sched_params sim_credit(uint32_t weight, uint32_t cap)
{
	struct sched_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCHED_CREDIT;
	p.weight = weight;
	p.cap = cap;
	return p;
}

uint32_t sim_rand(uint32_t *state)
{
	/* xorshift32 */
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}
