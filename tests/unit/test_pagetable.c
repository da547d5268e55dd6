/* SPDX-License-Identifier: MIT */
/*
 * The generic walker (core/pagetable.c) with this binary's port's encoders (<arch/pte.h>), on
 * two formats: arm64's 3-level 4 KiB granule with 1 GiB and 2 MiB blocks, and riscv64's
 * Sv39x4 (an 11-bit root of 16 KiB, 2 MiB leaves at most, as its G-stage).
 */
#include <string.h>
#include <tern/pagetable.h>
#include "check.h"
#include "tests.h"

/* A leaf the port reads as one: riscv64 wants V and a permission in its attributes, arm64 none. */
#ifdef PTE_R
#define ATTRS (PTE_V | PTE_R | PTE_W)
#else
#define ATTRS PTE_AF
#endif

#define POOL_PAGES 8u

static const struct pt_format arm64_like = {
	.levels = 3, .bits = { 9, 9, 9 }, .page_shift = 12, .block_levels = (1u << 0) | (1u << 1),
};
static const struct pt_format sv39x4_like = {
	.levels = 3, .bits = { 11, 9, 9 }, .page_shift = 12, .block_levels = 1u << 1,
};

static pte_t root[2048] __attribute__((aligned(16384)));
static pte_t pages[POOL_PAGES][PT_PAGE_ENTRIES] __attribute__((aligned(4096)));
static struct pt_pool pool;

static void tables_reset(uint32_t total)
{
	memset(root, 0, sizeof(root));
	pool = (struct pt_pool){ pages, total, 0 };
}

/* Walk back: the pa `ipa` translates to and the level of its leaf; false if it is unmapped. */
static bool translate(const struct pt_format *f, uint64_t ipa, uint64_t *pa, unsigned *level)
{
	unsigned shift = f->page_shift;
	const pte_t *table = root;

	for (unsigned l = 0; l < f->levels; l++)
		shift += f->bits[l];
	for (unsigned l = 0; l < f->levels; l++) {
		shift -= f->bits[l];
		pte_t e = table[(ipa >> shift) & ((1ull << f->bits[l]) - 1)];
		if (!arch_pte_valid(e))
			return false;
		if (l + 1u == f->levels || !arch_pte_is_table(e)) {
			*pa = arch_pte_addr(e) + (ipa & ((1ull << shift) - 1));
			*level = l;
			return true;
		}
		table = (const pte_t *)(uintptr_t)arch_pte_addr(e);
	}
	return false;
}

/* Every page of [ipa, ipa + size) translates to its pa; the first one's leaf is at `level`. */
static bool maps(const struct pt_format *f, uint64_t ipa, uint64_t pa, uint64_t size, unsigned level)
{
	uint64_t got;
	unsigned got_level;

	for (uint64_t off = 0; off < size; off += 0x1000) {
		if (!translate(f, ipa + off, &got, &got_level) || got != pa + off)
			return false;
		if (off == 0 && got_level != level)
			return false;
	}
	return true;
}

static bool unmapped(const struct pt_format *f, uint64_t ipa)
{
	uint64_t pa;
	unsigned level;

	return !translate(f, ipa, &pa, &level);
}

/* 1 GiB, then 2 MiB, then 4 KiB entries as alignment allows, each translating back. */
void test_pagetable_largest_aligned_blocks(void)
{
	const uint64_t ipa = 1ull << 30, pa = 3ull << 30;
	const uint64_t size = (1ull << 30) + (4ull << 20) + 0x3000;

	tables_reset(POOL_PAGES);
	CHECK(pt_map(&arm64_like, &pool, root, ipa, pa, size, ATTRS));
	CHECK(maps(&arm64_like, ipa, pa, 1ull << 30, 0));
	CHECK(maps(&arm64_like, ipa + (1ull << 30), pa + (1ull << 30), 4ull << 20, 1));
	CHECK(maps(&arm64_like, ipa + (1ull << 30) + (2ull << 20), pa + (1ull << 30) + (2ull << 20), 2ull << 20, 1));
	CHECK(maps(&arm64_like, ipa + (1ull << 30) + (4ull << 20), pa + (1ull << 30) + (4ull << 20), 0x3000, 2));
	CHECK(unmapped(&arm64_like, ipa + size));
	CHECK(unmapped(&arm64_like, ipa - 0x1000));
	/* A level-1 table for the second GiB, a level-2 one for its pages: the GiB block needs none. */
	CHECK_EQ(pool.used, 2);
}

