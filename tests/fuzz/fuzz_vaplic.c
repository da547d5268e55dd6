/* SPDX-License-Identifier: MIT */
/*
 * The riscv64 virtual APLIC (arch/riscv64/vaplic.c): sequences of guest accesses to its
 * registers, through the guest page fault path and the transformed instruction (which vCPU,
 * offset: mostly registers of sources 1, 34..38, 95, 96, 127 and of every IDC, any other one
 * too; width, read or write, value), interleaved with board interrupts of any source
 * arriving at a core (vaplic_host_interrupt) and the board's input lines changing.  Built
 * with the riscv64 headers and fake.
 *
 * Oracle, after every step:
 *  - every write to the board's APLIC names a source the acting partition owns (by number,
 *    or its sourcecfg and target registers), and a target only one of its cores, with its
 *    identity (trap-and-emulate: the hypervisor's file, EIID_WIRED_BASE + source; trap-less:
 *    the guest file VCPU_GUEST_FILE), or zero at its reset (identity 0 delivers nothing);
 *  - the other partition's virtual APLIC does not change, nor its cores' hvip, nor any IMSIC
 *    file but the acting partition's own cores' guest file; only its cores are kicked;
 *  - a partition's APLIC state exists only for its sources: no configuration, target,
 *    enable, level or pending bit of a source it does not own; a source that is enabled is
 *    active; a read of a register of a source it does not own gives zero;
 *  - a board interrupt of a source changes only its owner's APLIC.
 */
#include <string.h>
#include <arch/imsic.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include "fake_riscv64.h"
#include "harness.h"

#define STARTED (BIT(0) | BIT(1) | BIT(3) | BIT(4))

#define SOURCECFG(s) (0x0004u + 4u * ((s) - 1u))
#define TARGET(s)    (0x3004u + 4u * ((s) - 1u))
#define SETIPNUM     0x1cdcu
#define CLRIPNUM     0x1ddcu
#define SETIENUM     0x1edcu
#define CLRIENUM     0x1fdcu

static const uint32_t sources[] = { 1, 34, 35, 36, 37, 38, 95, 96, 127 };
static const uint32_t word_regs[] = { 0x1c00, 0x1d00, 0x1e00, 0x1f00 };
static const uint32_t num_regs[] = { SETIPNUM, CLRIPNUM, SETIENUM, CLRIENUM, 0x2000, 0x2004 };
static const uint32_t idc_regs[] = { 0x00, 0x04, 0x08, 0x18, 0x1c };

static struct partition *acting;

static bool owns(const struct partition *p, uint32_t s)
{
	return s < APLIC_MAX_SOURCES && (p->cfg->irqs[s / 32] >> (s % 32)) & 1u;
}

/* Every board APLIC write, before it takes effect. */
ORACLE static void board_write(uint32_t off, uint32_t value)
{
	FUZZ_ASSERT(acting);
	struct partition *p = acting;
	bool trapless = p->cfg->flags & TERN_PF_IRQ_DIRECT;

	if (off == SETIPNUM || off == CLRIPNUM || off == SETIENUM || off == CLRIENUM) {
		FUZZ_ASSERT(owns(p, value));
		return;
	}
	if (off >= SOURCECFG(1) && off < SOURCECFG(APLIC_MAX_SOURCES)) {
		FUZZ_ASSERT(owns(p, (off - SOURCECFG(1)) / 4 + 1));
		return;
	}
	FUZZ_ASSERT(off >= TARGET(1) && off < TARGET(APLIC_MAX_SOURCES));
	uint32_t s = (off - TARGET(1)) / 4 + 1;
	uint32_t core = value >> 18, file = (value >> 12) & 0x3f, eiid = value & 0x7ff;
	bool ours = false;
	FUZZ_ASSERT(owns(p, s));
	if (value == 0)
		return; /* reset: identity 0, which delivers nothing */
	for (uint32_t i = 0; i < p->num_vcpus; i++)
		ours |= core == p->vcpu[i].pcpu;
	FUZZ_ASSERT(ours);
	if (trapless)
		FUZZ_ASSERT(file == VCPU_GUEST_FILE);
	else
		FUZZ_ASSERT(file == 0 && eiid == EIID_WIRED_BASE + s);
}

ORACLE static uint32_t cores_of(const struct partition *p)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < p->num_vcpus; i++)
		m |= 1u << p->vcpu[i].pcpu;
	return m;
}

/* Its APLIC has state for its own sources only. */
ORACLE static void check_own_state(const struct partition *p)
{
	const struct vaplic *va = &p->arch.vaplic;

	for (uint32_t w = 0; w < APLIC_WORDS; w++) {
		uint32_t owned = p->cfg->irqs[w];
		FUZZ_ASSERT(va->owned[w] == owned);
		FUZZ_ASSERT(!(va->level[w] & ~owned) && !(va->enabled[w] & ~owned));
		FUZZ_ASSERT(!(atomic_load(&va->pending[w]) & ~owned));
	}
	for (uint32_t s = 0; s < APLIC_MAX_SOURCES; s++) {
		if (!owns(p, s)) {
			FUZZ_ASSERT(va->sourcecfg[s] == 0 && va->target[s] == 0);
		} else if ((va->enabled[s / 32] >> (s % 32)) & 1u) {
			FUZZ_ASSERT(va->sourcecfg[s] != 0);
		}
	}
}

struct others {
	struct vaplic vaplic;
	struct vaplic_idc idc[TERN_MAX_VCPUS];
	uint64_t hvip[TERN_MAX_VCPUS];
};

ORACLE static void snapshot(const struct partition *o, struct others *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(&s->vaplic, &o->arch.vaplic, sizeof(s->vaplic));
	for (uint32_t i = 0; i < o->num_vcpus; i++) {
		s->idc[i] = o->vcpu[i].arch.idc;
		s->hvip[i] = fake_csr(o->vcpu[i].pcpu, "hvip");
	}
}

/* The seteipnum words of every IMSIC file but those the acting partition may write. */
ORACLE static bool files_unchanged(const struct partition *p, const uint32_t before[FAKE_CPUS][8])
{
	for (unsigned c = 0; c < FAKE_CPUS; c++) {
		for (unsigned f = 0; f < 8; f++) {
			bool may = f == VCPU_GUEST_FILE && (cores_of(p) & (1u << c));
			if (!may && fake_imsic_seteipnum(c, f) != before[c][f])
				return false;
		}
	}
	return true;
}

static struct vcpu *running_vcpu(uint8_t sel)
{
	for (unsigned n = 0; n < 5; n++) {
		unsigned i = (sel + n) % 5;
		struct vcpu *v = i < 3 ? std_vcpu(STD_TRAP, i) : std_vcpu(STD_DIRECT, i - 3);
		if (atomic_load(&v->power) == VCPU_ON)
			return v;
	}
	return NULL;
}

static struct vcpu *on_vcpu_of(struct partition *p, uint8_t sel)
{
	for (uint32_t n = 0; n < p->num_vcpus; n++) {
		struct vcpu *v = &p->vcpu[(sel + n) % p->num_vcpus];
		if (atomic_load(&v->power) == VCPU_ON)
			return v;
	}
	return NULL;
}

static uint32_t pick_offset(struct input *in)
{
	uint8_t b = (uint8_t)take(in, 1);
	uint32_t s = sources[take(in, 1) % ARRAY_SIZE(sources)];

	switch (b % 8) {
	case 0:
		return 0; /* domaincfg */
	case 1:
		return SOURCECFG(s);
	case 2:
		return TARGET(s);
	case 3:
		return word_regs[b / 8 % 4] + 4 * (b / 32 % 4);
	case 4:
		return num_regs[b / 8 % ARRAY_SIZE(num_regs)];
	case 5:
		return 0x4000 + 32 * (b / 8 % 4) + idc_regs[b / 32 % ARRAY_SIZE(idc_regs)];
	case 6:
		return 0x3000; /* genmsi */
	default:
		return (uint32_t)take(in, 2) & 0x7fff;
	}
}

static uint32_t pick_value(struct input *in)
{
	uint8_t b = (uint8_t)take(in, 1);

	if (b < 0x40)
		return sources[b % ARRAY_SIZE(sources)];
	if (b < 0x80)
		return (uint32_t)(take(in, 1) % 4) << 18 | (uint32_t)take(in, 1); /* a target: hart, priority or identity */
	if (b < 0xa0)
		return b & 7; /* a source mode, a flag */
	return (uint32_t)take(in, 4);
}

