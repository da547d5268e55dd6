/* SPDX-License-Identifier: MIT */
/*
 * The virtual GIC: a sequence of guest GICD/GICR accesses through mmio_emulate (which vCPU,
 * offset, size, read or write, value), interleaved with interrupts arriving, the guest
 * acknowledging and completing them, maintenance interrupts and ICC_SGI1R_EL1 writes.
 *
 * Oracle, after every step:
 *  - no bit or byte of the physical GIC that belongs to an interrupt the acting partition
 *    does not own has changed (nor the group of anything, nor anything of another core's
 *    redistributor); a read, a misaligned or refused access changes nothing at all;
 *  - a direct guest's priorities stay at or below PRIO_GUEST_MIN, its SPIs route to its cores;
 *  - only the acting partition's cores are kicked or sent SGIs, never the kick SGI;
 *  - another vCPU's delivery state (list registers, lr_template, queue) is not touched by the
 *    acting core: changes are posted, and applied on its own core when the kick arrives;
 *  - the fast path's lr_template injects only owned interrupts, hardware-linked to themselves;
 *  - list registers and the queue hold an interrupt once, and nothing queued outranks a
 *    pending list register.
 */
#include <string.h>
#include <arch/gicv3.h>
#include <arch/vgicv3.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include "harness.h"

void arm64_guest_irq(uint32_t intid, struct guest_regs *r);

/* Started: vCPUs 0 and 1 of "trap", vCPU 0 of "direct"; trap's vCPU 2 and direct's 1 never run. */
#define STARTED (BIT(0) | BIT(1) | BIT(3))
static const struct { uint32_t p, index; } actors[] = { { 0, 0 }, { 0, 1 }, { 1, 0 } };

#define SGI_SPAN 0xd00u

/* What each partition may change in the physical GIC: a mask per register byte. */
static uint8_t allowed_gicd[2][0x10000];
static uint8_t allowed_sgi[2][FAKE_CPUS][SGI_SPAN];
static uint32_t acting;                   /* the partition whose step runs */
static bool writes_forbidden;             /* a read, or a refused access: no write at all */
static struct vgic_dist dist_before[2];
static struct vgic_redist redist_before[2][TERN_MAX_VCPUS];
static struct arm64_cpu cpu_before[FAKE_CPUS];
static uint64_t lrs_before[FAKE_CPUS][FAKE_MAX_LRS];

static void allow_bit(uint8_t *base, uint32_t reg, uint32_t intid)
{
	base[reg + intid / 8] |= (uint8_t)(1u << (intid % 8));
}

static const uint32_t pairs[] = { GICD_ISENABLER, GICD_ICENABLER, GICD_ISPENDR, GICD_ICPENDR,
				  GICD_ISACTIVER, GICD_ICACTIVER };

/* The state of what it owns, no more; never the group of anything, nor a redistributor's frame. */
ORACLE static void build_allowed(uint32_t pi)
{
	struct partition *p = &partitions[pi];
	bool direct = p->cfg->flags & TERN_PF_IRQ_DIRECT;
	uint8_t *gicd = allowed_gicd[pi];

	for (uint32_t intid = 32; intid < NR_INTIDS; intid++) {
		if (!(p->cfg->irqs[intid / 32] & BIT(intid % 32)))
			continue;
		for (unsigned i = 0; i < ARRAY_SIZE(pairs); i++)
			allow_bit(gicd, pairs[i], intid);
		gicd[GICD_IPRIORITYR + intid] = 0xff;
		gicd[GICD_ICFGR + intid / 4] |= (uint8_t)(3u << (2 * (intid % 4)));
		memset(gicd + GICD_IROUTER + 8 * intid, 0xff, 8);
	}
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		uint8_t *sgi = allowed_sgi[pi][p->vcpu[i].pcpu];
		uint32_t own = OWNED_PPIS | (direct ? GUEST_SGIS : 0);
		for (uint32_t intid = 0; intid < 32; intid++) {
			if (!(own & BIT(intid)))
				continue;
			for (unsigned r = 0; r < ARRAY_SIZE(pairs); r++) /* enable, pending, active */
				allow_bit(sgi, pairs[r], intid);
			if (direct)
				sgi[GICD_IPRIORITYR + intid] = 0xff;
		}
	}
}

static bool is_pair(uint32_t off, uint32_t words)
{
	return off >= GICD_ISENABLER && off < GICD_IPRIORITYR && (off - GICD_ISENABLER) % 0x80 < 4 * words;
}

/*
 * Every physical GIC write while a step runs: a set or clear register's bits, or the bytes
 * another write changes, must be the acting partition's.
 */
