/* SPDX-License-Identifier: MIT */
/*
 * Channels as ivshmem (v1) PCI functions on a PCI host bridge the hypervisor emulates for a
 * partition that does not own the board's (tern/ivshmem.h).  The partition sees the board's
 * map: the bridge's ECAM and memory window are the board's own addresses, bus 0 only.
 *
 * The BARs never move: the hypervisor places them at boot and the guest's device tree tells
 * Linux to keep what it finds (linux,pci-probe-only), so a BAR write changes only what a size
 * probe reads back, and no map is ever rebuilt.
 *
 * A function's Command, IntrMask and IntrStatus are written by its partition's vCPUs and by
 * whichever core rings it, with no lock: each is one atomic word, and every path that may
 * assert the INTx writes its own word first and then reads the others' (sequentially
 * consistent), so of a ring and a concurrent unmask at least one sees the other's write and
 * raises the interrupt.  An extra raise costs nothing: it coalesces in the controller's
 * pending bit.
 */
#include <stdatomic.h>
#include <tern/arch.h>
#include <tern/channel.h>
#include <tern/config.h>
#include <tern/ivshmem.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/platform.h>

#define ECAM_BUS_SIZE        0x100000u  /* bus 0: 32 devices x 8 functions x 4 KiB */
#define CFG_SPACE_SIZE       0x1000u
#define CFG_VENDOR_ID        0x00u
#define CFG_COMMAND          0x04u      /* Command, and Status in the upper half */
#define CFG_CLASS_REV        0x08u
#define CFG_BAR0             0x10u
#define CFG_BAR2             0x18u
#define CFG_BAR3             0x1cu
#define CFG_SUBSYSTEM        0x2cu
#define CFG_INTERRUPT        0x3cu      /* line, pin, min_gnt, max_lat */

#define IVSHMEM_IDS          0x11101af4u   /* Red Hat's ivshmem, device and vendor */
#define IVSHMEM_CLASS_REV    0x05000001u   /* class RAM memory, revision 1 */
#define IVSHMEM_SUBSYSTEM    0x11001af4u
#define INTERRUPT_PIN_INTA   0x100u

#define CMD_MEMORY           0x2u
#define CMD_BUS_MASTER       0x4u
#define CMD_INTX_DISABLE     0x400u
#define CMD_WRITABLE         (CMD_MEMORY | CMD_BUS_MASTER | CMD_INTX_DISABLE)
#define STATUS_INTERRUPT     0x80000u   /* in the Command dword: Status bit 3 */
#define BAR_MEM64_PREFETCH   0xcu

/* One function: a member's view of one channel. */
struct ivshmem_fn {
	/* Set by the boot core while it creates the partition; read-only once a vCPU runs. */
	const struct tern_config_channel *channel; /* NULL: no function (the member has no bridge) */
	uint32_t channel_index;
	uint32_t member;
	uint32_t partition;
	ipaddr_t bar0;
	ipaddr_t bar2;
	uint64_t bar2_size;
	/* The guest's, and the ringing core's. */
	_Atomic uint32_t command;
	_Atomic uint32_t intr_mask;
	_Atomic uint32_t intr_status;
	_Atomic uint32_t sizing;   /* bit n: BARn was written all-ones, a read gives its size mask */
};

/* A partition's bridge: device 1 + j is functions[its j-th channel][its member index]. */
struct ivshmem_bridge {
	uint32_t num;
	struct ivshmem_fn *fn[TERN_MAX_CHANNELS];
};

/*
 * [channel][member]: where a ring of member k of channel c finds the function.  Not cleared
 * at boot (.noinit, like partitions[]: the clear would be most of these 8 KiB's cost at boot):
 * each member's ivshmem_partition_init sets its entries of the configured channels, the only
 * ones a ring or an access reaches, and its bridge, before any vCPU runs.
 */
static struct ivshmem_fn functions[TERN_MAX_CHANNELS][TERN_MAX_PARTITIONS]
	__attribute__((section(".noinit")));
static struct ivshmem_bridge bridges[TERN_MAX_PARTITIONS] __attribute__((section(".noinit")));

