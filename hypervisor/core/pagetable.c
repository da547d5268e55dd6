/* SPDX-License-Identifier: MIT */
/*
 * The stage-2 walker every port shares: its table format and entry encoders are the port's
 * (arch/<port>/stage2.c).  Maps are built at boot, where every instruction is boot time: a
 * walk from the root finds where a range starts, then a run of entries of that table is
 * written without walking again.
 */
#include <tern/lib.h>
#include <tern/pagetable.h>

pte_t *pt_alloc(struct pt_pool *pool)
{
	if (pool->used == pool->total)
		return NULL;
	pte_t *t = pool->pages[pool->used];
	pool->used++;
	(void)memset(t, 0, sizeof(pool->pages[0]));
	return t;
}

/*
 * The table behind an entry above the last level, made on first use; NULL if there is none to
 * be had (the pool is empty, or a block is there: mapped ranges never overlap).
 */
static pte_t *table_behind(pte_t *entry, struct pt_pool *pool)
{
	if (!arch_pte_valid(*entry)) {
		pte_t *t = pt_alloc(pool);
		if (t != NULL)
			*entry = arch_pte_table(t);
		return t;
	}
	if (!arch_pte_is_table(*entry))
		return NULL;
	return (pte_t *)(uintptr_t)arch_pte_addr(*entry);
}

bool pt_map(const struct pt_format *fmt, struct pt_pool *pool, pte_t *root, ipaddr_t ipa, paddr_t pa,
	    uint64_t size, uint64_t attrs)
{
	unsigned input_bits = fmt->page_shift;
	uint64_t end = ipa + size;

	for (unsigned l = 0; l < fmt->levels; l++)
		input_bits += fmt->bits[l];
	if (end < ipa || end > BIT(input_bits))
		return false;
	while (ipa < end) {
		pte_t *table = root;
		unsigned level = 0;
		unsigned shift = input_bits - fmt->bits[0];
		pte_t *e = &table[(ipa >> shift) & (BIT(fmt->bits[0]) - 1u)];
		bool last = fmt->levels == 1u;

		/* Down to the first level whose entry can map ipa whole: a block, or else a page. */
		while (!last && !(((fmt->block_levels >> level) & 1u) && IS_ALIGNED(ipa | pa, BIT(shift)) &&
				  end - ipa >= BIT(shift) && !arch_pte_valid(*e))) {
			table = table_behind(e, pool);
			if (table == NULL)
				return false;
			level++;
			shift -= fmt->bits[level];
			e = &table[(ipa >> shift) & (BIT(fmt->bits[level]) - 1u)];
			last = level + 1u == fmt->levels;
		}
		/*
		 * Then as many entries as fit from there, to the range's end or the table's (a page
		 * the range ends inside is mapped whole); a block stops short of a table.
		 */
		uint64_t span = BIT(shift);
		uint64_t stop = (ipa | ((span << fmt->bits[level]) - 1u)) + 1u;
		uint64_t count = ((stop < end ? stop : end) - ipa) >> shift;
		if (last) {
			count += (count == 0u) ? 1u : 0u;
			for (uint64_t i = 0; i < count; i++)
				e[i] = arch_pte_leaf(pa + (i << shift), attrs, true);
		} else {
			uint64_t i = 0;
			do {
				e[i] = arch_pte_leaf(pa + (i << shift), attrs, false);
				i++;
			} while (i < count && !arch_pte_valid(e[i]));
			count = i;
		}
		ipa += count << shift;
		pa += count << shift;
	}
	return true;
}
