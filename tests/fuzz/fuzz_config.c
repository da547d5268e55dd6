/* SPDX-License-Identifier: MIT */
/*
 * The config blob parser: a fuzzed blob through config_validate with the real board's
 * allow-lists (platform/qemu-virt-ARCH/board.c, as partition.c's board_limits builds them) and
 * the port's answers to the arch hooks board_limits asks (one build per port: riscv64's allows
 * direct vCPUs on shared cores and direct interrupts with trapped WFI, arm64's neither).
 *
 * Oracle: a refusal is one line; an accepted blob really is what the hypervisor relies on,
 * checked again here independently: partitions within the board's RAM and apart from each
 * other and the hypervisor, cores their own, devices and interrupts from the allow-lists and
 * given once, every part of a board device (its ranges and interrupts) to one partition, an
 * ECAM only whole, pristine copies outside every partition and apart; channels in the board's
 * RAM apart from everything else there, mapped where their members have nothing else, their
 * members distinct partitions with one doorbell each, a spare interrupt of theirs and nobody
 * else's; VirtIO devices at one of the board's slots with its interrupt, their channel the
 * backend's (read-write) and the frontend's (the slot's interrupt, nothing in its map); a
 * shared pool's partitions trap WFI, and direct ones only where the port allows, no more on a
 * core than it has interrupt files for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tern/config.h>
#include <tern/lib.h>
#include <tern/platform.h>
#include <tern/vuart.h>

/*
 * The port's answers to board_limits' arch hooks (arch_ipa_limit, arch_iommu_present,
 * arch_direct_wfi_trap, arch_shared_direct_vcpus) on the board `tern run` starts.  The board
 * names its partitions' UART model; the parser never reaches it.
 */
#ifdef FUZZ_RISCV64
#define IPA_LIMIT (1ull << 41)          /* Sv39x4 */
#define IOMMU false
#define DIRECT_WFI_TRAP true
#define SHARED_DIRECT_VCPUS 4u          /* QEMU aia-guests=4 (tools/tern/layout.py) */
/* `tern run`'s riscv64 board has all the RAM the platform allows (its examples' blobs say so). */
#define RAM_FOUND platform.ram_max
const struct vuart_model vns16550_model = { 0, NULL };
#else
#define IPA_LIMIT (1ull << 32)          /* VTCR_EL2.T0SZ = 32 */
#define IOMMU true
#define DIRECT_WFI_TRAP false
#define SHARED_DIRECT_VCPUS 0u
/* A board with less RAM than the platform allows: the firmware's word beats the blob's. */
#define RAM_FOUND (platform.ram_max - (1ull << 30))
const struct vuart_model vpl011_model = { 0, NULL };
#endif

#define CHECK(cond) do {                                                        \
	if (!(cond)) {                                                          \
		fprintf(stderr, "%s:%d: accepted blob breaks: %s\n", __FILE__, __LINE__, #cond); \
		abort();                                                        \
	}                                                                       \
} while (0)
#define ORACLE __attribute__((no_sanitize("coverage"), noinline))

typedef unsigned __int128 u128;

static struct config_limits limits;
static struct config_device devices[8];
static struct config_irq irqs[16];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (uint32_t i = 0; i < platform.num_devices; i++) {
		devices[i].base = platform.devices[i].base;
		devices[i].size = platform.devices[i].size;
		devices[i].dma = platform.devices[i].flags & PLATFORM_DMA;
		devices[i].ecam = platform.devices[i].flags & PLATFORM_ECAM;
		devices[i].device = platform.devices[i].device;
	}
	for (uint32_t i = 0; i < platform.num_device_irqs; i++)
		irqs[i] = (struct config_irq){ platform.device_irqs[i].id, platform.device_irqs[i].device };
	limits = (struct config_limits){
		.max_cpus = platform.max_cpus,
		.ram = { platform.ram_base, platform.ram_max },
		.ram_found = RAM_FOUND,
		.reserved = { platform.hyp_base, platform.hyp_size },
		.ram_ipa = platform.ram_base,
		.ipa_limit = IPA_LIMIT,
		.devices = devices,
		.num_devices = platform.num_devices,
		.irqs = irqs,
		.num_irqs = platform.num_device_irqs,
		.doorbell_irq_base = platform.doorbell_irq_base,
		.num_doorbell_irqs = platform.num_doorbell_irqs,
		.virtio_base = platform.virtio_base,
		.virtio_stride = platform.virtio_stride,
		.num_virtio_slots = platform.num_virtio_slots,
		.virtio_irq_base = platform.virtio_irq_base,
		.iommu = IOMMU,
		.direct_wfi_trap = DIRECT_WFI_TRAP,
		.shared_direct_vcpus = SHARED_DIRECT_VCPUS,
	};
	return 0;
}

