/* SPDX-License-Identifier: MIT */
/*
 * core/virtio_mmio.c on the fake board: a VirtIO blk device partition "fe" sees at a board
 * slot, served by partition "be" through its channel.  The test plays the frontend's driver
 * (registers, virtqueues in fe's RAM) and the backend (the channel's rings and slots): the
 * bring-up, a request's round trip, and what each side may break, each refused, counted, and
 * touching nothing outside the frontend's RAM and the channel.
 */
#include <stdlib.h>
#include <string.h>
#include <tern/channel.h>
#include <tern/console.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include <tern/virtio_mmio.h>
#include "check.h"
#include "system.h"
#include "tests.h"

#define SLOT     2u
#define BLK_CH   (VIO_DATA + VIO_BLK_QUEUES * VIO_BLK_QUEUE_SIZE * VIO_BLK_SLOT_SIZE)
#define NUM      8u
/* fe's RAM (offsets from its base): the queue's rings, then the buffers. */
#define DESC     0x40000u
#define AVAIL    0x41000u
#define USED     0x42000u
#define BUF      0x50000u

#define ST_ACK         1u
#define ST_DRIVER      2u
#define ST_DRIVER_OK   4u
#define ST_FEATURES_OK 8u
#define ST_NEEDS_RESET 0x40u

static const struct tern_config_virtio *dev;
static const struct tern_config_channel *ch;
static struct partition *fe;
static uint8_t *ram;      /* fe's RAM, as the hypervisor addresses it */
static uint8_t *mem;      /* the channel's memory */
static uint8_t *snapshot; /* all of the board's RAM before a hostile act */

/* A trusted device's backend sees fe's RAM here (clear of its RAM and the channel). */
#define WINDOW   (platform.ram_base + (8u << 20))

/* The blk device; trusted: with be's window onto fe's RAM; fe_flags: the frontend's TERN_PF_*. */
static void boot_device(bool trusted, uint32_t fe_flags)
{
	fake_config_begin(2);
	add_partition("fe", "0", fe_flags);
	add_partition("be", "1", 0);
	struct tern_config_virtio *v = fake_config_add_virtio("disk0", TERN_VIRTIO_BLK, 0, 1, SLOT, BLK_CH);
	if (trusted) {
		struct tern_config *cfg = (struct tern_config *)(void *)fake_config;
		struct tern_config_partition *back = &cfg->partition[1];
		v->flags = TERN_VF_BACKEND_TRUSTED;
		back->region[back->num_regions++] = (struct tern_config_region){
			WINDOW, cfg->partition[0].ram_hpa, cfg->partition[0].ram_size, TERN_RF_PARTITION_RAM, 0 };
	}
	dev = v;
	ch = (const struct tern_config_channel *)(const void *)(fake_config + ((struct tern_config *)(void *)fake_config)->channels_offset);
	mem = (uint8_t *)(uintptr_t)ch->hpa;
	memset(mem, 0, BLK_CH);
	enum fake_exit e = boot_board();
	if (e != FAKE_EXIT_RUN)
		fprintf(stderr, "%s\n", fake_uart_out);
	CHECK_EQ(e, FAKE_EXIT_RUN);
	fe = partition_named("fe");
	ram = fake_partition_ram(fe->cfg);
	memset(ram + DESC, 0, BUF + 0x20000 - DESC);
}

static void boot_blk(void)
{
	boot_device(false, 0);
}

static uint64_t ipa(uint32_t off)
{
	return fe->cfg->ram_ipa + off;
}

static enum mmio_result access(uint32_t off, unsigned size, bool write, uint64_t *value)
{
	return mmio_emulate(&fe->vcpu[0], dev->mmio_ipa + off, size, write, value);
}

static uint32_t rd(uint32_t off)
{
	uint64_t value = 0xdeadbeef;
	CHECK_EQ(access(off, 4, false, &value), MMIO_DONE);
	return (uint32_t)value;
}

static void wr(uint32_t off, uint32_t v)
{
	uint64_t value = v;
	CHECK_EQ(access(off, 4, true, &value), MMIO_DONE);
}

static uint64_t stat(enum stat_id id)
{
	return fe->vcpu[0].stats[id];
}

static struct vio_header *hdr(void)
{
	return (struct vio_header *)(void *)mem;
}

static uint32_t *ring_word(uint32_t ring, uint32_t at)
{
	return (uint32_t *)(void *)(mem + ring + at);
}

