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
extern unsigned gic_nr_lrs;
extern uint32_t gic_nr_irqs;

void gic_dist_init(void);
void gic_cpu_init(struct arm64_cpu *c);
void gic_send_sgi(unsigned pcpu, uint32_t intid);
void gic_set_eoimode(bool split);
uint64_t gic_read_lr(unsigned n);
void gic_write_lr(unsigned n, uint64_t value);

#ifdef TERN_HOST
/*
 * Host tests (tests/unit/fake): the fake GIC behind these acts on its registers as the
 * hardware would (set/clear pairs) and logs every access.
 */
void mmio_write8(uintptr_t a, uint8_t v);
uint32_t mmio_read32(uintptr_t a);
void mmio_write32(uintptr_t a, uint32_t v);
uint64_t mmio_read64(uintptr_t a);
void mmio_write64(uintptr_t a, uint64_t v);
#else
static inline void mmio_write8(uintptr_t a, uint8_t v)
{
	*(volatile uint8_t *)a = v;
}

static inline uint32_t mmio_read32(uintptr_t a)
{
	return *(volatile uint32_t *)a;
}

static inline void mmio_write32(uintptr_t a, uint32_t v)
{
	*(volatile uint32_t *)a = v;
}

static inline uint64_t mmio_read64(uintptr_t a)
{
	return *(volatile uint64_t *)a;
}

static inline void mmio_write64(uintptr_t a, uint64_t v)
{
	*(volatile uint64_t *)a = v;
}
#endif

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

/* A distributor register access, decoded: which register, and the first INTID it names. */
struct gicd_access {
	uint32_t reg;               /* GICD_* of the register's first instance */
	uint32_t intid;
	uint32_t byte;              /* the access's byte within the interrupt's field */
};

/* vgic.c */
bool vgic_gicd_decode(uint32_t off, struct gicd_access *a);
void vgic_vcpu_reset(struct arm64_cpu *c, struct vcpu *v);
void vgic_quiesce(struct arm64_cpu *c);
void vgic_inject(struct arm64_cpu *c, uint32_t intid);
void vgic_maintenance(struct arm64_cpu *c);
void vgic_kicked(struct arm64_cpu *c);
void vgic_send_sgi(struct vcpu *v, uint64_t sgi1r);
bool vgic_lrs_pending(void);
bool vgic_owned_hw(const struct arm64_cpu *c, uint32_t intid);

#endif /* __ASSEMBLER__ */

#endif