static bool within(uint64_t base, uint64_t size, uint64_t lo, uint64_t lsize)
{
	return base >= lo && (u128)base + size <= (u128)lo + lsize;
}

static bool apart(uint64_t a, uint64_t asize, uint64_t b, uint64_t bsize)
{
	return (u128)a + asize <= b || (u128)b + bsize <= a;
}

/* Whether a partition other than i has a range or an interrupt of board device `device`. */
ORACLE static bool device_elsewhere(const struct tern_config *cfg, uint32_t i, uint32_t device)
{
	for (uint32_t j = 0; j < cfg->num_partitions; j++) {
		const struct tern_config_partition *q = &cfg->partition[j];
		if (j == i)
			continue;
		for (uint32_t s = 0; s < q->num_regions && s < TERN_MAX_REGIONS; s++) {
			for (uint32_t d = 0; d < platform.num_devices; d++) {
				const struct platform_range *dev = &platform.devices[d];
				if (dev->device == device &&
				    within(q->region[s].hpa, q->region[s].size, dev->base, dev->size))
					return true;
			}
		}
		for (uint32_t k = 0; k < platform.num_device_irqs; k++) {
			uint32_t id = platform.device_irqs[k].id;
			if (platform.device_irqs[k].device == device && (q->irqs[id / 32] & (1u << (id % 32))))
				return true;
		}
	}
	return false;
}

/* Whether interrupt `intid` is partition i's doorbell in one of the blob's channels. */
ORACLE static bool doorbell_of(const struct tern_config *cfg, uint32_t i, uint32_t intid)
{
	const struct tern_config_channel *ch =
		(const struct tern_config_channel *)(const void *)((const uint8_t *)cfg + cfg->channels_offset);

	for (uint32_t c = 0; c < cfg->num_channels; c++) {
		for (uint32_t k = 0; k < ch[c].num_members && k < TERN_MAX_PARTITIONS; k++) {
			if (ch[c].member[k].partition == i && ch[c].member[k].irq == intid)
				return true;
		}
	}
	return false;
}

/* Whether interrupt `intid` is the slot interrupt of a VirtIO device partition i is the frontend of. */
ORACLE static bool slot_irq_of(const struct tern_config *cfg, uint32_t i, uint32_t intid)
{
	const struct tern_config_virtio *v =
		(const struct tern_config_virtio *)(const void *)((const uint8_t *)cfg + cfg->virtio_offset);

	for (uint32_t d = 0; d < cfg->num_virtio; d++) {
		if (v[d].frontend == i && v[d].irq == intid)
			return true;
	}
	return false;
}

/* Each VirtIO device: at a board slot with its interrupt, between two partitions, its channel's. */
ORACLE static void check_virtio(const struct tern_config *cfg)
{
	const struct tern_config_virtio *all =
		(const struct tern_config_virtio *)(const void *)((const uint8_t *)cfg + cfg->virtio_offset);
	const struct tern_config_channel *chans =
		(const struct tern_config_channel *)(const void *)((const uint8_t *)cfg + cfg->channels_offset);

	for (uint32_t d = 0; d < cfg->num_virtio; d++) {
		const struct tern_config_virtio *v = &all[d];
		uint64_t slot = (v->mmio_ipa - platform.virtio_base) / platform.virtio_stride;
		CHECK(v->mmio_ipa >= platform.virtio_base && slot < platform.num_virtio_slots);
		CHECK(v->mmio_ipa == platform.virtio_base + slot * platform.virtio_stride);
		CHECK(v->irq == platform.virtio_irq_base + slot);
		CHECK((v->device_id >= TERN_VIRTIO_NET && v->device_id <= TERN_VIRTIO_CONSOLE) ||
		      v->device_id == TERN_VIRTIO_VSOCK);
		CHECK((v->flags & ~TERN_VF_BACKEND_TRUSTED) == 0);
		CHECK(v->frontend < cfg->num_partitions && v->backend < cfg->num_partitions);
		CHECK(v->frontend != v->backend && v->channel < cfg->num_channels);
		const struct tern_config_channel *ch = &chans[v->channel];
		CHECK(!strncmp(ch->name, v->name, TERN_NAME_LEN) && ch->num_members == 2);
		CHECK(ch->member[0].partition == v->backend && ch->member[0].flags == TERN_CHF_WRITABLE);
		CHECK(ch->member[1].partition == v->frontend && ch->member[1].flags == TERN_CHF_FRONTEND);
		CHECK(ch->member[1].irq == v->irq);
		CHECK(ch->size >= 0x5000u + 2u * 64u * 0x800u); /* the smallest shape, net's */
		for (uint32_t e = 0; e < d; e++)
			CHECK(strncmp(all[e].name, v->name, TERN_NAME_LEN) && all[e].channel != v->channel);
	}
}

