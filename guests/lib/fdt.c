#include "fdt.h"

#define FDT_MAGIC       0xd00dfeed
#define FDT_BEGIN_NODE  1
#define FDT_END_NODE    2
#define FDT_PROP        3
#define FDT_NOP         4
#define FDT_END         9

struct fdt_header {
	uint32_t magic;
	uint32_t totalsize;
	uint32_t off_dt_struct;
	uint32_t off_dt_strings;
	uint32_t off_mem_rsvmap;
	uint32_t version;
	uint32_t last_comp_version;
	uint32_t boot_cpuid_phys;
	uint32_t size_dt_strings;
	uint32_t size_dt_struct;
};

static const uint8_t *fdt_struct;
static const uint8_t *fdt_struct_end;
static const char *fdt_strings;
static uintptr_t fdt_start;
static uint32_t fdt_totalsize;

uint32_t fdt_be32(const void *p)
{
	uint32_t raw = *(const uint32_t *)p;
	return __builtin_bswap32(raw);
}

bool fdt_init(const void *blob)
{
	const struct fdt_header *h = blob;

	fdt_struct = 0;
	fdt_start = 0;
	fdt_totalsize = 0;
	if (!blob || ((uintptr_t)blob & 7) || fdt_be32(&h->magic) != FDT_MAGIC)
		return false;
	fdt_start = (uintptr_t)blob;
	fdt_totalsize = fdt_be32(&h->totalsize);
	fdt_struct = (const uint8_t *)blob + fdt_be32(&h->off_dt_struct);
	fdt_struct_end = fdt_struct + fdt_be32(&h->size_dt_struct);
	fdt_strings = (const char *)blob + fdt_be32(&h->off_dt_strings);
	return true;
}

void fdt_extent(uintptr_t *start, uint32_t *size)
{
	*start = fdt_start;
	*size = fdt_totalsize;
}

static bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* Does node `name` match the path component comp[0..len)? */
static bool component_matches(const char *comp, unsigned len, const char *name)
{
	bool comp_has_unit = false;

	for (unsigned i = 0; i < len; i++)
		if (comp[i] == '@')
			comp_has_unit = true;
	for (unsigned i = 0; i < len; i++)
		if (name[i] != comp[i])
			return false;
	return name[len] == '\0' || (!comp_has_unit && name[len] == '@');
}

static unsigned str_len(const char *s)
{
	unsigned n = 0;
	while (s[n])
		n++;
	return n;
}

static const uint8_t *align4(const uint8_t *p)
{
	return (const uint8_t *)(((uintptr_t)p + 3) & ~(uintptr_t)3);
}

/* The index-th '/'-separated component of `path`, or 0 if there are fewer. */
static const char *path_component(const char *path, unsigned index, unsigned *len)
{
	for (;;) {
		while (*path == '/')
			path++;
		if (!*path)
			return 0;
		unsigned n = 0;
		while (path[n] && path[n] != '/')
			n++;
		if (index-- == 0) {
			*len = n;
			return path;
		}
		path += n;
	}
}

const void *fdt_getprop(const char *path, const char *name, uint32_t *len)
{
	/*
	 * `matched` counts the path components matched along the branch being walked; the
	 * node at depth d (root = 1) lies on the path exactly when matched == d - 1.
	 */
	unsigned depth = 0, matched = 0, wanted = 0, clen;

	if (!fdt_struct)
		return 0;
	while (path_component(path, wanted, &clen))
		wanted++;

	for (const uint8_t *p = fdt_struct; p + 4 <= fdt_struct_end;) {
		uint32_t token = fdt_be32(p);
		p += 4;
		switch (token) {
		case FDT_BEGIN_NODE: {
			const char *node = (const char *)p;
			depth++;
			if (depth > 1 && matched == depth - 2 && matched < wanted) {
				const char *comp = path_component(path, matched, &clen);
				if (component_matches(comp, clen, node))
					matched++;
			}
			p = align4(p + str_len(node) + 1);
			break;
		}
		case FDT_END_NODE:
			if (depth == 0)
				return 0;
			if (depth > 1 && matched == depth - 1)
				matched--;
			depth--;
			break;
		case FDT_PROP: {
			uint32_t plen = fdt_be32(p);
			const char *pname = fdt_strings + fdt_be32(p + 4);
			const uint8_t *value = p + 8;
			if (matched == wanted && matched == depth - 1 && str_eq(pname, name)) {
				if (len)
					*len = plen;
				return value;
			}
			p = align4(value + plen);
			break;
		}
		case FDT_NOP:
			break;
		default:        /* FDT_END or garbage */
			return 0;
		}
	}
	return 0;
}

static uint32_t cells_or(const char *name, uint32_t fallback)
{
	uint32_t len;
	const void *p = fdt_getprop("/", name, &len);
	return p && len == 4 ? fdt_be32(p) : fallback;
}

static uint64_t read_cells(const uint8_t *p, uint32_t cells)
{
	uint64_t val = 0;
	for (uint32_t i = 0; i < cells; i++)
		val = (val << 32) | fdt_be32(p + 4 * i);
	return val;
}

bool fdt_memory(uint64_t *base, uint64_t *size)
{
	/* Defaults from the devicetree specification. */
	uint32_t addr_cells = cells_or("#address-cells", 2);
	uint32_t size_cells = cells_or("#size-cells", 1);
	uint32_t len;
	const uint8_t *reg = fdt_getprop("/memory", "reg", &len);

	if (!reg || addr_cells > 2 || size_cells > 2 || len < 4 * (addr_cells + size_cells))
		return false;
	*base = read_cells(reg, addr_cells);
	*size = read_cells(reg + 4 * addr_cells, size_cells);
	return true;
}
