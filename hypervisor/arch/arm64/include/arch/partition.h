/* SPDX-License-Identifier: MIT */
#ifndef ARCH_PARTITION_H
#define ARCH_PARTITION_H

#include <arch/cpu.h>
#include <tern/config_abi.h>
#include <tern/spinlock.h>

/* What a vCPU's own core must re-read of its virtual interrupt state (vgic_redist.sync). */
#define VGIC_SYNC_TEMPLATES BIT(0)  /* priorities, groups or routes changed */
#define VGIC_SYNC_ENABLES   BIT(1)  /* its SGI/PPI enables changed */
#define VGIC_SYNC_STATE     BIT(2)  /* pending or active state to clear or set (unpend, ...) */

/*
 * The arch state core objects embed (struct partition.arch, struct vcpu.arch).  Included by
 * tern/partition.h: nothing here may need struct partition or struct vcpu complete.
 */

/*
 * The virtual redistributor of one vCPU.  It lives with the vCPU, not with the core:
 * any vCPU of the partition may write it (under the distributor's lock), whether or not its
 * own vCPU runs, and it keeps its state from the partition's start until the partition
 * restarts.  Only the vCPU's own core turns it into list-register templates and physical
 * GIC state: a writer posts `sync` bits and kicks that core (vgic_post).
 */
struct vgic_redist {
	_Atomic uint32_t enabled;         /* GICR_ISENABLER0 */
	uint32_t group;                   /* GICR_IGROUPR0 */
	uint32_t icfgr1;                  /* GICR_ICFGR1 */
	uint32_t waker;                   /* GICR_WAKER.ProcessorSleep */
	uint8_t prio[32];                 /* GICR_IPRIORITYR */
	_Atomic uint32_t pending;         /* SGIs raised for it, not yet taken by its core */
	/*
	 * GICR_ICPENDR0, ICACTIVER0 and ISACTIVER0 writes (trap-and-inject) its core has yet to
	 * apply to its list registers and queue, which only that core may touch.
	 */
	_Atomic uint32_t unpend;
	_Atomic uint32_t deactivate;
	_Atomic uint32_t activate;
	_Atomic uint32_t sync;            /* VGIC_SYNC_* */
};

/*
 * The partition's view of the distributor: the SPIs passed to it.  Enable,
 * pending, active and trigger state live in the physical distributor; what
 * the guest sees differently (group, priority, target vCPU) lives here.
 */
struct vgic_dist {
	struct spinlock lock;             /* GICD/GICR writes by the partition's vCPUs */
	uint32_t ctlr;                    /* GICD_CTLR enables */
	uint32_t owned[TERN_IRQ_WORDS];   /* from the system description */
	uint32_t group[TERN_IRQ_WORDS];   /* virtual GICD_IGROUPR */
	uint8_t prio[NR_INTIDS];          /* virtual GICD_IPRIORITYR */
	uint8_t target[NR_INTIDS];        /* GICD_IROUTER: vCPU index (Aff0) */
	/* owned SPIs the C path takes first (arch_irq_hypervisor_first): no fast path; set at boot */
	uint32_t hyp_first[TERN_IRQ_WORDS];
};

/* A partition's address space (its stage-2 root and the VTTBR that selects it), its GIC view. */
struct arch_partition {
	uint64_t *s2_root;
	uint64_t vttbr;
	struct vgic_dist dist;
};

struct arch_vcpu {
	struct vgic_redist redist;
};

#endif
