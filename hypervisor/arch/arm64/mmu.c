/* SPDX-License-Identifier: MIT */
/* EL2 stage 1: the hypervisor's own identity map (each partition's stage 2: stage2.c). */
#include <arch/entry.h>
#include <arch/pte.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/platform.h>

#define S1_AP_RW       (1ULL << 6)  /* AP[2:1] = 0b01: AP[1] is RES1 in the EL2 regime */
#define S1_AP_RO       (3ULL << 6)
#define S1_ATTR_DEVICE (0ULL << 2)  /* MAIR index 0 */
#define S1_ATTR_NORMAL (1ULL << 2)  /* MAIR index 1 */

#define MAIR_VALUE     (0x00ULL | (0xffULL << 8))
/* 39-bit VA from level 1, write-back walks, inner shareable, 4 KiB granule, 40-bit PA. */
#define TCR_EL2_VALUE  (25ULL | (1ULL << 8) | (1ULL << 10) | (3ULL << 12) | (2ULL << 16) | BIT(23) | BIT(31))
/* 32-bit IPA (the board map below 4 GiB) from level 1, same attributes. */
#define VTCR_EL2_VALUE (32ULL | (1ULL << 6) | (1ULL << 8) | (1ULL << 10) | (3ULL << 12) | (2ULL << 16) | BIT(31))
/* M, C, SA, I, and WXN: nothing the hypervisor can write is executable. */
#define SCTLR_EL2_VALUE (0x30c50830ULL | BIT(0) | BIT(2) | BIT(3) | BIT(12) | BIT(19))

/* The hypervisor's own map: 1 GiB blocks, its own GiB in 2 MiB blocks, its image by pages. */
static uint64_t hyp_l1[512] __attribute__((aligned(4096), section(".bss.page")));
/* Every entry is written by mmu_init_tables, so boot need not clear them. */
static uint64_t hyp_l2[512] __attribute__((aligned(4096), section(".noinit")));
static uint64_t hyp_l3[512] __attribute__((aligned(4096), section(".noinit")));

/* hyp.ld: where the image, its text and its read-only data end (only their addresses mean anything). */
extern const char hyp_image_start;
extern const char hyp_text_end;
extern const char hyp_rodata_end;

/*
 * 0-1 GiB: devices; 1-4 GiB: RAM.  Only the hypervisor's text is executable, and read-only;
 * its read-only data is read-only; everything else (its data, partitions' RAM it loads,
 * pristine copies) is writable and never executable.  The image's text and read-only data
 * lie in its first 2 MiB (hyp.ld checks), mapped page by page.
 */
/* Entries [from, to) of `table` map consecutive `step`-sized frames from `pa` with `attrs`. */
static void fill_entries(uint64_t *table, size_t from, size_t to, uint64_t pa, uint64_t step,
			 uint64_t attrs)
{
	for (size_t i = from; i < to; i++)
		table[i] = (pa + (i - from) * step) | attrs;
}

/* The L3 index of `pa` in the 2 MiB block at `block` (pa is clamped to the block). */
static size_t l3_index(uintptr_t pa, uintptr_t block)
{
	if (pa <= block)
		return 0;
	return pa - block >= MiB(2) ? 512 : (pa - block) / KiB(4);
}

void mmu_init_tables(void)
{
	const uint64_t normal = PTE_VALID | S1_ATTR_NORMAL | PTE_SH_INNER | PTE_AF;
	const uint64_t page = PTE_PAGE | S1_ATTR_NORMAL | PTE_SH_INNER | PTE_AF;
	uintptr_t text = (uintptr_t)&hyp_image_start;
	uintptr_t block = text & ~(MiB(2) - 1);
	/* Page-aligned by hyp.ld: text, then read-only data, then the rest. */
	size_t text_first = l3_index(text, block);
	size_t text_end = l3_index((uintptr_t)&hyp_text_end, block);
	size_t ro_end = l3_index((uintptr_t)&hyp_rodata_end, block);

	hyp_l1[0] = PTE_VALID | S1_ATTR_DEVICE | PTE_AF | S1_AP_RW | PTE_XN;
	hyp_l1[1] = (uintptr_t)hyp_l2 | PTE_TABLE;
	for (uint64_t gib = 2; gib < 4; gib++)
		hyp_l1[gib] = (gib << 30) | normal | S1_AP_RW | PTE_XN;
	fill_entries(hyp_l2, 0, 512, GiB(1), MiB(2), normal | S1_AP_RW | PTE_XN);
	hyp_l2[(block >> 21) & 511] = (uintptr_t)hyp_l3 | PTE_TABLE;
	fill_entries(hyp_l3, 0, text_first, block, KiB(4), page | S1_AP_RW | PTE_XN);
	fill_entries(hyp_l3, text_first, text_end, block + text_first * KiB(4), KiB(4),
		     page | S1_AP_RO);
	fill_entries(hyp_l3, text_end, ro_end, block + text_end * KiB(4), KiB(4),
		     page | S1_AP_RO | PTE_XN);
	fill_entries(hyp_l3, ro_end, 512, block + ro_end * KiB(4), KiB(4),
		     page | S1_AP_RW | PTE_XN);
	/* Below each core's stack: an overflow faults instead of writing the next core's. */
	for (unsigned i = 0; i < MAX_CPUS; i++)
		hyp_l3[l3_index((uintptr_t)cpu_stacks[i].guard, block)] = 0;
}

void mmu_enable(void)
{
	write_sysreg(mair_el2, MAIR_VALUE);
	write_sysreg(tcr_el2, TCR_EL2_VALUE);
	write_sysreg(ttbr0_el2, (uintptr_t)hyp_l1);
	write_sysreg(vtcr_el2, VTCR_EL2_VALUE);
	dsb(ish);
	__asm__ volatile("tlbi alle2" ::: "memory");
	dsb(ish);
	isb();
	write_sysreg(sctlr_el2, SCTLR_EL2_VALUE);
	isb();
}

/* Would a write at `va` go through this core's EL2 stage 1?  (AT: no access is made.) */
/* cppcheck-suppress misra-c2012-2.7 ; `va` is the AT instruction's operand (inline assembly) */
static bool el2_writable(uintptr_t va)
{
	__asm__ volatile("at s1e2w, %0" : : "r"(va) : "memory");
	isb();
	return !(read_sysreg(par_el1) & 1); /* PAR_EL1.F: the translation would fault */
}

bool mmu_text_protected(void)
{
	/* The hypervisor's code and the vectors it runs from: never writable (W^X). */
	return !el2_writable((uintptr_t)&hyp_image_start) && !el2_writable((uintptr_t)hyp_vectors) &&
	       el2_writable((uintptr_t)hyp_l1) &&
	       !el2_writable((uintptr_t)cpu_stacks[this_cpu()->id].guard);
}

void arch_sync_guest_memory(paddr_t pa, uint64_t size)
{
	uint64_t line = 4ULL << ((read_sysreg(ctr_el0) >> 16) & 0xf);

	for (uint64_t a = pa & ~(line - 1); a < pa + size; a += line)
		__asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
	dsb(ish);
	/* This core's instructions only: other partitions' cores keep theirs (arch_vcpu_run). */
	__asm__ volatile("ic iallu" ::: "memory");
	dsb(nsh);
	isb();
}

/* Board RAM is in the hypervisor's map whole, read-write (mmu_init_tables). */
bool arch_hyp_map_shared(paddr_t pa, uint64_t size)
{
	(void)pa;
	(void)size;
	return true;
}
