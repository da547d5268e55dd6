/* SPDX-License-Identifier: MIT */
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/partition.h>

const struct mmio_device *mmio_overlapping(const struct partition *p, ipaddr_t base,
					   uint64_t size)
{
	const struct mmio_devices *d = &p->devices;

	for (uint32_t i = 0; i < d->count; i++) {
		const struct mmio_device *o = &d->device[i];
		if (base < o->base + o->size && o->base < base + size)
			return o;
	}
	return NULL;
}

bool mmio_add(struct partition *p, ipaddr_t base, uint64_t size, mmio_handler handler,
	      const void *ctx, char *err, size_t errlen)
{
	struct mmio_devices *d = &p->devices;
	const struct mmio_device *o = mmio_overlapping(p, base, size);

	if (o) {
		(void)snprintf(err, errlen, "emulated device at 0x%llx overlaps the one at 0x%llx",
			       (unsigned long long)base, (unsigned long long)o->base);
		return false;
	}
	if (d->count == MMIO_MAX_DEVICES) {
		(void)snprintf(err, errlen, "more than %u emulated devices (at 0x%llx)",
			       MMIO_MAX_DEVICES, (unsigned long long)base);
		return false;
	}
	d->device[d->count++] = (struct mmio_device){ base, size, handler, ctx };
	return true;
}

bool mmio_claimed(const struct partition *p, ipaddr_t ipa)
{
	const struct mmio_devices *d = &p->devices;

	for (uint32_t i = 0; i < d->count; i++) {
		if (ipa - d->device[i].base < d->device[i].size)
			return true;
	}
	return false;
}

enum mmio_result mmio_emulate(struct vcpu *v, ipaddr_t ipa, unsigned size, bool write,
			      uint64_t *value)
{
	const struct mmio_devices *d = &v->partition->devices;

	for (uint32_t i = 0; i < d->count; i++) {
		const struct mmio_device *r = &d->device[i];
		uint64_t offset = ipa - r->base; /* wraps for an IPA below the region */
		if (offset >= r->size)
			continue;
		/*
		 * Every emulated register is aligned to its size: a misaligned access would
		 * touch two, or land where its offset does not say (a write at base + 0x105
		 * would change other interrupts than it names).
		 */
		if (ipa & (size - 1))
			return MMIO_MISALIGNED;
		return r->handler(v, offset, size, write, value, r->ctx);
	}
	return MMIO_UNHANDLED;
}

void mmio_trap(struct vcpu *v, struct mmio_access *a)
{
	switch (mmio_emulate(v, a->ipa, a->size, a->write, &a->value)) {
	case MMIO_DONE:
		vcpu_count(v, STAT_EXIT_MMIO);
		arch_mmio_complete(v, a);
		break;
	case MMIO_ABORT:
		arch_mmio_bus_fault(v, a, MMIO_ABORT);
		break;
	case MMIO_MISALIGNED:
		arch_mmio_bus_fault(v, a, MMIO_MISALIGNED);
		break;
	case MMIO_UNHANDLED:
	default:
		arch_mmio_outside(v, a);
		break;
	}
}
