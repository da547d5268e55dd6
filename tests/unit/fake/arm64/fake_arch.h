/* SPDX-License-Identifier: MIT */
/* The fake board's arm64 part (board.c): the GIC in host memory (platform.c). */
#ifndef TERN_TEST_FAKE_ARCH_H
#define TERN_TEST_FAKE_ARCH_H

/* The board's spare interrupts for doorbells: as QEMU virt's (platform/qemu-virt-arm64). */
#define FAKE_DOORBELL_IRQ_BASE 256u
#define FAKE_DOORBELL_IRQS     32u

/* The board's virtio-mmio slots: as QEMU virt's, in a window of host memory nobody dereferences. */
#define FAKE_VIRTIO_STRIDE     0x200u
#define FAKE_VIRTIO_SLOTS      32u
#define FAKE_VIRTIO_IRQ_BASE   48u

#define FAKE_PLATFORM_ARCH {                                                    \
	.gicd_base = (uintptr_t)fake_gicd,                                      \
	.gicd_size = sizeof(fake_gicd),                                         \
	.gicr_base = (uintptr_t)fake_gicr,                                      \
	.gicr_stride = sizeof(fake_gicr[0]),                                    \
}

#endif
