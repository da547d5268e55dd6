/* SPDX-License-Identifier: MIT */
/*
 * VMSAv8-64 descriptors (4 KiB granule), as EL2's own map (mmu.c) and stage 2 (stage2.c)
 * share them, and their encoders for the walker (tern/pagetable.h): inline, as the maps are
 * built at boot, where every instruction is boot time.
 */
#ifndef ARCH_PTE_H
#define ARCH_PTE_H

#include <tern/types.h>

typedef uint64_t pte_t;

#define PTE_VALID      BIT(0)
#define PTE_TABLE      (BIT(0) | BIT(1))
#define PTE_PAGE       (BIT(0) | BIT(1)) /* level 3 descriptor */
#define PTE_AF         BIT(10)
#define PTE_SH_INNER   (3ULL << 8)
#define PTE_XN         BIT(54)
#define PTE_ADDR_MASK  0x0000fffffffff000ULL

static inline pte_t arch_pte_table(const pte_t *table)
{
	return (uintptr_t)table | PTE_TABLE;
}

static inline pte_t arch_pte_leaf(paddr_t pa, uint64_t attrs, bool last_level)
{
	return (pa & PTE_ADDR_MASK) | (last_level ? PTE_PAGE : PTE_VALID) | attrs;
}

static inline bool arch_pte_valid(pte_t e)
{
	return (e & PTE_VALID) != 0u;
}

/* Above level 3, bit 1 tells a table from a block. */
static inline bool arch_pte_is_table(pte_t e)
{
	return (e & PTE_TABLE) == PTE_TABLE;
}

static inline paddr_t arch_pte_addr(pte_t e)
{
	return e & PTE_ADDR_MASK;
}

#endif