static bool features_ok(uint32_t lo, uint32_t hi)
{
	wr(0x070, 0);
	wr(0x070, ST_ACK | ST_DRIVER);
	wr(0x024, 0);
	wr(0x020, lo);
	wr(0x024, 1);
	wr(0x020, hi);
	wr(0x070, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
	return rd(0x070) & ST_FEATURES_OK;
}

/* Queue 0 with NUM entries at DESC/AVAIL/USED (or where told), ready; then DRIVER_OK. */
static void setup_queue(uint64_t desc, uint64_t avail, uint64_t used)
{
	wr(0x030, 0);
	wr(0x038, NUM);
	wr(0x080, (uint32_t)desc);
	wr(0x084, (uint32_t)(desc >> 32));
	wr(0x090, (uint32_t)avail);
	wr(0x094, (uint32_t)(avail >> 32));
	wr(0x0a0, (uint32_t)used);
	wr(0x0a4, (uint32_t)(used >> 32));
	wr(0x044, 1);
}

static void bring_up(void)
{
	CHECK(features_ok(0x6, 0x1));
	setup_queue(ipa(DESC), ipa(AVAIL), ipa(USED));
	CHECK_EQ(rd(0x044), 1);
	wr(0x070, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
	CHECK_EQ(rd(0x070), ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
}

static void set_desc(uint32_t i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	uint8_t *d = ram + DESC + 16 * i;
	memcpy(d, &addr, 8);
	memcpy(d + 8, &len, 4);
	memcpy(d + 12, &flags, 2);
	memcpy(d + 14, &next, 2);
}

static uint16_t avail_idx;

/* The driver makes `head` available and notifies queue 0. */
static void offer(uint16_t head)
{
	memcpy(ram + AVAIL + 4 + 2 * (avail_idx % NUM), &head, 2);
	avail_idx++;
	memcpy(ram + AVAIL + 2, &avail_idx, 2);
	wr(0x050, 0);
}

/* A blk request: a 16-byte header (readable), 512 bytes of data and a status byte (writable). */
static void blk_chain(uint32_t head, uint32_t buf)
{
	for (uint32_t i = 0; i < 16; i++)
		ram[buf + i] = (uint8_t)(0xa0 + i);
	set_desc(head, ipa(buf), 16, 1, (uint16_t)(head + 1));
	set_desc(head + 1, ipa(buf + 0x100), 512, 3, (uint16_t)(head + 2));
	set_desc(head + 2, ipa(buf + 0x400), 1, 2, 0);
}

static void complete(uint16_t queue, uint16_t head, uint32_t written, uint32_t epoch)
{
	uint32_t prod = *ring_word(VIO_COMPLETIONS, VIO_RING_PROD);
	struct vio_completion c = { queue, head, written, epoch, 0 };
	memcpy(mem + VIO_COMPLETIONS + VIO_RING_ENTRIES_AT + (prod % VIO_BLK_QUEUE_SIZE) * 16, &c, 16);
	*ring_word(VIO_COMPLETIONS, VIO_RING_PROD) = prod + 1;
}

static uint8_t *slot(uint32_t head)
{
	return mem + VIO_DATA + head * VIO_BLK_SLOT_SIZE;
}

static void take_snapshot(void)
{
	if (!snapshot)
		snapshot = malloc(FAKE_RAM_SIZE);
	memcpy(snapshot, fake_ram, FAKE_RAM_SIZE);
}

/*
 * Since the snapshot, nothing of the board's RAM changed but fe's RAM, the channel's header
 * and rings, and the slot of `head` (~0u: none).
 */
static bool touched_only_fe_and_slot(uint32_t head)
{
	uint64_t fe_at = fe->cfg->ram_hpa - (uintptr_t)fake_ram;
	uint64_t ch_at = ch->hpa - (uintptr_t)fake_ram;
	uint64_t slot_at = ch_at + VIO_DATA + (uint64_t)head * VIO_BLK_SLOT_SIZE;

	for (uint64_t i = 0; i < FAKE_RAM_SIZE; i++) {
		if (i % 4096 == 0 && !memcmp(snapshot + i, fake_ram + i, 4096)) {
			i += 4095;
			continue;
		}
		if (snapshot[i] == fake_ram[i] || i - fe_at < fe->cfg->ram_size || i - ch_at < VIO_DATA ||
		    (head != ~0u && i - slot_at < VIO_BLK_SLOT_SIZE))
			continue;
		fprintf(stderr, "byte 0x%llx of the board's RAM changed\n", (unsigned long long)i);
		return false;
	}
	return true;
}

/* The frontend broke a rule: the device needs a reset, it was told, nothing posted. */
static void check_frontend_refused(uint64_t before, uint32_t prod)
{
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_FRONTEND), before + 1);
	CHECK(rd(0x070) & ST_NEEDS_RESET);
	CHECK(rd(0x060) & 2);
	CHECK_EQ(*ring_word(VIO_REQUESTS, VIO_RING_PROD), prod);
	CHECK_EQ(fake_raised[(fake_raises - 1) % FAKE_RAISED_LOG], dev->irq);
}

void test_virtio_mmio_registers(void)
{
	boot_blk();
	CHECK_EQ(rd(0x000), 0x74726976);
	CHECK_EQ(rd(0x004), 2);
	CHECK_EQ(rd(0x008), 2);
	CHECK_EQ(rd(0x00c), 0x4e524554);
	wr(0x014, 0);
	CHECK_EQ(rd(0x010), 0x6);  /* SIZE_MAX, SEG_MAX */
	wr(0x014, 1);
	CHECK_EQ(rd(0x010), 0x1);  /* VERSION_1 */
	wr(0x014, 2);
	CHECK_EQ(rd(0x010), 0);
	wr(0x030, 0);
	CHECK_EQ(rd(0x034), VIO_BLK_QUEUE_SIZE);
	wr(0x030, 1);
	CHECK_EQ(rd(0x034), 0);    /* blk has one queue */
	/* The channel's header as the boot wrote it. */
	CHECK_EQ(hdr()->magic, VIO_MAGIC);
	CHECK_EQ(hdr()->version, VIO_VERSION);
	CHECK_EQ(hdr()->device_id, TERN_VIRTIO_BLK);
	CHECK_EQ(hdr()->num_queues, 1);
	CHECK_EQ(hdr()->queue_size, VIO_BLK_QUEUE_SIZE);
	CHECK_EQ(hdr()->slot_size, VIO_BLK_SLOT_SIZE);
	CHECK_EQ(hdr()->device_features, 0x100000006ull);
	CHECK_EQ(hdr()->epoch, 0);
	CHECK_EQ(hdr()->data_mode, VIO_MODE_COPY);
	CHECK_EQ(hdr()->window_ipa, 0);
	CHECK_EQ(hdr()->window_size, 0);
	/* The config space: the backend's bytes, any size, little-endian; writes ignored. */
	for (uint32_t i = 0; i < 16; i++)
		mem[VIO_CONFIG + i] = (uint8_t)(0x10 + i);
	uint64_t value = 0;
	CHECK_EQ(access(0x100, 4, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x13121110);
	CHECK_EQ(access(0x10e, 2, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x1f1e);
	CHECK_EQ(access(0x109, 1, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x19);
	value = 0xff;
	CHECK_EQ(access(0x100, 1, true, &value), MMIO_DONE);
	CHECK_EQ(mem[VIO_CONFIG], 0x10);
	hdr()->config_generation = 7;
	CHECK_EQ(rd(0x0fc), 7);
	/* Anything else reads 0; registers are 32-bit only; the rest of a slot's page is 0. */
	CHECK_EQ(rd(0x0ac), 0);
	CHECK_EQ(access(0x000, 2, false, &value), MMIO_ABORT);
	CHECK_EQ(access(0x070, 1, true, &value), MMIO_ABORT);
	if (platform.virtio_stride > VIRTIO_MMIO_SIZE) {
		value = 5;
		CHECK_EQ(access(VIRTIO_MMIO_SIZE, 4, false, &value), MMIO_DONE);
		CHECK_EQ(value, 0);
		CHECK_EQ(access(platform.virtio_stride - 4, 4, true, &value), MMIO_DONE);
	}
	/* Only the frontend has it, at its slot; other slots are nobody's. */
	CHECK(mmio_claimed(fe, dev->mmio_ipa));
	CHECK(!mmio_claimed(partition_named("be"), dev->mmio_ipa));
	CHECK(!mmio_claimed(fe, platform.virtio_base));
}

/*
 * The frontend has no map of the channel, no doorbell page, no PCI function; the backend has.
 * A direct frontend: its guest takes the slot's interrupt itself, so the completions come with
 * a kick.
 */
void test_virtio_mmio_frontend_member(void)
{
	struct partition *be;
	uint64_t pa, value;
	bool w, x;

	boot_device(false, TERN_PF_IRQ_DIRECT | TERN_PF_WFI_NATIVE);
	be = partition_named("be");
	CHECK(!shared_map_of(fe, ch->ipa, &pa, &w, &x));
	CHECK(!channel_maps(fe, ch->ipa));
	CHECK(!mmio_claimed(fe, ch->doorbell_ipa));
	CHECK(!mmio_claimed(fe, FAKE_MEM_WINDOW)); /* no bridge: its only channel has no function */
	CHECK(shared_map_of(be, ch->ipa, &pa, &w, &x) && pa == ch->hpa && w);
	CHECK(channel_maps(be, ch->ipa));
	/* The backend rings member 1: a request to the frontend's core, nothing raised yet. */
	uint32_t kicks = fake_kick_count[fe->vcpu[0].pcpu];
	unsigned long raises = fake_raises;
	value = 1;
	CHECK_EQ(mmio_emulate(&be->vcpu[0], ch->doorbell_ipa, 4, true, &value), MMIO_DONE);
	CHECK(atomic_load(&fe->request) & PARTITION_REQ_VIRTIO);
	CHECK_EQ(fake_kick_count[fe->vcpu[0].pcpu], kicks + 1);
	CHECK_EQ(fake_raises, raises);
	CHECK_EQ(dev->irq, platform.virtio_irq_base + SLOT);
}

/*
 * A driver that polls its used ring with its interrupts masked (virtio_console's output) never
 * reads InterruptStatus: the backend's ring makes the frontend's core take the completion.
 */
void test_virtio_mmio_completion_reaches_a_polling_driver(void)
{
	struct partition *be;
	uint64_t value = 1;
	uint16_t used_idx;

	boot_device(false, TERN_PF_IRQ_DIRECT | TERN_PF_WFI_NATIVE);
	be = partition_named("be");
	bring_up();
	avail_idx = 0;
	blk_chain(0, BUF);
	offer(0);
	*ring_word(VIO_REQUESTS, VIO_RING_CONS) = 1;
	complete(0, 0, 1, hdr()->epoch);
	memcpy(&used_idx, ram + USED + 2, 2);
	CHECK_EQ(used_idx, 0);
	CHECK_EQ(mmio_emulate(&be->vcpu[0], ch->doorbell_ipa, 4, true, &value), MMIO_DONE);
	unsigned long raises = fake_raises;
	vcpu_check_requests(&fe->vcpu[0]);      /* the kick, on the frontend's core */
	memcpy(&used_idx, ram + USED + 2, 2);
	CHECK_EQ(used_idx, 1);
	CHECK_EQ(stat(STAT_VIRTIO_COMPLETION), 1);
	CHECK_EQ(atomic_load(&fe->request) & PARTITION_REQ_VIRTIO, 0);
	/* ... and then the device's interrupt, once. */
	CHECK_EQ(fake_raises, raises + 1);
	CHECK_EQ(fake_raised[raises % FAKE_RAISED_LOG], dev->irq);
	/* A second kick with nothing rung takes nothing and raises nothing. */
	vcpu_check_requests(&fe->vcpu[0]);
	CHECK_EQ(fake_raises, raises + 1);
}

/*
 * Where the slot's interrupt reaches a trap-and-inject frontend through the hypervisor (arm64),
 * the backend's ring raises it at once and that entry takes the completions
 * (virtio_irq_taken): no kick.  The guest gets the interrupt only with something in
 * InterruptStatus.
 */
void test_virtio_mmio_slot_interrupt_takes_completions(void)
{
	struct partition *be;
	uint64_t value = 1;
	uint16_t used_idx;

	boot_blk();
	be = partition_named("be");
	if (!arch_irq_hypervisor_first(fe, dev->irq)) {
		/* This port has no such path: a request and a kick, as for a direct frontend. */
		uint32_t before = fake_kick_count[fe->vcpu[0].pcpu];
		CHECK_EQ(mmio_emulate(&be->vcpu[0], ch->doorbell_ipa, 4, true, &value), MMIO_DONE);
		CHECK(atomic_load(&fe->request) & PARTITION_REQ_VIRTIO);
		CHECK_EQ(fake_kick_count[fe->vcpu[0].pcpu], before + 1);
		return;
	}
	bring_up();
	avail_idx = 0;
	blk_chain(0, BUF);
	offer(0);
	/* An interrupt of this device with nothing rung and InterruptStatus 0: not the guest's. */
	CHECK(!virtio_irq_taken(&fe->vcpu[0], dev->irq));
	/* Any other interrupt is. */
	CHECK(virtio_irq_taken(&fe->vcpu[0], dev->irq + 1));
	*ring_word(VIO_REQUESTS, VIO_RING_CONS) = 1;
	complete(0, 0, 1, hdr()->epoch);
	uint32_t kicks = fake_kick_count[fe->vcpu[0].pcpu];
	unsigned long raises = fake_raises;
	CHECK_EQ(mmio_emulate(&be->vcpu[0], ch->doorbell_ipa, 4, true, &value), MMIO_DONE);
	/* The slot's interrupt raised, no request, no kick. */
	CHECK_EQ(fake_raises, raises + 1);
	CHECK_EQ(fake_raised[raises % FAKE_RAISED_LOG], dev->irq);
	CHECK_EQ(fake_kick_count[fe->vcpu[0].pcpu], kicks);
	CHECK_EQ(atomic_load(&fe->request) & PARTITION_REQ_VIRTIO, 0);
	memcpy(&used_idx, ram + USED + 2, 2);
	CHECK_EQ(used_idx, 0);
	/* Its entry on the frontend's core takes the completion: the guest gets it. */
	CHECK(virtio_irq_taken(&fe->vcpu[0], dev->irq));
	memcpy(&used_idx, ram + USED + 2, 2);
	CHECK_EQ(used_idx, 1);
	CHECK_EQ(stat(STAT_VIRTIO_COMPLETION), 1);
	CHECK_EQ(rd(0x060), 1);
	CHECK_EQ(fake_raises, raises + 1); /* nothing raised again */
	/* Acknowledged, and nothing rung since: the next one is not the guest's. */
	wr(0x064, 1);
	CHECK(!virtio_irq_taken(&fe->vcpu[0], dev->irq));
}

void test_virtio_mmio_bring_up(void)
{
	boot_blk();
	/* An unknown feature (bit 3), or no VERSION_1: FEATURES_OK does not stick. */
	CHECK(!features_ok(0xe, 0x1));
	CHECK(!features_ok(0x6, 0x0));
	CHECK(!features_ok(0x0, 0x3));
	CHECK_EQ(hdr()->driver_features, 0);
	/* A subset with VERSION_1 does. */
	CHECK(features_ok(0x2, 0x1));
	CHECK_EQ(hdr()->driver_features, 0x100000002ull);
	/* QueueNum: a power of two up to QueueNumMax. */
	wr(0x030, 0);
	wr(0x038, 6);
	wr(0x044, 1);
	CHECK_EQ(rd(0x044), 0);
	CHECK(rd(0x070) & ST_NEEDS_RESET);
	CHECK(features_ok(0x6, 0x1));
	setup_queue(ipa(DESC), ipa(AVAIL), ipa(USED));
	CHECK_EQ(rd(0x044), 1);
	wr(0x070, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
	CHECK_EQ(rd(0x070), 0xf);
	CHECK_EQ(hdr()->status, 0xf);
	CHECK_EQ(rd(0x060), 0);
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_FRONTEND), 1);
	/* DRIVER_OK without FEATURES_OK: the device takes nothing. */
	wr(0x070, 0);
	wr(0x070, ST_ACK | ST_DRIVER);
	setup_queue(ipa(DESC), ipa(AVAIL), ipa(USED));
	wr(0x070, ST_ACK | ST_DRIVER | ST_DRIVER_OK);
	avail_idx = 0;
	blk_chain(0, BUF);
	offer(0);
	CHECK_EQ(*ring_word(VIO_REQUESTS, VIO_RING_PROD), 0);
	CHECK_EQ(stat(STAT_VIRTIO_REQUEST), 0);
}

void test_virtio_mmio_request_round_trip(void)
{
	boot_blk();
	bring_up();
	avail_idx = 0;
	blk_chain(0, BUF);
	unsigned long raises = fake_raises;
	offer(0);
	/* The request, its readable bytes in the slot, the backend's doorbell. */
	struct vio_request r;
	CHECK_EQ(*ring_word(VIO_REQUESTS, VIO_RING_PROD), 1);
	memcpy(&r, mem + VIO_REQUESTS + VIO_RING_ENTRIES_AT, sizeof(r));
	CHECK_EQ(r.queue, 0);
	CHECK_EQ(r.head, 0);
	CHECK_EQ(r.readable, 16);
	CHECK_EQ(r.writable, 513);
	CHECK_EQ(r.epoch, hdr()->epoch);
	CHECK(!memcmp(slot(0), ram + BUF, 16));
	CHECK_EQ(fake_raises, raises + 1);
	CHECK_EQ(fake_raised[raises % FAKE_RAISED_LOG], ch->member[0].irq);
	CHECK_EQ(stat(STAT_VIRTIO_NOTIFY), 1);
	CHECK_EQ(stat(STAT_VIRTIO_REQUEST), 1);
	CHECK_EQ(rd(0x060), 0); /* nothing completed yet */
	CHECK(!channel_irq_line(fe, dev->irq));
	/* The backend serves it: 513 bytes after the readable ones, a completion. */
	*ring_word(VIO_REQUESTS, VIO_RING_CONS) = 1;
	for (uint32_t i = 0; i < 513; i++)
		slot(0)[16 + i] = (uint8_t)(i * 7 + 1);
	complete(0, 0, 513, hdr()->epoch);
	CHECK(channel_irq_line(fe, dev->irq)); /* waiting in the ring: the line is high */
	take_snapshot();
	CHECK_EQ(rd(0x060), 1);
	CHECK(touched_only_fe_and_slot(~0u));
	for (uint32_t i = 0; i < 512; i++)
		CHECK_EQ(ram[BUF + 0x100 + i], (uint8_t)(i * 7 + 1));
	CHECK_EQ(ram[BUF + 0x400], (uint8_t)(512 * 7 + 1));
	uint16_t used_idx;
	uint32_t elem[2];
	memcpy(&used_idx, ram + USED + 2, 2);
	memcpy(elem, ram + USED + 4, 8);
	CHECK_EQ(used_idx, 1);
	CHECK_EQ(elem[0], 0);
	CHECK_EQ(elem[1], 513);
	CHECK_EQ(*ring_word(VIO_COMPLETIONS, VIO_RING_CONS), 1);
	CHECK_EQ(stat(STAT_VIRTIO_COMPLETION), 1);
	wr(0x064, 1);
	CHECK_EQ(rd(0x060), 0);
	CHECK(!channel_irq_line(fe, dev->irq));
	/* The head is free again: a second round trip on it. */
	offer(0);
	CHECK_EQ(*ring_word(VIO_REQUESTS, VIO_RING_PROD), 2);
	complete(0, 0, 1, hdr()->epoch);
	CHECK_EQ(rd(0x060), 1);
	memcpy(&used_idx, ram + USED + 2, 2);
	CHECK_EQ(used_idx, 2);
	CHECK_EQ(stat(STAT_VIRTIO_COMPLETION), 2);
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_FRONTEND) + stat(STAT_VIRTIO_REFUSED_BACKEND), 0);
	/* The counters are in tern-stats. */
	fake_uart_clear();
	partition_print_stats(fe);
	console_flush();
	CHECK(console_has("\"virtio_notify\":2,\"virtio_request\":2,\"virtio_completion\":2,"
			  "\"virtio_refused_frontend\":0,\"virtio_refused_backend\":0"));
}

/* One hostile chain at head 0 (descriptors set by `make`), offered after a clean bring-up. */
static void hostile_chain(void (*make)(void), uint32_t slot_head)
{
	boot_blk();
	bring_up();
	avail_idx = 0;
	make();
	uint64_t before = stat(STAT_VIRTIO_REFUSED_FRONTEND);
	take_snapshot();
	offer(0);
	check_frontend_refused(before, 0);
	CHECK(touched_only_fe_and_slot(slot_head));
	/* Until the driver resets it, the device takes nothing more. */
	blk_chain(0, BUF);
	offer(0);
	CHECK_EQ(*ring_word(VIO_REQUESTS, VIO_RING_PROD), 0);
}

static void past_ram(void)
{
	set_desc(0, ipa(BUF), 16, 1, 1);
	set_desc(1, fe->cfg->ram_ipa + fe->cfg->ram_size - 8, 16, 2, 0); /* straddles its end */
}

static void below_ram(void)
{
	set_desc(0, fe->cfg->ram_ipa - 0x1000, 16, 0, 0);
}

static void wrapping(void)
{
	set_desc(0, ~0ull - 8, 16, 0, 0);
}

static void self_loop(void)
{
	set_desc(0, ipa(BUF), 16, 1, 0);
}

static void two_loop(void)
{
	set_desc(0, ipa(BUF), 16, 1, 1);
	set_desc(1, ipa(BUF), 16, 1, 0);
}

static void writable_first(void)
{
	set_desc(0, ipa(BUF), 16, 3, 1);
	set_desc(1, ipa(BUF), 16, 0, 0);
}

static void indirect(void)
{
	set_desc(0, ipa(BUF), 16, 4, 0);
}

static void too_big(void)
{
	set_desc(0, ipa(BUF), VIO_BLK_SLOT_SIZE, 1, 1);
	set_desc(1, ipa(BUF), 1, 2, 0);
}

static void next_past_num(void)
{
	set_desc(0, ipa(BUF), 16, 1, NUM);
}

void test_virtio_mmio_refuses_descriptors_outside_ram(void)
{
	hostile_chain(past_ram, 0);
	hostile_chain(below_ram, 0);
	hostile_chain(wrapping, 0);
}

void test_virtio_mmio_refuses_bad_chains(void)
{
	hostile_chain(self_loop, 0);
	hostile_chain(two_loop, 0);
	hostile_chain(writable_first, 0);
	hostile_chain(indirect, 0);
	hostile_chain(too_big, 0);
	hostile_chain(next_past_num, 0);
}

void test_virtio_mmio_refuses_bad_avail(void)
{
	uint16_t head;

	/* A head reused while outstanding. */
	boot_blk();
	bring_up();
	avail_idx = 0;
	blk_chain(0, BUF);
	offer(0);
	CHECK_EQ(*ring_word(VIO_REQUESTS, VIO_RING_PROD), 1);
	take_snapshot();
	offer(0);
	check_frontend_refused(0, 1);
	CHECK(touched_only_fe_and_slot(~0u));
	/* A head past num. */
	boot_blk();
	bring_up();
	avail_idx = 0;
	take_snapshot();
	offer(NUM);
	check_frontend_refused(0, 0);
	CHECK(touched_only_fe_and_slot(~0u));
	/* The available index moved by more than num. */
	boot_blk();
	bring_up();
	blk_chain(0, BUF);
	head = 0;
	memcpy(ram + AVAIL + 4, &head, 2);
	avail_idx = NUM + 1;
	memcpy(ram + AVAIL + 2, &avail_idx, 2);
	take_snapshot();
	wr(0x050, 0);
	check_frontend_refused(0, 0);
	CHECK(touched_only_fe_and_slot(~0u));
	/* A notify of a queue that does not exist is counted, and nothing more. */
	boot_blk();
	bring_up();
	wr(0x050, 5);
	CHECK_EQ(stat(STAT_VIRTIO_NOTIFY), 1);
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_FRONTEND), 0);
}

