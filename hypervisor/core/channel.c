/* SPDX-License-Identifier: MIT */
/*
 * Channels (tern/channel.h): each member's map of the shared memory, made once at boot (a
 * restart reloads the partition's RAM only, the maps stay), and its doorbell page.
 *
 * A ring costs the ringing vCPU one trapped write and its own core's time: the hypervisor sets
 * the receiver's interrupt pending on the board's controller and returns.  Nothing waits for the
 * receiver, nothing is queued for it: rings it has not taken yet coalesce in the controller's
 * pending bit, so a storm of them cannot delay it beyond the one interrupt.
 */
#include <tern/arch.h>
#include <tern/channel.h>
#include <tern/config.h>
#include <tern/ivshmem.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/virtio_mmio.h>

/* A member's doorbell page: which channel, and which member it is there. */
struct doorbell {
	const struct tern_config_channel *channel;
	uint32_t index;     /* the channel's, in the blob */
	uint32_t member;
	uint32_t partition;
};

/* Written by the boot core while it creates the partitions; read-only once a vCPU runs. */
static struct doorbell doorbells[TERN_MAX_CHANNELS][TERN_MAX_PARTITIONS];

void channel_ring(struct vcpu *v, const struct tern_config_channel *ch, uint32_t c, uint64_t k)
{
	if (k < ch->num_members) {
		if (ch->member[k].flags & TERN_CHF_FRONTEND)
			virtio_backend_rang(c);
		else
			ivshmem_ring(c, (uint32_t)k, ch->member[k].irq);
		vcpu_count(v, STAT_DOORBELL_RING);
	} else {
		vcpu_count(v, STAT_DOORBELL_REFUSED);
	}
}

static enum mmio_result doorbell_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
					uint64_t *value, const void *ctx)
{
	/* cppcheck-suppress misra-c2012-11.5 ; the page's own doorbell, as channel_partition_init added it */
	const struct doorbell *d = ctx;
	const struct tern_config_channel *ch = d->channel;

	if (size != 4u)
		return MMIO_ABORT;
	if (write) {
		if (offset != CHANNEL_RING)
			return MMIO_DONE;
		/* The value is the store's 32 bits (mmio_access.value is masked to its size). */
		channel_ring(v, ch, d->index, *value);
		return MMIO_DONE;
	}
	if (offset == CHANNEL_SELF)
		*value = d->member;
	else if (offset == CHANNEL_MEMBERS)
		*value = ch->num_members;
	else
		*value = 0;
	return MMIO_DONE;
}

bool channel_partition_init(struct partition *p, const struct tern_config *cfg, char *err,
			    size_t errlen)
{
	const struct tern_config_channel *all = config_channels(cfg);

	for (uint32_t c = 0; c < TERN_MAX_CHANNELS; c++) {
		for (uint32_t k = 0; k < TERN_MAX_PARTITIONS; k++) {
			if (doorbells[c][k].partition == p->index)
				doorbells[c][k].channel = NULL; /* an earlier boot's (the host tests boot often) */
		}
	}
	for (uint32_t c = 0; c < cfg->num_channels; c++) {
		const struct tern_config_channel *ch = &all[c];
		for (uint32_t k = 0; k < ch->num_members; k++) {
			const struct tern_config_channel_member *m = &ch->member[k];
			/* A VirtIO frontend sees the device's transport, not the channel (virtio_mmio.c). */
			if (m->partition != p->index || (m->flags & TERN_CHF_FRONTEND))
				continue;
			/* The blob cannot know where the architecture puts the devices it emulates. */
			const struct mmio_device *dev = mmio_overlapping(p, ch->ipa, ch->size + CHANNEL_DOORBELL_SIZE);
			if (dev) {
				(void)snprintf(err, errlen, "channel %s at 0x%llx overlaps the emulated device at 0x%llx",
					       ch->name, (unsigned long long)ch->ipa,
					       (unsigned long long)dev->base);
				return false;
			}
			struct doorbell *d = &doorbells[c][k];
			*d = (struct doorbell){ ch, c, k, p->index };
			if (!arch_partition_map_shared(p, ch->ipa, ch->hpa, ch->size,
						       (m->flags & TERN_CHF_WRITABLE) != 0u, err, errlen) ||
			    !mmio_add(p, ch->doorbell_ipa, CHANNEL_DOORBELL_SIZE, doorbell_access, d, err,
				      errlen))
				return false;
		}
	}
	return ivshmem_partition_init(p, cfg, err, errlen);
}

bool channel_maps(const struct partition *p, ipaddr_t ipa)
{
	for (uint32_t c = 0; c < TERN_MAX_CHANNELS; c++) {
		for (uint32_t k = 0; k < TERN_MAX_PARTITIONS; k++) {
			const struct doorbell *d = &doorbells[c][k];
			if (d->channel && d->partition == p->index && ipa - d->channel->ipa < d->channel->size)
				return true;
		}
	}
	return ivshmem_maps(p, ipa);
}

bool channel_fast_doorbell(const struct partition *p, ipaddr_t *page,
			   struct channel_fast_ring ring[TERN_MAX_PARTITIONS])
{
	for (uint32_t c = 0; c < TERN_MAX_CHANNELS; c++) {
		for (uint32_t k = 0; k < TERN_MAX_PARTITIONS; k++) {
			const struct doorbell *d = &doorbells[c][k];
			if (!d->channel || d->partition != p->index)
				continue;
			const struct tern_config_channel *ch = d->channel;
			*page = ch->doorbell_ipa;
			for (uint32_t j = 0; j < TERN_MAX_PARTITIONS; j++) {
				/* A VirtIO frontend's ring is a request to its core (virtio_backend_rang). */
				bool member = j < ch->num_members && !(ch->member[j].flags & TERN_CHF_FRONTEND);
				ring[j].irq = member ? ch->member[j].irq : 0u;
				ring[j].gate = member ? ivshmem_ring_gate(c, j) : NULL;
			}
			return true;
		}
	}
	return false;
}

bool channel_irq_line(const struct partition *p, uint32_t irq)
{
	return ivshmem_line(p, irq) || virtio_line(p, irq);
}
