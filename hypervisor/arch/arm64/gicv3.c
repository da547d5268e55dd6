/* SPDX-License-Identifier: MIT */
/* The physical GICv3: distributor, redistributors, CPU interface, list registers. */
#include <arch/gicv3.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/platform.h>

unsigned gic_nr_lrs;
uint32_t gic_nr_irqs;


static void dist_wait_rwp(void)
{
	while (mmio_read32(platform.arch.gicd_base + GICD_CTLR) & GICD_CTLR_RWP)
		;
}

void gic_dist_init(void)
{
	uintptr_t d = platform.arch.gicd_base;

	mmio_write32(d + GICD_CTLR, 0);
	dist_wait_rwp();
	gic_nr_irqs = 32 * ((mmio_read32(d + GICD_TYPER) & 0x1f) + 1);
	if (gic_nr_irqs > 1020)
		gic_nr_irqs = 1020;
	for (uint32_t i = 32; i < gic_nr_irqs; i += 32) {
		mmio_write32(d + GICD_IGROUPR + (uintptr_t)i / 8, ~0u);
		mmio_write32(d + GICD_ICENABLER + (uintptr_t)i / 8, ~0u);
		mmio_write32(d + GICD_ICPENDR + (uintptr_t)i / 8, ~0u);
		mmio_write32(d + GICD_ICACTIVER + (uintptr_t)i / 8, ~0u);
	}
	for (uint32_t i = 32; i < gic_nr_irqs; i += 4)
		mmio_write32(d + GICD_IPRIORITYR + i, PRIO_GUEST * 0x01010101u);
	/* Single security state (QEMU virt has no EL3): DS is set, Group 1 is ours and the guests'. */
	mmio_write32(d + GICD_CTLR, GICD_CTLR_ARE);
	dist_wait_rwp();
	mmio_write32(d + GICD_CTLR, GICD_CTLR_ARE | GICD_CTLR_ENGRP1 | GICD_CTLR_ENGRP0);
	dist_wait_rwp();
}

static uintptr_t find_redistributor(uint64_t mpidr)
{
	uint32_t aff = (uint32_t)(((mpidr >> 8) & 0xff000000u) | (mpidr & 0xffffff));

	uintptr_t rd = platform.arch.gicr_base;

	for (;;) {
		uint64_t typer = mmio_read64(rd + GICR_TYPER);
		if ((typer >> 32) == aff)
			return rd;
		if (typer & GICR_TYPER_LAST)
			return 0;
		rd += platform.arch.gicr_stride;
	}
}

void gic_cpu_init(struct arm64_cpu *c)
{
	uintptr_t rd = find_redistributor(c->mpidr);
	uintptr_t sgi = rd + GICR_SGI_BASE;

	c->gicr = rd;
	mmio_write32(rd + GICR_WAKER, mmio_read32(rd + GICR_WAKER) & ~GICR_WAKER_SLEEP);
	while (mmio_read32(rd + GICR_WAKER) & GICR_WAKER_ASLEEP)
		;
	/* Group 0, FIQs at EL2 on every core: the kick and an idle core's timer. */
	mmio_write32(sgi + GICD_IGROUPR, ~(uint32_t)(BIT(SGI_KICK) | BIT(PPI_HYP_TIMER)));
	mmio_write32(sgi + GICD_ICENABLER, ~0u);
	mmio_write32(sgi + GICD_ICPENDR, ~0u);
	mmio_write32(sgi + GICD_ICACTIVER, ~0u);
	for (uint32_t i = 0; i < 32; i += 4)
		mmio_write32(sgi + GICD_IPRIORITYR + i, PRIO_GUEST * 0x01010101u);
	mmio_write8(sgi + GICD_IPRIORITYR + SGI_KICK, PRIO_HYP);
	mmio_write8(sgi + GICD_IPRIORITYR + PPI_MAINTENANCE, PRIO_HYP);
	mmio_write8(sgi + GICD_IPRIORITYR + PPI_HYP_TIMER, PRIO_HYP);
	mmio_write32(sgi + GICD_ISENABLER, BIT(SGI_KICK) | BIT(PPI_MAINTENANCE) | BIT(PPI_HYP_TIMER));

	write_sysreg(icc_sre_el2, ICC_SRE_SRE | ICC_SRE_ENABLE);
	isb();
	write_sysreg(icc_pmr_el1, 0xff);
	write_sysreg(icc_bpr1_el1, 0);
	/* Split priority drop from deactivation: the guest's EOI deactivates linked interrupts. */
	write_sysreg(icc_ctlr_el1, ICC_CTLR_EOIMODE);
	write_sysreg(icc_igrpen0_el1, 1);
	write_sysreg(icc_igrpen1_el1, 1);
	isb();

	gic_nr_lrs = (unsigned)(read_sysreg(ich_vtr_el2) & 0xf) + 1;
	c->lrs_idle = BIT(gic_nr_lrs) - 1;
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		gic_write_lr(n, 0);
	write_sysreg(ich_vmcr_el2, 0);
	write_sysreg(ich_hcr_el2, ICH_HCR_EN);
	isb();
}

