/* SPDX-License-Identifier: MIT */
#include <tern/config.h>
#include <tern/lib.h>
#include <tern/virtio_mmio.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static bool name_ok(const char *name)
{
	size_t n = strnlen(name, TERN_NAME_LEN);

	if (n == 0 || n == TERN_NAME_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* [base, base+len) inside [lo, lo+size) without wrapping. */
static bool inside(uint64_t base, uint64_t len, uint64_t lo, uint64_t size)
{
	return base >= lo && len <= size && base - lo <= size - len;
}

/* Whether interrupt `id` is among p's; an id past the bitmap is nobody's (a record's garbage). */
static bool has_irq(const struct tern_config_partition *p, uint32_t id)
{
	return id / 32u < TERN_IRQ_WORDS && (p->irqs[id / 32u] & (1u << (id % 32u)));
}

/* The allow-listed device range holding [base, base+size), or NULL. */
static const struct config_device *device_of(const struct config_limits *lim, uint64_t base,
					      uint64_t size)
{
	for (uint32_t d = 0; d < lim->num_devices; d++) {
		if (inside(base, size, lim->devices[d].base, lim->devices[d].size))
			return &lim->devices[d];
	}
	return NULL;
}

/* The allow-listed interrupt `id`, or NULL. */
static const struct config_irq *irq_of(const struct config_limits *lim, uint32_t id)
{
	for (uint32_t i = 0; i < lim->num_irqs; i++) {
		if (lim->irqs[i].id == id)
			return &lim->irqs[i];
	}
	return NULL;
}

/* Whether p has any range or interrupt of board device `device` (p already checked). */
static bool has_device(const struct tern_config_partition *p, const struct config_limits *lim,
		       uint32_t device)
{
	for (uint32_t r = 0; r < p->num_regions; r++) {
		const struct config_device *d = device_of(lim, p->region[r].hpa, p->region[r].size);
		if (d && d->device == device)
			return true;
	}
	for (uint32_t i = 0; i < lim->num_irqs; i++) {
		if (lim->irqs[i].device == device && has_irq(p, lim->irqs[i].id))
			return true;
	}
	return false;
}

/*
 * One device, one owner: a device split between partitions (a PCIe bridge's ECAM to one, its
 * memory window to another) lets one drive what the other's IOMMU context and interrupts
 * serve, a path from one partition's device into another's RAM.  The earlier partition
 * (before i) with a part of `device`, or NULL.
 */
static const char *other_owner(const struct tern_config *cfg, uint32_t i,
			       const struct config_limits *lim, uint32_t device)
{
	for (uint32_t j = 0; j < i; j++) {
		if (has_device(&cfg->partition[j], lim, device))
			return cfg->partition[j].name;
	}
	return NULL;
}

/* One of the board's spare interrupts, kept for channel doorbells. */
static bool is_doorbell_irq(const struct config_limits *lim, uint32_t id)
{
	return id >= lim->doorbell_irq_base && id - lim->doorbell_irq_base < lim->num_doorbell_irqs;
}

/* Whether partition i is a member of a channel whose doorbell for it is interrupt `id`. */
static bool rings_in(const struct tern_config *cfg, uint32_t i, uint32_t id)
{
	for (uint32_t c = 0; c < cfg->num_channels; c++) {
		/* Not checked yet: at most TERN_MAX_PARTITIONS members are read. */
		const struct tern_config_channel *ch = &config_channels(cfg)[c];
		for (uint32_t k = 0; k < ch->num_members && k < TERN_MAX_PARTITIONS; k++) {
			if (ch->member[k].partition == i && ch->member[k].irq == id)
				return true;
		}
	}
	return false;
}

/*
 * Whether interrupt `id` is the slot interrupt of a VirtIO device partition i is the frontend
 * of (the records' place was checked with the header; their fields are checked later).
 */
static bool virtio_slot_irq(const struct tern_config *cfg, uint32_t i, uint32_t id)
{
	const struct tern_config_virtio *all = config_virtio(cfg);

	for (uint32_t v = 0; v < cfg->num_virtio; v++) {
		if (all[v].frontend == i && all[v].irq == id)
			return true;
	}
	return false;
}

/* Whether a trusted virtio record has partition `be` serve partition `fe`. */
static bool trusts(const struct tern_config *cfg, uint32_t fe, uint32_t be)
{
	const struct tern_config_virtio *all = config_virtio(cfg);

	for (uint32_t v = 0; v < cfg->num_virtio; v++) {
		if ((all[v].flags & TERN_VF_BACKEND_TRUSTED) && all[v].frontend == fe && all[v].backend == be)
			return true;
	}
	return false;
}

/*
 * Partition i's region r, a window onto another partition's RAM: that RAM whole, only where a
 * trusted virtio device of that partition is served by this one, and clear of the rest of its
 * map (the channels' check covers them).
 */
static int check_window(const struct tern_config *cfg, uint32_t i, uint32_t r,
			const struct config_limits *lim, char *err, size_t errlen)
{
	const struct tern_config_partition *p = &cfg->partition[i];
	const struct tern_config_region *g = &p->region[r];
	unsigned long long base = (unsigned long long)g->hpa;
	uint32_t owner = cfg->num_partitions;

	for (uint32_t j = 0; j < cfg->num_partitions; j++) {
		const struct tern_config_partition *q = &cfg->partition[j];
		if (j != i && g->hpa == q->ram_hpa && g->size == q->ram_size)
			owner = j;
	}
	if (owner == cfg->num_partitions)
		return fail(err, errlen, "partition %s: region 0x%llx+0x%llx (partition RAM) is not "
			    "another partition's whole RAM", p->name, base, (unsigned long long)g->size);
	const char *fe = cfg->partition[owner].name;
	if (!trusts(cfg, owner, i))
		return fail(err, errlen, "partition %s: region 0x%llx maps partition %s's RAM, but no "
			    "trusted virtio device of %s is served by %s", p->name, base, fe, fe, p->name);
	if (!IS_ALIGNED(g->ipa, KiB(4)) || !inside(g->ipa, g->size, 0, lim->ipa_limit) ||
	    overlaps(g->ipa, g->size, p->ram_ipa, p->ram_size))
		return fail(err, errlen, "partition %s: region 0x%llx (partition %s's RAM) at IPA 0x%llx, "
			    "outside the guest map or over its own RAM", p->name, base, fe,
			    (unsigned long long)g->ipa);
	for (uint32_t s = 0; s < r; s++) {
		if (overlaps(g->ipa, g->size, p->region[s].ipa, p->region[s].size) ||
		    (p->region[s].flags == TERN_RF_PARTITION_RAM && p->region[s].hpa == g->hpa))
			return fail(err, errlen, "partition %s: region 0x%llx (partition %s's RAM) over "
				    "region 0x%llx", p->name, base, fe, (unsigned long long)p->region[s].hpa);
	}
	return 0;
}

/* Devices passed through: MMIO regions and interrupts the board allows, each to one partition. */
static int check_devices(const struct tern_config *cfg, uint32_t i, const struct config_limits *lim,
			 char *err, size_t errlen)
{
	const struct tern_config_partition *p = &cfg->partition[i];
	const char *n = p->name;

	if (p->num_regions > TERN_MAX_REGIONS)
		return fail(err, errlen, "partition %s: %u device regions (at most %u)", n,
			    p->num_regions, TERN_MAX_REGIONS);
	for (uint32_t r = 0; r < p->num_regions; r++) {
		const struct tern_config_region *g = &p->region[r];
		unsigned long long base = (unsigned long long)g->hpa;
		if (g->flags != TERN_RF_DEVICE && g->flags != TERN_RF_PARTITION_RAM)
			return fail(err, errlen, "partition %s: region 0x%llx has flags 0x%x", n, base,
				    g->flags);
		if (!g->size || !IS_ALIGNED(g->ipa | g->hpa | g->size, KiB(4)))
			return fail(err, errlen, "partition %s: region 0x%llx not 4 KiB aligned", n, base);
		if (g->flags == TERN_RF_PARTITION_RAM) {
			if (check_window(cfg, i, r, lim, err, errlen))
				return -1;
			continue;
		}
		/* The board's own map: a device appears where it is on the bare board. */
		if (g->ipa != g->hpa)
			return fail(err, errlen, "partition %s: region 0x%llx moved to IPA 0x%llx", n,
				    base, (unsigned long long)g->ipa);
		const struct config_device *dev = device_of(lim, g->hpa, g->size);
		if (!dev)
			return fail(err, errlen, "partition %s: region 0x%llx+0x%llx is not a device "
				    "this board lets a partition own", n, base,
				    (unsigned long long)g->size);
		/*
		 * An ECAM whole: the hypervisor emulates (where it must steer MSIs) and silences
		 * one from its base, and the bus's DMA follows its owner; a part would be mapped
		 * past both.
		 */
		if (dev->ecam && (g->hpa != dev->base || g->size != dev->size))
			return fail(err, errlen, "partition %s: region 0x%llx+0x%llx is part of the "
				    "ECAM at 0x%llx+0x%llx (an ECAM is given whole)", n, base,
				    (unsigned long long)g->size, (unsigned long long)dev->base,
				    (unsigned long long)dev->size);
		/* Without an IOMMU, only where the description says it accepts DMA anywhere. */
		if (dev->dma && !(lim->iommu && (cfg->flags & TERN_CF_IOMMU)) &&
		    !(p->flags & TERN_PF_UNCONFINED_DMA))
			return fail(err, errlen, "partition %s: region 0x%llx belongs to devices that "
				    "can do DMA, and the board has no IOMMU to confine it", n, base);
		for (uint32_t j = 0; j <= i; j++) {
			const struct tern_config_partition *q = &cfg->partition[j];
			for (uint32_t s = 0; s < (j == i ? r : q->num_regions); s++) {
				if (overlaps(g->hpa, g->size, q->region[s].hpa, q->region[s].size))
					return fail(err, errlen, "partition %s: region 0x%llx already given to %s",
						    n, base, q->name);
			}
		}
		const char *other = other_owner(cfg, i, lim, dev->device);
		if (other)
			return fail(err, errlen, "partition %s: region 0x%llx is part of a device %s has "
				    "a part of (a device goes to one partition whole)", n, base, other);
	}
	for (uint32_t w = 0; w < TERN_IRQ_WORDS; w++) {
		uint32_t bits = p->irqs[w];
		for (; bits; bits &= bits - 1) {
			uint32_t id = w * 32 + (uint32_t)__builtin_ctz(bits);
			const struct config_irq *irq = irq_of(lim, id);
			bool doorbell = is_doorbell_irq(lim, id);
			if (!irq && !doorbell && virtio_slot_irq(cfg, i, id))
				doorbell = true; /* checked with its record (check_virtio) */
			else if (doorbell && !rings_in(cfg, i, id))
				return fail(err, errlen, "partition %s: interrupt %u is a spare one, given only "
					    "as its doorbell in a channel", n, id);
			if (!irq && !doorbell)
				return fail(err, errlen, "partition %s: interrupt %u is not one of a device "
					    "this board lets a partition own", n, id);
			for (uint32_t j = 0; j < i; j++) {
				if (has_irq(&cfg->partition[j], id))
					return fail(err, errlen, "partition %s: interrupt %u already given to %s",
						    n, id, cfg->partition[j].name);
			}
			const char *other = irq ? other_owner(cfg, i, lim, irq->device) : NULL;
			if (other)
				return fail(err, errlen, "partition %s: interrupt %u is part of a device %s "
					    "has a part of (a device goes to one partition whole)", n, id,
					    other);
		}
	}
	return 0;
}

/* An untouched copy of a partition's image, device tree or initrd. */
struct copy {
	uint64_t hpa;
	uint64_t size;
};

static uint32_t copies_of(const struct tern_config_partition *p, struct copy out[3])
{
	const struct copy all[3] = {
		{ p->pristine_image_hpa, p->image_size },
		{ p->pristine_dtb_hpa, p->dtb_size },
		{ p->pristine_initrd_hpa, p->initrd_size },
	};
	uint32_t n = 0;

	for (uint32_t k = 0; k < 3; k++) {
		if (all[k].hpa)
			out[n++] = all[k];
	}
	return n;
}

/*
 * Pristine copies must survive every guest and every restart: in board RAM, outside the
 * hypervisor's, outside all partitions' RAM, and apart from each other.
 */
static int check_pristine(const struct tern_config *cfg, const struct config_range *ram,
			  const struct config_limits *lim, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < cfg->num_partitions; i++) {
		const struct tern_config_partition *p = &cfg->partition[i];
		struct copy mine[3];
		uint32_t n = copies_of(p, mine);
		for (uint32_t k = 0; k < n; k++) {
			if (!inside(mine[k].hpa, mine[k].size, ram->base, ram->size))
				return fail(err, errlen, "partition %s: pristine copy 0x%llx+0x%llx outside "
					    "the board's RAM", p->name, (unsigned long long)mine[k].hpa,
					    (unsigned long long)mine[k].size);
			if (overlaps(mine[k].hpa, mine[k].size, lim->reserved.base, lim->reserved.size))
				return fail(err, errlen, "partition %s: pristine copy overlaps the hypervisor",
					    p->name);
			for (uint32_t j = 0; j < cfg->num_partitions; j++) {
				const struct tern_config_partition *q = &cfg->partition[j];
				struct copy theirs[3];
				uint32_t m = copies_of(q, theirs);
				if (overlaps(mine[k].hpa, mine[k].size, q->ram_hpa, q->ram_size))
					return fail(err, errlen, "partition %s: pristine copy inside partition %s",
						    p->name, q->name);
				for (uint32_t l = 0; l < m; l++) {
					if ((j != i || l != k) &&
					    overlaps(mine[k].hpa, mine[k].size, theirs[l].hpa, theirs[l].size))
						return fail(err, errlen, "partition %s: pristine copy 0x%llx "
							    "overlaps another (of %s)", p->name,
							    (unsigned long long)mine[k].hpa, q->name);
				}
			}
		}
	}
	return 0;
}

/* The doorbell page above a channel's memory: what its members' maps hold of it. */
#define DOORBELL_PAGE KiB(4)

/* Whether partition `partition` is a member of channel `ch` (members already checked). */
static bool member_of(const struct tern_config_channel *ch, uint32_t partition)
{
	for (uint32_t k = 0; k < ch->num_members; k++) {
		if (ch->member[k].partition == partition)
			return true;
	}
	return false;
}

/* A channel's memory on the board: in its RAM, apart from everything else there. */
static int check_channel_memory(const struct tern_config *cfg, uint32_t c, const struct config_range *ram,
				const struct config_limits *lim, char *err, size_t errlen)
{
	const struct tern_config_channel *all = config_channels(cfg);
	const struct tern_config_channel *ch = &all[c];
	const char *n = ch->name;

	if (!inside(ch->hpa, ch->size, ram->base, ram->size))
		return fail(err, errlen, "channel %s: 0x%llx+0x%llx outside the board's RAM", n,
			    (unsigned long long)ch->hpa, (unsigned long long)ch->size);
	if (overlaps(ch->hpa, ch->size, lim->reserved.base, lim->reserved.size))
		return fail(err, errlen, "channel %s: overlaps the hypervisor", n);
	if (overlaps(ch->hpa, ch->size, (uintptr_t)cfg, cfg->size))
		return fail(err, errlen, "channel %s: overlaps the config blob", n);
	for (uint32_t j = 0; j < cfg->num_partitions; j++) {
		const struct tern_config_partition *q = &cfg->partition[j];
		struct copy copies[3];
		uint32_t m = copies_of(q, copies);
		if (overlaps(ch->hpa, ch->size, q->ram_hpa, q->ram_size))
			return fail(err, errlen, "channel %s: overlaps partition %s's RAM", n, q->name);
		for (uint32_t l = 0; l < m; l++) {
			if (overlaps(ch->hpa, ch->size, copies[l].hpa, copies[l].size))
				return fail(err, errlen, "channel %s: overlaps a pristine copy of %s", n,
					    q->name);
		}
	}
	for (uint32_t d = 0; d < c; d++) {
		if (overlaps(ch->hpa, ch->size, all[d].hpa, all[d].size))
			return fail(err, errlen, "channel %s: overlaps channel %s", n, all[d].name);
	}
	return 0;
}

/*
 * Where a member sees a channel: its memory and doorbell page outside the member's RAM and
 * devices and outside the other channels it has.
 */
static int check_channel_map(const struct tern_config *cfg, uint32_t c, uint32_t k,
			     char *err, size_t errlen)
{
	const struct tern_config_channel *all = config_channels(cfg);
	const struct tern_config_channel *ch = &all[c];
	const struct tern_config_partition *p = &cfg->partition[ch->member[k].partition];
	uint64_t span = ch->size + DOORBELL_PAGE;

	if (overlaps(ch->ipa, span, p->ram_ipa, p->ram_size))
		return fail(err, errlen, "channel %s: IPA 0x%llx overlaps partition %s's RAM", ch->name,
			    (unsigned long long)ch->ipa, p->name);
	for (uint32_t r = 0; r < p->num_regions; r++) {
		if (overlaps(ch->ipa, span, p->region[r].ipa, p->region[r].size))
			return fail(err, errlen, "channel %s: IPA 0x%llx overlaps partition %s's device "
				    "region 0x%llx", ch->name, (unsigned long long)ch->ipa, p->name,
				    (unsigned long long)p->region[r].ipa);
	}
	for (uint32_t d = 0; d < c; d++) {
		if (member_of(&all[d], ch->member[k].partition) &&
		    overlaps(ch->ipa, span, all[d].ipa, all[d].size + DOORBELL_PAGE))
			return fail(err, errlen, "channel %s: IPA 0x%llx overlaps channel %s in partition %s",
				    ch->name, (unsigned long long)ch->ipa, all[d].name, p->name);
	}
	return 0;
}

/* A member: a partition once, known flags, its own spare interrupt as its doorbell. */
static int check_channel_member(const struct tern_config *cfg, uint32_t c, uint32_t k,
				const struct config_limits *lim, char *err, size_t errlen)
{
	const struct tern_config_channel *all = config_channels(cfg);
	const struct tern_config_channel *ch = &all[c];
	const struct tern_config_channel_member *m = &ch->member[k];
	const char *n = ch->name;

	if (m->partition >= cfg->num_partitions)
		return fail(err, errlen, "channel %s: member %u is partition %u (there are %u)", n, k,
			    m->partition, cfg->num_partitions);
	const char *pn = cfg->partition[m->partition].name;
	bool frontend = m->flags == TERN_CHF_FRONTEND;
	if ((m->flags & ~TERN_CHF_WRITABLE) && !frontend)
		return fail(err, errlen, "channel %s: member %s has flags 0x%x", n, pn, m->flags);
	for (uint32_t l = 0; l < k; l++) {
		if (ch->member[l].partition == m->partition)
			return fail(err, errlen, "channel %s: partition %s is a member twice", n, pn);
	}
	/* A VirtIO frontend's is its slot's interrupt (check_virtio). */
	if (!frontend && !is_doorbell_irq(lim, m->irq))
		return fail(err, errlen, "channel %s: %s's doorbell %u is not a spare interrupt of this "
			    "board", n, pn, m->irq);
	for (uint32_t d = 0; d <= c; d++) {
		for (uint32_t l = 0; l < (d == c ? k : all[d].num_members); l++) {
			if (all[d].member[l].irq == m->irq)
				return fail(err, errlen, "channel %s: %s's doorbell %u already rings %s in "
					    "channel %s", n, pn, m->irq,
					    cfg->partition[all[d].member[l].partition].name, all[d].name);
		}
	}
	if (!has_irq(&cfg->partition[m->partition], m->irq))
		return fail(err, errlen, "channel %s: doorbell %u is not among partition %s's interrupts",
			    n, m->irq, pn);
	/* A frontend does not map the channel: nothing of it is in its map. */
	return frontend ? 0 : check_channel_map(cfg, c, k, err, errlen);
}

/* Channels: shared memory and doorbells between partitions already checked. */
static int check_channels(const struct tern_config *cfg, const struct config_range *ram,
			  const struct config_limits *lim, char *err, size_t errlen)
{
	const struct tern_config_channel *all = config_channels(cfg);

	for (uint32_t c = 0; c < cfg->num_channels; c++) {
		const struct tern_config_channel *ch = &all[c];
		if (!name_ok(ch->name))
			return fail(err, errlen, "channel %u: bad name", c);
		const char *n = ch->name;
		for (uint32_t d = 0; d < c; d++) {
			if (!memcmp(all[d].name, n, strnlen(n, TERN_NAME_LEN) + 1))
				return fail(err, errlen, "channel %s: name used twice", n);
		}
		if (!ch->size || ch->size > MiB(64) || !IS_ALIGNED(ch->size | ch->hpa | ch->ipa, KiB(4)))
			return fail(err, errlen, "channel %s: size 0x%llx at 0x%llx, IPA 0x%llx (4 KiB "
				    "multiples, up to 64 MiB)", n, (unsigned long long)ch->size,
				    (unsigned long long)ch->hpa, (unsigned long long)ch->ipa);
		if (ch->doorbell_ipa != ch->ipa + ch->size)
			return fail(err, errlen, "channel %s: doorbell page at 0x%llx, not right above it", n,
				    (unsigned long long)ch->doorbell_ipa);
		if (!inside(ch->ipa, ch->size + DOORBELL_PAGE, 0, lim->ipa_limit))
			return fail(err, errlen, "channel %s: IPA 0x%llx+0x%llx outside the guest map", n,
				    (unsigned long long)ch->ipa, (unsigned long long)ch->size);
		if (check_channel_memory(cfg, c, ram, lim, err, errlen))
			return -1;
		if (ch->num_members < 2 || ch->num_members > TERN_MAX_PARTITIONS)
			return fail(err, errlen, "channel %s: %u members (2..%u)", n, ch->num_members,
				    TERN_MAX_PARTITIONS);
		bool writable = false;
		for (uint32_t k = 0; k < ch->num_members; k++) {
			if (check_channel_member(cfg, c, k, lim, err, errlen))
				return -1;
			writable = writable || (ch->member[k].flags & TERN_CHF_WRITABLE);
		}
		if (!writable)
			return fail(err, errlen, "channel %s: no member maps it read-write", n);
	}
	return 0;
}

/* The virtio record naming channel c, or NULL. */
static const struct tern_config_virtio *virtio_of(const struct tern_config *cfg, uint32_t c)
{
	const struct tern_config_virtio *all = config_virtio(cfg);

	for (uint32_t v = 0; v < cfg->num_virtio; v++) {
		if (all[v].channel == c)
			return &all[v];
	}
	return NULL;
}

/* A device's channel: the backend's (member 0, read-write) and the frontend's (member 1). */
static int check_virtio_channel(const struct tern_config *cfg, const struct tern_config_virtio *v,
				char *err, size_t errlen)
{
	const struct tern_config_channel *all = config_channels(cfg);
	const char *n = v->name;
	struct virtio_shape shape = { 0, 0, 0 };

	if (!all || v->channel >= cfg->num_channels)
		return fail(err, errlen, "virtio %s: channel %u (there are %u)", n, v->channel,
			    cfg->num_channels);
	const struct tern_config_channel *ch = &all[v->channel];
	if (memcmp(ch->name, n, TERN_NAME_LEN) != 0)
		return fail(err, errlen, "virtio %s: its channel %u is named %s", n, v->channel, ch->name);
	if (ch->num_members != 2u || ch->member[0].partition != v->backend ||
	    ch->member[0].flags != TERN_CHF_WRITABLE || ch->member[1].partition != v->frontend ||
	    ch->member[1].flags != TERN_CHF_FRONTEND)
		return fail(err, errlen, "virtio %s: channel %s is not backend %s (read-write) then "
			    "frontend %s", n, ch->name, cfg->partition[v->backend].name,
			    cfg->partition[v->frontend].name);
	if (ch->member[1].irq != v->irq)
		return fail(err, errlen, "virtio %s: the frontend's member rings %u, not the slot's "
			    "interrupt %u", n, ch->member[1].irq, v->irq);
	(void)virtio_shape_of(v->device_id, &shape);
	uint64_t need = VIO_DATA + (uint64_t)shape.queues * shape.queue_size * shape.slot_size;
	if (ch->size < need)
		return fail(err, errlen, "virtio %s: channel of 0x%llx bytes, the device needs 0x%llx", n,
			    (unsigned long long)ch->size, (unsigned long long)need);
	return 0;
}

/* VirtIO devices served by another partition: each at a board slot, through its channel. */
static int check_virtio(const struct tern_config *cfg, const struct config_limits *lim, char *err,
			size_t errlen)
{
	const struct tern_config_virtio *all = config_virtio(cfg);
	const struct tern_config_channel *chans = config_channels(cfg);
	struct virtio_shape shape;

	for (uint32_t i = 0; i < cfg->num_virtio; i++) {
		const struct tern_config_virtio *v = &all[i];
		if (!name_ok(v->name))
			return fail(err, errlen, "virtio %u: bad name", i);
		const char *n = v->name;
		for (uint32_t j = 0; j < i; j++) {
			if (!memcmp(all[j].name, n, strnlen(n, TERN_NAME_LEN) + 1))
				return fail(err, errlen, "virtio %s: name used twice", n);
		}
		if (!virtio_shape_of(v->device_id, &shape))
			return fail(err, errlen, "virtio %s: device id %u (1 net, 2 blk, 3 console)", n,
				    v->device_id);
		if (v->flags & ~TERN_VF_BACKEND_TRUSTED)
			return fail(err, errlen, "virtio %s: unknown flags 0x%x", n, v->flags);
		if (v->frontend >= cfg->num_partitions || v->backend >= cfg->num_partitions ||
		    v->frontend == v->backend)
			return fail(err, errlen, "virtio %s: frontend %u and backend %u (two of the %u "
				    "partitions)", n, v->frontend, v->backend, cfg->num_partitions);
		const char *fe = cfg->partition[v->frontend].name;
		if ((v->flags & TERN_VF_BACKEND_TRUSTED) &&
		    !virtio_window(&cfg->partition[v->backend], &cfg->partition[v->frontend], NULL))
			return fail(err, errlen, "virtio %s: trusted, but backend %s has no window onto "
				    "%s's RAM (a partition RAM region)", n, cfg->partition[v->backend].name, fe);
		uint64_t slot = (v->mmio_ipa - lim->virtio_base) / (lim->virtio_stride ? lim->virtio_stride : 1u);
		if (!IS_ALIGNED(v->mmio_ipa, VIRTIO_MMIO_SIZE) || v->mmio_ipa < lim->virtio_base ||
		    slot >= lim->num_virtio_slots || v->mmio_ipa != lim->virtio_base + slot * lim->virtio_stride)
			return fail(err, errlen, "virtio %s: registers at 0x%llx, not one of the board's "
				    "virtio-mmio slots", n, (unsigned long long)v->mmio_ipa);
		uint64_t irq = lim->virtio_irq_base + slot;
		if (v->irq != irq)
			return fail(err, errlen, "virtio %s: interrupt %u, slot %llu's is %llu", n, v->irq,
				    (unsigned long long)slot, (unsigned long long)irq);
		/* Two devices on one slot would share its interrupt: check_channel_member refuses that. */
		if (!has_irq(&cfg->partition[v->frontend], v->irq))
			return fail(err, errlen, "virtio %s: interrupt %u is not among partition %s's", n,
				    v->irq, fe);
		if (check_virtio_channel(cfg, v, err, errlen))
			return -1;
	}
	for (uint32_t c = 0; c < cfg->num_channels; c++) {
		for (uint32_t k = 0; k < chans[c].num_members; k++) {
			if ((chans[c].member[k].flags & TERN_CHF_FRONTEND) && !virtio_of(cfg, c))
				return fail(err, errlen, "channel %s: a frontend member, but no virtio device",
					    chans[c].name);
		}
	}
	return 0;
}

static const char *const sched_names[] = { "null", "arinc653", "rtds", "credit" };

/* A pool whose cores its scheduler shares between vCPUs (every scheduler but null). */
static bool shared_pool(const struct tern_config *cfg, uint32_t pool)
{
	return pool != TERN_POOL_NONE && config_pools(cfg)[pool].scheduler != TERN_SCHED_NULL;
}

/*
 * The pool records on their own, before the partitions (which name them): names, cores that
 * are the board's and no other pool's, a known scheduler and its parameters.  The windows'
 * partitions are checked with the partitions (check_windows_and_budgets).
 */
static int check_pool_records(const struct tern_config *cfg, char *err, size_t errlen)
{
	const struct tern_config_pool *all = config_pools(cfg);
	uint32_t taken = 0;

	for (uint32_t q = 0; q < cfg->num_pools; q++) {
		const struct tern_config_pool *pl = &all[q];
		if (!name_ok(pl->name))
			return fail(err, errlen, "pool %u: bad name", q);
		const char *n = pl->name;
		for (uint32_t r = 0; r < q; r++) {
			if (!memcmp(all[r].name, n, strnlen(n, TERN_NAME_LEN) + 1))
				return fail(err, errlen, "pool %s: name used twice", n);
		}
		if (!pl->cpus || (pl->cpus >> cfg->board_cpus))
			return fail(err, errlen, "pool %s: cpus 0x%x (cores of the board's %u)", n,
				    pl->cpus, cfg->board_cpus);
		if (pl->cpus & taken)
			return fail(err, errlen, "pool %s: cpus 0x%x, a core already in another pool", n,
				    pl->cpus);
		taken |= pl->cpus;
		if (pl->scheduler >= ARRAY_SIZE(sched_names))
			return fail(err, errlen, "pool %s: scheduler %u", n, pl->scheduler);
		if (pl->scheduler != TERN_SCHED_ARINC653) {
			if (pl->major_frame_us || pl->num_windows)
				return fail(err, errlen, "pool %s: major frame or windows, but scheduler %s",
					    n, sched_names[pl->scheduler]);
			continue;
		}
		if (!pl->major_frame_us || !pl->num_windows || pl->num_windows > TERN_MAX_WINDOWS)
			return fail(err, errlen, "pool %s: major frame %u us, %u windows (1..%u)", n,
				    pl->major_frame_us, pl->num_windows, TERN_MAX_WINDOWS);
	}
	return 0;
}

/* Partition i's scheduling parameters: only those its pool's scheduler takes, in range. */
static int check_sched_params(const struct tern_config *cfg, uint32_t i, char *err, size_t errlen)
{
	const struct tern_config_partition *p = &cfg->partition[i];
	uint32_t sched = p->pool == TERN_POOL_NONE ? TERN_SCHED_NULL : config_pools(cfg)[p->pool].scheduler;
	const char *n = p->name;

	if (p->reserved1)
		return fail(err, errlen, "partition %s: reserved field 0x%x", n, p->reserved1);
	if (sched == TERN_SCHED_RTDS) {
		if (!p->budget_us || p->budget_us > p->period_us)
			return fail(err, errlen, "partition %s: budget %u us every %u us (budget 1..period)",
				    n, p->budget_us, p->period_us);
	} else if (p->budget_us || p->period_us) {
		return fail(err, errlen, "partition %s: budget or period, but its pool's scheduler is %s",
			    n, sched_names[sched]);
	}
	if (sched == TERN_SCHED_CREDIT) {
		if (!p->weight || p->weight > TERN_MAX_WEIGHT || p->cap > TERN_MAX_CAP)
			return fail(err, errlen, "partition %s: weight %u (1..%u), cap %u (0..%u)", n,
				    p->weight, TERN_MAX_WEIGHT, p->cap, TERN_MAX_CAP);
	} else if (p->weight || p->cap) {
		return fail(err, errlen, "partition %s: weight or cap, but its pool's scheduler is %s",
			    n, sched_names[sched]);
	}
	return 0;
}

/*
 * Partition i's pool and cores: a core of a pool is its members' only, a null pool's (and no
 * pool's) one vCPU per core as ever; a shared pool's vCPUs come back to the scheduler when
 * idle, and take their interrupts directly only where the core has state for each of them.
 * cpu_owner: the partition of each null core's vCPU; direct: direct vCPUs on each shared core.
 */
static int check_pool_member(const struct tern_config *cfg, uint32_t i,
			     const struct config_limits *lim, uint32_t *cpu_owner, uint32_t *direct,
			     char *err, size_t errlen)
{
	const struct tern_config_partition *p = &cfg->partition[i];
	const struct tern_config_pool *pools = config_pools(cfg);
	const char *n = p->name;

	if (p->pool != TERN_POOL_NONE && p->pool >= cfg->num_pools)
		return fail(err, errlen, "partition %s: pool %u (there are %u)", n, p->pool,
			    cfg->num_pools);
	bool shared = shared_pool(cfg, p->pool);
	if (shared && (p->flags & TERN_PF_IRQ_DIRECT) && !lim->shared_direct_vcpus)
		return fail(err, errlen, "partition %s: direct interrupts in pool %s, a shared core "
			    "(this board's direct delivery is the core's own)", n, pools[p->pool].name);
	if (shared && (p->flags & TERN_PF_WFI_NATIVE))
		return fail(err, errlen, "partition %s: native WFI in pool %s, whose scheduler must "
			    "see its idle", n, pools[p->pool].name);
	for (uint32_t c = 0; c < p->num_vcpus; c++) {
		uint32_t core = p->cpus[c];
		if (core >= cfg->board_cpus)
			return fail(err, errlen, "partition %s: core %u out of range", n, core);
		uint32_t in = TERN_POOL_NONE;
		for (uint32_t q = 0; q < cfg->num_pools; q++) {
			if (pools[q].cpus & (1u << core))
				in = q;
		}
		if (in != p->pool) {
			if (in == TERN_POOL_NONE)
				return fail(err, errlen, "partition %s: core %u is not in its pool %s", n,
					    core, pools[p->pool].name);
			if (p->pool == TERN_POOL_NONE)
				return fail(err, errlen, "partition %s: core %u is pool %s's, and the "
					    "partition names no pool", n, core, pools[in].name);
			return fail(err, errlen, "partition %s: core %u is in pool %s, not its own", n,
				    core, pools[in].name);
		}
		if (shared) {
			if (p->flags & TERN_PF_IRQ_DIRECT)
				direct[core]++;
			if (direct[core] > lim->shared_direct_vcpus)
				return fail(err, errlen, "partition %s: core %u has more than %u direct vCPUs "
					    "in pool %s", n, core, lim->shared_direct_vcpus,
					    pools[p->pool].name);
			continue;
		}
		if (cpu_owner[core] != 0xffffffffu)
			return fail(err, errlen, "partition %s: core %u already used by %s", n,
				    core, cfg->partition[cpu_owner[core]].name);
		cpu_owner[core] = i;
	}
	return check_sched_params(cfg, i, err, errlen);
}

/*
 * What needs the partitions: an ARINC 653 pool's windows name its own members and fit in its
 * major frame; an RTDS pool's servers ask no core for more than all of it (to a billionth:
 * `tern check` adds the fractions exactly).
 */
static int check_windows_and_budgets(const struct tern_config *cfg, char *err, size_t errlen)
{
	const struct tern_config_pool *pools = config_pools(cfg);

	for (uint32_t q = 0; q < cfg->num_pools; q++) {
		const struct tern_config_pool *pl = &pools[q];
		uint64_t sum = 0;
		for (uint32_t w = 0; w < pl->num_windows; w++) {
			const struct tern_config_window *win = &pl->window[w];
			if (win->partition >= cfg->num_partitions || cfg->partition[win->partition].pool != q)
				return fail(err, errlen, "pool %s: window %u is partition %u, not one of the "
					    "pool's", pl->name, w, win->partition);
			if (!win->duration_us)
				return fail(err, errlen, "pool %s: window %u of 0 us", pl->name, w);
			sum += win->duration_us;
		}
		if (sum > pl->major_frame_us)
			return fail(err, errlen, "pool %s: windows of %llu us in a major frame of %u us",
				    pl->name, (unsigned long long)sum, pl->major_frame_us);
		for (uint32_t w = pl->num_windows; w < TERN_MAX_WINDOWS; w++) {
			if (pl->window[w].partition || pl->window[w].duration_us)
				return fail(err, errlen, "pool %s: window %u past the %u used", pl->name, w,
					    pl->num_windows);
		}
		if (pl->scheduler != TERN_SCHED_RTDS)
			continue;
		for (uint32_t core = 0; core < cfg->board_cpus; core++) {
			uint64_t ppb = 0;
			for (uint32_t i = 0; i < cfg->num_partitions; i++) {
				const struct tern_config_partition *p = &cfg->partition[i];
				for (uint32_t c = 0; c < p->num_vcpus; c++) {
					if (p->pool == q && p->cpus[c] == core)
						ppb += (uint64_t)p->budget_us * 1000000000u / p->period_us;
				}
			}
			if (ppb > 1000000000u)
				return fail(err, errlen, "pool %s: core %u's budgets add up to %llu.%02llu "
					    "of it (at most 1)", pl->name, core,
					    (unsigned long long)(ppb / 1000000000u),
					    (unsigned long long)(ppb % 1000000000u / 10000000u));
		}
	}
	return 0;
}

int config_check(const struct tern_config *cfg, size_t avail,
		 const struct config_limits *lim, char *err, size_t errlen)
{
	if (avail < sizeof(*cfg))
		return fail(err, errlen, "blob too small (%zu bytes)", avail);
	if (cfg->magic != TERN_CONFIG_MAGIC)
		return fail(err, errlen, "no config blob (magic 0x%x)", cfg->magic);
	if (cfg->version != TERN_CONFIG_VERSION)
		return fail(err, errlen, "version %u, this hypervisor reads %u",
			    cfg->version, TERN_CONFIG_VERSION);
	if (cfg->num_partitions == 0 || cfg->num_partitions > TERN_MAX_PARTITIONS)
		return fail(err, errlen, "%u partitions (1..%u supported)",
			    cfg->num_partitions, TERN_MAX_PARTITIONS);
	if (cfg->num_channels > TERN_MAX_CHANNELS)
		return fail(err, errlen, "%u channels (at most %u)", cfg->num_channels, TERN_MAX_CHANNELS);
	/* 568-byte partition records end 8-byte aligned: the channels' follow them directly. */
	uint64_t channels_at = sizeof(*cfg) + (uint64_t)cfg->num_partitions * sizeof(cfg->partition[0]);
	if (cfg->channels_offset != channels_at && (cfg->num_channels || cfg->channels_offset))
		return fail(err, errlen, "channel records at %u, not after the partitions' (%llu)",
			    cfg->channels_offset, (unsigned long long)channels_at);
	if (cfg->num_virtio > TERN_MAX_VIRTIO)
		return fail(err, errlen, "%u virtio devices (at most %u)", cfg->num_virtio, TERN_MAX_VIRTIO);
	/* 184-byte channel records keep 8-byte alignment: the virtio records follow them directly. */
	uint64_t virtio_at = channels_at + (uint64_t)cfg->num_channels * sizeof(struct tern_config_channel);
	if (cfg->virtio_offset != virtio_at && (cfg->num_virtio || cfg->virtio_offset))
		return fail(err, errlen, "virtio records at %u, not after the channels' (%llu)",
			    cfg->virtio_offset, (unsigned long long)virtio_at);
	if (cfg->num_pools > TERN_MAX_POOLS)
		return fail(err, errlen, "%u pools (at most %u)", cfg->num_pools, TERN_MAX_POOLS);
	/* 48-byte virtio records keep 8-byte alignment: the pool records follow them directly. */
	uint64_t pools_at = virtio_at + (uint64_t)cfg->num_virtio * sizeof(struct tern_config_virtio);
	if (cfg->pools_offset != pools_at && (cfg->num_pools || cfg->pools_offset))
		return fail(err, errlen, "pool records at %u, not after the virtio devices' (%llu)",
			    cfg->pools_offset, (unsigned long long)pools_at);
	uint64_t need = pools_at + (uint64_t)cfg->num_pools * sizeof(struct tern_config_pool);
	if (cfg->size != need || need > avail)
		return fail(err, errlen, "size %u does not match %u partitions, %u channels, %u "
			    "virtio devices and %u pools", cfg->size, cfg->num_partitions,
			    cfg->num_channels, cfg->num_virtio, cfg->num_pools);
	uint32_t cpu_owner[TERN_MAX_CPUS];
	if (cfg->board_cpus == 0 || cfg->board_cpus > lim->max_cpus ||
	    cfg->board_cpus > ARRAY_SIZE(cpu_owner))
		return fail(err, errlen, "board_cpus %u (1..%u supported)", cfg->board_cpus,
			    lim->max_cpus);
	if (cfg->flags & ~TERN_CF_IOMMU)
		return fail(err, errlen, "unknown flags 0x%x", cfg->flags);
	/* Board RAM: from the platform's RAM base, no larger than the platform allows. */
	if (!cfg->ram_size || cfg->ram_size > lim->ram.size || !IS_ALIGNED(cfg->ram_size, MiB(1)))
		return fail(err, errlen, "board RAM size 0x%llx (whole MiB, up to 0x%llx)",
			    (unsigned long long)cfg->ram_size, (unsigned long long)lim->ram.size);
	/* A blob is not trusted with the board's size: what is not there faults when touched. */
	if (cfg->ram_size > lim->ram_found)
		return fail(err, errlen, "board RAM size 0x%llx, but the board has 0x%llx (the "
			    "firmware's device tree)", (unsigned long long)cfg->ram_size,
			    (unsigned long long)lim->ram_found);
	const struct config_range ram = { lim->ram.base, cfg->ram_size };
	if (!inside(lim->reserved.base, lim->reserved.size, ram.base, ram.size))
		return fail(err, errlen, "board RAM 0x%llx+0x%llx does not hold the hypervisor's",
			    (unsigned long long)ram.base, (unsigned long long)ram.size);

	(void)memset(cpu_owner, 0xff, sizeof(cpu_owner));
	uint32_t direct[TERN_MAX_CPUS] = { 0 };
	/* Every name first: a partition's check may name another (a window onto its RAM, a pool's window). */
	for (uint32_t i = 0; i < cfg->num_partitions; i++) {
		if (!name_ok(cfg->partition[i].name))
			return fail(err, errlen, "partition %u: bad name", i);
	}
	if (check_pool_records(cfg, err, errlen))
		return -1;

	for (uint32_t i = 0; i < cfg->num_partitions; i++) {
		const struct tern_config_partition *p = &cfg->partition[i];
		const char *n = p->name;
		if (p->flags & ~(TERN_PF_WFI_NATIVE | TERN_PF_IRQ_DIRECT | TERN_PF_UNCONFINED_DMA |
				 TERN_PF_MANAGER))
			return fail(err, errlen, "partition %s: unknown flags 0x%x", n, p->flags);
		if ((p->flags & TERN_PF_IRQ_DIRECT) && !(p->flags & TERN_PF_WFI_NATIVE) &&
		    !lim->direct_wfi_trap)
			return fail(err, errlen, "partition %s: direct interrupts need native WFI", n);
		if (p->fault_policy != TERN_FAULT_STOP && p->fault_policy != TERN_FAULT_RESTART &&
		    p->fault_policy != TERN_FAULT_INJECT)
			return fail(err, errlen, "partition %s: fault policy %u", n, p->fault_policy);
		if (p->restart_backoff_us > TERN_MAX_BACKOFF_US)
			return fail(err, errlen, "partition %s: restart back-off %llu us (at most %u)", n,
				    (unsigned long long)p->restart_backoff_us, TERN_MAX_BACKOFF_US);
		if (p->num_vcpus == 0 || p->num_vcpus > TERN_MAX_VCPUS)
			return fail(err, errlen, "partition %s: %u vCPUs (1..%u supported)", n,
				    p->num_vcpus, TERN_MAX_VCPUS);
		if (check_pool_member(cfg, i, lim, cpu_owner, direct, err, errlen))
			return -1;
		for (uint32_t j = 0; j < i; j++) {
			const char *other = cfg->partition[j].name;
			if (!memcmp(other, n, strnlen(n, TERN_NAME_LEN) + 1))
				return fail(err, errlen, "partition %s: name used twice", n);
		}
		if (!p->ram_size || !IS_ALIGNED(p->ram_size | p->ram_hpa | p->ram_ipa, MiB(2)))
			return fail(err, errlen, "partition %s: RAM not 2 MiB aligned", n);
		if (p->ram_ipa != lim->ram_ipa || !inside(p->ram_ipa, p->ram_size, 0, lim->ipa_limit))
			return fail(err, errlen, "partition %s: RAM IPA 0x%llx+0x%llx outside the guest map",
				    n, (unsigned long long)p->ram_ipa, (unsigned long long)p->ram_size);
		if (!inside(p->ram_hpa, p->ram_size, ram.base, ram.size))
			return fail(err, errlen, "partition %s: RAM 0x%llx+0x%llx outside the board's RAM",
				    n, (unsigned long long)p->ram_hpa, (unsigned long long)p->ram_size);
		if (overlaps(p->ram_hpa, p->ram_size, lim->reserved.base, lim->reserved.size))
			return fail(err, errlen, "partition %s: RAM overlaps the hypervisor", n);
		for (uint32_t j = 0; j < i; j++) {
			const struct tern_config_partition *q = &cfg->partition[j];
			if (overlaps(p->ram_hpa, p->ram_size, q->ram_hpa, q->ram_size))
				return fail(err, errlen, "partition %s: RAM overlaps partition %s", n, q->name);
		}
		if (!inside(p->entry_ipa, 4, p->ram_ipa, p->ram_size))
			return fail(err, errlen, "partition %s: entry 0x%llx outside its RAM", n,
				    (unsigned long long)p->entry_ipa);
		if (!inside(p->dtb_ipa, p->dtb_size, p->ram_ipa, p->ram_size) || !p->dtb_size ||
		    !IS_ALIGNED(p->dtb_ipa, 8))
			return fail(err, errlen, "partition %s: device tree outside its RAM", n);
		if (!inside(p->image_ipa, p->image_size, p->ram_ipa, p->ram_size) || !p->image_size)
			return fail(err, errlen, "partition %s: image outside its RAM", n);
		if (p->initrd_size &&
		    (!inside(p->initrd_ipa, p->initrd_size, p->ram_ipa, p->ram_size) ||
		     overlaps(p->initrd_ipa, p->initrd_size, p->image_ipa, p->image_size) ||
		     overlaps(p->initrd_ipa, p->initrd_size, p->dtb_ipa, p->dtb_size)))
			return fail(err, errlen, "partition %s: initrd outside its RAM or over its image "
				    "or device tree", n);
		if (p->pristine_initrd_hpa && !p->initrd_size)
			return fail(err, errlen, "partition %s: pristine initrd without an initrd", n);
		if (check_devices(cfg, i, lim, err, errlen))
			return -1;
	}

	if (check_windows_and_budgets(cfg, err, errlen) || check_pristine(cfg, &ram, lim, err, errlen) ||
	    check_channels(cfg, &ram, lim, err, errlen))
		return -1;
	return check_virtio(cfg, lim, err, errlen);
}

int config_validate(const struct tern_config *cfg, size_t avail,
		    const struct config_limits *lim, char *err, size_t errlen)
{
	if (config_check(cfg, avail, lim, err, errlen))
		return -1;
	/*
	 * Not built yet: a shared core's vCPUs take only their own virtual interrupts (timers,
	 * IPIs between them, the UART's, and a direct vCPU's where the core keeps state for each:
	 * check_pool_member); a device's, a doorbell's or a VirtIO slot's line would have to wait
	 * for a vCPU that is not running.
	 */
	for (uint32_t i = 0; i < cfg->num_partitions; i++) {
		const struct tern_config_partition *p = &cfg->partition[i];
		if (!shared_pool(cfg, p->pool))
			continue;
		const char *what = p->num_regions ? "devices passed through" : NULL;
		for (uint32_t w = 0; w < TERN_IRQ_WORDS && what == NULL; w++) {
			if (p->irqs[w])
				what = "interrupts passed through";
		}
		for (uint32_t c = 0; c < cfg->num_channels && what == NULL; c++) {
			if (member_of(&config_channels(cfg)[c], i))
				what = "channels";
		}
		if (what != NULL)
			return fail(err, errlen, "partition %s: pool %s: %s in a shared pool are not "
				    "built yet", p->name, config_pools(cfg)[p->pool].name, what);
	}
	return 0;
}
