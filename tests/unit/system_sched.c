/* SPDX-License-Identifier: MIT */
/*
 * The shared core's functions a port calls (core/shared_core.c), linked with --wrap (Makefile)
 * so that a port's test can see what its arch code hands the scheduler without running the
 * scheduler: with sched_stub.on, a guest's wait is recorded and leaves to the test as the core
 * leaving the guest would (FAKE_EXIT_IDLE; the guest's frame stays as the arch left it), and a
 * scheduling event is recorded and returns (the vCPU goes on).  Off, the real ones run.
 */
#include "system.h"

struct sched_stub sched_stub;

__attribute__((noreturn)) void __real_sched_guest_waits(struct vcpu *v);
void __real_sched_timer_expired(struct vcpu *v);
__attribute__((noreturn)) void __wrap_sched_guest_waits(struct vcpu *v);
void __wrap_sched_timer_expired(struct vcpu *v);

void __wrap_sched_guest_waits(struct vcpu *v)
{
	if (!sched_stub.on)
		__real_sched_guest_waits(v);
	sched_stub.waits++;
	sched_stub.last = v;
	fake_exit_to_test(FAKE_EXIT_IDLE);
}

void __wrap_sched_timer_expired(struct vcpu *v)
{
	if (!sched_stub.on) {
		__real_sched_timer_expired(v);
		return;
	}
	sched_stub.expired++;
	sched_stub.last = v;
}
