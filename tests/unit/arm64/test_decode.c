/* SPDX-License-Identifier: MIT */
/* arch/arm64/decode.c and decode.h: what a trap's syndrome says (Arm ARM, ESR_EL2 ISS encodings). */
#include <arch/decode.h>
#include <arch/sysreg.h>
#include "check.h"
#include "tests.h"

#define ISV BIT(24)
#define CV  BIT(24)

void test_decode_data_abort(void)
{
	struct esr_data_access a;

	esr_data_abort(((uint64_t)EC_DABT_LOW << 26) | ESR_IL, &a);
	CHECK(!a.valid && !a.write && a.size == 1 && a.rt == 0 && !a.sign_extend && !a.wide);
	esr_data_abort(ISV | (3u << 22) | BIT(21) | (17u << 16) | BIT(15) | BIT(6), &a);
	CHECK(a.valid && a.write && a.sign_extend && a.wide);
	CHECK_EQ(a.size, 8);
	CHECK_EQ(a.rt, 17);
	for (unsigned sas = 0; sas < 4; sas++) {
		esr_data_abort(ISV | (sas << 22), &a);
		CHECK_EQ(a.size, 1u << sas);
	}
	esr_data_abort(ISV | (31u << 16), &a);
	CHECK_EQ(a.rt, 31);
	/* Bits above the ISS (EC, IL, and ESR_EL2's RES0 upper half) do not leak into it. */
	esr_data_abort(0xffffffff00000000ull | ISV, &a);
	CHECK(a.valid && !a.write && a.size == 1 && a.rt == 0);
}

void test_decode_insn_len(void)
{
	CHECK_EQ(esr_insn_len(ESR_IL), 4);
	CHECK_EQ(esr_insn_len(0), 2);
	CHECK_EQ(esr_insn_len(((uint64_t)EC_SYSREG << 26) | ESR_IL | 0x1ffffff), 4);
	CHECK_EQ(esr_insn_len(((uint64_t)EC_WFX << 26) | 0x1ffffff), 2);
}

/* A load leaves in its register the value zero- or sign-extended from its size, W or X. */
void test_decode_load_value(void)
{
	struct esr_data_access a = { .valid = true, .size = 1, .wide = true };

	CHECK_EQ(esr_load_value(&a, 0xffffffffffffff80ull), 0x80);
	a.sign_extend = true;
	CHECK_EQ(esr_load_value(&a, 0x80), 0xffffffffffffff80ull);
	CHECK_EQ(esr_load_value(&a, 0x7f), 0x7f);
	a.wide = false;
	CHECK_EQ(esr_load_value(&a, 0x80), 0xffffff80ull);
	a.size = 2;
	CHECK_EQ(esr_load_value(&a, 0x12348000), 0xffff8000ull);
	a.sign_extend = false;
	CHECK_EQ(esr_load_value(&a, 0x12348000), 0x8000);
	a.size = 4;
	a.wide = true;
	CHECK_EQ(esr_load_value(&a, 0xaaaaaaaa80000000ull), 0x80000000ull);
	a.sign_extend = true;
	CHECK_EQ(esr_load_value(&a, 0x80000000ull), 0xffffffff80000000ull);
	a.wide = false;
	CHECK_EQ(esr_load_value(&a, 0x80000000ull), 0x80000000ull);
	a.size = 8;
	a.wide = true;
	CHECK_EQ(esr_load_value(&a, 0x8000000000000001ull), 0x8000000000000001ull);
	a.wide = false; /* 8 bytes into a W register does not exist; it is kept to 32 bits */
	CHECK_EQ(esr_load_value(&a, 0x8000000000000001ull), 1);
}

void test_decode_sysreg(void)
{
	struct esr_sysreg s;
	uint64_t esr = ((uint64_t)EC_SYSREG << 26) | ESR_IL | ISS_ICC_SGI1R | (7u << 5);

	esr_sysreg(esr, &s);
	CHECK_EQ(s.id, ISS_ICC_SGI1R);
	CHECK_EQ(s.rt, 7);
	CHECK(!s.read);
	esr_sysreg(esr | 1 | (31u << 5), &s);
	CHECK_EQ(s.id, ISS_ICC_SGI1R);
	CHECK_EQ(s.rt, 31);
	CHECK(s.read);
	esr_sysreg(SYSREG_ISS(3, 7, 15, 15, 7), &s);
	CHECK_EQ(s.id, SYSREG_ISS(3, 7, 15, 15, 7));
	CHECK_EQ(ISS_ICC_ASGI1R, SYSREG_ISS(3, 0, 12, 11, 6));
	CHECK_EQ(ISS_ICC_SGI0R, SYSREG_ISS(3, 0, 12, 11, 7));
	CHECK_EQ(ISS_ICC_SGI1R_HI | ISS_ICC_SGI1R_LO, ISS_ICC_SGI1R);
}

/* The Arm ARM's ConditionHolds(), written out apart from esr.c. */
static bool holds(unsigned cond, unsigned nzcv)
{
	bool n = nzcv & 8, z = nzcv & 4, c = nzcv & 2, v = nzcv & 1;
	switch (cond) {
	case 0x0: return z;
	case 0x1: return !z;
	case 0x2: return c;
	case 0x3: return !c;
	case 0x4: return n;
	case 0x5: return !n;
	case 0x6: return v;
	case 0x7: return !v;
	case 0x8: return c && !z;
	case 0x9: return !c || z;
	case 0xa: return n == v;
	case 0xb: return n != v;
	case 0xc: return !z && n == v;
	case 0xd: return z || n != v;
	default:  return true; /* AL, and 0b1111: unconditional */
	}
}

