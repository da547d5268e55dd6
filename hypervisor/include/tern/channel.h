/* SPDX-License-Identifier: MIT */
/*
 * Channels: memory shared by partitions (its members), mapped at the same IPA in each, and a
 * doorbell page right above it in each member's map, trapped and emulated: a member rings
 * member k by writing k there, which sets member k's doorbell interrupt pending on the board's
 * controller (arch_irq_raise), as a device would.  docs/design.md, "Channels".
 */
#ifndef TERN_CHANNEL_H
#define TERN_CHANNEL_H

#include <tern/config_abi.h>
#include <tern/types.h>

struct partition;
struct vcpu;

/* The doorbell page's registers: 32-bit accesses only. */
#define CHANNEL_DOORBELL_SIZE 0x1000u
#define CHANNEL_RING          0x0u   /* write k: ring member k */
#define CHANNEL_SELF          0x4u   /* read: the reader's member index */
#define CHANNEL_MEMBERS       0x8u   /* read: how many members the channel has */

/*
 * Give partition p (already checked with its config blob `cfg`) the channels it is a member
 * of: map each one's memory in its map and add its doorbell page.  At boot, after
 * arch_partition_init; false, with the reason in `err`, if one cannot be had.
 */
bool channel_partition_init(struct partition *p, const struct tern_config *cfg, char *err,
			    size_t errlen);
/*
 * vCPU v rings member k of channel c (`ch`, the blob's c-th): from the doorbell page's RING or
 * the member's PCI function's Doorbell (tern/ivshmem.h), counted either way.
 */
void channel_ring(struct vcpu *v, const struct tern_config_channel *ch, uint32_t c, uint64_t k);
/*
 * What an architecture's fast path needs to ring without the core: the doorbell page of p's
 * first channel and, for each member k of it, the board interrupt a ring of k raises (0: k is
 * no member, the ring is channel_ring's) and its gate (ivshmem_ring_gate: while it is set, the
 * ring is channel_ring's).  False, and nothing filled in, if p is a member of no channel.
 * Fixed once every partition is created: a vCPU's core may cache it while the vCPU runs.
 */
struct channel_fast_ring {
	uint32_t irq;
	const _Atomic uint32_t *gate;
};
bool channel_fast_doorbell(const struct partition *p, ipaddr_t *page,
			   struct channel_fast_ring ring[TERN_MAX_PARTITIONS]);
/*
 * Whether board interrupt `irq` of p, one with no wire of its own (a doorbell, a VirtIO slot's
 * interrupt), is asserted as a level: its PCI function's INTx (tern/ivshmem.h) or its VirtIO
 * device's InterruptStatus (tern/virtio_mmio.h).  What a level mode the guest gives it follows.
 */
bool channel_irq_line(const struct partition *p, uint32_t irq);
/* Whether `ipa` is the memory of one of p's channels (at its IPA, or at a function's BAR2). */
bool channel_maps(const struct partition *p, ipaddr_t ipa);

#endif