/* A pa aligned other than its ipa gets pages only; a run of them crosses into the next table. */
void test_pagetable_pages_where_unaligned(void)
{
	const uint64_t ipa = 2ull << 20;

	tables_reset(POOL_PAGES);
	CHECK(pt_map(&arm64_like, &pool, root, ipa, (8ull << 20) + 0x1000, 4ull << 20, ATTRS));
	CHECK(maps(&arm64_like, ipa, (8ull << 20) + 0x1000, 4ull << 20, 2));
	CHECK_EQ(pool.used, 3); /* level 1, and two level-2 tables */
	/* An ipa off the block boundary with an aligned pa: pages too. */
	CHECK(pt_map(&arm64_like, &pool, root, (64ull << 20) + 0x1000, 32ull << 20, 2ull << 20, ATTRS));
	CHECK(maps(&arm64_like, (64ull << 20) + 0x1000, 32ull << 20, 2ull << 20, 2));
	CHECK(unmapped(&arm64_like, 64ull << 20));
	CHECK_EQ(pool.used, 5);
}

/* Sv39x4's 11-bit root: 2 MiB leaves where its format allows no larger, up to the input range's end. */
void test_pagetable_sv39x4_root(void)
{
	const uint64_t top = 1ull << 41;

	tables_reset(POOL_PAGES);
	CHECK(pt_map(&sv39x4_like, &pool, root, 0x80000000ull, 0x80000000ull, 1ull << 30, ATTRS));
	CHECK(maps(&sv39x4_like, 0x80000000ull, 0x80000000ull, 1ull << 30, 1));
	CHECK_EQ(pool.used, 1);
	CHECK(pt_map(&sv39x4_like, &pool, root, top - (2ull << 20) - 0x1000, 0x10000000ull - 0x1000,
		     (2ull << 20) + 0x1000, ATTRS));
	CHECK(maps(&sv39x4_like, top - (2ull << 20) - 0x1000, 0x10000000ull - 0x1000, 0x1000, 2));
	CHECK(maps(&sv39x4_like, top - (2ull << 20), 0x10000000ull, 2ull << 20, 1));
	CHECK(arch_pte_valid(root[2047]));
	CHECK_EQ(pool.used, 3);
}

/* Outside the input range, or wrapping: refused, nothing mapped, no page taken. */
void test_pagetable_outside_input_range(void)
{
	tables_reset(POOL_PAGES);
	CHECK(!pt_map(&sv39x4_like, &pool, root, (1ull << 41) - 0x1000, 0, 0x2000, ATTRS));
	CHECK(!pt_map(&arm64_like, &pool, root, 1ull << 39, 0, 0x1000, ATTRS));
	CHECK(!pt_map(&arm64_like, &pool, root, ~0xfffull, 0, 0x2000, ATTRS));
	CHECK_EQ(pool.used, 0);
	for (unsigned i = 0; i < 2048; i++)
		CHECK_EQ(root[i], 0);
	/* Its last page is inside. */
	CHECK(pt_map(&arm64_like, &pool, root, (1ull << 39) - 0x1000, 0x5000, 0x1000, ATTRS));
	CHECK(maps(&arm64_like, (1ull << 39) - 0x1000, 0x5000, 0x1000, 2));
}

/* An empty pool fails the map; the pages it had stay handed out (only boot allocates). */
void test_pagetable_pool_exhaustion(void)
{
	tables_reset(1);
	CHECK(!pt_map(&arm64_like, &pool, root, 0, 0, 0x1000, ATTRS));
	CHECK_EQ(pool.used, 1);
	CHECK(pt_alloc(&pool) == NULL);
	/* A block at level 1 needs the one table only. */
	tables_reset(1);
	CHECK(pt_map(&arm64_like, &pool, root, 2ull << 20, 4ull << 20, 2ull << 20, ATTRS));
	CHECK(!pt_map(&arm64_like, &pool, root, 0, 0, 0x1000, ATTRS));
	CHECK(maps(&arm64_like, 2ull << 20, 4ull << 20, 2ull << 20, 1));
	/* A page handed out is cleared. */
	tables_reset(POOL_PAGES);
	memset(pages[0], 0xff, sizeof(pages[0]));
	pte_t *t = pt_alloc(&pool);
	CHECK(t == pages[0]);
	for (unsigned i = 0; i < PT_PAGE_ENTRIES; i++)
		CHECK_EQ(t[i], 0);
}

/* A block never replaces the table below it; a page inside a block cannot be mapped. */
void test_pagetable_overlaps(void)
{
	tables_reset(POOL_PAGES);
	CHECK(pt_map(&arm64_like, &pool, root, 0x1000, 0x1000, 0x1000, ATTRS));
	CHECK(pt_map(&arm64_like, &pool, root, 0, 4ull << 20, 4ull << 20, ATTRS));
	CHECK(maps(&arm64_like, 0, 4ull << 20, 2ull << 20, 2));      /* pages over the table */
	CHECK(maps(&arm64_like, 2ull << 20, 6ull << 20, 2ull << 20, 1)); /* a block after it */
	CHECK_EQ(pool.used, 2);
	CHECK(!pt_map(&arm64_like, &pool, root, (2ull << 20) + 0x1000, 0, 0x1000, ATTRS));
	CHECK_EQ(pool.used, 2);
}
