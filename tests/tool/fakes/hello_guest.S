/*
 * A tiny guest for native runs: prints a line and a LAT-JSON record on the
 * PL011, then powers the board off through PSCI (HVC: QEMU's conduit at EL1).
 * Built as an arm64 Image; with HANG defined it never powers off.
 */
	.text
header:
	b	start
	.word	0
	.quad	0x80000
	.quad	end - header
	.quad	0xa
	.quad	0, 0, 0
	.ascii	"ARM\x64"
	.word	0

start:
	movz	x1, #0x0900, lsl #16
	adr	x2, message
1:	ldrb	w3, [x2], #1
	cbz	w3, 2f
	strb	w3, [x1]
	b	1b
2:
#ifndef HANG
	movz	w0, #0x0008
	movk	w0, #0x8400, lsl #16
	hvc	#0
#endif
	b	.

message:
	.ascii	"hello from the guest\n"
	.asciz	"LAT-JSON {\"test\":\"vtimer-wfi\",\"avg\":10,\"min\":8,\"max\":20,\"warm_max\":12,\"p99\":19}\n"
	.balign	8
end:
