/* SPDX-License-Identifier: MIT */
/*
 * Sv39 / Sv39x4 entries, as HS-mode's own map (mmu.c) and the G-stage (stage2.c) share them,
 * and their encoders for the walker (tern/pagetable.h): inline, as the maps are built at
 * boot, where every instruction is boot time.
 */
#ifndef ARCH_PTE_H
#define ARCH_PTE_H

#include <tern/types.h>

typedef uint64_t pte_t;

#define PTE_V  BIT(0)
#define PTE_R  BIT(1)
#define PTE_W  BIT(2)
#define PTE_X  BIT(3)
#define PTE_U  BIT(4)
#define PTE_G  BIT(5)
#define PTE_A  BIT(6)
#define PTE_D  BIT(7)

static inline pte_t arch_pte_table(const pte_t *table)
{
	return (((uintptr_t)table >> 12) << 10) | PTE_V;
}

/* One leaf format at every level: R, W or X set (`attrs` has them). */
static inline pte_t arch_pte_leaf(paddr_t pa, uint64_t attrs, bool last_level)
{
	(void)last_level;
	return ((pa >> 12) << 10) | attrs;
}

static inline bool arch_pte_valid(pte_t e)
{
	return (e & PTE_V) != 0u;
}

static inline bool arch_pte_is_table(pte_t e)
{
	return (e & (PTE_R | PTE_W | PTE_X)) == 0u;
}

static inline paddr_t arch_pte_addr(pte_t e)
{
	return (e >> 10) << 12;
}

#endif
