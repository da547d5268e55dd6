/* SPDX-License-Identifier: MIT */
/* What only the riscv64 code needs to know of a board (struct platform_desc.arch). */
#ifndef ARCH_PLATFORM_H
#define ARCH_PLATFORM_H

#include <tern/types.h>

struct platform_arch {
	uint64_t timebase_hz;       /* the `time` CSR's rate (the device tree's timebase-frequency) */
	paddr_t imsic_s_base;       /* hart 0's S-level IMSIC file; a partition sees its own there */
	uint32_t imsic_num_ids;     /* interrupt identities 1..imsic_num_ids of every file */
	uint64_t imsic_hart_stride; /* from one hart's S-level file to the next (its guest files between) */
	paddr_t aplic_s_base;       /* the APLIC's supervisor domain (MSI delivery mode) */
	uint32_t aplic_num_sources; /* its sources are 1 .. aplic_num_sources - 1 */
};

#endif
