/* SPDX-License-Identifier: MIT */
/*
 * The SBI (the RISC-V Supervisor Binary Interface), both ways (firmware.c): the calls the
 * hypervisor makes into the board's firmware (OpenSBI), and the SBI it gives its guests.
 */
#ifndef ARCH_FIRMWARE_H
#define ARCH_FIRMWARE_H

#include <tern/types.h>

#define SBI_EXT_LEGACY_PUTCHAR 0x01u
#define SBI_EXT_BASE   0x10u
#define SBI_EXT_TIME   0x54494d45u
#define SBI_EXT_IPI    0x735049u
#define SBI_EXT_RFENCE 0x52464e43u
#define SBI_EXT_HSM    0x48534du
#define SBI_EXT_SRST   0x53525354u
#define SBI_EXT_DBCN   0x4442434eu
/*
 * A manager partition's calls (tern/manager.h), in the Firmware Specific Extension Space:
 * 0x0A followed by "TRN".  Function 0 submits a command line (a0 address, a1 length), 1 reads
 * its reply (the same; value: the reply's full length).
 */
#define SBI_EXT_TERN_MANAGER   0x0a54524eu
#define SBI_TERN_SUBMIT        0u
#define SBI_TERN_REPLY         1u

#define SBI_HSM_HART_START      0
#define SBI_HSM_HART_GET_STATUS 2
#define SBI_HSM_STARTED         0  /* hart_get_status's states */
#define SBI_HSM_STOPPED         1
#define SBI_HSM_START_PENDING   2
#define SBI_HSM_SUSPENDED       4
#define SBI_SRST_RESET      0
#define SBI_SRST_SHUTDOWN   0

#define SBI_SUCCESS               0
#define SBI_ERR_FAILED            (-1)
#define SBI_ERR_NOT_SUPPORTED     (-2)
#define SBI_ERR_INVALID_PARAM     (-3)
#define SBI_ERR_DENIED            (-4)
#define SBI_ERR_INVALID_ADDRESS   (-5)
#define SBI_ERR_ALREADY_AVAILABLE (-6)
#define SBI_ERR_ALREADY_STARTED   (-7)
#define SBI_ERR_INVALID_STATE     (-10)

/* A call's result, a0 and a1: two registers, so that every call returns them in two. */
struct sbiret {
	int64_t error;
	uint64_t value;
};

struct vcpu;
struct guest_regs;

/* A call into the SBI firmware (OpenSBI) below the hypervisor. */
struct sbiret sbi_call(uint32_t ext, uint32_t fn, uint64_t a0, uint64_t a1, uint64_t a2);
/*
 * The SBI extensions a guest's ecall reaches (traps.c dispatches): function `fn`, its
 * arguments in `r`; the result for a0 and a1.
 */
struct sbiret sbi_base(uint32_t fn, const struct guest_regs *r);
struct sbiret sbi_time(const struct vcpu *v, uint32_t fn, const struct guest_regs *r);
struct sbiret sbi_ipi(struct vcpu *v, uint32_t fn, const struct guest_regs *r);
struct sbiret sbi_rfence(struct vcpu *v, uint32_t fn, const struct guest_regs *r);
struct sbiret sbi_hsm(struct vcpu *v, uint32_t fn, struct guest_regs *r);
struct sbiret sbi_srst(struct vcpu *v, uint32_t fn, const struct guest_regs *r);
struct sbiret sbi_dbcn(struct vcpu *v, uint32_t fn, const struct guest_regs *r);
/* Any other extension: Tern's own (counted as its calls), else SBI_ERR_NOT_SUPPORTED. */
struct sbiret sbi_other(struct vcpu *v, uint64_t ext, uint32_t fn, const struct guest_regs *r);
/* The legacy console putchar (extension 0x01): answered in a0, sepc past the ecall. */
void sbi_legacy_putchar(struct vcpu *v, struct guest_regs *r);

#endif
