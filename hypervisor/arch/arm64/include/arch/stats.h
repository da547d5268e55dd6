/* SPDX-License-Identifier: MIT */
/* arm64's own per-vCPU counters (tern/stats.h): trap causes and the vGIC's refusals. */
#ifndef ARCH_STATS_H
#define ARCH_STATS_H

#define ARCH_STAT_IDS \
	STAT_EXIT_WFE, \
	STAT_EXIT_HVC, \
	STAT_EXIT_SMC, \
	STAT_EXIT_SYSREG, \
	STAT_IRQ_QUEUED,      /* injections that waited for a free list register */ \
	STAT_SGI_SENT, \
	STAT_GIC_IGNORED,     /* GICD/GICR writes to interrupts the partition does not own */ \
	STAT_GIC_CLAMPED,     /* direct mode: priorities raised to the highest a guest may use */ \
	STAT_SGI_DENIED,      /* SGIs aimed outside the partition */ \
	STAT_UNDEF_INJECTED, \
	STAT_PSCI_DENIED,     /* PSCI calls naming vCPUs the partition does not have */ \
	STAT_ABORT_INJECTED,  /* emulated registers accessed misaligned or with a wrong size */ \
	STAT_SETWAY,          /* set/way cache maintenance, done by address on its own RAM */ \
	STAT_FAST_DOORBELL,   /* doorbell rings the vector took (also in doorbell_ring, exit_mmio) */

#define ARCH_STAT_NAMES \
	"exit_wfe", "exit_hvc", "exit_smc", "exit_sysreg", "irq_queued", "sgi_sent", \
	"gic_ignored", "gic_clamped", "sgi_denied", "undef_injected", "psci_denied", \
	"abort_injected", "setway_ops", "fast_doorbell",

#endif
