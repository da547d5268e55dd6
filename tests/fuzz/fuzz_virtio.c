/* SPDX-License-Identifier: MIT */
/*
 * VirtIO devices served by another partition (core/virtio_mmio.c): the standard board's trap
 * partition is the frontend of a virtio console (two queues of 64) at slot 0, served by the
 * direct partition through its channel, and of a second one at slot 1 that the direct
 * partition serves trusted (segments mode, through its window onto the trap partition's RAM);
 * an input's first byte picks the one it drives.  Steps: the frontend's register accesses from any of
 * its vCPUs (the known registers mostly, anywhere in the slot otherwise; any size; values
 * biased to statuses, features, queue sizes and addresses of its rings), writes of its memory
 * (raw bytes, descriptors, available entries in the two queues' rings), and the backend's side
 * (completions biased to outstanding heads and the current epoch, its ring indices moved).
 *
 * Oracle: all of the board's RAM but the frontend's and the channel's is poisoned (ASan), so
 * any access elsewhere is a crash; the access's result (misaligned; a register not 32-bit:
 * refused); the identification registers' values; only the acting vCPU's virtio counters
 * move, a QueueNotify counts once; every request posted is well formed (a queue and head of
 * the shape, readable + writable within a slot, the current epoch; trusted: its slot's list
 * at most a queue long, every segment inside the window, the readable ones first, adding up to
 * the request's counts) and none while the device needs a reset; the completion ring's consumer never passes its producer; the board's
 * interrupt controller is written only to raise the backend's doorbell or the slot's
 * interrupt; no kick.
 */
#include <sanitizer/asan_interface.h>
#include <string.h>
#include <tern/channel.h>
#include <tern/config.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include <tern/virtio_mmio.h>
#include "harness.h"

#define STARTED (BIT(0) | BIT(1) | BIT(2) | BIT(3) | BIT(4))
#define CON_CH  0x85000u        /* VIO_DATA + 2 x 64 x 4 KiB */
#define AREA    0x40000u        /* the frontend's rings and buffers, from its RAM's base */
#define WINDOW  0x4000u
#define ENTRIES (VIO_CONSOLE_QUEUES * VIO_CONSOLE_QUEUE_SIZE)
/* The trusted device's window in the direct partition's map: past its RAM and channels. */
#define WINDOW_IPA (platform.ram_base + (16u << 20))

static const struct tern_config_virtio *dev;
static const struct tern_config_channel *ch;
static uint8_t *mem, *ram;
static uint64_t ram_ipa;
static uint16_t avail_idx[2];
static bool trusted;

static void add_device(struct tern_config *cfg)
{
	fake_config_add_virtio("con", TERN_VIRTIO_CONSOLE, STD_TRAP, STD_DIRECT, 0, CON_CH);
	fake_config_add_virtio("tcon", TERN_VIRTIO_CONSOLE, STD_TRAP, STD_DIRECT, 1, CON_CH)->flags =
		TERN_VF_BACKEND_TRUSTED;
	struct tern_config_partition *back = &cfg->partition[STD_DIRECT];
	back->region[back->num_regions++] = (struct tern_config_region){
		WINDOW_IPA, cfg->partition[STD_TRAP].ram_hpa, cfg->partition[STD_TRAP].ram_size,
		TERN_RF_PARTITION_RAM, 0 };
}

/* Queue q's rings in the frontend's RAM (offsets from its base). */
static uint32_t desc_at(uint32_t q)
{
	return AREA + q * 0x2000u;
}

static uint32_t avail_at(uint32_t q)
{
	return desc_at(q) + 0x800u;
}

static uint32_t used_at(uint32_t q)
{
	return desc_at(q) + 0x1000u;
}

static uint32_t *word(uint32_t ring, uint32_t at)
{
	return (uint32_t *)(void *)(mem + ring + at);
}

