/* SPDX-License-Identifier: MIT */
/* arm64's own per-vCPU counters (tern/stats.h): trap causes and the vGIC's refusals. */
#ifndef ARCH_STATS_H
#define ARCH_STATS_H

#define ARCH_STATS(X) \
	X(STAT_EXIT_WFE,        "exit_wfe") \
	X(STAT_EXIT_HVC,        "exit_hvc") \
	X(STAT_EXIT_SMC,        "exit_smc") \
	X(STAT_EXIT_SYSREG,     "exit_sysreg") \
	X(STAT_IRQ_QUEUED,      "irq_queued")      /* injections that waited for a free list register */ \
	X(STAT_SGI_SENT,        "sgi_sent") \
	X(STAT_GIC_IGNORED,     "gic_ignored")     /* GICD/GICR writes to interrupts the partition does not own */ \
	X(STAT_GIC_CLAMPED,     "gic_clamped")     /* direct mode: priorities raised to the highest a guest may use */ \
	X(STAT_SGI_DENIED,      "sgi_denied")      /* SGIs aimed outside the partition */ \
	X(STAT_UNDEF_INJECTED,  "undef_injected") \
	X(STAT_PSCI_DENIED,     "psci_denied")     /* PSCI calls naming vCPUs the partition does not have */ \
	X(STAT_ABORT_INJECTED,  "abort_injected")  /* emulated registers accessed misaligned or with a wrong size */ \
	X(STAT_SETWAY,          "setway_ops")      /* set/way cache maintenance, done by address on its own RAM */

#endif
