/* SPDX-License-Identifier: MIT */
/*
 * PCI functions a partition owns (PCI Local Bus 3.0, PCIe ECAM): silenced when it ends, and on
 * a board whose ECAM is emulated, their MSI addresses steered to where the board delivers them.
 */
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/partition.h>
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

#define MSI_64BIT           BIT(7)
#define MSI_ADDRESS         4u          /* from the capability: the low dword, then (64-bit) the high */
#define MSIX_CAP_SIZE       12u
#define CFG_SPACE_SIZE      0x1000u     /* one function's configuration space in the ECAM */

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

/* An access of 1, 2 or 4 bytes, as the guest made it. */
static uint32_t cfg_read(uintptr_t at, unsigned size)
{
	if (size == 1u)
		return *(volatile uint8_t *)at;
	if (size == 2u)
		return *(volatile uint16_t *)at;
	return *(volatile uint32_t *)at;
}

static void cfg_write(uintptr_t at, unsigned size, uint32_t value)
{
	if (size == 1u)
		*(volatile uint8_t *)at = (uint8_t)value;
	else if (size == 2u)
		*(volatile uint16_t *)at = (uint16_t)value;
	else
		*(volatile uint32_t *)at = value;
}

/* Where a function's MSI and MSI-X capabilities are (0: it has none). */
struct msi_caps {
	uint32_t msi;
	uint32_t msix;
	uint32_t msix_link;  /* the byte that points at MSI-X: the list head or the previous's next */
	uint32_t msi_address_size; /* 4 or 8 bytes (MSI's 64-bit bit, read-only) */
};

static void find_msi_caps(uintptr_t fn, struct msi_caps *c)
{
	*c = (struct msi_caps){ 0u, 0u, 0u, 0u };
	if (!(cfg_read16(fn, CFG_STATUS) & STATUS_CAP_LIST))
		return;
	uint32_t link = CFG_CAP_PTR;
	uint32_t cap = cfg_read8(fn, link) & 0xfcu;
	for (unsigned n = 0; cap >= 0x40u && n < MAX_CAPS; n++) {
		uint8_t id = cfg_read8(fn, cap);
		if (id == CAP_MSI && !c->msi) {
			c->msi = cap;
			c->msi_address_size = (cfg_read16(fn, cap + 2u) & MSI_64BIT) ? 8u : 4u;
		}
		if (id == CAP_MSIX && !c->msix) {
			c->msix = cap;
			c->msix_link = link;
		}
		link = cap + 1u;
		cap = cfg_read8(fn, link) & 0xfcu;
	}
}

static void disable_msi(uintptr_t fn)
{
	struct msi_caps c;

	find_msi_caps(fn, &c);
	uint16_t control = c.msi ? cfg_read16(fn, c.msi + 2u) : 0u;
	if (control & MSI_ENABLE)
		cfg_write16(fn, c.msi + 2u, control & (uint16_t)~MSI_ENABLE);
	control = c.msix ? cfg_read16(fn, c.msix + 2u) : 0u;
	if (control & MSIX_ENABLE)
		cfg_write16(fn, c.msix + 2u, control & (uint16_t)~MSIX_ENABLE);
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

/*
 * The emulated ECAM.  One per board (the first range flagged so); written at boot, read-only
 * afterwards.
 */
static paddr_t vecam_base;

bool pci_ecam_emulated(paddr_t base, uint64_t size)
{
	for (uint32_t d = 0; d < platform.num_devices; d++) {
		const struct platform_range *r = &platform.devices[d];
		if ((r->flags & PLATFORM_ECAM_EMULATED) && base < r->base + r->size && r->base < base + size)
			return true;
	}
	return false;
}

void vpci_reset(struct vpci *vp)
{
	vp->num_msi = 0;
}

static bool owns(const struct partition *p, paddr_t pa)
{
	const struct tern_config_partition *c = p->cfg;

	for (uint32_t r = 0; r < c->num_regions; r++) {
		if (pa >= c->region[r].hpa && pa - c->region[r].hpa < c->region[r].size)
			return true;
	}
	return false;
}

bool vpci_add(struct partition *p, char *err, size_t errlen)
{
	for (uint32_t d = 0; d < platform.num_devices; d++) {
		const struct platform_range *r = &platform.devices[d];
		if ((r->flags & PLATFORM_ECAM_EMULATED) && owns(p, r->base)) {
			vecam_base = r->base;
			return mmio_add(p, r->base, r->size, vpci_access, NULL, err, errlen);
		}
	}
	return true;
}

/* The MSI address the guest wrote to the function at `fn_offset` (NULL: none yet, and `make` not set or no room). */
static uint64_t *guest_msi_address(struct vpci *vp, uint32_t fn_offset, bool make)
{
	for (uint32_t i = 0; i < vp->num_msi; i++) {
		if (vp->msi[i].fn == fn_offset)
			return &vp->msi[i].guest_addr;
	}
	if (!make || vp->num_msi == VPCI_MAX_MSI)
		return NULL;
	vp->msi[vp->num_msi].fn = fn_offset;
	vp->msi[vp->num_msi].guest_addr = 0;
	return &vp->msi[vp->num_msi++].guest_addr;
}

static bool in_msi_address(const struct msi_caps *c, uint32_t reg)
{
	return c->msi && reg >= c->msi + MSI_ADDRESS && reg - c->msi - MSI_ADDRESS < c->msi_address_size;
}

/* What the guest reads: the device's registers, its own MSI address, a list without MSI-X. */
static uint32_t config_read(struct vpci *vp, uintptr_t fn, uint32_t fn_offset, uint32_t reg,
			    unsigned size, const struct msi_caps *c)
{
	uint32_t value = cfg_read(fn + reg, size);
	const uint64_t *guest_addr = guest_msi_address(vp, fn_offset, false);

	for (uint32_t i = 0; i < size; i++) {
		uint32_t at = reg + i;
		uint32_t byte;
		if (c->msix && at == c->msix_link)
			byte = cfg_read8(fn, c->msix + 1u);
		else if (in_msi_address(c, at))
			byte = guest_addr ? (uint8_t)(*guest_addr >> (8u * (at - c->msi - MSI_ADDRESS))) : 0u;
		else
			continue;
		value = (value & ~(0xffu << (8u * i))) | (byte << (8u * i));
	}
	return value;
}

static enum mmio_result refuse(struct partition *p, uint32_t fn_offset, const char *why, uint64_t addr)
{
	partition_log(p, "partition %s: PCI %02x:%02x.%x: %s 0x%llx", p->name, fn_offset >> 20,
		      (fn_offset >> 15) & 31u, (fn_offset >> 12) & 7u, why, (unsigned long long)addr);
	return MMIO_UNHANDLED;
}

/*
 * What the guest writes reaches the device, but an MSI address only as the board's address
 * of the same doorbell, and MSI only while that address is one of the partition's.  MSI-X is
 * not offered: its table is in a BAR the guest writes directly, out of the hypervisor's view.
 */
static enum mmio_result config_write(struct partition *p, uintptr_t fn, uint32_t fn_offset,
				     uint32_t reg, unsigned size, uint32_t value,
				     const struct msi_caps *c)
{
	uint64_t host = 0;

	if (c->msix && reg < c->msix + MSIX_CAP_SIZE && reg + size > c->msix)
		return refuse(p, fn_offset, "MSI-X is not offered on this board: a write to it at", reg);
	if (in_msi_address(c, reg)) {
		/* An aligned access of at most 4 bytes: within one dword of the address. */
		uint64_t *guest_addr = guest_msi_address(&p->vpci, fn_offset, false);
		uint32_t shift = 8u * (reg - c->msi - MSI_ADDRESS);
		uint64_t mask = (size == 4u ? 0xffffffffULL : (1ULL << (8u * size)) - 1u) << shift;
		uint64_t aimed = ((guest_addr ? *guest_addr : 0u) & ~mask) | (((uint64_t)value << shift) & mask);
		bool steered = arch_msi_target(p, aimed, &host);
		if (!steered && (cfg_read16(fn, c->msi + 2u) & MSI_ENABLE))
			return refuse(p, fn_offset, "MSI aimed at none of its interrupt files:", aimed);
		if (!guest_addr)
			guest_addr = guest_msi_address(&p->vpci, fn_offset, true);
		if (!guest_addr)
			return refuse(p, fn_offset, "MSI on more functions than the hypervisor steers, at most",
				      VPCI_MAX_MSI);
		*guest_addr = aimed;
		cfg_write(fn + c->msi + MSI_ADDRESS, 4u, (uint32_t)host);
		if (c->msi_address_size == 8u)
			cfg_write(fn + c->msi + MSI_ADDRESS + 4u, 4u, (uint32_t)(host >> 32));
		return MMIO_DONE;
	}
	if (c->msi && reg <= c->msi + 2u && reg + size > c->msi + 2u &&
	    ((value >> (8u * (c->msi + 2u - reg))) & MSI_ENABLE)) {
		const uint64_t *guest_addr = guest_msi_address(&p->vpci, fn_offset, false);
		uint64_t aimed = guest_addr ? *guest_addr : 0u;
		if (!arch_msi_target(p, aimed, &host))
			return refuse(p, fn_offset, "MSI enabled aimed at none of its interrupt files:", aimed);
	}
	cfg_write(fn + reg, size, value);
	return MMIO_DONE;
}

enum mmio_result vpci_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
			     uint64_t *value, const void *ctx)
{
	(void)ctx;
	struct partition *p = v->partition;
	/* The region is the ECAM: at most 256 MiB. */
	uint32_t reg = (uint32_t)offset & (CFG_SPACE_SIZE - 1u);
	uint32_t fn_offset = (uint32_t)offset - reg;
	uintptr_t fn = (uintptr_t)(vecam_base + fn_offset);
	enum mmio_result result = MMIO_DONE;
	struct msi_caps c;

	if (!owns(p, vecam_base + offset))
		return MMIO_UNHANDLED;
	if (size > 4u)
		return MMIO_ABORT; /* configuration space has no 8-byte registers */
	spin_lock(&p->vpci.lock);
	find_msi_caps(fn, &c);
	if (write)
		result = config_write(p, fn, fn_offset, reg, size, (uint32_t)*value, &c);
	else
		*value = config_read(&p->vpci, fn, fn_offset, reg, size, &c);
	spin_unlock(&p->vpci.lock);
	return result;
}
