/* SPDX-License-Identifier: MIT */
/*
 * A vCPU's FP registers into and out of its context (vcpu.c, arch_vcpu_save/restore).  The
 * hypervisor is built without F and D (rv64imac: no FP code of its own), so the loads and
 * stores are encoded by hand; the guest's FP is the hart's D extension, which the boards have.
 * The caller turns sstatus.FS on first: with FS Off these trap.
 */
#include <arch/cpu.h>

/* fsd f\reg, \off(a0) and fld f\reg, \off(a0) (the S and I formats of the D extension). */
.macro fsd_a0 reg, off
	.word (((\off) >> 5) << 25) | ((\reg) << 20) | (10 << 15) | (3 << 12) | (((\off) & 31) << 7) | 0x27
.endm
.macro fld_a0 reg, off
	.word ((\off) << 20) | (10 << 15) | (3 << 12) | ((\reg) << 7) | 0x07
.endm

#define CSR_FCSR 0x003

	.section .text, "ax"

/* void riscv_fp_save(struct riscv_fp *fp): f0-f31 at fp->f, fcsr at fp->fcsr. */
	.balign 4
	.global riscv_fp_save
riscv_fp_save:
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	fsd_a0 \i, (\i * 8)
	.endr
	csrr	t0, CSR_FCSR
	sd	t0, RISCV_FP_FCSR(a0)
	ret

/* void riscv_fp_restore(const struct riscv_fp *fp) */
	.balign 4
	.global riscv_fp_restore
riscv_fp_restore:
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	fld_a0 \i, (\i * 8)
	.endr
	ld	t0, RISCV_FP_FCSR(a0)
	csrw	CSR_FCSR, t0
	ret
