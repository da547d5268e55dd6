/* SPDX-License-Identifier: MIT */
/*
 * core/channel.c on the fake board: each member's map of a channel's memory (read-write or
 * read-only, never executable), its doorbell page (ring, SELF, MEMBERS, refused values, access
 * sizes), a partition that is no member, a restart, and the boot refusing a channel over an
 * emulated device.
 */
#include <string.h>
#include <tern/arch.h>
#include <tern/channel.h>
#include <tern/console.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include "check.h"
#include "system.h"
#include "tests.h"

#define CH_SIZE 0x10000u

/* "a" and "b" map it read-write, "ro" read-only; "other" is no member. */
static const struct tern_config_channel *boot_with_channel(void)
{
	static const uint32_t members[] = { 0, 1, 2 };

	fake_config_begin(4);
	add_partition("a", "0", 0);
	add_partition("b", "1", TERN_PF_WFI_NATIVE | TERN_PF_IRQ_DIRECT);
	add_partition("ro", "2", 0);
	add_partition("other", "3", 0);
	const struct tern_config_channel *ch = fake_config_add_channel("msg", CH_SIZE, members, 3, 2);
	CHECK_EQ(boot_board(), FAKE_EXIT_RUN);
	return ch;
}

/* A 32-bit access by vCPU 0 of `name` at `offset` of the channel's doorbell page. */
static enum mmio_result doorbell(const char *name, const struct tern_config_channel *ch, uint64_t offset,
				 unsigned size, bool write, uint64_t *value)
{
	return mmio_emulate(&partition_named(name)->vcpu[0], ch->doorbell_ipa + offset, size, write, value);
}

static uint64_t rings(const char *name)
{
	return partition_named(name)->vcpu[0].stats[STAT_DOORBELL_RING];
}

static uint64_t refused(const char *name)
{
	return partition_named(name)->vcpu[0].stats[STAT_DOORBELL_REFUSED];
}

void test_channel_maps_members(void)
{
	const struct tern_config_channel *ch = boot_with_channel();
	uint64_t pa = 0;
	bool writable = false, executable = true;

	CHECK(shared_map_of(partition_named("a"), ch->ipa + 0x1234, &pa, &writable, &executable));
	CHECK_EQ(pa, ch->hpa + 0x1234);
	CHECK(writable && !executable);
	CHECK(shared_map_of(partition_named("b"), ch->ipa + CH_SIZE - 1, &pa, &writable, &executable));
	CHECK_EQ(pa, ch->hpa + CH_SIZE - 1);
	CHECK(writable && !executable);
	CHECK(shared_map_of(partition_named("ro"), ch->ipa, &pa, &writable, &executable));
	CHECK_EQ(pa, ch->hpa);
	CHECK(!writable && !executable);
	/* The doorbell page is never mapped: it traps. */
	CHECK(!shared_map_of(partition_named("a"), ch->doorbell_ipa, &pa, &writable, &executable));
	CHECK(!shared_map_of(partition_named("other"), ch->ipa, &pa, &writable, &executable));
	/* Its memory is the members' as their RAM is (a fault there is no access to nothing). */
	CHECK(partition_maps(partition_named("ro"), ch->ipa + 0x10));
	CHECK(!partition_maps(partition_named("ro"), ch->doorbell_ipa));
	CHECK(!partition_maps(partition_named("other"), ch->ipa + 0x10));
	/* Each member's doorbell is its interrupt, like a device's. */
	for (uint32_t k = 0; k < ch->num_members; k++) {
		uint32_t irq = ch->member[k].irq;
		CHECK(irq >= platform.doorbell_irq_base && irq - platform.doorbell_irq_base < platform.num_doorbell_irqs);
		CHECK(partitions[ch->member[k].partition].cfg->irqs[irq / 32] & (1u << (irq % 32)));
	}
}

void test_channel_doorbell_rings(void)
{
	const struct tern_config_channel *ch = boot_with_channel();
	uint64_t value;

	for (uint32_t k = 0; k < ch->num_members; k++) {
		unsigned long before = fake_raises;
		value = k;
		CHECK_EQ(doorbell("a", ch, CHANNEL_RING, 4, true, &value), MMIO_DONE);
		CHECK_EQ(fake_raises, before + 1);
		CHECK_EQ(fake_raised[before % FAKE_RAISED_LOG], ch->member[k].irq);
	}
	CHECK_EQ(rings("a"), 3);
	/* A read-only member rings too. */
	value = 0;
	CHECK_EQ(doorbell("ro", ch, CHANNEL_RING, 4, true, &value), MMIO_DONE);
	CHECK_EQ(fake_raised[(fake_raises - 1) % FAKE_RAISED_LOG], ch->member[0].irq);
	CHECK_EQ(rings("ro"), 1);
	CHECK_EQ(refused("a"), 0);
}

