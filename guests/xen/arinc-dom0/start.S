/*
 * Entry of the ARINC 653 dom0 stand-in (arinc_dom0.c). Xen maps dom0 1:1 at an address of its
 * choosing, so nothing here may depend on the link address: adr/adrp only.
 */
	.section .text.head, "ax"
	.globl _head
_head:
	b	entry                   /* code0 */
	.long	0                       /* code1 */
	.quad	0x80000                 /* text_offset */
	.quad	_image_size             /* image_size, bss and stack included */
	.quad	0xa                     /* flags: LE, 4K pages, place anywhere */
	.quad	0, 0, 0                 /* res2-res4 */
	.ascii	"ARM\x64"               /* magic */
	.long	0                       /* res5: no PE header */

	.text
entry:
	mov	x19, x0                 /* Xen's device tree for dom0 */
	adrp	x1, __bss_start
	add	x1, x1, :lo12:__bss_start
	adrp	x2, __bss_end
	add	x2, x2, :lo12:__bss_end
1:	cmp	x1, x2
	b.hs	2f
	stp	xzr, xzr, [x1], #16
	b	1b
2:	adrp	x1, __stack_top
	add	x1, x1, :lo12:__stack_top
	mov	sp, x1
	mov	x0, x19
	bl	dom0_main
3:	wfi
	b	3b
