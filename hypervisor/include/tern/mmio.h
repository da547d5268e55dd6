/* SPDX-License-Identifier: MIT */
/*
 * Emulated MMIO.  Each partition has its own emulated devices (its UART, its interrupt
 * controller's frames, its emulated ECAM), each a region of its map and a handler, added
 * while it is created.  A guest access to an IPA its stage-2 map does not hold traps; the
 * architecture decodes it, the core finds the device and completes it (mmio_trap).
 */
#ifndef TERN_MMIO_H
#define TERN_MMIO_H

#include <tern/types.h>

struct partition;
struct vcpu;

enum mmio_result {
	MMIO_DONE,        /* emulated */
	MMIO_UNHANDLED,   /* nothing there for this partition: the bus error, or contained */
	MMIO_ABORT,       /* a register, but not for an access of that size: an external abort */
	MMIO_MISALIGNED,  /* not aligned to its size: an alignment fault, as the bus would raise */
};

/*
 * `offset` from the region's base; the access is aligned to its size (1, 2, 4 or 8 bytes).
 * `ctx`: what the device was added with (mmio_add), for a handler that serves several.
 */
typedef enum mmio_result (*mmio_handler)(struct vcpu *v, uint64_t offset, unsigned size,
					 bool write, uint64_t *value, const void *ctx);

/*
 * Emulated device regions a partition may have: its UART, interrupt controller frames and ECAM,
 * a doorbell page per channel it is a member of (tern/channel.h), and the transport of each
 * VirtIO device it is the frontend of (tern/virtio_mmio.h).
 */
#define MMIO_MAX_DEVICES 24u

struct mmio_device {
	ipaddr_t base;
	uint64_t size;
	mmio_handler handler;
	const void *ctx;
};

/* Written while the partition is created, by the boot core; read-only once its vCPUs run. */
struct mmio_devices {
	uint32_t count;
	struct mmio_device device[MMIO_MAX_DEVICES];
};

/*
 * Give partition `p` an emulated device at [base, base + size), served by `handler` with
 * `ctx`.  False, with the reason in `err`, if it has MMIO_MAX_DEVICES already or the region
 * overlaps one it has: a boot error.
 */
bool mmio_add(struct partition *p, ipaddr_t base, uint64_t size, mmio_handler handler,
	      const void *ctx, char *err, size_t errlen);
/* The first of p's emulated devices that meets [base, base + size), or NULL. */
const struct mmio_device *mmio_overlapping(const struct partition *p, ipaddr_t base,
					   uint64_t size);
/* Whether one of the partition's emulated devices holds `ipa` (whether or not it is a register). */
bool mmio_claimed(const struct partition *p, ipaddr_t ipa);
/*
 * An access of `size` bytes (1, 2, 4 or 8) vCPU v made to an IPA its map does not hold; writes
 * carry `*value`, reads fill it.
 */
enum mmio_result mmio_emulate(struct vcpu *v, ipaddr_t ipa, unsigned size, bool write,
			      uint64_t *value);

/* A guest load or store the architecture trapped and decoded. */
struct mmio_access {
	ipaddr_t ipa;
	uint64_t value;     /* a store's data, masked to its size; a load's result */
	uint32_t size;      /* 1, 2, 4 or 8 */
	bool write;
	uint64_t insn;      /* the architecture's decode of the instruction, opaque to the core */
};

/*
 * Carry out the access and complete it as the board would: emulated (the architecture writes
 * a load's register and steps past the instruction), or the fault the bus raises, or, for an
 * access to nothing the partition has, the guest's bus error or its containment.
 */
void mmio_trap(struct vcpu *v, struct mmio_access *a);

#endif
