/*
 * GICv3 with affinity routing, group 1 only, EOImode 0. Every MMIO access is 32 bits wide
 * except GICR_TYPER and GICD_IROUTER<n>, which are 64-bit registers read as such.
 */
#ifndef GUEST_GIC_H
#define GUEST_GIC_H

#include "arm64.h"

#define GICD_CTLR               0x0000
#define GICD_IGROUPR            0x0080
#define GICD_ISENABLER          0x0100
#define GICD_ICENABLER          0x0180
#define GICD_IPRIORITYR         0x0400
#define GICD_ICFGR              0x0c00
#define GICD_IROUTER            0x6000

#define GICD_CTLR_ENABLE_GRP1   (1u << 1)
#define GICD_CTLR_ARE           (1u << 4)
#define GICD_CTLR_RWP           (1u << 31)

#define GICR_TYPER              0x0008
#define GICR_WAKER              0x0014
#define GICR_SGI_OFFSET         0x10000
#define GICR_IGROUPR0           (GICR_SGI_OFFSET + 0x0080)
#define GICR_ISENABLER0         (GICR_SGI_OFFSET + 0x0100)
#define GICR_IPRIORITYR         (GICR_SGI_OFFSET + 0x0400)

#define GICR_TYPER_LAST         (1u << 4)
#define GICR_WAKER_SLEEP        (1u << 1)
#define GICR_WAKER_ASLEEP       (1u << 2)

#define GIC_DEFAULT_PRIORITY    0xa0
#define GIC_SPURIOUS            1023

/* Once, on the boot CPU: affinity routing and group 1 on. */
void gic_init_distributor(void);

/* On each CPU: find and wake its redistributor, group 1 + priority for SGIs/PPIs, CPU interface. */
bool gic_init_cpu(void);

/* The calling CPU's redistributor (RD_base), or 0 before gic_init_cpu. */
uintptr_t gic_redistributor(void);

/* Enable an SGI or PPI (INTID < 32) in the calling CPU's redistributor. */
void gic_enable_private(unsigned intid);

/* Set the priority of an SGI or PPI in the calling CPU's redistributor. */
void gic_set_priority_private(unsigned intid, uint8_t priority);

/*
 * SPIs (32 <= intid < 1020) in the distributor; other INTIDs are ignored. Configure group,
 * priority, trigger and route before enabling: changing the trigger of an enabled
 * interrupt is UNPREDICTABLE.
 */
void gic_spi_set_group1(unsigned intid);
void gic_spi_set_priority(unsigned intid, uint8_t priority);
void gic_spi_set_trigger(unsigned intid, bool edge);    /* false: level-sensitive */
/* GICD_IROUTER<n> = the calling CPU's affinity, IRM 0. */
void gic_spi_route_to_self(unsigned intid);
void gic_spi_enable(unsigned intid);
/* ICENABLER, then GICD_CTLR.RWP until the disable has taken effect (false on timeout). */
bool gic_spi_disable(unsigned intid);

/* ICC_SGI1R_EL1 fields (IRM, RS, Aff2 and Aff3 are not used here). */
#define SGI1R_INTID(intid)      ((uint64_t)((intid) & 0xf) << 24)
#define SGI1R_AFF1(aff1)        ((uint64_t)((aff1) & 0xff) << 16)
#define SGI1R_TARGET(aff0)      ((uint64_t)1 << ((aff0) & 0xf))

/* Write ICC_SGI1R_EL1 as given: for targets outside this system. */
void gic_send_sgi1r(uint64_t sgi1r);

/* SGI to CPU `cpu` (Aff0; Aff1-3 = 0) of this system. */
void gic_send_sgi(unsigned intid, unsigned cpu);

static inline uint32_t gic_ack(void)
{
	uint32_t intid = (uint32_t)read_sysreg(icc_iar1_el1);
	/* The acknowledge must complete before the handler touches the device. */
	__asm__ volatile("dsb sy" : : : "memory");
	return intid;
}

static inline void gic_eoi(uint32_t intid)
{
	write_sysreg(icc_eoir1_el1, intid);
	isb();
}

#endif
