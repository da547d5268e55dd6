/* SPDX-License-Identifier: MIT */
/* The fake board's riscv64 part (board.c): the APLIC and the IMSIC files in host memory (riscv64.c). */
#ifndef TERN_TEST_FAKE_ARCH_H
#define TERN_TEST_FAKE_ARCH_H

#include "fake_riscv64.h"

/* The board's spare interrupts for doorbells: as QEMU virt's (platform/qemu-virt-riscv64). */
#define FAKE_DOORBELL_IRQ_BASE 48u
#define FAKE_DOORBELL_IRQS     16u

/* The board's virtio-mmio slots: as QEMU virt's, in a window of host memory nobody dereferences. */
#define FAKE_VIRTIO_STRIDE     0x1000u
#define FAKE_VIRTIO_SLOTS      8u
#define FAKE_VIRTIO_IRQ_BASE   1u

#define FAKE_PLATFORM_ARCH {                                                    \
	.timebase_hz = 10000000,                                                \
	.imsic_s_base = FAKE_IMSIC_BASE,                                        \
	.imsic_num_ids = 255,                                                   \
	.imsic_vcpu_stride = FAKE_IMSIC_STRIDE,                                 \
	.aplic_s_base = (uintptr_t)fake_aplic,                                  \
	.aplic_num_sources = FAKE_APLIC_SOURCES,                                \
}

#endif
