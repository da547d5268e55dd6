/* SPDX-License-Identifier: MIT */
/*
 * Channels as PCI functions (core/ivshmem.c): the standard board's two partitions own no part
 * of the board's PCIe bridge and are both members of two channels ("msg": trap member 0,
 * direct member 1, both read-write; "log": direct member 0, trap member 1 read-only), so each
 * has an emulated bridge with two functions.  Steps, from any vCPU of either: configuration
 * accesses to the bridge's ECAM (devices 0-3 and registers of the header mostly, anywhere in
 * and past bus 0 otherwise), BAR0 register accesses (and past them), and rings through the
 * doorbell pages; any size, values biased to Command's bits, IntrMask, all-ones and member
 * indices.
 *
 * Oracle: a model of every function (Command, IntrMask, IntrStatus, BAR probes).  The result
 * the rules give (past the regions: nothing there; misaligned; 8-byte configuration or
 * non-32-bit register accesses refused, changing nothing); every read is the model's value
 * (absent functions all-ones); the GIC is written exactly when the model raises an interrupt,
 * once, at the ringed or re-asserted member's ISPENDR bit; rings and refusals are counted on the
 * acting vCPU and no other counter of any vCPU moves; no kick.
 */
#include <string.h>
#include <tern/channel.h>
#include <tern/config.h>
#include <tern/ivshmem.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include "harness.h"

#define STARTED (BIT(0) | BIT(1) | BIT(2) | BIT(3) | BIT(4))
#define CMD_MEMORY       0x2u
#define CMD_INTX_DISABLE 0x400u
#define CMD_WRITABLE     0x406u

static void add_channels(struct tern_config *cfg)
{
	static const uint32_t msg[] = { STD_TRAP, STD_DIRECT }, log[] = { STD_DIRECT, STD_TRAP };

	(void)cfg;
	fake_config_add_channel("msg", 0x10000, msg, 2, 2);
	fake_config_add_channel("log", 0x3000, log, 2, 1);
}

/* The model: partition p's function j is its view of channel j. */
struct model_fn {
	uint32_t command, mask, status, sizing;
};
static struct model_fn model[2][2];
static uint64_t ecam, window;
static const struct tern_config_channel *channels;

ORACLE static uint32_t member_of(uint32_t c, uint32_t p)
{
	for (uint32_t k = 0; k < channels[c].num_members; k++) {
		if (channels[c].member[k].partition == p)
			return k;
	}
	FUZZ_ASSERT(0);
	return 0;
}

/* The interrupt the model raises: -1 none. */
ORACLE static int64_t model_reassert(uint32_t p, uint32_t j)
{
	const struct model_fn *f = &model[p][j];
	if ((f->status & f->mask & 1u) && !(f->command & CMD_INTX_DISABLE))
		return channels[j].member[member_of(j, p)].irq;
	return -1;
}

ORACLE static int64_t model_ring(uint32_t c, uint32_t k)
{
	uint32_t p = channels[c].member[k].partition;
	struct model_fn *f = &model[p][c];
	if (f->command & CMD_MEMORY) {
		f->status |= 1u;
		if (!(f->mask & 1u) || (f->command & CMD_INTX_DISABLE))
			return -1;
	}
	return channels[c].member[k].irq;
}

ORACLE static uint64_t size_mask(unsigned sz)
{
	return sz >= 8 ? ~0ull : (1ull << (8 * sz)) - 1;
}

ORACLE static uint32_t model_dword(uint32_t p, uint32_t j, uint32_t at)
{
	const struct model_fn *f = &model[p][j];
	uint64_t bar2 = window + 0x100000 + (j ? 0x10000 : 0);
	uint64_t bar2_size = j ? 0x4000 : 0x10000;
	switch (at) {
	case 0x00: return 0x11101af4u;
	case 0x04: return f->command | ((f->status & f->mask & 1u) ? 0x80000u : 0u);
	case 0x08: return 0x05000001u;
	case 0x10: return (f->sizing & 1u) ? 0xfffff000u : (uint32_t)(window + j * 0x1000u);
	case 0x18: return (uint32_t)((f->sizing & 4u) ? ~(bar2_size - 1) : bar2) | 0xcu;
	case 0x1c: return (uint32_t)(((f->sizing & 8u) ? ~(bar2_size - 1) : bar2) >> 32);
	case 0x2c: return 0x11001af4u;
	case 0x3c: return 0x100u;
	default: return 0;
	}
}

