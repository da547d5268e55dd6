/*
 * Entry for the boot CPU (Image header) and for CPUs started with PSCI CPU_ON, the drop
 * from EL2 to EL1 on the bare board, per-CPU stacks and the EL1 vector table.
 */
#include "board.h"
#include "exceptions.h"

#define HCR_EL2_RW              (1 << 31)
#define CNTHCTL_EL1PCTEN        (1 << 0)
#define CNTHCTL_EL1PCEN         (1 << 1)
#define ICC_SRE_EL2_SRE         (1 << 0)
#define ICC_SRE_EL2_ENABLE      (1 << 3)
#define SPSR_EL1H_DAIF_MASKED   0x3c5
/* RES1 bits only: MMU, caches and alignment checking off, little-endian. */
#define SCTLR_EL1_MMU_OFF       0x30d00800

	.section .text.head, "ax"
	.globl _head
_head:
	b	primary_entry           /* code0 */
#ifndef RAW_IMAGE
	.long	0                       /* code1 */
	.quad	0x80000                 /* text_offset */
	.quad	_image_size             /* image_size, bss included */
	.quad	0xa                     /* flags: LE, 4K pages, place anywhere */
	.quad	0, 0, 0                 /* res2-res4 */
	.ascii	"ARM\x64"               /* magic */
	.long	0                       /* res5: no PE header */
#endif

	.text
primary_entry:
	mrs	x21, cntpct_el0         /* when this image started: boot-time measurements */
	mov	x19, x0                 /* device tree */
	mrs	x20, CurrentEL
	ubfx	x20, x20, #2, #2

	/* The image is not position independent: refuse to run anywhere else. */
	adr	x1, _head
	ldr	x2, =_head
	cmp	x1, x2
	b.ne	park

	adr	x0, primary_el1
	b	enter_el1
primary_el1:
	bl	el1_cpu_setup

	adrp	x1, __bss_start
	add	x1, x1, :lo12:__bss_start
	adrp	x2, __bss_end
	add	x2, x2, :lo12:__bss_end
1:	cmp	x1, x2
	b.hs	2f
	stp	xzr, xzr, [x1], #16
	b	1b
2:
	mov	x0, x19
	mov	x1, x20
	mov	x2, x21
	bl	lib_primary_entry
	b	park

/* PSCI CPU_ON target: x0 = context id. */
	.globl secondary_entry
secondary_entry:
	mov	x19, x0
	mrs	x20, CurrentEL
	ubfx	x20, x20, #2, #2
	adr	x0, secondary_el1
	b	enter_el1
secondary_el1:
	bl	el1_cpu_setup
	bl	mmu_secondary_on
	mov	x0, x19
	mov	x1, x20
	bl	lib_secondary_entry
	b	park

/*
 * Continue at x0 in EL1h with DAIF masked. At EL2 (the bare board) configure EL2 the way
 * Linux leaves it for a kernel at EL1: AArch64 EL1, nothing trapped, EL1 owns the physical
 * timer and counter, no virtual offset, GIC system registers usable from EL1.
 * x20 holds the current EL and is preserved.
 */
enter_el1:
	cmp	x20, #1
	b.eq	9f
	cmp	x20, #2
	b.ne	park                    /* EL3 entry is not supported */

	mov	x1, #HCR_EL2_RW
	msr	hcr_el2, x1
	mov	x1, #(CNTHCTL_EL1PCTEN | CNTHCTL_EL1PCEN)
	msr	cnthctl_el2, x1
	msr	cntvoff_el2, xzr
	mov	x1, #(ICC_SRE_EL2_SRE | ICC_SRE_EL2_ENABLE)
	msr	icc_sre_el2, x1
	isb
	msr	ich_hcr_el2, xzr
	msr	vttbr_el2, xzr
	mrs	x1, midr_el1
	msr	vpidr_el2, x1
	mrs	x1, mpidr_el1
	msr	vmpidr_el2, x1
	mov	x1, #SPSR_EL1H_DAIF_MASKED
	msr	spsr_el2, x1
	msr	elr_el2, x0
	eret
9:	msr	daifset, #0xf
	br	x0

