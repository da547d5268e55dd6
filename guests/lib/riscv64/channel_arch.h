/* riscv64's part of the channel library (channel.c): barriers and the doorbell's interrupt. */
#ifndef GUEST_RISCV_CHANNEL_ARCH_H
#define GUEST_RISCV_CHANNEL_ARCH_H

#include "fdt.h"
#include "riscv.h"

/* Orders the queue's slot and index accesses between the two members' harts. */
static inline void channel_barrier(void)
{
	__asm__ volatile("fence rw, rw" : : : "memory");
}

/*
 * The node's APLIC source: `interrupts-extended = <&aplic source flags>` (the APLIC has two
 * interrupt cells), or `interrupts = <source flags>` under an APLIC interrupt-parent.
 */
static inline bool channel_node_irq(int node, uint32_t *irq)
{
	uint32_t len;
	const uint8_t *spec = fdt_node_prop(node, "interrupts-extended", &len);

	if (spec && len >= 12) {
		*irq = fdt_be32(spec + 4);
		return true;
	}
	spec = fdt_node_prop(node, "interrupts", &len);
	if (spec && len >= 4) {
		*irq = fdt_be32(spec);
		return true;
	}
	return false;
}

#endif
