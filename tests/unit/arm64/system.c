/* SPDX-License-Identifier: MIT */
/* system.h's firmware calls on arm64: PSCI through HVC. */
#include <arch/firmware.h>
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vgicv3.h>
#include <tern/platform.h>
#include "check.h"
#include "system.h"

void arm64_guest_fiq(struct guest_regs *r);

const struct fw_codes fw = {
	.success = 0,
	.invalid_address = (uint64_t)-9,
	.already_on = (uint64_t)-4,
	.on_pending = (uint64_t)-4, /* a CPU_ON of a vCPU still starting: ALREADY_ON, as the board answers */
	.denied = (uint64_t)-3,
	.system_off_stat = "exit_hvc",
};

enum fake_exit hvc(unsigned cpu, uint64_t x0, uint64_t x1, uint64_t x2, uint64_t x3)
{
	struct guest_regs *r = fake_guest_regs(cpu);

	r->x[0] = x0;
	r->x[1] = x1;
	r->x[2] = x2;
	r->x[3] = x3;
	return fake_trap(cpu, ((uint64_t)EC_HVC64 << 26) | ESR_IL, 0, 0);
}

uint64_t x0_of(unsigned cpu)
{
	return fake_guest_regs(cpu)->x[0];
}

enum fake_exit fw_cpu_on(unsigned cpu, uint64_t target, uint64_t entry, uint64_t context)
{
	return hvc(cpu, PSCI_CPU_ON_64, target, entry, context);
}

enum fake_exit fw_cpu_off(unsigned cpu)
{
	return hvc(cpu, PSCI_CPU_OFF, 0, 0, 0);
}

enum fake_exit fw_cpu_status(unsigned cpu, uint64_t target)
{
	return hvc(cpu, PSCI_AFFINITY_INFO_64, target, 0, 0);
}

enum fake_exit fw_system_off(unsigned cpu)
{
	return hvc(cpu, PSCI_SYSTEM_OFF, 0, 0, 0);
}

enum fake_exit fw_system_reset(unsigned cpu)
{
	return hvc(cpu, PSCI_SYSTEM_RESET, 0, 0, 0);
}

uint64_t fw_error(unsigned cpu)
{
	return x0_of(cpu);
}

uint64_t fw_status(unsigned cpu)
{
	return x0_of(cpu);
}

uint64_t guest_context(unsigned cpu)
{
	return fake_guest_regs(cpu)->x[0];
}

void set_fast_path_irqs(unsigned cpu, uint64_t n)
{
	cpus[cpu].fast_irqs = n;
}

bool console_irq_goes_to(unsigned cpu)
{
	return fake_hyp_irq == platform.uart_irq && fake_hyp_irq_cpu == cpu;
}

const char *break_partition_init(struct tern_config_partition *c)
{
	(void)c;
	fake_partition_init_error = "out of stage-2 table pages";
	return fake_partition_init_error;
}

void mend_partition_init(void)
{
	fake_partition_init_error = NULL;
}

enum fake_exit console_input_interrupt(unsigned cpu)
{
	fake_raise_group0(cpu, platform.uart_irq);
	return FAKE_ON(cpu, arm64_guest_fiq(fake_guest_regs(cpu)));
}

bool console_input_completed(unsigned cpu)
{
	return fake_sysreg(cpu, "icc_eoir0_el1") == platform.uart_irq &&
	       fake_sysreg(cpu, "icc_dir_el1") == platform.uart_irq;
}

const uint32_t msi_flags = 0;

uint64_t msi_guest_doorbell(uint32_t vcpu)
{
	return FAKE_MSI_GUEST + vcpu * 0x1000ull;
}

uint64_t msi_host_doorbell(unsigned core)
{
	return FAKE_MSI_HOST + core * 0x1000ull;
}

bool shared_map_of(const struct partition *p, uint64_t ipa, uint64_t *pa, bool *writable, bool *executable)
{
	for (unsigned i = 0; i < fake_shared_map_count; i++) {
		const struct fake_shared_map *m = &fake_shared_maps[i];
		if (m->partition == p->index && ipa - m->ipa < m->size) {
			*pa = m->pa + (ipa - m->ipa);
			*writable = m->writable;
			*executable = false; /* stage2.c's attributes: PTE_XN always */
			return true;
		}
	}
	return false;
}

void arm64_guest_wfi(struct guest_regs *r);

#define IPI_SGI 6u

void guest_enables_ipi(unsigned cpu)
{
	struct vgic_redist *rd = &fake_cores[cpu].running->arch.redist;

	rd->enabled |= BIT(IPI_SGI);
	rd->group |= BIT(IPI_SGI);
	rd->prio[IPI_SGI] = 0x80;
}

enum fake_exit send_ipi(unsigned cpu, uint32_t vcpu)
{
	fake_guest_regs(cpu)->x[5] = ((uint64_t)IPI_SGI << 24) | BIT(vcpu);
	return fake_trap(cpu, ((uint64_t)EC_SYSREG << 26) | ESR_IL | ISS_ICC_SGI1R | (5u << 5), 0, 0);
}

bool ipi_pending(unsigned cpu)
{
	for (unsigned n = 0; n < gic_nr_lrs; n++) {
		if ((fake_lrs[cpu][n] & (ICH_LR_PENDING | ICH_LR_VINTID_MASK)) == (ICH_LR_PENDING | IPI_SGI))
			return true;
	}
	return false;
}

enum fake_exit guest_wfi(unsigned cpu)
{
	return FAKE_ON(cpu, arm64_guest_wfi(fake_guest_regs(cpu)));
}

enum fake_exit manager_call(unsigned cpu, unsigned fn, uint64_t gpa, uint64_t len)
{
	return hvc(cpu, 0xc6000000u + fn, gpa, len, 0); /* docs/management.md's numbers */
}

int64_t manager_error(unsigned cpu)
{
	int64_t x0 = (int64_t)x0_of(cpu);

	return x0 < 0 ? x0 : 0;
}

uint64_t manager_value(unsigned cpu)
{
	int64_t x0 = (int64_t)x0_of(cpu);

	return x0 < 0 ? 0 : (uint64_t)x0;
}

const struct manager_codes mgr = { .not_supported = PSCI_NOT_SUPPORTED,
				   .invalid = PSCI_INVALID_PARAMETERS, .denied = PSCI_DENIED,
				   .bad_address = PSCI_INVALID_ADDRESS, .busy = -4, .no_command = -8 };