ORACLE static void on_gic_write(uintptr_t a, unsigned size, uint64_t value)
{
	uintptr_t d = (uintptr_t)fake_gicd, r = (uintptr_t)fake_gicr;
	static const uint8_t nothing[8];
	const uint8_t *mask = nothing, *old;
	bool pair;

	FUZZ_ASSERT(!writes_forbidden);
	if (a >= d && a < d + sizeof(fake_gicd)) {
		uint32_t off = (uint32_t)(a - d);
		mask = &allowed_gicd[acting][off];
		old = fake_gicd + off;
		pair = is_pair(off, 32);
	} else {
		unsigned core = (unsigned)((a - r) / sizeof(fake_gicr[0]));
		uint32_t off = (uint32_t)((a - r) % sizeof(fake_gicr[0]));
		old = fake_gicr[core] + off;
		pair = off >= GICR_SGI_BASE && is_pair(off - GICR_SGI_BASE, 1);
		if (off >= GICR_SGI_BASE && off - GICR_SGI_BASE < SGI_SPAN)
			mask = &allowed_sgi[acting][core][off - GICR_SGI_BASE];
	}
	for (unsigned i = 0; i < size; i++) {
		uint8_t byte = (uint8_t)(value >> (8 * i));
		uint8_t touched = pair && size == 4 ? byte : byte ^ old[i];
		if (touched & ~mask[i]) {
			fprintf(stderr, "GIC write 0x%lx size %u value 0x%llx: byte %u 0x%02x -> 0x%02x "
				"(partition %u may change 0x%02x)\n", (unsigned long)(a - (a >= r ? r : d)),
				size, (unsigned long long)value, i, old[i], byte, acting, mask[i]);
			FUZZ_ASSERT(!"a GIC write the partition may not make");
		}
	}
}

/* The vGIC state of both partitions, but for their locks (a refused access may take one). */
ORACLE static void check_dist_unchanged(void)
{
	for (uint32_t pi = 0; pi < 2; pi++) {
		const struct partition *p = &partitions[pi];
		const struct vgic_dist *d = &p->arch.dist;
		size_t skip = offsetof(struct vgic_dist, ctlr);
		FUZZ_ASSERT(same_bytes((const char *)d + skip, (const char *)&dist_before[pi] + skip,
				    sizeof(*d) - skip));
		for (uint32_t i = 0; i < TERN_MAX_VCPUS; i++)
			FUZZ_ASSERT(same_bytes(&p->vcpu[i].arch.redist, &redist_before[pi][i],
					    sizeof(redist_before[pi][i])));
	}
}

ORACLE static uint32_t cores_of(uint32_t pi)
{
	uint32_t mask = 0;

	for (uint32_t i = 0; i < partitions[pi].num_vcpus; i++)
		mask |= 1u << partitions[pi].vcpu[i].pcpu;
	return mask;
}

/* Other cores' delivery state is theirs: the acting core only posts changes to it. */
ORACLE static void check_not_applied_elsewhere(unsigned actor)
{
	for (unsigned c = 0; c < STD_CPUS; c++) {
		if (c == actor || !cpus[c].vcpu)
			continue;
		FUZZ_ASSERT(same_bytes(cpus[c].lr_template, cpu_before[c].lr_template,
				    sizeof(cpus[c].lr_template)));
		FUZZ_ASSERT(same_bytes(&cpus[c].vgic, &cpu_before[c].vgic, sizeof(cpus[c].vgic)));
		FUZZ_ASSERT(same_bytes(fake_lrs[c], lrs_before[c], sizeof(fake_lrs[c])));
	}
}

