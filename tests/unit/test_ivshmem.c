/* SPDX-License-Identifier: MIT */
/*
 * core/ivshmem.c on the fake board: a channel member's emulated PCI host bridge (the ECAM's
 * bus 0, each function's configuration space, BAR sizing and fixed addresses, its BAR0
 * registers and BAR2 map), the gating of rings by Command, IntrMask and INTX_DISABLE, a restart,
 * a partition that owns the board's bridge, and the sizes refused.
 */
#include <string.h>
#include <tern/channel.h>
#include <tern/ivshmem.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include "check.h"
#include "system.h"
#include "tests.h"

#define MSG_SIZE 0x10000u   /* a power of two: its BAR2 is its size */
#define BIG_SIZE 0x30000u   /* its BAR2 is 256 KiB, of which 192 KiB are mapped */
#define WINDOW   FAKE_MEM_WINDOW
#define CMD_MEMORY       (1u << 1)
#define CMD_INTX_DISABLE (1u << 10)

static const struct tern_config_channel *msg, *big;

/* The fake board's ECAM (the range flagged PLATFORM_ECAM), where every bridge's bus 0 is. */
static uint64_t ecam_base(void)
{
	for (uint32_t d = 0; d < platform.num_devices; d++) {
		if (platform.devices[d].flags & PLATFORM_ECAM)
			return platform.devices[d].base;
	}
	return 0;
}

/*
 * "msg" between a, b (read-write) and ro (read-only), then "big" between b and other: b's
 * device 1 is msg (member 1), its device 2 big (member 0).
 */
static void boot_two_channels(void)
{
	static const uint32_t msg_members[] = { 0, 1, 2 };
	static const uint32_t big_members[] = { 1, 3 };

	fake_config_begin(4);
	add_partition("a", "0", 0);
	add_partition("b", "1", 0);
	add_partition("ro", "2", 0);
	add_partition("other", "3", 0);
	msg = fake_config_add_channel("msg", MSG_SIZE, msg_members, 3, 2);
	big = fake_config_add_channel("big", BIG_SIZE, big_members, 2, 2);
	enum fake_exit e = boot_board();
	if (e != FAKE_EXIT_RUN)
		fprintf(stderr, "%s\n", fake_uart_out);
	CHECK_EQ(e, FAKE_EXIT_RUN);
}

static enum mmio_result cfg_access(const char *name, uint32_t dev, uint32_t fn, uint32_t reg,
				   unsigned size, bool write, uint64_t *value)
{
	return mmio_emulate(&partition_named(name)->vcpu[0],
			    ecam_base() + ((uint64_t)dev << 15) + ((uint64_t)fn << 12) + reg, size, write, value);
}

static uint64_t cfg_read(const char *name, uint32_t dev, uint32_t reg, unsigned size)
{
	uint64_t value = 0xdeadbeefdeadbeefull;
	CHECK_EQ(cfg_access(name, dev, 0, reg, size, false, &value), MMIO_DONE);
	return value;
}

static void cfg_write(const char *name, uint32_t dev, uint32_t reg, unsigned size, uint64_t value)
{
	CHECK_EQ(cfg_access(name, dev, 0, reg, size, true, &value), MMIO_DONE);
}

/* An access to function `j`'s BAR0 (device 1 + j) of `name`. */
static enum mmio_result regs(const char *name, uint32_t j, uint32_t reg, unsigned size, bool write,
			     uint64_t *value)
{
	return mmio_emulate(&partition_named(name)->vcpu[0], WINDOW + j * IVSHMEM_REGS_SIZE + reg, size,
			    write, value);
}

static uint64_t reg_read(const char *name, uint32_t j, uint32_t reg)
{
	uint64_t value = 0xdeadbeefull;
	CHECK_EQ(regs(name, j, reg, 4, false, &value), MMIO_DONE);
	return value;
}

static void reg_write(const char *name, uint32_t j, uint32_t reg, uint64_t value)
{
	CHECK_EQ(regs(name, j, reg, 4, true, &value), MMIO_DONE);
}

/* `name` rings member k of `ch` through the channel's doorbell page. */
static void ring(const char *name, const struct tern_config_channel *ch, uint64_t k)
{
	CHECK_EQ(mmio_emulate(&partition_named(name)->vcpu[0], ch->doorbell_ipa + CHANNEL_RING, 4, true, &k),
		 MMIO_DONE);
}

