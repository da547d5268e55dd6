#include "pci.h"

#include "fdt.h"

#define ECAM_BUS_SHIFT          20      /* bus << 20 | dev << 15 | fn << 12 | reg */
#define PCI_SPACE(hi)           (((hi) >> 24) & 3)
#define PCI_SPACE_MEM32         2
#define PCI_MAX_CELLS           4       /* a PCI unit address and pin: 3 + 1 cells */

bool pci_host_init(struct pci_host *host)
{
	int node = fdt_find_compatible(FDT_NONE, "pci-host-ecam-generic");
	int parent = fdt_parent(node);
	/* reg and the CPU side of ranges are in the parent's cells. */
	uint32_t pa = fdt_node_u32(parent, "#address-cells", 2);
	uint32_t ps = fdt_node_u32(parent, "#size-cells", 1);
	uint32_t ca = fdt_node_u32(node, "#address-cells", 3);
	uint32_t cs = fdt_node_u32(node, "#size-cells", 2);
	uint32_t len;
	const uint8_t *reg = fdt_node_prop(node, "reg", &len);
	const uint8_t *p;

	host->node = node;
	host->mem_pci = host->mem_cpu = host->mem_size = host->mem_next = 0;
	if (!reg || pa < 1 || pa > 2 || ps < 1 || ps > 2 || len < 4 * (pa + ps))
		return false;
	host->ecam = (uintptr_t)fdt_read_cells(reg, pa);
	host->ecam_size = fdt_read_cells(reg + 4 * pa, ps);
	if (host->ecam_size < (1u << ECAM_BUS_SHIFT))
		return false;

	host->bus_first = 0;
	host->bus_last = 255;
	p = fdt_node_prop(node, "bus-range", &len);
	if (p && len == 8) {
		host->bus_first = fdt_be32(p) & 0xff;
		host->bus_last = fdt_be32(p + 4) & 0xff;
	}
	uint64_t buses = host->ecam_size >> ECAM_BUS_SHIFT;
	if (host->bus_last >= host->bus_first + buses)
		host->bus_last = (uint32_t)(host->bus_first + buses - 1);

	/* ranges: (PCI address: 3 cells, CPU address: pa cells, size: cs cells) per window. */
	p = fdt_node_prop(node, "ranges", &len);
	uint32_t entry = 4 * (ca + pa + cs);
	if (p && ca == 3 && cs >= 1 && cs <= 2) {
		for (uint32_t off = 0; off + entry <= len; off += entry) {
			if (PCI_SPACE(fdt_be32(p + off)) != PCI_SPACE_MEM32)
				continue;
			host->mem_pci = fdt_read_cells(p + off + 4, 2);
			host->mem_cpu = fdt_read_cells(p + off + 12, pa);
			host->mem_size = fdt_read_cells(p + off + 4 * (3 + pa), cs);
			host->mem_next = host->mem_pci;
			break;
		}
	}
	return true;
}

static uintptr_t cfg_addr(const struct pci_host *host, uint32_t bdf, unsigned reg)
{
	uint32_t bus = PCI_BDF_BUS(bdf);

	if (bus < host->bus_first || bus > host->bus_last || reg > 0xffc)
		return 0;
	return host->ecam + ((uintptr_t)(bdf - (host->bus_first << 8)) << 12) + (reg & ~3u);
}

uint32_t pci_read32(const struct pci_host *host, uint32_t bdf, unsigned reg)
{
	uintptr_t addr = cfg_addr(host, bdf, reg);

	return addr ? mmio_read32(addr) : 0xffffffff;
}

void pci_write32(const struct pci_host *host, uint32_t bdf, unsigned reg, uint32_t val)
{
	uintptr_t addr = cfg_addr(host, bdf, reg);

	if (addr)
		mmio_write32(addr, val);
}

bool pci_find(const struct pci_host *host, uint16_t vendor, uint16_t device, uint32_t *bdf)
{
	uint32_t want = (uint32_t)device << 16 | vendor;

	for (unsigned dev = 0; dev < 32; dev++) {
		uint32_t b = PCI_BDF(host->bus_first, dev, 0);
		if (pci_read32(host, b, PCI_ID) == want) {
			*bdf = b;
			return true;
		}
	}
	return false;
}

