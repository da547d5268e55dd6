/* SPDX-License-Identifier: MIT */
/*
 * A flattened device tree writer for tests (Devicetree Specification v0.4, chapter 5): the
 * board's tree the fake boot hands tern_main, and trees unit tests take apart.
 */
#include <string.h>
#include "fake.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void fdtb_begin(struct fdtb *b)
{
	memset(b, 0, sizeof(*b));
}

static void token(struct fdtb *b, uint32_t t)
{
	if (b->len + 4 <= sizeof(b->st)) {
		put32(b->st + b->len, t);
		b->len += 4;
	}
}

static void bytes(struct fdtb *b, const void *data, size_t n)
{
	size_t padded = (n + 3) & ~(size_t)3;

	if (b->len + padded <= sizeof(b->st)) {
		memset(b->st + b->len, 0, padded);
		memcpy(b->st + b->len, data, n);
		b->len += (uint32_t)padded;
	}
}

void fdtb_node(struct fdtb *b, const char *name)
{
	token(b, 1);
	bytes(b, name, strlen(name) + 1);
}

void fdtb_end_node(struct fdtb *b)
{
	token(b, 2);
}

void fdtb_prop(struct fdtb *b, const char *name, const void *value, uint32_t len)
{
	uint32_t off = 0;
	uint8_t head[8];

	/* Names are shared, as dtc does. */
	while (off < b->strings_len && strcmp(b->strings + off, name))
		off += (uint32_t)strlen(b->strings + off) + 1;
	if (off == b->strings_len && off + strlen(name) + 1 <= sizeof(b->strings)) {
		strcpy(b->strings + off, name);
		b->strings_len += (uint32_t)strlen(name) + 1;
	}
	token(b, 3);
	put32(head, len);
	put32(head + 4, off);
	bytes(b, head, 8);
	bytes(b, value, len);
}

void fdtb_prop_u32(struct fdtb *b, const char *name, uint32_t v)
{
	uint8_t cell[4];

	put32(cell, v);
	fdtb_prop(b, name, cell, 4);
}

void fdtb_prop_cells64(struct fdtb *b, const char *name, const uint64_t *v, unsigned n)
{
	uint8_t cells[8 * 64];

	if (n > 64)
		n = 64;
	for (unsigned i = 0; i < n; i++) {
		put32(cells + 8 * i, (uint32_t)(v[i] >> 32));
		put32(cells + 8 * i + 4, (uint32_t)v[i]);
	}
	fdtb_prop(b, name, cells, 8 * n);
}

size_t fdtb_finish(struct fdtb *b, uint8_t *out, size_t cap)
{
	const uint32_t header = 40, rsvmap = 16;
	uint32_t off_struct = header + rsvmap;
	uint32_t off_strings = off_struct + b->len + 4;
	uint32_t total = off_strings + b->strings_len;

	if (total > cap)
		return 0;
	memset(out, 0, total);
	put32(out, 0xd00dfeedu);
	put32(out + 4, total);
	put32(out + 8, off_struct);
	put32(out + 12, off_strings);
	put32(out + 16, header);           /* the memory reservation map: one empty entry */
	put32(out + 20, 17);
	put32(out + 24, 16);
	put32(out + 32, b->strings_len);
	put32(out + 36, b->len + 4);
	memcpy(out + off_struct, b->st, b->len);
	put32(out + off_struct + b->len, 9);
	memcpy(out + off_strings, b->strings, b->strings_len);
	return total;
}

size_t fake_fdt_board(uint8_t *out, size_t cap, uint64_t ram_base, uint64_t ram_size)
{
	static struct fdtb b;
	const uint64_t reg[2] = { ram_base, ram_size };

	fdtb_begin(&b);
	fdtb_node(&b, "");
	fdtb_prop_u32(&b, "#address-cells", 2);
	fdtb_prop_u32(&b, "#size-cells", 2);
	fdtb_prop(&b, "compatible", "linux,dummy-virt", 17);
	fdtb_node(&b, "chosen");
	fdtb_prop(&b, "stdout-path", "/pl011@9000000", 15);
	fdtb_end_node(&b);
	fdtb_node(&b, "memory@40000000");
	fdtb_prop_cells64(&b, "reg", reg, 2);
	fdtb_prop(&b, "device_type", "memory", 7);
	fdtb_end_node(&b);
	fdtb_end_node(&b);
	return fdtb_finish(&b, out, cap);
}
