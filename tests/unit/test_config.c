/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <tern/config.h>
#include "check.h"
#include "tests.h"

#define RAM_IPA 0x40000000ull

/* QEMU virt's allow-lists (platform/qemu-virt-arm64/board.c): the PCIe host bridge. */
static const struct config_device devices[] = {
	{ .base = 0x10000000, .size = 0x2eff0000, .dma = true, .device = 0 },
	{ .base = 0x3eff0000, .size = 0x10000, .dma = true, .device = 0 },
	{ .base = 0x3f000000, .size = 0x1000000, .dma = true, .ecam = true, .device = 0 },
};
static const struct config_irq irqs[] = { { 35, 0 }, { 36, 0 }, { 37, 0 }, { 38, 0 } };

static const struct config_limits limits = {
	.max_cpus = 8,
	.ram = { 0x40000000, 3ull << 30 },
	.ram_found = 2ull << 30,
	.reserved = { 0x40000000, 0x4000000 },
	.ram_ipa = RAM_IPA,
	.ipa_limit = 1ull << 32,
	.devices = devices,
	.num_devices = 3,
	.irqs = irqs,
	.num_irqs = 4,
	.doorbell_irq_base = 256,
	.num_doorbell_irqs = 32,
	.virtio_base = 0x0a000000,
	.virtio_stride = 0x200,
	.num_virtio_slots = 32,
	.virtio_irq_base = 48,
	.iommu = true,
};

static _Alignas(8) unsigned char raw[sizeof(struct tern_config) +
				     TERN_MAX_PARTITIONS * sizeof(struct tern_config_partition) +
				     (TERN_MAX_CHANNELS + 1) * sizeof(struct tern_config_channel) +
				     (TERN_MAX_VIRTIO + 1) * sizeof(struct tern_config_virtio) +
				     (TERN_MAX_POOLS + 1) * sizeof(struct tern_config_pool)];
#define hdr (*(struct tern_config *)raw)
#define part(i) (((struct tern_config *)raw)->partition[i])
static char err[160];

static void set_partition(unsigned i, const char *name, unsigned core, uint64_t hpa)
{
	struct tern_config_partition *p = &part(i);

	memset(p, 0, sizeof(*p));
	strcpy(p->name, name);
	p->ram_ipa = RAM_IPA;
	p->ram_hpa = hpa;
	p->ram_size = 64ull << 20;
	p->entry_ipa = RAM_IPA + 0x80000;
	p->image_ipa = RAM_IPA + 0x80000;
	p->image_size = 0x10000;
	p->dtb_ipa = RAM_IPA + (62ull << 20);
	p->dtb_size = 0x1000;
	p->pristine_image_hpa = 0x50000000 + i * 0x400000;
	p->pristine_dtb_hpa = 0x50200000 + i * 0x400000;
	p->num_vcpus = 1;
	p->cpus[0] = (uint8_t)core;
	p->pool = TERN_POOL_NONE;
}

static void make_valid(unsigned n)
{
	memset(raw, 0, sizeof(raw));
	hdr.magic = TERN_CONFIG_MAGIC;
	hdr.version = TERN_CONFIG_VERSION;
	hdr.num_partitions = n;
	hdr.size = (uint32_t)(sizeof(struct tern_config) + n * sizeof(struct tern_config_partition));
	hdr.board_cpus = 4;
	hdr.flags = TERN_CF_IOMMU;
	hdr.ram_size = 2ull << 30;
	static const char *const names[] = { "rt", "linux", "p2", "p3" };
	for (unsigned i = 0; i < n; i++)
		set_partition(i, names[i], i + 1 > 3 ? 0 : i + 1, 0x44000000 + i * (64ull << 20));
}

static int validate(void)
{
	err[0] = 0;
	return config_validate(&hdr, sizeof(raw), &limits, err, sizeof(err));
}

static int expect_error(const char *fragment)
{
	int rc = validate();
	CHECK_EQ(rc, -1);
	if (!strstr(err, fragment)) {
		fprintf(stderr, "  error was \"%s\", wanted \"%s\"\n", err, fragment);
		return 0;
	}
	return 1;
}

void test_config_accepts_valid(void)
{
	make_valid(2);
	CHECK_EQ(validate(), 0);
	part(1).num_vcpus = 2;
	part(1).cpus[1] = 3;
	CHECK_EQ(validate(), 0);
}

void test_config_rejects_bad_header(void)
{
	make_valid(1);
	hdr.magic = 0;
	CHECK(expect_error("magic"));
	make_valid(1);
	hdr.version = 99;
	CHECK(expect_error("version"));
	make_valid(1);
	hdr.num_partitions = 0;
	CHECK(expect_error("partitions"));
	make_valid(1);
	hdr.size += 4;
	CHECK(expect_error("size"));
	make_valid(1);
	CHECK_EQ(config_validate(&hdr, 8, &limits, err, sizeof(err)), -1);
	make_valid(1);
	hdr.board_cpus = 9;
	CHECK(expect_error("board_cpus"));
}

void test_config_rejects_core_conflicts(void)
{
	make_valid(2);
	part(1).cpus[0] = 1;
	CHECK(expect_error("core 1 already used by rt"));
	make_valid(1);
	part(0).cpus[0] = 4;
	CHECK(expect_error("core 4 out of range"));
	make_valid(1);
	part(0).num_vcpus = 0;
	CHECK(expect_error("vCPUs"));
	make_valid(1);
	part(0).num_vcpus = 2;
	part(0).cpus[1] = 1;
	CHECK(expect_error("already used"));
}

void test_config_rejects_memory_errors(void)
{
	make_valid(2);
	part(1).ram_hpa = part(0).ram_hpa + (2ull << 20);
	CHECK(expect_error("overlaps partition rt"));
	make_valid(1);
	part(0).ram_hpa = 0x42000000;
	CHECK(expect_error("overlaps the hypervisor"));
	make_valid(1);
	part(0).ram_size = 3ull << 20;
	CHECK(expect_error("aligned"));
	make_valid(1);
	part(0).ram_ipa = 0x80000000;
	CHECK(expect_error("guest map"));
	make_valid(1);
	part(0).entry_ipa = RAM_IPA + (64ull << 20);
	CHECK(expect_error("entry"));
	make_valid(1);
	part(0).dtb_ipa = RAM_IPA + (64ull << 20) - 0x800;
	CHECK(expect_error("device tree"));
	make_valid(1);
	part(0).image_size = 65ull << 20;
	CHECK(expect_error("image"));
	make_valid(1);
	part(0).ram_hpa = 0xffffffffffe00000ull;
	CHECK_EQ(validate(), -1);
}

void test_config_checks_flags(void)
{
	make_valid(1);
	part(0).flags = TERN_PF_IRQ_DIRECT | TERN_PF_WFI_NATIVE;
	CHECK_EQ(validate(), 0);
	part(0).flags = TERN_PF_IRQ_DIRECT;
	CHECK(expect_error("direct interrupts need native WFI"));
	/* ... where the arch cannot wait for them (arm64); riscv64 can. */
	struct config_limits riscv = limits;
	riscv.direct_wfi_trap = true;
	CHECK_EQ(config_validate((const struct tern_config *)raw, sizeof(raw), &riscv, err, sizeof(err)), 0);
	part(0).flags = 1u << 7;
	CHECK(expect_error("unknown flags"));
	make_valid(1);
	hdr.flags = 0;
	CHECK_EQ(validate(), 0);
	hdr.flags = 1u << 5;
	CHECK(expect_error("unknown flags 0x20"));
}

