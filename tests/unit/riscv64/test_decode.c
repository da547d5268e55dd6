/* SPDX-License-Identifier: MIT */
/* The riscv64 port's MMIO instruction decoder (arch/riscv64/decode.c), on the host. */
#include <arch/decode.h>
#include <tern/lib.h>
#include "check.h"
#include "tests.h"

struct decoded {
	uint32_t insn;      /* as fetched; encodings from clang -march=rv64gc */
	unsigned size, reg, length;
	bool write, sign_extend;
};

static const struct decoded loads_and_stores[] = {
	{ 0x00058503, 1, 10, 4, false, true },   /* lb a0, 0(a1) */
	{ 0x00259303, 2, 6, 4, false, true },    /* lh t1, 2(a1) */
	{ 0x0045a903, 4, 18, 4, false, true },   /* lw s2, 4(a1) */
	{ 0x0085bf83, 8, 31, 4, false, false },  /* ld t6, 8(a1) */
	{ 0x0005c503, 1, 10, 4, false, false },  /* lbu a0, 0(a1) */
	{ 0x0005d503, 2, 10, 4, false, false },  /* lhu */
	{ 0x0005e503, 4, 10, 4, false, false },  /* lwu */
	{ 0x00058003, 1, 0, 4, false, true },    /* lb zero, 0(a1) */
	{ 0x00a58023, 1, 10, 4, true, false },   /* sb a0, 0(a1) */
	{ 0x01f59023, 2, 31, 4, true, false },   /* sh t6 */
	{ 0x0125a023, 4, 18, 4, true, false },   /* sw s2 */
	{ 0x0015b023, 8, 1, 4, true, false },    /* sd ra */
	{ 0x41d0, 4, 12, 2, false, true },       /* c.lw a2, 4(a1) */
	{ 0x6780, 8, 8, 2, false, false },       /* c.ld s0, 8(a5) */
	{ 0xc1d4, 4, 13, 2, true, false },       /* c.sw a3, 4(a1) */
	{ 0xe784, 8, 9, 2, true, false },        /* c.sd s1, 8(a5) */
	{ 0x4292, 4, 5, 2, false, true },        /* c.lwsp t0, 4(sp) */
	{ 0x68a2, 8, 17, 2, false, false },      /* c.ldsp a7, 8(sp) */
	{ 0xc272, 4, 28, 2, true, false },       /* c.swsp t3, 4(sp) */
	{ 0xe46e, 8, 27, 2, true, false },       /* c.sdsp s11, 8(sp) */
};

void test_riscv_insn_loads_and_stores(void)
{
	for (unsigned i = 0; i < ARRAY_SIZE(loads_and_stores); i++) {
		const struct decoded *d = &loads_and_stores[i];
		struct mmio_insn m;
		CHECK(riscv_decode_mmio(d->insn, &m));
		CHECK_EQ(m.size, d->size);
		CHECK_EQ(m.reg, d->reg);
		CHECK_EQ(m.length, d->length);
		CHECK_EQ(m.write, d->write);
		CHECK_EQ(m.sign_extend, d->sign_extend);
	}
}

void test_riscv_insn_refuses_other_accesses(void)
{
	static const uint32_t others[] = {
		0x0005a507, /* flw fa0, 0(a1) */
		0x00b6252f, /* amoadd.w a0, a1, (a2) */
		0x2588,     /* c.fld fa0, 8(a1) */
		0x0005f503, /* LOAD with funct3 7: reserved */
		0x0005c023, /* STORE with funct3 4 */
		0x4002,     /* c.lwsp zero: reserved */
		0x0001,     /* c.nop */
		0x10500073, /* wfi */
		0,
	};
	struct mmio_insn m;

	for (unsigned i = 0; i < ARRAY_SIZE(others); i++)
		CHECK(!riscv_decode_mmio(others[i], &m));
}

/* htinst: the guest's access as a 32-bit instruction, bit 1 clear when it was compressed. */
void test_riscv_insn_transformed(void)
{
	struct mmio_insn m;

	CHECK(riscv_decode_transformed(0x01202023, &m)); /* sw s2, 0(x0) */
	CHECK(m.write && m.size == 4 && m.reg == 18 && m.length == 4);
	CHECK(riscv_decode_transformed(0x2601, &m));     /* c.lw a2 as lw a2, 0(x0), bit 1 clear */
	CHECK(!m.write && m.size == 4 && m.reg == 12 && m.length == 2 && m.sign_extend);
	CHECK(!riscv_decode_transformed(0, &m));          /* none given */
	CHECK(!riscv_decode_transformed(0x2600, &m));     /* bit 0 clear: not a transformed access */
	CHECK(!riscv_decode_transformed(0x00000073, &m)); /* ecall */
}

/*
 * A guest page fault of the guest's own page-table walk (a PTE outside its memory) carries a
 * pseudoinstruction: never a load or store to emulate, nor a reason to read the guest's
 * instruction (its own access never reached the G-stage).
 */
void test_riscv_insn_tinst_kinds(void)
{
	CHECK_EQ(riscv_tinst_kind(0), TINST_NONE);
	CHECK_EQ(riscv_tinst_kind(0x01202023), TINST_ACCESS);  /* sw s2, 0(x0) */
	CHECK_EQ(riscv_tinst_kind(0x2601), TINST_ACCESS);      /* c.lw, transformed */
	CHECK_EQ(riscv_tinst_kind(0x00002000), TINST_PAGE_WALK); /* Sv32 PTE read */
	CHECK_EQ(riscv_tinst_kind(0x00003000), TINST_PAGE_WALK); /* Sv39/48/57 PTE read */
	CHECK_EQ(riscv_tinst_kind(0x00002020), TINST_PAGE_WALK); /* A/D update, 32-bit */
	CHECK_EQ(riscv_tinst_kind(0x00003020), TINST_PAGE_WALK); /* A/D update, 64-bit */
	CHECK_EQ(riscv_tinst_kind(0x00001000), TINST_OTHER);     /* reserved */
	CHECK_EQ(riscv_tinst_kind(0x0000000a), TINST_OTHER);
	CHECK_EQ(riscv_tinst_kind(0x100002000ull), TINST_OTHER); /* bits above 31 */
}

void test_riscv_insn_load_results(void)
{
	struct mmio_insn m = { 1, 10, 4, false, true };

	CHECK_EQ(riscv_load_result(&m, 0x80), 0xffffffffffffff80ull);
	m.sign_extend = false;
	CHECK_EQ(riscv_load_result(&m, 0x1ff), 0xff);
	m = (struct mmio_insn){ 4, 10, 4, false, true };
	CHECK_EQ(riscv_load_result(&m, 0x80000000), 0xffffffff80000000ull);
	CHECK_EQ(riscv_load_result(&m, 0x7fffffff), 0x7fffffff);
	m.size = 8;
	CHECK_EQ(riscv_load_result(&m, 0x8000000000000000ull), 0x8000000000000000ull);
}