void test_ivshmem_config_space(void)
{
	boot_two_channels();
	for (uint32_t dev = 1; dev <= 2; dev++) {
		CHECK_EQ(cfg_read("b", dev, 0x00, 4), 0x11101af4u);
		CHECK_EQ(cfg_read("b", dev, 0x02, 2), 0x1110u);
		CHECK_EQ(cfg_read("b", dev, 0x01, 1), 0x1au);
		CHECK_EQ(cfg_read("b", dev, 0x04, 4), 0u);              /* command and status */
		CHECK_EQ(cfg_read("b", dev, 0x08, 4), 0x05000001u);     /* RAM memory, revision 1 */
		CHECK_EQ(cfg_read("b", dev, 0x0b, 1), 0x05u);
		CHECK_EQ(cfg_read("b", dev, 0x0e, 1), 0u);              /* header type 0, one function */
		CHECK_EQ(cfg_read("b", dev, 0x2c, 4), 0x11001af4u);
		CHECK_EQ(cfg_read("b", dev, 0x2e, 2), 0x1100u);
		CHECK_EQ(cfg_read("b", dev, 0x34, 1), 0u);              /* no capabilities */
		CHECK_EQ(cfg_read("b", dev, 0x3c, 4), 0x100u);          /* INTA, line 0 */
		CHECK_EQ(cfg_read("b", dev, 0x3d, 1), 1u);
		static const uint32_t zero[] = { 0x14, 0x20, 0x24, 0x28, 0x30, 0x38, 0x40, 0x100, 0xffc };
		for (unsigned i = 0; i < ARRAY_SIZE(zero); i++)
			CHECK_EQ(cfg_read("b", dev, zero[i], 4), 0u);
	}
	/* BARs at fixed addresses: BAR0s from the window's base, BAR2s from 1 MiB, each aligned. */
	CHECK_EQ(cfg_read("b", 1, 0x10, 4), WINDOW);
	CHECK_EQ(cfg_read("b", 2, 0x10, 4), WINDOW + 0x1000);
	CHECK_EQ(cfg_read("b", 1, 0x18, 4), (WINDOW + 0x100000) | 0xc);
	CHECK_EQ(cfg_read("b", 1, 0x1c, 4), 0u);
	CHECK_EQ(cfg_read("b", 2, 0x18, 4), (WINDOW + 0x140000) | 0xc);
	CHECK_EQ(cfg_read("a", 1, 0x18, 4), (WINDOW + 0x100000) | 0xc);
	CHECK_EQ(cfg_read("other", 1, 0x18, 4), (WINDOW + 0x100000) | 0xc);
	/* Every other device and function is absent: all ones, writes ignored. */
	static const uint32_t absent[][2] = { { 0, 0 }, { 3, 0 }, { 31, 0 }, { 1, 1 }, { 2, 7 } };
	for (unsigned i = 0; i < ARRAY_SIZE(absent); i++) {
		uint64_t value = 0x2;
		CHECK_EQ(cfg_access("b", absent[i][0], absent[i][1], 0x04, 2, true, &value), MMIO_DONE);
		static const unsigned sizes[] = { 1, 2, 4 };
		for (unsigned s = 0; s < 3; s++) {
			value = 0;
			CHECK_EQ(cfg_access("b", absent[i][0], absent[i][1], 0x04, sizes[s], false, &value), MMIO_DONE);
			CHECK_EQ(value, sizes[s] == 4 ? 0xffffffffull : (1ull << (8 * sizes[s])) - 1);
		}
	}
	CHECK_EQ(cfg_read("a", 2, 0x00, 4), 0xffffffffu);
	CHECK_EQ(cfg_read("ro", 1, 0x08, 4), 0x05000001u);
}

