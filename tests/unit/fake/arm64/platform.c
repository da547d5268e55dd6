/* SPDX-License-Identifier: MIT */
/* What the arm64 files that touch hardware do for partitions and vCPUs, minus the hardware (cpu.c, vcpu.c's entries, mmu.c, the FIQ and sync vectors). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arch/entry.h>
#include <arch/gicv3.h>
#include <arch/vgicv3.h>
#include <arch/partition.h>
#include <tern/partition.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/config.h>
#include <tern/lib.h>
#include <tern/platform.h>
#include "fake.h"

/* The C entry points vectors.S calls (arch/arm64/traps.c). */
void arm64_guest_sync(struct guest_regs *r);
void arm64_guest_fiq(struct guest_regs *r);

/* vectors.S's tables, which a core's VBAR_EL2 names (arm64_shared_entry): only their addresses. */
char hyp_vectors[2048];
char hyp_vectors_shared[2048];

uint8_t fake_gicd[0x10000] __attribute__((aligned(0x10000)));
uint8_t fake_gicr[FAKE_CPUS][0x20000] __attribute__((aligned(0x10000)));
static uint32_t table_pages;

struct arm64_cpu *fake_this_cpu(void)
{
	if (fake_cpu >= FAKE_CPUS)
		abort();
	return &cpus[fake_cpu];
}

/* ---- partitions and vCPUs (what cpu.c and mmu.c do, minus the hardware) ---- */

bool arch_msi_target(const struct partition *p, uint64_t guest_addr, uint64_t *host_addr)
{
	for (uint32_t i = 0; i < p->cfg->num_vcpus; i++) {
		uint64_t offset = guest_addr - (FAKE_MSI_GUEST + i * 0x1000ull);
		if (offset < 0x1000) {
			*host_addr = FAKE_MSI_HOST + p->cfg->cpus[i] * 0x1000ull + offset;
			return true;
		}
	}
	return false;
}

bool arch_partition_init(struct partition *p, char *err, size_t errlen)
{
	struct arch_partition *ap = &p->arch;

	if (fake_partition_init_error) {
		snprintf(err, errlen, "%s", fake_partition_init_error);
		return false;
	}
	spin_lock_init(&ap->dist.lock);
	ap->vttbr = (uint64_t)(p->index + 1) << 48;
	table_pages += 2;
	return true;
}

struct fake_shared_map fake_shared_maps[FAKE_SHARED_MAPS];
unsigned fake_shared_map_count;

bool arch_partition_map_shared(struct partition *p, ipaddr_t ipa, paddr_t pa, uint64_t size,
			       bool writable, char *err, size_t errlen)
{
	if (fake_shared_map_count == FAKE_SHARED_MAPS) {
		snprintf(err, errlen, "fake: out of shared maps");
		return false;
	}
	fake_shared_maps[fake_shared_map_count++] = (struct fake_shared_map){ p->index, ipa, pa, size, writable };
	return true;
}

/* As gicv3.c's: the SPI pending in the distributor. */
void arch_irq_raise(uint32_t irq)
{
	fake_raised_record(irq);
	mmio_write32(platform.arch.gicd_base + GICD_ISPENDR + 4 * (uintptr_t)(irq / 32), 1u << (irq % 32));
}

void arch_table_pages(uint32_t *used, uint32_t *total)
{
	*used = table_pages;
	*total = 64;
}

/* As vcpu.c's arch_vcpu_run up to the eret: the vCPU's interrupt state, then its first registers. */
void arch_vcpu_run(struct vcpu *v, uint64_t entry, uint64_t context)
{
	struct arm64_cpu *c = this_cpu();
	struct guest_regs *frame;
	struct fake_core *fc = &fake_cores[fake_cpu];

	c->direct = v->partition->cfg->flags & TERN_PF_IRQ_DIRECT;
	write_sysreg(icc_igrpen1_el1, 1);
	if (cpu_is_shared((unsigned)c->id)) {
		arm64_shared_entry(c, v);
		c->context = arm64_vcpu_context(v);
		c->frame = &c->context->frame;
	}
	frame = guest_frame(c);
	vgic_vcpu_reset(c, v);
	arm64_reset_el1(c);
	memset(frame, 0, sizeof(*frame));
	if (!v->partition->first_entry)
		v->partition->first_entry = arch_counter();
	frame->x[0] = context;
	frame->elr = entry;
	frame->spsr = 0x3c5; /* EL1h, DAIF masked */
	fc->running = v;
	fc->entry = entry;
	fc->context = context;
	fc->runs++;
	fake_exit_to_test(FAKE_EXIT_RUN);
}

/* As vcpu.c's arch_vcpu_resume up to the fast paths' caches and the eret. */
void arch_vcpu_resume(struct vcpu *v)
{
	arm64_vcpu_resume_here(this_cpu(), v);
	fake_cores[fake_cpu].running = v;
	fake_cores[fake_cpu].resumes++;
	fake_exit_to_test(FAKE_EXIT_RUN);
}

struct guest_regs *fake_guest_regs(unsigned cpu)
{
	return guest_frame(&cpus[cpu]);
}

void fake_board_reset(void)
{
	fake_gic_reset();
	fake_shared_map_count = 0;
}

enum fake_exit fake_kick_running(unsigned cpu)
{
	fake_raise_group0(cpu, SGI_KICK);
	return FAKE_ON(cpu, arm64_guest_fiq(fake_guest_regs(cpu)));
}

enum fake_exit fake_trap(unsigned cpu, uint64_t esr, uint64_t far, uint64_t hpfar)
{
	fake_sysreg_set(cpu, "esr_el2", esr);
	fake_sysreg_set(cpu, "far_el2", far);
	fake_sysreg_set(cpu, "hpfar_el2", hpfar);
	return FAKE_ON(cpu, arm64_guest_sync(fake_guest_regs(cpu)));
}

/* The host's memory is all reachable. */
bool arch_hyp_map_shared(paddr_t pa, uint64_t size)
{
	(void)pa;
	(void)size;
	return true;
}