void test_config_rejects_bad_names(void)
{
	make_valid(1);
	strcpy(part(0).name, "Bad Name");
	CHECK(expect_error("bad name"));
	make_valid(1);
	memset(part(0).name, 'a', TERN_NAME_LEN);
	CHECK(expect_error("bad name"));
	make_valid(2);
	strcpy(part(1).name, "rt");
	CHECK(expect_error("name used twice"));
}

void test_config_rejects_pristine_inside_partition(void)
{
	make_valid(2);
	part(0).pristine_image_hpa = part(1).ram_hpa + 0x1000;
	CHECK(expect_error("pristine copy inside partition linux"));
	make_valid(1);
	part(0).pristine_dtb_hpa = 0x40100000;
	CHECK(expect_error("pristine copy overlaps the hypervisor"));
}

static void give_initrd(unsigned i)
{
	part(i).initrd_ipa = RAM_IPA + (32ull << 20);
	part(i).initrd_size = 0x123456;
	part(i).pristine_initrd_hpa = 0x51000000 + i * 0x400000;
}

void test_config_checks_initrd(void)
{
	make_valid(2);
	give_initrd(0);
	give_initrd(1);
	CHECK(validate() == 0);
	part(1).initrd_ipa = RAM_IPA + (63ull << 20);
	CHECK(expect_error("partition linux: initrd outside its RAM"));
	give_initrd(1);
	part(1).initrd_ipa = part(1).dtb_ipa - 0x1000;
	CHECK(expect_error("initrd outside its RAM or over its image or device tree"));
	give_initrd(1);
	part(1).initrd_ipa = part(1).image_ipa;
	CHECK(expect_error("initrd outside its RAM or over its image"));
	give_initrd(1);
	part(1).pristine_initrd_hpa = part(0).ram_hpa;
	CHECK(expect_error("partition linux: pristine copy inside partition rt"));
	give_initrd(1);
	part(1).initrd_size = 0;
	CHECK(expect_error("pristine initrd without an initrd"));
}

/* The PCIe host bridge of QEMU virt (highmem=off): ECAM, and its INTx SPIs 35-38. */
static void give_pcie(unsigned i)
{
	struct tern_config_partition *p = &part(i);

	p->num_regions = 2;
	p->region[0] = (struct tern_config_region){ 0x3f000000, 0x3f000000, 0x1000000, TERN_RF_DEVICE, 0 };
	p->region[1] = (struct tern_config_region){ 0x10000000, 0x10000000, 0x2eff0000, TERN_RF_DEVICE, 0 };
	p->irqs[1] = 0xfu << 3;
}

void test_config_accepts_devices(void)
{
	make_valid(2);
	give_pcie(0);
	CHECK_EQ(validate(), 0);
	/* Part of a window is fine: the I/O window alone, INTA only. */
	make_valid(2);
	part(1).num_regions = 1;
	part(1).region[0] = (struct tern_config_region){ 0x3eff0000, 0x3eff0000, 0x1000, TERN_RF_DEVICE, 0 };
	part(1).irqs[1] = 1u << 3;
	CHECK_EQ(validate(), 0);
}

/* A board device nobody may own: refused however it is asked for. */
static void expect_device_refused(uint64_t base, uint64_t size, const char *what)
{
	make_valid(1);
	part(0).num_regions = 1;
	part(0).region[0] = (struct tern_config_region){ base, base, size, TERN_RF_DEVICE, 0 };
	if (!expect_error("is not a device this board lets a partition own"))
		fprintf(stderr, "  (%s)\n", what);
}

void test_config_refuses_devices_off_the_allow_list(void)
{
	expect_device_refused(0x08000000, 0x2000, "GIC distributor");
	expect_device_refused(0x08080000, 0x20000, "GIC ITS");
	expect_device_refused(0x09000000, 0x1000, "the hypervisor's UART");
	expect_device_refused(0x09020000, 0x1000, "fw_cfg, whose DMA interface reaches all RAM");
	expect_device_refused(0x09050000, 0x20000, "the SMMU");
	/* virtio-mmio transports do DMA that bypasses the SMMU: nothing would confine it. */
	expect_device_refused(0x0a000000, 0x1000, "virtio-mmio transport 0");
	expect_device_refused(0x44000000, 0x1000, "partition RAM");
	expect_device_refused(0x3f000000, 0x2000000, "ECAM and beyond");
	expect_device_refused(0xfffff000, 0x2000, "wrapping past 4 GiB");
}

void test_config_dma_needs_the_iommu(void)
{
	make_valid(1);
	give_pcie(0);
	hdr.flags = 0; /* a board started without its SMMU */
	CHECK(expect_error("can do DMA, and the board has no IOMMU"));
	/* ... unless the description accepts DMA that nothing confines. */
	part(0).flags |= TERN_PF_UNCONFINED_DMA;
	CHECK_EQ(validate(), 0);
	part(0).flags = TERN_PF_MANAGER << 1; /* the first flag no version knows */
	CHECK(expect_error("unknown flags 0x10"));
}

/*
 * An ECAM is given whole: the emulated one (riscv64) is trapped and silenced from its base,
 * and a part elsewhere would be mapped straight through, past the MSI steering.
 */
void test_config_ecam_only_whole(void)
{
	make_valid(1);
	give_pcie(0);
	CHECK_EQ(validate(), 0);
	part(0).region[0].size = 0x200000;                   /* buses 0 and 1 */
	CHECK(expect_error("region 0x3f000000+0x200000 is part of the ECAM at "
			   "0x3f000000+0x1000000 (an ECAM is given whole)"));
	part(0).region[0] = (struct tern_config_region){ 0x3f100000, 0x3f100000, 0xf00000, TERN_RF_DEVICE, 0 };
	CHECK(expect_error("region 0x3f100000+0xf00000 is part of the ECAM"));
	part(0).region[0] = (struct tern_config_region){ 0x3f008000, 0x3f008000, 0x100000, TERN_RF_DEVICE, 0 };
	CHECK(expect_error("is part of the ECAM"));
}

/* A board device's ranges and interrupts go to one partition: each of them, split, is refused. */
void test_config_one_device_one_owner(void)
{
	static const struct tern_config_region io = { 0x3eff0000, 0x3eff0000, 0x10000, TERN_RF_DEVICE, 0 };

	/* The ECAM to one, the memory window to another: the bus's DMA follows the ECAM. */
	make_valid(2);
	give_pcie(0);
	part(0).num_regions = 1;
	part(0).irqs[1] = 0;
	part(1).num_regions = 1;
	part(1).region[0] = (struct tern_config_region){ 0x10000000, 0x10000000, 0x2eff0000, TERN_RF_DEVICE, 0 };
	CHECK(expect_error("partition linux: region 0x10000000 is part of a device rt has a part of "
			   "(a device goes to one partition whole)"));
	/* The windows to one, the ECAM to the other. */
	make_valid(2);
	give_pcie(1);
	part(1).region[0] = io;
	part(0).num_regions = 1;
	part(0).region[0] = (struct tern_config_region){ 0x3f000000, 0x3f000000, 0x1000000, TERN_RF_DEVICE, 0 };
	CHECK(expect_error("partition linux: region 0x3eff0000 is part of a device rt has a part of"));
	/* Interrupts only, or interrupts against ranges. */
	make_valid(2);
	give_pcie(0);
	part(0).irqs[1] = 0;
	part(1).irqs[1] = 1u << 3;
	CHECK(expect_error("partition linux: interrupt 35 is part of a device rt has a part of"));
	make_valid(2);
	part(0).irqs[1] = 1u << 4;
	part(1).irqs[1] = 1u << 5;
	CHECK(expect_error("partition linux: interrupt 37 is part of a device rt has a part of"));
	make_valid(2);
	part(0).irqs[1] = 1u << 4;
	part(1).num_regions = 1;
	part(1).region[0] = io;
	CHECK(expect_error("partition linux: region 0x3eff0000 is part of a device rt has a part of"));
	/* Two devices of a board may go to two partitions. */
	static const struct config_device two[] = {
		{ .base = 0x10000000, .size = 0x1000000, .device = 0 },
		{ .base = 0x20000000, .size = 0x1000000, .device = 1 },
	};
	static const struct config_irq two_irqs[] = { { 35, 0 }, { 36, 1 } };
	struct config_limits lim = limits;
	lim.devices = two;
	lim.num_devices = 2;
	lim.irqs = two_irqs;
	lim.num_irqs = 2;
	make_valid(2);
	part(0).num_regions = 1;
	part(0).region[0] = (struct tern_config_region){ 0x10000000, 0x10000000, 0x1000, TERN_RF_DEVICE, 0 };
	part(0).irqs[1] = 1u << 3;
	part(1).num_regions = 1;
	part(1).region[0] = (struct tern_config_region){ 0x20000000, 0x20000000, 0x1000, TERN_RF_DEVICE, 0 };
	part(1).irqs[1] = 1u << 4;
	CHECK_EQ(config_validate(&hdr, sizeof(raw), &lim, err, sizeof(err)), 0);
	part(1).region[0].hpa = part(1).region[0].ipa = 0x10001000;
	CHECK_EQ(config_validate(&hdr, sizeof(raw), &lim, err, sizeof(err)), -1);
	CHECK(strstr(err, "region 0x10001000 is part of a device rt has a part of") != NULL);
}

