/* SPDX-License-Identifier: MIT */
/* Core bring-up, idling, kicks, and entering a vCPU. */
#include <arch/entry.h>
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <arch/psci.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/platform.h>

#define SPSR_EL1H_MASKED    0x3c5u    /* EL1h, D A I F masked: the boot protocol's entry state */
#define SCTLR_EL1_RESET     0x30d00800u
#define CNTHCTL_EL1PCTEN    BIT(0)
#define CNTHCTL_EL1PCEN     BIT(1)

struct arm64_cpu cpus[MAX_CPUS];
/* Page-aligned, in the image's first 2 MiB (hyp.ld): mmu.c leaves each guard page out. */
struct core_stack cpu_stacks[MAX_CPUS] __attribute__((aligned(4096), section(".noinit.stacks")));
uint8_t panic_stacks[MAX_CPUS][PANIC_STACK_SIZE] __attribute__((aligned(16), section(".noinit")));

static uint64_t firmware_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	register uint64_t x0 __asm__("x0") = fn;
	register uint64_t x1 __asm__("x1") = a1;
	register uint64_t x2 __asm__("x2") = a2;
	register uint64_t x3 __asm__("x3") = a3;

	__asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
	return x0;
}

static void cpu_early(unsigned id)
{
	struct arm64_cpu *c = &cpus[id];

	c->id = id;
	c->stack_top = (uintptr_t)cpu_stacks[id].stack + STACK_SIZE;
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
	uint64_t intid = read_sysreg(icc_iar0_el1);
	while (intid < 1020) {
		if (intid == platform.uart_irq)
			console_rx();
		write_sysreg(icc_eoir0_el1, intid);
		write_sysreg(icc_dir_el1, intid);
		intid = read_sysreg(icc_iar0_el1);
	}
	write_sysreg(cnthp_ctl_el2, 0); /* its level drops with it: nothing stays pending */
	isb();
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

/*
 * A direct vCPU's SGI writes are filtered in the vector (vectors.S, guest_sgi) when its
 * partition's cores are contiguous: vCPU i's target-list bit then maps to physical Aff0
 * cpus[0] + i by one shift.  Anything else takes the C path.
 */
static void sgi_fast_path_setup(struct arm64_cpu *c, const struct partition *p)
{
	uint32_t first = p->vcpu[0].pcpu;
	bool contiguous = first + p->num_vcpus <= 16;

	for (uint32_t i = 0; i < p->num_vcpus; i++)
		contiguous &= p->vcpu[i].pcpu == first + i;
	c->sgi_vcpus = c->direct && contiguous ? BIT(p->num_vcpus) - 1 : 0;
	c->sgi_shift = first;
}

/*
 * Zero the FP/SIMD, SVE and SME registers: a new life of the partition (or a vCPU switched on
 * again) finds nothing of the previous one.  Leaving streaming mode and switching ZA off comes
 * first: it zeroes the streaming vectors, and ZA reads zero when the guest next enables it.
 * The vectors are zeroed at EL2's vector length, the core's longest (ZCR_EL2).
 */
static void reset_fp(const struct arm64_cpu *c)
{
	if (c->sme) {
		write_sysreg(svcr, 0);
		isb();
	}
	if (c->sve) {
		__asm__ volatile(".arch_extension sve\n\t"
				 ".irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, "
				 "17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31\n\t"
				 "dup z\\n\\().b, #0\n\t"
				 ".endr\n\t"
				 ".irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15\n\t"
				 "pfalse p\\n\\().b\n\t"
				 ".endr\n\t"
				 "wrffr p0.b" ::: "memory");
	} else {
		__asm__ volatile(".arch_extension simd\n\t"
				 ".irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, "
				 "17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31\n\t"
				 "movi v\\n\\().2d, #0\n\t"
				 ".endr" ::: "memory");
	}
	write_sysreg(fpcr, 0);
	write_sysreg(fpsr, 0);
}

/* Everything of EL1 the guest may have changed, back to a cold core's state. */
static void reset_el1(const struct arm64_cpu *c)
{
	write_sysreg(sctlr_el1, SCTLR_EL1_RESET);
	write_sysreg(cpacr_el1, 0);
	write_sysreg(tcr_el1, 0);
	write_sysreg(ttbr0_el1, 0);
	write_sysreg(ttbr1_el1, 0);
	write_sysreg(mair_el1, 0);
	write_sysreg(vbar_el1, 0);
	write_sysreg(contextidr_el1, 0);
	write_sysreg(tpidr_el1, 0);
	write_sysreg(tpidr_el0, 0);
	write_sysreg(tpidrro_el0, 0);
	write_sysreg(sp_el0, 0);
	write_sysreg(sp_el1, 0);
	write_sysreg(elr_el1, 0);
	write_sysreg(spsr_el1, 0);
	write_sysreg(esr_el1, 0);
	write_sysreg(far_el1, 0);
	write_sysreg(cntkctl_el1, 0);
	write_sysreg(cntv_ctl_el0, 0);
	write_sysreg(cntp_ctl_el0, 0);
	write_sysreg(mdscr_el1, 0);
	if (c->sve)
		write_sysreg(zcr_el1, 0);
	if (c->sme) {
		write_sysreg(smcr_el1, 0);
		write_sysreg(smpri_el1, 0);
		write_sysreg(tpidr2_el0, 0);
	}
	if (c->pauth) {
		write_sysreg(apiakeylo_el1, 0);
		write_sysreg(apiakeyhi_el1, 0);
		write_sysreg(apibkeylo_el1, 0);
		write_sysreg(apibkeyhi_el1, 0);
		write_sysreg(apdakeylo_el1, 0);
		write_sysreg(apdakeyhi_el1, 0);
		write_sysreg(apdbkeylo_el1, 0);
		write_sysreg(apdbkeyhi_el1, 0);
		write_sysreg(apgakeylo_el1, 0);
		write_sysreg(apgakeyhi_el1, 0);
	}
	reset_fp(c);
}

void arch_vcpu_run(struct vcpu *v, uint64_t entry, uint64_t context)
{
	struct arm64_cpu *c = this_cpu();
	const struct partition *p = v->partition;
	struct guest_regs *frame = guest_frame(c);
	/*
	 * IMPLEMENTATION DEFINED registers tune the core below the architecture:
	 * not the guest's (they trap and become undefined; QEMU 7.2 ignores TIDCP).
	 */
	uint64_t hcr = HCR_VM | HCR_SWIO | HCR_FMO | HCR_AMO | HCR_TSC | HCR_TIDCP | HCR_TSW | HCR_RW;
	bool direct = p->cfg->flags & TERN_PF_IRQ_DIRECT;

	/*
	 * Trap-and-inject routes the guest's interrupts (Group 1) to EL2 (IMO).
	 * Direct leaves IMO clear: the core's GIC CPU interface delivers them to
	 * EL1 and the guest acknowledges and EOIs them itself; FMO keeps the
	 * hypervisor's Group 0 control path and traps the guest's SGI writes.
	 */
	if (!direct)
		hcr |= HCR_IMO;
	/* Pointer authentication's instructions and keys are the guest's, as the core is. */
	if (c->pauth)
		hcr |= HCR_API | HCR_APK;
	if (!(p->cfg->flags & TERN_PF_WFI_NATIVE))
		hcr |= HCR_TWI | HCR_TWE;
	c->direct = direct;
	sgi_fast_path_setup(c, p);
	write_sysreg(icc_igrpen1_el1, 1); /* off while the core idled */
	vgic_vcpu_reset(c, v);
	reset_el1(c);
	write_sysreg(vmpidr_el2, BIT(31) | v->index);
	write_sysreg(vpidr_el2, read_sysreg(midr_el1));
	write_sysreg(vttbr_el2, p->arch.vttbr);
	write_sysreg(hcr_el2, hcr);
	isb();
	/*
	 * A restarted partition must not see translations or instructions from its previous
	 * life.  The core serves no other VMID, so drop all EL1 entries (the narrower TLBI
	 * VMALLS12E1 also never completes under QEMU 7.2 icount while another core spins) and
	 * this core's instruction cache: the reload cleaned the partition's RAM to memory but
	 * invalidated instructions only where it ran, never on other partitions' cores.
	 */
	__asm__ volatile("tlbi alle1\n\tic iallu\n\tdsb nsh" ::: "memory");
	isb();

	(void)memset(frame, 0, sizeof(*frame));
	if (!v->partition->first_entry)
		v->partition->first_entry = arch_counter();
	frame->x[0] = context;
	frame->elr = entry;
	frame->spsr = SPSR_EL1H_MASKED;
	guest_enter(frame);
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

/* arm64 boards pass their ECAM through: device MSIs are the SMMU's and the GIC's business. */
bool arch_msi_target(const struct partition *p, uint64_t guest_addr, uint64_t *host_addr)
{
	(void)p;
	(void)guest_addr;
	(void)host_addr;
	return false;
}
