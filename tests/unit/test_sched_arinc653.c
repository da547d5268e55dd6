/* SPDX-License-Identifier: MIT */
/* ARINC 653 (core/sched_arinc653.c): a fixed timeline per core. */
#include <string.h>
#include <tern/sched.h>
#include "check.h"
#include "tests.h"
#include "test_sched_sim.h"

/* Two windows, partition `pa` for `da` then `pb` for `db`, every `major`. */
static struct sched_params two_windows(uint64_t major, uint16_t pa, uint64_t da, uint16_t pb,
				       uint64_t db)
{
	struct sched_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCHED_ARINC653;
	p.major = major;
	p.nwindows = 2;
	p.windows[0].partition = pa;
	p.windows[0].duration = da;
	p.windows[1].partition = pb;
	p.windows[1].duration = db;
	return p;
}

/* windows: partition 0 for 5 ms, 1 for 10 ms, then 5 ms of nothing, every 20 ms */
static struct sched_params timeline(void)
{
	return two_windows(MS(20), 0, MS(5), 1, MS(10));
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
	q = two_windows(MS(8), 1, MS(3), 0, MS(5));
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

/*
 * The picks that follow on from the last one (in its window, or the next) are worked out
 * without the frame's division and the walk from its first window: each pick below is checked
 * against that computation, done here from the timeline in force and its epoch.
 */
struct a653_ref {
	const struct sched_params *p;
	uint64_t epoch;
};

static void check_pick(struct sched_core *core, const struct a653_ref *r, uint64_t now,
		       unsigned int line)
{
	uint64_t frame = r->epoch + (now - r->epoch) / r->p->major * r->p->major, start = frame;
	uint64_t end = frame + r->p->major;
	uint16_t partition = SCHED_NO_PARTITION;
	struct sched_vcpu *want = NULL;
	struct sched_decision d;
	uint32_t w;
	int failed = checks_failed;

	for (w = 0; w < r->p->nwindows; w++) {
		if (now < start + r->p->windows[w].duration) {
			end = start + r->p->windows[w].duration;
			partition = r->p->windows[w].partition;
			break;
		}
		start += r->p->windows[w].duration;
	}
	for (uint32_t i = 0; i < core->count && want == NULL; i++) {
		if (core->runq[i]->partition == partition && sched_ready(core->runq[i]))
			want = core->runq[i];
	}
	d = sched_pick(core, now);
	CHECK(d.vcpu == want);
	CHECK_EQ(d.until, end);
	CHECK_EQ(core->next_event, end);
	CHECK_EQ(core->window_start, start);
	CHECK_EQ(core->window, w);
	if (checks_failed != failed)
		fprintf(stderr, "  the pick at %llu ns (line %u)\n", (unsigned long long)now, line);
}

#define CHECK_PICK(core, r, now) check_pick(core, r, now, __LINE__)

/* 10 ms frames: 0 for 2 ms, nobody's for 1 ms, 1 for 3 ms, 2 for 1 ms, a 3 ms tail. */
static struct sched_params timeline_with_gaps(void)
{
	struct sched_params p;
	static const uint16_t part[] = { 0, SCHED_NO_PARTITION, 1, 2 };
	static const uint64_t dur[] = { MS(2), MS(1), MS(3), MS(1) };