/* Everything of the board's RAM but the frontend's and the two channels', unreachable. */
static void poison_the_rest(const struct tern_config_channel *c0, const struct tern_config_channel *c1)
{
	uintptr_t base = (uintptr_t)fake_ram, fe = (uintptr_t)ram, a = (uintptr_t)c0->hpa;
	uintptr_t b = (uintptr_t)c1->hpa;
	uint64_t fe_size = partitions[STD_TRAP].cfg->ram_size;

	FUZZ_ASSERT(fe + fe_size <= a && a + c0->size <= b);
	ASAN_POISON_MEMORY_REGION(fake_ram, fe - base);
	ASAN_POISON_MEMORY_REGION((void *)(fe + fe_size), a - fe - fe_size);
	ASAN_POISON_MEMORY_REGION((void *)(a + c0->size), b - a - c0->size);
	ASAN_POISON_MEMORY_REGION((void *)(b + c1->size), base + FAKE_RAM_SIZE - b - c1->size);
}

static const uint32_t regs[] = {
	0x000, 0x004, 0x008, 0x00c, 0x010, 0x014, 0x020, 0x024, 0x030, 0x034, 0x038, 0x044, 0x050,
	0x060, 0x064, 0x070, 0x080, 0x084, 0x090, 0x094, 0x0a0, 0x0a4, 0x0fc, 0x100, 0x104,
};

static uint64_t biased_value(struct input *in)
{
	uint32_t q = (uint32_t)take(in, 1);
	uint64_t lo = (uint32_t)ram_ipa, hi = ram_ipa >> 32;
	const uint64_t values[] = {
		0, 1, 2, 3, 0xb, 0xf, 0x40, 64, 32, 8, 0x1, 0x3,
		lo + desc_at(q & 1), lo + avail_at(q & 1), lo + used_at(q & 1), hi, 0xffffffffu,
	};
	return values[(q >> 1) % (sizeof(values) / sizeof(values[0]))];
}

/* A guest address: in the rings' area mostly, at or past its RAM's edges otherwise. */
static uint64_t biased_address(struct input *in)
{
	uint32_t how = (uint32_t)take(in, 1);
	uint64_t size = partitions[STD_TRAP].cfg->ram_size;

	switch (how & 3u) {
	case 0:
	case 1:
		return ram_ipa + AREA + take(in, 2) % WINDOW;
	case 2:
		return ram_ipa + size - take(in, 1);
	default:
		return ram_ipa - 16 + take(in, 1) % 32 + ((how & 4u) ? size : 0);
	}
}

/* Trusted: request r's slot lists segments inside the window, readable first, adding up. */
ORACLE static void check_segments(const struct vio_request *r)
{
	const uint8_t *slot = mem + VIO_DATA + ((uint64_t)r->queue * VIO_CONSOLE_QUEUE_SIZE + r->head) *
			      VIO_CONSOLE_SLOT_SIZE;
	uint64_t size = partitions[STD_TRAP].cfg->ram_size, readable = 0, writable = 0;
	uint32_t count;

	memcpy(&count, slot, 4);
	FUZZ_ASSERT(count <= VIO_CONSOLE_QUEUE_SIZE);
	for (uint32_t i = 0; i < count; i++) {
		struct vio_segment seg;
		memcpy(&seg, slot + VIO_SEGMENTS_AT + i * sizeof(seg), sizeof(seg));
		FUZZ_ASSERT(seg.addr >= WINDOW_IPA && seg.addr - WINDOW_IPA <= size &&
			    seg.len <= size - (seg.addr - WINDOW_IPA));
		FUZZ_ASSERT(seg.flags == 0 || seg.flags == VIO_SEG_WRITABLE);
		FUZZ_ASSERT(!(writable && seg.flags == 0));
		*(seg.flags ? &writable : &readable) += seg.len;
	}
	FUZZ_ASSERT(readable == r->readable && writable == r->writable);
}

/* The device's requests between `from` and `to`: each well formed, in the current epoch. */
ORACLE static void check_requests(uint32_t from, uint32_t to, uint32_t epoch)
{
	FUZZ_ASSERT(to - from <= ENTRIES);
	for (uint32_t i = from; i != to; i++) {
		struct vio_request r;
		memcpy(&r, mem + VIO_REQUESTS + VIO_RING_ENTRIES_AT + (i % ENTRIES) * 16, sizeof(r));
		FUZZ_ASSERT(r.queue < VIO_CONSOLE_QUEUES && r.head < VIO_CONSOLE_QUEUE_SIZE);
		FUZZ_ASSERT((uint64_t)r.readable + r.writable <= VIO_CONSOLE_SLOT_SIZE);
		FUZZ_ASSERT(r.epoch == epoch);
		if (trusted)
			check_segments(&r);
	}
}

/* Only the acting vCPU's virtio counters moved; a notify counted once. */
static uint64_t before[3][STAT_COUNT], others[2][STAT_COUNT];

ORACLE static void snapshot(void)
{
	for (uint32_t i = 0; i < 3; i++)
		memcpy(before[i], partitions[STD_TRAP].vcpu[i].stats, sizeof(before[i]));
	for (uint32_t i = 0; i < 2; i++)
		memcpy(others[i], partitions[STD_DIRECT].vcpu[i].stats, sizeof(others[i]));
}

ORACLE static void check_counters(const struct vcpu *acting, bool notify)
{
	for (uint32_t i = 0; i < 2; i++)
		FUZZ_ASSERT(same_bytes(others[i], partitions[STD_DIRECT].vcpu[i].stats, sizeof(others[i])));
	for (uint32_t i = 0; i < 3; i++) {
		const struct vcpu *v = &partitions[STD_TRAP].vcpu[i];
		for (int s = 0; s < STAT_COUNT; s++) {
			bool virtio = s >= STAT_VIRTIO_NOTIFY && s <= STAT_VIRTIO_REFUSED_BACKEND;
			if (v != acting || !virtio)
				FUZZ_ASSERT(v->stats[s] == before[i][s]);
		}
	}
	FUZZ_ASSERT(acting->stats[STAT_VIRTIO_NOTIFY] == before[acting->index][STAT_VIRTIO_NOTIFY] + notify);
	FUZZ_ASSERT(acting->stats[STAT_VIRTIO_REFUSED_FRONTEND] <= before[acting->index][STAT_VIRTIO_REFUSED_FRONTEND] + 1);
}

static uint32_t slot_irq_bit, doorbell_bit;
static uintptr_t slot_irq_reg, doorbell_reg;
static bool stray_gic_write;

static void gic_write(uintptr_t addr, unsigned size, uint64_t value)
{
	(void)size;
	if (!((addr == slot_irq_reg && value == slot_irq_bit) || (addr == doorbell_reg && value == doorbell_bit)))
		stray_gic_write = true;
}

/* A register access of the frontend's vCPU `v`: its result and, for a read, the value. */
static void register_step(struct input *in, uint8_t how, struct vcpu *v)
{
	uint32_t b = (uint32_t)take(in, 1);
	uint64_t off = (b & 0x80u) ? take(in, 2) % platform.virtio_stride : regs[b % ARRAY_SIZE(regs)];
	unsigned sz = 1u << ((how >> 3) & 3u);
	bool write = how & 0x20u;
	uint64_t value = (how & 0x40u) ? take(in, sz) : biased_value(in);
	uint64_t orig;
	enum mmio_result r = MMIO_UNHANDLED, want = MMIO_DONE;
	uint32_t status;

	if (sz < 8)
		value &= (1ull << (8 * sz)) - 1;
	orig = value;
	if (off & (sz - 1))
		want = MMIO_MISALIGNED;
	else if (off < 0x100 && sz != 4)
		want = MMIO_ABORT;
	bool notify = want == MMIO_DONE && write && off == 0x050;
	uint32_t prod = *word(VIO_REQUESTS, VIO_RING_PROD);
	uint64_t st = 0;
	FUZZ_ASSERT(FAKE_ON(v->pcpu, mmio_emulate(v, dev->mmio_ipa + 0x070, 4, false, &st)) == FAKE_RETURNED);
	status = (uint32_t)st;
	snapshot();
	TRACE("vcpu %u: %s %u bytes at 0x%llx value 0x%llx\n", v->index, write ? "write" : "read", sz,
	      (unsigned long long)off, (unsigned long long)value);
	FUZZ_ASSERT(FAKE_ON(v->pcpu, r = mmio_emulate(v, dev->mmio_ipa + off, sz, write, &value)) == FAKE_RETURNED);
	TRACE("  -> %d, 0x%llx\n", (int)r, (unsigned long long)value);
	FUZZ_ASSERT(r == want);
	if (write || want != MMIO_DONE)
		FUZZ_ASSERT(value == orig);
	else if (off == 0x000)
		FUZZ_ASSERT(value == 0x74726976u);
	else if (off == 0x004)
		FUZZ_ASSERT(value == 2u);
	else if (off == 0x008)
		FUZZ_ASSERT(value == TERN_VIRTIO_CONSOLE);
	else if (off == 0x00c)
		FUZZ_ASSERT(value == 0x4e524554u);
	else if (off >= 0x200 || (off >= 0x0a8 && off < 0x0fc))
		FUZZ_ASSERT(value == 0);
	check_counters(v, notify);
	uint32_t now = *word(VIO_REQUESTS, VIO_RING_PROD);
	if (status & 0x40u)
		FUZZ_ASSERT(now == prod); /* a device that needs a reset takes nothing */
	check_requests(prod, now, ((const struct vio_header *)(const void *)mem)->epoch);
	/* The completion ring's consumer never passes its producer. */
	FUZZ_ASSERT(*word(VIO_COMPLETIONS, VIO_RING_PROD) - *word(VIO_COMPLETIONS, VIO_RING_CONS) <= 0x7fffffffu);
}