/* The size probe reads the size mask with the type bits; any other write gives the address back. */
void test_ivshmem_bar_sizing(void)
{
	boot_two_channels();
	cfg_write("b", 1, 0x10, 4, 0xffffffffu);
	CHECK_EQ(cfg_read("b", 1, 0x10, 4), 0xfffff000u);
	CHECK_EQ(cfg_read("b", 2, 0x10, 4), WINDOW + 0x1000);   /* another function's is its own */
	cfg_write("b", 1, 0x10, 4, 0x12345000u);
	CHECK_EQ(cfg_read("b", 1, 0x10, 4), WINDOW);
	cfg_write("b", 1, 0x18, 4, 0xffffffffu);
	cfg_write("b", 1, 0x1c, 4, 0xffffffffu);
	CHECK_EQ(cfg_read("b", 1, 0x18, 4), 0xffff000cu);
	CHECK_EQ(cfg_read("b", 1, 0x1c, 4), 0xffffffffu);
	cfg_write("b", 1, 0x18, 4, WINDOW + 0x100000);
	CHECK_EQ(cfg_read("b", 1, 0x18, 4), (WINDOW + 0x100000) | 0xc);
	CHECK_EQ(cfg_read("b", 1, 0x1c, 4), 0xffffffffu);       /* BAR3 still probed */
	cfg_write("b", 1, 0x1c, 2, 0xffff);                      /* not a probe: restores it */
	CHECK_EQ(cfg_read("b", 1, 0x1c, 4), 0u);
	/* big: 0x30000 bytes, a 256 KiB BAR. */
	cfg_write("b", 2, 0x18, 4, 0xffffffffu);
	CHECK_EQ(cfg_read("b", 2, 0x18, 4), 0xfffc000cu);
	cfg_write("b", 2, 0x18, 4, 0);
	CHECK_EQ(cfg_read("b", 2, 0x18, 4), (WINDOW + 0x140000) | 0xc);
	/* BAR1, BAR4, BAR5, the ROM: all-ones probes read 0. */
	static const uint32_t none[] = { 0x14, 0x20, 0x24, 0x30 };
	for (unsigned i = 0; i < ARRAY_SIZE(none); i++) {
		cfg_write("b", 1, none[i], 4, 0xffffffffu);
		CHECK_EQ(cfg_read("b", 1, none[i], 4), 0u);
	}
}

/* BAR2 is the channel's memory again: its own size mapped, read-only for a read-only member. */
void test_ivshmem_bar2_map(void)
{
	uint64_t pa = 0;
	bool writable = false, executable = true;

	boot_two_channels();
	CHECK(shared_map_of(partition_named("b"), WINDOW + 0x100000 + 0x123, &pa, &writable, &executable));
	CHECK_EQ(pa, msg->hpa + 0x123);
	CHECK(writable && !executable);
	CHECK(shared_map_of(partition_named("b"), WINDOW + 0x140000 + BIG_SIZE - 1, &pa, &writable, &executable));
	CHECK_EQ(pa, big->hpa + BIG_SIZE - 1);
	CHECK(!shared_map_of(partition_named("b"), WINDOW + 0x140000 + BIG_SIZE, &pa, &writable, &executable));
	CHECK(shared_map_of(partition_named("ro"), WINDOW + 0x100000, &pa, &writable, &executable));
	CHECK_EQ(pa, msg->hpa);
	CHECK(!writable && !executable);
	CHECK(partition_maps(partition_named("b"), WINDOW + 0x140000));
	CHECK(!partition_maps(partition_named("b"), WINDOW + 0x140000 + BIG_SIZE));
	CHECK(!partition_maps(partition_named("b"), WINDOW));
	/* Past the last function's registers: nothing. */
	uint64_t value = 0;
	CHECK_EQ(regs("a", 1, 0, 4, false, &value), MMIO_UNHANDLED);
	CHECK(mmio_claimed(partition_named("b"), WINDOW + 0x1ffc));
	CHECK(!mmio_claimed(partition_named("b"), WINDOW + 0x2000));
	/* Bus 0 only. */
	CHECK(mmio_claimed(partition_named("a"), ecam_base() + 0xfffff));
	CHECK(!mmio_claimed(partition_named("a"), ecam_base() + 0x100000));
}

void test_ivshmem_command_status(void)
{
	boot_two_channels();
	cfg_write("b", 1, 0x04, 4, 0xffffffffu);
	CHECK_EQ(cfg_read("b", 1, 0x04, 4), 0x0406u);             /* MEMORY, BUS_MASTER, INTX_DISABLE */
	cfg_write("b", 1, 0x05, 1, 0);
	CHECK_EQ(cfg_read("b", 1, 0x04, 2), 0x0006u);
	cfg_write("b", 1, 0x06, 2, 0xffff);                        /* Status: nothing to clear */
	CHECK_EQ(cfg_read("b", 1, 0x04, 4), 0x0006u);
	cfg_write("b", 1, 0x04, 1, 0x01);                          /* I/O: not there */
	CHECK_EQ(cfg_read("b", 1, 0x04, 2), 0u);
	CHECK_EQ(cfg_read("b", 2, 0x04, 2), 0u);                   /* another function's own */
	/* Status.INTERRUPT is IntrStatus & IntrMask, whatever INTX_DISABLE says. */
	reg_write("b", 0, IVSHMEM_INTR_STATUS, 1);
	CHECK_EQ(cfg_read("b", 1, 0x06, 2), 0u);
	reg_write("b", 0, IVSHMEM_INTR_MASK, 1);
	CHECK_EQ(cfg_read("b", 1, 0x06, 2), 0x8u);
	cfg_write("b", 1, 0x04, 2, CMD_INTX_DISABLE);
	CHECK_EQ(cfg_read("b", 1, 0x04, 4), 0x00080400u);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_INTR_STATUS), 1u);
	CHECK_EQ(cfg_read("b", 1, 0x06, 2), 0u);
}

void test_ivshmem_registers(void)
{
	uint64_t value;

	boot_two_channels();
	CHECK_EQ(reg_read("a", 0, IVSHMEM_IV_POSITION), 0u);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_IV_POSITION), 1u);
	CHECK_EQ(reg_read("ro", 0, IVSHMEM_IV_POSITION), 2u);
	CHECK_EQ(reg_read("b", 1, IVSHMEM_IV_POSITION), 0u);
	CHECK_EQ(reg_read("other", 0, IVSHMEM_IV_POSITION), 1u);
	reg_write("b", 0, IVSHMEM_IV_POSITION, 5);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_IV_POSITION), 1u);
	reg_write("b", 0, IVSHMEM_INTR_MASK, 0xffffffffu);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_INTR_MASK), 0xffffffffu);
	CHECK_EQ(reg_read("b", 1, IVSHMEM_INTR_MASK), 0u);
	reg_write("b", 0, IVSHMEM_INTR_STATUS, 0x81);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_INTR_STATUS), 0x81u);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_INTR_STATUS), 0u);        /* a read clears it */
	CHECK_EQ(reg_read("b", 0, IVSHMEM_DOORBELL), 0u);
	CHECK_EQ(reg_read("b", 0, 0x10), 0u);
	CHECK_EQ(reg_read("b", 0, 0xffc), 0u);
	reg_write("b", 0, 0x10, 1);
	/* 32-bit accesses only; a misaligned one is the alignment fault. */
	static const unsigned sizes[] = { 1, 2, 8 };
	for (unsigned i = 0; i < 3; i++) {
		value = 1;
		CHECK_EQ(regs("b", 0, IVSHMEM_INTR_MASK, sizes[i], true, &value), MMIO_ABORT);
		CHECK_EQ(regs("b", 0, IVSHMEM_IV_POSITION, sizes[i], false, &value), MMIO_ABORT);
	}
	CHECK_EQ(regs("b", 0, 2, 4, false, &value), MMIO_MISALIGNED);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_INTR_MASK), 0xffffffffu);
	/* Configuration space: 1, 2 and 4 bytes only. */
	CHECK_EQ(cfg_access("b", 1, 0, 0x00, 8, false, &value), MMIO_ABORT);
	CHECK_EQ(cfg_access("b", 0, 0, 0x00, 8, false, &value), MMIO_ABORT);
	CHECK_EQ(cfg_access("b", 1, 0, 0x02, 4, false, &value), MMIO_MISALIGNED);
}

/* Doorbell rings member (value >> 16) of the function's channel, counted as the page's RING is. */
void test_ivshmem_doorbell(void)
{
	boot_two_channels();
	struct partition *b = partition_named("b");
	unsigned long before = fake_raises;
	reg_write("b", 0, IVSHMEM_DOORBELL, (2u << 16) | 7u);       /* msg's ro */
	CHECK_EQ(fake_raises, before + 1);
	CHECK_EQ(fake_raised[before % FAKE_RAISED_LOG], msg->member[2].irq);
	reg_write("b", 1, IVSHMEM_DOORBELL, 1u << 16);              /* big's other */
	CHECK_EQ(fake_raised[(before + 1) % FAKE_RAISED_LOG], big->member[1].irq);
	CHECK_EQ(b->vcpu[0].stats[STAT_DOORBELL_RING], 2u);
	reg_write("b", 1, IVSHMEM_DOORBELL, 2u << 16);              /* big has two members */
	reg_write("b", 0, IVSHMEM_DOORBELL, 0xffffu << 16);
	CHECK_EQ(fake_raises, before + 2);
	CHECK_EQ(b->vcpu[0].stats[STAT_DOORBELL_REFUSED], 2u);
	CHECK_EQ(b->vcpu[0].stats[STAT_DOORBELL_RING], 2u);
}

/* A ring of b (member 1 of msg) in each state of b's function. */
void test_ivshmem_ring_gating(void)
{
	boot_two_channels();
	uint32_t irq = msg->member[1].irq;
	unsigned long before = fake_raises;

	/* No driver: raised as a bare doorbell is, nothing latched. */
	ring("a", msg, 1);
	CHECK_EQ(fake_raises, before + 1);
	CHECK_EQ(fake_raised[before % FAKE_RAISED_LOG], irq);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_INTR_STATUS), 0u);
	/* Enabled but masked: the status only. */
	cfg_write("b", 1, 0x04, 2, CMD_MEMORY);
	ring("a", msg, 1);
	CHECK_EQ(fake_raises, before + 1);
	CHECK_EQ(cfg_read("b", 1, 0x06, 2), 0u);
	/* Unmasking with the status set raises it; so does a ring while unmasked. */
	reg_write("b", 0, IVSHMEM_INTR_MASK, 1);
	CHECK_EQ(fake_raises, before + 2);
	CHECK_EQ(fake_raised[(before + 1) % FAKE_RAISED_LOG], irq);
	CHECK_EQ(cfg_read("b", 1, 0x06, 2), 0x8u);
	reg_write("b", 0, IVSHMEM_INTR_MASK, 1);                    /* no new unmask: nothing */
	CHECK_EQ(fake_raises, before + 2);
	ring("b", msg, 1);                                          /* itself, through its page */
	CHECK_EQ(fake_raises, before + 3);
	/* The handler's INTX_DISABLE holds rings back; its clearing raises the level again. */
	cfg_write("b", 1, 0x04, 2, CMD_MEMORY | CMD_INTX_DISABLE);
	ring("a", msg, 1);
	reg_write("a", 0, IVSHMEM_DOORBELL, 1u << 16);
	CHECK_EQ(fake_raises, before + 3);
	cfg_write("b", 1, 0x04, 2, CMD_MEMORY);
	CHECK_EQ(fake_raises, before + 4);
	CHECK_EQ(fake_raised[(before + 3) % FAKE_RAISED_LOG], irq);
	/* Read and cleared, then unmasked (uio's write of 1): no level, no interrupt. */
	cfg_write("b", 1, 0x04, 2, CMD_MEMORY | CMD_INTX_DISABLE);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_INTR_STATUS), 1u);
	cfg_write("b", 1, 0x04, 2, CMD_MEMORY);
	CHECK_EQ(fake_raises, before + 4);
	/* A status written while unmasked asserts the level like a ring. */
	reg_write("b", 0, IVSHMEM_INTR_STATUS, 1);
	CHECK_EQ(fake_raises, before + 5);
	/* Masked by IntrMask again: the status only. */
	reg_write("b", 0, IVSHMEM_INTR_MASK, 0);
	ring("a", msg, 1);
	CHECK_EQ(fake_raises, before + 5);
	/* Other members' functions are their own: a's is not enabled. */
	ring("b", msg, 0);
	CHECK_EQ(fake_raises, before + 6);
	CHECK_EQ(fake_raised[(before + 5) % FAKE_RAISED_LOG], msg->member[0].irq);
}

/* A restart puts the partition's functions back as at reset: no driver, so bare rings. */
void test_ivshmem_restart(void)
{
	boot_two_channels();
	struct partition *b = partition_named("b");
	cfg_write("b", 1, 0x04, 2, CMD_MEMORY);
	cfg_write("b", 1, 0x10, 4, 0xffffffffu);
	reg_write("b", 0, IVSHMEM_INTR_STATUS, 1);
	partition_request(b, PARTITION_REQ_RESTART);
	fake_deliver_all_kicks(16);
	CHECK_EQ(atomic_load(&b->restarts), 1);
	CHECK_EQ(cfg_read("b", 1, 0x04, 4), 0u);
	CHECK_EQ(cfg_read("b", 1, 0x10, 4), WINDOW);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_INTR_STATUS), 0u);
	CHECK_EQ(reg_read("b", 0, IVSHMEM_INTR_MASK), 0u);
	unsigned long before = fake_raises;
	ring("a", msg, 1);
	CHECK_EQ(fake_raises, before + 1);
	uint64_t pa = 0;
	bool writable = false, executable = true;
	CHECK(shared_map_of(b, WINDOW + 0x100000, &pa, &writable, &executable) && pa == msg->hpa);
}

