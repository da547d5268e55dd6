/* SPDX-License-Identifier: MIT */
/* QEMU `virt` (virtualization=on, gic-version=3, highmem=off); tools/tern/layout.py mirrors it. */
#include <tern/platform.h>
#include <tern/vuart.h>

/*
 * The PCIe host bridge: everything on its bus sits behind the SMMUv3, so its DMA can be
 * confined.  virtio-mmio transports (0x0a00_0000) are not listed: their DMA bypasses the SMMU.
 */
#define PCIE 0u /* the only device a partition may own */

static const struct platform_range devices[] = {
	{ 0x10000000, 0x2eff0000, PLATFORM_DMA | PLATFORM_PCI_MEM32, PCIE }, /* 32-bit memory window */
	{ 0x3eff0000, 0x00010000, PLATFORM_DMA, PCIE },                 /* I/O window */
	{ 0x3f000000, 0x01000000, PLATFORM_DMA | PLATFORM_ECAM, PCIE }, /* ECAM, 16 buses */
};

/* The PCIe INTx lines (SPIs 3-6). */
static const struct platform_irq device_irqs[] = { { 35, PCIE }, { 36, PCIE }, { 37, PCIE }, { 38, PCIE } };

const struct platform_desc platform = {
	.name = "qemu-virt",
	.uart_base = 0x09000000,
	.uart_model = &vpl011_model,
	.uart_irq = 33,
	.uart_rate = 115200 / 10, /* 115200 baud, a start and a stop bit a byte */
	.ram_base = 0x40000000,
	.ram_max = GiB(3),          /* highmem=off: RAM ends by 4 GiB */
	.hyp_base = 0x40000000,
	.hyp_size = MiB(64),
	.config_hpa = 0x43f00000,
	.config_max = MiB(1),
	.max_cpus = 8,
	.devices = devices,
	.num_devices = ARRAY_SIZE(devices),
	.device_irqs = device_irqs,
	.num_device_irqs = ARRAY_SIZE(device_irqs),
	/* SPIs 224..255, the last 32 of the GIC's 288 INTIDs: QEMU 7.2's virt wires none of them. */
	.doorbell_irq_base = 224,
	.num_doorbell_irqs = 32,
	/* QEMU's virtio-mmio transports, empty without a -device: SPI 16 + i, INTID 48 + i. */
	.virtio_base = 0x0a000000,
	.virtio_stride = 0x200,
	.num_virtio_slots = 32,
	.virtio_irq_base = 48,
	.arch = {
		.gicd_base = 0x08000000,
		.gicd_size = 0x10000,
		.gicr_base = 0x080a0000,
		.gicr_stride = 0x20000,
		.smmu_base = 0x09050000,
		.smmu_size = 0x20000,
		.smmu_ecam = 0x3f000000,
	},
};
