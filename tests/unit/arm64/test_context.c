/* SPDX-License-Identifier: MIT */
/*
 * arch/arm64/vcpu.c's vCPU switch halves (arch_vcpu_save/restore) on the fake core: every
 * register the context covers comes back, two vCPUs switched on one core keep apart, and the
 * context covers what arch_vcpu_run's reset clears.
 */
#include <string.h>
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vgicv3.h>
#include <tern/arch.h>
#include <tern/partition.h>
#include "check.h"
#include "system.h"
#include "tests.h"

/* The register's name as the fake sees it: sysreg.h spells some by their encodings. */
#define FAKE_NAME(reg) FAKE_NAME_(reg)
#define FAKE_NAME_(reg) #reg

struct ctx_reg {
	const char *name;   /* for the report */
	const char *fake;   /* the fake's cell */
};

/* Everything the context must carry, by hand: a register missed by save or restore shows here. */
static const struct ctx_reg ctx_regs[] = {
	{ "sctlr_el1", "sctlr_el1" }, { "cpacr_el1", "cpacr_el1" }, { "tcr_el1", "tcr_el1" },
	{ "ttbr0_el1", "ttbr0_el1" }, { "ttbr1_el1", "ttbr1_el1" }, { "mair_el1", "mair_el1" },
	{ "amair_el1", "amair_el1" }, { "vbar_el1", "vbar_el1" }, { "contextidr_el1", "contextidr_el1" },
	{ "tpidr_el1", "tpidr_el1" }, { "tpidr_el0", "tpidr_el0" }, { "tpidrro_el0", "tpidrro_el0" },
	{ "sp_el0", "sp_el0" }, { "sp_el1", "sp_el1" }, { "elr_el1", "elr_el1" },
	{ "spsr_el1", "spsr_el1" }, { "esr_el1", "esr_el1" }, { "far_el1", "far_el1" },
	{ "afsr0_el1", "afsr0_el1" }, { "afsr1_el1", "afsr1_el1" }, { "par_el1", "par_el1" },
	{ "csselr_el1", "csselr_el1" }, { "mdscr_el1", "mdscr_el1" }, { "cntkctl_el1", "cntkctl_el1" },
	{ "cntv_ctl_el0", "cntv_ctl_el0" }, { "cntv_cval_el0", "cntv_cval_el0" },
	{ "cntp_ctl_el0", "cntp_ctl_el0" }, { "cntp_cval_el0", "cntp_cval_el0" },
	{ "cntvoff_el2", "cntvoff_el2" },
	{ "apiakeylo_el1", FAKE_NAME(apiakeylo_el1) }, { "apiakeyhi_el1", FAKE_NAME(apiakeyhi_el1) },
	{ "apibkeylo_el1", FAKE_NAME(apibkeylo_el1) }, { "apibkeyhi_el1", FAKE_NAME(apibkeyhi_el1) },
	{ "apdakeylo_el1", FAKE_NAME(apdakeylo_el1) }, { "apdakeyhi_el1", FAKE_NAME(apdakeyhi_el1) },
	{ "apdbkeylo_el1", FAKE_NAME(apdbkeylo_el1) }, { "apdbkeyhi_el1", FAKE_NAME(apdbkeyhi_el1) },
	{ "apgakeylo_el1", FAKE_NAME(apgakeylo_el1) }, { "apgakeyhi_el1", FAKE_NAME(apgakeyhi_el1) },
	{ "fpcr", "fpcr" }, { "fpsr", "fpsr" },
	{ "ich_ap0r0_el2", "ich_ap0r0_el2" }, { "ich_ap0r1_el2", "ich_ap0r1_el2" },
	{ "ich_ap0r2_el2", "ich_ap0r2_el2" }, { "ich_ap0r3_el2", "ich_ap0r3_el2" },
	{ "ich_ap1r0_el2", "ich_ap1r0_el2" }, { "ich_ap1r1_el2", "ich_ap1r1_el2" },
	{ "ich_ap1r2_el2", "ich_ap1r2_el2" }, { "ich_ap1r3_el2", "ich_ap1r3_el2" },
	{ "ich_vmcr_el2", "ich_vmcr_el2" },
	{ "hcr_el2", "hcr_el2" }, { "vmpidr_el2", "vmpidr_el2" }, { "vttbr_el2", "vttbr_el2" },
};
#define NUM_CTX_REGS (sizeof(ctx_regs) / sizeof(ctx_regs[0]))

