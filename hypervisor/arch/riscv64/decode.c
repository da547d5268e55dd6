/* SPDX-License-Identifier: MIT */
#include <arch/decode.h>

#define OPCODE_LOAD  0x03u
#define OPCODE_STORE 0x23u

static uint32_t bits(uint32_t insn, unsigned hi, unsigned lo)
{
	return (insn >> lo) & ((1u << (hi - lo + 1u)) - 1u);
}

static bool access(struct mmio_insn *out, unsigned size, unsigned reg, unsigned length, bool write,
		   bool sign_extend)
{
	*out = (struct mmio_insn){ (uint8_t)size, (uint8_t)reg, (uint8_t)length, write, sign_extend };
	return true;
}

static bool decode_32(uint32_t insn, struct mmio_insn *out)
{
	uint32_t funct3 = bits(insn, 14, 12);
	uint32_t opcode = bits(insn, 6, 0);

	if (opcode == OPCODE_LOAD && funct3 != 7u) /* LB LH LW LD LBU LHU LWU */
		return access(out, 1u << (funct3 & 3u), bits(insn, 11, 7), 4, false,
			      funct3 < 3u);
	if (opcode == OPCODE_STORE && funct3 < 4u) /* SB SH SW SD */
		return access(out, 1u << funct3, bits(insn, 24, 20), 4, true, false);
	return false;
}

/* Quadrant 0 names x8-x15 in three bits; quadrant 2 any register in five. */
static bool decode_16(uint32_t insn, struct mmio_insn *out)
{
	uint32_t funct3 = bits(insn, 15, 13);
	uint32_t quadrant = bits(insn, 1, 0);
	unsigned size = (funct3 & 1u) ? 8u : 4u;      /* LW/SW: x10, LD/SD: x11 */
	bool write = (funct3 & 4u) != 0u;

	if ((funct3 & 6u) != 2u && (funct3 & 6u) != 6u)
		return false;                         /* not C.LW C.LD C.SW C.SD (or their SP forms) */
	if (quadrant == 0u)
		return access(out, size, 8u + bits(insn, 4, 2), 2, write, !write && size == 4u);
	if (quadrant == 2u) {
		unsigned reg = write ? bits(insn, 6, 2) : bits(insn, 11, 7);
		if (!write && reg == 0u)
			return false;                 /* reserved */
		return access(out, size, reg, 2, write, !write && size == 4u);
	}
	return false;
}

bool riscv_decode_mmio(uint32_t insn, struct mmio_insn *out)
{
	if ((insn & 3u) == 3u)
		return decode_32(insn, out);
	return decode_16(insn & 0xffffu, out);
}

bool riscv_decode_transformed(uint64_t htinst, struct mmio_insn *out)
{
	uint32_t insn = (uint32_t)htinst;

	if (!(insn & 1u) || !decode_32(insn | 2u, out))
		return false;
	out->length = (insn & 2u) ? 4u : 2u;
	return true;
}

enum riscv_tinst riscv_tinst_kind(uint64_t htinst)
{
	enum riscv_tinst kind = TINST_OTHER;

	if (htinst == 0u)
		kind = TINST_NONE;
	else if ((htinst & 1u) != 0u)
		kind = TINST_ACCESS;
	else if (htinst == 0x2000u || htinst == 0x3000u || htinst == 0x2020u || htinst == 0x3020u)
		kind = TINST_PAGE_WALK; /* 32- or 64-bit PTE read, or its A/D update */
	else {
		/* reserved or custom */
	}
	return kind;
}

uint64_t riscv_load_result(const struct mmio_insn *m, uint64_t value)
{
	if (m->size == 8u)
		return value;
	uint64_t sign = 1ULL << (8u * m->size - 1u);
	uint64_t low = value & ((sign << 1) - 1u);

	if (m->sign_extend && (low & sign) != 0u)
		return low | ~((sign << 1) - 1u);
	return low;
}
