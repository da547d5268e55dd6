/* SPDX-License-Identifier: MIT */
/*
 * QEMU `virt` for riscv64 (aia=aplic-imsic): OpenSBI in the first 2 MiB of RAM, Tern right
 * after it, where fw_dynamic enters an S-mode kernel.
 */
#include <tern/platform.h>
#include <tern/vuart.h>

/*
 * The PCIe host bridge.  No IOMMU confines its DMA (QEMU 7.2), so a partition owns it only if
 * its description accepts that; its ECAM is emulated so that MSIs reach the owner's guest files.
 */
#define PCIE 0u /* the only device a partition may own */

static const struct platform_range devices[] = {
	{ 0x03000000u, 0x00010000u, PLATFORM_DMA, PCIE },                                  /* I/O window */
	{ 0x30000000u, 0x10000000u, PLATFORM_DMA | PLATFORM_ECAM | PLATFORM_ECAM_EMULATED, PCIE }, /* ECAM */
	{ 0x40000000u, 0x40000000u, PLATFORM_DMA | PLATFORM_PCI_MEM32, PCIE },             /* 32-bit memory window */
};

/* The bridge's INTA..INTD lines at the APLIC (swizzled per slot, as on the bare board). */
static const struct platform_irq device_irqs[] = { { 32, PCIE }, { 33, PCIE }, { 34, PCIE }, { 35, PCIE } };

const struct platform_desc platform = {
	.name = "qemu-virt-riscv64",
	.uart_base = 0x10000000u,
	.uart_model = &vns16550_model,
	.uart_irq = 10,
	.uart_rate = 115200 / 10, /* 115200 baud, a start and a stop bit a byte */
	.ram_base = 0x80000000u,
	.ram_max = GiB(2),
	.hyp_base = 0x80000000u,     /* OpenSBI's 2 MiB, then the hypervisor */
	.hyp_size = MiB(64),
	.config_hpa = 0x83f00000u,
	.config_max = MiB(1),
	.max_cpus = 8,
	.devices = devices,
	.num_devices = ARRAY_SIZE(devices),
	.device_irqs = device_irqs,
	.num_device_irqs = ARRAY_SIZE(device_irqs),
	/*
	 * APLIC sources 48..63: QEMU 7.2's virt wires the UART (10), the RTC (11), virtio-mmio (1..8)
	 * and PCIe (32..35), and its platform bus from 64.
	 */
	.doorbell_irq_base = 48,
	.num_doorbell_irqs = 16,
	/* QEMU's virtio-mmio transports, empty without a -device: APLIC source 1 + i. */
	.virtio_base = 0x10001000u,
	.virtio_stride = 0x1000u,
	.num_virtio_slots = 8,
	.virtio_irq_base = 1,
	.arch = {
		.timebase_hz = 10000000,
		.imsic_s_base = 0x28000000u,
		.imsic_num_ids = 255,
		.imsic_vcpu_stride = 0x8000u, /* 8 files of 4 KiB per vCPU, as aia-guests=4 lays out harts */
		.aplic_s_base = 0x0d000000u,
		.aplic_num_sources = 96,
	},
};
