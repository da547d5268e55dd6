/*
 * doorbell-regs (hostile.c): rings through every register the hypervisor's doorbell path
 * reads the stored value from (vectors.S, its tables by register number).
 *
 * void ring_through_registers(uintptr_t ring, unsigned long rounds)
 *
 * `ring` is a doorbell page's RING. Each round stores RING_K, member 1, with SW from every
 * register x1-x31 (x0: SW of zero, member 0), with the SWs at 4-byte and then at 2-byte
 * aligned addresses, and with C.SW from every register it has (x8-x15) at both alignments:
 * 80 rings. Every other register holds a member index the channel does not have
 * (JUNK + its number) meanwhile, so a table entry that reads the wrong register rings
 * nobody: the hypervisor counts it as refused. Interrupts are off throughout (sp is stored
 * too).
 */
#define RING_K  1
#define JUNK    0x100

/* SW of RING_K from x\n to RING (in a0, t6 and s0); x\n back to its junk after. */
.macro sw_from n
	.if \n == 0
	sw	zero, 0(a0)
	.elseif \n == 2
	mv	t5, sp
	li	sp, RING_K
	sw	sp, 0(a0)
	mv	sp, t5
	li	t5, JUNK + 30
	.elseif \n == 10
	mv	a1, a0
	li	a0, RING_K
	sw	a0, 0(a1)
	mv	a0, a1
	li	a1, JUNK + 11
	.elseif \n == 8 || \n == 31
	li	x\n, RING_K
	sw	x\n, 0(a0)
	mv	x\n, a0
	.else
	li	x\n, RING_K
	sw	x\n, 0(a0)
	li	x\n, JUNK + \n
	.endif
.endm

/* The same with C.SW (x8-x15 only), RING in s0 (s1 for s0 itself). */
.macro csw_from n
	.if \n == 8
	mv	s1, s0
	li	s0, RING_K
	.option	rvc
	c.sw	s0, 0(s1)
	.option	norvc
	mv	s0, s1
	li	s1, JUNK + 9
	.elseif \n == 10
	li	a0, RING_K
	.option	rvc
	c.sw	a0, 0(s0)
	.option	norvc
	mv	a0, s0
	.else
	li	x\n, RING_K
	.option	rvc
	c.sw	x\n, 0(s0)
	.option	norvc
	li	x\n, JUNK + \n
	.endif
.endm

.macro sw_all
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	sw_from	\n
	.endr
.endm

.macro csw_all
	.irp	n, 8, 9, 10, 11, 12, 13, 14, 15
	csw_from \n
	.endr
.endm

/* A 2-byte instruction: what follows is 2 bytes off the alignment it had. */
.macro realign
	.option	rvc
	c.nop
	.option	norvc
.endm

	.text
	.balign 4
	.global ring_through_registers
ring_through_registers:
	addi	sp, sp, -144
	sd	ra, 0(sp)
	sd	gp, 8(sp)
	sd	tp, 16(sp)
	sd	s0, 40(sp)
	sd	s1, 48(sp)
	.irp	n, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27
	sd	x\n, ((\n - 18) * 8 + 56)(sp)
	.endr
	csrrci	t0, sstatus, 2
	sd	t0, 24(sp)
	sd	a1, 32(sp)
	mv	t6, a0
	.option	push
	.option	norvc
1:	mv	a0, t6
	.irp	m, 1, 3, 4, 5, 6, 7, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30
	li	x\m, JUNK + \m
	.endr
	mv	s0, a0
	sw_all
	realign
	sw_all
	csw_all
	realign
	csw_all				/* 8 C.SWs: aligned again */
	ld	t0, 32(sp)
	addi	t0, t0, -1
	sd	t0, 32(sp)
	bnez	t0, 1b
	.option	pop
	ld	t0, 24(sp)
	csrw	sstatus, t0
	.irp	n, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27
	ld	x\n, ((\n - 18) * 8 + 56)(sp)
	.endr
	ld	s1, 48(sp)
	ld	s0, 40(sp)
	ld	tp, 16(sp)
	ld	gp, 8(sp)
	ld	ra, 0(sp)
	addi	sp, sp, 144
	ret