void test_config_checks_board_ram(void)
{
	make_valid(2);
	hdr.ram_size = 0;
	CHECK(expect_error("board RAM size 0x0"));
	make_valid(2);
	hdr.ram_size = 4ull << 30;
	CHECK(expect_error("board RAM size"));
	make_valid(2);
	hdr.ram_size = 32ull << 20;
	CHECK(expect_error("does not hold the hypervisor"));
	/* Within what the platform allows, but more than the board has: the board's word counts. */
	make_valid(2);
	hdr.ram_size = (2ull << 30) + (1ull << 20);
	CHECK(expect_error("board RAM size 0x80100000, but the board has 0x80000000 (the firmware's "
			   "device tree)"));
	make_valid(2);
	struct config_limits small = limits;
	small.ram_found = 1ull << 30;
	CHECK_EQ(config_validate(&hdr, sizeof(raw), &small, err, sizeof(err)), -1);
	CHECK(strstr(err, "board RAM size 0x80000000, but the board has 0x40000000") != NULL);
	hdr.ram_size = 1ull << 30;
	CHECK_EQ(config_validate(&hdr, sizeof(raw), &small, err, sizeof(err)), 0);
	/* Partition RAM must be board RAM: not the GIC, not past the end of RAM. */
	make_valid(2);
	part(1).ram_hpa = 0x08000000;
	CHECK(expect_error("partition linux: RAM 0x8000000+0x4000000 outside the board's RAM"));
	make_valid(2);
	hdr.ram_size = 128ull << 20; /* 0x40000000..0x48000000: linux at 0x48000000 is past it */
	CHECK(expect_error("partition linux: RAM 0x48000000+0x4000000 outside the board's RAM"));
	/* Pristine copies the same way, and never wrapping around the address space. */
	make_valid(1);
	part(0).pristine_image_hpa = 0xfffffffffffff000ull;
	CHECK(expect_error("pristine copy 0xfffffffffffff000+0x10000 outside the board's RAM"));
	make_valid(1);
	part(0).pristine_dtb_hpa = 0x09000000;
	CHECK(expect_error("outside the board's RAM"));
	make_valid(2);
	part(1).pristine_dtb_hpa = part(0).pristine_image_hpa + 0x1000;
	CHECK(expect_error("partition rt: pristine copy 0x50000000 overlaps another (of linux)"));
}

void test_config_checks_restart_policy(void)
{
	make_valid(1);
	part(0).fault_policy = TERN_FAULT_RESTART;
	part(0).max_restarts = 5;
	part(0).restart_backoff_us = TERN_MAX_BACKOFF_US;
	CHECK_EQ(validate(), 0);
	part(0).fault_policy = TERN_FAULT_INJECT;
	CHECK_EQ(validate(), 0);
	part(0).fault_policy = 3;
	CHECK(expect_error("partition rt: fault policy 3"));
	make_valid(1);
	part(0).restart_backoff_us = TERN_MAX_BACKOFF_US + 1ull;
	CHECK(expect_error("restart back-off 60000001 us"));
}

void test_config_rejects_device_errors(void)
{
	make_valid(2);
	give_pcie(0);
	give_pcie(1);
	CHECK(expect_error("partition linux: region 0x3f000000 already given to rt"));
	make_valid(2);
	give_pcie(0);
	part(1).irqs[1] = 1u << 5;
	CHECK(expect_error("interrupt 37 already given to rt"));
	make_valid(1);
	give_pcie(0);
	part(0).num_regions = 3; /* overlaps region 1 of the same partition */
	part(0).region[2] = (struct tern_config_region){ 0x10100000, 0x10100000, 0x100000, TERN_RF_DEVICE, 0 };
	CHECK(expect_error("region 0x10100000 already given to rt"));
	make_valid(1);
	give_pcie(0);
	part(0).region[0].ipa = 0x20000000;
	CHECK(expect_error("moved to IPA"));
	make_valid(1);
	give_pcie(0);
	part(0).region[0].size = 0x800;
	CHECK(expect_error("not 4 KiB aligned"));
	make_valid(1);
	give_pcie(0);
	part(0).region[0].flags = 0;
	CHECK(expect_error("flags"));
	make_valid(1);
	part(0).num_regions = TERN_MAX_REGIONS + 1;
	CHECK(expect_error("device regions"));
	make_valid(1);
	part(0).irqs[0] = 1u << 27; /* the virtual timer PPI */
	CHECK(expect_error("interrupt 27 is not one of a device this board lets a partition own"));
	make_valid(1);
	part(0).irqs[9] = 1u << 8; /* INTID 296 */
	CHECK(expect_error("interrupt 296 is not one"));
	make_valid(1);
	part(0).irqs[1] = 1u << 1;
	CHECK(expect_error("interrupt 33 is not one")); /* the hypervisor's console UART */
	make_valid(1);
	part(0).irqs[1] = 1u << 16; /* a virtio-mmio transport's */
	CHECK(expect_error("interrupt 48 is not one"));
}

/* ---- channels ---- */

#define CH_HPA 0x60000000ull
#define CH_SIZE 0x10000ull

static struct tern_config_channel *chan(unsigned c)
{
	return (struct tern_config_channel *)(raw + hdr.channels_offset) + c;
}

/*
 * Channel c (after those there are) between the partitions in `members` (indices, -1 ends;
 * the first `writable` read-write), its memory at CH_HPA + c MiB, its IPA above their RAM, its
 * doorbells INTIDs 256 + 8 c + k, given to them.
 */
static struct tern_config_channel *add_channel(const char *name, const int *members, unsigned writable)
{
	unsigned c = hdr.num_channels++;

