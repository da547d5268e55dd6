/* SPDX-License-Identifier: MIT */
#ifndef TERN_STATS_H
#define TERN_STATS_H

#include <arch/stats.h>

/*
 * Per-vCPU counters, summed per partition and printed as `tern-stats {json}`: what every
 * architecture counts, then the architecture's own (ARCH_STATS: its trap causes).
 * X(id, json name).
 */
#define CORE_STATS(X) \
	X(STAT_EXIT_IRQ,      "exit_irq")      /* physical interrupt taken while the guest ran */ \
	X(STAT_EXIT_WFI,      "exit_wfi")      /* the guest's wait for an interrupt, trapped */ \
	X(STAT_EXIT_MMIO,     "exit_mmio")     /* emulated device access (interrupt controller, UART) */ \
	X(STAT_EXIT_OTHER,    "exit_other") \
	X(STAT_IRQ_INJECTED,  "irq_injected")  /* virtual interrupts the hypervisor delivered */ \
	X(STAT_FAULT,         "faults") \
	X(STAT_DMA_FAULT,     "dma_faults")    /* DMA by the partition's devices that the IOMMU refused */

#define STAT_ENUM_ENTRY(id, name) id,
enum stat_id {
	CORE_STATS(STAT_ENUM_ENTRY)
	ARCH_STATS(STAT_ENUM_ENTRY)
	STAT_COUNT
};
#undef STAT_ENUM_ENTRY

extern const char *const stat_names[STAT_COUNT];

#endif
