/* SPDX-License-Identifier: MIT */
#ifndef ARCH_GICV3_H
#define ARCH_GICV3_H

#include <arch/cpu.h>

/* Distributor */
#define GICD_CTLR        0x0000
#define GICD_TYPER       0x0004
#define GICD_IIDR        0x0008
#define GICD_IGROUPR     0x0080
#define GICD_ISENABLER   0x0100
#define GICD_ICENABLER   0x0180
#define GICD_ISPENDR     0x0200
#define GIC_FIRST_SPI    32u     /* INTIDs 0-31: SGIs and PPIs, banked per core */
#define GICD_ICPENDR     0x0280
#define GICD_ISACTIVER   0x0300
#define GICD_ICACTIVER   0x0380
#define GICD_IPRIORITYR  0x0400
#define GICD_ITARGETSR   0x0800
#define GICD_ICFGR       0x0c00
#define GICD_IGRPMODR    0x0d00
#define GICD_NSACR       0x0e00
#define GICD_IROUTER     0x6000
#define GICD_PIDR2       0xffe8

#define GICD_CTLR_ENGRP0 BIT(0)
#define GICD_CTLR_ENGRP1 BIT(1)
#define GICD_CTLR_ARE    BIT(4)
#define GICD_CTLR_DS     BIT(6)
#define GICD_CTLR_RWP    BIT(31)

/* Redistributor: RD_base frame, then SGI_base frame 64 KiB above */
#define GICR_CTLR        0x0000
#define GICR_IIDR        0x0004
#define GICR_TYPER       0x0008
#define GICR_WAKER       0x0014
#define GICR_PIDR2       0xffe8
#define GICR_SGI_BASE    0x10000
#define GICR_WAKER_SLEEP BIT(1)
#define GICR_WAKER_ASLEEP BIT(2)
#define GICR_TYPER_LAST  BIT(4)

/*
 * Interrupts the hypervisor itself uses on every core.  The kick is a Group 0
 * interrupt, taken as FIQ at EL2 (HCR_EL2.FMO), whatever the guest masks and
 * however its interrupts are delivered; guests never see SGI 15.
 */
#define SGI_KICK       15    /* "look at your vCPU's requests" */
#define PPI_MAINTENANCE 25
#define PPI_HYP_TIMER  26    /* EL2 physical timer: an idle core's wake-up (restart back-off) */
#define PPI_VTIMER     27
#define PPI_PTIMER     30
/* PPIs that belong to whichever vCPU owns the core. */
#define OWNED_PPIS     (BIT(PPI_VTIMER) | BIT(PPI_PTIMER))

#define PRIO_HYP   0x00      /* above anything a guest can configure */
#define PRIO_GUEST 0xa0
#define PRIO_GUEST_MIN 0x10  /* a direct guest's priorities are clamped to this or lower */
/* The SGIs and PPIs a guest may own on its core. */
#define GUEST_SGIS     (BIT(SGI_KICK) - 1)
/* A direct guest's SGIs and PPIs: Group 1 whatever it writes. */
#define DIRECT_GROUP1  ((uint32_t)(GUEST_SGIS | OWNED_PPIS))

#ifndef __ASSEMBLER__
#include <arch/io.h>

extern unsigned gic_nr_lrs;
extern uint32_t gic_nr_irqs;

void gic_dist_init(void);
void gic_cpu_init(struct arm64_cpu *c);
void gic_send_sgi(unsigned pcpu, uint32_t intid);
/* The distributor's GICD_ISPENDRn a write of BIT(spi % 32) to sets SPI `spi` pending. */
uintptr_t gic_spi_pend_register(uint32_t spi);
void gic_set_eoimode(bool split);
uint64_t gic_read_lr(unsigned n);
void gic_write_lr(unsigned n, uint64_t value);

/* The physical redistributor of core `pcpu`, 0 until that core has started. */
static inline uintptr_t gic_redistributor(unsigned pcpu)
{
	return pcpu < MAX_CPUS ? cpus[pcpu].gicr : 0;
}

static inline void gic_ppi_enable(uintptr_t gicr, uint32_t intid, bool on)
{
	mmio_write32(gicr + GICR_SGI_BASE + (on ? GICD_ISENABLER : GICD_ICENABLER), (uint32_t)BIT(intid));
}

static inline void gic_ppi_clear(uintptr_t gicr, uint32_t intid)
{
	mmio_write32(gicr + GICR_SGI_BASE + GICD_ICPENDR, (uint32_t)BIT(intid));
}

#endif /* __ASSEMBLER__ */

#endif
