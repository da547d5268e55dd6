#include "mmu.h"

#include "arm64.h"
#include "fdt.h"
#include "runtime.h"

#define PAGE_SIZE       0x1000UL
#define BLOCK_2M        0x200000UL
#define BLOCK_1G        0x40000000UL
#define ENTRIES         512
#define VA_BITS         39
#define DEVICE_END      BLOCK_1G        /* the board's devices: 0 .. 1 GiB */

/* Descriptor bits (VMSAv8-64, stage 1, 4 KiB granule). */
#define DESC_BLOCK      0x1UL           /* levels 1 and 2 */
#define DESC_TABLE      0x3UL           /* levels 1 and 2 */
#define DESC_PAGE       0x3UL           /* level 3 */
#define DESC_TYPE_MASK  0x3UL
#define DESC_ATTR(idx)  ((uint64_t)(idx) << 2)
#define DESC_SH_INNER   (3UL << 8)
#define DESC_AF         (1UL << 10)
#define DESC_PXN        (1UL << 53)
#define DESC_UXN        (1UL << 54)
#define DESC_ADDR_MASK  0x0000fffffffff000UL

/* MAIR_EL1 slots. */
#define ATTR_DEVICE     0               /* Device-nGnRE */
#define ATTR_NORMAL     1               /* Normal, inner/outer write-back, read/write-allocate */
#define ATTR_NORMAL_NC  2               /* Normal, inner/outer non-cacheable */
#define MAIR_VALUE      (0x04UL << (8 * ATTR_DEVICE) | 0xffUL << (8 * ATTR_NORMAL) | \
			 0x44UL << (8 * ATTR_NORMAL_NC))

#define PROT_DEVICE     (DESC_ATTR(ATTR_DEVICE) | DESC_AF | DESC_PXN | DESC_UXN)
#define PROT_NORMAL     (DESC_ATTR(ATTR_NORMAL) | DESC_SH_INNER | DESC_AF | DESC_UXN)
#define PROT_NORMAL_NC  (DESC_ATTR(ATTR_NORMAL_NC) | DESC_SH_INNER | DESC_AF | DESC_PXN | DESC_UXN)

/* TCR_EL1: TTBR0 only, 39-bit VA, 4 KiB granule, walks write-back cacheable inner shareable. */
#define TCR_T0SZ        (64UL - VA_BITS)
#define TCR_IRGN0_WB    (1UL << 8)
#define TCR_ORGN0_WB    (1UL << 10)
#define TCR_SH0_INNER   (3UL << 12)
#define TCR_TG0_4K      (0UL << 14)
#define TCR_EPD1        (1UL << 23)
#define TCR_IPS_SHIFT   32

/* SCTLR_EL1: the RES1 bits start.S sets, plus M (MMU), C (data cache), I (instruction cache). */
#define SCTLR_EL1_RES1  0x30d00800UL
#define SCTLR_M         (1UL << 0)
#define SCTLR_C         (1UL << 2)
#define SCTLR_I         (1UL << 12)

/* Tables come from RAM right after the image: none of this is in the image's .bss. */
#define POOL_PAGES      8

/*
 * What a CPU started later loads before its first C instruction (start.S, mmu_secondary_on),
 * read with its MMU still off: written by CPU 0 before its own MMU goes on, so it is in memory.
 * Kept in .data, so that guests that never use the MMU zero no more .bss at boot.
 */
struct mmu_regs {
	uint64_t sctlr;         /* 0: MMU not in use, the CPU keeps it off */
	uint64_t mair;
	uint64_t tcr;
	uint64_t ttbr0;
};
struct mmu_regs mmu_boot __attribute__((section(".data.mmu_boot"), aligned(64))) = { 0, 0, 0, 0 };

extern char _head[], _end[];

static uintptr_t pool_base, pool_next, pool_end;
static uint64_t *l1_table;

static uint64_t *new_table(void)
{
	if (pool_next >= pool_end)
		return 0;
	volatile uint64_t *t = (volatile uint64_t *)pool_next;
	for (unsigned i = 0; i < ENTRIES; i++)
		t[i] = 0;
	pool_next += PAGE_SIZE;
	return (uint64_t *)t;
}