/*
 * Known SCTLR_EL1, our vectors, and sp at the top of this CPU's stack. A CPU whose Aff0 has
 * no stack parks. Leaf: only x0-x3 and sp change.
 */
el1_cpu_setup:
	ldr	x0, =SCTLR_EL1_MMU_OFF
	msr	sctlr_el1, x0
	adr	x0, lib_vectors
	msr	vbar_el1, x0
	isb

	mrs	x0, mpidr_el1
	and	x0, x0, #0xff
	cmp	x0, #MAX_CPUS
	b.hs	park
	adrp	x1, stacks_end
	add	x1, x1, :lo12:stacks_end
	sub	x1, x1, x0, lsl #STACK_SHIFT
	mov	sp, x1
	ret

/*
 * If CPU 0 turned its MMU on (mmu.c), turn this CPU's on with the same tables and registers,
 * before anything touches the stack or shared data: from then on they are cacheable and
 * coherent with CPU 0's view. mmu_boot was written with CPU 0's MMU off, so it is in memory.
 * Leaf: only x0-x2 change.
 */
mmu_secondary_on:
	adrp	x0, mmu_boot
	add	x0, x0, :lo12:mmu_boot
	ldr	x1, [x0]                /* SCTLR_EL1 to use; 0: the MMU stays off */
	cbz	x1, 1f
	ldr	x2, [x0, #8]
	msr	mair_el1, x2
	ldr	x2, [x0, #16]
	msr	tcr_el1, x2
	ldr	x2, [x0, #24]
	msr	ttbr0_el1, x2
	isb
	tlbi	vmalle1
	dsb	nsh
	ic	iallu
	dsb	nsh
	isb
	msr	sctlr_el1, x1
	isb
1:	ret

/*
 * Also the CPU_ON entry point for calls that should fail: if one starts a CPU anyway, it stops
 * here without touching memory. secondary_entry would pick a stack by Aff0 alone, so a CPU
 * with Aff1 = 1 would run on CPU 0's.
 */
	.globl park_entry
park_entry:
park:
	msr	daifset, #0xf
1:	wfe
	b	1b

	.ltorg

/*
 * Every slot saves a full frame and calls exception_dispatch(frame, slot). Kept as one table
 * so other tables (lat) can branch into the slots they do not handle themselves.
 */
	.balign 2048
	.globl lib_vectors
lib_vectors:
	.irp slot, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	.balign 128
	sub	sp, sp, #FRAME_SIZE
	stp	x0, x1, [sp]
	mov	x1, #\slot
	b	exception_common
	.endr

exception_common:
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x19, [sp, #144]
	stp	x20, x21, [sp, #160]
	stp	x22, x23, [sp, #176]
	stp	x24, x25, [sp, #192]
	stp	x26, x27, [sp, #208]
	stp	x28, x29, [sp, #224]
	mrs	x2, elr_el1
	stp	x30, x2, [sp, #240]
	mrs	x2, spsr_el1
	mrs	x3, esr_el1
	stp	x2, x3, [sp, #FRAME_SPSR]
	mrs	x2, far_el1
	str	x2, [sp, #FRAME_FAR]

	mov	x0, sp
	bl	exception_dispatch

	/* Handlers may change ELR (to skip an instruction) and any register. */
	ldp	x30, x2, [sp, #240]
	msr	elr_el1, x2
	ldr	x2, [sp, #FRAME_SPSR]
	msr	spsr_el1, x2
	ldp	x0, x1, [sp]
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldp	x8, x9, [sp, #64]
	ldp	x10, x11, [sp, #80]
	ldp	x12, x13, [sp, #96]
	ldp	x14, x15, [sp, #112]
	ldp	x16, x17, [sp, #128]
	ldp	x18, x19, [sp, #144]
	ldp	x20, x21, [sp, #160]
	ldp	x22, x23, [sp, #176]
	ldp	x24, x25, [sp, #192]
	ldp	x26, x27, [sp, #208]
	ldp	x28, x29, [sp, #224]
	add	sp, sp, #FRAME_SIZE
	eret

	.section .bss.stacks, "aw", %nobits
	.balign 16
stacks:
	.space	MAX_CPUS << STACK_SHIFT
stacks_end:
