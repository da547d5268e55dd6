/* SPDX-License-Identifier: MIT */
/*
 * Channels as PCI functions: a member of a channel that does not own the board's PCIe host
 * bridge gets an emulated one at the board's addresses, whose bus 0 holds an ivshmem (v1)
 * function per channel it is a member of, so that Linux reaches a channel through
 * uio_pci_generic.  docs/design.md, "Channels as PCI functions".
 */
#ifndef TERN_IVSHMEM_H
#define TERN_IVSHMEM_H

#include <tern/config_abi.h>
#include <tern/types.h>

struct partition;

/* BAR0, the ivshmem v1 registers: 32-bit accesses only. */
#define IVSHMEM_REGS_SIZE     0x1000u
#define IVSHMEM_INTR_MASK     0x00u   /* bit 0: the function's INTx may be asserted */
#define IVSHMEM_INTR_STATUS   0x04u   /* read: returns and clears it; write: sets it */
#define IVSHMEM_IV_POSITION   0x08u   /* read: the reader's member index */
#define IVSHMEM_DOORBELL      0x0cu   /* write (k << 16) | vector: ring member k */

/* The functions' BAR2s (the channel memory) are placed from here in the memory window. */
#define IVSHMEM_BAR2_OFFSET   0x100000u

/*
 * Give partition p its bridge if it is a member of a channel and owns no part of the board's
 * PCIe host bridge: the emulated ECAM (bus 0), the BAR0 registers, and each channel's memory
 * mapped again at its BAR2.  At boot, after its channels (channel_partition_init); false, with
 * the reason in `err`, if it cannot be had.
 */
bool ivshmem_partition_init(struct partition *p, const struct tern_config *cfg, char *err,
			    size_t errlen);
/*
 * Member k of channel c is rung: if its function is enabled (Command.MEMORY), its IntrStatus
 * is set and its interrupt `irq` raised only while IntrMask and Command let the INTx through;
 * with no function, or one no driver enabled, `irq` is raised as a bare doorbell is.
 * Lock-free: the ringing core and the receiver's touch the function concurrently.
 */
void ivshmem_ring(uint32_t c, uint32_t k, uint32_t irq);
/*
 * Whether p's function whose INTx is board interrupt `irq` asserts its line (its level, and
 * Command.INTX_DISABLE clear): the input of a doorbell the guest made level-sensitive, which
 * has no wire of its own.
 */
bool ivshmem_line(const struct partition *p, uint32_t irq);
/*
 * A ring of member k of channel c needs ivshmem_ring while bit IVSHMEM_RING_GATE_BIT of this
 * word is set (a driver enabled the member's function: the ring is its IntrStatus), and is
 * its bare interrupt otherwise; NULL: the member has no function, it is always the interrupt.
 * For a fast path that raises the interrupt itself.
 */
#define IVSHMEM_RING_GATE_BIT 1u   /* Command.MEMORY */
const _Atomic uint32_t *ivshmem_ring_gate(uint32_t c, uint32_t k);
/* The partition starts again: its functions are as at reset (no driver, masked, no status). */
void ivshmem_reset(const struct partition *p);
/* Whether `ipa` is channel memory p maps at one of its functions' BAR2. */
bool ivshmem_maps(const struct partition *p, ipaddr_t ipa);

#endif