void test_virtio_mmio_refuses_queues_outside_ram(void)
{
	static const uint32_t bad[][3] = {
		{ 0x200000 - 0x40, AVAIL, USED },  /* the descriptor table runs past its RAM */
		{ DESC, 0x200000 - 8, USED },
		{ DESC, AVAIL, 0x200000 - 16 },
		{ DESC + 8, AVAIL, USED },         /* misaligned */
		{ DESC, AVAIL + 1, USED },
		{ DESC, AVAIL, USED + 2 },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		boot_blk();
		CHECK(features_ok(0x6, 0x1));
		setup_queue(ipa(bad[i][0]), ipa(bad[i][1]), ipa(bad[i][2]));
		CHECK_EQ(rd(0x044), 0);
		CHECK(rd(0x070) & ST_NEEDS_RESET);
		CHECK_EQ(stat(STAT_VIRTIO_REFUSED_FRONTEND), 1);
	}
	/* Below its RAM altogether. */
	boot_blk();
	CHECK(features_ok(0x6, 0x1));
	setup_queue(fe->cfg->ram_ipa - 0x10000, ipa(AVAIL), ipa(USED));
	CHECK_EQ(rd(0x044), 0);
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_FRONTEND), 1);
}

/* One request of head 0 outstanding (readable 16, writable 513), the used ring still empty. */
static void one_outstanding(void)
{
	boot_blk();
	bring_up();
	avail_idx = 0;
	blk_chain(0, BUF);
	offer(0);
	*ring_word(VIO_REQUESTS, VIO_RING_CONS) = 1;
}