static uint32_t load(_Atomic uint32_t *word)
{
	return atomic_load(word);
}

/* The INTx level: Status.INTERRUPT, whatever Command.INTX_DISABLE says. */
static bool level(struct ivshmem_fn *f)
{
	return (load(&f->intr_status) & load(&f->intr_mask) & 1u) != 0u;
}

/* After a write that may have let an asserted level through: the interrupt again. */
static void reassert(struct ivshmem_fn *f)
{
	if (level(f) && !(load(&f->command) & CMD_INTX_DISABLE))
		arch_irq_raise(f->channel->member[f->member].irq);
}

void ivshmem_ring(uint32_t c, uint32_t k, uint32_t irq)
{
	struct ivshmem_fn *f = &functions[c][k];

	if (f->channel && (load(&f->command) & CMD_MEMORY)) {
		(void)atomic_fetch_or(&f->intr_status, 1u);
		if (!(load(&f->intr_mask) & 1u) || (load(&f->command) & CMD_INTX_DISABLE))
			return;
	}
	arch_irq_raise(irq);
}

const _Atomic uint32_t *ivshmem_ring_gate(uint32_t c, uint32_t k)
{
	_Static_assert(CMD_MEMORY == BIT(IVSHMEM_RING_GATE_BIT), "the gate is Command.MEMORY");
	return functions[c][k].channel ? &functions[c][k].command : NULL;
}

bool ivshmem_line(const struct partition *p, uint32_t irq)
{
	const struct ivshmem_bridge *b = &bridges[p->index];

	for (uint32_t j = 0; j < b->num; j++) {
		struct ivshmem_fn *f = b->fn[j];
		if (f->channel->member[f->member].irq == irq)
			return level(f) && !(load(&f->command) & CMD_INTX_DISABLE);
	}
	return false;
}

static void reset_fn(struct ivshmem_fn *f)
{
	atomic_store(&f->command, 0u);
	atomic_store(&f->intr_mask, 0u);
	atomic_store(&f->intr_status, 0u);
	atomic_store(&f->sizing, 0u);
}

void ivshmem_reset(const struct partition *p)
{
	struct ivshmem_bridge *b = &bridges[p->index];

	for (uint32_t j = 0; j < b->num; j++)
		reset_fn(b->fn[j]);
}

bool ivshmem_maps(const struct partition *p, ipaddr_t ipa)
{
	const struct ivshmem_bridge *b = &bridges[p->index];

	for (uint32_t j = 0; j < b->num; j++) {
		if (ipa - b->fn[j]->bar2 < b->fn[j]->channel->size)
			return true;
	}
	return false;
}

/* The bytes an access of `size` (1, 2 or 4) carries. */
static uint32_t size_mask(unsigned size)
{
	return size == 4u ? 0xffffffffu : (uint32_t)(BIT(8u * size) - 1u);
}

/* The type 0 header, a dword at a time; everything not named reads 0. */
static uint32_t header_dword(struct ivshmem_fn *f, uint32_t at)
{
	uint32_t sizing = load(&f->sizing);
	uint64_t bar2_mask = ~(f->bar2_size - 1u);

	switch (at) {
	case CFG_VENDOR_ID:
		return IVSHMEM_IDS;
	case CFG_COMMAND:
		return load(&f->command) | (level(f) ? STATUS_INTERRUPT : 0u);
	case CFG_CLASS_REV:
		return IVSHMEM_CLASS_REV;
	case CFG_BAR0:
		return (sizing & BIT(0)) ? ~(IVSHMEM_REGS_SIZE - 1u) : (uint32_t)f->bar0;
	case CFG_BAR2:
		return (uint32_t)((sizing & BIT(2)) ? bar2_mask : f->bar2) | BAR_MEM64_PREFETCH;
	case CFG_BAR3:
		return (uint32_t)(((sizing & BIT(3)) ? bar2_mask : f->bar2) >> 32);
	case CFG_SUBSYSTEM:
		return IVSHMEM_SUBSYSTEM;
	case CFG_INTERRUPT:
		return INTERRUPT_PIN_INTA;
	default:
		return 0u;
	}
}

