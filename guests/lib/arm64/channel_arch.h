/* arm64's part of the channel library (channel.c): barriers and the doorbell's interrupt. */
#ifndef GUEST_ARM64_CHANNEL_ARCH_H
#define GUEST_ARM64_CHANNEL_ARCH_H

#include "arm64.h"
#include "fdt.h"

#define GIC_FDT_SPI     0
#define GIC_FDT_PPI     1

/*
 * Orders the queue's slot and index accesses between the two members' cores, whichever
 * memory type they are (Device with the MMU off, Normal with it on): both are in the inner
 * shareable domain.
 */
static inline void channel_barrier(void)
{
	__asm__ volatile("dmb ish" : : : "memory");
}

/* The node's `interrupts = <type number flags>` (GIC binding) as an INTID. */
static inline bool channel_node_irq(int node, uint32_t *irq)
{
	uint32_t len;
	const uint8_t *spec = fdt_node_prop(node, "interrupts", &len);

	if (!spec || len < 12)
		return false;
	switch (fdt_be32(spec)) {
	case GIC_FDT_SPI:
		*irq = 32 + fdt_be32(spec + 4);
		return true;
	case GIC_FDT_PPI:
		*irq = 16 + fdt_be32(spec + 4);
		return true;
	default:
		return false;
	}
}

#endif