	hdr.channels_offset = (uint32_t)(sizeof(struct tern_config) +
					 hdr.num_partitions * sizeof(struct tern_config_partition));
	hdr.size = (uint32_t)(hdr.channels_offset + hdr.num_channels * sizeof(struct tern_config_channel));
	struct tern_config_channel *ch = chan(c);
	memset(ch, 0, sizeof(*ch));
	strcpy(ch->name, name);
	ch->hpa = CH_HPA + c * (1ull << 20);
	ch->size = CH_SIZE;
	ch->ipa = RAM_IPA + (64ull << 20) + c * (2ull << 20);
	ch->doorbell_ipa = ch->ipa + ch->size;
	for (unsigned k = 0; members[k] >= 0; k++) {
		uint32_t irq = 256 + 8 * c + k;
		ch->member[k] = (struct tern_config_channel_member){
			(uint32_t)members[k], k < writable ? TERN_CHF_WRITABLE : 0, irq, 0 };
		part(members[k]).irqs[irq / 32] |= 1u << (irq % 32);
		ch->num_members = k + 1;
	}
	return ch;
}

static const int pair[] = { 0, 1, -1 };

void test_config_accepts_channels(void)
{
	static const int three[] = { 0, 1, 2, -1 };

	make_valid(3);
	add_channel("msg", pair, 2);
	add_channel("log", three, 1); /* two of them map it read-only */
	CHECK_EQ(validate(), 0);
	/* The records' offset may be left at zero when there are none. */
	make_valid(1);
	hdr.channels_offset = (uint32_t)(sizeof(struct tern_config) + sizeof(struct tern_config_partition));
	CHECK_EQ(validate(), 0);
}

void test_config_rejects_channel_header(void)
{
	make_valid(2);
	add_channel("msg", pair, 2);
	hdr.channels_offset += 8;
	CHECK(expect_error("channel records at"));
	make_valid(2);
	hdr.channels_offset = 8;
	CHECK(expect_error("channel records at 8, not after the partitions' (1192)"));
	make_valid(2);
	add_channel("msg", pair, 2);
	hdr.size -= 8;
	CHECK(expect_error("size"));
	make_valid(2);
	add_channel("msg", pair, 2);
	hdr.num_channels = TERN_MAX_CHANNELS + 1;
	CHECK(expect_error("17 channels (at most 16)"));
	make_valid(2);
	add_channel("msg", pair, 2);
	CHECK_EQ(config_validate(&hdr, hdr.size - 1, &limits, err, sizeof(err)), -1);
}

void test_config_rejects_channel_names_and_sizes(void)
{
	make_valid(2);
	strcpy(add_channel("msg", pair, 2)->name, "Msg");
	CHECK(expect_error("channel 0: bad name"));
	make_valid(2);
	add_channel("msg", pair, 2);
	add_channel("msg", pair, 2);
	CHECK(expect_error("channel msg: name used twice"));
	make_valid(2);
	add_channel("msg", pair, 2)->size = 0x1800;
	CHECK(expect_error("channel msg: size 0x1800"));
	make_valid(2);
	add_channel("msg", pair, 2)->size = 0;
	CHECK(expect_error("4 KiB multiples, up to 64 MiB"));
	make_valid(2);
	add_channel("msg", pair, 2)->size = (64ull << 20) + 0x1000;
	CHECK(expect_error("up to 64 MiB"));
	make_valid(2);
	add_channel("msg", pair, 2)->hpa += 0x800;
	CHECK(expect_error("4 KiB multiples"));
	make_valid(2);
	add_channel("msg", pair, 2)->ipa += 0x800;
	CHECK(expect_error("4 KiB multiples"));
	make_valid(2);
	add_channel("msg", pair, 2)->doorbell_ipa += 0x1000;
	CHECK(expect_error("channel msg: doorbell page at 0x44011000, not right above it"));
	make_valid(2);
	struct tern_config_channel *ch = add_channel("msg", pair, 2);
	ch->ipa = (1ull << 32) - CH_SIZE;
	ch->doorbell_ipa = ch->ipa + ch->size; /* the doorbell page would be past the limit */
	CHECK(expect_error("channel msg: IPA 0xffff0000+0x10000 outside the guest map"));
}

void test_config_rejects_channel_memory(void)
{
	make_valid(2);
	add_channel("msg", pair, 2)->hpa = 0x40000000 + (3ull << 30);
	CHECK(expect_error("channel msg: 0x100000000+0x10000 outside the board's RAM"));
	make_valid(2);
	add_channel("msg", pair, 2)->hpa = 0xfffffffffffff000ull;
	CHECK(expect_error("outside the board's RAM"));
	make_valid(2);
	add_channel("msg", pair, 2)->hpa = 0x43ff8000;
	CHECK(expect_error("channel msg: overlaps the hypervisor"));
	make_valid(2);
	add_channel("msg", pair, 2)->hpa = part(1).ram_hpa + 0x10000;
	CHECK(expect_error("channel msg: overlaps partition linux's RAM"));
	make_valid(2);
	add_channel("msg", pair, 2)->hpa = part(1).pristine_dtb_hpa;
	CHECK(expect_error("channel msg: overlaps a pristine copy of linux"));
	make_valid(2);
	add_channel("msg", pair, 2);
	add_channel("log", pair, 2)->hpa = CH_HPA + 0x8000;
	CHECK(expect_error("channel log: overlaps channel msg"));
	/* The config blob itself: here where the test's blob lies (on the board, the hypervisor's RAM). */
	struct config_limits anywhere = limits;
	anywhere.ram = (struct config_range){ 0, ~0ull };
	anywhere.ram_found = ~0ull;
	anywhere.reserved = (struct config_range){ 0x40000000, 0x4000000 };
	make_valid(2);
	hdr.ram_size = 1ull << 47; /* all of a host process's memory */
	add_channel("msg", pair, 2)->hpa = (uintptr_t)raw & ~0xfffull;
	anywhere.ram.size = hdr.ram_size;
	anywhere.ram_found = hdr.ram_size;
	if ((uintptr_t)raw < hdr.ram_size - (1ull << 20)) {
		CHECK_EQ(config_validate(&hdr, sizeof(raw), &anywhere, err, sizeof(err)), -1);
		CHECK(strstr(err, "channel msg: overlaps the config blob"));
	}
}

void test_config_rejects_channel_members(void)
{
	static const int one[] = { 0, -1 };
	static const int twice[] = { 0, 1, 0, -1 };

	make_valid(2);
	add_channel("msg", one, 1);
	CHECK(expect_error("channel msg: 1 members (2..8)"));
	make_valid(2);
	add_channel("msg", pair, 2)->num_members = TERN_MAX_PARTITIONS + 1;
	CHECK(expect_error("9 members"));
	make_valid(2);
	add_channel("msg", pair, 2)->member[1].partition = 2;
	part(1).irqs[8] = 0; /* linux's doorbell, now nobody's */
	CHECK(expect_error("channel msg: member 1 is partition 2 (there are 2)"));
	make_valid(3);
	add_channel("msg", twice, 3);
	CHECK(expect_error("channel msg: partition rt is a member twice"));
	make_valid(2);
	add_channel("msg", pair, 2)->member[1].flags = 4;
	CHECK(expect_error("channel msg: member linux has flags 0x4"));
	make_valid(2);
	add_channel("msg", pair, 2)->member[1].flags = TERN_CHF_FRONTEND | TERN_CHF_WRITABLE;
	CHECK(expect_error("channel msg: member linux has flags 0x3"));
	/* A frontend member belongs to a VirtIO device's channel. */
	make_valid(2);
	add_channel("msg", pair, 2)->member[1].flags = TERN_CHF_FRONTEND;
	CHECK(expect_error("channel msg: a frontend member, but no virtio device"));
	/* A frontend member's interrupt is not a doorbell's: one past every bitmap is nobody's. */
	make_valid(2);
	struct tern_config_channel *far = add_channel("msg", pair, 2);
	far->member[1].flags = TERN_CHF_FRONTEND;
	far->member[1].irq = 0x00b1f801u; /* the config fuzzer's: read irqs[] past its end */
	part(1).irqs[8] = 0; /* its doorbell, now nobody's */
	CHECK(expect_error("channel msg: doorbell 11663361 is not among partition linux's interrupts"));
	make_valid(2);
	add_channel("msg", pair, 0);
	CHECK(expect_error("channel msg: no member maps it read-write"));
}

