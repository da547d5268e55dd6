/* SPDX-License-Identifier: MIT */
/*
 * Stage 2: each partition's IPA space, built by core/pagetable.c from this format and
 * <arch/pte.h>'s encoders.  A partition's RAM (2 MiB blocks), the MMIO of devices passed
 * to it (2 MiB blocks where aligned, else 4 KiB pages), its channels' memory and, for a
 * trusted VirtIO backend, its frontends' RAM are the only things mapped; every other IPA
 * faults into the hypervisor.
 */
#include <arch/partition.h>
#include <tern/partition.h>
#include <arch/pte.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/pagetable.h>

#define S2_MEM_NORMAL  (0xfULL << 2) /* outer and inner write-back */
#define S2_MEM_DEVICE  (0x1ULL << 2) /* Device-nGnRE */
#define S2_AP_RW       (3ULL << 6)
#define S2_AP_RO       (1ULL << 6)

/* Root, one level-2 table per GiB touched, level-3 tables for unaligned device edges. */
#define S2_POOL_PAGES  (8 * TERN_MAX_PARTITIONS)

/*
 * VTCR_EL2 (mmu.c): a 32-bit IPA from level 1, so a 4-entry root.  Blocks of 2 MiB only: level
 * 1's 1 GiB ones would save a table per partition but change every map the tests count.
 */
static const struct pt_format s2_format = {
	.levels = 3,
	.bits = { 2, 9, 9, 0 },
	.page_shift = 12,
	.block_levels = 1u << 1,
};

/* Each page is cleared when handed out (pt_alloc). */
static pte_t s2_pages[S2_POOL_PAGES][PT_PAGE_ENTRIES] __attribute__((aligned(4096), section(".noinit")));
static struct pt_pool s2_pool = { s2_pages, S2_POOL_PAGES, 0 };

bool arch_partition_init(struct partition *p, char *err, size_t errlen)
{
	struct arch_partition *ap = &p->arch;
	const struct tern_config_partition *c = p->cfg;
	pte_t *root = pt_alloc(&s2_pool);

	spin_lock_init(&ap->dist.lock);
	bool mapped = root && pt_map(&s2_format, &s2_pool, root, c->ram_ipa, c->ram_hpa, c->ram_size,
				     S2_MEM_NORMAL | S2_AP_RW | PTE_SH_INNER | PTE_AF);
	/*
	 * Device MMIO: never executable, no speculative or gathered access.  A trusted backend's
	 * window onto its frontend's RAM: memory as the frontend maps it (so the two agree on
	 * its cacheability), never executable.
	 */
	for (uint32_t r = 0; mapped && r < c->num_regions; r++) {
		uint64_t attrs = (c->region[r].flags == TERN_RF_PARTITION_RAM) ?
				 (S2_MEM_NORMAL | S2_AP_RW | PTE_SH_INNER | PTE_AF | PTE_XN) :
				 (S2_MEM_DEVICE | S2_AP_RW | PTE_AF | PTE_XN);
		mapped = pt_map(&s2_format, &s2_pool, root, c->region[r].ipa, c->region[r].hpa,
				c->region[r].size, attrs);
	}
	if (!mapped) {
		(void)snprintf(err, errlen, "out of stage-2 table pages, or a region outside the 4 GiB IPA space");
		return false;
	}

	ap->s2_root = root;
	ap->vttbr = (uintptr_t)root | ((uint64_t)(p->index + 1) << 48);
	dsb(ish);
	return true;
}

bool arch_partition_map_shared(struct partition *p, ipaddr_t ipa, paddr_t pa, uint64_t size,
			       bool writable, char *err, size_t errlen)
{
	uint64_t attrs = S2_MEM_NORMAL | (writable ? S2_AP_RW : S2_AP_RO) | PTE_SH_INNER | PTE_AF | PTE_XN;

	if (!pt_map(&s2_format, &s2_pool, p->arch.s2_root, ipa, pa, size, attrs)) {
		(void)snprintf(err, errlen, "out of stage-2 table pages, or shared memory at 0x%llx outside "
			       "the 4 GiB IPA space", (unsigned long long)ipa);
		return false;
	}
	dsb(ish);
	return true;
}

void arch_table_pages(uint32_t *used, uint32_t *total)
{
	*used = s2_pool.used;
	*total = s2_pool.total;
}
