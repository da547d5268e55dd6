/* SPDX-License-Identifier: MIT */
/* What only the riscv64 code needs to know of a board (struct platform_desc.arch). */
#ifndef ARCH_PLATFORM_H
#define ARCH_PLATFORM_H

#include <tern/types.h>

struct platform_arch {
	uint64_t timebase_hz;       /* the `time` CSR's rate (the device tree's timebase-frequency) */
	paddr_t imsic_s_base;       /* hart 0's S-level IMSIC file; a partition sees its own there */
	uint32_t imsic_num_ids;     /* interrupt identities 1..imsic_num_ids of every file */
	/*
	 * The partitions' view: from vCPU i's S-level file to vCPU i+1's (their device tree's
	 * riscv,guest-index-bits, tools/tern/layout.py).  On the board the stride follows from the
	 * harts' guest files (riscv_imsic_hart_file).
	 */
	uint64_t imsic_vcpu_stride;
	paddr_t aplic_s_base;       /* the APLIC's supervisor domain (MSI delivery mode) */
	uint32_t aplic_num_sources; /* its sources are 1 .. aplic_num_sources - 1 */
};

#endif