/* What a configuration access should do; the interrupt it raises (-1 none). */
ORACLE static int64_t model_config(uint32_t p, uint64_t off, unsigned sz, bool write, uint64_t value,
				   uint64_t *read)
{
	uint32_t dev = (uint32_t)(off >> 15), fn = (uint32_t)(off >> 12) & 7u, reg = (uint32_t)off & 0xfffu;
	if (fn != 0 || dev < 1 || dev > 2) {
		*read = size_mask(sz);
		return -1;
	}
	uint32_t j = dev - 1, at = reg & ~3u, shift = 8 * (reg & 3u);
	struct model_fn *f = &model[p][j];
	if (!write) {
		*read = (model_dword(p, j, at) >> shift) & size_mask(sz);
		return -1;
	}
	uint32_t mask = (uint32_t)(size_mask(sz) << shift);
	if (at == 0x04 && (mask & 0xffffu)) {
		uint32_t old = f->command;
		f->command = ((old & ~mask) | ((uint32_t)value << shift)) & CMD_WRITABLE;
		if ((old & CMD_INTX_DISABLE) && !(f->command & CMD_INTX_DISABLE))
			return model_reassert(p, j);
	} else if (at == 0x10 || at == 0x18 || at == 0x1c) {
		uint32_t bar = 1u << ((at - 0x10) / 4);
		if (sz == 4 && (uint32_t)value == 0xffffffffu)
			f->sizing |= bar;
		else
			f->sizing &= ~bar;
	}
	return -1;
}

