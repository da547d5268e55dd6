/* SPDX-License-Identifier: MIT */
#ifndef TERN_STATS_H
#define TERN_STATS_H

/* Per-vCPU counters, summed per partition and printed as `tern-stats {json}`. */
enum stat_id {
	STAT_EXIT_IRQ,        /* physical interrupt taken while the guest ran */
	STAT_EXIT_WFI,
	STAT_EXIT_WFE,
	STAT_EXIT_HVC,
	STAT_EXIT_SMC,
	STAT_EXIT_SYSREG,
	STAT_EXIT_MMIO,       /* emulated device access (GIC, UART) */
	STAT_EXIT_OTHER,
	STAT_IRQ_INJECTED,    /* virtual interrupts placed in list registers */
	STAT_IRQ_QUEUED,      /* ... that had to wait for a free list register */
	STAT_SGI_SENT,
	STAT_GIC_IGNORED,     /* GICD/GICR writes to interrupts the partition does not own */
	STAT_GIC_CLAMPED,     /* direct mode: priorities raised to the highest a guest may use */
	STAT_SGI_DENIED,      /* SGIs aimed outside the partition */
	STAT_UNDEF_INJECTED,
	STAT_PSCI_DENIED,     /* PSCI calls naming vCPUs the partition does not have */
	STAT_FAULT,
	STAT_DMA_FAULT,       /* DMA by the partition's devices that the IOMMU refused */
	STAT_ABORT_INJECTED,  /* emulated registers accessed misaligned or with a wrong size */
	STAT_SETWAY,          /* set/way cache maintenance, done by address on its own RAM */
	STAT_COUNT
};

extern const char *const stat_names[STAT_COUNT];

#endif
