/* SPDX-License-Identifier: MIT */
/*
 * What only the arm64 code needs to know of a board (struct platform_desc.arch): where its
 * GICv3 and its SMMUv3 are.  A partition sees the GIC at the same addresses.
 */
#ifndef ARCH_PLATFORM_H
#define ARCH_PLATFORM_H

#include <tern/types.h>

struct platform_arch {
	paddr_t gicd_base;
	uint64_t gicd_size;
	paddr_t gicr_base;
	uint64_t gicr_stride;       /* one redistributor per core */
	/*
	 * Where QEMU puts its SMMUv3 (with iommu=smmuv3; the config blob says whether it did),
	 * 0 if the board has none.  It stands in front of the PCIe root bus whose ECAM is at
	 * smmu_ecam: the partition given that ECAM owns the bus's DMA.
	 */
	paddr_t smmu_base;
	uint64_t smmu_size;
	paddr_t smmu_ecam;
};

#endif
