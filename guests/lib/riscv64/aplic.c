#include "aplic.h"

#include "fdt.h"

#define CPU_INTC_S_EXTERNAL 9

static uintptr_t base;
static bool msi_mode;   /* read once: a partition's APLIC registers trap */

/* The first APLIC whose interrupts (direct mode) or MSIs reach supervisor level. */
bool aplic_init(void)
{
	for (int node = fdt_find_compatible(FDT_NONE, "riscv,aplic"); node != FDT_NONE;
	     node = fdt_find_compatible(node, "riscv,aplic")) {
		uint32_t ac = fdt_node_u32(fdt_parent(node), "#address-cells", 2);
		uint32_t len, irq_len;
		const uint8_t *reg = fdt_node_prop(node, "reg", &len);
		const uint8_t *irqs = fdt_node_prop(node, "interrupts-extended", &irq_len);
		bool supervisor = fdt_node_prop(node, "msi-parent", 0) ?
				  !fdt_node_prop(node, "riscv,children", 0) :
				  irqs && irq_len >= 8 && fdt_be32(irqs + 4) == CPU_INTC_S_EXTERNAL;

		if (reg && ac >= 1 && ac <= 2 && len >= 4 * ac && supervisor) {
			base = (uintptr_t)fdt_read_cells(reg, ac);
			msi_mode = mmio_read32(base + APLIC_DOMAINCFG) & APLIC_DOMAINCFG_DM;
			return true;
		}
	}
	return false;
}

bool aplic_msi_mode(void)
{
	return msi_mode;
}

static inline void route(unsigned source, unsigned hart, unsigned id, uint32_t mode)
{
	bool msi = msi_mode;

	mmio_write32(base + APLIC_CLRIENUM, source);
	mmio_write32(base + APLIC_SOURCECFG(source), mode);
	mmio_write32(base + APLIC_TARGET(source),
		     (uint32_t)hart << APLIC_TARGET_HART_SHIFT | (msi ? id : 1));
	if (!msi) {
		mmio_write32(base + APLIC_IDC(hart) + APLIC_ITHRESHOLD, 0);
		mmio_write32(base + APLIC_IDC(hart) + APLIC_IDELIVERY, 1);
	}
	mmio_write32(base + APLIC_DOMAINCFG, APLIC_DOMAINCFG_IE | (msi ? APLIC_DOMAINCFG_DM : 0));
	mmio_write32(base + APLIC_SETIENUM, source);
}

void aplic_route(unsigned source, unsigned hart, unsigned id)
{
	route(source, hart, id, APLIC_SM_LEVEL_HIGH);
}

void aplic_route_edge(unsigned source, unsigned hart, unsigned id)
{
	route(source, hart, id, APLIC_SM_EDGE_RISE);
}

void aplic_unroute(unsigned source)
{
	mmio_write32(base + APLIC_CLRIENUM, source);
	mmio_write32(base + APLIC_SOURCECFG(source), 0);
}

unsigned aplic_claim(unsigned hart)
{
	return mmio_read32(base + APLIC_IDC(hart) + APLIC_CLAIMI) >> 16;
}