static uint16_t used_index(void)
{
	uint16_t idx;
	memcpy(&idx, ram + USED + 2, 2);
	return idx;
}

void test_virtio_mmio_refuses_garbage_completions(void)
{
	/* epoch: from the device's */
	static const struct vio_completion bad[] = {
		{ 0, 1, 1, 0, 0 },      /* head 1: nothing outstanding */
		{ 0, 40, 1, 0, 0 },     /* past the queue */
		{ 1, 0, 1, 0, 0 },      /* no such queue */
		{ 0, 0, 1, 3, 0 },      /* an epoch that has not been */
		{ 0, 0, 514, 0, 0 },    /* more than its 513 writable bytes */
		{ 0, 0, ~0u, 0, 0 },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		one_outstanding();
		take_snapshot();
		complete(bad[i].queue, bad[i].head, bad[i].written, hdr()->epoch + bad[i].epoch);
		CHECK_EQ(rd(0x060), 0);
		CHECK_EQ(stat(STAT_VIRTIO_REFUSED_BACKEND), 1);
		CHECK_EQ(used_index(), 0);
		CHECK(touched_only_fe_and_slot(~0u));
		CHECK(!memcmp(snapshot + (fe->cfg->ram_hpa - (uintptr_t)fake_ram), ram, fe->cfg->ram_size));
		CHECK_EQ(*ring_word(VIO_COMPLETIONS, VIO_RING_CONS), 1);
		CHECK(!(rd(0x070) & ST_NEEDS_RESET)); /* the frontend did nothing wrong */
		/* The real one still completes it. */
		complete(0, 0, 1, hdr()->epoch);
		CHECK_EQ(rd(0x060), 1);
		CHECK_EQ(used_index(), 1);
	}
	/* The completion ring's producer index jumps past its entries: all of it refused. */
	one_outstanding();
	take_snapshot();
	*ring_word(VIO_COMPLETIONS, VIO_RING_PROD) = VIO_BLK_QUEUE_SIZE + 1;
	CHECK_EQ(rd(0x060), 0);
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_BACKEND), 1);
	CHECK_EQ(used_index(), 0);
	CHECK(touched_only_fe_and_slot(~0u));
	CHECK_EQ(*ring_word(VIO_COMPLETIONS, VIO_RING_CONS), VIO_BLK_QUEUE_SIZE + 1);
	CHECK_EQ(stat(STAT_VIRTIO_COMPLETION), 0);
}