/*
 * A pending SGI (its list register is rebuilt from the vCPU's priorities at restore, which the
 * board sets to this one's) and an active one; `who` picks the SGI.
 */
#define LR_PENDING(who) (ICH_LR_PENDING | ICH_LR_GROUP1 | (0xa0ull << ICH_LR_PRIO_SHIFT) | (1u + (who)))
#define LR_ACTIVE(who)  (ICH_LR_ACTIVE | ICH_LR_GROUP1 | (0x80ull << ICH_LR_PRIO_SHIFT) | (9u + (who)) % 16u)

static struct vcpu *va, *vb;

/*
 * Two partitions, "a" on core 0 and "b" on core 1, each with its vCPU 0 running, its frame in
 * its context as on a shared core (arch_vcpu_run).
 */
static void context_board(void)
{
	fake_config_begin(2);
	add_partition("a", "0", 0);
	add_partition("b", "1", 0);
	boot_board();
	va = &partition_named("a")->vcpu[0];
	vb = &partition_named("b")->vcpu[0];
	cpus[0].context = arm64_vcpu_context(va);
	cpus[1].context = arm64_vcpu_context(vb);
	cpus[0].frame = &cpus[0].context->frame;
	cpus[1].frame = &cpus[1].context->frame;
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		cpus[cpu].pauth = true;
		/* 7 priority bits: all four active-priority registers of each group in use. */
		fake_sysreg_set(cpu, "ich_vtr_el2", (6ull << 29) | (6ull << 26) | (gic_nr_lrs - 1));
	}
	for (struct vcpu *v = va; v; v = v == va ? vb : NULL) {
		v->arch.redist.group = ~0u;
		memset(v->arch.redist.prio, 0xa0, 16);
	}
}

/* A value no other register, vCPU or round holds: `who` tells vCPUs and rounds apart. */
static uint64_t value_of(unsigned who, unsigned i)
{
	return 0x1000000000ull * (who + 1) + 0x100ull * (i + 1) + who;
}

/* Core `cpu` as a guest `who` left it: every register, Q register, frame slot, two list registers. */
static void fill(unsigned cpu, unsigned who)
{
	for (unsigned i = 0; i < NUM_CTX_REGS; i++)
		fake_sysreg_set(cpu, ctx_regs[i].fake, value_of(who, i));
	fake_sysreg_set(cpu, "ich_hcr_el2", ICH_HCR_EN);
	for (unsigned n = 0; n < 32; n++) {
		fake_fpregs[cpu][n][0] = value_of(who, 100 + n);
		fake_fpregs[cpu][n][1] = ~value_of(who, 100 + n);
	}
	struct guest_regs *r = fake_guest_regs(cpu);
	for (unsigned n = 0; n < 31; n++)
		r->x[n] = value_of(who, 200 + n);
	r->elr = value_of(who, 250);
	r->spsr = value_of(who, 251);
	memset(fake_lrs[cpu], 0, sizeof(fake_lrs[cpu]));
	fake_lrs[cpu][0] = LR_PENDING(who);
	fake_lrs[cpu][2] = LR_ACTIVE(who);
}

/* Every register a guest `who` left on core `cpu` is there: a difference names the register. */
static void check_filled(unsigned cpu, unsigned who)
{
	for (unsigned i = 0; i < NUM_CTX_REGS; i++) {
		uint64_t got = fake_sysreg(cpu, ctx_regs[i].fake);
		if (got != value_of(who, i))
			fprintf(stderr, "context: %s is 0x%llx, not 0x%llx\n", ctx_regs[i].name,
				(unsigned long long)got, (unsigned long long)value_of(who, i));
		CHECK_EQ(got, value_of(who, i));
	}
	for (unsigned n = 0; n < 32; n++) {
		CHECK_EQ(fake_fpregs[cpu][n][0], value_of(who, 100 + n));
		CHECK_EQ(fake_fpregs[cpu][n][1], ~value_of(who, 100 + n));
	}
	const struct guest_regs *r = fake_guest_regs(cpu);
	for (unsigned n = 0; n < 31; n++)
		CHECK_EQ(r->x[n], value_of(who, 200 + n));
	CHECK_EQ(r->elr, value_of(who, 250));
	CHECK_EQ(r->spsr, value_of(who, 251));
	CHECK_EQ(fake_lrs[cpu][0], LR_PENDING(who));
	CHECK_EQ(fake_lrs[cpu][1], 0);
	CHECK_EQ(fake_lrs[cpu][2], LR_ACTIVE(who));
	CHECK_EQ(fake_lrs[cpu][3], 0);
}

