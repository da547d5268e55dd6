/*
 * A stand-in for the hypervisor, to test what `tern run` hands to QEMU without
 * the real one: entered at EL2 like tern.img, it checks the config blob at
 * 0x43f00000 and each partition's device tree (working copy and pristine copy),
 * then prints the console lines a clean run ends with and powers the board off.
 * On a bad blob it prints a PANIC line and hangs, as a crashed hypervisor would.
 */
	.text
header:					/* arm64 Image header */
	b	start
	.word	0
	.quad	0x80000			/* text_offset */
	.quad	end - header		/* image_size */
	.quad	0xa			/* flags: little-endian, 4K pages, anywhere */
	.quad	0, 0, 0
	.ascii	"ARM\x64"
	.word	0

start:
	movz	x20, #0x43f0, lsl #16	/* config blob */
	movz	x1, #0x0900, lsl #16	/* PL011 data register */
	ldr	w2, [x20]
	movz	w3, #0x4554		/* "TERN" */
	movk	w3, #0x4e52, lsl #16
	cmp	w2, w3
	b.ne	bad
	ldr	w2, [x20, #4]		/* version */
	cmp	w2, #8
	b.ne	bad
	movz	w8, #0x0dd0		/* FDT magic 0xd00dfeed, read little-endian */
	movk	w8, #0xedfe, lsl #16
	ldr	w9, [x20, #12]		/* num_partitions */
	add	x10, x20, #56		/* partition[0] */
next:
	cbz	w9, off
	ldr	x4, [x10, #16]		/* ram_ipa */
	ldr	x5, [x10, #24]		/* ram_hpa */
	ldr	x6, [x10, #48]		/* dtb_ipa */
	sub	x6, x6, x4
	add	x6, x6, x5
	ldr	w7, [x6]
	cmp	w7, w8
	b.ne	bad
	ldr	x6, [x10, #80]		/* pristine_dtb_hpa */
	ldr	w7, [x6]
	cmp	w7, w8
	b.ne	bad
	adr	x2, open_bracket	/* "[NAME] hello" */
	bl	puts
	mov	x2, x10
	bl	puts
	adr	x2, hello
	bl	puts
	adr	x2, partition		/* "tern: partition NAME off" */
	bl	puts
	mov	x2, x10
	bl	puts
	adr	x2, is_off
	bl	puts
	add	x10, x10, #568		/* sizeof(struct tern_config_partition) */
	sub	w9, w9, #1
	b	next
off:
	movz	w0, #0x0008		/* PSCI SYSTEM_OFF */
	movk	w0, #0x8400, lsl #16
	smc	#0
	b	.
bad:
	adr	x2, panic
	bl	puts
	b	.

puts:					/* x2: NUL-terminated string; x1: UART */
	ldrb	w3, [x2], #1
	cbz	w3, 1f
	strb	w3, [x1]
	b	puts
1:	ret

open_bracket:	.asciz	"["
hello:		.asciz	"] hello\n"
partition:	.asciz	"tern: partition "
is_off:		.asciz	" off\n"
panic:		.asciz	"tern: PANIC fake hypervisor: bad config blob or device tree\n"
	.balign	8
end:
