/* SPDX-License-Identifier: MIT */
/*
 * Channel doorbell pages (core/channel.c): guest accesses through mmio_emulate from any vCPU
 * of the standard board's two partitions, which are both members of two channels: "msg" (trap
 * is member 0, direct member 1, both read-write) and "log" (direct member 0, trap member 1
 * read-only).  Offsets biased to the registers, any size, values biased to member indices.
 *
 * Oracle: the result the doorbell page's rules give; a write of k < members to RING raises
 * exactly member k's doorbell (one write to the GIC: its ISPENDR bit) and counts one ring on
 * the acting vCPU, any other value counts one refusal and raises nothing; SELF and MEMBERS
 * read the truth, everything else reads 0; nothing else changes: no other GIC write, no
 * kick, no other counter of any vCPU.
 */
#include <string.h>
#include <tern/channel.h>
#include <tern/config.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include "harness.h"

#define STARTED (BIT(0) | BIT(1) | BIT(2) | BIT(3) | BIT(4))

static void add_channels(struct tern_config *cfg)
{
	static const uint32_t msg[] = { STD_TRAP, STD_DIRECT }, log[] = { STD_DIRECT, STD_TRAP };

	(void)cfg;
	fake_config_add_channel("msg", 0x10000, msg, 2, 2);
	fake_config_add_channel("log", 0x4000, log, 2, 1);
}

ORACLE static int member_index(const struct tern_config_channel *ch, uint32_t partition)
{
	for (uint32_t k = 0; k < ch->num_members; k++) {
		if (ch->member[k].partition == partition)
			return (int)k;
	}
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };

	std_config_hook = add_channels;
	fake_gic_write_hook = NULL;
	std_boot(STARTED);
	const struct tern_config *cfg = (const struct tern_config *)(uintptr_t)platform.config_hpa;
	const struct tern_config_channel *channels = config_channels(cfg);
	FUZZ_ASSERT(cfg->num_channels == 2);
	fake_gic_write_hook = count_gic_write;
	while (input_left(&in)) {
		uint8_t how = (uint8_t)take(&in, 1);
		const struct tern_config_channel *ch = &channels[how & 1];
		uint32_t pi = (how >> 1) & 1;
		struct vcpu *v = std_vcpu(pi, (uint32_t)take(&in, 1) % partitions[pi].num_vcpus);
		unsigned sz = 1u << ((how >> 2) & 3);
		bool write = how & 0x10;
		uint64_t off = (how & 0x20) ? take(&in, 2) % 0x1400 : (take(&in, 1) % 4) * 4;
		uint64_t value = (how & 0x40) ? take(&in, 4) : take(&in, 1) % 4;
		uint64_t orig = value;
		uint32_t kicks = atomic_load(&fake_kicks);
		enum mmio_result r = MMIO_UNHANDLED;
		int self = member_index(ch, pi);

		FUZZ_ASSERT(self >= 0);
		stats_snapshot();
		gic_writes = 0;
		TRACE("%s vcpu %u: %s %u bytes at +0x%llx value 0x%llx\n", partitions[pi].name, v->index,
		      write ? "write" : "read", sz, (unsigned long long)off, (unsigned long long)value);
		FUZZ_ASSERT(FAKE_ON(v->pcpu, r = mmio_emulate(v, ch->doorbell_ipa + off, sz, write, &value)) ==
			    FAKE_RETURNED);
		FUZZ_ASSERT(atomic_load(&fake_kicks) == kicks);
		if (off >= CHANNEL_DOORBELL_SIZE) {
			FUZZ_ASSERT(r == MMIO_UNHANDLED && gic_writes == 0);
			stats_check(v, 0, 0);
			continue;
		}
		if (off & (sz - 1)) {
			FUZZ_ASSERT(r == MMIO_MISALIGNED && value == orig && gic_writes == 0);
			stats_check(v, 0, 0);
			continue;
		}
		if (sz != 4) {
			FUZZ_ASSERT(r == MMIO_ABORT && value == orig && gic_writes == 0);
			stats_check(v, 0, 0);
			continue;
		}
		FUZZ_ASSERT(r == MMIO_DONE);
		if (write && off == CHANNEL_RING && orig < ch->num_members) {
			uint32_t irq = ch->member[orig].irq;
			FUZZ_ASSERT(gic_writes == 1);
			FUZZ_ASSERT(last_gic_write == platform.arch.gicd_base + 0x200 + 4 * (irq / 32));
			FUZZ_ASSERT(last_gic_value == (1u << (irq % 32)));
			stats_check(v, STAT_DOORBELL_RING, 1);
		} else if (write && off == CHANNEL_RING) {
			FUZZ_ASSERT(gic_writes == 0);
			stats_check(v, STAT_DOORBELL_REFUSED, 1);
		} else {
			FUZZ_ASSERT(gic_writes == 0);
			stats_check(v, 0, 0);
			if (!write)
				FUZZ_ASSERT(value == (off == CHANNEL_SELF ? (uint64_t)self :
						      off == CHANNEL_MEMBERS ? ch->num_members : 0));
		}
	}
	fake_gic_write_hook = NULL;
	return 0;
}