ORACLE static void check_channels(const struct tern_config *cfg)
{
	const uint64_t ram_base = platform.ram_base, ram = cfg->ram_size;
	const struct tern_config_channel *all =
		(const struct tern_config_channel *)(const void *)((const uint8_t *)cfg + cfg->channels_offset);

	for (uint32_t c = 0; c < cfg->num_channels; c++) {
		const struct tern_config_channel *ch = &all[c];
		bool writable = false;
		CHECK(memchr(ch->name, 0, TERN_NAME_LEN) && ch->name[0]);
		CHECK(ch->size && ch->size <= (64u << 20) && (ch->size | ch->hpa | ch->ipa) % 4096 == 0);
		CHECK(within(ch->hpa, ch->size, ram_base, ram));
		CHECK(apart(ch->hpa, ch->size, platform.hyp_base, platform.hyp_size));
		CHECK(apart(ch->hpa, ch->size, (uintptr_t)cfg, cfg->size));
		CHECK(ch->doorbell_ipa == ch->ipa + ch->size);
		CHECK(within(ch->ipa, ch->size + 4096, 0, IPA_LIMIT));
		CHECK(ch->num_members >= 2 && ch->num_members <= TERN_MAX_PARTITIONS);
		for (uint32_t j = 0; j < cfg->num_partitions; j++) {
			const struct tern_config_partition *q = &cfg->partition[j];
			CHECK(apart(ch->hpa, ch->size, q->ram_hpa, q->ram_size));
			const uint64_t copies[3][2] = { { q->pristine_image_hpa, q->image_size },
							{ q->pristine_dtb_hpa, q->dtb_size },
							{ q->pristine_initrd_hpa, q->initrd_size } };
			for (unsigned k = 0; k < 3; k++) {
				if (copies[k][0])
					CHECK(apart(ch->hpa, ch->size, copies[k][0], copies[k][1]));
			}
		}
		for (uint32_t d = 0; d < c; d++) {
			CHECK(strcmp(ch->name, all[d].name));
			CHECK(apart(ch->hpa, ch->size, all[d].hpa, all[d].size));
		}
		for (uint32_t k = 0; k < ch->num_members; k++) {
			const struct tern_config_channel_member *m = &ch->member[k];
			bool frontend = m->flags == TERN_CHF_FRONTEND;
			CHECK(m->partition < cfg->num_partitions && (!(m->flags & ~TERN_CHF_WRITABLE) || frontend));
			writable = writable || m->flags == TERN_CHF_WRITABLE;
			const struct tern_config_partition *p = &cfg->partition[m->partition];
			CHECK(p->irqs[m->irq / 32] & (1u << (m->irq % 32)));
			if (frontend) {
				/* A VirtIO frontend: its slot's interrupt, nothing of the channel in its map. */
				CHECK(slot_irq_of(cfg, m->partition, m->irq));
				continue;
			}
			CHECK(m->irq >= platform.doorbell_irq_base &&
			      m->irq < platform.doorbell_irq_base + platform.num_doorbell_irqs);
			CHECK(apart(ch->ipa, ch->size + 4096, p->ram_ipa, p->ram_size));
			for (uint32_t r = 0; r < p->num_regions; r++)
				CHECK(apart(ch->ipa, ch->size + 4096, p->region[r].ipa, p->region[r].size));
			for (uint32_t d = 0; d <= c; d++) {
				for (uint32_t l = 0; l < (d == c ? k : all[d].num_members); l++) {
					CHECK(all[d].member[l].irq != m->irq);
					if (d == c)
						CHECK(all[d].member[l].partition != m->partition);
					else if (all[d].member[l].partition == m->partition)
						CHECK(apart(ch->ipa, ch->size + 4096, all[d].ipa, all[d].size + 4096));
				}
			}
		}
		CHECK(writable);
	}
}

