/* SPDX-License-Identifier: MIT */
/*
 * arch/arm64/vgicv3.c on the fake GIC: the distributor register decode, guest GICD/GICR accesses
 * through mmio_emulate (alignment, sizes, ownership, the physical state they change), changes
 * posted to the vCPU's own core, list registers and the queue, SGIs, leaving a core.
 */
#include <string.h>
#include <arch/gicv3.h>
#include <arch/vgicv3.h>
#include <arch/partition.h>
#include <tern/partition.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include "check.h"
#include "system.h"
#include "tests.h"

void arm64_guest_irq(uint32_t intid, struct guest_regs *r);
void arm64_guest_wfi(struct guest_regs *r);

#define GICD(off) (platform.arch.gicd_base + (off))
#define GICR(i, off) (platform.arch.gicr_base + (uint64_t)(i) * platform.arch.gicr_stride + (off))
#define SGI_FRAME GICR_SGI_BASE

static struct partition *trap, *direct;
static struct vcpu *t0, *t1, *t2, *d0, *d1;

/*
 * Six cores.  "trap" (trap-and-inject) on cores 0, 1, 2 owns SPIs 35 and 37; its vCPUs 0 and 1
 * run, vCPU 2 never started.  "direct" on cores 3, 4 owns SPI 36; its vCPU 0 runs.
 */
static void vgic_board(void)
{
	fake_config_begin(6);
	struct tern_config_partition *t = add_partition("trap", "0,1,2", 0);
	t->irqs[1] = BIT(35 - 32) | BIT(37 - 32);
	struct tern_config_partition *d = add_partition("direct", "3,4", TERN_PF_WFI_NATIVE | TERN_PF_IRQ_DIRECT);
	d->irqs[1] = BIT(36 - 32);
	boot_board();
	trap = partition_named("trap");
	direct = partition_named("direct");
	start_vcpu(trap, 1);
	t0 = &trap->vcpu[0];
	t1 = &trap->vcpu[1];
	t2 = &trap->vcpu[2];
	d0 = &direct->vcpu[0];
	d1 = &direct->vcpu[1];
	atomic_store(&fake_kicks, 0);
}

static enum mmio_result acc(struct vcpu *v, uint64_t ipa, unsigned size, bool write, uint64_t *value)
{
	enum mmio_result r = MMIO_UNHANDLED;

	CHECK_EQ(FAKE_ON(v->pcpu, r = mmio_emulate(v, ipa, size, write, value)), FAKE_RETURNED);
	return r;
}

static uint64_t rd(struct vcpu *v, uint64_t ipa, unsigned size)
{
	uint64_t value = 0xdeadbeef;

	CHECK_EQ(acc(v, ipa, size, false, &value), MMIO_DONE);
	return value;
}

static void wr(struct vcpu *v, uint64_t ipa, unsigned size, uint64_t value)
{
	CHECK_EQ(acc(v, ipa, size, true, &value), MMIO_DONE);
}

static uint32_t phys32(const uint8_t *base, uint32_t off)
{
	uint32_t v;

	memcpy(&v, base + off, 4);
	return v;
}

static uint64_t phys64(const uint8_t *base, uint32_t off)
{
	uint64_t v;

	memcpy(&v, base + off, 8);
	return v;
}

static void set_phys32(uint8_t *base, uint32_t off, uint32_t v)
{
	memcpy(base + off, &v, 4);
}

static uint64_t ignored(struct vcpu *v)
{
	return v->stats[STAT_GIC_IGNORED];
}

static struct vgic_dist *dist(struct partition *p)
{
	return &p->arch.dist;
}

/* ---- the distributor register decode ---- */

void test_vgic_gicd_decode(void)
{
	static const struct { uint32_t off, reg, intid, byte; } cases[] = {
		{ 0x080, GICD_IGROUPR, 0, 0 }, { 0x084, GICD_IGROUPR, 32, 0 }, { 0x087, GICD_IGROUPR, 56, 3 },
		{ 0x0fc, GICD_IGROUPR, 992, 0 }, { 0x100, GICD_ISENABLER, 0, 0 },
		{ 0x104, GICD_ISENABLER, 32, 0 }, { 0x105, GICD_ISENABLER, 40, 1 },
		{ 0x17c, GICD_ISENABLER, 992, 0 }, { 0x180, GICD_ICENABLER, 0, 0 },
		{ 0x204, GICD_ISPENDR, 32, 0 }, { 0x284, GICD_ICPENDR, 32, 0 },
		{ 0x304, GICD_ISACTIVER, 32, 0 }, { 0x3ff, GICD_ICACTIVER, 1016, 3 },
		{ 0x400, GICD_IPRIORITYR, 0, 0 }, { 0x423, GICD_IPRIORITYR, 35, 0 },
		{ 0x7ff, GICD_IPRIORITYR, 1023, 0 }, { 0x800, GICD_ITARGETSR, 0, 0 },
		{ 0xbff, GICD_ITARGETSR, 1023, 0 }, { 0xc00, GICD_ICFGR, 0, 0 }, { 0xc08, GICD_ICFGR, 32, 0 },
		{ 0xc09, GICD_ICFGR, 36, 1 }, { 0xcff, GICD_ICFGR, 1020, 3 }, { 0xd00, GICD_IGRPMODR, 0, 0 },
		{ 0xd7c, GICD_IGRPMODR, 992, 0 }, { 0xe00, GICD_NSACR, 0, 0 }, { 0xe04, GICD_NSACR, 16, 0 },
		{ 0xeff, GICD_NSACR, 1020, 3 }, { 0x6000, GICD_IROUTER, 0, 0 },
		{ 0x6118, GICD_IROUTER, 35, 0 }, { 0x611c, GICD_IROUTER, 35, 4 },
		{ 0x7ff8, GICD_IROUTER, 1023, 0 }, { 0x7fff, GICD_IROUTER, 1023, 7 },
	};
	static const uint32_t none[] = { 0x0, 0x4, 0x8, 0x7c, 0xd80, 0xf00, 0xf10, 0x5ffc, 0x8000,
					 0xffe8, 0xffff, 0xffffffffu };
	static const struct { uint32_t base, bits; } regs[] = {
		{ GICD_IGROUPR, 1 }, { GICD_ISENABLER, 1 }, { GICD_ICENABLER, 1 }, { GICD_ISPENDR, 1 },
		{ GICD_ICPENDR, 1 }, { GICD_ISACTIVER, 1 }, { GICD_ICACTIVER, 1 }, { GICD_IPRIORITYR, 8 },
		{ GICD_ITARGETSR, 8 }, { GICD_ICFGR, 2 }, { GICD_IGRPMODR, 1 }, { GICD_NSACR, 2 },
		{ GICD_IROUTER, 64 },
	};
	struct gicd_access a;

	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&a, 0xff, sizeof(a));
		CHECK(vgic_gicd_decode(cases[i].off, &a));
		CHECK_EQ(a.reg, cases[i].reg);
		CHECK_EQ(a.intid, cases[i].intid);
		CHECK_EQ(a.byte, cases[i].byte);
	}
	for (unsigned i = 0; i < ARRAY_SIZE(none); i++)
		CHECK(!vgic_gicd_decode(none[i], &a));
	/* Every INTID of every register: its field's first byte names it (or its byte's first). */
	unsigned bad = 0;
	for (unsigned r = 0; r < ARRAY_SIZE(regs); r++) {
		for (uint32_t intid = 0; intid < NR_INTIDS; intid++) {
			uint32_t off = regs[r].base + intid * regs[r].bits / 8;
			uint32_t first = (intid * regs[r].bits / 8) * 8 / regs[r].bits;
			if (!vgic_gicd_decode(off, &a) || a.reg != regs[r].base || a.intid != first)
				bad++;
		}
	}
	CHECK_EQ(bad, 0);
}

/* ---- accesses: alignment and sizes ---- */

