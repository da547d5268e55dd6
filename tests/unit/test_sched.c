/* SPDX-License-Identifier: MIT */
/* The schedulers' common part and the null scheduler (core/sched.c). */
#include <string.h>
#include <tern/sched.h>
#include "check.h"
#include "tests.h"
#include "test_sched_sim.h"

void test_sched_null_runs_its_one_vcpu_or_idles(void)
{
	static struct sched_core core;
	static struct sched_vcpu v, w;
	struct sched_params p;
	struct sched_decision d;

	CHECK(sched_core_init(&core, &sched_null_ops, NULL, 0) == NULL);
	sched_vcpu_init(&v, &v, 0);
	sched_vcpu_init(&w, &w, 1);
	d = sched_pick(&core, 0);
	CHECK(d.vcpu == NULL);
	CHECK_EQ(d.until, SCHED_NEVER);
	CHECK(sched_add(&core, &v, NULL, 0) == NULL);
	CHECK(strcmp(sched_add(&core, &w, NULL, 0), "a core of a null pool runs one vCPU") == 0);
	d = sched_pick(&core, 5);
	CHECK(d.vcpu == &v);
	CHECK_EQ(d.until, SCHED_NEVER);
	CHECK_EQ(v.state, SCHED_RUNNING);
	sched_ran(&v, 5, 100);
	CHECK_EQ(v.total, 95);
	sched_block(&v, 100);
	CHECK(core.current == NULL);
	d = sched_pick(&core, 100);
	CHECK(d.vcpu == NULL);
	CHECK_EQ(d.until, SCHED_NEVER);
	CHECK(sched_wake(&v, 200));
	CHECK(!sched_wake(&v, 201));	/* already awake */
	d = sched_pick(&core, 200);
	CHECK(d.vcpu == &v);
	memset(&p, 0, sizeof(p));
	p.kind = SCHED_NULL;
	CHECK(strcmp(sched_params(&core, &v, &p, 300), "the null scheduler has no parameters") == 0);
	CHECK(strcmp(sched_add(&core, &w, &p, 0), "a core of a null pool runs one vCPU") == 0);
	/* A woken vCPU of a busy null core: nothing to preempt for. */
	sched_remove(&v);
	CHECK(sched_add(&core, &w, NULL, 0) == NULL);
	sched_pick(&core, 400);
	CHECK(sched_add(&core, &v, NULL, 0) != NULL);
}

void test_sched_ops_by_kind(void)
{
	CHECK(sched_ops_of(SCHED_NULL) == &sched_null_ops);
	CHECK(sched_ops_of(SCHED_ARINC653) == &sched_arinc653_ops);
	CHECK(sched_ops_of(SCHED_RTDS) == &sched_rtds_ops);
	CHECK(sched_ops_of(SCHED_CREDIT) == &sched_credit_ops);
	CHECK(sched_ops_of(42) == NULL);
	CHECK(strcmp(sched_credit_ops.name, "credit") == 0);
}

void test_sched_queue_add_remove_and_refusals(void)
{
	static struct sched_core core, other;
	static struct sched_vcpu v[SCHED_RUNQ_MAX + 1];
	struct sched_params p = sim_credit(256, 0), wrong = sim_rtds(US(100), US(1000));

	CHECK(sched_core_init(&core, &sched_credit_ops, NULL, 0) == NULL);
	CHECK(sched_core_init(&other, &sched_credit_ops, NULL, 0) == NULL);
	CHECK(strcmp(sched_core_init(&other, &sched_credit_ops, &wrong, 0),
		     "parameters of another scheduler") == 0);
	for (unsigned int i = 0; i <= SCHED_RUNQ_MAX; i++)
		sched_vcpu_init(&v[i], &v[i], (uint16_t)(i % TERN_MAX_PARTITIONS));
	CHECK(strcmp(sched_add(&core, &v[0], &wrong, 0), "parameters of another scheduler") == 0);
	p.weight = 0;
	CHECK(strcmp(sched_add(&core, &v[0], &p, 0), "the weight is not between 1 and 65535") == 0);
	CHECK(v[0].core == NULL);
	p.weight = 256;
	for (unsigned int i = 0; i < SCHED_RUNQ_MAX; i++)
		CHECK(sched_add(&core, &v[i], &p, 0) == NULL);
	CHECK(strcmp(sched_add(&core, &v[SCHED_RUNQ_MAX], NULL, 0), "the core's run queue is full") == 0);
	CHECK(strcmp(sched_add(&other, &v[0], NULL, 0), "the vCPU is already on a core") == 0);
	CHECK(strcmp(sched_params(&other, &v[0], &p, 0), "the vCPU is not on this core") == 0);
	CHECK(strcmp(sched_params(&core, &v[0], &wrong, 0), "parameters of another scheduler") == 0);

	/* Taking one off keeps the others in their order. */
	CHECK(sched_pick(&core, 0).vcpu == &v[0]);
	sched_remove(&v[0]);
	CHECK(v[0].core == NULL);
	CHECK_EQ(v[0].state, SCHED_RUNNABLE);
	CHECK(core.current == NULL);
	CHECK_EQ(core.count, SCHED_RUNQ_MAX - 1);
	for (unsigned int i = 0; i + 1 < SCHED_RUNQ_MAX; i++)
		CHECK(core.runq[i] == &v[i + 1]);
	sched_remove(&v[0]);	/* not queued: nothing */
	/* A vCPU on no core is not woken, blocked or accounted. */
	CHECK(!sched_wake(&v[0], 0));
	sched_block(&v[0], 0);
	CHECK_EQ(v[0].state, SCHED_RUNNABLE);
	sched_ran(&v[0], 0, 10);
	CHECK_EQ(v[0].total, 0);
	CHECK(sched_add(&other, &v[0], NULL, 0) == NULL);
}

void test_sched_pause_keeps_a_vcpu_off_its_core(void)
{
	static struct sim sim;
	struct sched_params p = sim_credit(256, 0);
	struct sim_vcpu *a, *b;

	sim_init(&sim, SCHED_CREDIT, NULL);
	a = sim_add(&sim, 0, &p);
	b = sim_add(&sim, 1, &p);
	CHECK(sched_pick(&sim.core, 0).vcpu == &a->s);
	sched_pause(&a->s, 0);
	CHECK(sim.core.current == NULL);
	CHECK_EQ(a->s.state, SCHED_RUNNABLE);
	sim.now = 0;
	sim_run(&sim, MS(300));
	CHECK_EQ(a->s.total, 0);
	CHECK_EQ(b->s.total, MS(300));
	/* A wake while paused is remembered, and runs it once unpaused. */
	sched_block(&a->s, MS(300));
	CHECK(!sched_wake(&a->s, MS(300)));
	CHECK(!sched_unpause(&b->s, MS(300)));	/* not paused */
	CHECK(sched_unpause(&a->s, MS(300)));	/* boosted: credit left */
	CHECK(!a->s.paused);
	sim_run(&sim, MS(600));
	CHECK(a->s.total > MS(140));
	/* Unpausing a vCPU whose guest waits leaves it waiting. */
	sched_pause(&a->s, MS(600));
	sched_block(&a->s, MS(600));
	CHECK(!sched_unpause(&a->s, MS(600)));
	CHECK_EQ(a->s.state, SCHED_BLOCKED);
}
