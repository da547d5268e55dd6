/* SPDX-License-Identifier: MIT */
/* riscv64's own per-vCPU counters (tern/stats.h): the guest's SBI calls by extension, traps. */
#ifndef ARCH_STATS_H
#define ARCH_STATS_H

#define ARCH_STATS(X) \
	X(STAT_SBI_BASE,            "sbi_base") \
	X(STAT_SBI_TIME,            "sbi_time") \
	X(STAT_SBI_IPI,             "sbi_ipi") \
	X(STAT_SBI_RFENCE,          "sbi_rfence") \
	X(STAT_SBI_HSM,             "sbi_hsm") \
	X(STAT_SBI_SRST,            "sbi_srst") \
	X(STAT_SBI_DBCN,            "sbi_dbcn")         /* and the legacy console_putchar */ \
	X(STAT_SBI_OTHER,           "sbi_unsupported")  /* answered SBI_ERR_NOT_SUPPORTED */ \
	X(STAT_EXIT_VIRTUAL_INSN,   "exit_virtual_insn") /* other than WFI: an illegal instruction for the guest */ \
	X(STAT_EXIT_GUEST_EXT,      "exit_guest_ext")   /* a guest interrupt file's interrupt, the vCPU not taking it */ \
	X(STAT_EXCEPTION_INJECTED,  "exception_injected") /* emulated registers accessed misaligned or with a wrong width */

#endif