/* A reset (Status 0) drops what is outstanding: a new epoch, its old completions dropped. */
void test_virtio_mmio_reset_drops_outstanding(void)
{
	one_outstanding();
	uint32_t old = hdr()->epoch;
	wr(0x070, 0);
	CHECK_EQ(rd(0x070), 0);
	CHECK_EQ(hdr()->epoch, old + 1);
	CHECK_EQ(hdr()->status, 0);
	bring_up(); /* resets it again first, as a driver does */
	avail_idx = 0;
	memset(ram + USED, 0, 0x100);
	complete(0, 0, 1, old); /* the old epoch's: dropped, not refused */
	CHECK_EQ(rd(0x060), 0);
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_BACKEND), 0);
	CHECK_EQ(used_index(), 0);
	/* Head 0 is free in the new epoch. */
	blk_chain(0, BUF);
	offer(0);
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_FRONTEND), 0);
	CHECK_EQ(*ring_word(VIO_REQUESTS, VIO_RING_PROD), 2);
	struct vio_request r;
	memcpy(&r, mem + VIO_REQUESTS + VIO_RING_ENTRIES_AT + 16, sizeof(r));
	CHECK_EQ(r.epoch, old + 2);
	complete(0, 0, 1, old + 2);
	CHECK_EQ(rd(0x060), 1);
	CHECK_EQ(used_index(), 1);
	/* The frontend's restart is a reset too. */
	partition_request(fe, PARTITION_REQ_RESTART);
	fake_deliver_all_kicks(16);
	CHECK_EQ(atomic_load(&fe->restarts), 1);
	CHECK_EQ(hdr()->epoch, old + 3);
	CHECK_EQ(rd(0x070), 0);
	CHECK_EQ(rd(0x060), 0);
}