/* Only Command's bits and the BARs' size probes take a write; Status has no bits to clear. */
static void header_write(struct ivshmem_fn *f, uint32_t reg, unsigned size, uint32_t value)
{
	uint32_t at = reg & ~3u;
	uint32_t shift = 8u * (reg & 3u);
	uint32_t mask = size_mask(size) << shift;

	if (at == CFG_COMMAND && (mask & 0xffffu)) {
		uint32_t old = load(&f->command);
		uint32_t command = ((old & ~mask) | (value << shift)) & CMD_WRITABLE;
		old = atomic_exchange(&f->command, command);
		if ((old & CMD_INTX_DISABLE) && !(command & CMD_INTX_DISABLE))
			reassert(f);
	} else if (at == CFG_BAR0 || at == CFG_BAR2 || at == CFG_BAR3) {
		uint32_t bar = (uint32_t)BIT((at - CFG_BAR0) / 4u);
		if (size == 4u && value == 0xffffffffu)
			(void)atomic_fetch_or(&f->sizing, bar);
		else
			(void)atomic_fetch_and(&f->sizing, ~bar); /* the BAR stays where it is */
	} else {
		/* read-only or reserved: ignored */
	}
}

/* The bridge's bus 0: device 1 + j, function 0, is the j-th function; nothing else is there. */
static enum mmio_result ecam_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
				    uint64_t *value, const void *ctx)
{
	(void)v;
	/* cppcheck-suppress misra-c2012-11.5 ; the partition's own bridge, as ivshmem_partition_init added it */
	const struct ivshmem_bridge *b = ctx;
	uint32_t reg = (uint32_t)offset & (CFG_SPACE_SIZE - 1u);
	uint32_t device = (uint32_t)(offset >> 15);
	uint32_t function = (uint32_t)(offset >> 12) & 7u;

	if (size > 4u)
		return MMIO_ABORT; /* configuration space has no 8-byte registers */
	if (function != 0u || device == 0u || device > b->num) {
		if (!write)
			*value = size_mask(size);
		return MMIO_DONE;
	}
	struct ivshmem_fn *f = b->fn[device - 1u];
	if (write)
		header_write(f, reg, size, (uint32_t)*value);
	else
		*value = (header_dword(f, reg & ~3u) >> (8u * (reg & 3u))) & size_mask(size);
	return MMIO_DONE;
}

/* The BAR0s of the bridge's functions, one 4 KiB page each from the window's base. */
static enum mmio_result regs_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
				    uint64_t *value, const void *ctx)
{
	/* cppcheck-suppress misra-c2012-11.5 ; the partition's own bridge, as ivshmem_partition_init added it */
	const struct ivshmem_bridge *b = ctx;
	struct ivshmem_fn *f = b->fn[offset / IVSHMEM_REGS_SIZE];
	uint32_t reg = (uint32_t)offset & (IVSHMEM_REGS_SIZE - 1u);

	if (size != 4u)
		return MMIO_ABORT;
	if (!write) {
		if (reg == IVSHMEM_INTR_MASK)
			*value = load(&f->intr_mask);
		else if (reg == IVSHMEM_INTR_STATUS)
			*value = atomic_exchange(&f->intr_status, 0u);
		else if (reg == IVSHMEM_IV_POSITION)
			*value = f->member;
		else
			*value = 0;
		return MMIO_DONE;
	}
	/* The value is the store's 32 bits (mmio_access.value is masked to its size). */
	uint32_t data = (uint32_t)*value;
	if (reg == IVSHMEM_INTR_MASK) {
		if (!(atomic_exchange(&f->intr_mask, data) & 1u) && (data & 1u))
			reassert(f);
	} else if (reg == IVSHMEM_INTR_STATUS) {
		if (!(atomic_exchange(&f->intr_status, data) & 1u) && (data & 1u))
			reassert(f);
	} else if (reg == IVSHMEM_DOORBELL) {
		channel_ring(v, f->channel, f->channel_index, data >> 16);
	} else {
		/* IVPosition and the rest: ignored */
	}
	return MMIO_DONE;
}