/* The partition that owns the board's bridge keeps it: no emulated bridge, bare rings. */
void test_ivshmem_pcie_owner(void)
{
	static const uint32_t members[] = { 0, 1 };
	uint64_t pa, value = 0;
	bool writable, executable;

	fake_config_begin(2);
	struct tern_config_partition *c = add_partition("rt", "0", msi_flags);
	add_partition("other", "1", 0);
	c->num_regions = 1;
	c->region[0] = (struct tern_config_region){ (uintptr_t)fake_ecam, (uintptr_t)fake_ecam,
						    FAKE_ECAM_SIZE, TERN_RF_DEVICE, 0 };
	const struct tern_config_channel *ch = fake_config_add_channel("msg", MSG_SIZE, members, 2, 2);
	CHECK_EQ(boot_board(), FAKE_EXIT_RUN);
	struct partition *rt = partition_named("rt");
	CHECK(!mmio_claimed(rt, WINDOW));
	CHECK(!shared_map_of(rt, WINDOW + 0x100000, &pa, &writable, &executable));
	CHECK(mmio_claimed(rt, ch->doorbell_ipa));
	CHECK(mmio_claimed(partition_named("other"), WINDOW));
	CHECK_EQ(reg_read("other", 0, IVSHMEM_IV_POSITION), 1u);
	CHECK_EQ(mmio_emulate(&rt->vcpu[0], WINDOW, 4, false, &value), MMIO_UNHANDLED);
	unsigned long before = fake_raises;
	ring("other", ch, 0);
	CHECK_EQ(fake_raises, before + 1);
	CHECK_EQ(fake_raised[before % FAKE_RAISED_LOG], ch->member[0].irq);
}

/* A partition in no channel has no bridge. */
void test_ivshmem_no_channel_no_bridge(void)
{
	boot_two_channels();
	CHECK(!mmio_claimed(partition_named("a"), WINDOW + 0x1000));
	fake_config_begin(2);
	add_partition("a", "0", 0);
	add_partition("b", "1", 0);
	CHECK_EQ(boot_board(), FAKE_EXIT_RUN);
	CHECK(!mmio_claimed(partition_named("a"), WINDOW));
	CHECK(!mmio_claimed(partition_named("a"), ecam_base()));
}

/* Eight channels between two partitions fit the emulated devices a partition may have. */
void test_ivshmem_eight_channels(void)
{
	static const uint32_t members[] = { 0, 1 };
	const struct tern_config_channel *ch[8];
	char name[8];

	fake_config_begin(2);
	add_partition("a", "0", 0);
	add_partition("b", "1", 0);
	for (unsigned c = 0; c < 8; c++) {
		snprintf(name, sizeof(name), "ch%u", c);
		ch[c] = fake_config_add_channel(name, 0x1000u << c, members, 2, 2);
	}
	enum fake_exit e = boot_board();
	if (e != FAKE_EXIT_RUN)
		fprintf(stderr, "%s\n", fake_uart_out);
	CHECK_EQ(e, FAKE_EXIT_RUN);
	uint64_t next = WINDOW + 0x100000;
	for (uint32_t j = 0; j < 8; j++) {
		uint64_t size = 0x1000u << j;
		uint64_t at = (next + size - 1) & ~(size - 1);
		CHECK_EQ(cfg_read("b", 1 + j, 0x18, 4), at | 0xc);
		CHECK_EQ(cfg_read("b", 1 + j, 0x10, 4), WINDOW + j * 0x1000u);
		CHECK_EQ(reg_read("b", j, IVSHMEM_IV_POSITION), 1u);
		next = at + size;
		uint64_t pa = 0;
		bool writable = false, executable = true;
		CHECK(shared_map_of(partition_named("a"), at, &pa, &writable, &executable) && pa == ch[j]->hpa);
	}
	CHECK_EQ(cfg_read("b", 9, 0x00, 4), 0xffffffffu);
}
