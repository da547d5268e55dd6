/* Just enough of a flattened device tree reader to find a few properties by path. */
#ifndef GUEST_FDT_H
#define GUEST_FDT_H

#include <stdbool.h>
#include <stdint.h>

/* Returns false (and every lookup then fails) if `blob` is not a device tree. */
bool fdt_init(const void *blob);

/*
 * The value of property `name` of the node at `path` ("/" or "/a/b"). A path component
 * without '@' also matches a node name with a unit address ("/memory" finds
 * "memory@40000000"). Values are 4-byte aligned and big-endian.
 */
const void *fdt_getprop(const char *path, const char *name, uint32_t *len);

/* Where the blob lies, so that RAM a guest hands out can avoid it; 0/0 if it is not valid. */
void fdt_extent(uintptr_t *start, uint32_t *size);

/* The first range of the /memory node's reg property. */
bool fdt_memory(uint64_t *base, uint64_t *size);

uint32_t fdt_be32(const void *p);

/* `cells` (0..2) big-endian cells at p as one number. */
uint64_t fdt_read_cells(const void *p, uint32_t cells);

/*
 * Nodes found by what they hold rather than by path. A node is the offset of its
 * FDT_BEGIN_NODE token in the structure block (normally 0 for the root); FDT_NONE for none.
 */
#define FDT_NONE        (-1)

/* The first node after `after` (FDT_NONE: from the start) whose compatible list has `compat`. */
int fdt_find_compatible(int after, const char *compat);

/* The node whose `phandle` (or legacy `linux,phandle`) property is `phandle`. */
int fdt_find_phandle(uint32_t phandle);

/* The node's parent; FDT_NONE for the root. */
int fdt_parent(int node);

/* Property `name` of the node itself (not of its children), as fdt_getprop. */
const void *fdt_node_prop(int node, const char *name, uint32_t *len);

/* A one-cell property such as #address-cells; `fallback` if it is absent or not one cell. */
uint32_t fdt_node_u32(int node, const char *name, uint32_t fallback);

#endif
