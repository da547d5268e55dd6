/* SPDX-License-Identifier: MIT */
#ifndef ARCH_PARTITION_H
#define ARCH_PARTITION_H

#include <arch/cpu.h>
#include <tern/partition.h>
#include <tern/spinlock.h>

/*
 * The partition's view of the distributor: the SPIs passed to it.  Enable,
 * pending, active and trigger state live in the physical distributor; what
 * the guest sees differently (group, priority, target vCPU) lives here.
 */
struct vgic_dist {
	struct spinlock lock;             /* GICD writes by the partition's vCPUs */
	uint32_t ctlr;                    /* GICD_CTLR enables */
	uint32_t owned[TERN_IRQ_WORDS];   /* from the system description */
	uint32_t group[TERN_IRQ_WORDS];   /* virtual GICD_IGROUPR */
	uint8_t prio[NR_INTIDS];          /* virtual GICD_IPRIORITYR */
	uint8_t target[NR_INTIDS];        /* GICD_IROUTER: vCPU index (Aff0) */
};

struct arm64_partition {
	uint64_t *s2_root;
	uint64_t vttbr;
	struct vgic_dist dist;
};

extern struct arm64_partition arm64_partitions[TERN_MAX_PARTITIONS];

static inline struct arm64_partition *arm64_part(const struct partition *p)
{
	return &arm64_partitions[p->index];
}

#endif
