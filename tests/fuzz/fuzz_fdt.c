/* SPDX-License-Identifier: MIT */
/*
 * The firmware's device tree reader (core/fdt.c): a fuzzed tree through fdt_ram_from, as
 * tern_main reads the board's RAM size from it, from the arm64 and the riscv64 board's RAM base.
 *
 * Oracle: exactly the input's bytes are readable (ASan); a refusal is one line; an accepted tree
 * gives a size that does not wrap, the same whichever base it is asked from first, and one
 * made of ranges the tree really has: a base inside the answer reads the rest of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tern/fdt.h>
#include <tern/lib.h>

#define CHECK(cond) do {                                                        \
	if (!(cond)) {                                                          \
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);       \
		abort();                                                        \
	}                                                                       \
} while (0)

static const uint64_t bases[] = { 0x40000000ull, 0x80000000ull };

static void one_line(const char *err, size_t len)
{
	size_t n = strnlen(err, len);

	CHECK(n > 0 && n < len);
	CHECK(!memchr(err, '\n', n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly `size` bytes, so that reading past the tree is caught. */
	void *tree = malloc(size ? size : 1);
	char err[160];
	uint64_t ram, again, rest;

	memcpy(tree, data, size);
	for (unsigned i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		memset(err, 0x55, sizeof(err));
		if (fdt_ram_from(tree, size, bases[i], &ram, err, sizeof(err))) {
			one_line(err, sizeof(err));
			continue;
		}
		CHECK(ram <= UINT64_MAX - bases[i]);
		CHECK(fdt_ram_from(tree, size, bases[i], &again, err, sizeof(err)) == 0 && again == ram);
		if (ram > 1) {
			uint64_t half = ram / 2;
			CHECK(fdt_ram_from(tree, size, bases[i] + half, &rest, err, sizeof(err)) == 0);
			CHECK(rest == ram - half);
		}
	}
	free(tree);
	return 0;
}
