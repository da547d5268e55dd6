/*
 * Entry for the boot hart (after a RISC-V Image header) and for harts started with SBI HSM
 * hart_start, per-hart stacks and the trap vector. The firmware (or Tern) enters in S-mode
 * with a0 = hart id, a1 = the device tree (boot hart) or the opaque value (hart_start),
 * translation off and interrupts disabled.
 */
#include "board.h"
#include "trap.h"

#define CSR_SIE         0x104
#define CSR_STVEC       0x105
#define CSR_CYCLE       0xc00
#define CSR_TIME        0xc01

	.section .text.head, "ax"
	.option push
	.option norvc           /* code0 must be one 4-byte jump */
	.globl _head
_head:
	/*
	 * The RISC-V Linux Image header (Documentation/riscv/boot-image-header.rst), so that a
	 * loader that knows the format (tern, a boot loader) can tell where the image goes:
	 * RAM + text_offset, 0x8020_0000 on the board, where QEMU's -kernel puts a raw file.
	 */
	j	primary_entry           /* code0 */
	.word	0                       /* code1 */
	.dword	0x200000                /* text_offset: 2 MiB, after the firmware */
	.dword	_image_size             /* image_size, bss included */
	.dword	0                       /* flags: little-endian */
	.word	2                       /* version 0.2 */
	.word	0                       /* res1 */
	.dword	0                       /* res2 */
	.ascii	"RISCV\0\0\0"           /* magic (deprecated) */
	.ascii	"RSC\x05"               /* magic2 */
	.word	0                       /* res3: no PE header */
	.option pop

	.text
primary_entry:
	csrr	s3, CSR_CYCLE           /* when this image started, for boot-time measurements: */
	csrr	s2, CSR_TIME            /* cycle (instructions at icount shift 0) and time */
	mv	s0, a0                  /* hart id */
	mv	s1, a1                  /* device tree */
	csrw	CSR_SIE, zero

	/* The image is not position independent: refuse to run anywhere else. */
	lla	t0, _head
	ld	t1, head_link_address
	bne	t0, t1, park

	mv	tp, s0
	call	cpu_setup

	lla	t0, __bss_start
	lla	t1, __bss_end
1:	bgeu	t0, t1, 2f
	sd	zero, 0(t0)
	sd	zero, 8(t0)
	addi	t0, t0, 16
	j	1b
2:
	mv	a0, s1
	mv	a1, s0
	mv	a2, s2
	mv	a3, s3
	call	lib_primary_entry
	j	park

/* SBI HSM hart_start target: a0 = hart id, a1 = opaque. */
	.globl secondary_entry
secondary_entry:
	csrw	CSR_SIE, zero
	mv	tp, a0
	mv	s1, a1
	call	cpu_setup
	mv	a0, s1
	call	lib_secondary_entry
	j	park

/*
 * The library's trap vector and sp at the top of this hart's stack; a hart whose id has no
 * stack parks. Leaf: only t0 and sp change.
 */
cpu_setup:
	li	t0, MAX_CPUS
	bgeu	tp, t0, park
	lla	t0, lib_trap_vector
	csrw	CSR_STVEC, t0
	lla	sp, stacks_end
	slli	t0, tp, STACK_SHIFT
	sub	sp, sp, t0
	ret

	.globl park
park:
	csrw	CSR_SIE, zero
1:	wfi
	j	1b

	.balign 8
head_link_address:
	.dword	_head

/*
 * Direct mode (every trap here): save a full frame and call trap_dispatch(frame). The lat
 * guest's own vector jumps here for what it does not handle, with every register as it came.
 */
	.balign 4
	.globl lib_trap_vector
lib_trap_vector:
	addi	sp, sp, -FRAME_SIZE
	sd	x1, 8(sp)
	sd	x3, 24(sp)
	sd	x4, 32(sp)
	sd	x5, 40(sp)
	sd	x6, 48(sp)
	sd	x7, 56(sp)
	sd	x8, 64(sp)
	sd	x9, 72(sp)
	sd	x10, 80(sp)
	sd	x11, 88(sp)
	sd	x12, 96(sp)
	sd	x13, 104(sp)
	sd	x14, 112(sp)
	sd	x15, 120(sp)
	sd	x16, 128(sp)
	sd	x17, 136(sp)
	sd	x18, 144(sp)
	sd	x19, 152(sp)
	sd	x20, 160(sp)
	sd	x21, 168(sp)
	sd	x22, 176(sp)
	sd	x23, 184(sp)
	sd	x24, 192(sp)
	sd	x25, 200(sp)
	sd	x26, 208(sp)
	sd	x27, 216(sp)
	sd	x28, 224(sp)
	sd	x29, 232(sp)
	sd	x30, 240(sp)
	sd	x31, 248(sp)
	addi	t0, sp, FRAME_SIZE
	sd	t0, 16(sp)              /* sp as it was */
	csrr	t0, sepc
	sd	t0, FRAME_SEPC(sp)
	csrr	t0, sstatus
	sd	t0, FRAME_SSTATUS(sp)
	csrr	t0, scause
	sd	t0, FRAME_SCAUSE(sp)
	csrr	t0, stval
	sd	t0, FRAME_STVAL(sp)

	mv	a0, sp
	call	trap_dispatch

	/* Handlers may change sepc (to step over an instruction) and any register but sp. */
	ld	t0, FRAME_SEPC(sp)
	csrw	sepc, t0
	ld	t0, FRAME_SSTATUS(sp)
	csrw	sstatus, t0
	ld	x1, 8(sp)
	ld	x3, 24(sp)
	ld	x4, 32(sp)
	ld	x5, 40(sp)
	ld	x6, 48(sp)
	ld	x7, 56(sp)
	ld	x8, 64(sp)
	ld	x9, 72(sp)
	ld	x10, 80(sp)
	ld	x11, 88(sp)
	ld	x12, 96(sp)
	ld	x13, 104(sp)
	ld	x14, 112(sp)
	ld	x15, 120(sp)
	ld	x16, 128(sp)
	ld	x17, 136(sp)
	ld	x18, 144(sp)
	ld	x19, 152(sp)
	ld	x20, 160(sp)
	ld	x21, 168(sp)
	ld	x22, 176(sp)
	ld	x23, 184(sp)
	ld	x24, 192(sp)
	ld	x25, 200(sp)
	ld	x26, 208(sp)
	ld	x27, 216(sp)
	ld	x28, 224(sp)
	ld	x29, 232(sp)
	ld	x30, 240(sp)
	ld	x31, 248(sp)
	addi	sp, sp, FRAME_SIZE
	sret

	.section .bss.stacks, "aw", @nobits
	.balign 16
stacks:
	.space	MAX_CPUS << STACK_SHIFT
stacks_end:
