/* SPDX-License-Identifier: MIT */
/*
 * A fake clock driving one core's scheduler (tern/sched.h) as the hypervisor's core loop will:
 * pick, run the chosen vCPU until the decision's event, a wake that asks for a preemption, or
 * its guest's block, account what ran, and pick again.  The vCPUs' guests are workloads:
 * a hog never blocks; a periodic one wakes every `interval` (from `phase`), runs `burst`, and
 * blocks.  Observers see every run interval.
 */
#ifndef TERN_TEST_SCHED_SIM_H
#define TERN_TEST_SCHED_SIM_H

#include <tern/sched.h>

#define SIM_MAX_VCPUS 16u
#define US(x) ((uint64_t)(x) * 1000u)
#define MS(x) ((uint64_t)(x) * 1000000u)

enum sim_load { SIM_HOG, SIM_PERIODIC };

struct sim_vcpu {
	struct sched_vcpu s;
	unsigned int id;
	enum sim_load load;
	uint64_t interval, phase, burst;
	/* the guest's state */
	uint64_t burst_left, next_wake;
	/* what the simulation saw */
	bool waiting;			/* woken, not yet run */
	uint64_t woke_at, max_latency, wakes;
};

struct sim;
typedef void (*sim_observer)(struct sim *sim, struct sim_vcpu *v, uint64_t from, uint64_t to);

struct sim {
	struct sched_core core;
	struct sim_vcpu vcpu[SIM_MAX_VCPUS];
	unsigned int n;
	uint64_t now;
	uint64_t picks, preemptions;
	sim_observer observe;
	void *ctx;
};

/* A core of `kind` at time 0; p: its parameters (ARINC 653) or NULL. */
void sim_init(struct sim *sim, uint8_t kind, const struct sched_params *p);
/* Queues a vCPU of `partition` with parameters p (NULL: defaults); returns it. */
struct sim_vcpu *sim_add(struct sim *sim, uint16_t partition, const struct sched_params *p);
/* Its guest wakes every interval from phase (the first at phase), runs burst, blocks. */
void sim_periodic(struct sim *sim, struct sim_vcpu *v, uint64_t phase, uint64_t interval,
		  uint64_t burst);
/* Runs the core until `end`. */
void sim_run(struct sim *sim, uint64_t end);

struct sched_params sim_rtds(uint64_t budget, uint64_t period);
struct sched_params sim_credit(uint32_t weight, uint32_t cap);

/* A small deterministic PRNG for the tests' random task sets. */
uint32_t sim_rand(uint32_t *state);

#endif
