/* SPDX-License-Identifier: MIT */
/*
 * Emulated MMIO: devices the hypervisor emulates at addresses of the partitions' map register
 * a region and a handler (the architecture its interrupt controller, the core its UART).  A
 * guest access to an unmapped IPA comes here.
 */
#ifndef TERN_MMIO_H
#define TERN_MMIO_H

#include <tern/types.h>

struct vcpu;

enum mmio_result {
	MMIO_DONE,        /* emulated */
	MMIO_UNHANDLED,   /* nothing there for this partition: a fault that stops it */
	MMIO_ABORT,       /* a register, but not for an access of that size: an external abort */
	MMIO_MISALIGNED,  /* not aligned to its size: an alignment fault, as the bus would raise */
};

/* `offset` from the region's base; the access is aligned to its size (1, 2, 4 or 8 bytes). */
typedef enum mmio_result (*mmio_handler)(struct vcpu *v, uint64_t offset, unsigned size,
					 bool write, uint64_t *value);

/* At boot, before any guest runs. */
void mmio_register(ipaddr_t base, uint64_t size, mmio_handler handler);
/* Forget every region (host tests). */
void mmio_reset(void);
/* Whether an emulated device's region holds `ipa` (whether or not it is a register). */
bool mmio_claimed(ipaddr_t ipa);
/*
 * An access of `size` bytes (1, 2, 4 or 8) the guest made to an unmapped IPA; writes carry
 * `*value`, reads fill it.
 */
enum mmio_result mmio_emulate(struct vcpu *v, ipaddr_t ipa, unsigned size, bool write,
			      uint64_t *value);

#endif
