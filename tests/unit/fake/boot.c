/* SPDX-License-Identifier: MIT */
/* Config blobs for tests, booting the hypervisor through tern_main, and what arrives at cores. */
#include <string.h>
#include <tern/config_abi.h>
#include <tern/partition.h>
#include <tern/platform.h>
#include "fake.h"

#define PRISTINE_AREA (FAKE_HYP_SIZE + TERN_MAX_PARTITIONS * FAKE_PART_RAM)
#define PRISTINE_STRIDE 0x4000u

static unsigned boot_cpu;

static struct tern_config *config(void)
{
	return (struct tern_config *)(void *)fake_config;
}

struct tern_config *fake_config_begin(uint32_t board_cpus)
{
	struct tern_config *cfg = config();

	memset(fake_config, 0, sizeof(fake_config));
	cfg->magic = TERN_CONFIG_MAGIC;
	cfg->version = TERN_CONFIG_VERSION;
	cfg->size = sizeof(*cfg);
	cfg->board_cpus = board_cpus;
	cfg->flags = TERN_CF_IOMMU;
	cfg->ram_size = FAKE_RAM_SIZE;
	fake_board_reset();
	return cfg;
}

uint8_t fake_image_byte(uint32_t index, uint64_t offset)
{
	return (uint8_t)(0x41 + index * 7 + offset * 13);
}

struct tern_config_partition *fake_config_add(const char *name, const uint8_t *cpus,
					      uint32_t ncpus, uint32_t flags)
{
	struct tern_config *cfg = config();
	uint32_t i = cfg->num_partitions;
	struct tern_config_partition *p = &cfg->partition[i];
	uint64_t ram = platform.ram_base;
	uint64_t pristine = ram + PRISTINE_AREA + i * PRISTINE_STRIDE;

	memset(p, 0, sizeof(*p));
	strncpy(p->name, name, TERN_NAME_LEN - 1);
	p->ram_ipa = ram;
	p->ram_hpa = ram + FAKE_HYP_SIZE + i * FAKE_PART_RAM;
	p->ram_size = FAKE_PART_RAM;
	p->image_ipa = ram + 0x10000;
	p->image_size = 0x1000;
	p->entry_ipa = p->image_ipa;
	p->dtb_ipa = ram + 0x100000;
	p->dtb_size = 0x1000;
	p->pristine_image_hpa = pristine;
	p->pristine_dtb_hpa = pristine + 0x1000;
	p->num_vcpus = ncpus;
	p->flags = flags;
	p->pool = TERN_POOL_NONE;
	for (uint32_t c = 0; c < ncpus && c < TERN_MAX_VCPUS; c++)
		p->cpus[c] = cpus[c];
	for (uint64_t off = 0; off < p->image_size; off++)
		fake_ram[pristine - ram + off] = fake_image_byte(i, off);
	memset(&fake_ram[pristine - ram + 0x1000], 0xd0 + (int)i, p->dtb_size);
	cfg->num_partitions = i + 1;
	cfg->size = (uint32_t)(sizeof(*cfg) + cfg->num_partitions * sizeof(*p));
	return p;
}

struct tern_config_channel *fake_config_add_channel(const char *name, uint64_t size,
						    const uint32_t *members, uint32_t num,
						    uint32_t writable)
{
	struct tern_config *cfg = config();
	uint32_t c = cfg->num_channels;
	uint32_t irq = platform.doorbell_irq_base;

	cfg->channels_offset = (uint32_t)(sizeof(*cfg) + cfg->num_partitions * sizeof(cfg->partition[0]));
	struct tern_config_channel *all = (struct tern_config_channel *)(void *)(fake_config + cfg->channels_offset);
	struct tern_config_channel *ch = &all[c];
	for (uint32_t d = 0; d < c; d++)
		irq += all[d].num_members;
	memset(ch, 0, sizeof(*ch));
	strncpy(ch->name, name, TERN_NAME_LEN - 1);
	ch->hpa = platform.ram_base + FAKE_CHANNEL_RAM + c * (1u << 20);
	ch->size = size;
	ch->ipa = platform.ram_base + FAKE_PART_RAM + c * (2u << 20);
	ch->doorbell_ipa = ch->ipa + size;
	ch->num_members = num;
	for (uint32_t k = 0; k < num; k++, irq++) {
		ch->member[k] = (struct tern_config_channel_member){
			members[k], k < writable ? TERN_CHF_WRITABLE : 0u, irq, 0 };
		cfg->partition[members[k]].irqs[irq / 32] |= 1u << (irq % 32);
	}
	cfg->num_channels = c + 1;
	cfg->size = (uint32_t)(cfg->channels_offset + cfg->num_channels * sizeof(*ch));
	return ch;
}

