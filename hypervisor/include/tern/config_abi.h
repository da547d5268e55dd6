/* SPDX-License-Identifier: MIT */
/*
 * The system description as the hypervisor receives it.
 *
 * `tern` (tools/tern) validates the TOML description, lays the partitions
 * out in board RAM, and writes this little-endian blob, which QEMU loads at
 * TERN_CONFIG_HPA.  The hypervisor validates it again (config.c) because a
 * blob is input too, and a bad one must give a clear message, not a crash.
 *
 * tools/tern/abi.py mirrors this file; tests/tool checks the two agree.
 */
#ifndef TERN_CONFIG_ABI_H
#define TERN_CONFIG_ABI_H

#include <tern/types.h>

#define TERN_CONFIG_MAGIC      0x4e524554u /* "TERN" */
#define TERN_CONFIG_VERSION    8u
#define TERN_MAX_PARTITIONS    8u
#define TERN_MAX_VCPUS         8u
/* Cores a board may have: numbered 0.. in boot order (the arch maps them to MPIDRs or hart ids). */
#define TERN_MAX_CPUS          8u
#define TERN_NAME_LEN          16u
#define TERN_MAX_REGIONS       8u   /* pass-through MMIO regions per partition */
#define TERN_IRQ_WORDS         32u  /* device interrupt bitmap words: numbers 0..1023 */
#define TERN_MAX_CHANNELS      16u /* [[channel]]s and one per [[virtio]] */
#define TERN_MAX_VIRTIO        8u
/* [[pool]]s: each has a core of its own, so no more than the cores */
#define TERN_MAX_POOLS         TERN_MAX_CPUS
#define TERN_MAX_WINDOWS       16u /* an ARINC 653 pool's windows in its major frame */

/* tern_config.flags */
/* the board has the IOMMU Tern drives (QEMU virt arm64: its SMMUv3, iommu=smmuv3) */
#define TERN_CF_IOMMU          (1u << 0)

/* tern_config_partition.flags */
#define TERN_PF_WFI_NATIVE     (1u << 0) /* guest WFI/WFE run on the core, not trapped */
#define TERN_PF_IRQ_DIRECT     (1u << 1) /* guest takes its interrupts from the controller itself */
/* its devices' DMA is not confined: the description accepts a board without an IOMMU */
#define TERN_PF_UNCONFINED_DMA (1u << 2)
/* it may call the console's commands as hypercalls (tern/manager.h, docs/management.md) */
#define TERN_PF_MANAGER        (1u << 3)

/* tern_config_partition.fault_policy: what a guest fault (stage-2 abort, unhandled trap) does */
#define TERN_FAULT_STOP        0u        /* stop the partition; `restart NAME` may start it again */
#define TERN_FAULT_RESTART     1u        /* reload it from its pristine copies and start it again */
/*
 * An access outside everything the partition has (RAM, devices, emulated registers) is the
 * bus error the board would raise, taken by the guest's own handler; other faults stop it.
 */
#define TERN_FAULT_INJECT      2u
#define TERN_MAX_BACKOFF_US    60000000u /* restart_backoff_us: at most a minute */

/* tern_config_partition.pool: in no [[pool]], an implicit null pool of its own cores (today's) */
#define TERN_POOL_NONE         0xffffffffu

/* tern_config_pool.scheduler */
#define TERN_SCHED_NULL        0u  /* one vCPU per core, never switched */
#define TERN_SCHED_ARINC653    1u  /* fixed windows repeated every major frame */
#define TERN_SCHED_RTDS        2u  /* EDF over deferrable servers: budget every period */
#define TERN_SCHED_CREDIT      3u  /* proportional share by weight, optionally capped */

/* tern_config_partition.weight and cap (credit pools) */
#define TERN_MAX_WEIGHT        65535u
#define TERN_MAX_CAP           100u /* percent of one core (0: no cap) */

/* tern_config_region.flags */
#define TERN_RF_DEVICE         (1u << 0) /* device memory (Device-nGnRE), not RAM */
/*
 * Another partition's whole RAM (normal cacheable, read-write, never executable): the window
 * of a trusted VirtIO backend (TERN_VF_BACKEND_TRUSTED) onto its frontend, at an IPA of its own.
 */
