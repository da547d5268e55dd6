/* SPDX-License-Identifier: MIT */
/*
 * The core's sched_guest_waits and sched_timer_expired behind the link's --wrap (host.mk), the
 * same for both ports: a port test sees what its vCPU code hands the core's loop on a shared
 * core without running that loop (fake.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include "fake.h"

void (*fake_sched_guest_waits)(struct vcpu *v);
void (*fake_sched_timer_expired)(struct vcpu *v);

void __real_sched_guest_waits(struct vcpu *v);
void __real_sched_timer_expired(struct vcpu *v);
void __wrap_sched_guest_waits(struct vcpu *v);
void __wrap_sched_timer_expired(struct vcpu *v);

void __wrap_sched_guest_waits(struct vcpu *v)
{
	if (fake_sched_guest_waits) {
		fake_sched_guest_waits(v);
		/* The real one never returns: a hook that did would run the port on in a state
		 * the board cannot reach. */
		fprintf(stderr, "fake: the sched_guest_waits hook returned\n");
		abort();
	}
	__real_sched_guest_waits(v);
}

void __wrap_sched_timer_expired(struct vcpu *v)
{
	if (fake_sched_timer_expired)
		fake_sched_timer_expired(v);
	else
		__real_sched_timer_expired(v);
}
