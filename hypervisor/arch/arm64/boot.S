/* SPDX-License-Identifier: MIT */
/*
 * Entry from QEMU (or a boot loader) at EL2, per the arm64 Linux boot
 * protocol: the 64-byte Image header lets the board load us like a kernel.
 */
#include <arch/cpu.h>

	.section .text.head, "ax"
	.global _start
_start:
	b	primary_entry
	.long	0
	.quad	0x80000			/* text_offset */
	.quad	__image_size
	.quad	0xa			/* little-endian, 4 KiB pages, anywhere */
	.quad	0, 0, 0
	.ascii	"ARM\x64"
	.long	0

/* x0 = the board's device tree, which tern_main reads the RAM size from. */
primary_entry:
	mrs	x20, cntpct_el0		/* boot timestamp, before anything else */
	mov	x21, x0
	msr	daifset, #0xf
	mrs	x1, CurrentEL
	cmp	x1, #(2 << 2)
	b.ne	not_el2
	mrs	x19, mpidr_el1
	and	x19, x19, #0xff		/* core index = Aff0 on QEMU virt */
	adrp	x1, __bss_start
	add	x1, x1, :lo12:__bss_start
	adrp	x2, __bss_end
	add	x2, x2, :lo12:__bss_end
	/* Four stores a step: the clear is most of the instructions boot runs. */
1:	cmp	x1, x2
	b.hs	2f
	stp	xzr, xzr, [x1]
	stp	xzr, xzr, [x1, #16]
	stp	xzr, xzr, [x1, #32]
	stp	xzr, xzr, [x1, #48]
	add	x1, x1, #64
	b	1b
2:	mov	x0, x19
	bl	set_stack
	mov	x0, x19
	mov	x1, x20
	mov	x2, x21
	b	arm64_boot_primary

/* Started by arch_cpu_start() through the firmware's PSCI CPU_ON: x0 = core index. */
	.global secondary_entry
secondary_entry:
	msr	daifset, #0xf
	mov	x19, x0
	bl	set_stack
	mov	x0, x19
	b	arm64_boot_secondary

/*
 * sp = top of core x0's stack, below the guest frame's place (arch_vcpu_run builds the frame
 * there while it runs below it, on a core in no shared pool); clobbers x1, x2.  Each core's stack has its guard page below
 * it (struct core_stack).
 */
set_stack:
	adrp	x1, cpu_stacks
	add	x1, x1, :lo12:cpu_stacks
	add	x2, x0, #1
	mov	x0, #(STACK_GUARD + STACK_SIZE)
	madd	x1, x2, x0, x1
	sub	x1, x1, #GUEST_FRAME_SIZE
	mov	sp, x1
	ret

/* Not entered at EL2: nothing to virtualise with; stop here. */
not_el2:
	wfe
	b	not_el2

/* Abandon the current stack and go idle (the vCPU on this core left its guest). */
	.global arch_cpu_return_to_idle
arch_cpu_return_to_idle:
	mrs	x0, tpidr_el2
	ldr	x1, [x0, #CPU_STACK_TOP]
	sub	x1, x1, #GUEST_FRAME_SIZE	/* as set_stack: the guest frame's place stays free */
	mov	sp, x1
	ldr	x0, [x0, #CPU_ID]
	b	cpu_idle
