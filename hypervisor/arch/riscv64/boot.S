/* SPDX-License-Identifier: MIT */
/*
 * Entry from OpenSBI (fw_dynamic / fw_jump) in HS-mode, as an S-mode kernel is entered:
 * a0 = hart id, a1 = the board's device tree, which tern_main reads the RAM size from.
 */
#include <arch/cpu.h>
#include <arch/sysreg.h>

#define AWAIT_START_TICKS 1000	/* 100 us at QEMU virt's 10 MHz: a check costs a few instructions */

	.section .text.head, "ax"
	.global _start
_start:
	rdcycle	s2			/* boot timestamps, before anything else: cycle */
	rdtime	s1			/* (instructions at icount shift 0) and time */
	csrw	sie, zero
	csrw	sstatus, zero
	mv	s0, a0
	mv	s3, a1
	li	t0, MAX_CPUS
	bgeu	s0, t0, park
	/*
	 * One boot core.  Another hart may enter here too (await_start says when): it would run
	 * the whole boot again beside the first.  The loser of the claim waits for its start.
	 */
	la	t0, boot_claimed
	li	t1, 1
	amoswap.w.aq t1, t1, (t0)
	bnez	t1, await_start
	la	t0, __bss_start
	la	t1, __bss_end
	/* Eight stores a step: the clear is most of the instructions boot runs. */
1:	bgeu	t0, t1, 2f
	sd	zero, 0(t0)
	sd	zero, 8(t0)
	sd	zero, 16(t0)
	sd	zero, 24(t0)
	sd	zero, 32(t0)
	sd	zero, 40(t0)
	sd	zero, 48(t0)
	sd	zero, 56(t0)
	addi	t0, t0, 64
	j	1b
2:	la	t0, riscv_entry_cycle
	sd	s2, 0(t0)
	mv	a0, s0
	call	set_stack
	mv	a0, s0
	mv	a1, s1
	mv	a2, s3
	tail	riscv_boot_primary

/*
 * A hart that lost the boot claim waits here, in the hypervisor, for the boot core's word
 * (riscv_cpu_released[hart], set before its HSM hart_start), then enters as a started core:
 * secondary_entry, a0 = hart id.  OpenSBI 1.1 sends a started hart here now and then: its
 * hart_start marks the hart START_PENDING before it stores the entry address, and a hart
 * already awake in the firmware's wait (an earlier IPI left pending keeps its WFI from
 * sleeping) leaves with the previous entry, this one.  Given back to the firmware, as before,
 * such a hart waited there for a second start that never came: its partition never ran.
 * The wait is a WFI on the core's own timer (Sstc), a pause QEMU can give the other harts.
 */
await_start:
	la	t0, riscv_cpu_released
	add	t0, t0, s0
	li	t1, 0x20		/* sie.STIE: the core's timer ends each WFI */
	csrw	sie, t1
1:	lbu	t1, 0(t0)
	fence	r, rw
	bnez	t1, 2f
	rdtime	t2
	li	t3, AWAIT_START_TICKS
	add	t2, t2, t3
	csrw	CSR_STIMECMP, t2
	wfi
	j	1b
2:	li	t2, -1
	csrw	CSR_STIMECMP, t2
	csrw	sie, zero
	mv	a0, s0
	j	secondary_entry

/* The boot core's word to each core that it may enter (arch_cpu_start): in .data, as below. */
	.pushsection .data
	.global riscv_cpu_released
riscv_cpu_released:
	.fill	MAX_CPUS, 1, 0
	.popsection

/* Set by the boot core, in .data: the boot clears .bss, which a second entry must not see cleared. */
	.pushsection .data
	.balign 4
boot_claimed:
	.word	0
	.popsection

/* `cycle` at the first instruction (cpu.c says it at board off: tern-boot-cycle). */
	.pushsection .data
	.balign 8
	.global riscv_entry_cycle
riscv_entry_cycle:
	.dword	0
	.popsection

/* Started by arch_cpu_start() through SBI HSM hart_start: a0 = hart id = core number. */
	.global secondary_entry
secondary_entry:
	csrw	sie, zero
	csrw	sstatus, zero
	/* The boot core's map before anything else: the stack's guard page too. */
	la	t0, riscv_hyp_satp
	ld	t0, 0(t0)
	sfence.vma
	csrw	satp, t0
	sfence.vma
	mv	s0, a0
	call	set_stack
	mv	a0, s0
	tail	riscv_boot_secondary

/*
 * sp = top of core a0's stack, below the guest frame's place; clobbers t0, t1.  Each core's
 * stack has its guard page below it (struct core_stack).
 */
set_stack:
	la	t0, cpu_stacks
	addi	t1, a0, 1
	li	a0, STACK_GUARD + STACK_SIZE
	mul	t1, t1, a0
	add	t0, t0, t1
	addi	sp, t0, -GUEST_FRAME_SIZE
	ret

/* A hart this build has no room for: stay out of the way. */
park:
	wfi
	j	park

/* Abandon the current stack and go idle (the vCPU on this core left its guest). */
	.global arch_cpu_return_to_idle
arch_cpu_return_to_idle:
	ld	t0, CPU_STACK_TOP(tp)
	addi	sp, t0, -GUEST_FRAME_SIZE
	ld	a0, CPU_ID(tp)
	tail	cpu_idle

/*
 * uint64_t riscv_probe_load/store/exec(uintptr_t va): the boot check of HS-mode's map.  The
 * trap, if any, is taken at 1: (stvec pointed there for the try): it returns scause.  The
 * store is an AMO that ORs zero, so memory is unchanged either way.
 */
	.global riscv_probe_load
riscv_probe_load:
	csrr	t2, stvec
	la	t0, 1f
	csrw	stvec, t0
	lw	t0, 0(a0)
	li	a0, 0
	j	2f
	.balign 4
1:	csrr	a0, scause
2:	csrw	stvec, t2
	ret

	.global riscv_probe_store
riscv_probe_store:
	csrr	t2, stvec
	la	t0, 1f
	csrw	stvec, t0
	amoor.w	zero, zero, (a0)
	li	a0, 0
	j	2f
	.balign 4
1:	csrr	a0, scause
2:	csrw	stvec, t2
	ret

	.global riscv_probe_exec
riscv_probe_exec:
	csrr	t2, stvec
	la	t0, 1f
	csrw	stvec, t0
	mv	t3, ra
	jalr	a0			/* a `ret` there comes back here */
	li	a0, 0
	j	2f
	.balign 4
1:	csrr	a0, scause
2:	mv	ra, t3
	csrw	stvec, t2
	ret
