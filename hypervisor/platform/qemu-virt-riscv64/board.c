/* SPDX-License-Identifier: MIT */
/*
 * QEMU `virt` for riscv64 (aia=aplic-imsic): OpenSBI in the first 2 MiB of RAM, Tern right
 * after it, where fw_dynamic enters an S-mode kernel.
 */
#include <tern/platform.h>
#include <tern/vuart.h>

const struct platform_desc platform = {
	.name = "qemu-virt-riscv64",
	.uart_base = 0x10000000u,
	.uart_model = &vns16550_model,
	.uart_intid = 10,
	.ram_base = 0x80000000u,
	.ram_max = GiB(2),
	.hyp_base = 0x80000000u,     /* OpenSBI's 2 MiB, then the hypervisor */
	.hyp_size = MiB(64),
	.config_hpa = 0x83f00000u,
	.config_max = MiB(1),
	.max_cpus = 8,
	.arch = {
		.timebase_hz = 10000000,
		.imsic_s_base = 0x28000000u,
		.imsic_num_ids = 255,
		.imsic_hart_stride = 0x8000u, /* aia-guests=4: 8 files of 4 KiB per hart */
		.aplic_s_base = 0x0d000000u,
	},
};