/* What another vCPU leaves on the core: every register of the table, and its own frame. */
static void clobber(unsigned cpu)
{
	static struct guest_regs other[2];

	cpus[cpu].frame = &other[cpu];
	fill(cpu, 7);
}

void test_context_save_restore_every_register(void)
{
	context_board();
	fill(0, 0);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(va)), FAKE_RETURNED);
	clobber(0);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_restore(va)), FAKE_RETURNED);
	check_filled(0, 0);
}

void test_context_save_quiesces_the_core(void)
{
	context_board();
	fill(0, 0);
	fake_sysreg_set(0, "cntv_ctl_el0", 1);   /* armed */
	fake_sysreg_set(0, "cntp_ctl_el0", 1);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(va)), FAKE_RETURNED);
	/* Nothing of va's that would fire into, or be seen by, the next vCPU. */
	CHECK_EQ(fake_sysreg(0, "cntv_ctl_el0"), 0);
	CHECK_EQ(fake_sysreg(0, "cntp_ctl_el0"), 0);
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		CHECK_EQ(fake_lrs[0][n], 0);
	CHECK_EQ(fake_sysreg(0, "ich_ap0r0_el2"), 0);
	CHECK_EQ(fake_sysreg(0, "ich_ap1r3_el2"), 0);
	CHECK_EQ(fake_sysreg(0, "hcr_el2"), HCR_RW);
	CHECK(virq_queue_empty(&cpus[0].vgic.queue));
	CHECK_EQ(cpus[0].vgic.sgi_held, 0);
	/* ... and it comes back armed on its own deadline, its list registers as they were. */
	clobber(0);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_restore(va)), FAKE_RETURNED);
	CHECK_EQ(fake_sysreg(0, "cntv_ctl_el0"), 1);
	CHECK_EQ(fake_sysreg(0, "cntv_cval_el0"), value_of(0, 25));
	CHECK(fake_lrs[0][0] & ICH_LR_PENDING);
	CHECK(fake_lrs[0][2] & ICH_LR_ACTIVE);
	CHECK_EQ(cpus[0].vcpu, va);
}

void test_context_two_vcpus_share_a_core(void)
{
	context_board();
	/* b's state, saved on its own core, then switched in on core 0 in place of a. */
	fill(1, 1);
	cpus[1].vgic.sgi_held = BIT(3);
	CHECK_EQ(FAKE_ON(1, arch_vcpu_save(vb)), FAKE_RETURNED);
	fill(0, 0);
	cpus[0].vgic.sgi_held = BIT(5);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(va)), FAKE_RETURNED);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_restore(vb)), FAKE_RETURNED);
	check_filled(0, 1);
	CHECK_EQ(cpus[0].vcpu, vb);
	CHECK_EQ(cpus[0].vgic.redist, &vb->arch.redist);
	CHECK_EQ(cpus[0].vgic.sgi_held, BIT(3));
	/* b runs and changes everything; then back to a: none of b's in a's, none of a's in b's. */
	fill(0, 2);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(vb)), FAKE_RETURNED);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_restore(va)), FAKE_RETURNED);
	check_filled(0, 0);
	CHECK_EQ(cpus[0].vcpu, va);
	CHECK_EQ(cpus[0].vgic.sgi_held, BIT(5));
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(va)), FAKE_RETURNED);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_restore(vb)), FAKE_RETURNED);
	check_filled(0, 2);
}

static bool in_table(const char *fake)
{
	for (unsigned i = 0; i < NUM_CTX_REGS; i++) {
		if (!strcmp(ctx_regs[i].fake, fake))
			return true;
	}
	return false;
}

/*
 * What arch_vcpu_run's reset clears, the context carries.  reset_el1's registers are
 * partition.h's lists (the hypervisor's image is the same as with them written out): each
 * one is in the table above, which the round trips prove.  The vGIC's reset runs here for
 * real: whatever of the table's kind it changes must be in the table.
 */