/* A misaligned access is refused before anything is looked at: nothing changes. */
void test_vgic_misaligned(void)
{
	static const struct { uint64_t off; unsigned size; } cases[] = {
		{ 0x105, 4 }, { 0x102, 4 }, { 0x6004, 8 }, { 0x401, 2 }, { 0x1, 4 }, { 0x107, 2 },
	};
	struct vgic_dist before;

	vgic_board();
	set_phys32(fake_gicd, GICD_ISENABLER + 4, 0);
	memcpy(&before, dist(trap), sizeof(before));
	unsigned long writes = fake_mmio_writes;
	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		for (int w = 0; w < 2; w++) {
			uint64_t value = 0xffffffffffffffffull;
			CHECK_EQ(acc(t0, GICD(cases[i].off), cases[i].size, w, &value), MMIO_MISALIGNED);
			CHECK_EQ(value, ~0ull);
		}
	}
	uint64_t value = ~0ull;
	CHECK_EQ(acc(t0, GICR(1, SGI_FRAME + GICD_ISENABLER + 2), 4, true, &value), MMIO_MISALIGNED);
	CHECK_EQ(acc(t0, GICR(1, GICR_TYPER + 4), 8, false, &value), MMIO_MISALIGNED);
	CHECK_EQ(fake_mmio_writes, writes);
	CHECK_EQ(phys32(fake_gicd, GICD_ISENABLER + 4), 0); /* 4 bytes at +0x105 would have hit SPIs 40-71 */
	CHECK(!memcmp(&before.ctlr, &dist(trap)->ctlr, sizeof(before) - offsetof(struct vgic_dist, ctlr)));
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	CHECK_EQ(ignored(t0), 0);
}

/* A register accessed with a size the architecture does not give it: an external abort. */
void test_vgic_wrong_sizes(void)
{
	static const struct { uint64_t off; unsigned size; bool gicr; } aborts[] = {
		{ GICD_CTLR, 1, false }, { GICD_CTLR, 2, false }, { GICD_CTLR, 8, false },
		{ GICD_TYPER + 4, 1, false }, { 0x104, 1, false }, { 0x104, 2, false }, { 0x108, 8, false },
		{ 0x420, 2, false }, { 0x420, 8, false }, { 0xc08, 1, false }, { 0xc08, 2, false },
		{ 0x6118, 1, false }, { 0x6118, 2, false },
		{ SGI_FRAME + GICD_IPRIORITYR, 2, true }, { SGI_FRAME + GICD_IPRIORITYR, 8, true },
		{ SGI_FRAME + GICD_ISENABLER, 1, true }, { SGI_FRAME + GICD_ISENABLER, 8, true },
		{ GICR_WAKER, 1, true }, { GICR_TYPER, 2, true }, { GICR_CTLR, 8, true },
	};
	static const struct { uint64_t off; unsigned size; bool gicr; } fine[] = {
		{ 0x423, 1, false }, { 0x420, 4, false }, { 0x823, 1, false }, { 0x820, 4, false },
		{ 0x6118, 4, false }, { 0x611c, 4, false }, { 0x6118, 8, false },
		{ GICR_TYPER, 8, true }, { GICR_TYPER, 4, true }, { GICR_TYPER + 4, 4, true },
		{ SGI_FRAME + GICD_IPRIORITYR + 27, 1, true }, { SGI_FRAME + GICD_IPRIORITYR + 24, 4, true },
	};

	vgic_board();
	unsigned long writes = fake_mmio_writes;
	for (unsigned i = 0; i < ARRAY_SIZE(aborts); i++) {
		for (int w = 0; w < 2; w++) {
			uint64_t value = 0x12, ipa = aborts[i].gicr ? GICR(0, aborts[i].off) : GICD(aborts[i].off);
			CHECK_EQ(acc(t0, ipa, aborts[i].size, w, &value), MMIO_ABORT);
			CHECK_EQ(value, 0x12);
		}
	}
	CHECK_EQ(fake_mmio_writes, writes);
	for (unsigned i = 0; i < ARRAY_SIZE(fine); i++) {
		uint64_t value = 0, ipa = fine[i].gicr ? GICR(0, fine[i].off) : GICD(fine[i].off);
		CHECK_EQ(acc(t0, ipa, fine[i].size, false, &value), MMIO_DONE);
	}
}

/* ---- the distributor ---- */

/*
 * A set or clear register: only the partition's own SPIs' bits reach the physical
 * distributor, at the offset of the word that holds them; others are ignored and counted.
 */
void test_vgic_set_clear_only_owned(void)
{
	static const uint32_t pairs[][2] = { { GICD_ISENABLER, GICD_ICENABLER }, { GICD_ISPENDR, GICD_ICPENDR },
					     { GICD_ISACTIVER, GICD_ICACTIVER } };

	vgic_board();
	for (unsigned i = 0; i < ARRAY_SIZE(pairs); i++) {
		uint32_t set = pairs[i][0] + 4, clear = pairs[i][1] + 4; /* word 1: SPIs 32-63 */
		wr(d0, GICD(set), 4, 1u << 4);                            /* direct enables 36 */
		CHECK_EQ(phys32(fake_gicd, set), 1u << 4);
		uint64_t before = ignored(t0);
		wr(t0, GICD(set), 4, 0xffffffff);
		CHECK_EQ(phys32(fake_gicd, set), (1u << 3) | (1u << 4) | (1u << 5));
		CHECK_EQ(ignored(t0), before + 1);
		CHECK_EQ(rd(t0, GICD(set), 4), (1u << 3) | (1u << 5));
		CHECK_EQ(rd(t0, GICD(clear), 4), (1u << 3) | (1u << 5));
		CHECK_EQ(rd(d0, GICD(set), 4), 1u << 4);
		wr(t0, GICD(clear), 4, 0xffffffff);
		CHECK_EQ(phys32(fake_gicd, set), 1u << 4);
		/* Only foreign bits: no physical write at all. */
		unsigned long writes = fake_mmio_writes;
		wr(t0, GICD(clear), 4, 1u << 4);
		CHECK_EQ(fake_mmio_writes, writes);
		CHECK_EQ(phys32(fake_gicd, set), 1u << 4);
		/* Another word of the register: nothing of the partition's. */
		wr(t0, GICD(set + 4), 4, 0xffffffff);
		CHECK_EQ(phys32(fake_gicd, set + 4), 0);
		CHECK_EQ(rd(t0, GICD(set + 4), 4), 0);
		wr(d0, GICD(clear), 4, 1u << 4);
	}
}

/* ICFGR: two bits per SPI, read-modify-write of the word partitions share. */
void test_vgic_config_fields(void)
{
	vgic_board();
	wr(d0, GICD(GICD_ICFGR + 8), 4, 3u << 8);          /* 36 */
	CHECK_EQ(phys32(fake_gicd, GICD_ICFGR + 8), 3u << 8);
	wr(t0, GICD(GICD_ICFGR + 8), 4, 0xffffffff);
	CHECK_EQ(phys32(fake_gicd, GICD_ICFGR + 8), (3u << 6) | (3u << 8) | (3u << 10));
	CHECK_EQ(rd(t0, GICD(GICD_ICFGR + 8), 4), (3u << 6) | (3u << 10));
	CHECK_EQ(ignored(t0), 1);
	wr(d0, GICD(GICD_ICFGR + 8), 4, 0);
	CHECK_EQ(phys32(fake_gicd, GICD_ICFGR + 8), (3u << 6) | (3u << 10));
	unsigned long writes = fake_mmio_writes;
	wr(t0, GICD(GICD_ICFGR + 12), 4, 0xffffffff);      /* SPIs 48-63: none of its own */
	CHECK_EQ(fake_mmio_writes, writes);
	CHECK_EQ(ignored(t0), 2);
}

/* Priorities: virtual for a trapping guest; a direct guest's go to the GIC, clamped. */
void test_vgic_priorities(void)
{
	vgic_board();
	wr(t0, GICD(GICD_IPRIORITYR + 35), 1, 0x20);
	CHECK_EQ(fake_gicd[GICD_IPRIORITYR + 35], PRIO_GUEST);
	CHECK_EQ(rd(t0, GICD(GICD_IPRIORITYR + 35), 1), 0x20);
	CHECK_EQ(dist(trap)->prio[35], 0x20);
	wr(t0, GICD(GICD_IPRIORITYR + 32), 4, 0x11223344);  /* 32, 33, 34 foreign; 35 owned */
	CHECK_EQ(rd(t0, GICD(GICD_IPRIORITYR + 32), 4), 0x11000000);
	CHECK_EQ(ignored(t0), 3);
	wr(t0, GICD(GICD_IPRIORITYR + 36), 4, 0x00000000);  /* rewriting zeros is no attempt */
	CHECK_EQ(ignored(t0), 3);
	CHECK_EQ(dist(trap)->prio[37], 0);

	wr(d0, GICD(GICD_IPRIORITYR + 36), 1, 0x05);
	CHECK_EQ(fake_gicd[GICD_IPRIORITYR + 36], PRIO_GUEST_MIN);
	CHECK_EQ(rd(d0, GICD(GICD_IPRIORITYR + 36), 1), 0x05);
	CHECK_EQ(d0->stats[STAT_GIC_CLAMPED], 1);
	wr(d0, GICD(GICD_IPRIORITYR + 36), 1, 0x05);
	CHECK_EQ(d0->stats[STAT_GIC_CLAMPED], 1);
	wr(d0, GICD(GICD_IPRIORITYR + 36), 1, 0x80);
	CHECK_EQ(fake_gicd[GICD_IPRIORITYR + 36], 0x80);
	CHECK_EQ(fake_gicd[GICD_IPRIORITYR + 35], PRIO_GUEST);
}