#define TERN_RF_PARTITION_RAM  (1u << 1)

/*
 * A board device's MMIO range given to one partition, mapped 1:1 (ipa == hpa on this board),
 * or (TERN_RF_PARTITION_RAM) a trusted backend's window onto its frontend's RAM.
 */
struct tern_config_region {
	uint64_t ipa;
	uint64_t hpa;
	uint64_t size;                  /* 4 KiB multiple; ipa and hpa 4 KiB aligned */
	uint32_t flags;                 /* TERN_RF_* */
	uint32_t reserved;
};

struct tern_config_partition {
	char     name[TERN_NAME_LEN];   /* NUL-terminated */
	uint64_t ram_ipa;               /* guest-physical base of RAM (board RAM base) */
	uint64_t ram_hpa;               /* where that RAM lives on the board */
	uint64_t ram_size;
	uint64_t entry_ipa;             /* first instruction of vCPU 0 */
	uint64_t dtb_ipa;               /* x0 at entry: this partition's device tree */
	uint64_t image_ipa;             /* the loaded image, for restart from pristine */
	uint64_t image_size;
	uint64_t pristine_image_hpa;    /* untouched copy of the image (0: none) */
	uint64_t pristine_dtb_hpa;      /* untouched copy of the device tree (0: none) */
	uint64_t dtb_size;
	uint32_t num_vcpus;
	uint32_t flags;                 /* TERN_PF_* */
	uint8_t  cpus[TERN_MAX_VCPUS];  /* physical core of vCPU i */
	uint32_t num_regions;
	uint32_t reserved0;
	struct tern_config_region region[TERN_MAX_REGIONS]; /* devices passed through */
	/*
	 * Device interrupts passed through: interrupt n is bit (n % 32) of word n / 32, numbered
	 * as the board's interrupt controller numbers them (arm64: GIC INTIDs; riscv64: APLIC
	 * sources).
	 */
	uint32_t irqs[TERN_IRQ_WORDS];
	uint64_t initrd_ipa;            /* initial ramdisk named in the device tree (size 0: none) */
	uint64_t initrd_size;
	uint64_t pristine_initrd_hpa;   /* untouched copy of the initrd (0: none) */
	/*
	 * Restarts the hypervisor makes on its own (after a fault with TERN_FAULT_RESTART, or the
	 * guest's SYSTEM_RESET): at most max_restarts (0: no limit), the partition is then stopped;
	 * each waits restart_backoff_us, doubled for every restart that follows the previous start
	 * within 32 x that base, up to 32 x the base (0: no wait).
	 */
	uint32_t fault_policy;          /* TERN_FAULT_* */
	uint32_t max_restarts;
	uint64_t restart_backoff_us;
	/*
	 * Its pool (index in the pool records, TERN_POOL_NONE: none) and its parameters there,
	 * 0 where its pool's scheduler takes none: RTDS budget_us every period_us; credit
	 * weight (1..TERN_MAX_WEIGHT) and cap.
	 */
	uint32_t pool;
	uint32_t weight;
	uint32_t cap;                   /* percent of one core a vCPU may use (0: no cap) */
	uint32_t budget_us;
	uint32_t period_us;
	uint32_t reserved1;
};

/* tern_config_channel_member.flags */
#define TERN_CHF_WRITABLE      (1u << 0) /* it maps the channel read-write (else read-only) */
/*
 * A VirtIO device's frontend (tern_config_virtio): it does not map the channel, has no
 * doorbell page and no PCI function for it; ringing it raises its irq, the device's interrupt.
 */
#define TERN_CHF_FRONTEND      (1u << 1)

/* One partition's place in a channel. */
struct tern_config_channel_member {
	uint32_t partition;     /* index in partition[] */
	uint32_t flags;         /* TERN_CHF_* */
	uint32_t irq;           /* its doorbell: a board spare interrupt, also set in its partition's irqs */
	uint32_t reserved;
};

/*
 * Shared memory between partitions, mapped at the same IPA in each member, and its doorbell
 * page right above it (trapped, never mapped): member k rings member j by writing j there.
 */