ORACLE static void check_accepted(const struct tern_config *cfg, size_t size)
{
	const uint64_t ram_base = platform.ram_base, ram = cfg->ram_size;
	uint32_t cores = 0, given_irqs[TERN_IRQ_WORDS] = { 0 }, direct[32] = { 0 };

	CHECK(cfg->num_partitions >= 1 && cfg->num_partitions <= TERN_MAX_PARTITIONS);
	CHECK(cfg->num_channels <= TERN_MAX_CHANNELS);
	CHECK(cfg->num_virtio <= TERN_MAX_VIRTIO);
	CHECK(cfg->num_pools <= TERN_MAX_POOLS);
	CHECK(cfg->size == sizeof(*cfg) + cfg->num_partitions * sizeof(cfg->partition[0]) +
			   cfg->num_channels * sizeof(struct tern_config_channel) +
			   cfg->num_virtio * sizeof(struct tern_config_virtio) +
			   cfg->num_pools * sizeof(struct tern_config_pool));
	if (cfg->num_virtio)
		CHECK(cfg->virtio_offset == sizeof(*cfg) + cfg->num_partitions * sizeof(cfg->partition[0]) +
					    cfg->num_channels * sizeof(struct tern_config_channel));
	if (cfg->num_channels)
		CHECK(cfg->channels_offset == sizeof(*cfg) + cfg->num_partitions * sizeof(cfg->partition[0]));
	CHECK(cfg->size <= size);
	CHECK(cfg->board_cpus >= 1 && cfg->board_cpus <= platform.max_cpus);
	CHECK(ram && ram <= platform.ram_max && ram <= limits.ram_found && ram % (1u << 20) == 0);
	CHECK(within(platform.hyp_base, platform.hyp_size, ram_base, ram));
	for (uint32_t i = 0; i < cfg->num_partitions; i++) {
		const struct tern_config_partition *p = &cfg->partition[i];
		CHECK(memchr(p->name, 0, TERN_NAME_LEN) && p->name[0]);
		CHECK(p->num_vcpus >= 1 && p->num_vcpus <= TERN_MAX_VCPUS);
		/* A shared pool's vCPUs take turns on its cores; every other vCPU has a core of its own. */
		CHECK(p->pool == TERN_POOL_NONE || p->pool < cfg->num_pools);
		const struct tern_config_pool *pl = p->pool == TERN_POOL_NONE ? NULL : &config_pools(cfg)[p->pool];
		bool shared = pl != NULL && pl->scheduler != TERN_SCHED_NULL;
		bool is_direct = p->flags & TERN_PF_IRQ_DIRECT;
		CHECK(!is_direct || (p->flags & TERN_PF_WFI_NATIVE) || DIRECT_WFI_TRAP);
		/* A shared core's scheduler must see its guests idle. */
		CHECK(!shared || !(p->flags & TERN_PF_WFI_NATIVE));
		for (uint32_t c = 0; c < p->num_vcpus; c++) {
			CHECK(p->cpus[c] < cfg->board_cpus);
			if (pl != NULL)
				CHECK(pl->cpus & (1u << p->cpus[c]));
			if (shared) {
				/* Each direct vCPU of a shared core has an interrupt file of its own. */
				direct[p->cpus[c]] += is_direct;
				CHECK(direct[p->cpus[c]] <= SHARED_DIRECT_VCPUS);
				continue;
			}
			CHECK(!(cores & (1u << p->cpus[c])));
			cores |= 1u << p->cpus[c];
		}
		CHECK(p->ram_ipa == ram_base && p->ram_size && p->ram_size % (2u << 20) == 0);
		CHECK(p->ram_hpa % (2u << 20) == 0);
		CHECK(within(p->ram_ipa, p->ram_size, 0, IPA_LIMIT));
		CHECK(within(p->ram_hpa, p->ram_size, ram_base, ram));
		CHECK(apart(p->ram_hpa, p->ram_size, platform.hyp_base, platform.hyp_size));
		CHECK(within(p->entry_ipa, 4, p->ram_ipa, p->ram_size));
		CHECK(p->dtb_size && within(p->dtb_ipa, p->dtb_size, p->ram_ipa, p->ram_size));
		CHECK(p->image_size && within(p->image_ipa, p->image_size, p->ram_ipa, p->ram_size));
		if (p->initrd_size)
			CHECK(within(p->initrd_ipa, p->initrd_size, p->ram_ipa, p->ram_size));
		CHECK(p->fault_policy <= TERN_FAULT_INJECT && p->restart_backoff_us <= TERN_MAX_BACKOFF_US);
		CHECK(p->num_regions <= TERN_MAX_REGIONS);
		for (uint32_t r = 0; r < p->num_regions; r++) {
			const struct tern_config_region *g = &p->region[r];
			bool allowed = false;
			CHECK(g->ipa == g->hpa && g->size && g->hpa % 4096 == 0 && g->size % 4096 == 0);
			for (uint32_t d = 0; d < platform.num_devices; d++) {
				const struct platform_range *dev = &platform.devices[d];
				if (!within(g->hpa, g->size, dev->base, dev->size))
					continue;
				allowed = true;
				if (dev->flags & PLATFORM_ECAM)
					CHECK(g->hpa == dev->base && g->size == dev->size);
				CHECK(!device_elsewhere(cfg, i, dev->device));
			}
			CHECK(allowed);
			for (uint32_t j = 0; j < cfg->num_partitions; j++) {
				const struct tern_config_partition *q = &cfg->partition[j];
				for (uint32_t s = 0; s < q->num_regions && s < TERN_MAX_REGIONS; s++) {
					if (j != i || s != r)
						CHECK(apart(g->hpa, g->size, q->region[s].hpa, q->region[s].size));
				}
			}
		}
		for (uint32_t w = 0; w < TERN_IRQ_WORDS; w++) {
			for (uint32_t bits = p->irqs[w]; bits; bits &= bits - 1) {
				uint32_t intid = w * 32 + (uint32_t)__builtin_ctz(bits);
				bool allowed = doorbell_of(cfg, i, intid) || slot_irq_of(cfg, i, intid);
				for (uint32_t k = 0; k < platform.num_device_irqs; k++) {
					if (platform.device_irqs[k].id != intid)
						continue;
					allowed = true;
					CHECK(!device_elsewhere(cfg, i, platform.device_irqs[k].device));
				}
				CHECK(allowed);
			}
			CHECK(!(given_irqs[w] & p->irqs[w]));
			given_irqs[w] |= p->irqs[w];
		}
		for (uint32_t j = 0; j < i; j++) {
			CHECK(strcmp(p->name, cfg->partition[j].name));
			CHECK(apart(p->ram_hpa, p->ram_size, cfg->partition[j].ram_hpa, cfg->partition[j].ram_size));
		}
		const uint64_t copies[3][2] = { { p->pristine_image_hpa, p->image_size },
						{ p->pristine_dtb_hpa, p->dtb_size },
						{ p->pristine_initrd_hpa, p->initrd_size } };
		for (unsigned k = 0; k < 3; k++) {
			if (!copies[k][0])
				continue;
			CHECK(within(copies[k][0], copies[k][1], ram_base, ram));
			CHECK(apart(copies[k][0], copies[k][1], platform.hyp_base, platform.hyp_size));
			for (uint32_t j = 0; j < cfg->num_partitions; j++)
				CHECK(apart(copies[k][0], copies[k][1], cfg->partition[j].ram_hpa,
					    cfg->partition[j].ram_size));
		}
	}
	check_channels(cfg);
	check_virtio(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly `size` bytes, so that reading past the blob is caught. */
	void *blob = malloc(size ? size : 1);
	char err[160];

	memcpy(blob, data, size);
	memset(err, 0x55, sizeof(err));
	if (config_validate(blob, size, &limits, err, sizeof(err)) == 0) {
		check_accepted(blob, size);
	} else {
		size_t n = strnlen(err, sizeof(err));
		CHECK(n > 0 && n < sizeof(err));
		CHECK(!memchr(err, '\n', n));
	}
	free(blob);
	return 0;
}
