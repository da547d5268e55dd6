/* SPDX-License-Identifier: MIT */
/* ARINC 653 (core/sched_arinc653.c): a fixed timeline per core. */
#include <string.h>
#include <tern/sched.h>
#include "check.h"
#include "tests.h"
#include "test_sched_sim.h"

/* windows: partition 0 for 5 ms, 1 for 10 ms, then 5 ms of nothing, every 20 ms */
static struct sched_params timeline(void)
{
	struct sched_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCHED_ARINC653;
	p.major = MS(20);
	p.nwindows = 2;
	p.windows[0].partition = 0;
	p.windows[0].duration = MS(5);
	p.windows[1].partition = 1;
	p.windows[1].duration = MS(10);
	return p;
}

void test_sched_arinc653_windows_in_order_then_idle(void)
{
	static struct sim sim;
	struct sched_params p = timeline();
	struct sched_decision d;
	struct sim_vcpu *a, *b;

	sim_init(&sim, SCHED_ARINC653, &p);
	a = sim_add(&sim, 0, NULL);
	b = sim_add(&sim, 1, NULL);
	for (uint64_t f = 0; f < 3; f++) {
		uint64_t s = f * MS(20);

		d = sched_pick(&sim.core, s);
		CHECK(d.vcpu == &a->s);
		CHECK_EQ(d.until, s + MS(5));
		d = sched_pick(&sim.core, s + MS(5));
		CHECK(d.vcpu == &b->s);
		CHECK_EQ(d.until, s + MS(15));
		d = sched_pick(&sim.core, s + MS(15));
		CHECK(d.vcpu == NULL);
		CHECK_EQ(d.until, s + MS(20));
	}
}

/*
 * The core decides late, by a random amount, at every boundary: the next event is still the
 * next window's exact start, frame after frame.
 */
void test_sched_arinc653_late_decisions_do_not_move_window_starts(void)
{
	static struct sim sim;
	struct sched_params p;
	struct sched_decision d;
	static const uint64_t dur[] = { US(1700), US(3300), US(2000), US(999) };
	/* each window's start, the idle tail's, the next frame's */
	static const uint64_t bound[] = { 0, US(1700), US(5000), US(7000), US(7999), US(10000) };
	uint64_t major = US(10000), t = 0, late_max = 0;
	uint32_t rng = 12345;

	memset(&p, 0, sizeof(p));
	p.kind = SCHED_ARINC653;
	p.major = major;
	p.nwindows = 4;
	for (unsigned int i = 0; i < 4; i++) {
		p.windows[i].partition = (uint16_t)i;
		p.windows[i].duration = dur[i];
	}
	sim_init(&sim, SCHED_ARINC653, &p);
	for (unsigned int i = 0; i < 4; i++)
		sim_add(&sim, (uint16_t)i, NULL);
	for (uint64_t f = 0; f < 5000; f++) {
		uint64_t start = f * major;

		for (unsigned int w = 0; w <= 4; w++) {
			uint64_t wstart = start + bound[w], end = start + bound[w + 1], late;

			/* Late by up to the window's length less a nanosecond. */
			late = sim_rand(&rng) % (end - wstart);
			late_max = late > late_max ? late : late_max;
			t = wstart + late;
			d = sched_pick(&sim.core, t);
			CHECK_EQ(d.until, end);
			/* What the shared core measures its entry's lateness against. */
			CHECK_EQ(sim.core.window_start, wstart);
			CHECK_EQ(sim.core.window, w);
			if (w < 4)
				CHECK(d.vcpu == &sim.vcpu[w].s);
			else
				CHECK(d.vcpu == NULL);
		}
	}
	CHECK(late_max > US(900));
	CHECK(t > 4999 * major);
}

/* A window's vCPU that blocks leaves the core idle to the window's end: no one else gets it. */
void test_sched_arinc653_blocked_window_is_not_given_away(void)
{
	static struct sim sim;
	struct sched_params p = timeline();
	struct sched_decision d;
	struct sim_vcpu *a, *b;

	sim_init(&sim, SCHED_ARINC653, &p);
	a = sim_add(&sim, 0, NULL);
	b = sim_add(&sim, 1, NULL);
	d = sched_pick(&sim.core, MS(40));
	CHECK(d.vcpu == &a->s);
	sched_ran(&a->s, MS(40), MS(41));
	sched_block(&a->s, MS(41));
	d = sched_pick(&sim.core, MS(41));
	CHECK(d.vcpu == NULL);
	CHECK_EQ(d.until, MS(45));
	/* Woken in its window: the core runs it at once. */
	CHECK(sched_wake(&a->s, MS(42)));
	d = sched_pick(&sim.core, MS(42));
	CHECK(d.vcpu == &a->s);
	CHECK_EQ(d.until, MS(45));
	/* Woken in another's window: waits for its own. */
	sched_block(&a->s, MS(43));
	sched_pick(&sim.core, MS(45));
	CHECK(!sched_wake(&a->s, MS(46)));
	d = sched_pick(&sim.core, MS(46));
	CHECK(d.vcpu == &b->s);
	/* A partition with no vCPU on this core: its window idles. */
	sched_remove(&a->s);
	d = sched_pick(&sim.core, MS(60));
	CHECK(d.vcpu == NULL);
	CHECK_EQ(d.until, MS(65));
}

struct window_watch {
	uint64_t outside, ran[2];
};

