/* SPDX-License-Identifier: MIT */
/* Until the ports' halves land: no core is shared without them (config refuses nothing yet). */
#include <tern/arch.h>
#include <tern/partition.h>

__attribute__((weak)) void arch_vcpu_resume(struct vcpu *v)
{
	partition_fault(v, "shared cores: this port cannot resume a vCPU yet");
}

__attribute__((weak)) void arch_sched_timer(uint64_t deadline)
{
	(void)deadline;
}

__attribute__((weak)) bool arch_vcpu_wake_pending(const struct vcpu *v)
{
	(void)v;
	return false;
}

__attribute__((weak)) uint64_t arch_vcpu_timer_deadline(const struct vcpu *v)
{
	(void)v;
	return UINT64_MAX;
}
