/*
 * The latency guest's trap vector, its timer arming and its waits. The vector reads `cycle`
 * in its second instruction (the first frees a register), then handles interrupts with
 * lat_irq and hands every exception, registers as they came, to the library's vector.
 * lat_irq takes no traps, so sepc and sstatus survive it unsaved.
 */
#include "lat_arm.h"
#include "trap.h"

#define CSR_SSCRATCH    0x140
#define CSR_SCAUSE      0x142
#define CSR_STIMECMP    0x14d
#define CSR_CYCLE       0xc00
#define CSR_TIME        0xc01
#define SBI_EXT_TIME    0x54494d45

/* Saved around lat_irq: what the C calling convention lets it change, bar a0 (in sscratch). */
#define SAVE_SIZE       128

/* A vector that hands interrupts to `handler` (void handler(uint64_t cycle)). */
	.macro lat_vector_for name, handler
	.balign 4
	.globl \name
\name:
	csrw	CSR_SSCRATCH, a0
	csrr	a0, CSR_CYCLE
	addi	sp, sp, -SAVE_SIZE
	sd	t0, 8(sp)
	csrr	t0, CSR_SCAUSE
	bltz	t0, 2f                  /* bit 63: an interrupt */
	ld	t0, 8(sp)
	addi	sp, sp, SAVE_SIZE
	csrr	a0, CSR_SSCRATCH
	j	lib_trap_vector

2:	sd	ra, 0(sp)
	sd	t1, 16(sp)
	sd	t2, 24(sp)
	sd	t3, 32(sp)
	sd	t4, 40(sp)
	sd	t5, 48(sp)
	sd	t6, 56(sp)
	sd	a1, 64(sp)
	sd	a2, 72(sp)
	sd	a3, 80(sp)
	sd	a4, 88(sp)
	sd	a5, 96(sp)
	sd	a6, 104(sp)
	sd	a7, 112(sp)
	call	\handler
	ld	ra, 0(sp)
	ld	t0, 8(sp)
	ld	t1, 16(sp)
	ld	t2, 24(sp)
	ld	t3, 32(sp)
	ld	t4, 40(sp)
	ld	t5, 48(sp)
	ld	t6, 56(sp)
	ld	a1, 64(sp)
	ld	a2, 72(sp)
	ld	a3, 80(sp)
	ld	a4, 88(sp)
	ld	a5, 96(sp)
	ld	a6, 104(sp)
	ld	a7, 112(sp)
	addi	sp, sp, SAVE_SIZE
	csrr	a0, CSR_SSCRATCH
	sret
	.endm

	.text
	lat_vector_for lat_vector, lat_irq
/* The channel test's, whose handler answers the doorbell (lat.c). */
	lat_vector_for lat_chan_vector, lat_chan_irq

/*
 * uint64_t lat_arm(uint64_t delta, uint64_t phase, uint64_t period, uint64_t sbi, uint64_t step)
 * Programs the supervisor timer `delta` ticks after `time` and returns that deadline: by a
 * write of stimecmp, or (sbi != 0) by SBI set_timer. First it runs up to period / step NOPs
 * so that the write happens at the same phase of the tick, `cycle` modulo `period` (cycles
 * per tick), or less than one instruction (`step` cycles) after it, for the same `phase`:
 * QEMU counts a deadline down from the write, so the phase decides how far after the tick
 * edge it fires (see lat.c). Every path has a fixed number of instructions. period must be
 * 1..LAT_ARM_MAX_PERIOD, step at least 1.
 */
	.globl lat_arm
lat_arm:
	csrr	t0, CSR_CYCLE
	remu	t0, t0, a2
	add	t1, a1, a2
	sub	t1, t1, t0
	remu	t1, t1, a2              /* cycles to burn: (phase - cycle) mod period */
	add	t1, t1, a4
	addi	t1, t1, -1
	divu	t1, t1, a4              /* NOPs: rounded up, so never early */
	slli	t1, t1, 2
	lla	t2, 3f
	sub	t2, t2, t1
	jr	t2
	.option push
	.option norvc
	.rept	LAT_ARM_MAX_PERIOD + 1
	nop
	.endr
	.option pop
3:	csrr	t0, CSR_TIME
	add	a0, t0, a0
	bnez	a3, 4f
	csrw	CSR_STIMECMP, a0
	ret
4:	mv	t3, a0
	li	a7, SBI_EXT_TIME
	li	a6, 0
	ecall
	mv	a0, t3
	ret

/*
 * void lat_wait_wfi(volatile uint32_t *fired)
 * Sleep with interrupts masked so that one between the flag test and WFI cannot be lost (a
 * pending enabled interrupt still ends WFI), then open the window for it.
 */
	.globl lat_wait_wfi
lat_wait_wfi:
1:	wfi
	csrsi	sstatus, 2
	csrci	sstatus, 2
	lw	t0, 0(a0)
	beqz	t0, 1b
	ret

/*
 * void lat_wait_busy(volatile uint32_t *fired)
 * Spin on the flag with interrupts open: the interrupt lands in the middle of the loop.
 */
	.globl lat_wait_busy
lat_wait_busy:
	csrsi	sstatus, 2
1:	lw	t0, 0(a0)
	beqz	t0, 1b
	csrci	sstatus, 2
	ret
