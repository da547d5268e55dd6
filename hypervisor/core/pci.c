/* SPDX-License-Identifier: MIT */
/* Silencing a partition's PCI functions when it ends (PCI Local Bus 3.0, PCIe ECAM). */
#include <tern/pci.h>
#include <tern/platform.h>

#define ECAM_BUS_SIZE       MiB(1)      /* 32 devices x 8 functions x 4 KiB */
#define CFG_VENDOR          0x00
#define CFG_COMMAND         0x04
#define CFG_STATUS          0x06
#define CFG_HEADER_TYPE     0x0e
#define CFG_CAP_PTR         0x34
#define CMD_IO              BIT(0)
#define CMD_MEMORY          BIT(1)
#define CMD_BUS_MASTER      BIT(2)
#define CMD_INTX_DISABLE    BIT(10)
#define STATUS_CAP_LIST     BIT(4)
#define HEADER_MULTI_FN     0x80
#define CAP_MSI             0x05
#define CAP_MSIX            0x11
#define MSI_ENABLE          BIT(0)
#define MSIX_ENABLE         BIT(15)
#define MAX_CAPS            48          /* a capability list is not followed further */

static uint16_t cfg_read16(uintptr_t fn, uint32_t off)
{
	return *(volatile uint16_t *)(fn + off);
}

static uint8_t cfg_read8(uintptr_t fn, uint32_t off)
{
	return *(volatile uint8_t *)(fn + off);
}

static void cfg_write16(uintptr_t fn, uint32_t off, uint16_t value)
{
	*(volatile uint16_t *)(fn + off) = value;
}

static void disable_msi(uintptr_t fn)
{
	if (!(cfg_read16(fn, CFG_STATUS) & STATUS_CAP_LIST))
		return;
	uint8_t cap = cfg_read8(fn, CFG_CAP_PTR) & 0xfc;
	for (unsigned n = 0; cap >= 0x40 && n < MAX_CAPS; n++) {
		uint8_t id = cfg_read8(fn, cap);
		uint16_t control = cfg_read16(fn, cap + 2u);
		if (id == CAP_MSI && (control & MSI_ENABLE))
			cfg_write16(fn, cap + 2u, control & (uint16_t)~MSI_ENABLE);
		if (id == CAP_MSIX && (control & MSIX_ENABLE))
			cfg_write16(fn, cap + 2u, control & (uint16_t)~MSIX_ENABLE);
		cap = cfg_read8(fn, cap + 1u) & 0xfc;
	}
}

static void quiesce_function(uintptr_t fn)
{
	uint16_t command = cfg_read16(fn, CFG_COMMAND);

	cfg_write16(fn, CFG_COMMAND, (uint16_t)((command & ~(CMD_IO | CMD_MEMORY | CMD_BUS_MASTER)) |
						CMD_INTX_DISABLE));
	disable_msi(fn);
}

static void quiesce_bus(uintptr_t bus)
{
	for (uint32_t dev = 0; dev < 32; dev++) {
		/* cppcheck-suppress misra-c2012-15.4 ; an empty slot and a single function both end it */
		for (uint32_t f = 0; f < 8; f++) {
			uintptr_t fn = bus + ((uintptr_t)dev << 15) + ((uintptr_t)f << 12);
			if (cfg_read16(fn, CFG_VENDOR) == 0xffff) {
				if (f == 0)
					break; /* no device in this slot */
				continue;
			}
			quiesce_function(fn);
			if (f == 0 && !(cfg_read8(fn, CFG_HEADER_TYPE) & HEADER_MULTI_FN))
				break;
		}
	}
}

void pci_quiesce_range(paddr_t base, uint64_t size)
{
	for (uint32_t d = 0; d < platform.num_devices; d++) {
		const struct platform_range *ecam = &platform.devices[d];
		if (!(ecam->flags & PLATFORM_ECAM) || base < ecam->base ||
		    base - ecam->base >= ecam->size)
			continue;
		uint64_t end = size < ecam->size - (base - ecam->base) ? base + size : ecam->base + ecam->size;
		for (paddr_t bus = ALIGN_UP(base, ECAM_BUS_SIZE); bus + ECAM_BUS_SIZE <= end;
		     bus += ECAM_BUS_SIZE)
			quiesce_bus((uintptr_t)bus);
	}
}