/* The backend posts a completion (or moves its producer index). */
static void completion_step(struct input *in)
{
	uint32_t prod = *word(VIO_COMPLETIONS, VIO_RING_PROD);
	uint32_t b = (uint32_t)take(in, 1);
	uint32_t epoch = ((const struct vio_header *)(const void *)mem)->epoch;

	if (b & 0x80u) {
		*word(VIO_COMPLETIONS, VIO_RING_PROD) = prod + (uint32_t)take(in, 1);
		return;
	}
	struct vio_completion c = {
		(uint16_t)(b & 1u), (uint16_t)take(in, 1) % 70, (b & 2u) ? (uint32_t)take(in, 2) : (uint32_t)take(in, 1),
		epoch + (uint32_t)((b >> 2) % 3) - 1u, 0,
	};
	if ((b >> 2) % 3 == 1)
		c.epoch = epoch;
	memcpy(mem + VIO_COMPLETIONS + VIO_RING_ENTRIES_AT + (prod % ENTRIES) * 16, &c, sizeof(c));
	*word(VIO_COMPLETIONS, VIO_RING_PROD) = prod + 1;
	/* The backend's bytes in the slot: whatever; ASan sees the copy's reach. */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };
	static bool poisoned;

	std_config_hook = add_device;
	fake_gic_write_hook = NULL;
	std_boot(STARTED);
	const struct tern_config *cfg = (const struct tern_config *)(uintptr_t)platform.config_hpa;
	FUZZ_ASSERT(cfg->num_virtio == 2);
	trusted = input_left(&in) && (take(&in, 1) & 1u);
	dev = &config_virtio(cfg)[trusted ? 1 : 0];
	FUZZ_ASSERT(((dev->flags & TERN_VF_BACKEND_TRUSTED) != 0) == trusted);
	ch = &config_channels(cfg)[dev->channel];
	mem = (uint8_t *)(uintptr_t)ch->hpa;
	ram = fake_partition_ram(partitions[STD_TRAP].cfg);
	ram_ipa = partitions[STD_TRAP].cfg->ram_ipa;
	slot_irq_reg = platform.arch.gicd_base + 0x200 + 4 * (dev->irq / 32);
	slot_irq_bit = 1u << (dev->irq % 32);
	doorbell_reg = platform.arch.gicd_base + 0x200 + 4 * (ch->member[0].irq / 32);
	doorbell_bit = 1u << (ch->member[0].irq % 32);
	if (!poisoned) {
		poison_the_rest(&config_channels(cfg)[0], &config_channels(cfg)[1]);
		poisoned = true;
	}
	FUZZ_ASSERT(((const struct vio_header *)(const void *)mem)->data_mode ==
		    (trusted ? VIO_MODE_SEGMENTS : VIO_MODE_COPY));
	/* Every input starts from a device at reset, its rings and area clear. */
	virtio_reset(&partitions[STD_TRAP]);
	memset(ram + AREA, 0, WINDOW);
	*word(VIO_REQUESTS, VIO_RING_CONS) = *word(VIO_REQUESTS, VIO_RING_PROD);
	*word(VIO_COMPLETIONS, VIO_RING_PROD) = *word(VIO_COMPLETIONS, VIO_RING_CONS);
	avail_idx[0] = avail_idx[1] = 0;
	stray_gic_write = false;
	fake_gic_write_hook = gic_write;
	while (input_left(&in)) {
		uint8_t how = (uint8_t)take(&in, 1);
		struct vcpu *v = std_vcpu(STD_TRAP, (uint32_t)take(&in, 1) % 3);
		uint32_t kicks = atomic_load(&fake_kicks);

		switch (how & 7u) {
		case 0:
		case 1:
			register_step(&in, how, v);
			break;
		case 2: {
			uint32_t off = (uint32_t)take(&in, 2) % WINDOW, n = (uint32_t)take(&in, 1) % 17;
			for (uint32_t i = 0; i < n && off + i < WINDOW; i++)
				ram[AREA + off + i] = (uint8_t)take(&in, 1);
			break;
		}
		case 3: {
			uint32_t q = (how >> 3) & 1u, i = (uint32_t)take(&in, 1) % 64;
			uint64_t addr = biased_address(&in);
			uint32_t len = (uint32_t)take(&in, 2);
			uint16_t flags = (uint16_t)(take(&in, 1) & 7u), next = (uint16_t)(take(&in, 1) % 70);
			uint8_t *d = ram + desc_at(q) + 16 * i;
			memcpy(d, &addr, 8);
			memcpy(d + 8, &len, 4);
			memcpy(d + 12, &flags, 2);
			memcpy(d + 14, &next, 2);
			break;
		}
		case 4: {
			uint32_t q = (how >> 3) & 1u;
			uint16_t head = (uint16_t)(take(&in, 1) % 70);
			memcpy(ram + avail_at(q) + 4 + 2 * (avail_idx[q] % 64), &head, 2);
			avail_idx[q] = (uint16_t)(avail_idx[q] + ((how & 0x10u) ? take(&in, 1) : 1u));
			memcpy(ram + avail_at(q) + 2, &avail_idx[q], 2);
			break;
		}
		case 5:
			completion_step(&in);
			break;
		case 6:
			*word(VIO_REQUESTS, VIO_RING_CONS) = *word(VIO_REQUESTS, VIO_RING_PROD);
			break;
		default: {
			/* A notify, the driver's most frequent act. */
			uint64_t q = (how >> 3) & 1u;
			snapshot();
			uint32_t prod = *word(VIO_REQUESTS, VIO_RING_PROD);
			FUZZ_ASSERT(FAKE_ON(v->pcpu, mmio_emulate(v, dev->mmio_ipa + 0x050, 4, true, &q)) == FAKE_RETURNED);
			check_counters(v, true);
			check_requests(prod, *word(VIO_REQUESTS, VIO_RING_PROD),
				       ((const struct vio_header *)(const void *)mem)->epoch);
			break;
		}
		}
		FUZZ_ASSERT(atomic_load(&fake_kicks) == kicks);
		FUZZ_ASSERT(!stray_gic_write);
	}
	fake_gic_write_hook = NULL;
	return 0;
}
