/* SPDX-License-Identifier: MIT */
/*
 * core/power.c: every transition of tern/power.h's diagram, who may make it, the races the
 * state machine exists for as deterministic interleavings, and threads acting as cores.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <tern/power.h>
#include "check.h"
#include "fake.h"
#include "tests.h"

static struct partition part;

/* A partition of `n` vCPUs, RUNNING, vCPU 0 ON (as after boot and its first entry). */
static struct partition *fresh(uint32_t n)
{
	memset(&part, 0, sizeof(part));
	part.num_vcpus = n;
	spin_lock_init(&part.lock);
	for (uint32_t i = 0; i < n; i++) {
		part.vcpu[i].partition = &part;
		part.vcpu[i].index = i;
		part.vcpu[i].pcpu = i;
	}
	atomic_store(&part.state, PARTITION_RUNNING);
	atomic_store(&part.vcpu[0].power, VCPU_ON);
	return &part;
}

static uint32_t power(uint32_t i)
{
	return atomic_load(&part.vcpu[i].power);
}

static uint32_t state(void)
{
	return atomic_load(&part.state);
}

static void set_state(enum partition_state s)
{
	atomic_store(&part.state, s);
}

static bool lock_free(void)
{
	return atomic_load(&part.lock.next) == atomic_load(&part.lock.serving);
}

void test_power_cpu_on(void)
{
	struct partition *p = fresh(3);
	struct vcpu *v1 = &p->vcpu[1];

	CHECK_EQ(power_cpu_on(p, v1, 0x1000, 0x2000), POWER_OK);
	CHECK_EQ(power(1), VCPU_ON_PENDING);
	CHECK_EQ(v1->entry, 0x1000);
	CHECK_EQ(v1->context, 0x2000);
	/* A second CPU_ON changes nothing: it is pending, then on. */
	CHECK_EQ(power_cpu_on(p, v1, 0x3000, 0), POWER_ON_PENDING);
	CHECK_EQ(v1->entry, 0x1000);
	CHECK(power_enter(p, v1));
	CHECK_EQ(power(1), VCPU_ON);
	CHECK_EQ(power_cpu_on(p, v1, 0x3000, 0), POWER_ALREADY_ON);
	CHECK_EQ(power_cpu_on(p, &p->vcpu[0], 0x3000, 0), POWER_ALREADY_ON);
	CHECK(lock_free());
}

/* CPU_ON only while RUNNING: an ending, ended or restarting partition starts no vCPU. */
void test_power_cpu_on_only_while_running(void)
{
	static const enum partition_state others[] = { PARTITION_ENDING, PARTITION_OFF,
						       PARTITION_STOPPED, PARTITION_RESTARTING };

	for (unsigned i = 0; i < ARRAY_SIZE(others); i++) {
		struct partition *p = fresh(2);
		set_state(others[i]);
		CHECK_EQ(power_cpu_on(p, &p->vcpu[1], 0x1000, 0), POWER_DENIED);
		CHECK_EQ(power(1), VCPU_OFF);
		CHECK(lock_free());
	}
}

/* ON_PENDING -> ON on the target's core, only while RUNNING; nothing else enters. */
void test_power_enter(void)
{
	struct partition *p = fresh(3);

	CHECK(!power_enter(p, &p->vcpu[1])); /* OFF */
	CHECK_EQ(power(1), VCPU_OFF);
	CHECK(!power_enter(p, &p->vcpu[0])); /* already ON */
	CHECK_EQ(power_cpu_on(p, &p->vcpu[1], 0x1000, 0), POWER_OK);
	set_state(PARTITION_ENDING);
	CHECK(!power_enter(p, &p->vcpu[1]));
	CHECK_EQ(power(1), VCPU_ON_PENDING);
	set_state(PARTITION_RUNNING);
	CHECK(power_enter(p, &p->vcpu[1]));
	CHECK_EQ(power(1), VCPU_ON);
	CHECK(lock_free());
}

