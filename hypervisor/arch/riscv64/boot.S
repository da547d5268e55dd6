/* SPDX-License-Identifier: MIT */
/*
 * Entry from OpenSBI (fw_dynamic / fw_jump) in HS-mode, as an S-mode kernel is entered:
 * a0 = hart id, a1 = the board's device tree, which tern_main reads the RAM size from.
 */
#include <arch/cpu.h>

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
	 * One boot core.  QEMU 7.2's OpenSBI (1.1) now and then cold-boots two harts, each
	 * entering here: a second would run the whole boot again beside the first, and the
	 * first could not start it later (it is not stopped).  The loser hands itself back to the
	 * firmware stopped (SBI HSM hart_stop), from where the boot core may start it as any other.
	 */
	la	t0, boot_claimed
	li	t1, 1
	amoswap.w.aq t1, t1, (t0)
	bnez	t1, give_back
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

/* A hart that lost the boot: stopped in the firmware (HSM hart_stop does not return). */
give_back:
	li	a7, 0x48534d		/* HSM */
	li	a6, 1			/* hart_stop */
	ecall
	j	park

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
 * bool riscv_fetch_guest_insn(uint64_t gva, uint32_t *insn): the instruction at the guest's
 * virtual address `gva`, read as its fetch translates it (HLVX: VS-stage, then G-stage).  A
 * translation that fails (another vCPU changed the guest's page tables meanwhile) traps to
 * the local handler at 2: instead of the hypervisor's, which returns false.  The trap
 * clobbers sepc, scause, stval, hstatus.SPV and GVA, and sstatus.SPP (now HS), SPIE and SIE:
 * the caller has read the first three, hstatus and sstatus are put back.  A guest's user mode
 * (SPP = 0) would otherwise be resumed, or see its injected exception taken, as its kernel.
 */
	.global riscv_fetch_guest_insn
riscv_fetch_guest_insn:
	csrr	t2, stvec
	csrr	t3, hstatus
	csrr	t6, sstatus
	la	t4, 2f
	csrw	stvec, t4
	.word	0x643542f3		/* hlvx.hu t0, (a0) */
	andi	t4, t0, 3
	li	t5, 3
	bne	t4, t5, 1f		/* a compressed (16-bit) instruction */
	addi	a2, a0, 2
	.word	0x64364373		/* hlvx.hu t1, (a2) */
	slli	t1, t1, 16
	or	t0, t0, t1
1:	sw	t0, 0(a1)
	li	a0, 1
	j	3f
	.balign 4
2:	li	a0, 0
3:	csrw	stvec, t2
	csrw	hstatus, t3
	csrw	sstatus, t6
	ret

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

/*
 * Every trap comes here (stvec).  sscratch holds this core's `struct riscv_cpu` while a guest
 * runs and 0 while the hypervisor does: the swap tells which.
 */
	.balign 4
	.global trap_entry
trap_entry:
	csrrw	tp, sscratch, tp
	beqz	tp, from_hs
	sd	t0, CPU_SCRATCH(tp)
	/*
	 * The fast paths of trap-and-emulate, with two registers saved instead of the frame.
	 * The core's timer, standing in for the guest's SBI timer, fired: disarm it and make the
	 * guest's timer interrupt pending.  The guest's WFI trapped (wfi = "trap"): wait here;
	 * a kick (SEIP) is taken by the slow path, as an interrupt right after the sret.
	 */
	sd	t1, CPU_SCRATCH2(tp)
	csrr	t0, scause
	/*
	 * Interrupts first, on a sign test: the timer's check is at 2: below.  This pays for the
	 * VU-mode check below (the trapped WFI's path is as long as before it), and every other
	 * trap reaches the slow path sooner.
	 */
	bltz	t0, 2f
	li	t1, 22			/* a virtual instruction exception ... */
	bne	t0, t1, 1f
	csrr	t0, stval
	li	t1, 0x10500073		/* ... for a WFI */
	bne	t0, t1, 1f
	csrr	t0, sstatus
	andi	t0, t0, 1 << 8		/* sstatus.SPP: from VS-mode; VU-mode's is illegal */
	beqz	t0, 1f
	csrr	t0, sepc
	addi	t0, t0, 4
	csrw	sepc, t0
	ld	t0, CPU_FAST_WFI(tp)
	addi	t0, t0, 1
	sd	t0, CPU_FAST_WFI(tp)
	wfi
	csrr	t0, sip
	andi	t0, t0, 1 << 5		/* sip.STIP */
	beqz	t0, fast_return
timer_fast:
	li	t0, -1
	csrw	0x14d, t0		/* stimecmp */
	li	t0, 1 << 6		/* hvip.VSTIP */
	csrs	hvip, t0
	ld	t0, CPU_FAST_TIMER(tp)
	addi	t0, t0, 1
	sd	t0, CPU_FAST_TIMER(tp)
fast_return:
	ld	t0, CPU_SCRATCH(tp)
	ld	t1, CPU_SCRATCH2(tp)
	csrrw	tp, sscratch, tp	/* the guest's tp back, sscratch = this core again */
	sret
2:	slli	t0, t0, 1		/* scause's interrupt bit shifted out: 2 x 5, the supervisor timer */
	li	t1, 5 << 1
	beq	t0, t1, timer_fast
1:	ld	t1, CPU_SCRATCH2(tp)
	ld	t0, CPU_STACK_TOP(tp)
	addi	t0, t0, -GUEST_FRAME_SIZE
	.irp n, 1,2,3,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	sd	x\n, (\n * 8)(t0)
	.endr
	ld	t1, CPU_SCRATCH(tp)
	sd	t1, (5 * 8)(t0)		/* the guest's t0 */
	csrrw	t1, sscratch, zero	/* the guest's tp; the hypervisor's traps from now on */
	sd	t1, (4 * 8)(t0)
	csrr	t1, sepc
	sd	t1, GUEST_SEPC(t0)
	mv	sp, t0
	mv	a0, t0
	call	riscv_guest_trap
	mv	a0, sp
	/* fall through */

	.global guest_enter
guest_enter:
	ld	t0, GUEST_SEPC(a0)
	csrw	sepc, t0
	csrw	sscratch, tp
	.irp n, 1,2,3,4,5,6,7,8,9,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	ld	x\n, (\n * 8)(a0)
	.endr
	ld	a0, (10 * 8)(a0)
	sret

/*
 * An exception or interrupt taken in HS-mode: nothing the hypervisor runs expects one (it
 * runs with interrupts off), so it is a bug.  Registers go on the stack for the report.
 */
from_hs:
	csrrw	tp, sscratch, tp	/* back: tp = this core, sscratch = 0 */
	/*
	 * On the core's panic stack: sp itself may be the fault (an overflow into the guard
	 * page), and a push there would fault again and again, each time lower.
	 */
	sd	sp, CPU_SCRATCH(tp)
	ld	sp, CPU_PANIC_TOP(tp)
	addi	sp, sp, -256
	.irp n, 1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	sd	x\n, (\n * 8)(sp)
	.endr
	ld	t0, CPU_SCRATCH(tp)
	sd	t0, (2 * 8)(sp)		/* the sp it had */
	mv	a0, sp
	tail	riscv_hyp_panic
