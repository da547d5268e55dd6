/* SPDX-License-Identifier: MIT */
/* The physical core: bring-up, idling, kicks, the counter, the board's power, a hypervisor panic. */
#include <arch/entry.h>
#include <arch/firmware.h>
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vgicv3.h>
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/platform.h>

#define CNTHCTL_EL1PCTEN    BIT(0)
#define CNTHCTL_EL1PCEN     BIT(1)

struct arm64_cpu cpus[MAX_CPUS];
/* Page-aligned, in the image's first 2 MiB (hyp.ld): mmu.c leaves each guard page out. */
struct core_stack cpu_stacks[MAX_CPUS] __attribute__((aligned(4096), section(".noinit.stacks")));
uint8_t panic_stacks[MAX_CPUS][PANIC_STACK_SIZE] __attribute__((aligned(16), section(".noinit")));

static void cpu_early(unsigned id)
{
	struct arm64_cpu *c = &cpus[id];

	c->id = id;
	c->stack_top = (uintptr_t)cpu_stacks[id].stack + STACK_SIZE;
	c->frame = (struct guest_regs *)(uintptr_t)(c->stack_top - GUEST_FRAME_SIZE);
	c->panic_top = (uintptr_t)panic_stacks[id] + PANIC_STACK_SIZE;
	c->mpidr = read_sysreg(mpidr_el1);
	write_sysreg(tpidr_el2, (uintptr_t)c);
	write_sysreg(vbar_el2, (uintptr_t)hyp_vectors);
	isb();
}

/*
 * FP/SIMD, SVE and SME belong to the guest, as the core is the vCPU's alone: nothing traps,
 * and EL2 lets EL1 choose any vector length up to the core's longest, as the bare board does.
 * A trap bit of a feature the core lacks is RES1.
 */
static void cpu_features_init(struct arm64_cpu *c)
{
	uint64_t isar1 = read_sysreg(id_aa64isar1_el1);
	uint64_t isar2 = read_sysreg(id_aa64isar2_el1);
	uint64_t cptr = CPTR_EL2_RES1;

	c->sve = ID_FIELD(read_sysreg(id_aa64pfr0_el1), ID_AA64PFR0_SVE) != 0;
	c->sme = ID_FIELD(read_sysreg(id_aa64pfr1_el1), ID_AA64PFR1_SME) != 0;
	c->pauth = ID_FIELD(isar1, ID_AA64ISAR1_APA) != 0 || ID_FIELD(isar1, ID_AA64ISAR1_API) != 0 ||
		   ID_FIELD(isar1, ID_AA64ISAR1_GPA) != 0 || ID_FIELD(isar1, ID_AA64ISAR1_GPI) != 0 ||
		   ID_FIELD(isar2, ID_AA64ISAR2_APA3) != 0 || ID_FIELD(isar2, ID_AA64ISAR2_GPA3) != 0;
	if (!c->sve)
		cptr |= CPTR_EL2_TZ;
	if (!c->sme)
		cptr |= CPTR_EL2_TSM;
	write_sysreg(cptr_el2, cptr);
	isb();
	if (c->sve)
		write_sysreg(zcr_el2, ZCR_LEN_MAX);
	if (c->sme) {
		uint64_t smfr0 = read_sysreg(id_aa64smfr0_el1);
		uint64_t smcr = ZCR_LEN_MAX;

		/* Streaming mode's full instruction set and SME2's ZT0, where the core has them. */
		if (smfr0 & ID_AA64SMFR0_FA64)
			smcr |= SMCR_FA64;
		if (ID_FIELD(smfr0, ID_AA64SMFR0_SMEVER) != 0)
			smcr |= SMCR_EZT0;
		write_sysreg(smcr_el2, smcr);
	}
}

static void cpu_local_init(struct arm64_cpu *c)
{
	cpu_features_init(c);
	write_sysreg(hstr_el2, 0);
	/* The guest owns the core's PMU too: EL2 keeps none of its counters. */
	write_sysreg(mdcr_el2, (read_sysreg(pmcr_el0) >> 11) & 0x1f);
	write_sysreg(cntvoff_el2, 0);
	write_sysreg(cnthctl_el2, CNTHCTL_EL1PCTEN | CNTHCTL_EL1PCEN);
	write_sysreg(hcr_el2, HCR_RW);
	isb();
	gic_cpu_init(c);
}

void arm64_boot_primary(unsigned id, uint64_t entry_time, paddr_t fdt)
{
	boot_times.entry = entry_time;
	cpu_early(id);
	mmu_init_tables();
	mmu_enable();
	boot_times.mmu_on = arch_counter();
	if (!mmu_text_protected()) {
		console_panic_line("error: the hypervisor's text is writable at EL2 (W^X broken), "
				   "or a stack's guard page is mapped");
		arch_board_off();
	}
#ifdef TERN_TEST_HOOK_STACK_OVERFLOW
	/* Test builds only (tests/system/test_hyp_map.py): a push past the end of this core's stack. */
	__asm__ volatile("sub sp, sp, %0\n\tstr xzr, [sp]" : : "i"(STACK_SIZE) : "memory");
#endif
	gic_dist_init();
	cpu_local_init(&cpus[id]);
	tern_main(fdt);
}

