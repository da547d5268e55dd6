/*
 * The probe's cpu-features test: the FP/SIMD, SVE and SME register state, dumped to memory
 * (what a new life finds in the registers) and filled with non-zero values (what a previous
 * life leaves behind). The caller has enabled FP/SIMD (and SVE, SME) in CPACR_EL1 and
 * set ZCR_EL1 to the longest vector length.
 */
	.arch_extension sve
	.arch_extension sme
	.arch_extension pauth

	.text

/*
 * fp_dump(x0 = buffer, x1 = 1 if SVE): without SVE, V0-V31 (512 bytes); with it, P0-P15 and
 * FFR (17 predicates of VL/8 bytes each) and then Z0-Z31 (32 vectors of VL bytes).
 */
	.global fp_dump
fp_dump:
	cbnz	x1, 1f
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	str	q\n, [x0], #16
	.endr
	ret
1:	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	str	p\n, [x0, #\n, mul vl]
	.endr
	rdffr	p0.b
	str	p0, [x0, #16, mul vl]
	addpl	x0, x0, #17
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	str	z\n, [x0, #\n, mul vl]
	.endr
	ret

/*
 * fp_fill(x0 = 1 if SVE, x1 = 1 if SME): every vector register 0x5a in each byte, FPCR and
 * FPSR non-zero; with SVE every predicate and FFR all true; with SME ZA on and its row 0
 * written, left on.
 */
	.global fp_fill
fp_fill:
	mov	x2, #0x00c00000		/* FPCR.RMode: towards zero */
	msr	fpcr, x2
	mov	x2, #0x1f		/* FPSR: every cumulative exception flag */
	msr	fpsr, x2
	movi	v0.16b, #0x5a
	.irp	n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	mov	v\n\().16b, v0.16b
	.endr
	cbz	x0, 2f
	dup	z0.b, #0x5a
	.irp	n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	mov	z\n\().d, z0.d
	.endr
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	ptrue	p\n\().b
	.endr
	setffr
	cbz	x1, 2f
	smstart	za
	mov	w12, #0
	mova	za0h.b[w12, 0], p0/m, z0.b
2:	ret

/* sme_svl(): the streaming vector length in bytes (RDVL in streaming mode). */
	.global sme_svl
sme_svl:
	smstart	sm
	rdvl	x0, #1
	smstop	sm
	ret

/* sve_vl(): the vector length in bytes. */
	.global sve_vl
sve_vl:
	rdvl	x0, #1
	ret

/* sve_sum(): an SVE computation: the sum of 1 over every byte lane, i.e. VL. */
	.global sve_sum
sve_sum:
	ptrue	p0.b
	dup	z0.b, #1
	uaddv	d0, p0, z0.b
	fmov	x0, d0
	ret

/* pac_ga(x0, x1): PACGA with the generic key, the pointer authentication a guest can see. */
	.global pac_ga
pac_ga:
	pacga	x0, x0, x1
	ret
