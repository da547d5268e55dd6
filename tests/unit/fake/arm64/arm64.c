/* SPDX-License-Identifier: MIT */
/*
 * The arm64 hardware that vgicv3.c and traps.c reach, on the host: system registers (a cell per
 * name and core), list registers, and the physical GIC's registers in host memory, where the
 * set/clear pairs act as the hardware's do.  Also what cpu.c, mmu.c and gicv3.c define.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <tern/partition.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/platform.h>
#include "fake.h"

struct arm64_cpu cpus[MAX_CPUS];
unsigned gic_nr_lrs = 4;
uint32_t gic_nr_irqs = 288;

uint64_t fake_lrs[FAKE_CPUS][FAKE_MAX_LRS];
uint32_t fake_phys_sgis[FAKE_CPUS];
uint32_t fake_dir_log[FAKE_CPUS][FAKE_DIR_LOG];
unsigned fake_dir_count[FAKE_CPUS];
unsigned fake_wfis[FAKE_CPUS];
unsigned fake_tlbis[FAKE_CPUS];
struct fake_mmio_write fake_mmio_log[FAKE_MMIO_LOG];
unsigned long fake_mmio_writes;
void (*fake_gic_write_hook)(uintptr_t addr, unsigned size, uint64_t value);

static uint8_t stacks[FAKE_CPUS][4096] __attribute__((aligned(16)));

/* ---- system registers ---- */

/* Every system register the code under test may touch; anything else is a test's bug. */
enum { HCR = 3, ICH_HCR = 9, VTR, VMCR, ELRSR, ICC_CTLR = 21, IAR0 = 29, DIR = 32 };
static const char *const sysreg_names[] = {
	"esr_el2", "far_el2", "hpfar_el2", "hcr_el2",
	"esr_el1", "far_el1", "elr_el1", "spsr_el1", "vbar_el1",
	"ich_hcr_el2", "ich_vtr_el2", "ich_vmcr_el2", "ich_elrsr_el2",
	"ich_ap0r0_el2", "ich_ap0r1_el2", "ich_ap0r2_el2", "ich_ap0r3_el2",
	"ich_ap1r0_el2", "ich_ap1r1_el2", "ich_ap1r2_el2", "ich_ap1r3_el2",
	"icc_ctlr_el1", "icc_ap1r0_el1", "icc_ap1r1_el1", "icc_ap1r2_el1", "icc_ap1r3_el1",
	"icc_bpr1_el1", "icc_igrpen1_el1", "icc_pmr_el1",
	"icc_iar0_el1", "icc_eoir0_el1", "icc_eoir1_el1", "icc_dir_el1",
	"cntv_ctl_el0", "cntp_ctl_el0",
	/* What a vCPU switch carries (vcpu.c, arch_vcpu_save); keys by encoding, as sysreg.h spells them. */
	"sctlr_el1", "cpacr_el1", "tcr_el1", "ttbr0_el1", "ttbr1_el1", "mair_el1", "contextidr_el1",
	"tpidr_el1", "tpidr_el0", "tpidrro_el0", "sp_el0", "sp_el1", "cntkctl_el1", "mdscr_el1",
	"amair_el1", "afsr0_el1", "afsr1_el1", "par_el1", "csselr_el1", "cntv_cval_el0",
	"cntp_cval_el0", "S3_0_C2_C1_0", "S3_0_C2_C1_1", "S3_0_C2_C1_2", "S3_0_C2_C1_3",
	"S3_0_C2_C2_0", "S3_0_C2_C2_1", "S3_0_C2_C2_2", "S3_0_C2_C2_3", "S3_0_C2_C3_0",
	"S3_0_C2_C3_1", "fpcr", "fpsr", "cntvoff_el2", "vmpidr_el2", "vttbr_el2",
	/* A shared core's scheduling timer (arch_sched_timer), and its vector table (arm64_shared_entry). */
	"cnthp_cval_el2", "cnthp_ctl_el2", "vbar_el2",
};
#define NUM_SYSREGS (sizeof(sysreg_names) / sizeof(sysreg_names[0]))
#define ICC_CTLR_RO 0xff00ull   /* PRIbits, IDbits, SEIS, A3V: read-only */

static uint64_t sysregs[FAKE_CPUS][NUM_SYSREGS];
static uint32_t group0[FAKE_CPUS][16];
static unsigned group0_count[FAKE_CPUS];

