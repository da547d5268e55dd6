/* SPDX-License-Identifier: MIT */
/*
 * What the generic code and the architecture need to know about the board.
 * One instance per board, in platform/<board>/.  Partitions see the board's
 * own addresses (interrupt controller, UART, RAM base), so these double as the guest map.
 */
#ifndef TERN_PLATFORM_H
#define TERN_PLATFORM_H

#include <arch/platform.h>
#include <tern/types.h>

/*
 * A board device range a partition may be given (platform_desc.devices).  `device` names the
 * board device it belongs to: every range and interrupt of one device goes to one partition.
 */
struct platform_range {
	paddr_t base;
	uint64_t size;
	uint32_t flags;             /* PLATFORM_* */
	uint32_t device;
};

/* A board device's interrupt a partition may be given, and the device (platform_range.device). */
struct platform_irq {
	uint32_t id;
	uint32_t device;
};

#define PLATFORM_DMA  (1u << 0)     /* its devices can do DMA: given out only behind the IOMMU */
/* A PCIe ECAM: given whole only; its functions are silenced when the owner ends. */
#define PLATFORM_ECAM (1u << 1)
/*
 * Its config accesses trap and are emulated, not mapped: the MSI address a guest writes names
 * its own view of an interrupt controller, and no IOMMU translates the device's MSI writes.
 */
#define PLATFORM_ECAM_EMULATED (1u << 2)
/*
 * A PCIe host bridge's 32-bit memory window (of the device its ECAM is part of): where a
 * partition that does not own the bridge finds its channels' functions (tern/ivshmem.h).
 */
#define PLATFORM_PCI_MEM32 (1u << 3)

struct vuart_model;

struct platform_desc {
	const char *name;
	paddr_t uart_base;          /* hypervisor console, and the partitions' view of their UART */
	const struct vuart_model *uart_model; /* the partitions' UART: the board's own kind */
	uint32_t uart_irq;
	uint32_t uart_rate;         /* bytes a second the console UART carries: a partition's share */
	paddr_t ram_base;           /* also every partition's RAM IPA */
	uint64_t ram_max;           /* board RAM never extends further than this from ram_base */
	paddr_t hyp_base;           /* hypervisor-owned RAM */
	uint64_t hyp_size;
	paddr_t config_hpa;         /* where the loader puts the config blob */
	uint64_t config_max;
	uint32_t max_cpus;
	/*
	 * Allow-lists: the device ranges and interrupts a partition may be given.  Anything
	 * else (the interrupt controller, the console UART, the IOMMU, fw_cfg, virtio-mmio
	 * transports whose DMA no IOMMU confines, ...) stays the hypervisor's or nobody's.
	 */
	const struct platform_range *devices;
	uint32_t num_devices;
	const struct platform_irq *device_irqs;
	uint32_t num_device_irqs;
	/*
	 * Interrupts no device of the board drives, numbered as device_irqs: a channel member's
	 * doorbell (tern/channel.h) is one of them, given to it like a device's and set pending
	 * by the hypervisor (arch_irq_raise) as a device would.
	 */
	uint32_t doorbell_irq_base;
	uint32_t num_doorbell_irqs;
	/*
	 * The board's virtio-mmio slots (slot i at virtio_base + i * virtio_stride, its interrupt
	 * virtio_irq_base + i, numbered as device_irqs): where a partition finds a VirtIO device
	 * another partition serves (tern/virtio_mmio.h).  With no device behind them, nothing of
	 * the board drives their interrupts: the hypervisor raises them as it raises a doorbell.
	 */
	paddr_t virtio_base;
	uint64_t virtio_stride;
	uint32_t num_virtio_slots;
	uint32_t virtio_irq_base;
	/* The interrupt controller's and IOMMU's addresses: only the arch code reads them. */
	struct platform_arch arch;
};

extern const struct platform_desc platform;

#endif