/* ON -> OFF by CPU_OFF: the vCPU stays ON (stopping) until its core has left the guest. */
void test_power_cpu_off(void)
{
	struct partition *p = fresh(2);

	power_cpu_on(p, &p->vcpu[1], 0x1000, 0);
	power_enter(p, &p->vcpu[1]);
	CHECK(!power_cpu_off(p, &p->vcpu[1]));
	CHECK_EQ(power(1), VCPU_ON);
	CHECK(atomic_load(&p->vcpu[1].stop));
	CHECK_EQ(state(), PARTITION_RUNNING);
	power_left(p, &p->vcpu[1]);
	CHECK_EQ(power(1), VCPU_OFF);
	CHECK(!atomic_load(&p->vcpu[1].stop));
	/* The last one on: the partition is ENDING and its caller ends it. */
	CHECK(power_cpu_off(p, &p->vcpu[0]));
	CHECK_EQ(state(), PARTITION_ENDING);
	CHECK(power_others_off(p, &p->vcpu[0]));
	CHECK(lock_free());
}

/* A pending CPU_ON counts as on: CPU_OFF of the only running vCPU does not end the partition. */
void test_power_cpu_off_with_one_pending(void)
{
	struct partition *p = fresh(2);

	power_cpu_on(p, &p->vcpu[1], 0x1000, 0);
	CHECK(!power_cpu_off(p, &p->vcpu[0]));
	power_left(p, &p->vcpu[0]);
	CHECK_EQ(state(), PARTITION_RUNNING);
	CHECK(power_enter(p, &p->vcpu[1]));
	CHECK(power_cpu_off(p, &p->vcpu[1]));
	CHECK_EQ(state(), PARTITION_ENDING);
}

/*
 * Race (a): the two running vCPUs call CPU_OFF at once.  Whichever takes the lock second
 * sees the first on its way out: exactly one of them gets `last`, in every interleaving of
 * the calls with the first one's leaving, and the partition never stays RUNNING empty.
 */
void test_power_race_two_cpu_offs(void)
{
	for (unsigned order = 0; order < 4; order++) {
		struct partition *p = fresh(2);
		struct vcpu *a = &p->vcpu[order & 1], *b = &p->vcpu[!(order & 1)];
		bool last_a, last_b;

		power_cpu_on(p, &p->vcpu[1], 0x1000, 0);
		power_enter(p, &p->vcpu[1]);
		last_a = power_cpu_off(p, a);
		if (order & 2)
			power_left(p, a); /* a's core has left before b's CPU_OFF */
		last_b = power_cpu_off(p, b);
		if (!(order & 2))
			power_left(p, a);
		CHECK_EQ(last_a + last_b, 1);
		CHECK(last_b);
		CHECK_EQ(state(), PARTITION_ENDING);
		/* The one with `last` ends it: the other has left, so it waits for nobody. */
		CHECK(power_others_off(p, b));
		power_left(p, b);
		power_end(p, PARTITION_OFF);
		CHECK_EQ(state(), PARTITION_OFF);
		CHECK_EQ(power(0) | power(1), VCPU_OFF);
		CHECK(lock_free());
	}
}