static bool same_name(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* Names come from string literals at the call sites: looked up once per site and remembered. */
static unsigned sysreg_index(const char *name)
{
	static _Thread_local const char *seen[256];
	static _Thread_local unsigned char seen_index[256];
	unsigned h = (unsigned)(((uintptr_t)name >> 3) % 256);

	if (seen[h] == name)
		return seen_index[h];
	for (unsigned i = 0; i < NUM_SYSREGS; i++) {
		if (same_name(sysreg_names[i], name)) {
			seen[h] = name;
			seen_index[h] = (unsigned char)i;
			return i;
		}
	}
	fprintf(stderr, "fake: system register %s is not in tests/unit/fake/arm64.c\n", name);
	abort();
}

static unsigned cpu_checked(unsigned cpu)
{
	if (cpu >= FAKE_CPUS)
		abort();
	return cpu;
}

/* ICH_ELRSR_EL2: a bit per list register with no state. */
static uint64_t elrsr(unsigned cpu)
{
	uint64_t bits = 0;

	for (unsigned n = 0; n < gic_nr_lrs && n < FAKE_MAX_LRS; n++) {
		if (!(fake_lrs[cpu][n] & (ICH_LR_PENDING | ICH_LR_ACTIVE)))
			bits |= 1ull << n;
	}
	return bits;
}

uint64_t fake_sysreg(unsigned cpu, const char *name)
{
	cpu_checked(cpu);
	unsigned i = sysreg_index(name);

	if (i == ELRSR)
		return elrsr(cpu);
	return sysregs[cpu][i];
}

unsigned fake_sysreg_count(void)
{
	return NUM_SYSREGS;
}

const char *fake_sysreg_name(unsigned i)
{
	return i < NUM_SYSREGS ? sysreg_names[i] : NULL;
}

void fake_sysreg_set(unsigned cpu, const char *name, uint64_t value)
{
	sysregs[cpu_checked(cpu)][sysreg_index(name)] = value;
}

uint64_t fake_read_sysreg(const char *name)
{
	unsigned cpu = cpu_checked(fake_cpu);

	if (sysreg_index(name) == IAR0) {
		if (!group0_count[cpu])
			return 1023;
		uint32_t intid = group0[cpu][0];
		memmove(&group0[cpu][0], &group0[cpu][1], --group0_count[cpu] * sizeof(group0[0][0]));
		return intid;
	}
	return fake_sysreg(cpu, name);
}

void fake_write_sysreg(const char *name, uint64_t value)
{
	unsigned cpu = cpu_checked(fake_cpu);
	unsigned i = sysreg_index(name);

	if (i == ELRSR || i == VTR || i == IAR0) {
		fprintf(stderr, "fake: write to read-only %s\n", name);
		abort();
	}
	if (i == ICC_CTLR)
		value = (value & ~ICC_CTLR_RO) | (sysregs[cpu][i] & ICC_CTLR_RO);
	if (i == DIR)
		fake_dir_log[cpu][fake_dir_count[cpu]++ % FAKE_DIR_LOG] = (uint32_t)value;
	/* arch_vcpu_quiesce (vcpu.c) is the only writer of HCR_EL2 = RW alone: a vCPU stopped. */
	if (i == HCR && value == HCR_RW)
		fake_cores[cpu].quiesces++;
	sysregs[cpu][i] = value;
}

/* The Q registers of each fake core (arch_vcpu_save/restore). */
uint64_t fake_fpregs[FAKE_CPUS][32][2];

void fake_fp_save(uint64_t q[32][2]);
void fake_fp_restore(const uint64_t q[32][2]);

void fake_fp_save(uint64_t q[32][2])
{
	memcpy(q, fake_fpregs[cpu_checked(fake_cpu)], sizeof(fake_fpregs[0]));
}

void fake_fp_restore(const uint64_t q[32][2])
{
	memcpy(fake_fpregs[cpu_checked(fake_cpu)], q, sizeof(fake_fpregs[0]));
}

void fake_barrier(const char *what)
{
	if (same_name(what, "wfi"))
		fake_wfis[cpu_checked(fake_cpu)]++;
	if (same_name(what, "tlbi vmalle1"))
		fake_tlbis[cpu_checked(fake_cpu)]++;
}

void fake_raise_group0(unsigned cpu, uint32_t intid)
{
	cpu_checked(cpu);
	if (group0_count[cpu] < 16)
		group0[cpu][group0_count[cpu]++] = intid;
}

/* ---- list registers and the CPU interface (gicv3.c) ---- */

uint64_t gic_read_lr(unsigned n)
{
	return n < FAKE_MAX_LRS ? fake_lrs[cpu_checked(fake_cpu)][n] : 0;
}

void gic_write_lr(unsigned n, uint64_t value)
{
	if (n >= gic_nr_lrs) {
		fprintf(stderr, "fake: list register %u of %u written\n", n, gic_nr_lrs);
		abort();
	}
	fake_lrs[cpu_checked(fake_cpu)][n] = value;
}

void gic_set_eoimode(bool split)
{
	write_sysreg(icc_ctlr_el1, split ? ICC_CTLR_EOIMODE : 0);
	isb();
}

void gic_send_sgi(unsigned pcpu, uint32_t intid)
{
	cpu_checked(pcpu);
	if (intid == SGI_KICK) {
		atomic_fetch_or(&fake_kicks, 1u << pcpu);
		atomic_fetch_add(&fake_kick_count[pcpu], 1);
	} else {
		fake_phys_sgis[pcpu] |= 1u << intid;
	}
}

void arch_hyp_irq_route(uint32_t intid, unsigned pcpu)
{
	fake_hyp_irq = intid;
	fake_hyp_irq_cpu = pcpu;
}

/* ---- the physical GIC's registers ---- */

/*
 * A write to a set or clear register of a pair (enable, pending, active) changes the state
 * both show: the pair's two words always hold the same bits.  `off` is from the distributor
 * or the SGI frame; the set registers are at 0x100, 0x200, 0x300, the clear ones 0x80 above.
 */
static bool set_clear(uint8_t *base, uint32_t off, uint32_t span, uint32_t v)
{
	if (off < GICD_ISENABLER || off >= GICD_IPRIORITYR)
		return false;
	uint32_t in = (off - GICD_ISENABLER) % 0x100;
	if (in % 0x80 >= span)
		return false;
	uint32_t set = GICD_ISENABLER + (off - GICD_ISENABLER) / 0x100 * 0x100 + in % 0x80;
	uint32_t state;

	memcpy(&state, base + set, 4);
	state = in < 0x80 ? state | v : state & ~v;
	memcpy(base + set, &state, 4);
	memcpy(base + set + 0x80, &state, 4);
	return true;
}

/* The redistributor registers there are: RD frame control, its ID registers, the SGI frame's. */
#define RD_REGS     0x100u
#define RD_ID_REGS  0xffd0u
#define SGI_REGS    0xd00u

static bool read_only(uint32_t off, bool dist)
{
	if (dist)
		return off == GICD_TYPER || off == GICD_IIDR || off == GICD_PIDR2;
	return off == GICR_TYPER || off == GICR_TYPER + 4 || off == GICR_IIDR || off == GICR_PIDR2;
}

/* Where `a` is in the fake GIC: its register memory, and whether set/clear pairs apply. */
static uint8_t *gic_reg(uintptr_t a, unsigned size, bool write, uint64_t value)
{
	uintptr_t d = (uintptr_t)fake_gicd, r = (uintptr_t)fake_gicr;

	if (a & (size - 1)) {
		fprintf(stderr, "fake: misaligned GIC access at 0x%lx\n", (unsigned long)a);
		abort();
	}
	if (write && fake_gic_write_hook)
		fake_gic_write_hook(a, size, value);
	if (write) {
		struct fake_mmio_write *w = &fake_mmio_log[fake_mmio_writes++ % FAKE_MMIO_LOG];
		*w = (struct fake_mmio_write){ a, size, value };
	}
	if (a >= d && a + size <= d + sizeof(fake_gicd)) {
		uint32_t off = (uint32_t)(a - d);
		if (write && size == 4 && set_clear(fake_gicd, off, 0x80, (uint32_t)value))
			return NULL;
		if (write && read_only(off, true))
			return NULL;
		return fake_gicd + off;
	}
	if (a >= r && a + size <= r + sizeof(fake_gicr)) {
		uint8_t *frame = fake_gicr[(a - r) / sizeof(fake_gicr[0])];
		uint32_t off = (uint32_t)((a - r) % sizeof(fake_gicr[0]));
		if (!(off < RD_REGS || off >= RD_ID_REGS) &&
		    !(off >= GICR_SGI_BASE && off < GICR_SGI_BASE + SGI_REGS)) {
			fprintf(stderr, "fake: redistributor register 0x%x is not modelled\n", off);
			abort();
		}
		if (write && size == 4 && off >= GICR_SGI_BASE &&
		    set_clear(frame + GICR_SGI_BASE, off - GICR_SGI_BASE, 4, (uint32_t)value))
			return NULL;
		if (write && off < GICR_SGI_BASE && read_only(off, false))
			return NULL;
		return frame + off;
	}
	fprintf(stderr, "fake: GIC access outside the fake GIC at 0x%lx\n", (unsigned long)a);
	abort();
}

void mmio_write8(uintptr_t a, uint8_t v)
{
	uint8_t *p = gic_reg(a, 1, true, v);
	if (p)
		*p = v;
}

uint32_t mmio_read32(uintptr_t a)
{
	uint32_t v;
	memcpy(&v, gic_reg(a, 4, false, 0), 4);
	return v;
}

void mmio_write32(uintptr_t a, uint32_t v)
{
	uint8_t *p = gic_reg(a, 4, true, v);
	if (p)
		memcpy(p, &v, 4);
}

uint64_t mmio_read64(uintptr_t a)
{
	uint64_t v;
	memcpy(&v, gic_reg(a, 8, false, 0), 8);
	return v;
}

void mmio_write64(uintptr_t a, uint64_t v)
{
	uint8_t *p = gic_reg(a, 8, true, v);
	if (p)
		memcpy(p, &v, 8);
}

static void put32(uint8_t *base, uint32_t off, uint32_t v)
{
	memcpy(base + off, &v, 4);
}

void fake_gic_reset(void)
{
	memset(fake_gicd, 0, sizeof(fake_gicd));
	for (unsigned c = 0; c < FAKE_CPUS; c++) {
		memset(fake_gicr[c], 0, RD_REGS);
		memset(fake_gicr[c] + RD_ID_REGS, 0, GICR_SGI_BASE - RD_ID_REGS);
		memset(fake_gicr[c] + GICR_SGI_BASE, 0, SGI_REGS);
	}
	/* As gic_dist_init leaves it: 288 INTIDs, SPIs Group 1 at the guests' priority. */
	put32(fake_gicd, GICD_TYPER, 8);
	put32(fake_gicd, GICD_IIDR, 0x0100143b);
	put32(fake_gicd, GICD_PIDR2, 0x3b);
	put32(fake_gicd, GICD_CTLR, GICD_CTLR_ARE | GICD_CTLR_ENGRP1 | GICD_CTLR_ENGRP0);
	gic_nr_irqs = 288;
	for (uint32_t i = 32; i < gic_nr_irqs; i += 32)
		put32(fake_gicd, GICD_IGROUPR + i / 8, ~0u);
	memset(fake_gicd + GICD_IPRIORITYR + 32, PRIO_GUEST, gic_nr_irqs - 32);
	for (unsigned c = 0; c < FAKE_CPUS; c++) {
		uint8_t *rd = fake_gicr[c], *sgi = rd + GICR_SGI_BASE;
		uint64_t typer = ((uint64_t)c << 32) | ((uint64_t)c << 8) |
				 (c == FAKE_CPUS - 1 ? GICR_TYPER_LAST : 0);
		memcpy(rd + GICR_TYPER, &typer, 8);
		put32(rd + 0, GICR_IIDR, 0x0100143b);
		put32(rd, GICR_PIDR2, 0x3b);
		/* As gic_cpu_init leaves it. */
		put32(sgi, GICD_IGROUPR, ~(uint32_t)(BIT(SGI_KICK) | BIT(PPI_HYP_TIMER)));
		memset(sgi + GICD_IPRIORITYR, PRIO_GUEST, 32);
		sgi[GICD_IPRIORITYR + SGI_KICK] = PRIO_HYP;
		sgi[GICD_IPRIORITYR + PPI_MAINTENANCE] = PRIO_HYP;
		sgi[GICD_IPRIORITYR + PPI_HYP_TIMER] = PRIO_HYP;
		uint32_t en = BIT(SGI_KICK) | BIT(PPI_MAINTENANCE) | BIT(PPI_HYP_TIMER);
		put32(sgi, GICD_ISENABLER, en);
		put32(sgi, GICD_ICENABLER, en);
	}
	memset(fake_lrs, 0, sizeof(fake_lrs));
}

void fake_cpu_init(unsigned cpu)
{
	struct arm64_cpu *c = &cpus[cpu_checked(cpu)];

	if (!same_name(sysreg_names[ICH_HCR], "ich_hcr_el2") || !same_name(sysreg_names[VTR], "ich_vtr_el2") ||
	    !same_name(sysreg_names[ELRSR], "ich_elrsr_el2") || !same_name(sysreg_names[ICC_CTLR], "icc_ctlr_el1") ||
	    !same_name(sysreg_names[IAR0], "icc_iar0_el1") || !same_name(sysreg_names[DIR], "icc_dir_el1"))
		abort(); /* the enum above no longer matches the table */

	c->id = cpu;
	c->mpidr = cpu;
	c->stack_top = (uintptr_t)stacks[cpu] + sizeof(stacks[cpu]);
	c->frame = (struct guest_regs *)(uintptr_t)(c->stack_top - GUEST_FRAME_SIZE); /* as cpu_early */
	c->gicr = (uintptr_t)fake_gicr[cpu];
	c->lrs_idle = BIT(gic_nr_lrs) - 1;
	c->shared = false;   /* what a core that never entered a vCPU holds (.bss) */
	memset(c->last_ran, 0, sizeof(c->last_ran));
	c->vcpu = NULL;
	/* QEMU's CPU interface: 5 priority and preemption bits, 4 list registers. */
	sysregs[cpu][VTR] = (4ull << 29) | (4ull << 26) | (gic_nr_lrs - 1);
	sysregs[cpu][ICC_CTLR] = (4ull << 8) | ICC_CTLR_EOIMODE;
	sysregs[cpu][ICH_HCR] = ICH_HCR_EN;
	fake_cores[cpu].online = true;
}
