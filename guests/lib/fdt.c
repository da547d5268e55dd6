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

uint64_t fdt_read_cells(const void *p, uint32_t cells)
{
	const uint8_t *cell = p;
	uint64_t val = 0;

	for (uint32_t i = 0; i < cells; i++)
		val = (val << 32) | fdt_be32(cell + 4 * i);
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
	*base = fdt_read_cells(reg, addr_cells);
	*size = fdt_read_cells(reg + 4 * addr_cells, size_cells);
	return true;
}

/*
 * Node lookups by offset into the structure block. Properties come before a node's
 * children (devicetree specification 5.4.1), so a node's own properties are the FDT_PROP
 * tokens (and NOPs) right after its FDT_BEGIN_NODE.
 */
#define MAX_DEPTH       16

/* The token at offset `off`, and in *next the offset of the token after it; FDT_END when
 * `off` is past the block or the token is not one we know. */
static uint32_t token_at(uint32_t off, uint32_t *next)
{
	uint32_t size = (uint32_t)(fdt_struct_end - fdt_struct);
	uint32_t n = off + 4;
	uint32_t token;

	if (!fdt_struct || off > size || size - off < 4 || (off & 3))
		return FDT_END;
	token = fdt_be32(fdt_struct + off);
	switch (token) {
	case FDT_BEGIN_NODE:
		n += str_len((const char *)fdt_struct + n) + 1;
		break;
	case FDT_PROP:
		if (size - n < 8)
			return FDT_END;
		n += 8 + fdt_be32(fdt_struct + n);
		break;
	case FDT_END_NODE:
	case FDT_NOP:
		break;
	default:
		return FDT_END;
	}
	*next = (n + 3) & ~3u;
	return token;
}

const void *fdt_node_prop(int node, const char *name, uint32_t *len)
{
	uint32_t off, next;

	if (node < 0 || token_at((uint32_t)node, &off) != FDT_BEGIN_NODE)
		return 0;
	for (;; off = next) {
		uint32_t token = token_at(off, &next);
		if (token == FDT_PROP) {
			const uint8_t *p = fdt_struct + off + 4;
			if (str_eq(fdt_strings + fdt_be32(p + 4), name)) {
				if (len)
					*len = fdt_be32(p);
				return p + 8;
			}
		} else if (token != FDT_NOP) {
			return 0;
		}
	}
}

uint32_t fdt_node_u32(int node, const char *name, uint32_t fallback)
{
	uint32_t len;
	const void *p = fdt_node_prop(node, name, &len);

	return p && len == 4 ? fdt_be32(p) : fallback;
}

/* The first node after `after` for which match(node, arg) holds. */
static int find_node(int after, bool (*match)(int node, const void *arg), const void *arg)
{
	uint32_t next;

	for (uint32_t off = 0;; off = next) {
		uint32_t token = token_at(off, &next);
		if (token == FDT_END)
			return FDT_NONE;
		if (token == FDT_BEGIN_NODE && (int)off > after && match((int)off, arg))
			return (int)off;
	}
}

static bool match_compatible(int node, const void *arg)
{
	const char *want = arg;
	uint32_t len;
	const char *list = fdt_node_prop(node, "compatible", &len);

	/* A list of NUL-terminated strings. */
	for (uint32_t i = 0; list && i < len; i += str_len(list + i) + 1)
		if (str_eq(list + i, want))
			return true;
	return false;
}

int fdt_find_compatible(int after, const char *compat)
{
	return find_node(after, match_compatible, compat);
}

static bool match_phandle(int node, const void *arg)
{
	uint32_t want = *(const uint32_t *)arg;

	return fdt_node_u32(node, "phandle", 0) == want ||
	       fdt_node_u32(node, "linux,phandle", 0) == want;
}

int fdt_find_phandle(uint32_t phandle)
{
	/* 0 and 0xffffffff are not valid phandles. */
	if (phandle == 0 || phandle == 0xffffffff)
		return FDT_NONE;
	return find_node(FDT_NONE, match_phandle, &phandle);
}

int fdt_parent(int node)
{
	int stack[MAX_DEPTH];
	unsigned depth = 0;
	uint32_t next;

	for (uint32_t off = 0;; off = next) {
		switch (token_at(off, &next)) {
		case FDT_BEGIN_NODE:
			if ((int)off == node)
				return depth ? stack[depth - 1] : FDT_NONE;
			if (depth == MAX_DEPTH)
				return FDT_NONE;
			stack[depth++] = (int)off;
			break;
		case FDT_END_NODE:
			if (depth == 0)
				return FDT_NONE;
			depth--;
			break;
		case FDT_END:
			return FDT_NONE;
		}
	}
}
