/* SPDX-License-Identifier: MIT */
/* QEMU `virt` (virtualization=on, gic-version=3); tools/tern/layout.py mirrors it. */
#include <tern/platform.h>

const struct platform_desc platform = {
	.name = "qemu-virt",
	.uart_base = 0x09000000,
	.uart_intid = 33,
	.gicd_base = 0x08000000,
	.gicd_size = 0x10000,
	.gicr_base = 0x080a0000,
	.gicr_stride = 0x20000,
	.smmu_base = 0x09050000,
	.smmu_size = 0x20000,
	.smmu_ecam = 0x3f000000,
	.ram_base = 0x40000000,
	.hyp_base = 0x40000000,
	.hyp_size = MiB(64),
	.config_hpa = 0x43f00000,
	.config_max = MiB(1),
	.max_cpus = 8,
};
