/* SPDX-License-Identifier: MIT */
/*
 * The firmware's flattened device tree, read for its memory nodes only.  A tree is walked once,
 * front to back; every token, length and string offset is checked against the block it must lie
 * in before anything behind it is read, and the walk always moves forward, so a malformed tree
 * is refused, never followed.
 */
#include <tern/fdt.h>
#include <tern/lib.h>

#define FDT_MAGIC        0xd00dfeedu
#define FDT_HEADER_SIZE  40u
#define FDT_VERSION      17u        /* the first with the structure block's size */
#define FDT_BEGIN_NODE   1u
#define FDT_END_NODE     2u
#define FDT_PROP         3u
#define FDT_NOP          4u
#define FDT_END          9u
#define FDT_MAX_DEPTH    16u

static int fdt_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fdt_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * A big-endian cell: every one the walk reads is 4-byte aligned (the tree is, and the walk
 * moves in whole cells), so one load and a byte swap, not four loads (the boot reads hundreds).
 */
static uint32_t be32(const uint8_t *p)
{
	uint32_t v;

	(void)__builtin_memcpy(&v, __builtin_assume_aligned(p, 4), sizeof(v));
	return __builtin_bswap32(v);
}

/*
 * A node's name from `pos` with its padding: the bytes up to the next 4-byte boundary after
 * its NUL, or 0 if no NUL comes before `end`.  Word by word (a word has a zero byte iff
 * (w - 0x01010101) & ~w & 0x80808080): QEMU's trees have dozens of nodes.
 */
static uint32_t name_span(const uint8_t *b, uint32_t pos, uint32_t end)
{
	for (uint32_t at = pos; end - at >= 4u; at += 4u) {
		uint32_t w;
		(void)__builtin_memcpy(&w, __builtin_assume_aligned(&b[at], 4), sizeof(w));
		if (((w - 0x01010101u) & ~w & 0x80808080u) != 0u)
			return at + 4u - pos;
	}
	return 0;
}

/* `cells` (1 or 2) big-endian cells at p. */
static uint64_t cells_value(const uint8_t *p, uint32_t cells)
{
	return cells == 2u ? ((uint64_t)be32(p) << 32) | be32(&p[4]) : be32(p);
}

/* What the walk keeps: the root's cell sizes, the current memory node, the ranges found. */
struct fdt_state {
	uint32_t address_cells;
	uint32_t size_cells;
	bool root_has_nodes;        /* the root's properties are all read */
	bool memory;                /* the root's child being read is a memory node ... */
	const uint8_t *reg;         /* ... with this reg */
	uint32_t reg_len;
	uint32_t num_ranges;
	uint64_t range_base[FDT_MAX_RANGES];
	uint64_t range_size[FDT_MAX_RANGES];
};

static int add_ranges(struct fdt_state *s, char *err, size_t errlen)
{
	uint32_t entry = 4u * (s->address_cells + s->size_cells);

	if (!s->reg || s->reg_len == 0u || s->reg_len % entry)
		return fdt_fail(err, errlen, "a memory node's reg is %u bytes (entries of %u)", s->reg_len,
			    entry);
	for (uint32_t off = 0; off < s->reg_len; off += entry) {
		uint32_t size_at = off + (4u * s->address_cells);
		uint64_t base = cells_value(&s->reg[off], s->address_cells);
		uint64_t size = cells_value(&s->reg[size_at], s->size_cells);
		if (size == 0u)
			continue;
		if (base > UINT64_MAX - size)
			return fdt_fail(err, errlen, "memory range 0x%llx+0x%llx wraps",
				    (unsigned long long)base, (unsigned long long)size);
		if (s->num_ranges == FDT_MAX_RANGES)
			return fdt_fail(err, errlen, "more than %u memory ranges", FDT_MAX_RANGES);
		s->range_base[s->num_ranges] = base;
		s->range_size[s->num_ranges++] = size;
	}
	return 0;
}

/* A property of the root (the cell sizes) or of one of its children (a memory node's). */
static int property(struct fdt_state *s, uint32_t depth, const char *name, const uint8_t *value,
		    uint32_t len, char *err, size_t errlen)
{
	/* The first letter before the whole name: most properties are none of these. */
	bool root_cells = depth == 1u && name[0] == '#';
	bool address = root_cells && !strcmp(name, "#address-cells");

	if (root_cells && (address || !strcmp(name, "#size-cells"))) {
		/* The memory nodes already read were read with the old sizes. */
		if (s->root_has_nodes)
			return fdt_fail(err, errlen, "the root's %s after its nodes", name);
		uint32_t cells = len == 4u ? be32(value) : 0u;
		if (cells != 1u && cells != 2u)
			return fdt_fail(err, errlen, "the root's %s is not 1 or 2 cells", name);
		if (address)
			s->address_cells = cells;
		else
			s->size_cells = cells;
	} else if (depth == 2u && name[0] == 'd' && !strcmp(name, "device_type")) {
		s->memory = len == 7u && value[6] == 0u && !strcmp((const char *)value, "memory");
	} else if (depth == 2u && name[0] == 'r' && !strcmp(name, "reg")) {
		s->reg = value;
		s->reg_len = len;
	}
	return 0;
}