void test_context_covers_the_reset(void)
{
#define IN_TABLE(reg) CHECK(in_table(FAKE_NAME(reg)));
#define IN_TABLE_RESET(reg, reset) IN_TABLE(reg)
	ARM64_EL1_REGS(IN_TABLE_RESET)
	ARM64_PAUTH_REGS(IN_TABLE_RESET)
	ARM64_EL1_CARRIED_REGS(IN_TABLE)
#undef IN_TABLE_RESET
#undef IN_TABLE
	/* The core's own, which the reset also writes: its CPU interface's EOI mode, its group enable. */
	static const char *const core_own[] = { "icc_ctlr_el1", "icc_igrpen1_el1" };
	const uint64_t marker = 0x5a5a5a5a5a5a5a5aull;

	context_board();
	for (unsigned i = 0; i < fake_sysreg_count(); i++) {
		const char *name = fake_sysreg_name(i);
		if (strcmp(name, "ich_vtr_el2") && strcmp(name, "ich_elrsr_el2") && strcmp(name, "icc_iar0_el1"))
			fake_sysreg_set(0, name, marker);
	}
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		fake_lrs[0][n] = LR_PENDING(0);
	CHECK_EQ(FAKE_ON(0, vgic_vcpu_reset(&cpus[0], va)), FAKE_RETURNED);
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		CHECK_EQ(fake_lrs[0][n], 0);   /* the list registers: ctx.lr, checked above */
	for (unsigned i = 0; i < fake_sysreg_count(); i++) {
		const char *name = fake_sysreg_name(i);
		bool own = false;
		for (unsigned k = 0; k < sizeof(core_own) / sizeof(core_own[0]); k++)
			own |= !strcmp(name, core_own[k]);
		bool read_only = !strcmp(name, "ich_vtr_el2") || !strcmp(name, "ich_elrsr_el2") ||
				 !strcmp(name, "icc_iar0_el1");
		if (fake_sysreg(0, name) == marker || own || read_only || !strcmp(name, "ich_hcr_el2"))
			continue;
		if (!in_table(name))
			fprintf(stderr, "context: the vGIC reset writes %s, which no switch carries\n", name);
		CHECK(in_table(name));
	}
}

/* SVE and SME state is not in the context: a core that offers it to guests cannot switch them. */
void test_context_sve_sme_cores_do_not_switch(void)
{
	struct arm64_cpu c = { 0 };

	CHECK(arm64_vcpu_switchable(&c));
	c.sve = true;
	CHECK(!arm64_vcpu_switchable(&c));
	c.sve = false;
	c.sme = true;
	CHECK(!arm64_vcpu_switchable(&c));
	c.sme = false;
	c.pauth = true;   /* its keys are carried */
	CHECK(arm64_vcpu_switchable(&c));
}

/*
 * A vCPU's reset (arch_vcpu_run: a partition's new life) leaves nothing of EL1 that the
 * previous guest wrote and can read back: the registers it clears come back at their reset
 * values, those that were once only carried by a switch (AMAIR, AFSR0/1, PAR, CSSELR) too.
 */
void test_reset_leaves_nothing_of_the_previous_guest(void)
{
	static const char *const once_carried[] = {
		"amair_el1", "afsr0_el1", "afsr1_el1", "par_el1", "csselr_el1",
	};
	const uint64_t marker = 0x5a5a5a5a5a5a5a5aull;

	context_board();
#define SET_MARKER(reg, reset) fake_sysreg_set(0, FAKE_NAME(reg), marker);
	ARM64_EL1_REGS(SET_MARKER)
	ARM64_PAUTH_REGS(SET_MARKER)
#undef SET_MARKER
	for (unsigned i = 0; i < sizeof(once_carried) / sizeof(once_carried[0]); i++)
		fake_sysreg_set(0, once_carried[i], marker);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_run(va, 0x40080000u, 0)), FAKE_EXIT_RUN);
#define AT_RESET(reg, reset) CHECK_EQ(fake_sysreg(0, FAKE_NAME(reg)), (uint64_t)(reset));
	ARM64_EL1_REGS(AT_RESET)
	ARM64_PAUTH_REGS(AT_RESET)
#undef AT_RESET
	for (unsigned i = 0; i < sizeof(once_carried) / sizeof(once_carried[0]); i++) {
		if (fake_sysreg(0, once_carried[i]) != 0)
			fprintf(stderr, "reset: %s keeps the previous guest's value\n", once_carried[i]);
		CHECK_EQ(fake_sysreg(0, once_carried[i]), 0);
	}
}