/* Three vCPUs, CPU_OFF by all three: one `last`, whatever the order. */
void test_power_race_three_cpu_offs(void)
{
	static const uint8_t orders[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					      { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };

	for (unsigned o = 0; o < 6; o++) {
		struct partition *p = fresh(3);
		unsigned lasts = 0;
		for (uint32_t i = 1; i < 3; i++) {
			power_cpu_on(p, &p->vcpu[i], 0x1000, 0);
			power_enter(p, &p->vcpu[i]);
		}
		for (unsigned k = 0; k < 3; k++)
			lasts += power_cpu_off(p, &p->vcpu[orders[o][k]]);
		CHECK_EQ(lasts, 1);
		CHECK_EQ(state(), PARTITION_ENDING);
	}
}

/*
 * Race (b): CPU_ON racing the partition's end.  If the end comes first, the CPU_ON is refused
 * and starts nothing the ending core would wait for; if the CPU_ON comes first, the end
 * cancels it.  Either way the ending core's wait ends once the running vCPUs have left.
 */
void test_power_race_cpu_on_and_end(void)
{
	for (unsigned end_first = 0; end_first < 2; end_first++) {
		struct partition *p = fresh(3);
		struct vcpu *ender = &p->vcpu[0], *runner = &p->vcpu[1], *target = &p->vcpu[2];
		uint32_t kick = 0;

		power_cpu_on(p, runner, 0x1000, 0);
		power_enter(p, runner);
		if (end_first) {
			CHECK(power_begin_end(p, ender, &kick));
			/* runner has not seen its kick yet and calls CPU_ON */
			CHECK_EQ(power_cpu_on(p, target, 0x1000, 0), POWER_DENIED);
		} else {
			CHECK_EQ(power_cpu_on(p, target, 0x1000, 0), POWER_OK);
			CHECK(power_begin_end(p, ender, &kick));
		}
		CHECK_EQ(power(2), VCPU_OFF);                 /* refused, or cancelled */
		CHECK_EQ(kick, 1u << 1);                      /* only the running one is asked */
		CHECK(atomic_load(&runner->stop));
		CHECK(!atomic_load(&target->stop));
		CHECK(!power_enter(p, target));               /* its core finds nothing to enter */
		CHECK(!power_others_off(p, ender));
		power_left(p, runner);                        /* runner took the kick and left */
		CHECK(power_others_off(p, ender));
		CHECK(lock_free());
	}
}

/* RUNNING -> ENDING by one core: a second one learns it lost, and is asked nothing. */
void test_power_begin_end_once(void)
{
	struct partition *p = fresh(4);
	uint32_t kick = 0xdead;

	power_cpu_on(p, &p->vcpu[1], 0x1000, 0);
	power_enter(p, &p->vcpu[1]);
	power_cpu_on(p, &p->vcpu[2], 0x1000, 0);
	power_enter(p, &p->vcpu[2]);
	power_cpu_on(p, &p->vcpu[3], 0x1000, 0); /* pending */
	CHECK(power_begin_end(p, &p->vcpu[1], &kick));
	CHECK_EQ(kick, (1u << 0) | (1u << 2));
	CHECK_EQ(power(3), VCPU_OFF);
	CHECK(atomic_load(&p->vcpu[0].stop) && atomic_load(&p->vcpu[2].stop));
	CHECK(!atomic_load(&p->vcpu[1].stop));
	CHECK(!power_begin_end(p, &p->vcpu[2], &kick));
	CHECK_EQ(kick, 0);
	/* CPU_OFF during the end: not last, the caller just leaves. */
	CHECK(!power_cpu_off(p, &p->vcpu[0]));
	CHECK_EQ(state(), PARTITION_ENDING);
	CHECK(lock_free());
}

/* ENDING -> OFF | STOPPED | RESTARTING; ended -> RESTARTING -> RUNNING on vCPU 0's core. */
void test_power_end_and_restart(void)
{
	static const enum partition_state ends[] = { PARTITION_OFF, PARTITION_STOPPED };

	for (unsigned i = 0; i < 2; i++) {
		struct partition *p = fresh(2);
		uint32_t kick;
		CHECK(power_begin_end(p, &p->vcpu[0], &kick));
		CHECK(!power_begin_restart(p)); /* still ending */
		power_left(p, &p->vcpu[0]);
		power_end(p, ends[i]);
		CHECK_EQ(state(), ends[i]);
		CHECK(power_begin_restart(p));
		CHECK_EQ(state(), PARTITION_RESTARTING);
		CHECK(!power_begin_restart(p)); /* already restarting */
		CHECK(!power_enter(p, &p->vcpu[0]));
		power_restarted(p, 0x4000, 0x5000);
		CHECK_EQ(state(), PARTITION_RUNNING);
		CHECK_EQ(power(0), VCPU_ON_PENDING);
		CHECK_EQ(power(1), VCPU_OFF);
		CHECK_EQ(p->vcpu[0].entry, 0x4000);
		CHECK_EQ(p->vcpu[0].context, 0x5000);
		CHECK(power_enter(p, &p->vcpu[0]));
		CHECK(!power_begin_restart(p)); /* running */
		CHECK(lock_free());
	}
	/* An end straight into RESTARTING (a reset) */
	struct partition *p = fresh(1);
	CHECK(power_cpu_off(p, &p->vcpu[0]));
	power_left(p, &p->vcpu[0]);
	power_end(p, PARTITION_RESTARTING);
	CHECK(!power_begin_restart(p));
	power_restarted(p, 1, 2);
	CHECK_EQ(state(), PARTITION_RUNNING);
}

void test_power_others_off(void)
{
	struct partition *p = fresh(3);

	CHECK(power_others_off(p, &p->vcpu[0]));
	CHECK(!power_others_off(p, &p->vcpu[1]));
	power_cpu_on(p, &p->vcpu[2], 0, 0);
	CHECK(!power_others_off(p, &p->vcpu[0]));
	power_left(p, &p->vcpu[2]);
	CHECK(power_others_off(p, &p->vcpu[0]));
}

/* ---- threads as cores ---- */

#define STRESS_CPUS 4u
#define STRESS_STEPS 20000u        /* each core, and until the partition went round: */
#define STRESS_RESTARTS 2000u
#define STRESS_MAX_STEPS 50000000u /* (a bound, should it never) */

static _Atomic unsigned drained;
static _Atomic unsigned lives, ends, restarts, broken;
static pthread_barrier_t start;

/* Under the lock: RUNNING means a vCPU is pending, or on and not on its way out. */
static void check_running_has_a_vcpu(void)
{
	spin_lock(&part.lock);
	if (atomic_load(&part.state) == PARTITION_RUNNING) {
		bool any = false;
		for (uint32_t i = 0; i < part.num_vcpus; i++) {
			uint32_t pw = atomic_load(&part.vcpu[i].power);
			any |= pw == VCPU_ON_PENDING || (pw == VCPU_ON && !atomic_load(&part.vcpu[i].stop));
		}
		if (!any)
			atomic_fetch_add(&broken, 1);
	}
	spin_unlock(&part.lock);
}

/* Its core takes a kick: a vCPU asked to stop leaves. */
static void service(struct vcpu *me)
{
	if (atomic_load(&me->power) == VCPU_ON && atomic_load(&me->stop))
		power_left(&part, me);
}

/* This core won the end: wait for the others, leave, settle the outcome. */
static void end_it(struct vcpu *me, uint32_t how)
{
	static const enum partition_state outcomes[] = { PARTITION_OFF, PARTITION_STOPPED,
							  PARTITION_RESTARTING };

	atomic_fetch_add(&ends, 1);
	if (atomic_load(&ends) > atomic_load(&lives))
		atomic_fetch_add(&broken, 1);
	while (!power_others_off(&part, me))
		sched_yield();
	power_left(&part, me);
	power_end(&part, outcomes[how % 3]);
}

static void *core(void *arg)
{
	unsigned self = (unsigned)(uintptr_t)arg;
	struct vcpu *me = &part.vcpu[self];
	uint64_t rng = 0x9e3779b97f4a7c15ull * (self + 1);

	fake_cpu = self;
	pthread_barrier_wait(&start);
	for (unsigned step = 0; (step < STRESS_STEPS || atomic_load(&restarts) < STRESS_RESTARTS) &&
			       step < STRESS_MAX_STEPS; step++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(rng >> 33);
		service(me);
		if (atomic_load(&me->power) == VCPU_ON_PENDING)
			power_enter(&part, me);
		if (atomic_load(&me->power) == VCPU_ON && !atomic_load(&me->stop)) {
			uint32_t kick;
			switch (r % 8) {
			case 0: case 1: case 2:
				power_cpu_on(&part, &part.vcpu[(r >> 3) % STRESS_CPUS], 0x1000, self);
				break;
			case 3:
				if (power_cpu_off(&part, me))
					end_it(me, r >> 3);
				else
					power_left(&part, me);
				break;
			case 4:
				if (power_begin_end(&part, me, &kick))
					end_it(me, r >> 3);
				else
					power_left(&part, me);
				break;
			default:
				break; /* the guest runs */
			}
		}
		/* vCPU 0's core, idle: an ended partition is restarted, a restarting one reloaded. */
		if (self == 0 && atomic_load(&me->power) == VCPU_OFF) {
			uint32_t s = atomic_load(&part.state);
			bool restart = (s == PARTITION_OFF || s == PARTITION_STOPPED) && power_begin_restart(&part);
			if (restart || s == PARTITION_RESTARTING) {
				atomic_fetch_add(&lives, 1);
				atomic_fetch_add(&restarts, 1);
				power_restarted(&part, 0x1000, 0);
			}
		}
		if (step % 64 == 0)
			check_running_has_a_vcpu();
	}
	atomic_fetch_add(&drained, 1);
	while (atomic_load(&drained) < STRESS_CPUS) {
		service(me);
		sched_yield();
	}
	return NULL;
}

/*
 * Four threads, each a core of a 4-vCPU partition, CPU_ON, CPU_OFF, end (a fault) and
 * restart at random.  No timing is asserted: every core's run is checked against the state
 * machine's invariants while it runs, and the whole once they have all stopped.
 */
void test_power_threads(void)
{
	pthread_t threads[STRESS_CPUS];

	fresh(STRESS_CPUS);
	atomic_store(&lives, 1);
	pthread_barrier_init(&start, NULL, STRESS_CPUS);
	fake_threaded = true;
	for (unsigned i = 0; i < STRESS_CPUS; i++)
		CHECK(!pthread_create(&threads[i], NULL, core, (void *)(uintptr_t)i));
	for (unsigned i = 0; i < STRESS_CPUS; i++)
		pthread_join(threads[i], NULL);
	fake_threaded = false;

	uint32_t s = state();
	bool any = false;
	CHECK_EQ(atomic_load(&broken), 0);
	CHECK(lock_free());
	CHECK(s != PARTITION_ENDING);
	for (uint32_t i = 0; i < STRESS_CPUS; i++) {
		CHECK(!atomic_load(&part.vcpu[i].stop));
		any |= power(i) != VCPU_OFF;
		if (s != PARTITION_RUNNING)
			CHECK_EQ(power(i), VCPU_OFF);
	}
	if (s == PARTITION_RUNNING)
		CHECK(any);
	/* One end per life: exactly one core won each. */
	CHECK_EQ(atomic_load(&ends), atomic_load(&lives) - (s == PARTITION_RUNNING));
	CHECK(atomic_load(&restarts) >= STRESS_RESTARTS); /* it really went round */
	fprintf(stderr, "  power threads: %u lives, %u ends\n", atomic_load(&lives), atomic_load(&ends));
}

/* What ends a vCPU's wait for another core: its stop, its partition's end, a request. */
void test_power_must_leave(void)
{
	struct partition *p = fresh(2);
	struct vcpu *v0 = &p->vcpu[0], *v1 = &p->vcpu[1];
	uint32_t kick;

	atomic_store(&v1->power, VCPU_ON);
	CHECK(!power_must_leave(p, v1));
	atomic_store(&p->request, PARTITION_REQ_STOP);
	CHECK(power_must_leave(p, v1));
	atomic_store(&p->request, 0);
	CHECK(power_begin_end(p, v0, &kick));
	CHECK(power_must_leave(p, v1)); /* asked to stop */
	CHECK(power_must_leave(p, v0)); /* the ending core itself: its partition is ENDING */
	atomic_store(&v1->stop, false);
	CHECK(power_must_leave(p, v1)); /* ENDING alone is enough */
	fresh(2);
	atomic_store(&v1->power, VCPU_ON);
	CHECK(!power_cpu_off(p, v0)); /* v1 stays on: the partition runs on */
	CHECK_EQ(state(), PARTITION_RUNNING);
	CHECK(power_must_leave(p, v0)); /* its own CPU_OFF */
	CHECK(!power_must_leave(p, v1));
}