/* IROUTER: one of the partition's vCPUs, routed to that vCPU's core; anything else ignored. */
void test_vgic_routing(void)
{
	vgic_board();
	CHECK(cpus[0].lr_template[35] != 0);       /* routed to vCPU 0 at reset */
	CHECK_EQ(cpus[1].lr_template[35], 0);
	wr(t0, GICD(GICD_IROUTER + 8 * 35), 8, 1);
	CHECK_EQ(phys64(fake_gicd, GICD_IROUTER + 8 * 35), t1->pcpu);
	CHECK_EQ(dist(trap)->target[35], 1);
	CHECK_EQ(rd(t0, GICD(GICD_IROUTER + 8 * 35), 8), 1);
	CHECK_EQ(rd(t0, GICD(GICD_IROUTER + 8 * 35 + 4), 4), 0);
	/* Posted: core 0 applied its own change, core 1's waits for its kick. */
	CHECK_EQ(cpus[0].lr_template[35], 0);
	CHECK_EQ(cpus[1].lr_template[35], 0);
	CHECK(atomic_load(&t1->arch.redist.sync) & VGIC_SYNC_TEMPLATES);
	CHECK(atomic_load(&fake_kicks) & (1u << 1));
	fake_deliver_all_kicks(8);
	uint64_t lr = cpus[1].lr_template[35];
	CHECK_EQ(lr & ICH_LR_VINTID_MASK, 35);
	CHECK_EQ((lr >> ICH_LR_PINTID_SHIFT) & 0x3ff, 35);
	CHECK(lr & ICH_LR_HW);
	CHECK(lr & ICH_LR_PENDING);
	/* Not one of its vCPUs, another cluster, 1-of-N, Aff3: ignored. */
	static const uint64_t bad[] = { 3, 0x100, 1ull << 31, 0x100000000ull };
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t before = ignored(t0);
		wr(t0, GICD(GICD_IROUTER + 8 * 35), 8, bad[i]);
		CHECK_EQ(ignored(t0), before + 1);
		CHECK_EQ(phys64(fake_gicd, GICD_IROUTER + 8 * 35), t1->pcpu);
	}
	wr(t0, GICD(GICD_IROUTER + 8 * 35 + 4), 4, 1);
	CHECK_EQ(dist(trap)->target[35], 1);
	wr(t0, GICD(GICD_IROUTER + 8 * 35), 4, 2);   /* the low half alone */
	CHECK_EQ(dist(trap)->target[35], 2);
	CHECK_EQ(phys64(fake_gicd, GICD_IROUTER + 8 * 35), t2->pcpu);
	/* Another partition's SPI reads as 0 and does not move. */
	uint64_t before = phys64(fake_gicd, GICD_IROUTER + 8 * 36);
	CHECK_EQ(rd(t0, GICD(GICD_IROUTER + 8 * 36), 8), 0);
	wr(t0, GICD(GICD_IROUTER + 8 * 36), 8, 0);
	wr(t0, GICD(GICD_IROUTER + 8 * 36), 8, 1);
	CHECK_EQ(phys64(fake_gicd, GICD_IROUTER + 8 * 36), before);
	wr(d0, GICD(GICD_IROUTER + 8 * 36), 8, 1);
	CHECK_EQ(phys64(fake_gicd, GICD_IROUTER + 8 * 36), d1->pcpu);
}

/* Groups are virtual; a direct guest's SPIs stay Group 1. */
void test_vgic_groups(void)
{
	vgic_board();
	wr(t0, GICD(GICD_IGROUPR + 4), 4, 0xffffffff);
	CHECK_EQ(rd(t0, GICD(GICD_IGROUPR + 4), 4), (1u << 3) | (1u << 5));
	CHECK_EQ(ignored(t0), 1);
	CHECK(cpus[0].lr_template[35] & ICH_LR_GROUP1);
	CHECK_EQ(rd(d0, GICD(GICD_IGROUPR + 4), 4), 1u << 4);
	wr(d0, GICD(GICD_IGROUPR + 4), 4, 0);
	CHECK_EQ(rd(d0, GICD(GICD_IGROUPR + 4), 4), 1u << 4);
	CHECK_EQ(ignored(d0), 1);
	CHECK_EQ(phys32(fake_gicd, GICD_IGROUPR + 4), 0xffffffff);
	wr(t0, GICD(GICD_IGROUPR + 4), 4, 0);
	CHECK_EQ(rd(t0, GICD(GICD_IGROUPR + 4), 4), 0);
	CHECK(!(cpus[0].lr_template[35] & ICH_LR_GROUP1));
}

/* Registers of one word; the SGI/PPI banks and legacy registers read as zero, ignore writes. */
void test_vgic_distributor_control(void)
{
	vgic_board();
	wr(t0, GICD(GICD_CTLR), 4, 0xffffffff);
	CHECK_EQ(rd(t0, GICD(GICD_CTLR), 4), GICD_CTLR_ENGRP0 | GICD_CTLR_ENGRP1 | GICD_CTLR_ARE | GICD_CTLR_DS);
	CHECK_EQ(rd(d0, GICD(GICD_CTLR), 4), GICD_CTLR_ARE | GICD_CTLR_DS); /* its own distributor */
	CHECK_EQ(rd(t0, GICD(GICD_TYPER), 4), 8u | (9u << 19) | BIT(25));
	CHECK_EQ(rd(t0, GICD(GICD_IIDR), 4), 0x0100143b);
	CHECK_EQ(rd(t0, GICD(GICD_PIDR2), 4), 0x3b);
	CHECK_EQ(rd(t0, GICD(0x5000), 4), 0);
	unsigned long writes = fake_mmio_writes;
	wr(t0, GICD(GICD_TYPER), 4, 0);
	wr(t0, GICD(GICD_ISENABLER), 4, 0xffffffff);
	wr(t0, GICD(GICD_IPRIORITYR + 28), 4, 0xffffffff);
	wr(t0, GICD(GICD_ITARGETSR + 35), 1, 0xff);
	wr(t0, GICD(GICD_IGRPMODR + 4), 4, 0xffffffff);
	wr(t0, GICD(GICD_NSACR + 8), 4, 0xffffffff);
	CHECK_EQ(fake_mmio_writes, writes);
	CHECK_EQ(rd(t0, GICD(GICD_ISENABLER), 4), 0);
	CHECK_EQ(rd(t0, GICD(GICD_ITARGETSR + 35), 1), 0);
	CHECK_EQ(rd(t0, GICD(GICD_IGRPMODR + 4), 4), 0);
	CHECK_EQ(ignored(t0), 0);
	CHECK_EQ(gic_nr_irqs - 1, 287); /* the highest INTID the GIC implements */
}

/* ---- redistributors ---- */

/*
 * A vCPU that never started: its redistributor frame can still be written, by a sibling.  The
 * state persists, and its core applies it when the vCPU enters.
 */