bool pci_assign_bar(struct pci_host *host, uint32_t bdf, unsigned bar, uint64_t *cpu_addr,
		    uint64_t *size)
{
	unsigned reg = PCI_BAR0 + 4 * bar;
	/* Write the command word with a zero status half: its bits are write-1-to-clear. */
	uint32_t cmd = pci_read32(host, bdf, PCI_COMMAND) & 0xffff;
	uint32_t orig = pci_read32(host, bdf, reg);
	bool is64 = (orig & 7) == 4;    /* memory BAR, type 64-bit */

	if (bar > 5 || (orig & 1) || (is64 && bar == 5) || !host->mem_size)
		return false;

	/* No decoding while the BAR holds all-ones. */
	pci_write32(host, bdf, PCI_COMMAND, cmd & ~(PCI_COMMAND_IO | PCI_COMMAND_MEMORY));
	pci_write32(host, bdf, reg, 0xffffffff);
	uint64_t mask = 0xffffffff00000000ull | (pci_read32(host, bdf, reg) & ~0xfu);
	if (is64) {
		uint32_t hi = pci_read32(host, bdf, reg + 4);
		pci_write32(host, bdf, reg + 4, 0xffffffff);
		mask = (uint64_t)pci_read32(host, bdf, reg + 4) << 32 | (uint32_t)mask;
		pci_write32(host, bdf, reg + 4, hi);
	}
	uint64_t bytes = ~mask + 1;
	uint64_t base = (host->mem_next + bytes - 1) & ~(bytes - 1);
	uint64_t end = host->mem_pci + host->mem_size;

	if ((uint32_t)mask == 0 || base < host->mem_next || base + bytes > end ||
	    base + bytes > 0x100000000ull) {
		pci_write32(host, bdf, reg, orig);
		pci_write32(host, bdf, PCI_COMMAND, cmd);
		return false;
	}
	pci_write32(host, bdf, reg, (uint32_t)base);
	if (is64)
		pci_write32(host, bdf, reg + 4, 0);
	host->mem_next = base + bytes;
	pci_write32(host, bdf, PCI_COMMAND,
		    (cmd & ~PCI_COMMAND_INTX_DISABLE) | PCI_COMMAND_MEMORY);
	*cpu_addr = host->mem_cpu + (base - host->mem_pci);
	*size = bytes;
	return true;
}

unsigned pci_intx_pin(const struct pci_host *host, uint32_t bdf)
{
	uint32_t pin = (pci_read32(host, bdf, PCI_INTERRUPT) >> 8) & 0xff;

	return pin <= 4 ? pin : 0;
}

int pci_intx_intid(const struct pci_host *host, uint32_t bdf, unsigned pin)
{
	uint32_t ca = fdt_node_u32(host->node, "#address-cells", 3);
	uint32_t ic = fdt_node_u32(host->node, "#interrupt-cells", 1);
	uint32_t child[PCI_MAX_CELLS] = { bdf << 8, 0, 0, pin };
	uint32_t mask[PCI_MAX_CELLS] = { ~0u, ~0u, ~0u, ~0u };
	uint32_t len, mask_len;
	const uint8_t *map = fdt_node_prop(host->node, "interrupt-map", &len);
	const uint8_t *m = fdt_node_prop(host->node, "interrupt-map-mask", &mask_len);
	uint32_t cells = ca + ic;

	if (!map || ca != 3 || ic != 1 || pin < 1 || pin > 4)
		return -1;
	if (m && mask_len == 4 * cells)
		for (uint32_t i = 0; i < cells; i++)
			mask[i] = fdt_be32(m + 4 * i);

	/*
	 * Entry: child unit address (ca) and specifier (ic), parent phandle, parent unit
	 * address (its #address-cells, 0 if absent) and specifier (its #interrupt-cells).
	 */
	for (uint32_t off = 0; off + 4 * (cells + 1) <= len;) {
		const uint8_t *e = map + off;
		int parent = fdt_find_phandle(fdt_be32(e + 4 * cells));
		uint32_t pac = fdt_node_u32(parent, "#address-cells", 0);
		uint32_t pic = fdt_node_u32(parent, "#interrupt-cells", 0);
		uint32_t size = 4 * (cells + 1 + pac + pic);
		bool match = true;

		if (parent == FDT_NONE || pic == 0 || off + size > len)
			return -1;
		for (uint32_t i = 0; i < cells; i++)
			if ((child[i] ^ fdt_be32(e + 4 * i)) & mask[i])
				match = false;
		if (match) {
			const uint8_t *spec = e + 4 * (cells + 1 + pac);
			if (!fdt_node_prop(parent, "interrupt-controller", 0))
				return -1;
			/* A RISC-V APLIC: source number, flags. */
			if (pic == 2)
				return fdt_be32(spec) > 0 && fdt_be32(spec) < 1024 ? (int)fdt_be32(spec) : -1;
			/* A GIC: type (0 = SPI), number, flags. */
			if (pic < 3 || fdt_be32(spec) != 0 || fdt_be32(spec + 4) >= 988)
				return -1;
			return (int)fdt_be32(spec + 4) + 32;
		}
		off += size;
	}
	return -1;
}

