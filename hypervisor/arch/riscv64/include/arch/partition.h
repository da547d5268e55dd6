/* SPDX-License-Identifier: MIT */
#ifndef ARCH_PARTITION_H
#define ARCH_PARTITION_H

#include <stdatomic.h>
#include <arch/cpu.h>
#include <arch/vaplic.h>
#include <tern/config_abi.h>

/*
 * The arch state core objects embed (struct partition.arch, struct vcpu.arch).  Included by
 * tern/partition.h: nothing here may need struct partition or struct vcpu complete.
 */

/*
 * The guest interrupt file a core gives a trap-less vCPU homed there, mapped where the guest
 * expects its S-level IMSIC file: a null core's one vCPU the hart's first; a shared core's
 * trap-less vCPUs one each, 1..N in partition then vCPU order (riscv_vcpu_file), so that
 * their interrupts wait in their own file while another runs.
 */
#define VCPU_GUEST_FILE 1u
#define IMSIC_FILE_SIZE 0x1000u

/* A partition's address space (its G-stage (Sv39x4) root and the hgatp that selects it), its APLIC. */
struct arch_partition {
	uint64_t *gstage_root;
	uint64_t hgatp;
	struct vaplic vaplic;
};

/*
 * The VS-level CSRs a vCPU's entry resets (arch_vcpu_run) and a vCPU switch carries
 * (struct arch_vcpu_context): one list, so that a register reset at entry cannot be left out
 * of the switch.  X(name) with the name as csr_read() takes it.
 */
/* cppcheck-suppress misra-c2012-20.7 ; X is the macro each name is given to, not an expression */
#define RISCV_VCPU_VS_CSRS(X) \
	X(vsstatus) X(vsie) X(vstvec) X(vsscratch) X(vsepc) X(vscause) X(vstval) X(vsatp)

/*
 * What a vCPU switch saves of a vCPU that leaves its core, and restores before it enters
 * again (arch_vcpu_save, arch_vcpu_restore in vcpu.c; docs/design.md, "Per-vCPU state
 * (riscv64)").  The guest interrupt file is not here: each trap-less vCPU of a shared core
 * has a file of its own, which hstatus.VGEIN selects.
 */
struct arch_vcpu_context {
	struct guest_regs frame; /* x1-x31 and sepc, as the trap entry left them on the stack */
/* cppcheck-suppress misra-c2012-20.7 ; a member named after its CSR: a name, not an expression */
#define RISCV_CTX_FIELD(csr) uint64_t csr;
	RISCV_VCPU_VS_CSRS(RISCV_CTX_FIELD)
	uint64_t vsiselect; /* the guest's siselect: a switch may fall between it and its sireg access */
	uint64_t hvip;
	uint64_t hie;
	uint64_t hstatus; /* SPVP (the mode it trapped from), VTW, VGEIN (its own guest file) */
	uint64_t henvcfg; /* STCE: its stimecmp is vstimecmp (trap-less) */
	uint64_t vstimecmp; /* a trap-less vCPU's own timer */
	uint64_t stimecmp;  /* a trap-and-emulate vCPU's SBI timer; a trap-less one's QEMU nudge */
	uint64_t hgatp;
	struct riscv_fp fp; /* the guest may use FP: vcpu.c leaves sstatus.FS on for it */
};

/*
 * What is the vCPU's, wherever it runs.  What it has in the hardware while it runs on its
 * core (its VS-level CSRs, the guest interrupt file, its timer) is there, in ctx only while
 * it is switched out; the fast paths' counts stay with the core (struct riscv_cpu;
 * docs/design.md, "Per-vCPU state").
 */
struct arch_vcpu {
	struct vaplic_idc idc;   /* its interrupt delivery control (direct delivery mode) */
	_Atomic uint32_t posted; /* POSTED_* (arch/cpu.h): what its siblings ask of it, with a kick */
	_Atomic bool suspended;  /* it waits in SBI HSM hart_suspend (read by its siblings) */
};

struct vcpu;
/*
 * vCPU v's saved context (vcpu.c: one per vCPU of every partition, not cleared at boot),
 * beside struct vcpu rather than in it, as on arm64: embedded, it moved struct partition's
 * later fields past the loads' immediate offsets and lengthened slow paths (tern_main,
 * cpu_idle, the virtual APLIC's, mmio_add: 2 to 34 bytes each).
 */
struct arch_vcpu_context *riscv_vcpu_context(const struct vcpu *v);

struct partition;
/* vCPU i's guest interrupt file on its core (trap-less partitions; stage2.c gives them at boot). */
uint32_t riscv_vcpu_file(const struct partition *p, uint32_t i);
/* Where vCPU i's interrupt file is on the board: that guest file of its core. */
paddr_t riscv_vcpu_file_hpa(const struct partition *p, uint32_t i);

#endif