void test_virtio_mmio_config_generation(void)
{
	boot_blk();
	hdr()->config_generation = 1; /* before DRIVER_OK: what the driver reads at bring-up */
	bring_up();
	CHECK_EQ(rd(0x060), 0);
	hdr()->config_generation = 2;
	CHECK(channel_irq_line(fe, dev->irq) == false); /* only once the frontend looks */
	CHECK_EQ(rd(0x060), 2);
	CHECK(channel_irq_line(fe, dev->irq));
	wr(0x064, 2);
	CHECK_EQ(rd(0x060), 0);
	CHECK_EQ(rd(0x0fc), 2);
}

/* The blob's records are checked at boot: a virtio record naming a bad slot stops the board. */
void test_virtio_mmio_boot_refuses_a_bad_record(void)
{
	fake_config_begin(2);
	add_partition("fe", "0", 0);
	add_partition("be", "1", 0);
	struct tern_config_virtio *v = fake_config_add_virtio("disk0", TERN_VIRTIO_BLK, 0, 1, SLOT, BLK_CH);
	v->mmio_ipa += 0x10;
	fake_uart_clear();
	CHECK_EQ(fake_boot(0), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("virtio disk0: registers at"));
}

/*
 * A vsock device (the description's second, so index 1): three queues, VERSION_1 alone (no
 * SEQPACKET), and a guest_cid in its config space before any backend wrote one.
 */