void test_config_rejects_channel_doorbells(void)
{
	struct tern_config_channel *ch;

	/* Not a spare interrupt: a device's (the PCIe INTA), then one past the range. */
	make_valid(2);
	ch = add_channel("msg", pair, 2);
	part(1).irqs[8] = 0;
	ch->member[1].irq = 35;
	CHECK(expect_error("channel msg: linux's doorbell 35 is not a spare interrupt of this board"));
	make_valid(2);
	ch = add_channel("msg", pair, 2);
	part(1).irqs[8] = 0;
	ch->member[1].irq = 288;
	CHECK(expect_error("doorbell 288 is not a spare interrupt"));
	/* Two members on one interrupt, in one channel or two. */
	make_valid(2);
	ch = add_channel("msg", pair, 2);
	part(1).irqs[8] = 0;
	ch->member[1].irq = 256;
	CHECK(expect_error("channel msg: linux's doorbell 256 already rings rt in channel msg"));
	make_valid(2);
	add_channel("msg", pair, 2);
	ch = add_channel("log", pair, 2);
	part(1).irqs[8] &= ~(1u << 9);
	ch->member[1].irq = 257;
	CHECK(expect_error("channel log: linux's doorbell 257 already rings linux in channel msg"));
	/* Its doorbell must be its interrupt ... */
	make_valid(2);
	ch = add_channel("msg", pair, 2);
	part(1).irqs[8] = 0;
	CHECK(expect_error("channel msg: doorbell 257 is not among partition linux's interrupts"));
	/* ... and a spare interrupt it has, its doorbell. */
	make_valid(2);
	part(0).irqs[8] = 1u << 3;
	CHECK(expect_error("partition rt: interrupt 259 is a spare one, given only as its doorbell in a channel"));
	make_valid(2);
	add_channel("msg", pair, 2);
	part(0).irqs[8] |= 1u << 1; /* linux's doorbell */
	CHECK(expect_error("partition rt: interrupt 257 is a spare one"));
}

void test_config_rejects_channel_maps(void)
{
	static const int three[] = { 0, 1, 2, -1 };
	static const int others[] = { 1, 2, -1 };
	struct tern_config_channel *ch;

	make_valid(2);
	ch = add_channel("msg", pair, 2);
	ch->ipa = RAM_IPA + (62ull << 20);
	ch->doorbell_ipa = ch->ipa + ch->size;
	CHECK(expect_error("channel msg: IPA 0x43e00000 overlaps partition rt's RAM"));
	/* The doorbell page counts: the memory ends right at its RAM's start. */
	make_valid(2);
	ch = add_channel("msg", pair, 2);
	ch->ipa = RAM_IPA - CH_SIZE;
	ch->doorbell_ipa = RAM_IPA;
	CHECK(expect_error("overlaps partition rt's RAM"));
	make_valid(2);
	give_pcie(1);
	ch = add_channel("msg", pair, 2);
	ch->ipa = 0x10000000;
	ch->doorbell_ipa = ch->ipa + ch->size;
	CHECK(expect_error("channel msg: IPA 0x10000000 overlaps partition linux's device region 0x10000000"));
	/* Two channels of one partition apart in its map (memory and doorbell page) ... */
	make_valid(3);
	add_channel("msg", pair, 2);
	ch = add_channel("log", three, 3);
	ch->ipa = RAM_IPA + (64ull << 20) + CH_SIZE;
	ch->doorbell_ipa = ch->ipa + ch->size;
	CHECK(expect_error("channel log: IPA 0x44010000 overlaps channel msg in partition rt"));
	/* ... but channels with no member in common may share addresses. */
	make_valid(4);
	static const int last[] = { 2, 3, -1 };
	part(3).ram_hpa = 0x58000000; /* clear of the pristine copies */
	add_channel("msg", pair, 2);
	ch = add_channel("log", last, 2);
	ch->ipa = chan(0)->ipa;
	ch->doorbell_ipa = ch->ipa + ch->size;
	CHECK_EQ(validate(), 0);
	make_valid(3);
	add_channel("msg", pair, 2);
	ch = add_channel("log", others, 2);
	ch->ipa = chan(0)->ipa;
	ch->doorbell_ipa = ch->ipa + ch->size;
	CHECK(expect_error("channel log: IPA 0x44000000 overlaps channel msg in partition linux"));
}

/* ---- VirtIO devices ---- */

#define BLK_CH_SIZE 0x105000ull  /* VIO_DATA + 1 x 32 x 32 KiB */

static struct tern_config_virtio *virtio(unsigned v)
{
	return (struct tern_config_virtio *)(raw + hdr.virtio_offset) + v;
}

/*
 * VirtIO device `name` (after every channel) of partition fe served by be, at slot `slot`: its
 * channel (be member 0 read-write with its doorbell, fe member 1 with the slot's interrupt),
 * then its record.
 */
static struct tern_config_virtio *add_virtio(const char *name, uint32_t device, int fe, int be,
					     uint32_t slot)
{
	const int members[] = { be, fe, -1 };
	struct tern_config_virtio saved[TERN_MAX_VIRTIO];
	unsigned n = hdr.num_virtio;

	memcpy(saved, raw + hdr.virtio_offset, n * sizeof(saved[0]));
	struct tern_config_channel *ch = add_channel(name, members, 1);
	uint32_t doorbell = ch->member[1].irq, irq = 48 + slot;
	ch->size = BLK_CH_SIZE;
	ch->doorbell_ipa = ch->ipa + ch->size;
	ch->member[1].flags = TERN_CHF_FRONTEND;
	ch->member[1].irq = irq;
	part(fe).irqs[doorbell / 32] &= ~(1u << (doorbell % 32));
	part(fe).irqs[irq / 32] |= 1u << (irq % 32);
	hdr.virtio_offset = (uint32_t)(hdr.channels_offset + hdr.num_channels * sizeof(struct tern_config_channel));
	memcpy(raw + hdr.virtio_offset, saved, n * sizeof(saved[0]));
	struct tern_config_virtio *v = virtio(n);
	memset(v, 0, sizeof(*v));
	strcpy(v->name, name);
	v->mmio_ipa = 0x0a000000 + 0x200 * slot;
	v->device_id = device;
	v->frontend = (uint32_t)fe;
	v->backend = (uint32_t)be;
	v->channel = hdr.num_channels - 1;
	v->irq = irq;
	hdr.num_virtio = n + 1;
	hdr.size = (uint32_t)(hdr.virtio_offset + hdr.num_virtio * sizeof(*v));
	return v;
}