/* The board's PCIe host bridge: its ECAM, and the device the ECAM is part of. */
static const struct platform_range *board_ecam(void)
{
	for (uint32_t d = 0; d < platform.num_devices; d++) {
		if (platform.devices[d].flags & PLATFORM_ECAM)
			return &platform.devices[d];
	}
	return NULL;
}

static const struct platform_range *board_window(uint32_t device)
{
	for (uint32_t d = 0; d < platform.num_devices; d++) {
		const struct platform_range *r = &platform.devices[d];
		if ((r->flags & PLATFORM_PCI_MEM32) && r->device == device)
			return r;
	}
	return NULL;
}

/* Whether p was given any part of the board device `device` (its own bridge keeps it). */
static bool owns_device(const struct partition *p, uint32_t device)
{
	const struct tern_config_partition *c = p->cfg;

	for (uint32_t d = 0; d < platform.num_devices; d++) {
		const struct platform_range *r = &platform.devices[d];
		if (r->device != device)
			continue;
		for (uint32_t i = 0; i < c->num_regions; i++) {
			if (c->region[i].hpa < r->base + r->size && r->base < c->region[i].hpa + c->region[i].size)
				return true;
		}
	}
	return false;
}

static uint64_t bar_size(uint64_t size)
{
	uint64_t s = IVSHMEM_REGS_SIZE;

	while (s < size)
		s <<= 1;
	return s;
}

bool ivshmem_partition_init(struct partition *p, const struct tern_config *cfg, char *err,
			    size_t errlen)
{
	const struct tern_config_channel *all = config_channels(cfg);
	struct ivshmem_bridge *b = &bridges[p->index];
	const struct platform_range *ecam = board_ecam();
	const struct platform_range *window = ecam ? board_window(ecam->device) : NULL;

	/* No function yet for any of its memberships, each at reset. */
	*b = (struct ivshmem_bridge){ 0u, { NULL } };
	for (uint32_t c = 0; c < cfg->num_channels; c++) {
		for (uint32_t k = 0; k < all[c].num_members; k++) {
			if (all[c].member[k].partition == p->index) {
				functions[c][k].channel = NULL;
				reset_fn(&functions[c][k]);
			}
		}
	}
	if (!window || owns_device(p, ecam->device))
		return true;

	ipaddr_t bar2 = window->base + IVSHMEM_BAR2_OFFSET;
	for (uint32_t c = 0; c < cfg->num_channels; c++) {
		const struct tern_config_channel *ch = &all[c];
		for (uint32_t k = 0; k < ch->num_members; k++) {
			const struct tern_config_channel_member *m = &ch->member[k];
			/* A VirtIO frontend has no function: a ring raises its slot's interrupt. */
			if (m->partition != p->index || (m->flags & TERN_CHF_FRONTEND))
				continue;
			struct ivshmem_fn *f = &functions[c][k];
			uint64_t size = bar_size(ch->size);
			ipaddr_t at = ALIGN_UP(bar2, size);
			if (at + size > window->base + window->size || (mmio_overlapping(p, at, size) != NULL)) {
				(void)snprintf(err, errlen, "channel %s (0x%llx bytes) does not fit the PCI "
					       "memory window at 0x%llx", ch->name,
					       (unsigned long long)ch->size, (unsigned long long)window->base);
				return false;
			}
			f->channel_index = c;
			f->member = k;
			f->partition = p->index;
			f->bar0 = window->base + (uint64_t)b->num * IVSHMEM_REGS_SIZE;
			f->bar2 = at;
			f->bar2_size = size;
			f->channel = ch;
			b->fn[b->num++] = f;
			bar2 = at + size;
			if (!arch_partition_map_shared(p, at, ch->hpa, ch->size,
						       (m->flags & TERN_CHF_WRITABLE) != 0u, err, errlen))
				return false;
		}
	}
	if (b->num == 0u)
		return true;
	return mmio_add(p, ecam->base, ECAM_BUS_SIZE, ecam_access, b, err, errlen) &&
	       mmio_add(p, window->base, (uint64_t)b->num * IVSHMEM_REGS_SIZE, regs_access, b, err,
			errlen);
}
