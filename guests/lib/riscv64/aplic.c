#include "aplic.h"

#include "fdt.h"

/* The APLIC's registers (RISC-V AIA specification, chapter 4). */
#define DOMAINCFG       0x0000
#define DOMAINCFG_IE    (1u << 8)
#define DOMAINCFG_DM    (1u << 2)
#define SOURCECFG(s)    (0x0004 + 4 * ((s) - 1))
#define SM_LEVEL_HIGH   6
#define SETIENUM        0x1edc
#define CLRIENUM        0x1fdc
#define TARGET(s)       (0x3004 + 4 * ((s) - 1))
#define TARGET_HART_SHIFT 18
#define IDC(hart)       (0x4000 + 32 * (hart))
#define IDELIVERY       0x00
#define ITHRESHOLD      0x08
#define CLAIMI          0x1c

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
			msi_mode = mmio_read32(base + DOMAINCFG) & DOMAINCFG_DM;
			return true;
		}
	}
	return false;
}

bool aplic_msi_mode(void)
{
	return msi_mode;
}

void aplic_route(unsigned source, unsigned hart, unsigned id)
{
	bool msi = msi_mode;

	mmio_write32(base + CLRIENUM, source);
	mmio_write32(base + SOURCECFG(source), SM_LEVEL_HIGH);
	mmio_write32(base + TARGET(source), (uint32_t)hart << TARGET_HART_SHIFT | (msi ? id : 1));
	if (!msi) {
		mmio_write32(base + IDC(hart) + ITHRESHOLD, 0);
		mmio_write32(base + IDC(hart) + IDELIVERY, 1);
	}
	mmio_write32(base + DOMAINCFG, DOMAINCFG_IE | (msi ? DOMAINCFG_DM : 0));
	mmio_write32(base + SETIENUM, source);
}

void aplic_unroute(unsigned source)
{
	mmio_write32(base + CLRIENUM, source);
	mmio_write32(base + SOURCECFG(source), 0);
}

unsigned aplic_claim(unsigned hart)
{
	return mmio_read32(base + IDC(hart) + CLAIMI) >> 16;
}
