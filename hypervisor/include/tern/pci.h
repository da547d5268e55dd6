/* SPDX-License-Identifier: MIT */
#ifndef TERN_PCI_H
#define TERN_PCI_H

#include <tern/types.h>

/*
 * If [base, base+size) is (part of) a PCIe ECAM the board lets a partition own, silence
 * every function on those buses: no bus mastering (DMA), no memory or I/O decoding, no
 * INTx, MSI or MSI-X.  Its owner ended; its RAM may be reloaded next, and a device must not
 * write into it meanwhile.  The owner's next life sets its devices up again.
 */
void pci_quiesce_range(paddr_t base, uint64_t size);

#endif