/* The guest's lw/sw (or lb/lh/ld, sb/sh/sd) of a0 at gpa, as htinst gives it. */
static uint64_t access_insn(bool write, unsigned size_log2)
{
	return write ? (0x00a00023u | (size_log2 << 12)) : (0x00000503u | (size_log2 << 12));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };
	static bool hooked;

	std_boot(STARTED);
	if (!hooked) {
		fake_aplic_write_hook = board_write;
		hooked = true;
	}
	/* As every partition's (re)start leaves it: nothing configured. */
	for (uint32_t i = 0; i < num_partitions; i++) {
		acting = &partitions[i];
		FAKE_ON(partitions[i].vcpu[0].pcpu, arch_partition_irqs_reset(&partitions[i]));
	}
	memset(fake_aplic_input, 0, sizeof(fake_aplic_input));
	atomic_store(&fake_kicks, 0);
	while (input_left(&in)) {
		uint8_t op = (uint8_t)take(&in, 1);
		struct vcpu *v = running_vcpu(op);
		if (!v) {
			std_repair(STARTED);
			continue;
		}
		struct partition *p = v->partition, *o = &partitions[!p->index];
		struct others before;
		uint32_t files[FAKE_CPUS][8], kicks_before = atomic_load(&fake_kicks);

		snapshot(o, &before);
		for (unsigned c = 0; c < FAKE_CPUS; c++) {
			for (unsigned f = 0; f < 8; f++)
				files[c][f] = fake_imsic_seteipnum(c, f);
		}
		if (op >= 0xe0) {
			/* The board: a source's interrupt at a core, or its input line. */
			uint32_t s = sources[take(&in, 1) % ARRAY_SIZE(sources)];
			if (op & 1) {
				fake_aplic_input[s / 32] ^= 1u << (s % 32);
				TRACE("op 0x%02x: input %u now %u\n", op, s, (fake_aplic_input[s / 32] >> (s % 32)) & 1u);
			} else {
				/* It arrives at the core of the vCPU its owner aimed it at, or anywhere. */
				struct partition *owner = owns(&partitions[0], s) ? &partitions[0] :
							  owns(&partitions[1], s) ? &partitions[1] : p;
				v = on_vcpu_of(owner, (uint8_t)take(&in, 1));
				if (!v)
					continue;
				p = owner;
				o = &partitions[!p->index];
				snapshot(o, &before);
				struct others own, own_after;
				snapshot(p, &own);
				TRACE("op 0x%02x: source %u at core %u\n", op, s, v->pcpu);
				acting = p;
				fake_raise_eiid(v->pcpu, EIID_WIRED_BASE + s);
				FUZZ_ASSERT(fake_kick_running(v->pcpu) == FAKE_RETURNED);
				/* Nobody's source: nobody's APLIC changes. */
				snapshot(p, &own_after);
				if (!owns(p, s))
					FUZZ_ASSERT(same_bytes(&own.vaplic, &own_after.vaplic, sizeof(own.vaplic)) &&
						    same_bytes(own.idc, own_after.idc, sizeof(own.idc)));
			}
		} else {
			uint32_t off = pick_offset(&in);
			uint8_t how = (uint8_t)take(&in, 1);
			bool write = how & 1;
			unsigned size_log2 = (how >> 1) % 8 < 6 ? 2 : (how >> 1) % 4;
			uint32_t value = pick_value(&in);
			uint64_t gpa = platform.arch.aplic_s_base + off;
			struct guest_regs *r = fake_guest_regs(v->pcpu);

			r->x[10] = write ? value : 0x5a5a5a5a;
			acting = p;
			TRACE("op 0x%02x: %s vcpu %u %s%u 0x%x = 0x%x\n", op, p->name, v->index,
			      write ? "write" : "read", 1u << size_log2, off, value);
			enum fake_exit e = fake_rv_trap(v->pcpu, write ? EXC_STORE_GUEST_PAGE_FAULT :
							EXC_LOAD_GUEST_PAGE_FAULT, gpa, gpa >> 2,
							access_insn(write, size_log2));
			TRACE("  -> %s a0 0x%llx\n", fake_exit_name(e), (unsigned long long)r->x[10]);
			FUZZ_ASSERT(e == FAKE_RETURNED);
			/* A source's register it does not own reads zero. */
			if (!write && size_log2 == 2 && !(off & 3) && off >= SOURCECFG(1) && off < SOURCECFG(APLIC_MAX_SOURCES) &&
			    !owns(p, (off - SOURCECFG(1)) / 4 + 1))
				FUZZ_ASSERT(r->x[10] == 0);
			if (!write && size_log2 == 2 && !(off & 3) && off >= TARGET(1) && off < TARGET(APLIC_MAX_SOURCES) &&
			    !owns(p, (off - TARGET(1)) / 4 + 1))
				FUZZ_ASSERT(r->x[10] == 0);
		}
		struct others now;
		snapshot(o, &now);
		FUZZ_ASSERT(same_bytes(&now, &before, sizeof(now)));
		FUZZ_ASSERT(files_unchanged(p, files));
		FUZZ_ASSERT(((atomic_load(&fake_kicks) & ~kicks_before) & ~cores_of(p)) == 0);
		check_own_state(&partitions[0]);
		check_own_state(&partitions[1]);
		fake_deliver_all_kicks(64);
		acting = NULL;
	}
	return 0;
}