void test_channel_doorbell_refuses(void)
{
	const struct tern_config_channel *ch = boot_with_channel();
	static const uint64_t bad[] = { 3, 8, 0x80000000u, 0xffffffffu };
	unsigned long before = fake_raises;
	uint64_t value;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		value = bad[i];
		CHECK_EQ(doorbell("b", ch, CHANNEL_RING, 4, true, &value), MMIO_DONE);
	}
	CHECK_EQ(refused("b"), 4);
	CHECK_EQ(rings("b"), 0);
	/* Writes elsewhere on the page are ignored, not counted. */
	value = 1;
	CHECK_EQ(doorbell("b", ch, CHANNEL_SELF, 4, true, &value), MMIO_DONE);
	CHECK_EQ(doorbell("b", ch, 0xffc, 4, true, &value), MMIO_DONE);
	CHECK_EQ(fake_raises, before);
	CHECK_EQ(refused("b"), 4);
	/* Only 32-bit accesses: any other size is the bus's abort, and rings nothing. */
	static const unsigned sizes[] = { 1, 2, 8 };
	for (unsigned i = 0; i < 3; i++) {
		value = 1;
		CHECK_EQ(doorbell("b", ch, CHANNEL_RING, sizes[i], true, &value), MMIO_ABORT);
		CHECK_EQ(doorbell("b", ch, CHANNEL_MEMBERS, sizes[i], false, &value), MMIO_ABORT);
	}
	CHECK_EQ(doorbell("b", ch, CHANNEL_RING + 2, 4, true, &value), MMIO_MISALIGNED);
	CHECK_EQ(fake_raises, before);
	CHECK_EQ(rings("b") + refused("b"), 4);
}

void test_channel_doorbell_reads(void)
{
	const struct tern_config_channel *ch = boot_with_channel();
	static const char *const names[] = { "a", "b", "ro" };
	uint64_t value;

	for (uint32_t k = 0; k < 3; k++) {
		value = ~0ull;
		CHECK_EQ(doorbell(names[k], ch, CHANNEL_SELF, 4, false, &value), MMIO_DONE);
		CHECK_EQ(value, k);
		CHECK_EQ(doorbell(names[k], ch, CHANNEL_MEMBERS, 4, false, &value), MMIO_DONE);
		CHECK_EQ(value, 3);
		CHECK_EQ(doorbell(names[k], ch, CHANNEL_RING, 4, false, &value), MMIO_DONE);
		CHECK_EQ(value, 0);
		value = ~0ull;
		CHECK_EQ(doorbell(names[k], ch, 0x800, 4, false, &value), MMIO_DONE);
		CHECK_EQ(value, 0);
	}
}

/* A partition that is no member has no doorbell page: an access there is to nothing. */
void test_channel_non_member(void)
{
	const struct tern_config_channel *ch = boot_with_channel();
	unsigned long before = fake_raises;
	uint64_t value = 0;

	CHECK_EQ(doorbell("other", ch, CHANNEL_RING, 4, true, &value), MMIO_UNHANDLED);
	CHECK_EQ(doorbell("other", ch, CHANNEL_SELF, 4, false, &value), MMIO_UNHANDLED);
	CHECK(!mmio_claimed(partition_named("other"), ch->doorbell_ipa));
	CHECK(mmio_claimed(partition_named("a"), ch->doorbell_ipa));
	CHECK_EQ(fake_raises, before);
}

/* The counters are in the partition's stats; a restart keeps the maps and the doorbell page. */
void test_channel_stats_and_restart(void)
{
	const struct tern_config_channel *ch = boot_with_channel();
	struct partition *a = partition_named("a");
	uint32_t used_before, used_after, total;
	uint64_t value = 1, pa = 0;
	bool writable, executable;

	arch_table_pages(&used_before, &total);
	partition_request(a, PARTITION_REQ_RESTART);
	fake_deliver_all_kicks(16);
	CHECK_EQ(atomic_load(&a->restarts), 1);
	arch_table_pages(&used_after, &total);
	CHECK_EQ(used_after, used_before);
	CHECK(shared_map_of(a, ch->ipa, &pa, &writable, &executable) && pa == ch->hpa && writable);
	CHECK_EQ(doorbell("a", ch, CHANNEL_RING, 4, true, &value), MMIO_DONE);
	CHECK_EQ(fake_raised[(fake_raises - 1) % FAKE_RAISED_LOG], ch->member[1].irq);
	value = 7;
	CHECK_EQ(doorbell("a", ch, CHANNEL_RING, 4, true, &value), MMIO_DONE);
	fake_uart_clear();
	partition_print_stats(a);
	console_flush();
	CHECK(console_has("\"doorbell_ring\":1,\"doorbell_refused\":1"));
}

/* The blob cannot know where the arch emulates devices: the boot refuses a channel over one. */
void test_channel_over_an_emulated_device(void)
{
	static const uint32_t members[] = { 0, 1 };
	char line[160];

	fake_config_begin(2);
	add_partition("a", "0", 0);
	add_partition("b", "1", 0);
	struct tern_config_channel *ch = fake_config_add_channel("msg", CH_SIZE, members, 2, 2);
	ch->ipa = platform.uart_base - CH_SIZE; /* its doorbell page on the UART */
	ch->doorbell_ipa = platform.uart_base;
	fake_uart_clear();
	CHECK_EQ(fake_boot(0), FAKE_EXIT_BOARD_OFF);
	snprintf(line, sizeof(line), "tern: error: partition a: channel msg at 0x%llx overlaps the "
		 "emulated device at 0x%llx\r\n", (unsigned long long)ch->ipa,
		 (unsigned long long)platform.uart_base);
	CHECK(console_has(line));
}