void test_vgic_sibling_never_started(void)
{
	vgic_board();
	uint8_t *sgi2 = fake_gicr[t2->pcpu] + GICR_SGI_BASE;
	uint32_t enabled_before = phys32(sgi2, GICD_ISENABLER);

	wr(t0, GICR(2, SGI_FRAME + GICD_IPRIORITYR + 27), 1, 0x40);
	wr(t0, GICR(2, SGI_FRAME + GICD_IGROUPR), 4, 0xffffffff);
	wr(t0, GICR(2, SGI_FRAME + GICD_ISENABLER), 4, 0xffffffff);
	CHECK_EQ(ignored(t0), 1);                  /* the PPIs that are not the vCPU's */
	CHECK_EQ(rd(t0, GICR(2, SGI_FRAME + GICD_IPRIORITYR + 27), 1), 0x40);
	CHECK_EQ(rd(t1, GICR(2, SGI_FRAME + GICD_IGROUPR), 4), 0xffffffff);
	CHECK_EQ(rd(t1, GICR(2, SGI_FRAME + GICD_ISENABLER), 4), 0xffff | OWNED_PPIS);
	CHECK_EQ(rd(t1, GICR(2, SGI_FRAME + GICD_ICENABLER), 4), 0xffff | OWNED_PPIS);
	CHECK_EQ(atomic_load(&t2->arch.redist.sync), VGIC_SYNC_TEMPLATES | VGIC_SYNC_ENABLES);
	CHECK(atomic_load(&fake_kicks) & (1u << 2));
	CHECK_EQ(phys32(sgi2, GICD_ISENABLER), enabled_before);
	CHECK_EQ(fake_deliver_kick(2), FAKE_EXIT_WAIT);   /* its core idles: nothing to apply */
	CHECK_EQ(phys32(sgi2, GICD_ISENABLER), enabled_before);
	CHECK(cpus[2].vcpu == NULL);

	start_vcpu(trap, 2);
	CHECK_EQ(phys32(sgi2, GICD_ISENABLER), enabled_before | OWNED_PPIS);
	uint64_t lr = cpus[2].lr_template[27];
	CHECK_EQ((lr >> ICH_LR_PRIO_SHIFT) & 0xff, 0x40);
	CHECK(lr & ICH_LR_GROUP1);
	CHECK(lr & ICH_LR_HW);
	CHECK_EQ(rd(t2, GICR(2, SGI_FRAME + GICD_IPRIORITYR + 24), 4), 0x40000000);
}

/* Another vCPU's state changes on its own core, when the kick arrives. */
void test_vgic_changes_are_posted(void)
{
	vgic_board();
	uint8_t *sgi1 = fake_gicr[t1->pcpu] + GICR_SGI_BASE;
	uint64_t template = cpus[1].lr_template[27];
	uint32_t enabled = phys32(sgi1, GICD_ISENABLER);

	wr(t0, GICR(1, SGI_FRAME + GICD_IPRIORITYR + 27), 1, 0x30);
	wr(t0, GICR(1, SGI_FRAME + GICD_ISENABLER), 4, 1u << 27);
	CHECK_EQ(cpus[1].lr_template[27], template);
	CHECK_EQ(phys32(sgi1, GICD_ISENABLER), enabled);
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 1);
	CHECK_EQ(fake_deliver_kick(1), FAKE_RETURNED);
	CHECK_EQ((cpus[1].lr_template[27] >> ICH_LR_PRIO_SHIFT) & 0xff, 0x30);
	CHECK_EQ(phys32(sgi1, GICD_ISENABLER), enabled | (1u << 27));
	/* Its own: at once, no kick. */
	wr(t1, GICR(1, SGI_FRAME + GICD_ICENABLER), 4, 1u << 27);
	CHECK_EQ(phys32(sgi1, GICD_ISENABLER), enabled);
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	/* A distributor change reaches every vCPU of the partition, each on its core. */
	wr(t1, GICD(GICD_IPRIORITYR + 35), 1, 0x50);
	CHECK_EQ(atomic_load(&fake_kicks), (1u << 0) | (1u << 2));
	CHECK_EQ((cpus[0].lr_template[35] >> ICH_LR_PRIO_SHIFT) & 0xff, 0);
	fake_deliver_all_kicks(8);
	CHECK_EQ((cpus[0].lr_template[35] >> ICH_LR_PRIO_SHIFT) & 0xff, 0x50);
}

void test_vgic_redistributor_registers(void)
{
	vgic_board();
	CHECK_EQ(rd(t0, GICR(2, GICR_TYPER), 8), (2ull << 32) | (2u << 8) | GICR_TYPER_LAST);
	CHECK_EQ(rd(t0, GICR(1, GICR_TYPER), 8), (1ull << 32) | (1u << 8));
	CHECK_EQ(rd(t0, GICR(1, GICR_TYPER), 4), 1u << 8);
	CHECK_EQ(rd(t0, GICR(1, GICR_TYPER + 4), 4), 1);
	CHECK_EQ(rd(t0, GICR(0, GICR_WAKER), 4), GICR_WAKER_SLEEP | GICR_WAKER_ASLEEP);
	wr(t0, GICR(0, GICR_WAKER), 4, 0xffffffff & ~GICR_WAKER_SLEEP);
	CHECK_EQ(rd(t0, GICR(0, GICR_WAKER), 4), 0);
	CHECK_EQ(rd(t0, GICR(0, GICR_IIDR), 4), 0x0100143b);
	CHECK_EQ(rd(t0, GICR(0, GICR_PIDR2), 4), 0x3b);
	wr(t0, GICR(0, GICR_CTLR), 4, 1);
	CHECK_EQ(ignored(t0), 0);
	CHECK_EQ(rd(t0, GICR(0, GICR_CTLR), 4), 0);
	wr(t0, GICR(0, 0x70), 4, 1);                      /* LPI registers: none */
	CHECK_EQ(ignored(t0), 1);
	CHECK_EQ(rd(t0, GICR(0, SGI_FRAME + GICD_ICFGR), 4), 0xaaaaaaaa);
	wr(t0, GICR(0, SGI_FRAME + GICD_ICFGR + 4), 4, 0x55);
	CHECK_EQ(rd(t0, GICR(0, SGI_FRAME + GICD_ICFGR + 4), 4), 0x55);
	CHECK_EQ(rd(t0, GICR(0, SGI_FRAME + GICD_ISACTIVER), 4), 0);
	CHECK_EQ(rd(t0, GICR(0, SGI_FRAME + GICD_IGRPMODR), 4), 0);
	wr(t0, GICR(0, SGI_FRAME + 0x500), 4, 1);
	CHECK_EQ(ignored(t0), 2);
	CHECK_EQ(rd(t0, GICR(0, SGI_FRAME + 0x500), 4), 0);
	/* Frames past the partition's vCPUs are not there for it. */
	uint64_t value = 0;
	CHECK_EQ(acc(t0, GICR(3, 0), 4, false, &value), MMIO_UNHANDLED);
	CHECK_EQ(acc(d0, GICR(2, SGI_FRAME), 4, true, &value), MMIO_UNHANDLED);
	/* A direct vCPU's groups stay 1; its SGI/PPI priorities go to its core, clamped. */
	wr(d0, GICR(0, SGI_FRAME + GICD_IGROUPR), 4, 0);
	CHECK_EQ(rd(d0, GICR(0, SGI_FRAME + GICD_IGROUPR), 4), DIRECT_GROUP1);
	CHECK_EQ(ignored(d0), 1);
	wr(d0, GICR(0, SGI_FRAME + GICD_IPRIORITYR), 4, 0);
	CHECK_EQ(d0->stats[STAT_GIC_CLAMPED], 0); /* unchanged: no attempt */
	wr(d0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + 27), 1, 0x01);
	CHECK_EQ(d0->stats[STAT_GIC_CLAMPED], 1);
	CHECK_EQ(fake_gicr[3][GICR_SGI_BASE + GICD_IPRIORITYR + 27], PRIO_GUEST_MIN);
	CHECK_EQ(fake_gicr[3][GICR_SGI_BASE + GICD_IPRIORITYR + SGI_KICK], PRIO_HYP);
	/* Its PPIs' enables: only what the vCPU owns, never the hypervisor's. */
	wr(d0, GICR(0, SGI_FRAME + GICD_ISENABLER), 4, 0xffffffff);
	CHECK_EQ(phys32(fake_gicr[3] + GICR_SGI_BASE, GICD_ISENABLER),
		 DIRECT_GROUP1 | BIT(SGI_KICK) | BIT(PPI_MAINTENANCE) | BIT(PPI_HYP_TIMER));
	wr(d0, GICR(0, SGI_FRAME + GICD_ICENABLER), 4, 0xffffffff);
	CHECK_EQ(phys32(fake_gicr[3] + GICR_SGI_BASE, GICD_ISENABLER),
		 BIT(SGI_KICK) | BIT(PPI_MAINTENANCE) | BIT(PPI_HYP_TIMER));
}

