/* SPDX-License-Identifier: MIT */
/*
 * Traps: the entry every trap takes (stvec), the trap-and-emulate fast paths, the way back
 * into the guest, and a read of the guest's instructions with its own trap caught.
 */
#include <arch/cpu.h>

	.section .text, "ax"

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
