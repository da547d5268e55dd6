/* SPDX-License-Identifier: MIT */
#ifndef ARCH_PARTITION_H
#define ARCH_PARTITION_H

#include <tern/partition.h>

/*
 * The guest interrupt file each core gives the vCPU it runs (trap-less partitions): its
 * hart's first, mapped where the guest expects its S-level IMSIC file.  A core runs one vCPU
 * only, so one file a core is all it takes.
 */
#define VCPU_GUEST_FILE 1u
#define IMSIC_FILE_SIZE 0x1000u

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
