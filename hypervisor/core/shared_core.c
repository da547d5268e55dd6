/* SPDX-License-Identifier: MIT */
/*
 * Shared cores: the loop of a core whose vCPUs take turns under its pool's scheduler
 * (docs/design.md, "Scheduling").  Not built yet: no core is shared.
 */
#include <tern/partition.h>

bool cpu_is_shared(unsigned pcpu)
{
	(void)pcpu;
	return false;
}

void sched_guest_waits(struct vcpu *v)
{
	partition_fault(v, "a shared core's wait with no shared core");
}

void sched_timer_expired(struct vcpu *v)
{
	(void)v;
}
