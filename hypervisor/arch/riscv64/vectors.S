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
	/*
	 * A virtual instruction exception (22, the core's value: on a shared core FAST_NEVER,
	 * which no scause equals, so that its WFI goes to C, which may switch vCPUs) ...
	 */
	lw	t1, CPU_FAST_VIRTUAL_INSN(tp)
	bne	t0, t1, 3f
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
	lw	t1, CPU_FAST_TIMER_IRQ(tp)	/* 5 << 1; on a shared core FAST_NEVER: C tells its two deadlines apart */
	beq	t0, t1, timer_fast
1:
trap_slow:
	ld	t1, CPU_SCRATCH2(tp)
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
 * The doorbell fast path: a 32-bit store of k to RING (offset 0) of the vCPU's fast doorbell
 * page, a channel's (channel_fast_doorbell), sets member k's doorbell pending on the APLIC here,
 * as arch_irq_raise does, with t0 and t1 saved instead of the frame: the page, the trap and
 * the instruction checked, one table load, one store, return.  QEMU 7.2 leaves htinst 0, so
 * the store is read from the guest (HLVX) with this core's traps aimed at doorbell_fetch_fault
 * meanwhile.  Anything else - another page or offset, a transformed or pseudo instruction in
 * htinst, an instruction other than SW or C.SW, k beyond the members, a member whose driver
 * enabled its PCI function (its gate: then the ring is the function's IntrStatus) - goes to
 * trap_slow with nothing changed, to be done by C as if the vector had not looked.
 */
#define CSR_HSTATUS	0x600
#define CSR_HTVAL	0x643
#define CSR_HTINST	0x64a
#define EXC_STORE_GUEST_PAGE_FAULT 23
#define HSTATUS_GVA	(1 << 6)
#define HSTATUS_SPV	(1 << 7)
#define HSTATUS_SPVP	(1 << 8)
#define SSTATUS_SPP	(1 << 8)

/* HLVX.HU and HLVX.WU rd, (rs1) (the H extension, which the build's -march leaves out). */
.macro hlvx_hu rd, rs1
	.word	(0x32 << 25) | (3 << 20) | (\rs1 << 15) | (4 << 12) | (\rd << 7) | 0x73
.endm
.macro hlvx_wu rd, rs1
	.word	(0x34 << 25) | (3 << 20) | (\rs1 << 15) | (4 << 12) | (\rd << 7) | 0x73
.endm

	/*
	 * t0 = scause, t1 = 22, from the entry's test for a WFI: an exception above 22 is a store
	 * guest-page fault, the doorbell's trap, since every other trap leaves htval 0, which the
	 * first check below refuses.  Here, out of the entry's line, so that no interrupt pays
	 * for it; every other exception pays this one branch.  On a shared core t1 is FAST_NEVER,
	 * above every scause unsigned: all of them go to C (its partitions have no channels).
	 */
3:	bgeu	t1, t0, trap_slow
doorbell:
	csrr	t0, CSR_HTVAL
	ld	t1, CPU_DOORBELL_HTVAL(tp)
	bne	t0, t1, trap_slow
	csrr	t0, CSR_HTINST
	bnez	t0, trap_slow
	csrr	t0, stval
	sd	t0, CPU_SCRATCH3(tp)	/* for doorbell_fetch_fault */
	andi	t0, t0, 3		/* htval's GPA lacks these: a misaligned store is C's */
	bnez	t0, trap_slow
	csrr	t0, sepc
	ld	t1, CPU_FETCH_VEC(tp)
	csrw	stvec, t1
	andi	t1, t0, 2
	bnez	t1, doorbell_halves
	hlvx_wu	6, 5			/* t1 = the 32 bits at t0 (aligned: one page) */
doorbell_fetched:
	ld	t0, CPU_TRAP_VEC(tp)
	csrw	stvec, t0
	/* SW: opcode 0x23, funct3 2; rs2 picks the table entry. */
	andi	t0, t1, 0x7f
	addi	t0, t0, -0x23
	bnez	t0, doorbell_c
	srli	t0, t1, 12
	andi	t0, t0, 7
	addi	t0, t0, -2
	bnez	t0, trap_slow
	srli	t0, t1, 20 - 3
	andi	t0, t0, 31 << 3
	.option	push
	.option	norvc			/* 8 bytes a table entry, the jump's offset fixed */
	auipc	t1, 0
	add	t1, t1, t0
	jr	12(t1)
	/*
	 * t0 = the stored register << 32 (a 32-bit store: its low half): x0 zero, x4 (tp) in
	 * sscratch, x5 and x6 (t0, t1) in the scratch slots, the rest live.
	 */
	li	t0, 0
	j	doorbell_sw_k
	.irp	n, 1, 2, 3
	slli	t0, x\n, 32
	j	doorbell_sw_k
	.endr
	csrr	t0, sscratch
	j	doorbell_sw_reg
	ld	t0, CPU_SCRATCH(tp)
	j	doorbell_sw_reg
	ld	t0, CPU_SCRATCH2(tp)
	j	doorbell_sw_reg
	.irp	n, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	slli	t0, x\n, 32
	j	doorbell_sw_k
	.endr
	.option	pop

/* C.SW (quadrant 0, funct3 6): rs2' is x8 + bits 4:2.  The upper half is the next instruction. */
doorbell_c:
	andi	t0, t1, 3
	bnez	t0, trap_slow
	slli	t0, t1, 48
	srli	t0, t0, 61
	addi	t0, t0, -6
	bnez	t0, trap_slow
	andi	t0, t1, 7 << 2
	slli	t0, t0, 1
	.option	push
	.option	norvc
	auipc	t1, 0
	add	t1, t1, t0
	jr	12(t1)
	.irp	n, 8, 9, 10, 11, 12, 13, 14, 15
	slli	t0, x\n, 32
	j	doorbell_c_k
	.endr
	.option	pop

/* A 2-byte aligned instruction: its halves one at a time (a 32-bit one may span two pages). */
doorbell_halves:
	addi	t1, t0, 2
	hlvx_hu	6, 6
	slli	t1, t1, 16
	hlvx_hu	5, 5			/* t0 = the store's pc until this read is through */
	or	t1, t1, t0
	j	doorbell_fetched

/*
 * t0 = k << 32: ring member k if its gate is open (a closed one for a k that is no member),
 * the instruction `len` bytes long.
 */
.macro ring len
	srli	t1, t0, 32 + 3
	bnez	t1, trap_slow		/* k >= DOORBELL_MEMBERS */
	srli	t0, t0, 32 - 3
	add	t0, t0, tp
	ld	t1, CPU_DOORBELL_GATE(t0)
	lw	t1, 0(t1)
	andi	t1, t1, 1 << DOORBELL_GATE_BIT
	bnez	t1, trap_slow
	ld	t1, CPU_DOORBELL_IRQ(t0)
	ld	t0, CPU_DOORBELL_SETIPNUM(tp)
	fence	rw, rw			/* the message before its doorbell, as arch_irq_raise */
	sw	t1, 0(t0)
	csrr	t0, sepc
	addi	t0, t0, \len
	csrw	sepc, t0
	ld	t0, CPU_FAST_DOORBELL(tp)
	addi	t0, t0, 1
	sd	t0, CPU_FAST_DOORBELL(tp)
	ld	t0, CPU_SCRATCH(tp)
	ld	t1, CPU_SCRATCH2(tp)
	csrrw	tp, sscratch, tp
	sret
.endm

doorbell_sw_reg:
	slli	t0, t0, 32
doorbell_sw_k:
	ring	4
doorbell_c_k:
	ring	2

/*
 * The guest's instruction could not be read (another vCPU changed its page tables meanwhile):
 * t0 = its pc.  The trap put HS-mode's own in sepc, scause, stval, htval, htinst, hstatus.SPV
 * and GVA, and sstatus.SPP (SPIE and SIE stay 0: the hypervisor runs with interrupts off);
 * they are put back as the store's trap left them (htinst was 0, SPP is the guest's mode,
 * which hstatus.SPVP still holds), and C takes the store as it would have.
 */
	.balign 4
	.global doorbell_fetch_fault
doorbell_fetch_fault:
	ld	t1, CPU_TRAP_VEC(tp)
	csrw	stvec, t1
	csrw	sepc, t0
	li	t0, EXC_STORE_GUEST_PAGE_FAULT
	csrw	scause, t0
	ld	t0, CPU_SCRATCH3(tp)
	csrw	stval, t0
	ld	t0, CPU_DOORBELL_HTVAL(tp)
	csrw	CSR_HTVAL, t0
	csrw	CSR_HTINST, zero
	li	t0, HSTATUS_SPV | HSTATUS_GVA
	csrs	CSR_HSTATUS, t0
	csrr	t0, CSR_HSTATUS
	andi	t0, t0, HSTATUS_SPVP
	li	t1, SSTATUS_SPP
	csrc	sstatus, t1
	csrs	sstatus, t0
	j	trap_slow

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
