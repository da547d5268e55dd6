/* SPDX-License-Identifier: MIT */
/*
 * EL2 exception vectors.  Every exit pushes the guest's registers at SP_EL2, where the core's
 * frame is (guest_frame()), and returns from there.  Two tables from one macro: a core in no
 * shared pool takes hyp_vectors, its frame at the top of its stack and its handlers' C right
 * below it (nothing else is on the stack while a guest runs).  A shared core takes
 * hyp_vectors_shared (arm64_shared_entry): its frame is the running vCPU's in its switch
 * context (arch_vcpu_context.frame), so a switch copies no registers; the fast paths use the
 * frame alone, unchanged, and a path that calls C moves SP to the top of the core's stack
 * first and back to the core's frame after.
 */
#include <arch/cpu.h>
#include <arch/gicv3.h>
#include <arch/sysreg.h>

.macro save_x4_to_x30_elr_spsr
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
	str	x30, [sp, #240]
	mrs	x4, elr_el2
	mrs	x5, spsr_el2
	stp	x4, x5, [sp, #GUEST_ELR]
.endm

.macro save_all
	sub	sp, sp, #GUEST_FRAME_SIZE
	stp	x0, x1, [sp]
	stp	x2, x3, [sp, #16]
	save_x4_to_x30_elr_spsr
.endm

/* x1 = this core: count one fast exit in its `counter`, restore x0-x3, back to the guest. */
.macro count_and_eret counter
	ldr	x2, [x1, #\counter]
	add	x2, x2, #1
	str	x2, [x1, #\counter]
	ldp	x2, x3, [sp, #16]
	ldp	x0, x1, [sp], #GUEST_FRAME_SIZE
	eret
.endm

.macro ventry label
	.balign	128
	b	\label
.endm

/*
 * The frame saved and the handler's arguments set: call C and go back to the guest.  A shared
 * core's frame is in the vCPU's context, out of the stack: C runs from the top of the core's
 * stack, and the way back finds the frame of the vCPU the core runs then (guest_exit_frame).
 */
.macro call_c handler, shared
	.if	\shared
	mrs	x2, tpidr_el2
	ldr	x2, [x2, #CPU_STACK_TOP]
	mov	sp, x2
	bl	\handler
	b	guest_exit_frame
	.else
	bl	\handler
	b	guest_exit
	.endif
.endm

/*
 * A table indexed by the guest's Rt that puts the register's value in x2 and goes on at
 * `value`: x0-x3 from the frame, x4-x30 live, 31 = XZR.  Two instructions each, from `name`,
 * which is defined after the alignment: a label before it would name the padding whenever the
 * code before ends 4 bytes off, and every entry would run its predecessor's branch.
 */
.macro rt_table name, value
	.balign	8
\name:
	.irp	n, 0, 1, 2, 3
	ldr	x2, [sp, #(\n * 8)]
	b	\value
	.endr
	.irp	n, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30
	mov	x2, x\n
	b	\value
	.endr
	mov	x2, xzr
	b	\value
.endm

/* Anything the sync vector's fast paths leave: x0-x3 saved. */
.macro sync_slow sfx, shared
guest_sync_slow\sfx:
	save_x4_to_x30_elr_spsr
	mov	x0, sp
	call_c arm64_guest_sync, \shared
.endm

/* A vector table `name` and its handlers, their labels ending in `sfx`; `shared`: a shared core's. */
.macro vector_table name, sfx, shared
	.balign	2048
	.global	\name
\name:
	/* EL2 with SP_EL0: never used */
	ventry	hyp_panic_sync
	ventry	hyp_panic_async
	ventry	hyp_panic_async
	ventry	hyp_panic_async
	/* EL2 with SP_EL2: a hypervisor bug (interrupts stay masked at EL2) */
	ventry	hyp_panic_sync
	ventry	hyp_panic_async
	ventry	hyp_panic_async
	ventry	hyp_panic_async
	/* lower EL, AArch64: the guest.  WFI/WFE are sorted out before a full save. */
	.balign	128
guest_sync\sfx:
	stp	x0, x1, [sp, #-GUEST_FRAME_SIZE]!
	stp	x2, x3, [sp, #16]
	mrs	x0, esr_el2
	ubfx	x1, x0, #26, #6
	cmp	x1, #EC_WFX
	b.eq	guest_wfx\sfx
	cmp	x1, #EC_SYSREG
	b.eq	guest_sgi\sfx
	cmp	x1, #EC_DABT_LOW
	b.eq	guest_doorbell\sfx
	.if	\shared
	b	guest_sync_slow\sfx		/* call_c's stack switch: one instruction over */
	.else
	sync_slow \sfx, \shared
	.endif
	.if	(. - guest_sync\sfx) > 128
	.error	"guest_sync\sfx overflows its vector slot"
	.endif

	/*
	 * Interrupt from a guest: the fast path.  A hardware interrupt the
	 * guest owns goes straight into list register 0, hardware-linked so
	 * the guest's EOI deactivates it: acknowledge, one table load, one
	 * list-register write, priority drop, return.  Anything else (LR0 in
	 * use, interrupts waiting in order, hypervisor SGIs, spurious) has a
	 * zero table entry or fails the LR0 test and goes to C.
	 */
	.balign	128
guest_irq\sfx:
	stp	x0, x1, [sp, #-GUEST_FRAME_SIZE]!
	stp	x2, x3, [sp, #16]
guest_irq_body\sfx:
	mrs	x0, icc_iar1_el1
	mrs	x1, tpidr_el2
	ldr	x2, [x1, x0, lsl #3]		/* CPU_LR_TEMPLATE */
	cbz	x2, guest_irq_slow\sfx
	mrs	x3, ich_elrsr_el2
	tbz	x3, #0, guest_irq_slow\sfx
	msr	ich_lr0_el2, x2
	msr	icc_eoir1_el1, x0
	count_and_eret CPU_FAST_IRQS
	.if	(. - guest_irq\sfx) > 128
	.error	"guest_irq\sfx overflows its vector slot"
	.endif

	.balign	128
	b	guest_fiq\sfx
	.balign	128
	b	guest_serror\sfx
	/* lower EL, AArch32: guests are AArch64 only (HCR_EL2.RW) */
	ventry	guest_sync_aarch32\sfx
	ventry	guest_irq\sfx
	ventry	guest_fiq\sfx
	ventry	guest_serror\sfx

/*
 * Trapped WFI/WFE (wfi = "trap"), x0 = ESR, x0-x3 saved.  With no virtual
 * interrupt in flight the core waits right here; the interrupt that wakes
 * it is then injected without another exception round trip.
 */
guest_wfx\sfx:
	mrs	x1, tpidr_el2
	mrs	x2, elr_el2
	add	x2, x2, #4
	msr	elr_el2, x2
	tbnz	x0, #0, guest_wfe\sfx
	mrs	x2, ich_elrsr_el2
	ldr	x3, [x1, #CPU_LRS_IDLE]
	cmp	x2, x3
	b.ne	guest_wfi_slow\sfx
	ldr	x2, [x1, #CPU_FAST_WFI]
	add	x2, x2, #1
	str	x2, [x1, #CPU_FAST_WFI]
	wfi
	b	guest_irq_body\sfx
guest_wfe\sfx:
	/*
	 * A hint.  A core in no shared pool is this guest's alone: nobody to yield to.  A shared
	 * core's guest keeps it too, to its scheduler's next event (WFE does not yield).
	 */
	count_and_eret CPU_FAST_WFE
guest_wfi_slow\sfx:
	save_x4_to_x30_elr_spsr
	mov	x0, sp
	call_c arm64_guest_wfi, \shared

/*
 * A trapped system register access, x0 = ESR, x0-x3 saved.  A direct vCPU's ICC_SGI1R_EL1
 * write to vCPUs of its own partition becomes the physical SGI here: check the fields, shift
 * the target list onto the partition's cores, write, return.  Everything else - another
 * register, a trap-and-inject vCPU (sgi_vcpus = 0), IRM, affinity above Aff0, targets outside
 * the partition, the hypervisor's SGI 15 - goes to C, which filters and counts.
 */
guest_sgi\sfx:
	mrs	x1, tpidr_el2
	ldr	x2, [x1, #CPU_SGI_VCPUS]
	cbz	x2, guest_sync_slow\sfx
	and	w3, w0, #ISS_SYSREG_ID_HI_MASK
	mov	w2, #(ISS_ICC_SGI1R_HI & 0xffff)
	movk	w2, #(ISS_ICC_SGI1R_HI >> 16), lsl #16
	cmp	w3, w2
	b.ne	guest_sync_slow\sfx
	and	w3, w0, #ISS_SYSREG_ID_LO_MASK	/* CRm and the direction: a write */
	cmp	w3, #ISS_ICC_SGI1R_LO
	b.ne	guest_sync_slow\sfx
	ubfx	x3, x0, #5, #5			/* Rt */
	adr	x2, sgi_rt_table\sfx
	add	x2, x2, x3, lsl #3
	br	x2
sgi_rt_value\sfx:					/* x1 = this core, x2 = the value written */
	lsr	x3, x2, #28			/* IRM, Aff2, RS, Aff3: must be 0 */
	cbnz	x3, guest_sync_slow\sfx
	ubfx	x3, x2, #16, #8			/* Aff1 */
	cbnz	x3, guest_sync_slow\sfx
	ubfx	x3, x2, #24, #4
	cmp	x3, #SGI_KICK
	b.eq	guest_sync_slow\sfx
	and	x0, x2, #0xffff			/* target list: the partition's vCPUs only */
	ldr	x3, [x1, #CPU_SGI_VCPUS]
	bics	xzr, x0, x3
	b.ne	guest_sync_slow\sfx
	ldr	x3, [x1, #CPU_SGI_SHIFT]
	lsl	x0, x0, x3
	and	x2, x2, #0x0f000000
	orr	x2, x2, x0
	dsb	ishst
	msr	icc_sgi1r_el1, x2
	mrs	x2, elr_el2
	add	x2, x2, #4
	msr	elr_el2, x2
	count_and_eret CPU_FAST_SGI

	rt_table sgi_rt_table\sfx, sgi_rt_value\sfx

/*
 * A trapped data abort, x0 = ESR, x0-x3 saved.  A 32-bit store of k to RING (offset 0) of
 * the vCPU's fast doorbell page, a channel's (channel_fast_doorbell), sets member k's doorbell
 * pending on the distributor here: the page, the syndrome and k checked, one table load, one
 * store, return.  Anything else - another page or register, a load, a syndrome without the
 * access, k beyond the members, a member whose driver enabled its PCI function (its gate:
 * then the ring is the function's IntrStatus) - goes to C.
 */
guest_doorbell\sfx:
	mrs	x1, tpidr_el2
	ldr	x2, [x1, #CPU_DOORBELL_PAGE]
	mrs	x3, hpfar_el2
	ubfx	x3, x3, #4, #40			/* FIPA: the IPA's page number (NS set or not) */
	cmp	x2, x3				/* never equal to DOORBELL_NO_PAGE */
	b.ne	guest_sync_slow\sfx
	ubfx	x3, x0, #ISS_DABT_ISV_SAS_SHIFT, #3
	cmp	x3, #ISS_DABT_ISV_WORD
	b.ne	guest_sync_slow\sfx
	tbz	x0, #ISS_DABT_WNR_BIT, guest_sync_slow\sfx
	tbnz	x0, #ISS_DABT_S1PTW_BIT, guest_sync_slow\sfx
	tbnz	x0, #ISS_DABT_CM_BIT, guest_sync_slow\sfx
	tbnz	x0, #ISS_DABT_FNV_BIT, guest_sync_slow\sfx
	mrs	x3, far_el2
	tst	x3, #0xfff
	b.ne	guest_sync_slow\sfx
	ubfx	x3, x0, #ISS_DABT_SRT_SHIFT, #5
	adr	x2, doorbell_rt_table\sfx
	add	x2, x2, x3, lsl #3
	br	x2
doorbell_rt_value\sfx:				/* x1 = this core, x2 = the register stored */
	mov	w2, w2				/* a 32-bit store: its W register */
	cmp	x2, #DOORBELL_MEMBERS
	b.hs	guest_sync_slow\sfx
	add	x3, x1, x2, lsl #3
	ldr	x0, [x3, #CPU_DOORBELL_GATE]
	ldr	x3, [x3, #CPU_DOORBELL_REG]
	cbz	x3, guest_sync_slow\sfx
	cbz	x0, 1f
	ldr	w0, [x0]			/* a driver holds its function's rings: C */
	tbnz	w0, #DOORBELL_GATE_BIT, guest_sync_slow\sfx
1:	add	x0, x1, x2, lsl #2
	ldr	w0, [x0, #CPU_DOORBELL_BIT]
	dsb	ishst				/* the message before its doorbell, as arch_irq_raise */
	str	w0, [x3]
	mrs	x2, elr_el2
	add	x2, x2, #4
	msr	elr_el2, x2
	count_and_eret CPU_FAST_DOORBELL

	rt_table doorbell_rt_table\sfx, doorbell_rt_value\sfx

guest_sync_aarch32\sfx:
	save_all
	mov	x0, sp
	call_c arm64_guest_sync, \shared

/* x0 = acknowledged INTID, x0-x3 saved. */
guest_irq_slow\sfx:
	save_x4_to_x30_elr_spsr
	mov	x1, sp
	call_c arm64_guest_irq, \shared

/* The hypervisor's own Group 0 interrupts (kicks), whatever the guest's delivery mode. */
guest_fiq\sfx:
	save_all
	mov	x0, sp
	call_c arm64_guest_fiq, \shared

guest_serror\sfx:
	save_all
	mov	x0, sp
	mov	x1, #2
	call_c arm64_guest_async_abort, \shared

	.if	\shared
	sync_slow \sfx, \shared
	.endif
.endm

	.section .text.vectors, "ax"
	vector_table hyp_vectors, , 0
	vector_table hyp_vectors_shared, _shared, 1

/* A shared core back from C: SP at the frame of the vCPU it runs now. */
guest_exit_frame:
	mrs	x0, tpidr_el2
	ldr	x0, [x0, #CPU_FRAME]
	mov	sp, x0
/* Restore the guest frame at sp and return to it. */
	.global	guest_exit
guest_exit:
	ldp	x4, x5, [sp, #GUEST_ELR]
	msr	elr_el2, x4
	msr	spsr_el2, x5
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
	ldr	x30, [sp, #240]
	ldp	x0, x1, [sp], #GUEST_FRAME_SIZE
	eret

/* x0 = the core's frame (guest_frame()), built or restored: SP there, and back to the guest. */
	.global	guest_enter
guest_enter:
	mov	sp, x0
	b	guest_exit

/*
 * A hypervisor bug, reported from the core's panic stack with SP_EL0 as the stack pointer
 * (the guest's SP_EL0 is lost: the board stops).  SP_EL2 may be the fault itself, a stack run
 * into its guard page: a push there would fault again, lower each time, into the core below.
 * A fault in the report comes back here on SP_EL0 and starts over from the top.
 */
.macro panic_entry async
	msr	spsel, #0
	mov	sp, x0			/* x0 parked in SP_EL0 */
	mrs	x0, tpidr_el2
	ldr	x0, [x0, #CPU_PANIC_TOP]
	sub	x0, x0, #GUEST_FRAME_SIZE
	stp	x2, x3, [x0, #16]
	mov	x2, sp
	stp	x2, x1, [x0]
	mov	sp, x0
	save_x4_to_x30_elr_spsr
	msr	spsel, #1
	mov	x2, sp			/* the SP_EL2 the exception came with */
	msr	spsel, #0
	mov	x0, sp
	mov	x1, #\async
	bl	arm64_hyp_panic
.endm

hyp_panic_sync:
	panic_entry 0
hyp_panic_async:
	panic_entry 1