/* Every condition with every combination of flags, from the syndrome (CV = 1), A32 and T32. */
void test_decode_condition_codes(void)
{
	unsigned bad = 0;

	for (unsigned cond = 0; cond < 16; cond++) {
		for (unsigned nzcv = 0; nzcv < 16; nzcv++) {
			uint64_t esr = ((uint64_t)EC_CP15_32 << 26) | CV | ((uint64_t)cond << 20);
			uint64_t spsr = (uint64_t)nzcv << 28;
			bad += esr_cond_passed(esr, spsr | 0x10) != holds(cond, nzcv);
			bad += esr_cond_passed(esr, spsr | 0x10 | SPSR_T32) != holds(cond, nzcv);
			/* Without CV an A32 syndrome gives no condition: the instruction passed. */
			bad += !esr_cond_passed(esr & ~CV, spsr | 0x10);
		}
	}
	CHECK_EQ(bad, 0);
}

/* A T32 instruction in an IT block without CV: the block's current condition decides. */
void test_decode_condition_from_it_block(void)
{
	unsigned bad = 0;

	for (unsigned it = 0; it < 256; it++) {
		for (unsigned nzcv = 0; nzcv < 16; nzcv++) {
			uint64_t spsr = ((uint64_t)nzcv << 28) | SPSR_T32 | 0x10 |
					((uint64_t)(it & 0xfc) << 8) | ((uint64_t)(it & 3) << 25);
			bool want = (it & 0xf) ? holds(it >> 4, nzcv) : true;
			bad += esr_cond_passed((uint64_t)EC_CP15_32 << 26, spsr) != want;
		}
	}
	CHECK_EQ(bad, 0);
	/* ITSTATE bits do not matter outside T32 */
	CHECK(esr_cond_passed((uint64_t)EC_CP15_32 << 26, (0x0ull << 28) | (0x08ull << 8) | 0x10));
}

/* ITAdvance(): after each instruction of a block the mask shifts; the block ends with it. */
void test_decode_it_advance(void)
{
	unsigned bad = 0;

	for (unsigned it = 0; it < 256; it++) {
		uint64_t other = 0xf00000000000001full & ~SPSR_T32; /* bits esr_advance_it must keep */
		uint64_t spsr = other | SPSR_T32 | ((uint64_t)(it & 0xfc) << 8) | ((uint64_t)(it & 3) << 25);
		unsigned want = (it & 0xf) == 0 ? it : (it & 7) == 0 ? 0 : (it & 0xe0) | ((it << 1) & 0x1f);
		uint64_t got = esr_advance_it(spsr);
		unsigned got_it = (unsigned)(((got >> 8) & 0xfc) | ((got >> 25) & 3));
		bad += got_it != want;
		bad += (got & ~((0xfcull << 8) | (3ull << 25))) != (other | SPSR_T32);
		/* A32 and AArch64: nothing to advance */
		bad += esr_advance_it(spsr & ~SPSR_T32) != (spsr & ~SPSR_T32);
	}
	CHECK_EQ(bad, 0);
	/* ITTE EQ (firstcond 0000, mask 0110): three instructions, then the block is over. */
	unsigned it = 0x06;
	unsigned seen = 0;
	uint64_t s = SPSR_T32 | ((uint64_t)(it & 0xfc) << 8) | ((uint64_t)(it & 3) << 25);
	while (((s >> 8) & 0xfc) | ((s >> 25) & 3)) {
		seen++;
		s = esr_advance_it(s);
	}
	CHECK_EQ(seen, 3);
}

/* Stage-2 aborts that are an access to nothing: translation and address size faults, any level. */
void test_decode_unmapped_access(void)
{
	uint64_t dabt = (uint64_t)EC_DABT_LOW << 26 | ESR_IL;

	for (uint64_t level = 0; level < 4; level++) {
		CHECK(esr_unmapped_access(dabt | 0x04 | level));        /* translation */
		CHECK(esr_unmapped_access(dabt | 0x00 | level));        /* address size */
		CHECK(!esr_unmapped_access(dabt | 0x0c | level));       /* permission */
		CHECK(!esr_unmapped_access(dabt | 0x08 | level));       /* access flag */
		CHECK(!esr_unmapped_access(dabt | BIT(7) | 0x04 | level)); /* on its table walk */
	}
	CHECK(esr_unmapped_access((uint64_t)EC_IABT_LOW << 26 | ESR_IL | 0x05));
	CHECK(!esr_unmapped_access(dabt | 0x10));                    /* an external abort itself */
}

/* The guest's syndrome: class by its EL, IL, FSC 0x10, only WnR and CM kept of the ISS. */
void test_decode_external_abort(void)
{
	uint64_t load = (uint64_t)EC_DABT_LOW << 26 | ESR_IL | BIT(24) | (3u << 22) | (5u << 16) | 0x06;
	uint64_t cmo = (uint64_t)EC_DABT_LOW << 26 | ESR_IL | BIT(8) | BIT(6) | 0x05;
	uint64_t fetch = (uint64_t)EC_IABT_LOW << 26 | ESR_IL | 0x07;

	CHECK_EQ(esr_external_abort(load, true), 0x96000010ull);
	CHECK_EQ(esr_external_abort(load | BIT(6), true), 0x96000050ull);
	CHECK_EQ(esr_external_abort(load, false), 0x92000010ull);
	CHECK_EQ(esr_external_abort(cmo, true), 0x96000150ull);
	CHECK_EQ(esr_external_abort(fetch, true), 0x86000010ull);
	CHECK_EQ(esr_external_abort(fetch, false), 0x82000010ull);
	/* A 16-bit T32 load (IL 0 at EL2) still gets IL 1: no valid ISS. */
	CHECK_EQ(esr_external_abort(load & ~ESR_IL, false), 0x92000010ull);
}
