/* SPDX-License-Identifier: MIT */
/*
 * The one thing the hypervisor reads from the firmware's flattened device tree (Devicetree
 * Specification v0.4, chapter 5): how much RAM the board has.  Everything else comes from
 * platform/.  The tree is firmware input: every offset and length is checked before use.
 */
#ifndef TERN_FDT_H
#define TERN_FDT_H

#include <tern/types.h>

#define FDT_MAX_SIZE       MiB(2)  /* larger trees are refused (QEMU writes at most 1 MiB) */
#define FDT_MAX_RANGES     16u     /* memory ranges kept; a tree with more is refused */

/*
 * The bytes of RAM, contiguous from `base`, that the memory nodes (device_type "memory") of
 * the tree at `fdt` describe; `avail` bytes from `fdt` may be read.  Returns 0 with *size set
 * (0 if no range holds `base`), or -1 with a one-line reason in `err`.
 */
int fdt_ram_from(const uint8_t *fdt, size_t avail, uint64_t base, uint64_t *size, char *err,
		 size_t errlen);

#endif
