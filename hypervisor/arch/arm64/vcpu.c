/* SPDX-License-Identifier: MIT */
/* What core/ asks of a vCPU's arm64 state outside entering it: its fast-path counters, stopping it. */
#include <arch/gicv3.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/partition.h>

/* The fast paths (vectors.S) count in struct arm64_cpu: no call on the interrupt path. */
uint64_t arch_vcpu_stat(const struct vcpu *v, enum stat_id id)
{
	const struct arm64_cpu *c = &cpus[v->pcpu];

	switch (id) {
	case STAT_EXIT_IRQ:
	case STAT_IRQ_INJECTED:
		return c->fast_irqs;
	case STAT_EXIT_WFI:
		return c->fast_wfi;
	case STAT_EXIT_WFE:
		return c->fast_wfe;
	case STAT_EXIT_SYSREG:
	case STAT_SGI_SENT:
		return c->fast_sgi;
	default:
		return 0;
	}
}

void arch_vcpu_quiesce(struct vcpu *v)
{
	struct arm64_cpu *c = &cpus[v->pcpu];

	write_sysreg(cntv_ctl_el0, 0);
	write_sysreg(cntp_ctl_el0, 0);
	vgic_quiesce(c);
	write_sysreg(hcr_el2, HCR_RW);
	isb();
}
