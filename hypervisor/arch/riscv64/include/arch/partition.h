/* SPDX-License-Identifier: MIT */
#ifndef ARCH_PARTITION_H
#define ARCH_PARTITION_H

#include <tern/partition.h>

/* A partition's address space: its G-stage (Sv39x4) root and the hgatp that selects it. */
struct riscv_partition {
	uint64_t *gstage_root;
	uint64_t hgatp;
};

extern struct riscv_partition riscv_partitions[TERN_MAX_PARTITIONS];

static inline struct riscv_partition *riscv_part(const struct partition *p)
{
	return &riscv_partitions[p->index];
}

#endif
