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

#endif
