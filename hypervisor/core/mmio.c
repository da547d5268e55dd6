/* SPDX-License-Identifier: MIT */
#include <tern/mmio.h>

#define MAX_REGIONS 8u

struct mmio_region {
	ipaddr_t base;
	uint64_t size;
	mmio_handler handler;
};

/* Written at boot by the boot core only, read-only afterwards. */
static struct mmio_region regions[MAX_REGIONS];
static uint32_t num_regions;

void mmio_register(ipaddr_t base, uint64_t size, mmio_handler handler)
{
	if (num_regions < MAX_REGIONS)
		regions[num_regions++] = (struct mmio_region){ base, size, handler };
}

void mmio_reset(void)
{
	num_regions = 0;
}

bool mmio_claimed(ipaddr_t ipa)
{
	for (uint32_t i = 0; i < num_regions; i++) {
		if (ipa - regions[i].base < regions[i].size)
			return true;
	}
	return false;
}

enum mmio_result mmio_emulate(struct vcpu *v, ipaddr_t ipa, unsigned size, bool write,
			      uint64_t *value)
{
	for (uint32_t i = 0; i < num_regions; i++) {
		const struct mmio_region *r = &regions[i];
		uint64_t offset = ipa - r->base; /* wraps for an IPA below the region */
		if (offset >= r->size)
			continue;
		/*
		 * Every emulated register is aligned to its size: a misaligned access would
		 * touch two, or land where its offset does not say (a write at GICD+0x105
		 * would change other interrupts than it names).
		 */
		if (ipa & (size - 1))
			return MMIO_MISALIGNED;
		return r->handler(v, offset, size, write, value);
	}
	return MMIO_UNHANDLED;
}
