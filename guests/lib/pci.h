/*
 * Just enough PCI for a test device on the root bus of a generic ECAM host bridge
 * (compatible "pci-host-ecam-generic"): configuration space, one BAR from the 32-bit memory
 * window, and its INTx line resolved through the host bridge's interrupt-map. Configuration
 * space is accessed 32 bits at a time.
 */
#ifndef GUEST_PCI_H
#define GUEST_PCI_H

#include "mmio.h"

#define PCI_ID                  0x00    /* vendor (15:0), device (31:16) */
#define PCI_COMMAND             0x04    /* command (15:0), status (31:16) */
#define PCI_BAR0                0x10
#define PCI_CAPABILITIES        0x34    /* the first capability's offset (7:0) */
#define PCI_INTERRUPT           0x3c    /* line (7:0), pin (15:8): 1..4 = INTA..INTD */

#define PCI_COMMAND_IO          (1u << 0)
#define PCI_COMMAND_MEMORY      (1u << 1)
#define PCI_COMMAND_MASTER      (1u << 2)       /* the device may start DMA */
#define PCI_COMMAND_INTX_DISABLE (1u << 10)
#define PCI_STATUS_CAP_LIST     (1u << 20)      /* in the command/status word */

#define PCI_CAP_ID_MSI          0x05

/* Bus, device, function as in the first cell of a PCI unit address, shifted right by 8. */
#define PCI_BDF(bus, dev, fn)   ((uint32_t)(bus) << 8 | (uint32_t)(dev) << 3 | (uint32_t)(fn))
#define PCI_BDF_BUS(bdf)        (((bdf) >> 8) & 0xff)
#define PCI_BDF_DEV(bdf)        (((bdf) >> 3) & 0x1f)
#define PCI_BDF_FN(bdf)         ((bdf) & 7)

struct pci_host {
	int node;               /* the host bridge's device tree node */
	uintptr_t ecam;         /* configuration space of bus bus_first */
	uint64_t ecam_size;
	uint32_t bus_first, bus_last;
	/* The first 32-bit memory window of `ranges` (mem_size 0 if none): PCI and CPU address. */
	uint64_t mem_pci, mem_cpu, mem_size;
	uint64_t mem_next;      /* the next free PCI address in it */
};

/* The first ECAM host bridge in the device tree; false if there is none or its reg is bad. */
bool pci_host_init(struct pci_host *host);

/* Configuration space; reads of a device that does not exist return all-ones. */
uint32_t pci_read32(const struct pci_host *host, uint32_t bdf, unsigned reg);
void pci_write32(const struct pci_host *host, uint32_t bdf, unsigned reg, uint32_t val);

/* Function 0 of devices 0..31 on the root bus (bus_first). */
bool pci_find(const struct pci_host *host, uint16_t vendor, uint16_t device, uint32_t *bdf);

/*
 * Size memory BAR `bar` and place it in the 32-bit window (after what this host handed out
 * before), then turn on memory decoding with INTx left enabled. *cpu_addr = where the CPU
 * sees it. False for an I/O BAR, an unimplemented one or if the window has no room.
 */
bool pci_assign_bar(struct pci_host *host, uint32_t bdf, unsigned bar, uint64_t *cpu_addr,
		    uint64_t *size);

/* The Interrupt Pin register: 1..4 = INTA..INTD, 0 = no INTx. */
unsigned pci_intx_pin(const struct pci_host *host, uint32_t bdf);

/*
 * The interrupt that INTx `pin` of a device on the root bus arrives at, through the host
 * bridge's interrupt-map and interrupt-map-mask: a GIC INTID (3 cells: type, number, flags;
 * SPI = type 0) or an APLIC source number (2 cells: number, flags); -1 if no entry matches
 * or the parent is neither.
 */
int pci_intx_intid(const struct pci_host *host, uint32_t bdf, unsigned pin);

/* The offset of the function's first capability with ID `id`, 0 if it has none. */
unsigned pci_find_capability(const struct pci_host *host, uint32_t bdf, unsigned id);

/*
 * Point the function's MSI at `addr` with `data` (one vector) and turn it on, and bus
 * mastering with it: an MSI is a write by the device. False if it has no MSI capability.
 */
bool pci_msi_enable(const struct pci_host *host, uint32_t bdf, uint64_t addr, uint16_t data);

/* MSI and bus mastering off again. */
void pci_msi_disable(const struct pci_host *host, uint32_t bdf);

#endif