static uintptr_t align_up(uintptr_t x, uintptr_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* The level-2 table for the GiB at `addr`, made if there is none yet (0: pool used up). */
static uint64_t *l2_for(uintptr_t addr)
{
	uint64_t *slot = &l1_table[addr / BLOCK_1G];

	if ((*slot & DESC_TYPE_MASK) == DESC_TABLE)
		return (uint64_t *)(uintptr_t)(*slot & DESC_ADDR_MASK);
	uint64_t *l2 = new_table();
	if (l2)
		*slot = (uintptr_t)l2 | DESC_TABLE;
	return l2;
}

bool mmu_init(void)
{
	uint64_t base = ram_base(), size = ram_size(), end = base + size;
	uintptr_t dtb;
	uint32_t dtb_size;

	if (l1_table)
		return true;
	if (!size || base < DEVICE_END || base % BLOCK_2M || end > (1UL << VA_BITS))
		return false;
	pool_base = align_up((uintptr_t)_end, PAGE_SIZE);
	fdt_extent(&dtb, &dtb_size);
	if (dtb_size && dtb < pool_base + POOL_PAGES * PAGE_SIZE && pool_base < dtb + dtb_size)
		pool_base = align_up(dtb + dtb_size, PAGE_SIZE);
	if (pool_base < base || pool_base + POOL_PAGES * PAGE_SIZE > end)
		return false;
	pool_next = pool_base;
	pool_end = pool_base + POOL_PAGES * PAGE_SIZE;

	l1_table = new_table();
	uint64_t *dev = l2_for(0);
	for (unsigned i = 0; i < ENTRIES; i++)
		dev[i] = (uint64_t)i * BLOCK_2M | PROT_DEVICE | DESC_BLOCK;
	/* RAM: whole GiBs as 1 GiB blocks, the rest in 2 MiB blocks (rounded up). */
	for (uint64_t addr = base; addr < end;) {
		if (addr % BLOCK_1G == 0 && end - addr >= BLOCK_1G) {
			l1_table[addr / BLOCK_1G] = addr | PROT_NORMAL | DESC_BLOCK;
			addr += BLOCK_1G;
			continue;
		}
		uint64_t *l2 = l2_for(addr);
		if (!l2)
			return false;
		l2[(addr / BLOCK_2M) % ENTRIES] = addr | PROT_NORMAL | DESC_BLOCK;
		addr += BLOCK_2M;
	}
	dsb_sy();
	return true;
}

bool mmu_is_on(void)
{
	return read_sysreg(sctlr_el1) & SCTLR_M;
}

/* Every CPU's TLB entries of EL1&0 (broadcast in the inner shareable domain). */
static void tlb_flush_all(void)
{
	__asm__ volatile("dsb ish\n\ttlbi vmalle1is\n\tdsb ish\n\tisb" : : : "memory");
}

bool mmu_map_normal_nc(uintptr_t base, size_t size)
{
	uintptr_t start = base & ~(PAGE_SIZE - 1), end = align_up(base + size, PAGE_SIZE);
	bool live = mmu_is_on();

	if (!l1_table || end > DEVICE_END || end <= start)
		return false;
	uint64_t *l2 = l2_for(0);
	for (uintptr_t block = start & ~(BLOCK_2M - 1); block < end; block += BLOCK_2M) {
		uint64_t *slot = &l2[block / BLOCK_2M];
		if ((*slot & DESC_TYPE_MASK) == DESC_TABLE)
			continue;
		/* Split the 2 MiB block into pages with the same attributes. */
		uint64_t *l3 = new_table();
		if (!l3)
			return false;
		for (unsigned i = 0; i < ENTRIES; i++)
			l3[i] = (block + i * PAGE_SIZE) | PROT_DEVICE | DESC_PAGE;
		dsb_sy();
		if (live) {     /* break before make */
			*slot = 0;
			tlb_flush_all();
		}
		*slot = (uintptr_t)l3 | DESC_TABLE;
	}
	for (uintptr_t page = start; page < end; page += PAGE_SIZE) {
		uint64_t *l3 = (uint64_t *)(uintptr_t)(l2[page / BLOCK_2M] & DESC_ADDR_MASK);
		l3[(page / PAGE_SIZE) % ENTRIES] = 0;
	}
	if (live)
		tlb_flush_all();
	for (uintptr_t page = start; page < end; page += PAGE_SIZE) {
		uint64_t *l3 = (uint64_t *)(uintptr_t)(l2[page / BLOCK_2M] & DESC_ADDR_MASK);
		l3[(page / PAGE_SIZE) % ENTRIES] = page | PROT_NORMAL_NC | DESC_PAGE;
	}
	dsb_sy();
	isb();
	return true;
}

/* Clean and invalidate [start, end) to the point of coherency. */
static void dcache_clean_inval(uintptr_t start, uintptr_t end)
{
	uint64_t line = 4UL << ((read_sysreg(ctr_el0) >> 16) & 0xf);

	for (uintptr_t a = start & ~(line - 1); a < end; a += line)
		__asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
	dsb_sy();
}

void mmu_enable(void)
{
	if (!l1_table || mmu_is_on())
		return;
	if (!mmu_boot.sctlr) {
		uint64_t parange = read_sysreg(id_aa64mmfr0_el1) & 0xf;
		mmu_boot.mair = MAIR_VALUE;
		mmu_boot.tcr = TCR_T0SZ | TCR_IRGN0_WB | TCR_ORGN0_WB | TCR_SH0_INNER | TCR_TG0_4K |
			       TCR_EPD1 | (parange > 5 ? 5 : parange) << TCR_IPS_SHIFT;
		mmu_boot.ttbr0 = (uintptr_t)l1_table;
		mmu_boot.sctlr = SCTLR_EL1_RES1 | SCTLR_M | SCTLR_C | SCTLR_I;
	}
	/*
	 * Everything written so far went to memory (the MMU off makes every access Device): make
	 * sure no stale cache line shadows it once accesses are cacheable.
	 */
	dcache_clean_inval((uintptr_t)_head, (uintptr_t)_end);
	dcache_clean_inval(pool_base, pool_end);
	write_sysreg(mair_el1, mmu_boot.mair);
	write_sysreg(tcr_el1, mmu_boot.tcr);
	write_sysreg(ttbr0_el1, mmu_boot.ttbr0);
	isb();
	__asm__ volatile("tlbi vmalle1\n\tdsb nsh\n\tic iallu\n\tdsb nsh\n\tisb" : : : "memory");
	write_sysreg(sctlr_el1, mmu_boot.sctlr);
	isb();
}
