/* SPDX-License-Identifier: MIT */
#ifndef TERN_CONFIG_H
#define TERN_CONFIG_H

#include <tern/config_abi.h>

/* A range of board addresses. */
struct config_range {
	uint64_t base;
	uint64_t size;
};

/* A board device range a partition may be given. */
struct config_device {
	uint64_t base;
	uint64_t size;
	bool dma;                   /* its devices can do DMA: only behind the IOMMU */
	bool ecam;                  /* a PCIe ECAM: given whole or not at all */
	uint32_t device;            /* the board device it is part of: one owner for all its parts */
};

/* A board device's interrupt a partition may be given. */
struct config_irq {
	uint32_t id;
	uint32_t device;            /* as config_device.device */
};

/*
 * What the board allows.  Everything in a blob is checked against these allow-lists:
 * whatever they do not name (the interrupt controller, the hypervisor's UART, the IOMMU,
 * devices whose DMA nothing confines) no partition can be given.
 */
struct config_limits {
	uint32_t max_cpus;          /* cores the hypervisor supports on this board */
	struct config_range ram;    /* where board RAM may be: base and largest size */
	uint64_t ram_found;         /* RAM the board has from ram.base (the firmware's device tree) */
	struct config_range reserved; /* hypervisor-owned RAM no partition may use */
	ipaddr_t ram_ipa;           /* the board RAM base every partition sees */
	uint64_t ipa_limit;         /* stage-2 input range */
	const struct config_device *devices;
	uint32_t num_devices;
	const struct config_irq *irqs; /* interrupts a partition may be given (its devices') */
	uint32_t num_irqs;
	/* Spare interrupts no device drives: a channel member's doorbell only. */
	uint32_t doorbell_irq_base;
	uint32_t num_doorbell_irqs;
	/* The board's virtio-mmio slots (platform.h): where a frontend's VirtIO devices are. */
	uint64_t virtio_base;
	uint64_t virtio_stride;
	uint32_t num_virtio_slots;
	uint32_t virtio_irq_base;
	bool iommu;                 /* the board has an IOMMU the hypervisor can take */
	bool direct_wfi_trap;       /* direct delivery combines with trapped WFI */
	/*
	 * Direct-delivery vCPUs one core of a shared (non-null) pool can hold, each with
	 * interrupt state of its own in the controller; 0: none, direct delivery hands the
	 * guest the core's own.
	 */
	uint32_t shared_direct_vcpus;
};

/* The blob's channel records (config_validate has checked where they are), or NULL if none. */
static inline const struct tern_config_channel *config_channels(const struct tern_config *cfg)
{
	return cfg->num_channels ?
	       (const struct tern_config_channel *)((uintptr_t)cfg + cfg->channels_offset) : NULL;
}

/* The blob's virtio records (config_validate has checked where they are), or NULL if none. */
static inline const struct tern_config_virtio *config_virtio(const struct tern_config *cfg)
{
	return cfg->num_virtio ?
	       (const struct tern_config_virtio *)((uintptr_t)cfg + cfg->virtio_offset) : NULL;
}

/* The blob's pool records (config_validate has checked where they are), or NULL if none. */
static inline const struct tern_config_pool *config_pools(const struct tern_config *cfg)
{
	return cfg->num_pools ?
	       (const struct tern_config_pool *)((uintptr_t)cfg + cfg->pools_offset) : NULL;
}

/*
 * Check a config blob of `avail` bytes as the description's rules have it.  Returns 0, or
 * -1 with a one-line reason (naming the partition or pool and field) in `err`.
 */
int config_check(const struct tern_config *cfg, size_t avail,
		 const struct config_limits *lim, char *err, size_t errlen);

/*
 * Check a config blob of `avail` bytes: config_check, and what this hypervisor runs (only
 * null pools: their partitions' schedulers are not built yet).  Returns 0, or -1 with a one-line
 * reason (naming the partition and field) in `err`.
 */
int config_validate(const struct tern_config *cfg, size_t avail,
		    const struct config_limits *lim, char *err, size_t errlen);

#endif
