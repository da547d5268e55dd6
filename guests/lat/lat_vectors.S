/*
 * Vector tables for the latency guest. The IRQ slot reads the counter before anything else:
 * one instruction to free a register, the second is the timestamp. Every other slot goes to
 * the library's table. One table per counter, so the measured path has no branch.
 */
	.macro lat_vector_table counter, entry=lat_irq_entry
	.irp slot, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	.balign 128
	.if \slot == 5
	msr	tpidr_el1, x0
	mrs	x0, \counter
	b	\entry
	.else
	b	lib_vectors + \slot * 128
	.endif
	.endr
	.endm

	.text
	.balign 2048
	.globl lat_vectors_virt
lat_vectors_virt:
	lat_vector_table cntvct_el0

	.balign 2048
	.globl lat_vectors_phys
lat_vectors_phys:
	lat_vector_table cntpct_el0

/* The channel test's: its handler answers the doorbell (lat.c). */
	.balign 2048
	.globl lat_vectors_chan
lat_vectors_chan:
	lat_vector_table cntvct_el0, lat_chan_irq_entry

/*
 * x0 = counter at entry, the interrupted x0 is in TPIDR_EL1. The handler (lat_irq,
 * lat_chan_irq) runs with IRQs masked and takes no exceptions at EL1, so ELR/SPSR survive
 * without being saved.
 */
	.macro lat_irq_entry_for name, handler
\name:
	sub	sp, sp, #176
	stp	x1, x2, [sp, #0]
	stp	x3, x4, [sp, #16]
	stp	x5, x6, [sp, #32]
	stp	x7, x8, [sp, #48]
	stp	x9, x10, [sp, #64]
	stp	x11, x12, [sp, #80]
	stp	x13, x14, [sp, #96]
	stp	x15, x16, [sp, #112]
	stp	x17, x18, [sp, #128]
	stp	x29, x30, [sp, #144]
	mrs	x1, tpidr_el1
	str	x1, [sp, #160]

	bl	\handler

	ldr	x0, [sp, #160]
	ldp	x1, x2, [sp, #0]
	ldp	x3, x4, [sp, #16]
	ldp	x5, x6, [sp, #32]
	ldp	x7, x8, [sp, #48]
	ldp	x9, x10, [sp, #64]
	ldp	x11, x12, [sp, #80]
	ldp	x13, x14, [sp, #96]
	ldp	x15, x16, [sp, #112]
	ldp	x17, x18, [sp, #128]
	ldp	x29, x30, [sp, #144]
	add	sp, sp, #176
	eret
	.endm

	lat_irq_entry_for lat_irq_entry, lat_irq
	lat_irq_entry_for lat_chan_irq_entry, lat_chan_irq

/*
 * void lat_wait_wfi(volatile uint32_t *fired)
 * Sleep with IRQs masked so an interrupt between the flag test and WFI cannot be lost (a
 * pending IRQ still ends WFI), then open the window for exactly the one being waited for.
 */
	.globl lat_wait_wfi
lat_wait_wfi:
1:	wfi
	msr	daifclr, #2
	msr	daifset, #2
	ldr	w1, [x0]
	cbz	w1, 1b
	ret

/*
 * void lat_wait_busy(volatile uint32_t *fired)
 * Spin on the flag with IRQs open: the interrupt lands in the middle of the loop.
 */
	.globl lat_wait_busy
lat_wait_busy:
	msr	daifclr, #2
1:	ldr	w1, [x0]
	cbz	w1, 1b
	msr	daifset, #2
	ret

/*
 * void lat_wait_busy_yield(volatile uint32_t *fired)
 * lat_wait_busy with a YIELD hint in the loop, for the IPI test. QEMU 7.2's round-robin
 * scheduler under icount runs a spinning core until the next timer deadline before the next
 * core gets a turn, so the sender would never run; YIELD ends the turn there (a hint that
 * costs next to nothing elsewhere).
 */
	.globl lat_wait_busy_yield
lat_wait_busy_yield:
	msr	daifclr, #2
1:	yield
	ldr	w1, [x0]
	cbz	w1, 1b
	msr	daifset, #2
	ret