/* Walk the structure block [pos, end) of tree b (its strings at `strings`, `strings_size` bytes). */
static int walk(struct fdt_state *s, const uint8_t *b, uint32_t pos, uint32_t end,
		const uint8_t *strings, uint32_t strings_size, char *err, size_t errlen)
{
	uint32_t depth = 0;
	bool root_done = false;

	for (;;) {
		if (end - pos < 4u)
			return fdt_fail(err, errlen, "the structure block ends without FDT_END");
		uint32_t token = be32(&b[pos]);
		uint32_t at = pos;
		pos += 4u;
		if (token == FDT_NOP)
			continue;
		if (token == FDT_END) {
			if (depth != 0u || !root_done)
				return fdt_fail(err, errlen, "FDT_END at 0x%x inside a node or before one", at);
			return 0;
		}
		if (token == FDT_BEGIN_NODE) {
			uint32_t span = name_span(b, pos, end);
			if (span == 0u)
				return fdt_fail(err, errlen, "node name at 0x%x runs past the structure block", at);
			pos += span;
			if ((depth == 0u && root_done) || depth == FDT_MAX_DEPTH)
				return fdt_fail(err, errlen, "a second root or nodes deeper than %u at 0x%x",
					    FDT_MAX_DEPTH, at);
			depth++;
			if (depth == 2u) {
				s->root_has_nodes = true;
				s->memory = false;
				s->reg = NULL;
				s->reg_len = 0;
			}
		} else if (token == FDT_END_NODE) {
			if (depth == 0u)
				return fdt_fail(err, errlen, "FDT_END_NODE at 0x%x closes no node", at);
			if (depth == 2u && s->memory && add_ranges(s, err, errlen))
				return -1;
			depth--;
			root_done = depth == 0u;
		} else if (token == FDT_PROP) {
			if (end - pos < 8u)
				return fdt_fail(err, errlen, "property at 0x%x runs past the structure block", at);
			uint32_t len = be32(&b[pos]);
			uint32_t nameoff = be32(&b[pos + 4u]);
			pos += 8u;
			if (len > end - pos || ALIGN_UP((uint64_t)len, 4u) > end - pos)
				return fdt_fail(err, errlen, "property at 0x%x runs past the structure block", at);
			if (nameoff >= strings_size)
				return fdt_fail(err, errlen, "property at 0x%x: its name is not in the strings block",
					    at);
			if (depth == 0u)
				return fdt_fail(err, errlen, "property at 0x%x outside any node", at);
			/*
			 * Only the root's and its children's properties are read (QEMU's tree has
			 * hundreds of others, and every one read costs the boot).  A name ends inside
			 * the strings block: the block's last byte is a NUL (checked once).
			 */
			if (depth <= 2u && property(s, depth, (const char *)&strings[nameoff], &b[pos], len,
						    err, errlen))
				return -1;
			pos += (uint32_t)ALIGN_UP((uint64_t)len, 4u);
		} else {
			return fdt_fail(err, errlen, "token 0x%x at 0x%x", token, at);
		}
	}
}

int fdt_ram_from(const uint8_t *fdt, size_t avail, uint64_t base, uint64_t *size, char *err,
		 size_t errlen)
{
	const uint8_t *b = fdt;
	struct fdt_state s;

	if ((uintptr_t)fdt % 4u)
		return fdt_fail(err, errlen, "at %p, not 4-byte aligned", (const void *)fdt);
	if (avail < FDT_HEADER_SIZE)
		return fdt_fail(err, errlen, "%zu bytes, smaller than a header", avail);
	if (be32(b) != FDT_MAGIC)
		return fdt_fail(err, errlen, "none (magic 0x%x)", be32(b));
	uint32_t total = be32(&b[4]);
	uint32_t off_struct = be32(&b[8]);
	uint32_t off_strings = be32(&b[12]);
	uint32_t version = be32(&b[20]);
	uint32_t last_compatible = be32(&b[24]);
	uint32_t size_strings = be32(&b[32]);
	uint32_t size_struct = be32(&b[36]);
	if (total < FDT_HEADER_SIZE || total > avail || total > FDT_MAX_SIZE)
		return fdt_fail(err, errlen, "total size 0x%x (at most 0x%llx)", total,
			    (unsigned long long)(avail < FDT_MAX_SIZE ? avail : FDT_MAX_SIZE));
	if (version < FDT_VERSION || last_compatible > FDT_VERSION)
		return fdt_fail(err, errlen, "version %u (compatible with %u), this reads %u", version,
			    last_compatible, FDT_VERSION);
	if (off_struct < FDT_HEADER_SIZE || off_struct % 4u || off_struct > total ||
	    size_struct > total - off_struct)
		return fdt_fail(err, errlen, "structure block 0x%x+0x%x outside its 0x%x bytes", off_struct,
			    size_struct, total);
	if (off_strings > total || size_strings > total - off_strings)
		return fdt_fail(err, errlen, "strings block 0x%x+0x%x outside its 0x%x bytes", off_strings,
			    size_strings, total);
	/* So that every name starting in the block ends in it, with no name measured. */
	if (size_strings != 0u && b[off_strings + size_strings - 1u] != 0u)
		return fdt_fail(err, errlen, "the strings block does not end with a NUL");
	(void)memset(&s, 0, sizeof(s));
	/* The specification's defaults for a root without the properties. */
	s.address_cells = 2;
	s.size_cells = 1;
	if (walk(&s, b, off_struct, off_struct + size_struct, &b[off_strings], size_strings, err,
		 errlen))
		return -1;
	/* From base, as far as ranges that touch one another go. */
	uint64_t end = base;
	bool grew = true;
	while (grew) {
		grew = false;
		for (uint32_t r = 0; r < s.num_ranges; r++) {
			if (s.range_base[r] <= end && s.range_base[r] + s.range_size[r] > end) {
				end = s.range_base[r] + s.range_size[r];
				grew = true;
			}
		}
	}
	*size = end - base;
	return 0;
}