/* ICPENDR0 is a command to the vCPU's core's redistributor, for what the vCPU owns. */
void test_vgic_clear_pending(void)
{
	vgic_board();
	uint8_t *sgi0 = fake_gicr[0] + GICR_SGI_BASE, *sgi3 = fake_gicr[3] + GICR_SGI_BASE;
	set_phys32(sgi0, GICD_ISPENDR, 0xffffffff);
	set_phys32(sgi0, GICD_ICPENDR, 0xffffffff);
	wr(t1, GICR(0, SGI_FRAME + GICD_ICPENDR), 4, 0xffffffff);
	CHECK_EQ(phys32(sgi0, GICD_ISPENDR), ~(uint32_t)OWNED_PPIS);
	set_phys32(sgi3, GICD_ISPENDR, 0xffffffff);
	set_phys32(sgi3, GICD_ICPENDR, 0xffffffff);
	wr(d0, GICR(0, SGI_FRAME + GICD_ICPENDR), 4, 0xffffffff);
	CHECK_EQ(phys32(sgi3, GICD_ISPENDR), ~(uint32_t)(OWNED_PPIS | GUEST_SGIS));
	/* A core never started has no redistributor yet: nothing to clear. */
	cpus[4].gicr = 0;
	unsigned long writes = fake_mmio_writes;
	wr(d0, GICR(1, SGI_FRAME + GICD_ICPENDR), 4, 0xffffffff);
	CHECK_EQ(fake_mmio_writes, writes);
}

/* ---- delivery: list registers, the queue, maintenance ---- */

static void irq(unsigned core, uint32_t intid)
{
	CHECK_EQ(FAKE_ON(core, arm64_guest_irq(intid, fake_guest_regs(core))), FAKE_RETURNED);
}

static int lr_holding(unsigned core, uint32_t intid)
{
	for (unsigned n = 0; n < gic_nr_lrs; n++) {
		uint64_t lr = fake_lrs[core][n];
		if ((lr & (ICH_LR_PENDING | ICH_LR_ACTIVE)) && (lr & ICH_LR_VINTID_MASK) == intid)
			return (int)n;
	}
	return -1;
}

static void sgi_to_self(struct vcpu *v, uint32_t intid)
{
	CHECK_EQ(FAKE_ON(v->pcpu, vgic_send_sgi(v, ((uint64_t)intid << 24) | BIT(v->index))), FAKE_RETURNED);
}

void test_vgic_inject_queue_maintenance(void)
{
	vgic_board();
	struct vgic_cpu *g = &cpus[0].vgic;

	wr(t0, GICR(0, SGI_FRAME + GICD_ISENABLER), 4, 0xffff);
	wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + 27), 1, 0x80);
	wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + 30), 1, 0x40);
	wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + 1), 1, 0x70);
	wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + 2), 1, 0x90);
	wr(t0, GICD(GICD_IPRIORITYR + 35), 1, 0x60);
	wr(t0, GICD(GICD_IPRIORITYR + 37), 1, 0x20);
	CHECK(cpus[0].lr_template[27] != 0);

	irq(0, 27);
	CHECK_EQ(fake_sysreg(0, "icc_eoir1_el1"), 27);
	CHECK_EQ(fake_lrs[0][0], cpus[0].lr_template[27]); /* what the fast path would have written */
	irq(0, 30);
	irq(0, 35);
	sgi_to_self(t0, 1);
	CHECK(lr_holding(0, 30) == 1 && lr_holding(0, 35) == 2 && lr_holding(0, 1) == 3);
	CHECK(!(fake_lrs[0][3] & ICH_LR_HW));             /* an SGI is purely virtual */
	CHECK_EQ(t0->stats[STAT_IRQ_INJECTED], 4);
	CHECK(!g->fast_path_off);

	/* Full: the more urgent 37 evicts the least urgent pending one, 27, into the queue. */
	irq(0, 37);
	CHECK_EQ(lr_holding(0, 37), 0);
	CHECK(virq_queue_contains(&g->queue, 27));
	CHECK_EQ(t0->stats[STAT_IRQ_QUEUED], 1);
	CHECK(g->fast_path_off);
	CHECK_EQ(cpus[0].lr_template[27], 0);             /* every arrival takes the ordered path */
	CHECK_EQ(cpus[0].lr_template[35], 0);
	CHECK_EQ(fake_sysreg(0, "ich_hcr_el2"), ICH_HCR_EN | ICH_HCR_NPIE);
	/* Less urgent than all of them: it waits; raised again, it is still there once. */
	sgi_to_self(t0, 2);
	CHECK(virq_queue_contains(&g->queue, 2) && lr_holding(0, 2) < 0);
	irq(0, 27);
	CHECK_EQ(g->queue.count, 2);

	/* The guest takes them all: nothing pending, so wait for one to complete (UIE). */
	for (unsigned n = 0; n < 4; n++)
		fake_lrs[0][n] = (fake_lrs[0][n] & ~ICH_LR_PENDING) | ICH_LR_ACTIVE;
	irq(0, PPI_MAINTENANCE);
	CHECK_EQ(fake_sysreg(0, "ich_hcr_el2"), ICH_HCR_EN | ICH_HCR_UIE);
	CHECK_EQ(fake_dir_log[0][fake_dir_count[0] - 1], PPI_MAINTENANCE);
	/* An active SGI raised again: pending and active. */
	sgi_to_self(t0, 1);
	CHECK_EQ(fake_lrs[0][3] & (ICH_LR_PENDING | ICH_LR_ACTIVE), ICH_LR_PENDING | ICH_LR_ACTIVE);
	/* One completes: the most urgent waiting one (27 at 0x80, before SGI 2 at 0x90) moves in. */
	fake_lrs[0][1] = 0;
	irq(0, PPI_MAINTENANCE);
	CHECK_EQ(lr_holding(0, 27), 1);
	CHECK(virq_queue_contains(&g->queue, 2));
	fake_lrs[0][0] = fake_lrs[0][2] = 0;
	irq(0, PPI_MAINTENANCE);
	CHECK_EQ(lr_holding(0, 2), 0);
	CHECK(virq_queue_empty(&g->queue));
	CHECK(!g->fast_path_off);
	CHECK(cpus[0].lr_template[27] != 0);
	CHECK_EQ(fake_sysreg(0, "ich_hcr_el2"), ICH_HCR_EN);
}

/* Free list registers and a non-empty queue: the arrival is ordered through the queue. */
void test_vgic_inject_through_queue(void)
{
	vgic_board();
	struct vgic_cpu *g = &cpus[0].vgic;

	wr(t0, GICD(GICD_IPRIORITYR + 35), 1, 0x60);
	wr(t0, GICD(GICD_IPRIORITYR + 37), 1, 0x20);
	virq_queue_push(&g->queue, 30, 0x10);   /* as if it had been evicted */
	irq(0, 35);
	CHECK_EQ(lr_holding(0, 30), 0);        /* the more urgent waiting one first */
	CHECK_EQ(lr_holding(0, 35), 1);
	CHECK(virq_queue_empty(&g->queue));
}

/* An SGI the guest has disabled is held and delivered once it enables it. */
void test_vgic_sgi_held_while_disabled(void)
{
	vgic_board();
	sgi_to_self(t0, 3);
	CHECK_EQ(cpus[0].vgic.sgi_held, 1u << 3);
	CHECK_EQ(lr_holding(0, 3), -1);
	wr(t0, GICR(0, SGI_FRAME + GICD_ISENABLER), 4, 1u << 3);
	CHECK_EQ(cpus[0].vgic.sgi_held, 0);
	CHECK(lr_holding(0, 3) >= 0);
}

/* A trapped WFI waits only when no virtual interrupt is pending. */
void test_vgic_wfi(void)
{
	vgic_board();
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(fake_guest_regs(0))), FAKE_RETURNED);
	CHECK_EQ(fake_wfis[0], 1);
	CHECK_EQ(t0->stats[STAT_EXIT_WFI], 1);
	irq(0, 27);
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(fake_guest_regs(0))), FAKE_RETURNED);
	CHECK_EQ(fake_wfis[0], 1);
	fake_lrs[0][0] = 0;
	virq_queue_push(&cpus[0].vgic.queue, 30, 0);
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(fake_guest_regs(0))), FAKE_RETURNED);
	CHECK_EQ(fake_wfis[0], 1);
}

/* ---- SGIs between vCPUs ---- */