void arm64_boot_secondary(unsigned id)
{
	cpu_early(id);
	mmu_enable();
	cpu_local_init(&cpus[id]);
	cpu_idle(id);
}

unsigned arch_cpu_id(void)
{
	return (unsigned)this_cpu()->id;
}

bool arch_cpu_start(unsigned pcpu)
{
	if (pcpu >= MAX_CPUS)
		return false;
	/* QEMU's firmware matches the exact MPIDR: Aff0 only, no RES1 bit 31. */
	return firmware_call(PSCI_CPU_ON_64, pcpu, (uintptr_t)secondary_entry, pcpu) == 0;
}

/*
 * YIELD: under QEMU's icount every core runs in turn on one thread, and a core that waits for
 * another without it can keep that core from running.
 */
void arch_cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

void arch_cpu_kick(unsigned pcpu)
{
	gic_send_sgi(pcpu, SGI_KICK);
}

/*
 * An idle core waits for the control path (Group 0) alone.  Group 1 is off at its CPU
 * interface, so a guest interrupt routed here (an SPI aimed at a vCPU that is off) stays
 * pending in the GIC for when the vCPU runs again, instead of being taken and lost.  A
 * deadline arms the EL2 physical timer, a Group 0 PPI too.
 */
void arch_cpu_idle_wait(uint64_t deadline)
{
	write_sysreg(icc_igrpen1_el1, 0);
	if (deadline) {
		write_sysreg(cnthp_cval_el2, deadline);
		write_sysreg(cnthp_ctl_el2, CNTHP_CTL_ENABLE);
	}
	isb();
	wfi();
	/*
	 * Off before the acknowledgements: its level drops with it, so nothing stays pending.  Still
	 * high, it came back pending after each deactivation, and the loop below never ended.
	 */
	write_sysreg(cnthp_ctl_el2, 0);
	isb();
	uint64_t intid = read_sysreg(icc_iar0_el1);
	while (intid < 1020) {
		if (intid == platform.uart_irq)
			console_rx();
		write_sysreg(icc_eoir0_el1, intid);
		write_sysreg(icc_dir_el1, intid);
		intid = read_sysreg(icc_iar0_el1);
	}
}

/*
 * arch_cpu_idle_wait with Group 1 off while it sleeps: the guest's interrupts (its devices'
 * and its virtual timer's under trap-and-inject; a direct guest's own, whose ICC_IGRPEN1 this
 * is) stay pending in the GIC and are taken once it runs again.  What its kicks carried for the
 * vGIC is applied here, as arm64_guest_fiq would after a kick it did not sleep in.
 */
void arch_vcpu_wait(struct vcpu *v)
{
	uint64_t group1 = read_sysreg(icc_igrpen1_el1);

	(void)v;
	arch_cpu_idle_wait(0);
	write_sysreg(icc_igrpen1_el1, group1);
	isb();
	vgic_kicked(this_cpu());
}

void arch_board_off(void)
{
	(void)firmware_call(PSCI_SYSTEM_OFF, 0, 0, 0);
	for (;;)
		wfi();
}

uint64_t arch_ipa_limit(void)
{
	return GiB(4); /* VTCR_EL2.T0SZ = 32 */
}

uint64_t arch_counter(void)
{
	return read_sysreg(cntpct_el0);
}

uint64_t arch_counter_freq(void)
{
	return read_sysreg(cntfrq_el0);
}

static const char *current_partition_name(void)
{
	struct vcpu *v = this_cpu()->vcpu;

	return v ? v->partition->name : "-";
}

#define EC_DABT_EL2 0x25u

void arm64_hyp_panic(struct guest_regs *r, int async, uint64_t sp)
{
	struct arm64_cpu *c = this_cpu();
	uint64_t esr = read_sysreg(esr_el2);
	uint64_t far = read_sysreg(far_el2);
	bool overflow = !async && (esr >> 26) == EC_DABT_EL2 &&
			far - (uintptr_t)cpu_stacks[c->id].guard < STACK_GUARD;

	if (c->panicking)
		arch_board_off(); /* the report itself faulted */
	c->panicking = true;
	/* Straight to the UART: the console's rings and locks may be what went wrong. */
	console_panic_line("PANIC cpu=%u partition=%s %s esr=0x%llx far=0x%llx elr=0x%llx spsr=0x%llx sp=0x%llx",
			   arch_cpu_id(), current_partition_name(),
			   async ? "interrupt/SError at EL2"
				 : overflow ? "stack overflow at EL2 (its guard page)" : "exception at EL2",
			   (unsigned long long)esr, (unsigned long long)far,
			   (unsigned long long)r->elr, (unsigned long long)r->spsr, (unsigned long long)sp);
	for (int i = 0; i < 30; i += 3)
		console_panic_line("PANIC x%02d=0x%016llx x%02d=0x%016llx x%02d=0x%016llx", i,
				   (unsigned long long)r->x[i], i + 1, (unsigned long long)r->x[i + 1],
				   i + 2, (unsigned long long)r->x[i + 2]);
	arch_board_off();
}