struct tern_config_channel {
	char     name[TERN_NAME_LEN];   /* NUL-terminated */
	uint64_t hpa;
	uint64_t size;
	uint64_t ipa;           /* in every member's map */
	uint64_t doorbell_ipa;  /* ipa + size */
	uint32_t num_members;
	uint32_t reserved;
	/* members in description order (`members`, then `readonly`): the index each is rung by */
	struct tern_config_channel_member member[TERN_MAX_PARTITIONS];
};

/* tern_config_virtio.device_id: the VirtIO device IDs (VirtIO 1.2, 5 "Device Types") */
#define TERN_VIRTIO_NET        1u
#define TERN_VIRTIO_BLK        2u
#define TERN_VIRTIO_CONSOLE    3u
#define TERN_VIRTIO_VSOCK      19u

/* tern_config_virtio.flags */
/*
 * The backend maps the frontend's RAM (a TERN_RF_PARTITION_RAM region of its own) and moves
 * the data itself: the hypervisor posts the chains' buffers, not their bytes.
 */
#define TERN_VF_BACKEND_TRUSTED (1u << 0)

/*
 * A VirtIO device the frontend partition sees at one of the board's virtio-mmio slots, served
 * by the backend partition through channel `channel` (tern/virtio_channel.h gives its format):
 * member 0 the backend (rung when requests are posted), member 1 the frontend
 * (TERN_CHF_FRONTEND, its irq = `irq`, rung by the backend when it completes requests).
 */
struct tern_config_virtio {
	char     name[TERN_NAME_LEN];   /* NUL-terminated: the channel's name too */
	uint64_t mmio_ipa;      /* the slot's registers in the frontend's map (the board's address) */
	uint32_t device_id;     /* TERN_VIRTIO_* */
	uint32_t flags;         /* TERN_VF_* */
	uint32_t frontend;      /* index in partition[] */
	uint32_t backend;       /* index in partition[] */
	uint32_t channel;       /* index in the channel records */
	uint32_t irq;           /* the slot's interrupt (the board's), also in the frontend's irqs */
};

/* An ARINC 653 window: partition's vCPUs on the pool's cores run for duration_us. */
struct tern_config_window {
	uint32_t partition;     /* index in partition[] */
	uint32_t duration_us;
};

/*
 * A [[pool]]: cores with a scheduler of their own.  A partition names it by index
 * (tern_config_partition.pool); only an ARINC 653 pool has a major frame and windows, in
 * order from the frame's start (unused windows and fields zero).
 */
struct tern_config_pool {
	char     name[TERN_NAME_LEN];   /* NUL-terminated */
	uint32_t cpus;                  /* bit n: core n */
	uint32_t scheduler;             /* TERN_SCHED_* */
	uint32_t major_frame_us;
	uint32_t num_windows;
	struct tern_config_window window[TERN_MAX_WINDOWS];
};

struct tern_config {
	uint32_t magic;
	uint32_t version;
	uint32_t size;                  /* bytes: header, partitions, channels, virtio devices, pools */
	uint32_t num_partitions;
	uint32_t board_cpus;            /* cores QEMU was started with */
	uint32_t flags;                 /* TERN_CF_* */
	uint64_t ram_size;              /* board RAM from the platform's RAM base, bytes */
	uint32_t num_channels;
	uint32_t channels_offset;       /* the channel records: right after the partitions' */
	uint32_t num_virtio;
	uint32_t virtio_offset;         /* the virtio records: right after the channels' */
	uint32_t num_pools;
	uint32_t pools_offset;          /* the pool records: right after the virtio records */
	/* cppcheck-suppress misra-c2012-18.7 ; the blob is read where it lies: num_partitions records */
	struct tern_config_partition partition[];
};

_Static_assert(sizeof(struct tern_config_region) == 32, "ABI: region record");
_Static_assert(sizeof(struct tern_config_partition) == 568, "ABI: partition record");
_Static_assert(sizeof(struct tern_config_channel_member) == 16, "ABI: channel member");
_Static_assert(sizeof(struct tern_config_channel) == 184, "ABI: channel record");
_Static_assert(sizeof(struct tern_config_virtio) == 48, "ABI: virtio record");
_Static_assert(sizeof(struct tern_config_window) == 8, "ABI: window");
_Static_assert(sizeof(struct tern_config_pool) == 160, "ABI: pool record");
_Static_assert(sizeof(struct tern_config) == 56, "ABI: header");

#endif