/* Capability pointers are dword-aligned and at 0x40 and above; at most 48 fit in 256 bytes. */
#define PCI_MAX_CAPS            48

unsigned pci_find_capability(const struct pci_host *host, uint32_t bdf, unsigned id)
{
	if (!(pci_read32(host, bdf, PCI_COMMAND) & PCI_STATUS_CAP_LIST))
		return 0;
	unsigned pos = pci_read32(host, bdf, PCI_CAPABILITIES) & 0xfc;

	for (unsigned n = 0; pos >= 0x40 && n < PCI_MAX_CAPS; n++) {
		uint32_t head = pci_read32(host, bdf, pos);     /* ID (7:0), next (15:8) */
		if ((head & 0xff) == id)
			return pos;
		pos = (head >> 8) & 0xfc;
	}
	return 0;
}

/* MSI capability: control in the upper half of the first dword. */
#define MSI_CONTROL_ENABLE      (1u << 16)
#define MSI_CONTROL_MME         (7u << 20)      /* vectors enabled: 2^MME */
#define MSI_CONTROL_64BIT       (1u << 23)
#define MSI_ADDRESS_LO          0x4
#define MSI_ADDRESS_HI          0x8             /* 64-bit capable only */

bool pci_msi_enable(const struct pci_host *host, uint32_t bdf, uint64_t addr, uint16_t data)
{
	unsigned cap = pci_find_capability(host, bdf, PCI_CAP_ID_MSI);

	if (!cap)
		return false;
	uint32_t ctl = pci_read32(host, bdf, cap) & ~(MSI_CONTROL_ENABLE | MSI_CONTROL_MME);
	bool is64 = ctl & MSI_CONTROL_64BIT;

	pci_write32(host, bdf, cap, ctl);
	pci_write32(host, bdf, cap + MSI_ADDRESS_LO, (uint32_t)addr);
	if (is64)
		pci_write32(host, bdf, cap + MSI_ADDRESS_HI, (uint32_t)(addr >> 32));
	/* The data register's upper half is reserved (or extended data, off): written 0. */
	pci_write32(host, bdf, cap + (is64 ? 0xc : 0x8), data);
	pci_write32(host, bdf, cap, ctl | MSI_CONTROL_ENABLE);

	uint32_t cmd = pci_read32(host, bdf, PCI_COMMAND) & 0xffff;
	pci_write32(host, bdf, PCI_COMMAND, cmd | PCI_COMMAND_MASTER);
	return true;
}

void pci_msi_disable(const struct pci_host *host, uint32_t bdf)
{
	unsigned cap = pci_find_capability(host, bdf, PCI_CAP_ID_MSI);
	uint32_t cmd = pci_read32(host, bdf, PCI_COMMAND) & 0xffff;

	if (cap)
		pci_write32(host, bdf, cap, pci_read32(host, bdf, cap) & ~MSI_CONTROL_ENABLE);
	pci_write32(host, bdf, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
}