void test_virtio_mmio_vsock_shape_features_and_default_cid(void)
{
	const uint64_t vsock_ch = VIO_DATA + (uint64_t)VIO_VSOCK_QUEUES * VIO_VSOCK_QUEUE_SIZE *
				  VIO_VSOCK_SLOT_SIZE;

	fake_config_begin(2);
	add_partition("fe", "0", 0);
	add_partition("be", "1", 0);
	(void)fake_config_add_virtio("disk0", TERN_VIRTIO_BLK, 0, 1, SLOT, BLK_CH);
	dev = fake_config_add_virtio("sock0", TERN_VIRTIO_VSOCK, 0, 1, SLOT + 1, vsock_ch);
	const struct tern_config *cfg = (const struct tern_config *)(const void *)fake_config;
	ch = &((const struct tern_config_channel *)(const void *)(fake_config +
							       cfg->channels_offset))[dev->channel];
	mem = (uint8_t *)(uintptr_t)ch->hpa;
	memset(mem, 0xee, vsock_ch);    /* whatever the channel's memory held before */
	CHECK_EQ(boot_board(), FAKE_EXIT_RUN);
	fe = partition_named("fe");

	CHECK_EQ(rd(0x008), 19);
	wr(0x014, 0);
	CHECK_EQ(rd(0x010), 0);
	wr(0x014, 1);
	CHECK_EQ(rd(0x010), 0x1);       /* VERSION_1 */
	for (uint32_t q = 0; q < 3; q++) {
		wr(0x030, q);
		CHECK_EQ(rd(0x034), VIO_VSOCK_QUEUE_SIZE);
	}
	wr(0x030, 3);
	CHECK_EQ(rd(0x034), 0);
	CHECK_EQ(hdr()->device_id, TERN_VIRTIO_VSOCK);
	CHECK_EQ(hdr()->num_queues, 3);
	CHECK_EQ(hdr()->slot_size, VIO_VSOCK_SLOT_SIZE);
	/* guest_cid, le64: VIO_VSOCK_CID_FIRST + 1, as the driver reads it and the backend finds it. */
	CHECK_EQ(rd(0x100), VIO_VSOCK_CID_FIRST + 1);
	CHECK_EQ(rd(0x104), 0);
	CHECK_EQ(mem[VIO_CONFIG], VIO_VSOCK_CID_FIRST + 1);
	CHECK_EQ(mem[VIO_CONFIG + 7], 0);
}