static const uint64_t values[] = { 0, 1, CMD_MEMORY, CMD_MEMORY | CMD_INTX_DISABLE, 0xffffffffu,
				   1u << 16, 0x10005u, 0x406 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };

	std_config_hook = add_channels;
	fake_gic_write_hook = NULL;
	std_boot(STARTED);
	const struct tern_config *cfg = (const struct tern_config *)(uintptr_t)platform.config_hpa;
	channels = config_channels(cfg);
	FUZZ_ASSERT(cfg->num_channels == 2);
	for (uint32_t d = 0; d < platform.num_devices; d++) {
		if (platform.devices[d].flags & PLATFORM_ECAM)
			ecam = platform.devices[d].base;
		if (platform.devices[d].flags & PLATFORM_PCI_MEM32)
			window = platform.devices[d].base;
	}
	/* Every input starts from functions at reset, as a restart leaves them. */
	for (uint32_t p = 0; p < 2; p++) {
		ivshmem_reset(&partitions[p]);
		memset(model[p], 0, sizeof(model[p]));
	}
	fake_gic_write_hook = count_gic_write;
	while (input_left(&in)) {
		uint8_t how = (uint8_t)take(&in, 1);
		uint32_t op = (how & 3u) == 3u ? 0u : how & 3u; /* configuration accesses twice as often */
		uint32_t pi = (how >> 2) & 1u;
		struct vcpu *v = std_vcpu(pi, (uint32_t)take(&in, 1) % partitions[pi].num_vcpus);
		unsigned sz = 1u << ((how >> 3) & 3);
		bool write = how & 0x20;
		uint64_t value = (how & 0x80) ? take(&in, 4) : values[take(&in, 1) % 8];
		uint64_t orig = value, want_read = 0;
		uint64_t off, base;
		uint32_t kicks = atomic_load(&fake_kicks);
		enum mmio_result r = MMIO_UNHANDLED, want = MMIO_DONE;
		int64_t raise = -1;
		int stat = 0;

		if (op == 2) {
			/* A ring through the doorbell page of channel c: member k (2: none). */
			uint32_t b = (uint32_t)take(&in, 1);
			const struct tern_config_channel *ch = &channels[b & 1];
			base = ch->doorbell_ipa;
			off = CHANNEL_RING;
			value = (b >> 1) % 3;
			orig = value;
			sz = 4;
			write = true;
			if (value < 2) {
				raise = model_ring(b & 1, (uint32_t)value);
				stat = STAT_DOORBELL_RING;
			} else {
				stat = STAT_DOORBELL_REFUSED;
			}
		} else if (op == 1) {
			base = window;
			off = (how & 0x40) ? take(&in, 2) % 0x3000 : (take(&in, 1) % 2) * 0x1000 + (take(&in, 1) % 4) * 4;
		} else {
			base = ecam;
			off = (how & 0x40) ? take(&in, 3) % 0x110000 :
			      ((take(&in, 1) % 4) << 15) + take(&in, 1) % 0x40;
		}
		if (op != 2) {
			uint64_t limit = op == 1 ? 0x2000 : 0x100000;
			if (off >= limit)
				want = MMIO_UNHANDLED;
			else if (off & (sz - 1))
				want = MMIO_MISALIGNED;
			else if (op == 1 ? sz != 4 : sz > 4)
				want = MMIO_ABORT;
		}
		if (want == MMIO_DONE && op == 0) {
			raise = model_config(pi, off, sz, write, value, &want_read);
		} else if (want == MMIO_DONE && op == 1) {
			uint32_t j = (uint32_t)(off >> 12), reg = (uint32_t)off & 0xfffu;
			struct model_fn *f = &model[pi][j];
			uint32_t data32 = (uint32_t)value;
			if (!write) {
				want_read = reg == IVSHMEM_INTR_MASK ? f->mask : reg == IVSHMEM_INTR_STATUS ? f->status :
					    reg == IVSHMEM_IV_POSITION ? member_of(j, pi) : 0;
				if (reg == IVSHMEM_INTR_STATUS)
					f->status = 0;
			} else if (reg == IVSHMEM_INTR_MASK || reg == IVSHMEM_INTR_STATUS) {
				uint32_t *word = reg == IVSHMEM_INTR_MASK ? &f->mask : &f->status;
				bool rising = !(*word & 1u) && (data32 & 1u);
				*word = data32;
				if (rising)
					raise = model_reassert(pi, j);
			} else if (reg == IVSHMEM_DOORBELL) {
				uint32_t k = data32 >> 16;
				if (k < 2) {
					raise = model_ring(j, k);
					stat = STAT_DOORBELL_RING;
				} else {
					stat = STAT_DOORBELL_REFUSED;
				}
			}
		}

		stats_snapshot();
		gic_writes = 0;
		TRACE("%s vcpu %u: op %u %s %u bytes at 0x%llx+0x%llx value 0x%llx\n", partitions[pi].name,
		      v->index, op, write ? "write" : "read", sz, (unsigned long long)base,
		      (unsigned long long)off, (unsigned long long)value);
		FUZZ_ASSERT(FAKE_ON(v->pcpu, r = mmio_emulate(v, base + off, sz, write, &value)) == FAKE_RETURNED);
		FUZZ_ASSERT(atomic_load(&fake_kicks) == kicks);
		FUZZ_ASSERT(r == want);
		if (want != MMIO_DONE || write)
			FUZZ_ASSERT(value == orig);
		else
			FUZZ_ASSERT(value == want_read);
		if (raise >= 0) {
			FUZZ_ASSERT(gic_writes == 1);
			FUZZ_ASSERT(last_gic_write == platform.arch.gicd_base + 0x200 + 4 * ((uint64_t)raise / 32));
			FUZZ_ASSERT(last_gic_value == (1u << (raise % 32)));
		} else {
			FUZZ_ASSERT(gic_writes == 0);
		}
		stats_check(v, stat, stat ? 1 : 0);
	}
	fake_gic_write_hook = NULL;
	return 0;
}
