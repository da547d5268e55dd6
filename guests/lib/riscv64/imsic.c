#include "imsic.h"

#include "fdt.h"

/* Registers of the file reached through siselect/sireg (AIA, "Interrupt files"). */
#define ISEL_EIDELIVERY         0x70
#define ISEL_EITHRESHOLD        0x72
#define ISEL_EIP0               0x80
#define ISEL_EIE0               0xc0

#define FILE_SHIFT              12      /* files are 4 KiB pages */
#define CPU_INTC_S_EXTERNAL     9       /* the interrupt a supervisor-level file raises */

static uintptr_t files[MAX_CPUS];
static unsigned num_ids;

static void isel_write(unsigned reg, uint64_t val)
{
	csr_write(CSR_SISELECT, reg);
	csr_write(CSR_SIREG, val);
}

/* The 64 identities from 64 * (id / 64) share one eip/eie register: the even ones on RV64. */
static unsigned isel_of(unsigned base, unsigned id)
{
	return base + 2 * (id / 64);
}

/*
 * The node's files in the order of its interrupts-extended (cpu-intc phandle, interrupt)
 * pairs: file i at base + i << (guest-index-bits + 12), each hart's followed by its guest
 * files. Only an ungrouped IMSIC (no riscv,group-index-bits) with one reg range is read.
 */
static bool read_node(int node)
{
	int parent = fdt_parent(node);
	uint32_t ac = fdt_node_u32(parent, "#address-cells", 2);
	uint32_t sc = fdt_node_u32(parent, "#size-cells", 1);
	uint32_t guest_bits = fdt_node_u32(node, "riscv,guest-index-bits", 0);
	uint32_t len, irq_len;
	const uint8_t *reg = fdt_node_prop(node, "reg", &len);
	const uint8_t *irqs = fdt_node_prop(node, "interrupts-extended", &irq_len);

	if (!reg || !irqs || ac < 1 || ac > 2 || sc < 1 || sc > 2 || len < 4 * (ac + sc) ||
	    guest_bits > 6 || fdt_node_u32(node, "riscv,group-index-bits", 0) != 0)
		return false;
	uint64_t base = fdt_read_cells(reg, ac);
	uint64_t size = fdt_read_cells(reg + 4 * ac, sc);
	uint64_t stride = 1ull << (guest_bits + FILE_SHIFT);

	for (uint32_t i = 0; 8 * (i + 1) <= irq_len; i++) {
		int intc = fdt_find_phandle(fdt_be32(irqs + 8 * i));
		int cpu = fdt_parent(intc);
		uint32_t hart_len;
		const void *hart = fdt_node_prop(cpu, "reg", &hart_len);

		if (fdt_node_u32(intc, "#interrupt-cells", 0) != 1)
			return false;   /* the pairs would be misread from here on */
		if (fdt_be32(irqs + 8 * i + 4) != CPU_INTC_S_EXTERNAL)
			return false;   /* the machine-level IMSIC */
		if (!hart || hart_len != 4 || fdt_be32(hart) >= MAX_CPUS || (i + 1) * stride > size)
			continue;
		files[fdt_be32(hart)] = (uintptr_t)(base + i * stride);
	}
	return true;
}

bool imsic_init(void)
{
	for (int node = fdt_find_compatible(FDT_NONE, "riscv,imsics"); node != FDT_NONE;
	     node = fdt_find_compatible(node, "riscv,imsics")) {
		if (read_node(node)) {
			num_ids = fdt_node_u32(node, "riscv,num-ids", 63);
			return true;
		}
	}
	return false;
}

unsigned imsic_num_ids(void)
{
	return num_ids;
}

uintptr_t imsic_file(unsigned hart)
{
	return hart < MAX_CPUS ? files[hart] : 0;
}

void imsic_local_init(void)
{
	if (!files[cpu_index()])
		return;
	for (unsigned id = 0; id <= num_ids; id += 64) {
		isel_write(isel_of(ISEL_EIE0, id), 0);
		isel_write(isel_of(ISEL_EIP0, id), 0);
	}
	isel_write(ISEL_EITHRESHOLD, 0);
	isel_write(ISEL_EIDELIVERY, 1);
}

/* Without a file of its own, sireg is not this hart's to touch (an illegal instruction). */
void imsic_enable(unsigned id)
{
	if (!files[cpu_index()])
		return;
	csr_write(CSR_SISELECT, isel_of(ISEL_EIE0, id));
	csr_set(CSR_SIREG, 1UL << (id % 64));
}

void imsic_disable(unsigned id)
{
	if (!files[cpu_index()])
		return;
	csr_write(CSR_SISELECT, isel_of(ISEL_EIE0, id));
	csr_clear(CSR_SIREG, 1UL << (id % 64));
}