void test_vgic_sgis(void)
{
	vgic_board();
	wr(t1, GICR(1, SGI_FRAME + GICD_ISENABLER), 4, 0xffff);
	/* A target list: vCPU 1 (running) and vCPU 2 (never started): pending, cores kicked. */
	CHECK_EQ(FAKE_ON(0, vgic_send_sgi(t0, (5ull << 24) | 0b110)), FAKE_RETURNED);
	CHECK_EQ(atomic_load(&t1->arch.redist.pending), 1u << 5);
	CHECK_EQ(atomic_load(&t2->arch.redist.pending), 1u << 5);
	CHECK_EQ(atomic_load(&fake_kicks), (1u << 1) | (1u << 2));
	CHECK_EQ(t0->stats[STAT_SGI_SENT], 1);
	fake_deliver_all_kicks(8);
	CHECK(lr_holding(1, 5) >= 0);
	CHECK_EQ(atomic_load(&t2->arch.redist.pending), 1u << 5); /* waits for vCPU 2 */
	/* Targets past the partition's vCPUs: denied, counted, the others still get it. */
	CHECK_EQ(FAKE_ON(0, vgic_send_sgi(t0, (6ull << 24) | 0b1010)), FAKE_RETURNED);
	CHECK_EQ(t0->stats[STAT_SGI_DENIED], 1);
	CHECK(atomic_load(&t1->arch.redist.pending) & (1u << 6));
	/* Another cluster: nothing. */
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(FAKE_ON(0, vgic_send_sgi(t0, (7ull << 24) | (1ull << 16) | 0b10)), FAKE_RETURNED);
	CHECK_EQ(t0->stats[STAT_SGI_DENIED], 2);
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	CHECK(!(atomic_load(&t1->arch.redist.pending) & (1u << 7)));
	/* IRM: every other vCPU of the partition. */
	CHECK_EQ(FAKE_ON(1, vgic_send_sgi(t1, (8ull << 24) | (1ull << 40))), FAKE_RETURNED);
	CHECK_EQ(atomic_load(&fake_kicks), (1u << 0) | (1u << 2));
	CHECK(atomic_load(&t0->arch.redist.pending) & (1u << 8));
	CHECK(!(atomic_load(&t1->arch.redist.pending) & (1u << 8)));
	/* A direct partition's SGIs are physical, to its own cores; SGI 15 is the hypervisor's. */
	CHECK_EQ(FAKE_ON(3, vgic_send_sgi(d0, (2ull << 24) | 0b11)), FAKE_RETURNED);
	CHECK_EQ(fake_phys_sgis[3], 1u << 2);
	CHECK_EQ(fake_phys_sgis[4], 1u << 2);
	CHECK_EQ(FAKE_ON(3, vgic_send_sgi(d0, (15ull << 24) | 0b10)), FAKE_RETURNED);
	CHECK_EQ(d0->stats[STAT_SGI_DENIED], 1);
	CHECK_EQ(fake_phys_sgis[4], 1u << 2);
	/* ... and through GICR_ISPENDR0 */
	wr(d0, GICR(1, SGI_FRAME + GICD_ISPENDR), 4, (1u << 15) | (1u << 9));
	CHECK_EQ(fake_phys_sgis[4], (1u << 2) | (1u << 9));
	CHECK_EQ(ignored(d0), 1);
	/* A trapping vCPU's ISPENDR0 raises its SGIs, virtual ones, through its core. */
	wr(t0, GICR(1, SGI_FRAME + GICD_ISPENDR), 4, (1u << 15) | (1u << 9));
	CHECK(atomic_load(&t1->arch.redist.pending) & ((1u << 15) | (1u << 9)));
}

/* ---- pending and active state of SGIs and PPIs (GICR_IS/ICPENDR0, IS/ICACTIVER0) ---- */

#define PEND(i) GICR(i, SGI_FRAME + GICD_ISPENDR)
#define UNPEND(i) GICR(i, SGI_FRAME + GICD_ICPENDR)
#define ACT(i) GICR(i, SGI_FRAME + GICD_ISACTIVER)
#define DEACT(i) GICR(i, SGI_FRAME + GICD_ICACTIVER)

static unsigned last_dir(unsigned core)
{
	return fake_dir_count[core] ? fake_dir_log[core][(fake_dir_count[core] - 1) % FAKE_DIR_LOG] : 0;
}

/*
 * Trap-and-inject: a disabled timer PPI whose line is high reads pending, as on the board; once
 * taken it is the list register's state; SGIs wherever they wait.
 */
void test_vgic_pending_state_trap(void)
{
	vgic_board();
	uint8_t *sgi0 = fake_gicr[0] + GICR_SGI_BASE;

	/* The vtimer fired while the guest keeps PPI 27 disabled: pending in the GIC only. */
	set_phys32(sgi0, GICD_ISPENDR, BIT(PPI_VTIMER) | BIT(PPI_HYP_TIMER));
	CHECK_EQ(rd(t0, PEND(0), 4), BIT(PPI_VTIMER));
	CHECK_EQ(rd(t0, UNPEND(0), 4), BIT(PPI_VTIMER));
	CHECK_EQ(rd(t1, PEND(0), 4), BIT(PPI_VTIMER));     /* a sibling sees the line too */
	CHECK_EQ(rd(t0, ACT(0), 4), 0);
	/* Enabled and taken: pending in a list register (acknowledged in the GIC), then active. */
	set_phys32(sgi0, GICD_ISPENDR, 0);
	wr(t0, GICR(0, SGI_FRAME + GICD_ISENABLER), 4, 0xffff | OWNED_PPIS);
	irq(0, PPI_VTIMER);
	CHECK_EQ(rd(t0, PEND(0), 4), BIT(PPI_VTIMER));
	fake_lrs[0][lr_holding(0, PPI_VTIMER)] ^= ICH_LR_PENDING | ICH_LR_ACTIVE;
	CHECK_EQ(rd(t0, PEND(0), 4), 0);
	CHECK_EQ(rd(t0, ACT(0), 4), BIT(PPI_VTIMER));
	CHECK_EQ(rd(t0, DEACT(0), 4), BIT(PPI_VTIMER));
	/* SGIs: raised by a sibling, not yet taken; held while disabled; in a list register. */
	CHECK_EQ(FAKE_ON(1, vgic_send_sgi(t1, (4ull << 24) | 1)), FAKE_RETURNED);
	CHECK_EQ(rd(t0, PEND(0), 4), BIT(4));
	CHECK_EQ(rd(t1, PEND(0), 4), BIT(4));
	fake_deliver_all_kicks(8);
	CHECK(lr_holding(0, 4) >= 0);
	wr(t0, GICR(0, SGI_FRAME + GICD_ICENABLER), 4, BIT(6));
	sgi_to_self(t0, 6);
	CHECK_EQ(rd(t0, PEND(0), 4), BIT(4) | BIT(6));
	CHECK_EQ(rd(t1, PEND(0), 4), 0);                    /* only vCPU 0's core holds them */
	/* Cleared: held, in a list register; its active linked timer too, deactivated in the GIC. */
	fake_dir_count[0] = 0;
	wr(t0, UNPEND(0), 4, BIT(4) | BIT(6));
	CHECK_EQ(rd(t0, PEND(0), 4), 0);
	CHECK_EQ(cpus[0].vgic.sgi_held, 0);
	CHECK_EQ(lr_holding(0, 4), -1);
	CHECK_EQ(fake_dir_count[0], 0);                      /* SGIs are virtual */
	wr(t0, DEACT(0), 4, BIT(PPI_VTIMER));
	CHECK_EQ(rd(t0, ACT(0), 4), 0);
	CHECK_EQ(lr_holding(0, PPI_VTIMER), -1);
	CHECK_EQ(last_dir(0), PPI_VTIMER);
	/* A pending linked one cleared leaves its list register and the GIC's active state. */
	irq(0, PPI_PTIMER);
	wr(t0, UNPEND(0), 4, BIT(PPI_PTIMER));
	CHECK_EQ(lr_holding(0, PPI_PTIMER), -1);
	CHECK_EQ(last_dir(0), PPI_PTIMER);
	CHECK_EQ(phys32(sgi0, GICD_ISPENDR), 0);
	/* Set pending: an owned PPI in the GIC, where it is taken as if it had fired. */
	wr(t0, PEND(0), 4, BIT(PPI_PTIMER) | BIT(PPI_MAINTENANCE));
	CHECK_EQ(phys32(sgi0, GICD_ISPENDR), BIT(PPI_PTIMER));
	CHECK_EQ(ignored(t0), 1);
	/* Set active: a virtual SGI, and a linked PPI never taken (active in the GIC first). */
	wr(t0, ACT(0), 4, BIT(7) | BIT(PPI_VTIMER));
	CHECK_EQ(rd(t0, ACT(0), 4), BIT(7) | BIT(PPI_VTIMER));
	CHECK_EQ(phys32(sgi0, GICD_ISACTIVER), BIT(PPI_VTIMER));
	int n = lr_holding(0, PPI_VTIMER);
	CHECK(n >= 0 && (fake_lrs[0][n] & ICH_LR_HW) && !(fake_lrs[0][n] & ICH_LR_PENDING));
	CHECK(!(fake_lrs[0][lr_holding(0, 7)] & (ICH_LR_HW | ICH_LR_PENDING)));
}

