/* SPDX-License-Identifier: MIT */
#ifndef TERN_STATS_H
#define TERN_STATS_H

#include <arch/stats.h>

/*
 * Per-vCPU counters, summed per partition and printed as `tern-stats {json}`: what every
 * architecture counts, then the architecture's own (ARCH_STAT_IDS, named by ARCH_STAT_NAMES
 * in the same order: its trap causes).
 */
enum stat_id {
	STAT_EXIT_IRQ,        /* physical interrupt taken while the guest ran */
	STAT_EXIT_WFI,        /* the guest's wait for an interrupt, trapped */
	STAT_EXIT_MMIO,       /* emulated device access (interrupt controller, UART) */
	STAT_EXIT_OTHER,
	STAT_IRQ_INJECTED,    /* virtual interrupts the hypervisor delivered */
	STAT_FAULT,
	STAT_DMA_FAULT,       /* DMA by the partition's devices that the IOMMU refused */
	STAT_FAULT_INJECTED,  /* accesses outside the partition handed to the guest (on_fault inject) */
	STAT_DOORBELL_RING,   /* channel doorbells it rang (tern/channel.h) */
	STAT_DOORBELL_REFUSED, /* doorbell writes naming no member: nothing rung */
	STAT_VIRTIO_NOTIFY,   /* QueueNotify writes to its VirtIO devices (tern/virtio_mmio.h) */
	STAT_VIRTIO_REQUEST,  /* requests posted to their backends */
	STAT_VIRTIO_COMPLETION, /* completions taken into its queues */
	STAT_VIRTIO_REFUSED_FRONTEND, /* its driver broke a rule: the device needs a reset */
	STAT_VIRTIO_REFUSED_BACKEND,  /* a backend's completion refused (found on the frontend's core) */
	STAT_MANAGER_CALL,    /* its manager calls (tern/manager.h), refused ones included (the port counts) */
	STAT_MANAGER_DENIED,  /* ... made by a partition that is not a manager */
	ARCH_STAT_IDS
	STAT_COUNT
};

extern const char *const stat_names[STAT_COUNT];

#endif