ORACLE static void check_delivery_state(void)
{
	for (uint32_t pi = 0; pi < 2; pi++) {
		struct partition *p = &partitions[pi];
		bool direct = p->cfg->flags & TERN_PF_IRQ_DIRECT;
		for (uint32_t w = 1; w < TERN_IRQ_WORDS; w++) {
		    for (uint32_t bits = p->cfg->irqs[w]; bits; bits &= bits - 1) {
			uint32_t intid = w * 32 + (uint32_t)__builtin_ctz(bits);
			uint64_t route;
			memcpy(&route, fake_gicd + GICD_IROUTER + 8 * intid, 8);
			FUZZ_ASSERT(route < FAKE_CPUS && (cores_of(pi) & (1u << route)));
			if (direct)
				FUZZ_ASSERT(fake_gicd[GICD_IPRIORITYR + intid] >= PRIO_GUEST_MIN);
		    }
		}
		for (uint32_t i = 0; i < p->num_vcpus && direct; i++) {
			const uint8_t *sgi = fake_gicr[p->vcpu[i].pcpu] + GICR_SGI_BASE;
			for (uint32_t intid = 0; intid < 32; intid++) {
				if (DIRECT_GROUP1 & BIT(intid))
					FUZZ_ASSERT(sgi[GICD_IPRIORITYR + intid] >= PRIO_GUEST_MIN);
			}
		}
	}
	for (unsigned c = 0; c < STD_CPUS; c++) {
		struct arm64_cpu *cpu = &cpus[c];
		if (!cpu->vcpu)
			continue;
		const struct vgic_dist *d = &cpu->vcpu->partition->arch.dist;
		for (uint32_t intid = 0; intid < NR_INTIDS; intid++) {
			uint64_t t = cpu->lr_template[intid];
			if (!t)
				continue;
			bool owned = intid < 32 ? (OWNED_PPIS & BIT(intid)) :
				     (d->owned[intid / 32] & BIT(intid % 32)) &&
				     d->target[intid] == cpu->vcpu->index;
			FUZZ_ASSERT(owned);
			FUZZ_ASSERT((t & ICH_LR_VINTID_MASK) == intid && (t & ICH_LR_HW) &&
				    ((t >> ICH_LR_PINTID_SHIFT) & 0x3ff) == intid);
		}
		/* Each interrupt once in the list registers or the queue; the queue behind them. */
		for (unsigned n = 0; n < gic_nr_lrs; n++) {
			uint64_t lr = fake_lrs[c][n];
			if (!(lr & (ICH_LR_PENDING | ICH_LR_ACTIVE)))
				continue;
			uint32_t intid = (uint32_t)(lr & ICH_LR_VINTID_MASK);
			FUZZ_ASSERT(!virq_queue_contains(&cpu->vgic.queue, intid));
			for (unsigned m = n + 1; m < gic_nr_lrs; m++) {
				uint64_t other = fake_lrs[c][m];
				FUZZ_ASSERT(!(other & (ICH_LR_PENDING | ICH_LR_ACTIVE)) ||
					    (uint32_t)(other & ICH_LR_VINTID_MASK) != intid);
			}
			uint32_t q;
			uint8_t qprio;
			if ((lr & ICH_LR_PENDING) && !(lr & ICH_LR_ACTIVE) &&
			    virq_queue_peek(&cpu->vgic.queue, &q, &qprio))
				FUZZ_ASSERT((uint8_t)(lr >> ICH_LR_PRIO_SHIFT) <= qprio);
		}
		/* Something waits for a list register: the fast path must not overtake it. */
		if (!virq_queue_empty(&cpu->vgic.queue))
			FUZZ_ASSERT(cpu->vgic.fast_path_off);
	}
}

static void reset(void)
{
	fake_gic_reset();
	for (uint32_t pi = 0; pi < num_partitions; pi++)
		arch_partition_irqs_reset(&partitions[pi]);
	for (unsigned a = 0; a < ARRAY_SIZE(actors); a++) {
		struct vcpu *v = std_vcpu(actors[a].p, actors[a].index);
		memset(cpus[v->pcpu].lr_template, 0, sizeof(cpus[v->pcpu].lr_template));
		FUZZ_ASSERT(FAKE_ON(v->pcpu, arch_vcpu_run(v, v->partition->cfg->entry_ipa, 0)) ==
			    FAKE_EXIT_RUN);
	}
	atomic_store(&fake_kicks, 0);
	memset(fake_phys_sgis, 0, sizeof(fake_phys_sgis));
}

/* The guest on core `c` takes list register `n` a step further: acknowledge, then complete. */
static void guest_lr_step(unsigned c, unsigned n)
{
	uint64_t lr = fake_lrs[c][n];

	if (lr & ICH_LR_PENDING)
		lr = (lr & ~ICH_LR_PENDING) | ICH_LR_ACTIVE;
	else if (lr & ICH_LR_ACTIVE)
		lr &= ~ICH_LR_ACTIVE;
	fake_lrs[c][n] = lr;
}