/* Another vCPU's list registers are its core's: a clear is posted and applied there. */
void test_vgic_pending_state_posted(void)
{
	vgic_board();
	wr(t1, GICR(1, SGI_FRAME + GICD_ISENABLER), 4, 0xffff | OWNED_PPIS);
	irq(1, PPI_VTIMER);
	sgi_to_self(t1, 2);
	uint64_t lrs[FAKE_MAX_LRS];
	memcpy(lrs, fake_lrs[1], sizeof(lrs));
	atomic_store(&fake_kicks, 0);
	wr(t0, UNPEND(1), 4, BIT(2));
	wr(t0, DEACT(1), 4, BIT(PPI_VTIMER));
	wr(t0, ACT(1), 4, BIT(PPI_VTIMER));                 /* the later write wins */
	CHECK(!memcmp(lrs, fake_lrs[1], sizeof(lrs)));
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 1);
	CHECK_EQ(fake_deliver_kick(1), FAKE_RETURNED);
	CHECK_EQ(lr_holding(1, 2), -1);
	CHECK_EQ(fake_lrs[1][lr_holding(1, PPI_VTIMER)] & (ICH_LR_PENDING | ICH_LR_ACTIVE),
		 ICH_LR_PENDING | ICH_LR_ACTIVE);
	CHECK_EQ(rd(t1, ACT(1), 4), BIT(PPI_VTIMER));
	/* A vCPU that never ran: nothing stale is applied when it enters. */
	wr(t0, UNPEND(2), 4, BIT(3));
	start_vcpu(trap, 2);
	CHECK_EQ(atomic_load(&t2->arch.redist.unpend), 0);
}

/* Direct: the vCPU's core's redistributor holds its SGIs' and PPIs' state; SGI 15 is not its. */
void test_vgic_pending_state_direct(void)
{
	vgic_board();
	uint8_t *sgi3 = fake_gicr[3] + GICR_SGI_BASE, *sgi4 = fake_gicr[4] + GICR_SGI_BASE;

	set_phys32(sgi3, GICD_ISPENDR, BIT(PPI_VTIMER) | BIT(5) | BIT(SGI_KICK) | BIT(PPI_HYP_TIMER));
	set_phys32(sgi3, GICD_ISACTIVER, BIT(PPI_PTIMER) | BIT(PPI_MAINTENANCE));
	CHECK_EQ(rd(d0, PEND(0), 4), BIT(PPI_VTIMER) | BIT(5));
	CHECK_EQ(rd(d0, ACT(0), 4), BIT(PPI_PTIMER));
	set_phys32(sgi4, GICD_ISPENDR, BIT(1));
	CHECK_EQ(rd(d0, PEND(1), 4), BIT(1));
	wr(d0, DEACT(0), 4, 0xffffffff);
	CHECK_EQ(phys32(sgi3, GICD_ISACTIVER), BIT(PPI_MAINTENANCE));
	wr(d0, ACT(1), 4, 0xffffffff);
	CHECK_EQ(phys32(sgi4, GICD_ISACTIVER), DIRECT_GROUP1);
	wr(d0, PEND(0), 4, BIT(PPI_PTIMER));
	CHECK_EQ(phys32(sgi3, GICD_ISPENDR) & BIT(PPI_PTIMER), BIT(PPI_PTIMER));
	CHECK_EQ(ignored(d0), 0);
}

/* ---- a vCPU leaving its core ---- */

void test_vgic_quiesce(void)
{
	vgic_board();
	struct arm64_cpu *c = &cpus[0];

	wr(t0, GICR(0, SGI_FRAME + GICD_ISENABLER), 4, OWNED_PPIS);
	CHECK_EQ(phys32(fake_gicr[0] + GICR_SGI_BASE, GICD_ISENABLER) & OWNED_PPIS, OWNED_PPIS);
	irq(0, 35);
	irq(0, 27);
	fake_lrs[0][0] = (fake_lrs[0][0] & ~ICH_LR_PENDING) | ICH_LR_ACTIVE; /* 35 active */
	fake_lrs[0][2] = ICH_LR_PENDING | 3;                                    /* a virtual SGI */
	virq_queue_push(&c->vgic.queue, 30, 0x40);
	virq_queue_push(&c->vgic.queue, 4, 0x40);
	c->vgic.sgi_held = 1u << 6;
	fake_sysreg_set(0, "ich_vtr_el2", (6ull << 26) | 3);  /* 7 preemption bits: 4 AP registers */
	fake_sysreg_set(0, "ich_ap1r3_el2", 5);
	fake_sysreg_set(0, "ich_ap0r2_el2", 5);
	fake_dir_count[0] = 0;

	CHECK_EQ(FAKE_ON(0, arch_vcpu_quiesce(t0)), FAKE_RETURNED);
	/* Hardware-linked interrupts in list registers or waiting are deactivated; SGIs are not. */
	CHECK_EQ(fake_dir_count[0], 3);
	CHECK_EQ(fake_dir_log[0][0], 35);
	CHECK_EQ(fake_dir_log[0][1], 27);
	CHECK_EQ(fake_dir_log[0][2], 30);
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		CHECK_EQ(fake_lrs[0][n], 0);
	CHECK(virq_queue_empty(&c->vgic.queue));
	CHECK_EQ(phys32(fake_gicr[0] + GICR_SGI_BASE, GICD_ISENABLER) & OWNED_PPIS, 0);
	CHECK_EQ(atomic_load(&t0->arch.redist.pending), 1u << 6);
	CHECK_EQ(c->vgic.sgi_held, 0);
	CHECK_EQ(fake_sysreg(0, "ich_ap1r3_el2"), 0);
	CHECK_EQ(fake_sysreg(0, "ich_ap0r2_el2"), 0);
	for (uint32_t i = 0; i < NR_INTIDS; i++)
		CHECK_EQ(c->lr_template[i], 0);
	CHECK_EQ(fake_sysreg(0, "ich_hcr_el2"), ICH_HCR_EN);
	CHECK_EQ(fake_sysreg(0, "cntv_ctl_el0"), 0);
}

/* Two active-priority registers with 6 preemption bits; one with 5 (QEMU's). */
void test_vgic_active_priority_registers(void)
{
	vgic_board();
	fake_sysreg_set(0, "ich_vtr_el2", (5ull << 26) | 3);
	fake_sysreg_set(0, "ich_ap1r1_el2", 5);
	fake_sysreg_set(0, "ich_ap1r2_el2", 5);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_quiesce(t0)), FAKE_RETURNED);
	CHECK_EQ(fake_sysreg(0, "ich_ap1r1_el2"), 0);
	CHECK_EQ(fake_sysreg(0, "ich_ap1r2_el2"), 5);
	fake_sysreg_set(0, "ich_vtr_el2", (4ull << 26) | 3);
	fake_sysreg_set(0, "ich_ap1r0_el2", 5);
	fake_sysreg_set(0, "ich_ap1r1_el2", 5);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_quiesce(t0)), FAKE_RETURNED);
	CHECK_EQ(fake_sysreg(0, "ich_ap1r0_el2"), 0);
	CHECK_EQ(fake_sysreg(0, "ich_ap1r1_el2"), 5);
}

