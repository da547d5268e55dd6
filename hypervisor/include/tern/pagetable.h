/* SPDX-License-Identifier: MIT */
/*
 * Translation tables: one walker (core/pagetable.c) for every port's stage-2 map.  The port
 * describes its table format (struct pt_format, arch/<port>/stage2.c) and encodes its entries
 * (<arch/pte.h>); the walker knows no entry's bits.
 */
#ifndef TERN_PAGETABLE_H
#define TERN_PAGETABLE_H

#include <arch/pte.h>
#include <tern/types.h>

/* A table below the root fills one pool page: 4 KiB of 8-byte entries. */
#define PT_PAGE_ENTRIES 512u
#define PT_LEVELS_MAX   4u

/*
 * A format's shape, root first: level 0 is the root.  Level l's entries each cover
 * 2^(page_shift + bits[l+1] + ... + bits[levels-1]) bytes; the input range is that sum with
 * bits[0].  A root may have more entries than a page (riscv64's Sv39x4: 2^11, 16 KiB) or fewer
 * (arm64's 32-bit IPA from level 1: 2^2); every other level has at most PT_PAGE_ENTRIES.
 */
struct pt_format {
	uint8_t levels;
	uint8_t bits[PT_LEVELS_MAX];
	uint8_t page_shift;
	/* Bit l: level l may hold blocks (leaves above the last level, whose entries all are). */
	uint8_t block_levels;
};

/* Table pages handed out at boot only (none ever comes back): `used` of `total`. */
struct pt_pool {
	pte_t (*pages)[PT_PAGE_ENTRIES];
	uint32_t total;
	uint32_t used;
};

/* A cleared page of the pool; NULL once all are used. */
pte_t *pt_alloc(struct pt_pool *pool);

/*
 * Map [ipa, ipa + size) to [pa, pa + size) with `attrs` (the port's leaf attributes, passed to
 * arch_pte_leaf unread): the largest blocks the format allows where ipa and pa are both
 * aligned to them, smaller entries elsewhere; sizes and addresses are whole pages.  A block
 * never replaces a table already there.  False if the range leaves the format's input range
 * (nothing is mapped) or the pool runs out (part may be mapped: the caller gives up the map).
 */
bool pt_map(const struct pt_format *fmt, struct pt_pool *pool, pte_t *root, ipaddr_t ipa, paddr_t pa,
	    uint64_t size, uint64_t attrs);

/*
 * Each port's <arch/pte.h> defines pte_t and its encoders, which the walker calls only:
 *   pte_t arch_pte_table(const pte_t *table)   an entry pointing to the next level's table
 *   pte_t arch_pte_leaf(paddr_t pa, uint64_t attrs, bool last_level)
 *                                               a leaf for pa: a block, or a page at the last level
 *   bool arch_pte_valid(pte_t e)
 *   bool arch_pte_is_table(pte_t e)             of a valid entry above the last level
 *   paddr_t arch_pte_addr(pte_t e)              its table's address, or its leaf's first byte's
 */

#endif