	memset(&p, 0, sizeof(p));
	p.kind = SCHED_ARINC653;
	p.major = MS(10);
	p.nwindows = 4;
	for (unsigned int i = 0; i < 4; i++) {
		p.windows[i].partition = part[i];
		p.windows[i].duration = dur[i];
	}
	return p;
}

void test_sched_arinc653_cached_picks_match_the_walk(void)
{
	static struct sim sim;
	struct sched_params p = timeline_with_gaps();
	struct a653_ref r = { &p, 0 };
	struct sim_vcpu *a;

	sim_init(&sim, SCHED_ARINC653, &p);
	a = sim_add(&sim, 0, NULL);
	sim_add(&sim, 1, NULL);
	CHECK_PICK(&sim.core, &r, 0);			/* the first pick */
	CHECK_PICK(&sim.core, &r, US(1));		/* the same window */
	CHECK_PICK(&sim.core, &r, MS(2) - 1);		/* its last nanosecond */
	CHECK_PICK(&sim.core, &r, MS(2));		/* the next, nobody's */
	CHECK_PICK(&sim.core, &r, MS(3) + US(5));	/* the next, late */
	CHECK_PICK(&sim.core, &r, MS(6));		/* a window with no vCPU here */
	CHECK_PICK(&sim.core, &r, MS(7));		/* the tail */
	CHECK_PICK(&sim.core, &r, MS(9) + US(999));
	CHECK_PICK(&sim.core, &r, MS(10));		/* after the tail: the next frame's first */
	CHECK_PICK(&sim.core, &r, MS(13));		/* two windows on: the walk */
	CHECK_PICK(&sim.core, &r, MS(16) + 1);		/* its next */
	CHECK_PICK(&sim.core, &r, MS(53) + 7);		/* frames on */
	CHECK_PICK(&sim.core, &r, MS(52));		/* back in time, into the window before */
	CHECK_PICK(&sim.core, &r, MS(52) + 1);
	CHECK_PICK(&sim.core, &r, MS(47));		/* back into the tail before */
	CHECK_PICK(&sim.core, &r, MS(50));		/* forward into the next frame */
	/* The window's vCPU blocked, then woken: its window is the cached one. */
	sched_block(&a->s, MS(50) + 1);
	CHECK_PICK(&sim.core, &r, MS(50) + 2);
	CHECK(sched_wake(&a->s, MS(51)));
	CHECK_PICK(&sim.core, &r, MS(51));
	sched_pause(&a->s, MS(51) + 1);
	CHECK_PICK(&sim.core, &r, MS(51) + 2);
	CHECK_PICK(&sim.core, &r, MS(60));		/* the next frame's first, its vCPU paused */
	CHECK(sched_unpause(&a->s, MS(61)));
	CHECK_PICK(&sim.core, &r, MS(61));
	/* Off the core, then back: behind another vCPU of its partition. */
	sched_remove(&a->s);
	CHECK_PICK(&sim.core, &r, MS(61) + 1);
	sim_add(&sim, 0, NULL);
	CHECK_PICK(&sim.core, &r, MS(61) + 2);
	CHECK(sched_add(&sim.core, &a->s, NULL, MS(61)) == NULL);
	CHECK_PICK(&sim.core, &r, MS(61) + 3);
	sched_block(&sim.vcpu[2].s, MS(61) + 4);
	CHECK_PICK(&sim.core, &r, MS(61) + 5);
}

/* Windows that fill the frame: the last one's next is the next frame's first, with no tail. */
void test_sched_arinc653_cached_picks_without_a_tail(void)
{
	static struct sim sim;
	struct sched_params p = timeline_with_gaps();
	struct a653_ref r = { &p, 0 };

	p.windows[3].duration = MS(4);
	sim_init(&sim, SCHED_ARINC653, &p);
	sim_add(&sim, 0, NULL);
	sim_add(&sim, 1, NULL);
	sim_add(&sim, 2, NULL);
	for (uint64_t f = 0; f < 3; f++) {
		uint64_t s = f * MS(10);

		CHECK_PICK(&sim.core, &r, s);
		CHECK_PICK(&sim.core, &r, s + MS(2));
		CHECK_PICK(&sim.core, &r, s + MS(3));
		CHECK_PICK(&sim.core, &r, s + MS(6));
		CHECK_PICK(&sim.core, &r, s + MS(10) - 1);
	}
	/* One window the whole frame: its own next. */
	memset(&p, 0, sizeof(p));
	p.kind = SCHED_ARINC653;
	p.major = MS(5);
	p.nwindows = 1;
	p.windows[0].partition = 1;
	p.windows[0].duration = MS(5);
	sim_init(&sim, SCHED_ARINC653, &p);
	sim_add(&sim, 1, NULL);
	for (uint64_t t = 0; t < MS(30); t += MS(5))
		CHECK_PICK(&sim.core, &r, t + US(t / MS(5)));
}

/* A new timeline takes over at the next frame's start: the picks after it follow it alone. */
void test_sched_arinc653_cached_picks_after_a_new_timeline(void)
{
	static struct sim sim;
	struct sched_params p = timeline_with_gaps(), q;
	struct a653_ref r = { &p, 0 };

	sim_init(&sim, SCHED_ARINC653, &p);
	sim_add(&sim, 0, NULL);
	sim_add(&sim, 1, NULL);
	sim_add(&sim, 2, NULL);
	CHECK_PICK(&sim.core, &r, MS(20));
	CHECK_PICK(&sim.core, &r, MS(22));
	q = two_windows(MS(3), 2, MS(1), 1, MS(1));
	CHECK(sched_params(&sim.core, NULL, &q, MS(22) + 1) == NULL);
	/* The old one's windows to its frame's end, the next window's pick cached. */
	CHECK_PICK(&sim.core, &r, MS(23));
	CHECK_PICK(&sim.core, &r, MS(26));
	CHECK_PICK(&sim.core, &r, MS(27));
	/* From 30 ms the new one, though the old tail's next is the old first window. */
	r.p = &q;
	r.epoch = MS(30);
	CHECK_PICK(&sim.core, &r, MS(30));
	CHECK_PICK(&sim.core, &r, MS(31));
	CHECK_PICK(&sim.core, &r, MS(32));
	CHECK_PICK(&sim.core, &r, MS(33));
	CHECK_PICK(&sim.core, &r, MS(33) + 1);
	CHECK_PICK(&sim.core, &r, MS(40));
	/* A timeline that starts in the middle of what the cache holds. */
	CHECK(sched_params(&sim.core, NULL, &p, MS(40) + 1) == NULL);
	CHECK_PICK(&sim.core, &r, MS(41));
	r.p = &p;
	r.epoch = MS(42);
	CHECK_PICK(&sim.core, &r, MS(42));
	CHECK_PICK(&sim.core, &r, MS(44));
}

/*
 * Random timelines, times, readiness and run queues (a partition's vCPUs taken off and queued
 * again), and now and then a new timeline: every pick as the walk from the frame's start gives
 * it.
 */
void test_sched_arinc653_cached_picks_random(void)
{
	static struct sim sim;
	static struct sched_params p[2];
	struct a653_ref r;
	uint32_t rng = 4242;
	uint64_t now = 0, pending_epoch = 0;
	unsigned int cur = 0;
	bool pending = false;

	for (unsigned int k = 0; k < 2; k++) {
		p[k].kind = SCHED_ARINC653;
		p[k].major = 0;
	}
	for (unsigned int run = 0; run < 200 && checks_failed == 0; run++) {
		for (unsigned int k = 0; k < 2; k++) {
			uint64_t sum = 0;

			memset(&p[k], 0, sizeof(p[k]));
			p[k].kind = SCHED_ARINC653;
			p[k].nwindows = 1 + sim_rand(&rng) % SCHED_MAX_WINDOWS;
			for (unsigned int i = 0; i < p[k].nwindows; i++) {
				uint32_t x = sim_rand(&rng) % 8;

				p[k].windows[i].partition = x < 6 ? (uint16_t)x : SCHED_NO_PARTITION;
				p[k].windows[i].duration = 1 + sim_rand(&rng) % US(500);
				sum += p[k].windows[i].duration;
			}
			/* Half with no tail. */
			p[k].major = sum + (sim_rand(&rng) % 2 ? 0 : 1 + sim_rand(&rng) % US(300));
		}
		/* Starts with no timeline: the first is taken at once. */
		now = sim_rand(&rng);
		sim_init(&sim, SCHED_ARINC653, NULL);
		for (unsigned int i = 0; i < 8; i++)
			sim_add(&sim, (uint16_t)(sim_rand(&rng) % 6), NULL);
		CHECK(sched_params(&sim.core, NULL, &p[0], now) == NULL);
		cur = 0;
		r.p = &p[0];
		r.epoch = now;
		pending = false;
		CHECK_PICK(&sim.core, &r, now);
		for (unsigned int step = 0; step < 2000 && checks_failed == 0; step++) {
			uint32_t x = sim_rand(&rng) % 16;
			struct sim_vcpu *v = &sim.vcpu[sim_rand(&rng) % 8];

			if (x < 5)	/* to the window's end, or just after */
				now = sim.core.next_event + (x < 3 ? 0 : sim_rand(&rng) % 3);
			else if (x < 9)	/* within the window, or beyond it */
				now += sim_rand(&rng) % (x < 8 ? US(50) : r.p->major * 3);
			else if (x == 9)
				sched_block(&v->s, now);
			else if (x == 10)
				(void)sched_wake(&v->s, now);
			else if (x == 11)
				sched_pause(&v->s, now);
			else if (x == 12)
				(void)sched_unpause(&v->s, now);
			else if (x == 14 && v->s.core != NULL)
				sched_remove(&v->s);
			else if (x == 14)
				CHECK(sched_add(&sim.core, &v->s, NULL, now) == NULL);
			else if (x == 13 && !pending) {
				CHECK(sched_params(&sim.core, NULL, &p[1 - cur], now) == NULL);
				pending = true;
				pending_epoch = r.epoch + ((now - r.epoch) / r.p->major + 1) * r.p->major;
			}
			if (pending && now >= pending_epoch) {
				cur = 1 - cur;
				r.p = &p[cur];
				r.epoch = pending_epoch;
				pending = false;
			}
			CHECK_PICK(&sim.core, &r, now);
		}
	}
}