/* A direct core gives its GIC CPU interface back: nothing of the guest left in it. */
void test_vgic_quiesce_direct(void)
{
	vgic_board();
	uint8_t *sgi3 = fake_gicr[3] + GICR_SGI_BASE;
	CHECK(cpus[3].direct);
	CHECK_EQ(fake_sysreg(3, "icc_ctlr_el1") & ICC_CTLR_EOIMODE, 0);
	set_phys32(sgi3, GICD_ISACTIVER, 0xffffffff);
	set_phys32(sgi3, GICD_ICACTIVER, 0xffffffff);
	memset(sgi3 + GICD_IPRIORITYR, 0x20, 15);
	fake_sysreg_set(3, "icc_ctlr_el1", (6ull << 8));      /* 7 priority bits: 4 AP1R registers */
	for (int i = 0; i < 4; i++) {
		static const char *const ap[] = { "icc_ap1r0_el1", "icc_ap1r1_el1", "icc_ap1r2_el1", "icc_ap1r3_el1" };
		fake_sysreg_set(3, ap[i], 1);
	}
	CHECK_EQ(FAKE_ON(3, arch_vcpu_quiesce(d0)), FAKE_RETURNED);
	CHECK(!cpus[3].direct);
	CHECK_EQ(phys32(sgi3, GICD_ISACTIVER), ~(uint32_t)(GUEST_SGIS | OWNED_PPIS));
	CHECK_EQ(phys32(sgi3, GICD_ISENABLER) & (GUEST_SGIS | OWNED_PPIS), 0);
	CHECK_EQ(sgi3[GICD_IPRIORITYR + 0], PRIO_GUEST);
	CHECK_EQ(sgi3[GICD_IPRIORITYR + SGI_KICK], PRIO_HYP);
	CHECK_EQ(fake_sysreg(3, "icc_ap1r0_el1") | fake_sysreg(3, "icc_ap1r3_el1"), 0);
	CHECK_EQ(fake_sysreg(3, "icc_igrpen1_el1"), 1);
	CHECK_EQ(fake_sysreg(3, "icc_ctlr_el1") & ICC_CTLR_EOIMODE, ICC_CTLR_EOIMODE);
	fake_sysreg_set(3, "icc_ctlr_el1", (5ull << 8));       /* 6 bits: two */
	fake_sysreg_set(3, "icc_ap1r1_el1", 1);
	fake_sysreg_set(3, "icc_ap1r2_el1", 1);
	cpus[3].direct = true;
	CHECK_EQ(FAKE_ON(3, arch_vcpu_quiesce(d0)), FAKE_RETURNED);
	CHECK_EQ(fake_sysreg(3, "icc_ap1r1_el1"), 0);
	CHECK_EQ(fake_sysreg(3, "icc_ap1r2_el1"), 1);
}

/* When a partition ends or restarts its SPIs go back to their reset state, and its view too. */
void test_vgic_partition_irqs_reset(void)
{
	vgic_board();
	wr(t0, GICD(GICD_ISENABLER + 4), 4, 0xffffffff);
	wr(t0, GICD(GICD_IPRIORITYR + 37), 1, 0x33);
	wr(t0, GICD(GICD_IROUTER + 8 * 37), 8, 2);
	wr(t0, GICD(GICD_IGROUPR + 4), 4, 0xffffffff);
	wr(t0, GICR(1, SGI_FRAME + GICD_ISENABLER), 4, 0xff);
	fake_gicd[GICD_IPRIORITYR + 37] = 0x10;
	arch_partition_irqs_reset(trap);
	CHECK_EQ(phys32(fake_gicd, GICD_ISENABLER + 4), 0);
	CHECK_EQ(fake_gicd[GICD_IPRIORITYR + 37], PRIO_GUEST);
	CHECK_EQ(phys64(fake_gicd, GICD_IROUTER + 8 * 37), t0->pcpu);
	CHECK_EQ(dist(trap)->prio[37], 0);
	CHECK_EQ(dist(trap)->target[37], 0);
	CHECK_EQ(dist(trap)->group[1], 0);
	CHECK_EQ(atomic_load(&t1->arch.redist.enabled), 0);
	CHECK_EQ(t1->arch.redist.waker, GICR_WAKER_SLEEP);
	/* A direct partition's SGIs sent while its vCPUs were off are dropped from their cores. */
	uint8_t *sgi4 = fake_gicr[4] + GICR_SGI_BASE;
	set_phys32(sgi4, GICD_ISPENDR, 0xffffffff);
	set_phys32(sgi4, GICD_ICPENDR, 0xffffffff);
	arch_partition_irqs_reset(direct);
	CHECK_EQ(phys32(sgi4, GICD_ISPENDR), ~(uint32_t)GUEST_SGIS);
	CHECK_EQ(dist(direct)->group[1], 1u << 4);
	CHECK_EQ(d1->arch.redist.group, DIRECT_GROUP1);
}

/* ---- a priority changed while its interrupt waits ---- */

static void lr_step(unsigned core, unsigned n)
{
	uint64_t lr = fake_lrs[core][n];

	fake_lrs[core][n] = (lr & ICH_LR_PENDING) ? ((lr & ~ICH_LR_PENDING) | ICH_LR_ACTIVE) : 0;
}

static uint8_t lr_prio(unsigned core, unsigned n)
{
	return (uint8_t)(fake_lrs[core][n] >> ICH_LR_PRIO_SHIFT);
}

/*
 * The guest makes a waiting interrupt less urgent: a more urgent one that arrived after it
 * must still reach a list register first (found by the vgic fuzzer: the queue kept the old
 * priority, so 27 took the free list register ahead of 37).
 */
void test_vgic_priority_change_of_a_waiting_interrupt(void)
{
	vgic_board();
	struct vgic_cpu *g = &cpus[0].vgic;

	wr(t0, GICR(0, SGI_FRAME + GICD_ISENABLER), 4, 0xffff);
	irq(0, 27);
	irq(0, 30);
	irq(0, 35);
	sgi_to_self(t0, 1);
	sgi_to_self(t0, 2);                       /* all at priority 0: it waits */
	lr_step(0, 0);
	lr_step(0, 0);                            /* 27 done */
	irq(0, 27);                               /* SGI 2 goes first, 27 waits */
	CHECK_EQ(lr_holding(0, 2), 0);
	CHECK(virq_queue_contains(&g->queue, 27));
	wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + 27), 1, 0x80);
	irq(0, 37);                               /* priority 0: more urgent than 27 now */
	lr_step(0, 0);
	lr_step(0, 0);                            /* SGI 2 done */
	irq(0, PPI_MAINTENANCE);
	CHECK_EQ(lr_holding(0, 37), 0);
	CHECK(virq_queue_contains(&g->queue, 27));
	CHECK_EQ(g->queue.prio[27], 0x80);
}

/* Made more urgent while waiting: it takes the place of the least urgent pending one. */
void test_vgic_priority_raised_while_waiting(void)
{
	vgic_board();
	struct vgic_cpu *g = &cpus[0].vgic;

	wr(t0, GICR(0, SGI_FRAME + GICD_ISENABLER), 4, 0xffff);
	for (uint32_t sgi = 0; sgi < 5; sgi++)
		wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + sgi), 1, 0x80 + 0x10 * sgi);
	for (uint32_t sgi = 0; sgi < 5; sgi++)
		sgi_to_self(t0, sgi);
	CHECK(virq_queue_contains(&g->queue, 4));
	wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + 4), 1, 0x10);
	CHECK(lr_holding(0, 4) >= 0);
	if (lr_holding(0, 4) >= 0)
		CHECK_EQ(lr_prio(0, (unsigned)lr_holding(0, 4)), 0x10);
	CHECK(virq_queue_contains(&g->queue, 3));   /* the least urgent (0xb0) waits instead */
	CHECK_EQ(g->queue.count, 1);
}

/* Made less urgent in its list register: a more urgent waiting one goes before it. */
void test_vgic_priority_lowered_in_a_list_register(void)
{
	vgic_board();
	struct vgic_cpu *g = &cpus[0].vgic;

	wr(t0, GICR(0, SGI_FRAME + GICD_ISENABLER), 4, 0xffff);
	for (uint32_t sgi = 0; sgi < 5; sgi++)
		wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + sgi), 1, 0x20);
	for (uint32_t sgi = 0; sgi < 5; sgi++)
		sgi_to_self(t0, sgi);
	CHECK(virq_queue_contains(&g->queue, 4));
	wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + 1), 1, 0xc0);
	CHECK(lr_holding(0, 4) >= 0);
	CHECK(virq_queue_contains(&g->queue, 1));
	CHECK_EQ(g->queue.prio[1], 0xc0);
	/* An active one keeps its list register: it is being handled. */
	CHECK(lr_holding(0, 0) >= 0);
	if (lr_holding(0, 0) >= 0)
		lr_step(0, (unsigned)lr_holding(0, 0));
	wr(t0, GICR(0, SGI_FRAME + GICD_IPRIORITYR + 0), 1, 0xf0);
	CHECK(lr_holding(0, 0) >= 0);
	CHECK(virq_queue_contains(&g->queue, 1));
}