static void watch_windows(struct sim *sim, struct sim_vcpu *v, uint64_t from, uint64_t to)
{
	struct window_watch *w = sim->ctx;
	uint64_t off = from % MS(20), wstart = v->s.partition == 0 ? 0 : MS(5);
	uint64_t wend = v->s.partition == 0 ? MS(5) : MS(15);

	if (off < wstart || off + (to - from) > wend)
		w->outside++;
	w->ran[v->s.partition] += to - from;
}

/* Two vCPUs that never block: each runs exactly its windows, never a nanosecond more. */
void test_sched_arinc653_hostile_vcpu_stays_in_its_window(void)
{
	static struct sim sim;
	static struct window_watch watch;
	struct sched_params p = timeline();

	sim_init(&sim, SCHED_ARINC653, &p);
	sim.observe = watch_windows;
	sim.ctx = &watch;
	sim_add(&sim, 0, NULL);
	sim_add(&sim, 1, NULL);
	sim_run(&sim, MS(20) * 1000);
	CHECK_EQ(watch.outside, 0);
	CHECK_EQ(watch.ran[0], MS(5) * 1000);
	CHECK_EQ(watch.ran[1], MS(10) * 1000);
}

void test_sched_arinc653_params_checked(void)
{
	static struct sched_core core;
	static struct sched_vcpu v;
	struct sched_params p = timeline();

	CHECK(sched_core_init(&core, &sched_arinc653_ops, NULL, 0) == NULL);
	/* No timeline yet: the core idles. */
	CHECK(sched_pick(&core, 0).vcpu == NULL);
	CHECK_EQ(sched_pick(&core, 0).until, SCHED_NEVER);
	sched_vcpu_init(&v, &v, 0);
	CHECK(sched_add(&core, &v, NULL, 0) == NULL);
	CHECK(strcmp(sched_params(&core, &v, &p, 0),
		     "ARINC 653 parameters are a core's timeline, not a vCPU's") == 0);
	p.major = 0;
	CHECK(strcmp(sched_params(&core, NULL, &p, 0), "the major frame is zero") == 0);
	p.major = SCHED_TIME_MAX_NS + 1;
	CHECK(strcmp(sched_params(&core, NULL, &p, 0), "the major frame is longer than an hour") == 0);
	p = timeline();
	p.nwindows = 0;
	CHECK(strcmp(sched_params(&core, NULL, &p, 0), "a timeline has 1 to 16 windows") == 0);
	p.nwindows = SCHED_MAX_WINDOWS + 1;
	CHECK(strcmp(sched_params(&core, NULL, &p, 0), "a timeline has 1 to 16 windows") == 0);
	p = timeline();
	p.windows[1].duration = 0;
	CHECK(strcmp(sched_params(&core, NULL, &p, 0), "a window is empty") == 0);
	p = timeline();
	p.windows[1].partition = TERN_MAX_PARTITIONS;
	CHECK(strcmp(sched_params(&core, NULL, &p, 0), "a window names no partition") == 0);
	p = timeline();
	p.windows[1].duration = MS(21);
	CHECK(strcmp(sched_params(&core, NULL, &p, 0),
		     "the windows are longer than the major frame") == 0);
	p.windows[1].duration = MS(15) + 1;
	CHECK(strcmp(sched_params(&core, NULL, &p, 0),
		     "the windows are longer than the major frame") == 0);
	/* Exactly the frame, and a window of nobody's: accepted. */
	p.windows[1].duration = MS(15);
	p.windows[1].partition = SCHED_NO_PARTITION;
	CHECK(sched_params(&core, NULL, &p, 0) == NULL);
	/* A core with no timeline yet takes it at once. */
	CHECK(sched_pick(&core, MS(1)).vcpu == &v);
	CHECK_EQ(sched_pick(&core, MS(6)).until, MS(20));
}

/* A new timeline set mid-frame starts at the next frame's start, on the old frames' grid. */
void test_sched_arinc653_params_from_the_next_frame(void)
{
	static struct sim sim;
	struct sched_params p = timeline(), q;
	struct sched_decision d;
	struct sim_vcpu *a, *b;

	sim_init(&sim, SCHED_ARINC653, &p);
	a = sim_add(&sim, 0, NULL);
	b = sim_add(&sim, 1, NULL);
	memset(&q, 0, sizeof(q));
	q.kind = SCHED_ARINC653;
	q.major = MS(8);
	q.nwindows = 2;
	q.windows[0].partition = 1;
	q.windows[0].duration = MS(3);
	q.windows[1].partition = 0;
	q.windows[1].duration = MS(5);
	d = sched_pick(&sim.core, MS(47));
	CHECK(d.vcpu == &b->s);
	CHECK(sched_params(&sim.core, NULL, &q, MS(47)) == NULL);
	/* A second change before the first took effect replaces it. */
	CHECK(sched_params(&sim.core, NULL, &q, MS(48)) == NULL);
	/* The rest of this frame is the old timeline's. */
	d = sched_pick(&sim.core, MS(50));
	CHECK(d.vcpu == &b->s);
	CHECK_EQ(d.until, MS(55));
	d = sched_pick(&sim.core, MS(56));
	CHECK(d.vcpu == NULL);
	CHECK_EQ(d.until, MS(60));
	/* From 60 ms: frames of 8 ms. */
	for (uint64_t f = 0; f < 100; f++) {
		uint64_t s = MS(60) + f * MS(8);

		d = sched_pick(&sim.core, s + US(10));
		CHECK(d.vcpu == &b->s);
		CHECK_EQ(d.until, s + MS(3));
		d = sched_pick(&sim.core, s + MS(3));
		CHECK(d.vcpu == &a->s);
		CHECK_EQ(d.until, s + MS(8));
	}
}
