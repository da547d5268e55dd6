/* SPDX-License-Identifier: MIT */
/* riscv64's own per-vCPU counters (tern/stats.h): the guest's SBI calls by extension, traps. */
#ifndef ARCH_STATS_H
#define ARCH_STATS_H

#define ARCH_STAT_IDS \
	STAT_SBI_BASE, \
	STAT_SBI_TIME, \
	STAT_SBI_IPI, \
	STAT_SBI_RFENCE, \
	STAT_SBI_HSM, \
	STAT_SBI_SRST, \
	STAT_SBI_DBCN,            /* and the legacy console_putchar */ \
	STAT_SBI_OTHER,           /* answered SBI_ERR_NOT_SUPPORTED */ \
	STAT_EXIT_VIRTUAL_INSN,   /* other than WFI: an illegal instruction for the guest */ \
	STAT_EXCEPTION_INJECTED,  /* emulated registers accessed misaligned or with a wrong width */ \
	STAT_APLIC_IGNORED,       /* its APLIC's registers of sources it does not own */ \
	STAT_FAST_DOORBELL,       /* doorbell rings the vector took (also in doorbell_ring, exit_mmio) */

#define ARCH_STAT_NAMES \
	"sbi_base", "sbi_time", "sbi_ipi", "sbi_rfence", "sbi_hsm", "sbi_srst", "sbi_dbcn", \
	"sbi_unsupported", "exit_virtual_insn", "exception_injected", \
	"aplic_ignored", "fast_doorbell",

#endif