/*
 * Split priority drop and deactivation (trap-and-inject: the guest's virtual
 * EOI deactivates), or not (direct: the guest EOIs physical interrupts itself).
 */
void gic_set_eoimode(bool split)
{
	write_sysreg(icc_ctlr_el1, split ? ICC_CTLR_EOIMODE : 0);
	isb();
}

void gic_send_sgi(unsigned pcpu, uint32_t intid)
{
	/* Aff0 = core index on this board: target list bit, Aff1..3 zero. */
	uint64_t value = ((uint64_t)intid << 24) | BIT(pcpu & 15);

	dsb(ishst);
	if (intid == SGI_KICK)
		write_sysreg(icc_sgi0r_el1, value); /* Group 0: the control path */
	else
		write_sysreg(icc_sgi1r_el1, value);
	isb();
}

uint64_t gic_read_lr(unsigned n)
{
	/* ICH_LR<n>_EL2 is named in the instruction: a case per list register. */
	switch (n) {
	case 0: return read_sysreg(ich_lr0_el2);
	case 1: return read_sysreg(ich_lr1_el2);
	case 2: return read_sysreg(ich_lr2_el2);
	case 3: return read_sysreg(ich_lr3_el2);
	case 4: return read_sysreg(ich_lr4_el2);
	case 5: return read_sysreg(ich_lr5_el2);
	case 6: return read_sysreg(ich_lr6_el2);
	case 7: return read_sysreg(ich_lr7_el2);
	case 8: return read_sysreg(ich_lr8_el2);
	case 9: return read_sysreg(ich_lr9_el2);
	case 10: return read_sysreg(ich_lr10_el2);
	case 11: return read_sysreg(ich_lr11_el2);
	case 12: return read_sysreg(ich_lr12_el2);
	case 13: return read_sysreg(ich_lr13_el2);
	case 14: return read_sysreg(ich_lr14_el2);
	case 15: return read_sysreg(ich_lr15_el2);
	default: return 0;
	}
}

void gic_write_lr(unsigned n, uint64_t value)
{
	switch (n) {
	case 0: write_sysreg(ich_lr0_el2, value); break;
	case 1: write_sysreg(ich_lr1_el2, value); break;
	case 2: write_sysreg(ich_lr2_el2, value); break;
	case 3: write_sysreg(ich_lr3_el2, value); break;
	case 4: write_sysreg(ich_lr4_el2, value); break;
	case 5: write_sysreg(ich_lr5_el2, value); break;
	case 6: write_sysreg(ich_lr6_el2, value); break;
	case 7: write_sysreg(ich_lr7_el2, value); break;
	case 8: write_sysreg(ich_lr8_el2, value); break;
	case 9: write_sysreg(ich_lr9_el2, value); break;
	case 10: write_sysreg(ich_lr10_el2, value); break;
	case 11: write_sysreg(ich_lr11_el2, value); break;
	case 12: write_sysreg(ich_lr12_el2, value); break;
	case 13: write_sysreg(ich_lr13_el2, value); break;
	case 14: write_sysreg(ich_lr14_el2, value); break;
	case 15: write_sysreg(ich_lr15_el2, value); break;
	default: break;
	}
}

/* A board SPI for the hypervisor: Group 0, so it arrives as FIQ at EL2 whatever the guest does. */
void arch_hyp_irq_route(uint32_t intid, unsigned pcpu)
{
	uintptr_t d = platform.arch.gicd_base;
	uintptr_t word = 4 * (uintptr_t)(intid / 32);
	uint32_t bit = (uint32_t)BIT(intid % 32);

	mmio_write32(d + GICD_IGROUPR + word, mmio_read32(d + GICD_IGROUPR + word) & ~bit);
	*(volatile uint8_t *)(d + GICD_IPRIORITYR + intid) = PRIO_HYP;
	mmio_write64(d + GICD_IROUTER + 8 * (uintptr_t)intid, pcpu);
	mmio_write32(d + GICD_ISENABLER + word, bit);
}

/*
 * A doorbell: the SPI pending in the distributor, as its device's line would make it; the
 * distributor sends it wherever its owner routed it.  The ringing guest's stores to the shared
 * memory come first for whoever takes the interrupt.
 */
uintptr_t gic_spi_pend_register(uint32_t spi)
{
	return platform.arch.gicd_base + GICD_ISPENDR + 4 * (uintptr_t)(spi / 32);
}

void arch_irq_raise(uint32_t irq)
{
	dsb(ishst);
	mmio_write32(gic_spi_pend_register(irq), (uint32_t)BIT(irq % 32));
}

/* arm64 boards pass their ECAM through: device MSIs are the SMMU's and the GIC's business. */
bool arch_msi_target(const struct partition *p, uint64_t guest_addr, uint64_t *host_addr)
{
	(void)p;
	(void)guest_addr;
	(void)host_addr;
	return false;
}
