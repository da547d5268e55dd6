/* SPDX-License-Identifier: MIT */
#ifndef TERN_PCI_H
#define TERN_PCI_H

#include <tern/mmio.h>
#include <tern/spinlock.h>
#include <tern/types.h>

#define VPCI_MAX_MSI 8u   /* functions per partition whose MSI address the hypervisor steers */

/*
 * A partition's emulated ECAM (platform range PLATFORM_ECAM_EMULATED): the MSI addresses its
 * guest wrote, in the guest's terms.  Only the partition's own vCPUs take the lock.
 */
struct vpci {
	struct spinlock lock;
	uint32_t num_msi;
	struct vpci_msi {
		uint32_t fn;           /* the function's offset in the ECAM */
		uint64_t guest_addr;
	} msi[VPCI_MAX_MSI];
};

struct partition;

/*
 * If [base, base+size) is (part of) a PCIe ECAM the board lets a partition own, silence
 * every function on those buses: no bus mastering (DMA), no memory or I/O decoding, no
 * INTx, MSI or MSI-X.  Its owner ended; its RAM may be reloaded next, and a device must not
 * write into it meanwhile.  The owner's next life sets its devices up again.
 */
void pci_quiesce_range(paddr_t base, uint64_t size);

/*
 * True if [base, base+size) touches an ECAM whose config accesses the hypervisor emulates:
 * none of it may be mapped (the config check gives an ECAM only whole; this holds regardless).
 */
bool pci_ecam_emulated(paddr_t base, uint64_t size);

/*
 * At boot: the board's emulated ECAM, if it has one, joins the emulated devices of the
 * partition that owns it.  Its config accesses reach its devices, except that a function's
 * MSI address is steered (arch_msi_target) and MSI-X is hidden.
 */
bool vpci_add(struct partition *p, char *err, size_t errlen);
/* Forget the MSI addresses its guest wrote (the partition starts again). */
void vpci_reset(struct vpci *vp);
/* The emulated ECAM's handler (mmio_handler). */
enum mmio_result vpci_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
			     uint64_t *value, const void *ctx);

#endif
