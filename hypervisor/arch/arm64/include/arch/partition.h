/* SPDX-License-Identifier: MIT */
#ifndef ARCH_PARTITION_H
#define ARCH_PARTITION_H

#include <tern/partition.h>

struct arm64_partition {
	uint64_t *s2_root;
	uint64_t vttbr;
	uint32_t gicd_ctlr;   /* the partition's view of GICD_CTLR enables */
};

extern struct arm64_partition arm64_partitions[TERN_MAX_PARTITIONS];

static inline struct arm64_partition *arm64_part(const struct partition *p)
{
	return &arm64_partitions[p->index];
}

#endif
