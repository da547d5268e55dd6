/* SPDX-License-Identifier: MIT */
/*
 * sbi-smoke: a minimal S-mode guest for riscv64 that touches the SBI a partition gets and
 * prints what it saw, one machine-readable line per check:
 *   SBI-JSON {"check":"NAME","error":E,"value":V}
 * It needs no device: output goes through the SBI debug console (DBCN).  Hart 0 probes the
 * extensions, starts hart 1 (HSM), waits until hart 1 has stopped itself, then shuts the
 * partition down (SRST).  (OpenSBI 1.1, on the bare board, has no DBCN: there it is silent.)
 */
#define SBI_EXT_BASE 0x10
#define SBI_EXT_HSM  0x48534d
#define SBI_EXT_SRST 0x53525354
#define SBI_EXT_DBCN 0x4442434e

	.section .text.head, "ax"
	.global _start
_start:
	bnez	a0, secondary
	la	sp, stack_top
	/* BASE: spec version, then whether DBCN, HSM and SRST exist, and one that does not. */
	li	a7, SBI_EXT_BASE
	li	a6, 0
	ecall
	la	s0, name_version
	call	report
	li	s1, SBI_EXT_DBCN
	la	s0, name_dbcn
	call	probe
	li	s1, SBI_EXT_HSM
	la	s0, name_hsm
	call	probe
	li	s1, SBI_EXT_SRST
	la	s0, name_srst
	call	probe
	li	s1, 0x0a000000		/* a vendor extension nobody provides */
	la	s0, name_vendor
	call	probe
	/* HSM: start hart 1 at _start (it sees a0 = 1), then wait for it to stop. */
	li	a7, SBI_EXT_HSM
	li	a6, 0
	li	a0, 1
	la	a1, _start
	li	a2, 0x5eed
	ecall
	mv	s6, a0			/* reported once hart 1 is done: one printer at a time */
	mv	s7, a1
1:	li	a7, SBI_EXT_HSM
	li	a6, 2			/* hart_get_status */
	li	a0, 1
	ecall
	bnez	a0, 2f
	li	t0, 1			/* STOPPED */
	bne	a1, t0, 1b
2:	mv	s8, a0
	mv	s9, a1
	mv	a0, s6
	mv	a1, s7
	la	s0, name_start
	call	report
	mv	a0, s8
	mv	a1, s9
	la	s0, name_status
	call	report
	/* HSM on a hart the partition does not have. */
	li	a7, SBI_EXT_HSM
	li	a6, 0
	li	a0, 7
	la	a1, _start
	li	a2, 0
	ecall
	la	s0, name_foreign
	call	report
	la	a0, done_line
	call	puts
	li	a7, SBI_EXT_SRST
	li	a6, 0
	li	a0, 0			/* shutdown */
	li	a1, 0
	ecall
3:	wfi
	j	3b

/* Hart 1: report the opaque value it was started with, then stop. */
secondary:
	la	sp, stack1_top
	li	a0, 0			/* a1: the opaque value hart_start passed */
	la	s0, name_opaque
	call	report
	li	a7, SBI_EXT_HSM
	li	a6, 1			/* hart_stop */
	ecall
4:	wfi
	j	4b

/* probe(s1 = extension, s0 = name): report BASE probe_extension. */
probe:
	mv	s2, ra
	li	a7, SBI_EXT_BASE
	li	a6, 3
	mv	a0, s1
	ecall
	call	report
	jr	s2

/* report(a0 = error, a1 = value, s0 = name): one SBI-JSON line. */
report:
	mv	s3, ra
	mv	s4, a0
	mv	s5, a1
	la	a0, line_head
	call	puts
	mv	a0, s0
	call	puts
	la	a0, line_error
	call	puts
	mv	a0, s4
	call	putdec
	la	a0, line_value
	call	puts
	mv	a0, s5
	call	putdec
	la	a0, line_tail
	call	puts
	jr	s3

/* puts(a0 = NUL-terminated string) through DBCN write. */
puts:
	mv	t0, a0
	li	t1, 0
1:	add	t2, t0, t1
	lbu	t2, 0(t2)
	beqz	t2, 2f
	addi	t1, t1, 1
	j	1b
2:	beqz	t1, 3f
	li	a7, SBI_EXT_DBCN
	li	a6, 0
	mv	a0, t1
	mv	a1, t0
	li	a2, 0
	ecall
3:	ret

/* putdec(a0 = signed 64-bit value) in decimal. */
putdec:
	mv	t5, ra
	la	t0, numbuf_end
	sb	zero, 0(t0)
	mv	t1, a0
	bgez	t1, 1f
	neg	t1, t1
1:	li	t2, 10
2:	remu	t3, t1, t2
	divu	t1, t1, t2
	addi	t3, t3, '0'
	addi	t0, t0, -1
	sb	t3, 0(t0)
	bnez	t1, 2b
	bgez	a0, 3f
	li	t3, '-'
	addi	t0, t0, -1
	sb	t3, 0(t0)
3:	mv	a0, t0
	call	puts
	jr	t5

	.section .rodata
line_head:	.asciz "SBI-JSON {\"check\":\""
line_error:	.asciz "\",\"error\":"
line_value:	.asciz ",\"value\":"
line_tail:	.asciz "}\n"
done_line:	.asciz "SBI-DONE\n"
name_version:	.asciz "spec_version"
name_dbcn:	.asciz "probe_dbcn"
name_hsm:	.asciz "probe_hsm"
name_srst:	.asciz "probe_srst"
name_vendor:	.asciz "probe_vendor"
name_start:	.asciz "hart_start"
name_status:	.asciz "hart1_status"
name_foreign:	.asciz "hart_start_foreign"
name_opaque:	.asciz "hart1_opaque"

	.section .bss
	.balign 16
numbuf:	.space 32
numbuf_end:
	.space 1
	.balign 16
	.space 4096
stack_top:
	.space 4096
stack1_top:
