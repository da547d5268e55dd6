/* SPDX-License-Identifier: MIT */
/*
 * The firmware's device tree: the board's RAM read from it, and every malformed tree refused.
 * Offsets in the reasons are the tree's own (the structure block starts at 0x38 here).
 */
#include <stdlib.h>
#include <string.h>
#include <tern/fdt.h>
#include "check.h"
#include "fake.h"
#include "tests.h"

#define BASE 0x40000000ull

static struct fdtb b;
static uint8_t tree[8192];
static size_t tree_len;
static char err[160];
static uint64_t size;

/* The tree's bytes, exactly as many as it has: ASan catches a read past them. */
static int read_tree(const uint8_t *t, size_t n, uint64_t base)
{
	uint8_t *copy = malloc(n ? n : 1);
	int rc;

	memcpy(copy, t, n);
	err[0] = 0;
	size = 0xdead;
	rc = fdt_ram_from(copy, n, base, &size, err, sizeof(err));
	free(copy);
	return rc;
}

static int expect_refused(const char *fragment)
{
	CHECK_EQ(read_tree(tree, tree_len, BASE), -1);
	if (!strstr(err, fragment)) {
		fprintf(stderr, "  error was \"%s\", wanted \"%s\"\n", err, fragment);
		return 0;
	}
	return 1;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A root with the given cell sizes (0: the property left out) and its first node opened. */
static void root(uint32_t address_cells, uint32_t size_cells)
{
	fdtb_begin(&b);
	fdtb_node(&b, "");
	if (address_cells)
		fdtb_prop_u32(&b, "#address-cells", address_cells);
	if (size_cells)
		fdtb_prop_u32(&b, "#size-cells", size_cells);
}

static void memory_node(const char *name, const uint64_t *reg, unsigned n)
{
	fdtb_node(&b, name);
	fdtb_prop(&b, "device_type", "memory", 7);
	fdtb_prop_cells64(&b, "reg", reg, n);
	fdtb_end_node(&b);
}

static void finish(void)
{
	fdtb_end_node(&b);
	tree_len = fdtb_finish(&b, tree, sizeof(tree));
}

void test_fdt_reads_the_board_memory(void)
{
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 3ull << 30);
	CHECK(tree_len > 0);
	CHECK_EQ(read_tree(tree, tree_len, BASE), 0);
	CHECK_EQ(size, 3ull << 30);
	/* From inside a range: what is left of it; below every range: none. */
	CHECK_EQ(read_tree(tree, tree_len, BASE + (1ull << 30)), 0);
	CHECK_EQ(size, 2ull << 30);
	CHECK_EQ(read_tree(tree, tree_len, 0x80000000ull << 4), 0);
	CHECK_EQ(size, 0);
	CHECK_EQ(read_tree(tree, tree_len, BASE - 0x1000), 0);
	CHECK_EQ(size, 0);

	/* Ranges that touch, in any order and over several nodes, are one; a gap ends it. */
	static const uint64_t high[] = { BASE + 0x2000000, 0x1000000, BASE + 0x8000000, 0x1000000 };
	static const uint64_t low[] = { BASE, 0x2000000 };
	root(2, 2);
	memory_node("memory@42000000", high, 4);
	fdtb_node(&b, "cpus");
	fdtb_node(&b, "cpu@0");
	fdtb_prop(&b, "reg", "\0\0\0\0", 4);
	fdtb_end_node(&b);
	fdtb_end_node(&b);
	memory_node("memory@40000000", low, 2);
	finish();
	CHECK_EQ(read_tree(tree, tree_len, BASE), 0);
	CHECK_EQ(size, 0x3000000);

	/* A node without device_type "memory" is not memory, whatever its name or reg. */
	root(2, 2);
	fdtb_node(&b, "memory@40000000");
	fdtb_prop_cells64(&b, "reg", low, 2);
	fdtb_prop(&b, "device_type", "memoryx", 8);
	fdtb_end_node(&b);
	finish();
	CHECK_EQ(read_tree(tree, tree_len, BASE), 0);
	CHECK_EQ(size, 0);

	/* One-cell addresses and sizes; the specification's defaults (2 and 1) when left out. */
	root(1, 1);
	fdtb_node(&b, "memory@40000000");
	fdtb_prop(&b, "device_type", "memory", 7);
	fdtb_prop(&b, "reg", "\x40\0\0\0\x10\0\0\0", 8);
	fdtb_end_node(&b);
	finish();
	CHECK_EQ(read_tree(tree, tree_len, BASE), 0);
	CHECK_EQ(size, 0x10000000);
	root(0, 0);
	fdtb_node(&b, "memory@40000000");
	fdtb_prop(&b, "device_type", "memory", 7);
	fdtb_prop(&b, "reg", "\0\0\0\0\x40\0\0\0\x20\0\0\0", 12);
	fdtb_end_node(&b);
	finish();
	CHECK_EQ(read_tree(tree, tree_len, BASE), 0);
	CHECK_EQ(size, 0x20000000);
}

void test_fdt_refuses_a_malformed_header(void)
{
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	CHECK_EQ(read_tree(tree, 39, BASE), -1);
	CHECK(strstr(err, "smaller than a header") != NULL);
	/* Every truncation: the header's size is more than there is. */
	for (size_t n = 40; n < tree_len; n++) {
		CHECK_EQ(read_tree(tree, n, BASE), -1);
		CHECK(strstr(err, "total size") != NULL);
	}
	put32(tree, 0xd00dfeee);
	CHECK(expect_refused("none (magic 0xd00dfeee)"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + 4, (uint32_t)FDT_MAX_SIZE + 8);
	CHECK_EQ(read_tree(tree, sizeof(tree), BASE), -1);
	CHECK(strstr(err, "total size 0x200008") != NULL);
	put32(tree + 4, 8);
	CHECK(expect_refused("total size 0x8"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + 20, 16);
	CHECK(expect_refused("version 16"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + 24, 18);
	CHECK(expect_refused("compatible with 18"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + 8, 0x14);
	CHECK(expect_refused("structure block 0x14+"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + 8, 0x3a);
	CHECK(expect_refused("structure block 0x3a+"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + 36, (uint32_t)tree_len - get32(tree + 8) + 4);
	CHECK(expect_refused("structure block 0x38+"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + 32, 0xffffffff);
	CHECK(expect_refused("strings block"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + 12, (uint32_t)tree_len + 1);
	CHECK(expect_refused("strings block"));
}

void test_fdt_refuses_a_malformed_structure(void)
{
	static const uint64_t reg[] = { BASE, 0x1000000 };
	uint32_t off_struct, off_strings;

	/* A property whose name is past the strings block, or runs off its end. */
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	off_struct = get32(tree + 8);
	off_strings = get32(tree + 12);
	CHECK_EQ(get32(tree + off_struct + 8), 3);   /* the root's first property */
	put32(tree + off_struct + 16, get32(tree + 32));
	CHECK(expect_refused("property at 0x40: its name is not in the strings block"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	tree[tree_len - 1] = 'x';                      /* the last name's NUL */
	put32(tree + off_struct + 16, get32(tree + 32) - 3);
	CHECK(expect_refused("the strings block does not end with a NUL"));
	(void)off_strings;
	/* ... or whose value runs past the structure block. */
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + off_struct + 12, 0xfffffffc);
	CHECK(expect_refused("property at 0x40 runs past the structure block"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + off_struct + 12, get32(tree + 36) - 20 + 1);
	CHECK(expect_refused("runs past the structure block"));
	/* A node name without its NUL before the block ends. */
	fdtb_begin(&b);
	fdtb_node(&b, "");
	fdtb_node(&b, "abcdefg");
	tree_len = fdtb_finish(&b, tree, sizeof(tree));
	put32(tree + 36, 0x8 + 4 + 7);                 /* ends before "abcdefg"'s NUL */
	CHECK(expect_refused("node name at 0x40 runs past the structure block"));
	/* Unbalanced nodes, a second root, no FDT_END, a token nobody knows. */
	fdtb_begin(&b);
	fdtb_node(&b, "");
	tree_len = fdtb_finish(&b, tree, sizeof(tree));
	CHECK(expect_refused("FDT_END at 0x40 inside a node or before one"));
	fdtb_begin(&b);
	tree_len = fdtb_finish(&b, tree, sizeof(tree));
	CHECK(expect_refused("FDT_END at 0x38 inside a node or before one"));
	root(2, 2);
	fdtb_end_node(&b);
	fdtb_end_node(&b);
	tree_len = fdtb_finish(&b, tree, sizeof(tree));
	CHECK(expect_refused("closes no node"));
	root(2, 2);
	fdtb_end_node(&b);
	fdtb_node(&b, "");
	fdtb_end_node(&b);
	tree_len = fdtb_finish(&b, tree, sizeof(tree));
	CHECK(expect_refused("a second root"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + 36, get32(tree + 36) - 4);         /* FDT_END cut off */
	CHECK(expect_refused("the structure block ends without FDT_END"));
	tree_len = fake_fdt_board(tree, sizeof(tree), BASE, 1ull << 30);
	put32(tree + off_struct, 5);
	CHECK(expect_refused("token 0x5 at 0x38"));
	fdtb_begin(&b);
	fdtb_prop_u32(&b, "#size-cells", 2);
	tree_len = fdtb_finish(&b, tree, sizeof(tree));
	CHECK(expect_refused("property at 0x38 outside any node"));
	/* Nodes nested deeper than the walk keeps. */
	fdtb_begin(&b);
	for (int d = 0; d < 17; d++)
		fdtb_node(&b, "n");
	tree_len = fdtb_finish(&b, tree, sizeof(tree));
	CHECK(expect_refused("deeper than 16"));
	/* NOPs are skipped. */
	fdtb_begin(&b);
	put32(b.st, 4);
	b.len = 4;
	fdtb_node(&b, "");
	fdtb_prop_u32(&b, "#size-cells", 2);
	memory_node("memory@40000000", reg, 2);
	fdtb_end_node(&b);
	tree_len = fdtb_finish(&b, tree, sizeof(tree));
	CHECK_EQ(read_tree(tree, tree_len, BASE), 0);
	CHECK_EQ(size, 0x1000000);
}

void test_fdt_refuses_bad_memory_nodes(void)
{
	static const uint64_t reg[] = { BASE, 0x1000000 };
	static const uint64_t wraps[] = { 0xfffffffffffff000ull, 0x2000 };
	uint64_t many[2 * (FDT_MAX_RANGES + 1)];

	/* Cell sizes the reader cannot hold, or that come after nodes it already read. */
	root(3, 2);
	finish();
	CHECK(expect_refused("the root's #address-cells is not 1 or 2 cells"));
	root(2, 0);
	fdtb_prop(&b, "#size-cells", "\0\0", 2);
	finish();
	CHECK(expect_refused("the root's #size-cells is not 1 or 2 cells"));
	root(2, 2);
	memory_node("memory@40000000", reg, 2);
	fdtb_prop_u32(&b, "#size-cells", 1);
	finish();
	CHECK(expect_refused("the root's #size-cells after its nodes"));
	/* A reg that is not whole entries, none at all, a range that wraps, too many ranges. */
	root(2, 2);
	fdtb_node(&b, "memory@40000000");
	fdtb_prop(&b, "device_type", "memory", 7);
	fdtb_prop(&b, "reg", "\0\0\0\0\x40\0\0\0\0\0\0\0", 12);
	fdtb_end_node(&b);
	finish();
	CHECK(expect_refused("a memory node's reg is 12 bytes (entries of 16)"));
	root(2, 2);
	fdtb_node(&b, "memory@40000000");
	fdtb_prop(&b, "device_type", "memory", 7);
	fdtb_end_node(&b);
	finish();
	CHECK(expect_refused("a memory node's reg is 0 bytes"));
	root(2, 2);
	memory_node("memory@0", wraps, 2);
	finish();
	CHECK(expect_refused("memory range 0xfffffffffffff000+0x2000 wraps"));
	for (unsigned i = 0; i <= FDT_MAX_RANGES; i++) {
		many[2 * i] = BASE + i * 0x100000ull;
		many[2 * i + 1] = 0x100000;
	}
	root(2, 2);
	memory_node("memory@40000000", many, 2 * FDT_MAX_RANGES);
	finish();
	CHECK_EQ(read_tree(tree, tree_len, BASE), 0);
	CHECK_EQ(size, FDT_MAX_RANGES * 0x100000ull);
	root(2, 2);
	memory_node("memory@40000000", many, 2 * FDT_MAX_RANGES);
	memory_node("memory@41000000", many + 2 * FDT_MAX_RANGES, 2);
	finish();
	CHECK(expect_refused("more than 16 memory ranges"));
}

/* Any one bit of a tree flipped: refused or read, never a read outside it (ASan). */
void test_fdt_survives_every_bit_flip(void)
{
	uint8_t good[512];
	size_t n = fake_fdt_board(good, sizeof(good), BASE, 1ull << 30);
	unsigned refused = 0, read = 0;

	CHECK(n > 0);
	for (size_t i = 0; i < n; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			memcpy(tree, good, n);
			tree[i] ^= (uint8_t)(1u << bit);
			if (read_tree(tree, n, BASE)) {
				refused++;
				CHECK(err[0] && strlen(err) < sizeof(err) - 1 && !strchr(err, '\n'));
			} else {
				read++;
				CHECK(size <= 1ull << 30 || size == 0 || tree[i] != good[i]);
			}
		}
	}
	CHECK(refused > 0 && read > 0);
}