struct tern_config_virtio *fake_config_add_virtio(const char *name, uint32_t device_id,
						  uint32_t frontend, uint32_t backend, uint32_t slot,
						  uint64_t channel_size)
{
	struct tern_config *cfg = config();
	uint32_t members[2] = { backend, frontend };
	uint32_t nv = cfg->num_virtio;
	struct tern_config_virtio saved[TERN_MAX_VIRTIO];

	if (nv)
		memcpy(saved, fake_config + cfg->virtio_offset, nv * sizeof(saved[0]));
	struct tern_config_channel *ch = fake_config_add_channel(name, channel_size, members, 2, 1);
	uint32_t c = cfg->num_channels - 1;
	if (c) {
		const struct tern_config_channel *prev = ch - 1;
		ch->hpa = (prev->hpa + prev->size + (1u << 20) - 1) & ~(uint64_t)((1u << 20) - 1);
	}
	uint32_t doorbell = ch->member[1].irq;
	uint32_t irq = platform.virtio_irq_base + slot;
	cfg->partition[frontend].irqs[doorbell / 32] &= ~(1u << (doorbell % 32));
	cfg->partition[frontend].irqs[irq / 32] |= 1u << (irq % 32);
	ch->member[1].flags = TERN_CHF_FRONTEND;
	ch->member[1].irq = irq;
	cfg->virtio_offset = cfg->channels_offset + cfg->num_channels * (uint32_t)sizeof(*ch);
	struct tern_config_virtio *all = (struct tern_config_virtio *)(void *)(fake_config + cfg->virtio_offset);
	if (nv)
		memcpy(all, saved, nv * sizeof(saved[0]));
	struct tern_config_virtio *v = &all[nv];
	memset(v, 0, sizeof(*v));
	strncpy(v->name, name, TERN_NAME_LEN - 1);
	v->mmio_ipa = platform.virtio_base + slot * platform.virtio_stride;
	v->device_id = device_id;
	v->frontend = frontend;
	v->backend = backend;
	v->channel = c;
	v->irq = irq;
	cfg->num_virtio = nv + 1;
	cfg->size = (uint32_t)(cfg->virtio_offset + cfg->num_virtio * sizeof(*v));
	return v;
}

struct tern_config_pool *fake_config_add_pool(const char *name, uint32_t cpus, uint32_t scheduler)
{
	struct tern_config *cfg = config();

	if (!cfg->num_pools)
		cfg->pools_offset = cfg->size;
	struct tern_config_pool *pl = (struct tern_config_pool *)(void *)(fake_config + cfg->pools_offset) +
				      cfg->num_pools;
	memset(pl, 0, sizeof(*pl));
	strncpy(pl->name, name, TERN_NAME_LEN - 1);
	pl->cpus = cpus;
	pl->scheduler = scheduler;
	cfg->num_pools++;
	cfg->size = (uint32_t)(cfg->pools_offset + cfg->num_pools * sizeof(*pl));
	return pl;
}

uint8_t *fake_partition_ram(const struct tern_config_partition *c)
{
	return (uint8_t *)(uintptr_t)c->ram_hpa;
}

enum fake_exit fake_boot_with_fdt(unsigned cpu, uintptr_t fdt)
{
	boot_cpu = cpu;
	fake_cpu_init(cpu);
	return FAKE_ON(cpu, tern_main(fdt));
}

enum fake_exit fake_boot(unsigned cpu)
{
	/* Where the firmware would leave it: RAM the hypervisor's image does not use. */
	uint8_t *fdt = fake_ram + FAKE_HYP_SIZE - 0x2000;

	(void)fake_fdt_board(fdt, 0x2000, platform.ram_base, FAKE_RAM_SIZE);
	return fake_boot_with_fdt(cpu, (uintptr_t)fdt);
}

void fake_start_secondaries(void)
{
	for (unsigned c = 0; c < FAKE_CPUS; c++) {
		if (c != boot_cpu && fake_cores[c].online && !fake_cores[c].running)
			fake_idle(c);
	}
}

enum fake_exit fake_idle(unsigned cpu)
{
	return FAKE_ON(cpu, cpu_idle(cpu));
}

enum fake_exit fake_deliver_kick(unsigned cpu)
{
	atomic_fetch_and(&fake_kicks, ~(1u << cpu));
	if (!fake_cores[cpu].online)
		return FAKE_RETURNED;
	if (!fake_cores[cpu].running)
		return fake_idle(cpu);
	return fake_settle(cpu, fake_kick_running(cpu));
}

enum fake_exit fake_settle(unsigned cpu, enum fake_exit e)
{
	return e == FAKE_EXIT_IDLE ? fake_idle(cpu) : e;
}

uint32_t fake_deliver_all_kicks(unsigned rounds)
{
	return fake_deliver_kicks(~0u, rounds);
}

uint32_t fake_deliver_kicks(uint32_t mask, unsigned rounds)
{
	uint32_t seen = 0, kicks;

	while (rounds-- && (kicks = atomic_load(&fake_kicks) & mask)) {
		unsigned cpu = (unsigned)__builtin_ctz(kicks);
		seen |= 1u << cpu;
		fake_deliver_kick(cpu);
	}
	return seen;
}

void fake_deliver_kicks_while_waiting(void)
{
	static _Thread_local bool busy;

	if (busy)
		return;
	busy = true;
	fake_deliver_kicks(~(1u << fake_cpu), 64);
	busy = false;
}
