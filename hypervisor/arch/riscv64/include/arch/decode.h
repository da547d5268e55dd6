/* SPDX-License-Identifier: MIT */
/*
 * The guest's loads and stores to emulated devices, decoded from the instruction that made
 * them.  No CSR access here: the host tests build it as it is.
 */
#ifndef ARCH_DECODE_H
#define ARCH_DECODE_H

#include <stdbool.h>
#include <stdint.h>

struct mmio_insn {
	uint8_t size;       /* bytes accessed: 1, 2, 4 or 8 */
	uint8_t reg;        /* x register: the destination of a load, the source of a store */
	uint8_t length;     /* of the instruction: 2 (compressed) or 4 */
	bool write;
	bool sign_extend;   /* a load of fewer than 8 bytes that extends its sign */
};

/*
 * Decode `insn` (a compressed instruction in the low 16 bits) as an integer load or store
 * (RV64I, and the C extension's LW/LD/SW/SD and their stack-pointer forms); false for anything
 * else (floating-point, atomics, not a memory access).
 */
bool riscv_decode_mmio(uint32_t insn, struct mmio_insn *out);

/*
 * The same for a transformed instruction (htinst with bit 0 set, Privileged spec 18.6.3): a
 * 32-bit load or store whose bit 1 is clear when the guest's was compressed.
 */
bool riscv_decode_transformed(uint64_t htinst, struct mmio_insn *out);

/* What htinst says about a guest page fault (Privileged spec, "Transformed Instruction or Pseudoinstruction for mtinst or htinst"). */
enum riscv_tinst {
	TINST_NONE,      /* 0: nothing; the guest's instruction must be read */
	TINST_ACCESS,    /* bit 0 set: the guest's own load or store, transformed */
	TINST_PAGE_WALK, /* a pseudoinstruction: a PTE read or write of the guest's VS-stage walk */
	TINST_OTHER,     /* anything else (a custom value): no access the hypervisor may emulate */
};

enum riscv_tinst riscv_tinst_kind(uint64_t htinst);

/* A loaded value as the destination register gets it. */
uint64_t riscv_load_result(const struct mmio_insn *m, uint64_t value);

#endif