static const uint32_t intids[] = { 27, 30, 35, 36, 37, 38, 26, 15, 0, 1 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };

	std_boot(STARTED);
	reset();
	while (input_left(&in)) {
		unsigned kind = (unsigned)take(&in, 1) % 8;
		unsigned a = (unsigned)take(&in, 1) % ARRAY_SIZE(actors);
		struct vcpu *v = std_vcpu(actors[a].p, actors[a].index);
		unsigned core = v->pcpu;
		uint32_t pi = actors[a].p;
		bool trap = pi == STD_TRAP;

		acting = pi;
		for (uint32_t pi = 0; pi < 2; pi++) {
			memcpy(&dist_before[pi], &partitions[pi].arch.dist, sizeof(dist_before[pi]));
			for (uint32_t i = 0; i < TERN_MAX_VCPUS; i++)
				redist_before[pi][i] = partitions[pi].vcpu[i].arch.redist;
		}
		for (unsigned c = 0; c < STD_CPUS; c++) {
			if (c != core && cpus[c].vcpu) {
				memcpy(&cpu_before[c], &cpus[c], sizeof(cpus[c]));
				memcpy(lrs_before[c], fake_lrs[c], sizeof(lrs_before[c]));
			}
		}
		fake_gic_write_hook = on_gic_write;
		if (kind == 4 && trap) {
			uint8_t sel = (uint8_t)take(&in, 1);
			uint32_t intid = sel < 200 ? intids[sel % ARRAY_SIZE(intids)] : (uint32_t)take(&in, 2) % 1024;
			TRACE("core %u: interrupt %u\n", core, intid);
			FUZZ_ASSERT(FAKE_ON(core, arm64_guest_irq(intid, fake_guest_regs(core))) == FAKE_RETURNED);
		} else if (kind == 5 && trap) {
			unsigned n = (unsigned)take(&in, 1) % gic_nr_lrs;
			TRACE("core %u: guest steps LR%u\n", core, n);
			guest_lr_step(core, n);
		} else if (kind == 6 && trap) {
			TRACE("core %u: maintenance\n", core);
			FUZZ_ASSERT(FAKE_ON(core, arm64_guest_irq(PPI_MAINTENANCE, fake_guest_regs(core))) ==
				    FAKE_RETURNED);
		} else if (kind == 7) {
			fake_guest_regs(core)->x[1] = take(&in, 8);
			TRACE("core %u: ICC_SGI1R_EL1 = 0x%llx\n", core,
			      (unsigned long long)fake_guest_regs(core)->x[1]);
			FUZZ_ASSERT(fake_trap(core, ((uint64_t)EC_SYSREG << 26) | ESR_IL | ISS_ICC_SGI1R | (1u << 5),
					      0, 0) == FAKE_RETURNED);
		} else {
			uint8_t how = (uint8_t)take(&in, 1);
			unsigned sz = 1u << (how & 3);
			bool write = how & 4;
			uint64_t ipa, value = take(&in, 8), old = value;
			unsigned long writes = fake_mmio_writes;
			if (how & 8)
				ipa = platform.arch.gicr_base + (how >> 4) % 8 * platform.arch.gicr_stride +
				      take(&in, 3) % platform.arch.gicr_stride;
			else
				ipa = platform.arch.gicd_base + take(&in, 2);
			enum mmio_result r = MMIO_UNHANDLED;
			TRACE("core %u: %s %u bytes at %s+0x%llx value 0x%llx\n", core, write ? "write" : "read",
			      sz, ipa >= platform.arch.gicr_base ? "GICR" : "GICD",
			      (unsigned long long)(ipa - (ipa >= platform.arch.gicr_base ? platform.arch.gicr_base :
							   platform.arch.gicd_base)), (unsigned long long)value);
			/* A read, a misaligned or refused access: no write, nothing of the vGIC changes. */
			writes_forbidden = !write;
			FUZZ_ASSERT(FAKE_ON(core, r = mmio_emulate(v, ipa, sz, write, &value)) == FAKE_RETURNED);
			writes_forbidden = false;
			FUZZ_ASSERT((r == MMIO_MISALIGNED) == ((ipa & (sz - 1)) != 0));
			if (r != MMIO_DONE || !write) {
				check_dist_unchanged();
				FUZZ_ASSERT(!atomic_load(&fake_kicks));
			}
			if (r != MMIO_DONE) {
				FUZZ_ASSERT(value == old);
				FUZZ_ASSERT(fake_mmio_writes == writes);
			}
		}
		check_not_applied_elsewhere(core);
		FUZZ_ASSERT(!(atomic_load(&fake_kicks) & ~cores_of(pi)));
		fake_deliver_all_kicks(16);
		FUZZ_ASSERT(!atomic_load(&fake_kicks));
		fake_gic_write_hook = NULL;
		for (unsigned c = 0; c < FAKE_CPUS; c++) {
			FUZZ_ASSERT(!(fake_phys_sgis[c] & ~GUEST_SGIS));
			FUZZ_ASSERT(!fake_phys_sgis[c] || (cores_of(pi) & (1u << c)));
		}
		memset(fake_phys_sgis, 0, sizeof(fake_phys_sgis));
		check_delivery_state();
		if (fuzz_trace) {
			for (unsigned c = 0; c < STD_CPUS; c++) {
				if (!cpus[c].vcpu || cpus[c].direct)
					continue;
				TRACE("  core %u LRs", c);
				for (unsigned n = 0; n < gic_nr_lrs; n++)
					TRACE(" %016llx", (unsigned long long)fake_lrs[c][n]);
				TRACE(" queued %u\n", cpus[c].vgic.queue.count);
			}
		}
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	std_boot(STARTED);
	build_allowed(0);
	build_allowed(1);
	return 0;
}