void test_config_accepts_virtio(void)
{
	make_valid(3);
	add_channel("msg", pair, 2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	add_virtio("con", TERN_VIRTIO_CONSOLE, 1, 2, 1);
	chan(2)->hpa = CH_HPA + (4ull << 20);
	CHECK_EQ(validate(), 0);
	/* Each frontend's slots are its own map's: another frontend may use slot 1 (its interrupt aside). */
	make_valid(3);
	add_virtio("net0", TERN_VIRTIO_NET, 0, 1, 5);
	CHECK_EQ(validate(), 0);
}

void test_config_rejects_virtio_header(void)
{
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	hdr.virtio_offset += 8;
	CHECK(expect_error("virtio records at"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	hdr.size -= 8;
	CHECK(expect_error("size"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	hdr.num_virtio = TERN_MAX_VIRTIO + 1;
	CHECK(expect_error("9 virtio devices (at most 8)"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	CHECK_EQ(config_validate(&hdr, hdr.size - 1, &limits, err, sizeof(err)), -1);
}

void test_config_rejects_virtio_records(void)
{
	make_valid(2);
	strcpy(add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->name, "Disk");
	CHECK(expect_error("virtio 0: bad name"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->device_id = 4;
	CHECK(expect_error("virtio disk0: device id 4 (1 net, 2 blk, 3 console)"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->device_id = 0;
	CHECK(expect_error("device id 0"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	CHECK(expect_error("virtio disk0: trusted, but backend rt has no window onto linux's RAM"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = 2;
	CHECK(expect_error("virtio disk0: unknown flags 0x2"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->frontend = 2;
	CHECK(expect_error("partition linux: interrupt 48 is not one of a device")); /* no longer its slot's */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->backend = 7;
	CHECK(expect_error("virtio disk0: frontend 1 and backend 7"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->backend = 1;
	CHECK(expect_error("virtio disk0: frontend 1 and backend 1"));
	/* Its registers: one of the board's slots, 0x200-aligned, with the slot's interrupt. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->mmio_ipa += 0x100;
	CHECK(expect_error("virtio disk0: registers at 0xa000100, not one of the board's virtio-mmio slots"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->mmio_ipa = 0x0a000000 + 32 * 0x200;
	CHECK(expect_error("not one of the board's virtio-mmio slots"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->mmio_ipa = 0x09000000;
	CHECK(expect_error("registers at 0x9000000"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 3)->mmio_ipa = 0x0a000000;
	CHECK(expect_error("virtio disk0: interrupt 51, slot 0's is 48"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	add_virtio("disk1", TERN_VIRTIO_BLK, 1, 0, 1)->mmio_ipa = 0x0a000000;
	chan(1)->hpa = CH_HPA + (4ull << 20);
	virtio(1)->irq = 48;
	chan(1)->member[1].irq = 48;
	part(1).irqs[1] &= ~(1u << (49 - 32));
	CHECK(expect_error("channel disk1: linux's doorbell 48 already rings linux in channel disk0"));
	/* Names: unique among the devices, the channel's own. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	add_virtio("disk1", TERN_VIRTIO_BLK, 1, 0, 1);
	chan(1)->hpa = CH_HPA + (4ull << 20);
	strcpy(virtio(1)->name, "disk0");
	CHECK(expect_error("virtio disk0: name used twice"));
}

void test_config_rejects_virtio_channels(void)
{
	make_valid(2);
	add_channel("msg", pair, 2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->channel = 2;
	CHECK(expect_error("virtio disk0: channel 2 (there are 2)"));
	make_valid(2);
	add_channel("msg", pair, 2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->channel = 0;
	CHECK(expect_error("virtio disk0: its channel 0 is named msg"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	add_virtio("disk1", TERN_VIRTIO_BLK, 1, 0, 1);
	chan(1)->hpa = CH_HPA + (4ull << 20);
	strcpy(chan(1)->name, "disk0");
	strcpy(virtio(1)->name, "disk0");
	CHECK(expect_error("name used twice"));
	/* Its members: the backend read-write, then the frontend with the slot's interrupt. */
	make_valid(3);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->backend = 2;
	CHECK(expect_error("virtio disk0: channel disk0 is not backend p2 (read-write) then frontend linux"));
	make_valid(3);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	chan(0)->member[2] = (struct tern_config_channel_member){ 2, TERN_CHF_WRITABLE, 270, 0 };
	chan(0)->num_members = 3;
	part(2).irqs[270 / 32] |= 1u << (270 % 32);
	CHECK(expect_error("is not backend rt (read-write) then frontend linux"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	chan(0)->member[1].irq = 270;
	part(1).irqs[270 / 32] |= 1u << (270 % 32);
	CHECK(expect_error("virtio disk0: the frontend's member rings 270, not the slot's interrupt 48"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->irq = 49;
	chan(0)->member[1].irq = 49;
	part(1).irqs[1] = 1u << (49 - 32);
	CHECK(expect_error("interrupt 49, slot 0's is 48"));
	/* Big enough for the device's shape. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	chan(0)->size = 0x100000;
	chan(0)->doorbell_ipa = chan(0)->ipa + chan(0)->size;
	CHECK(expect_error("virtio disk0: channel of 0x100000 bytes, the device needs 0x105000"));
	make_valid(2);
	add_virtio("con", TERN_VIRTIO_CONSOLE, 1, 0, 0);
	chan(0)->size = 0x84000;
	chan(0)->doorbell_ipa = chan(0)->ipa + chan(0)->size;
	CHECK(expect_error("needs 0x85000"));
	/* The slot's interrupt: the frontend's, and nobody else's. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	part(1).irqs[1] &= ~(1u << (48 - 32));
	CHECK(expect_error("channel disk0: doorbell 48 is not among partition linux's interrupts"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	chan(0)->member[1].irq = 270;
	part(1).irqs[1] = 0;
	part(1).irqs[270 / 32] |= 1u << (270 % 32);
	CHECK(expect_error("virtio disk0: interrupt 48 is not among partition linux's"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	part(0).irqs[1] |= 1u << (48 - 32);
	CHECK(expect_error("partition rt: interrupt 48 is not one of a device"));
	make_valid(2);
	part(1).irqs[1] |= 1u << (48 - 32);
	CHECK(expect_error("partition linux: interrupt 48 is not one of a device"));
}

/* ---- A trusted backend's window onto its frontend's RAM ---- */

#define WINDOW_IPA (RAM_IPA + (128ull << 20))

/* Partition be's window onto partition fe's RAM, at WINDOW_IPA. */
static struct tern_config_region *add_window(int be, int fe)
{
	struct tern_config_partition *p = &part(be);
	struct tern_config_region *g = &p->region[p->num_regions++];

	*g = (struct tern_config_region){ WINDOW_IPA, part(fe).ram_hpa, part(fe).ram_size,
					  TERN_RF_PARTITION_RAM, 0 };
	return g;
}

void test_config_accepts_trusted_virtio(void)
{
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1);
	CHECK_EQ(validate(), 0);
	/* A second trusted device of the same pair shares the window. */
	add_virtio("con", TERN_VIRTIO_CONSOLE, 1, 0, 1)->flags = TERN_VF_BACKEND_TRUSTED;
	chan(1)->hpa = CH_HPA + (4ull << 20);
	CHECK_EQ(validate(), 0);
}

void test_config_rejects_windows(void)
{
	/* Another partition's RAM, but no trusted device of it served here. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	add_window(0, 1);
	CHECK(expect_error("partition rt: region 0x48000000 maps partition linux's RAM, but no trusted "
			   "virtio device of linux is served by rt"));
	/* The owner's name is checked before a message names it (the config fuzzer's: a newline). */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0);
	add_window(0, 1);
	part(1).name[1] = '\n';
	CHECK(expect_error("partition 1: bad name"));
	/* Trusted the other way round: the frontend does not map its backend. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1);
	add_window(1, 0);
	CHECK(expect_error("partition linux: region 0x44000000 maps partition rt's RAM, but no "
			   "trusted virtio device of rt is served by linux"));
	/* Part of it, more than it, or RAM of no partition. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1)->size -= KiB(4);
	CHECK(expect_error("partition rt: region 0x48000000+0x3fff000 (partition RAM) is not another "
			   "partition's whole RAM"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1)->hpa += KiB(4);
	CHECK(expect_error("is not another partition's whole RAM"));
	/* Its own RAM is not another's. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 0);
	CHECK(expect_error("partition rt: region 0x44000000+0x4000000 (partition RAM) is not another"));
	/* A device region may not be RAM, whatever trusts it. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1)->flags = TERN_RF_DEVICE;
	CHECK(expect_error("partition rt: region 0x48000000+0x4000000 is not a device"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1)->flags = TERN_RF_PARTITION_RAM | TERN_RF_DEVICE;
	CHECK(expect_error("partition rt: region 0x48000000 has flags 0x3"));
	/* Where it is in the backend's map: in the guest map, off its RAM, its devices, its channels. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1)->ipa = RAM_IPA + (32ull << 20);
	CHECK(expect_error("partition rt: region 0x48000000 (partition linux's RAM) at IPA 0x42000000, "
			   "outside the guest map or over its own RAM"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1)->ipa = (1ull << 32) - (32ull << 20);
	CHECK(expect_error("at IPA 0xfe000000, outside the guest map"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	give_pcie(0);
	add_window(0, 1)->ipa = 0x20000000;
	CHECK(expect_error("partition rt: region 0x48000000 (partition linux's RAM) over region 0x10000000"));
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1)->ipa = chan(0)->ipa;
	CHECK(expect_error("channel disk0: IPA 0x44000000 overlaps partition rt's device region 0x44000000"));
	/* One window a pair. */
	make_valid(2);
	add_virtio("disk0", TERN_VIRTIO_BLK, 1, 0, 0)->flags = TERN_VF_BACKEND_TRUSTED;
	add_window(0, 1);
	add_window(0, 1)->ipa = WINDOW_IPA + (64ull << 20);
	CHECK(expect_error("partition rt: region 0x48000000 (partition linux's RAM) over region 0x48000000"));
}

/* ---- Pools (issue 29) ---- */

static struct tern_config_pool *pool(unsigned q)
{
	return (struct tern_config_pool *)(raw + hdr.pools_offset) + q;
}

/* Pool `name` of the cores in `cpus` (bit n: core n), after every other record. */
static struct tern_config_pool *add_pool(const char *name, uint32_t cpus, uint32_t scheduler)
{
	if (!hdr.num_pools)
		hdr.pools_offset = hdr.size;
	struct tern_config_pool *pl = pool(hdr.num_pools);
	memset(pl, 0, sizeof(*pl));
	strcpy(pl->name, name);
	pl->cpus = cpus;
	pl->scheduler = scheduler;
	hdr.num_pools++;
	hdr.size = (uint32_t)(hdr.pools_offset + hdr.num_pools * sizeof(*pl));
	return pl;
}

static int check_only(void)
{
	err[0] = 0;
	return config_check(&hdr, sizeof(raw), &limits, err, sizeof(err));
}

static int expect_check_error(const struct config_limits *lim, const char *fragment)
{
	err[0] = 0;
	int rc = config_check(&hdr, sizeof(raw), lim, err, sizeof(err));
	CHECK_EQ(rc, -1);
	if (!strstr(err, fragment)) {
		fprintf(stderr, "  error was \"%s\", wanted \"%s\"\n", err, fragment);
		return 0;
	}
	return 1;
}

/*
 * rt alone on core 1, linux in the null pool "solo" of core 2, p2 and p3 sharing core 3 in
 * `scheduler`'s pool "frame" (ARINC 653: a window each).
 */
static struct tern_config_pool *make_pools(uint32_t scheduler)
{
	make_valid(4);
	part(3).ram_hpa = 0x60000000;   /* clear of the others' pristine copies */
	part(3).cpus[0] = 3;
	part(1).pool = 0;
	part(2).pool = 1;
	part(3).pool = 1;
	add_pool("solo", 1u << 2, TERN_SCHED_NULL);
	struct tern_config_pool *pl = add_pool("frame", 1u << 3, scheduler);
	if (scheduler == TERN_SCHED_ARINC653) {
		pl->major_frame_us = 20000;
		pl->num_windows = 3;
		pl->window[0] = (struct tern_config_window){ 2, 5000 };
		pl->window[1] = (struct tern_config_window){ 3, 10000 };
		pl->window[2] = (struct tern_config_window){ 2, 5000 };
	}
	for (unsigned i = 2; i < 4; i++) {
		if (scheduler == TERN_SCHED_RTDS) {
			part(i).budget_us = 4000;
			part(i).period_us = 10000;
		}
		if (scheduler == TERN_SCHED_CREDIT)
			part(i).weight = 256;
	}
	return pl;
}

void test_config_accepts_pools(void)
{
	static const uint32_t scheds[] = { TERN_SCHED_ARINC653, TERN_SCHED_RTDS, TERN_SCHED_CREDIT };

	for (unsigned s = 0; s < 3u; s++) {
		make_pools(scheds[s]);
		CHECK_EQ(check_only(), 0);
	}
	/* RTDS: exactly all of the core is not too much. */
	make_pools(TERN_SCHED_RTDS);
	part(3).budget_us = 6000;
	CHECK_EQ(check_only(), 0);
	make_pools(TERN_SCHED_CREDIT);
	part(2).cap = 100;
	part(3).weight = TERN_MAX_WEIGHT;
	CHECK_EQ(check_only(), 0);
	/* A pool no partition uses is only idle cores. */
	make_valid(1);
	add_pool("spare", 1u << 3, TERN_SCHED_CREDIT);
	CHECK_EQ(validate(), 0);
}

/*
 * Every scheduler runs; what a shared core's vCPU cannot take yet (a line that would wait for
 * a vCPU not running) is refused by name; direct delivery is not such a line where the board
 * keeps each vCPU's interrupt state (riscv64's guest files).
 */
void test_config_shared_pools_take_no_lines_yet(void)
{
	static const uint32_t scheds[] = { TERN_SCHED_ARINC653, TERN_SCHED_RTDS, TERN_SCHED_CREDIT };

	for (unsigned s = 0; s < sizeof(scheds) / sizeof(scheds[0]); s++) {
		make_pools(scheds[s]);
		CHECK_EQ(validate(), 0);
	}
	make_pools(TERN_SCHED_CREDIT);
	give_pcie(3);
	CHECK(expect_error("partition p3: pool frame: devices passed through in a shared pool are "
			   "not built yet"));
	make_pools(TERN_SCHED_RTDS);
	give_pcie(3);
	part(3).num_regions = 0;
	CHECK(expect_error("partition p3: pool frame: interrupts passed through in a shared pool"));
	/* Direct delivery where each vCPU has state of its own on the core: validated. */
	struct config_limits lim = limits;
	lim.shared_direct_vcpus = 1;
	lim.direct_wfi_trap = true;
	make_pools(TERN_SCHED_CREDIT);
	part(3).flags = TERN_PF_IRQ_DIRECT;
	err[0] = 0;
	CHECK_EQ(config_validate(&hdr, sizeof(raw), &lim, err, sizeof(err)), 0);
	/* The same in a null pool is today's pass-through. */
	make_pools(TERN_SCHED_NULL);
	part(3).cpus[0] = 0;
	pool(1)->cpus = 1u << 3 | 1u << 0;
	CHECK_EQ(validate(), 0);
}

void test_config_rejects_pool_records(void)
{
	make_pools(TERN_SCHED_CREDIT);
	hdr.pools_offset += 8;
	CHECK(expect_error("pool records at"));
	make_pools(TERN_SCHED_CREDIT);
	hdr.num_pools = TERN_MAX_POOLS + 1;
	CHECK(expect_error("pools (at most 8)"));
	make_pools(TERN_SCHED_CREDIT);
	hdr.size -= 8;
	CHECK(expect_error("2 pools"));
	make_pools(TERN_SCHED_CREDIT);
	strcpy(pool(1)->name, "solo");
	CHECK(expect_error("pool solo: name used twice"));
	make_pools(TERN_SCHED_CREDIT);
	pool(1)->name[0] = 'X';
	CHECK(expect_error("pool 1: bad name"));
	make_pools(TERN_SCHED_CREDIT);
	pool(1)->scheduler = 4;
	CHECK(expect_error("pool frame: scheduler 4"));
	make_pools(TERN_SCHED_CREDIT);
	pool(1)->cpus = 1u << 4;
	CHECK(expect_error("pool frame: cpus 0x10 (cores of the board's 4)"));
	make_pools(TERN_SCHED_CREDIT);
	pool(1)->cpus = 0;
	CHECK(expect_error("pool frame: cpus 0x0"));
	/* A core in two pools. */
	make_pools(TERN_SCHED_CREDIT);
	pool(1)->cpus |= 1u << 2;
	CHECK(expect_error("pool frame: cpus 0xc, a core already in another pool"));
	/* ARINC 653's keys on another scheduler's pool. */
	make_pools(TERN_SCHED_CREDIT);
	pool(1)->major_frame_us = 1000;
	CHECK(expect_error("pool frame: major frame or windows, but scheduler credit"));
	make_pools(TERN_SCHED_ARINC653);
	pool(1)->num_windows = 0;
	CHECK(expect_error("pool frame: major frame 20000 us, 0 windows"));
	make_pools(TERN_SCHED_ARINC653);
	pool(1)->major_frame_us = 0;
	CHECK(expect_error("pool frame: major frame 0 us"));
	make_pools(TERN_SCHED_ARINC653);
	pool(1)->num_windows = TERN_MAX_WINDOWS + 1;
	CHECK(expect_error("17 windows"));
}

void test_config_rejects_pool_members(void)
{
	struct config_limits lim = limits;

	make_pools(TERN_SCHED_CREDIT);
	part(3).pool = 2;
	CHECK(expect_error("partition p3: pool 2 (there are 2)"));
	/* A pool's core used by a partition with no pool. */
	make_pools(TERN_SCHED_CREDIT);
	part(0).cpus[0] = 3;
	CHECK(expect_error("partition rt: core 3 is pool frame's, and the partition names no pool"));
	/* A partition's core outside its pool. */
	make_pools(TERN_SCHED_CREDIT);
	part(3).cpus[0] = 0;
	CHECK(expect_error("partition p3: core 0 is not in its pool frame"));
	make_pools(TERN_SCHED_CREDIT);
	part(3).cpus[0] = 2;
	CHECK(expect_error("partition p3: core 2 is in pool solo, not its own"));
	/* Two vCPUs on one core of a null pool. */
	make_pools(TERN_SCHED_CREDIT);
	part(1).num_vcpus = 2;
	part(1).cpus[1] = 2;
	CHECK(expect_error("partition linux: core 2 already used by linux"));
	/* A shared pool's vCPUs: their idle comes back to the scheduler. */
	make_pools(TERN_SCHED_CREDIT);
	part(2).flags = TERN_PF_WFI_NATIVE;
	CHECK(expect_error("partition p2: native WFI in pool frame"));
	/* Direct delivery: where the core has no state for each vCPU, not in a shared pool ... */
	make_pools(TERN_SCHED_CREDIT);
	part(2).flags = TERN_PF_IRQ_DIRECT | TERN_PF_WFI_NATIVE;
	CHECK(expect_error("partition p2: direct interrupts in pool frame, a shared core"));
	/* ... else at most as many on a core as it holds. */
	lim.shared_direct_vcpus = 1;
	lim.direct_wfi_trap = true;
	make_pools(TERN_SCHED_CREDIT);
	part(2).flags = TERN_PF_IRQ_DIRECT;
	err[0] = 0;
	CHECK_EQ(config_check(&hdr, sizeof(raw), &lim, err, sizeof(err)), 0);
	part(3).flags = TERN_PF_IRQ_DIRECT;
	CHECK(expect_check_error(&lim, "partition p3: core 3 has more than 1 direct vCPUs in pool frame"));
	/* In a null pool, direct delivery and native WFI are today's. */
	make_pools(TERN_SCHED_CREDIT);
	part(1).flags = TERN_PF_IRQ_DIRECT | TERN_PF_WFI_NATIVE;
	CHECK_EQ(check_only(), 0);
}

void test_config_rejects_pool_windows(void)
{
	make_pools(TERN_SCHED_ARINC653);
	pool(1)->window[1].duration_us = 10001;
	CHECK(expect_error("pool frame: windows of 20001 us in a major frame of 20000 us"));
	make_pools(TERN_SCHED_ARINC653);
	pool(1)->window[1].partition = 4;
	CHECK(expect_error("pool frame: window 1 is partition 4, not one of the pool's"));
	make_pools(TERN_SCHED_ARINC653);
	pool(1)->window[1].partition = 1;
	CHECK(expect_error("pool frame: window 1 is partition 1, not one of the pool's"));
	make_pools(TERN_SCHED_ARINC653);
	pool(1)->window[2].duration_us = 0;
	CHECK(expect_error("pool frame: window 2 of 0 us"));
	make_pools(TERN_SCHED_ARINC653);
	pool(1)->window[3].duration_us = 1;
	CHECK(expect_error("pool frame: window 3 past the 3 used"));
}

void test_config_rejects_pool_parameters(void)
{
	/* RTDS's on another pool's partition, or on no pool's. */
	make_pools(TERN_SCHED_CREDIT);
	part(2).period_us = 10000;
	CHECK(expect_error("partition p2: budget or period, but its pool's scheduler is credit"));
	make_pools(TERN_SCHED_CREDIT);
	part(0).budget_us = 1;
	CHECK(expect_error("partition rt: budget or period, but its pool's scheduler is null"));
	/* Credit's on another pool's partition. */
	make_pools(TERN_SCHED_RTDS);
	part(3).weight = 256;
	CHECK(expect_error("partition p3: weight or cap, but its pool's scheduler is rtds"));
	make_pools(TERN_SCHED_ARINC653);
	part(2).cap = 50;
	CHECK(expect_error("partition p2: weight or cap, but its pool's scheduler is arinc653"));
	make_pools(TERN_SCHED_NULL);
	part(1).weight = 1;
	CHECK(expect_error("partition linux: weight or cap, but its pool's scheduler is null"));
	/* Budgets: 1..period. */
	make_pools(TERN_SCHED_RTDS);
	part(2).budget_us = 10001;
	CHECK(expect_error("partition p2: budget 10001 us every 10000 us"));
	make_pools(TERN_SCHED_RTDS);
	part(3).budget_us = 0;
	CHECK(expect_error("partition p3: budget 0 us every 10000 us"));
	/* More than the whole core: 4/10 + 7/10. */
	make_pools(TERN_SCHED_RTDS);
	part(3).budget_us = 7000;
	CHECK(expect_error("pool frame: core 3's budgets add up to 1.10 of it (at most 1)"));
	/* Weights 1..65535, caps 0..100. */
	make_pools(TERN_SCHED_CREDIT);
	part(2).weight = 0;
	CHECK(expect_error("partition p2: weight 0 (1..65535)"));
	make_pools(TERN_SCHED_CREDIT);
	part(2).weight = TERN_MAX_WEIGHT + 1;
	CHECK(expect_error("partition p2: weight 65536"));
	make_pools(TERN_SCHED_CREDIT);
	part(2).cap = 101;
	CHECK(expect_error("cap 101 (0..100)"));
	make_pools(TERN_SCHED_CREDIT);
	part(2).reserved1 = 1;
	CHECK(expect_error("partition p2: reserved field"));
}
