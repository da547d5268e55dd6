/* SPDX-License-Identifier: MIT */
/* The riscv64 board has no IOMMU: nothing to set up or poll, and a configuration asking for one is refused. */
#include <tern/arch.h>
#include <tern/config_abi.h>
#include <tern/lib.h>
#include <tern/partition.h>

bool arch_iommu_init(const struct tern_config *cfg, char *err, size_t errlen)
{
	if (cfg->flags & TERN_CF_IOMMU) {
		(void)snprintf(err, errlen, "this board has no IOMMU");
		return false;
	}
	return true;
}

bool arch_iommu_present(void)
{
	return false;
}

void arch_iommu_poll(void)
{
}

void arch_iommu_poll_partition(struct partition *p)
{
	(void)p;
}