/* Segment i of head's slot, as the backend reads it. */
static struct vio_segment segment(uint32_t head, uint32_t i)
{
	struct vio_segment seg;

	memcpy(&seg, slot(head) + VIO_SEGMENTS_AT + i * sizeof(seg), sizeof(seg));
	return seg;
}

static bool slot_zero_from(uint32_t head, uint32_t from)
{
	for (uint32_t i = from; i < VIO_BLK_SLOT_SIZE; i++) {
		if (slot(head)[i] != 0)
			return false;
	}
	return true;
}

/*
 * Trusted: the chain is walked and checked as in copy mode, and its scatter list (addresses in
 * the backend's window) is posted instead of its bytes; the backend's bytes in fe's RAM stay
 * as it wrote them, and the used ring says how many it wrote.
 */
void test_virtio_mmio_trusted_posts_segments(void)
{
	boot_device(true, 0);
	CHECK_EQ(hdr()->data_mode, VIO_MODE_SEGMENTS);
	CHECK_EQ(hdr()->window_ipa, WINDOW);
	CHECK_EQ(hdr()->window_size, fe->cfg->ram_size);
	bring_up();
	avail_idx = 0;
	blk_chain(0, BUF);
	offer(0);
	struct vio_request r;
	CHECK_EQ(*ring_word(VIO_REQUESTS, VIO_RING_PROD), 1);
	memcpy(&r, mem + VIO_REQUESTS + VIO_RING_ENTRIES_AT, sizeof(r));
	CHECK_EQ(r.readable, 16);
	CHECK_EQ(r.writable, 513);
	uint32_t count;
	memcpy(&count, slot(0), 4);
	CHECK_EQ(count, 3);
	struct vio_segment s0 = segment(0, 0), s1 = segment(0, 1), s2 = segment(0, 2);
	CHECK(s0.addr == WINDOW + BUF && s0.len == 16 && s0.flags == 0);
	CHECK(s1.addr == WINDOW + BUF + 0x100 && s1.len == 512 && s1.flags == VIO_SEG_WRITABLE);
	CHECK(s2.addr == WINDOW + BUF + 0x400 && s2.len == 1 && s2.flags == VIO_SEG_WRITABLE);
	/* Nothing copied: past the list the slot is as the boot left it. */
	CHECK(slot_zero_from(0, VIO_SEGMENTS_AT + 3 * sizeof(struct vio_segment)));
	CHECK_EQ(stat(STAT_VIRTIO_REQUEST), 1);
	/* The backend writes 100 bytes through its window, then completes. */
	*ring_word(VIO_REQUESTS, VIO_RING_CONS) = 1;
	for (uint32_t i = 0; i < 100; i++)
		ram[BUF + 0x100 + i] = (uint8_t)(i * 3 + 5);
	for (uint32_t i = 100; i < 512; i++)
		ram[BUF + 0x100 + i] = 0xee;
	complete(0, 0, 100, hdr()->epoch);
	take_snapshot();
	CHECK_EQ(rd(0x060), 1);
	CHECK(touched_only_fe_and_slot(~0u));
	for (uint32_t i = 0; i < 100; i++)
		CHECK_EQ(ram[BUF + 0x100 + i], (uint8_t)(i * 3 + 5));
	for (uint32_t i = 100; i < 512; i++)
		CHECK_EQ(ram[BUF + 0x100 + i], 0xee);
	CHECK(slot_zero_from(0, VIO_SEGMENTS_AT + 3 * sizeof(struct vio_segment)));
	uint16_t used_idx;
	uint32_t elem[2];
	memcpy(&used_idx, ram + USED + 2, 2);
	memcpy(elem, ram + USED + 4, 8);
	CHECK_EQ(used_idx, 1);
	CHECK_EQ(elem[0], 0);
	CHECK_EQ(elem[1], 100);
	CHECK_EQ(stat(STAT_VIRTIO_COMPLETION), 1);
	/* Only the bytes fe's RAM changed: the used ring's (the snapshot was before the take). */
	CHECK_EQ(memcmp(snapshot + (fe->cfg->ram_hpa - (uintptr_t)fake_ram) + BUF,
			ram + BUF, 0x1000), 0);
	/* More than the chain has room for: refused and counted, the used ring untouched. */
	wr(0x064, 1);
	offer(0);
	uint64_t refused = stat(STAT_VIRTIO_REFUSED_BACKEND);
	complete(0, 0, 514, hdr()->epoch);
	CHECK_EQ(rd(0x060), 0);
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_BACKEND), refused + 1);
	memcpy(&used_idx, ram + USED + 2, 2);
	CHECK_EQ(used_idx, 1);
	/* ... and its right answer after it is taken. */
	complete(0, 0, 513, hdr()->epoch);
	CHECK_EQ(rd(0x060), 1);
	memcpy(&used_idx, ram + USED + 2, 2);
	memcpy(elem, ram + USED + 4 + 8, 8);
	CHECK_EQ(used_idx, 2);
	CHECK_EQ(elem[1], 513);
	CHECK_EQ(stat(STAT_VIRTIO_REFUSED_FRONTEND), 0);
}

/* Trusted or not, a chain outside fe's RAM is refused before anything is posted. */
void test_virtio_mmio_trusted_still_checks_chains(void)
{
	boot_device(true, 0);
	bring_up();
	avail_idx = 0;
	past_ram();
	uint64_t before = stat(STAT_VIRTIO_REFUSED_FRONTEND);
	offer(0);
	check_frontend_refused(before, 0);
}
