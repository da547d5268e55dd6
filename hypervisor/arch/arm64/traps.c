/* SPDX-License-Identifier: MIT */
/* Everything that brings a guest into EL2 other than the interrupt fast path. */
#include <arch/entry.h>
#include <arch/decode.h>
#include <arch/firmware.h>
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vgicv3.h>
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/platform.h>
#include <tern/virtio_mmio.h>

/* DFSC values of a data abort injected into the guest. */
#define DFSC_EXTERNAL           0x10
#define DFSC_ALIGNMENT          0x21
#define ISS_WNR                 BIT(6)

/* Set/way cache maintenance: DC ISW, DC CSW, DC CISW (Op0 1, Op1 0, CRn 7, Op2 2). */
#define ISS_DC_ISW              SYSREG_ISS(1, 0, 7, 6, 2)
#define ISS_DC_CSW              SYSREG_ISS(1, 0, 7, 10, 2)
#define ISS_DC_CISW             SYSREG_ISS(1, 0, 7, 14, 2)
#define SETWAY_LEVEL_MASK       0xeULL   /* bits 3:1: the cache level; the rest set and way */

static uint64_t reg_get(const struct guest_regs *r, unsigned n)
{
	return n == 31 ? 0 : r->x[n];
}

static void reg_set(struct guest_regs *r, unsigned n, uint64_t v)
{
	if (n != 31)
		r->x[n] = v;
}

/* Return past the trapped instruction, whatever its length (and an IT block's state). */
static void skip_instruction(struct guest_regs *r, uint64_t esr)
{
	r->elr += esr_insn_len(esr);
	r->spsr = esr_advance_it(r->spsr);
}

static bool spsr_from_el1(uint64_t spsr)
{
	return ((spsr >> 2) & 3) == 1 && !(spsr & BIT(4));
}

/* Where the guest's EL1 takes a synchronous exception from the PSTATE `spsr`. */
static uint64_t sync_vector(uint64_t spsr)
{
	/* EL1t, EL1h, or a lower EL in AArch64 or AArch32. */
	uint64_t offset = !spsr_from_el1(spsr) ? ((spsr & BIT(4)) ? 0x600 : 0x400) :
			  (spsr & 1) ? 0x200 : 0x000;

	return read_sysreg(vbar_el1) + offset;
}

/* Take a synchronous exception into the guest's EL1 vector, as the hardware would. */
static void inject_sync(struct guest_regs *r, uint64_t esr_el1, uint64_t far)
{
	write_sysreg(esr_el1, esr_el1);
	write_sysreg(far_el1, far);
	write_sysreg(elr_el1, r->elr);
	write_sysreg(spsr_el1, r->spsr);
	r->elr = sync_vector(r->spsr);
	r->spsr = 0x3c5u /* EL1h, DAIF masked */;
}

/* Deliver an Undefined Instruction exception to the guest. */
static void inject_undef(struct vcpu *v, struct guest_regs *r, uint64_t esr)
{
	/* cppcheck-suppress badBitmaskCheck ; EC_UNKNOWN is 0: the syndrome's class, said */
	inject_sync(r, ((uint64_t)EC_UNKNOWN << 26) | (esr & ESR_IL), 0);
	vcpu_count(v, STAT_UNDEF_INJECTED);
}

/* A data abort for an access the emulated device refuses, with the given fault status. */
static void inject_data_abort(struct vcpu *v, struct guest_regs *r, uint64_t esr, bool write,
			      uint32_t dfsc)
{
	uint64_t ec = spsr_from_el1(r->spsr) ? (uint64_t)EC_DABT_CUR : (uint64_t)EC_DABT_LOW;

	inject_sync(r, (ec << 26) | (esr & ESR_IL) | (write ? ISS_WNR : 0) | dfsc,
		    read_sysreg(far_el2));
	vcpu_count(v, STAT_ABORT_INJECTED);
}

/*
 * Set/way maintenance reaches caches other partitions' cores share, so it traps
 * (HCR_EL2.TSW).  A guest sweeping a cache by set and way wants its data in memory: the
 * hypervisor cleans and invalidates the partition's own RAM by address instead, once per
 * sweep (at set 0, way 0 of a level, which every sweep visits once), and nothing else.
 */
static void handle_setway(struct vcpu *v, uint64_t value)
{
	const struct tern_config_partition *c = v->partition->cfg;

	vcpu_count(v, STAT_SETWAY);
	if (!(value & ~SETWAY_LEVEL_MASK))
		arch_sync_guest_memory(c->ram_hpa, c->ram_size);
}

static void handle_sysreg(struct vcpu *v, struct guest_regs *r, uint64_t esr)
{
	struct esr_sysreg s;

	esr_sysreg(esr, &s);
	/* cppcheck-suppress[misra-c2012-10.1,misra-c2012-12.2] ; SYSREG_ISS() serves vectors.S too */
	if (!s.read && s.id == ISS_ICC_SGI1R) {
		vgic_send_sgi(v, reg_get(r, s.rt));
	/* cppcheck-suppress[misra-c2012-10.1,misra-c2012-12.2] ; SYSREG_ISS() serves vectors.S too */
	} else if (!s.read && (s.id == ISS_ICC_ASGI1R || s.id == ISS_ICC_SGI0R)) {
		/* Group 0 / alias SGIs: guests run Group 1 only; refuse rather than forward. */
		vcpu_count(v, STAT_SGI_DENIED);
	/* cppcheck-suppress[misra-c2012-10.1,misra-c2012-12.2] ; SYSREG_ISS() serves vectors.S too */
	} else if (!s.read && (s.id == ISS_DC_ISW || s.id == ISS_DC_CSW || s.id == ISS_DC_CISW)) {
		handle_setway(v, reg_get(r, s.rt));
	} else {
		inject_undef(v, r, esr);
		return;
	}
	skip_instruction(r, esr);
}

/* One of the guest's timers raises its interrupt now (its PPI enabled): it is on its way. */
static bool timer_due(uint64_t ctl, uint32_t enabled, uint32_t ppi)
{
	return (ctl & (CNT_CTL_ENABLE | CNT_CTL_IMASK | CNT_CTL_ISTATUS)) ==
	       (CNT_CTL_ENABLE | CNT_CTL_ISTATUS) && (enabled & BIT(ppi)) != 0u;
}

/*
 * A shared core's WFI with no list register pending: it gives the core up unless something
 * else is on its way to the guest (SGIs posted to it, its own timers' interrupts), which ends
 * the WFI at once.  vectors.S has stepped past it, so the guest resumes after it.
 */
static __attribute__((noinline)) void shared_core_wfi(struct arm64_cpu *c)
{
	uint32_t enabled = atomic_load(&c->vgic.redist->enabled);

	if (!vgic_posted_pending(c) && !timer_due(read_sysreg(cntv_ctl_el0), enabled, PPI_VTIMER) &&
	    !timer_due(read_sysreg(cntp_ctl_el0), enabled, PPI_PTIMER))
		sched_guest_waits(c->vcpu);
}

/*
 * A trapped WFI that vectors.S could not settle alone: virtual interrupts are in flight, or
 * the core is shared (its lrs_idle never matches).
 */
void arm64_guest_wfi(struct guest_regs *r)
{
	(void)r;
	vcpu_count(this_cpu()->vcpu, STAT_EXIT_WFI);
	if (vgic_lrs_pending())
		return;
	if (this_cpu()->shared)
		shared_core_wfi(this_cpu());
	else
		wfi(); /* the interrupt that ends it is taken after the return to the guest */
}

/*
 * An access to nothing the partition has: the guest takes the synchronous external abort the
 * board's bus raises, if its fault policy says so. Not when what failed is the fetch of the
 * very vector it would be sent to: that would repeat for ever.
 */
static bool inject_outside_access(struct vcpu *v, struct guest_regs *r, uint64_t esr,
				  uint64_t ipa)
{
	uint64_t far = read_sysreg(far_el2);

	if (!esr_unmapped_access(esr) || r->elr == sync_vector(r->spsr) ||
	    !partition_fault_to_guest(v, "ipa=0x%llx pc=0x%llx esr=0x%llx",
				      (unsigned long long)ipa, (unsigned long long)r->elr,
				      (unsigned long long)esr))
		return false;
	inject_sync(r, esr_external_abort(esr, spsr_from_el1(r->spsr)), far);
	return true;
}

/* The trapped access's frame and syndrome (mmio_trap's hooks come back with the access only). */
void arch_mmio_complete(struct vcpu *v, const struct mmio_access *a)
{
	struct guest_regs *r = guest_frame(this_cpu());
	struct esr_data_access d;

	(void)v;
	esr_data_abort(a->insn, &d);
	if (!a->write)
		reg_set(r, d.rt, esr_load_value(&d, a->value));
	skip_instruction(r, a->insn);
}

void arch_mmio_bus_fault(struct vcpu *v, const struct mmio_access *a, enum mmio_result why)
{
	inject_data_abort(v, guest_frame(this_cpu()), a->insn, a->write,
			  why == MMIO_MISALIGNED ? DFSC_ALIGNMENT : DFSC_EXTERNAL);
}

static __attribute__((noreturn)) void abort_fault(struct vcpu *v, struct guest_regs *r, uint64_t esr,
						  uint64_t ipa, const char *why)
{
	partition_fault(v, "ipa=0x%llx pc=0x%llx esr=0x%llx%s", (unsigned long long)ipa,
			(unsigned long long)r->elr, (unsigned long long)esr, why);
}

void arch_mmio_outside(struct vcpu *v, const struct mmio_access *a)
{
	struct guest_regs *r = guest_frame(this_cpu());

	if (!mmio_claimed(v->partition, a->ipa) && inject_outside_access(v, r, a->insn, a->ipa))
		return;
	abort_fault(v, r, a->insn, a->ipa, "");
}

static void handle_abort(struct vcpu *v, struct guest_regs *r, uint64_t esr, bool data)
{
	uint64_t far = read_sysreg(far_el2);
	uint64_t ipa = ((read_sysreg(hpfar_el2) >> 4) << 12) | (far & 0xfff);
	struct esr_data_access d;

	esr_data_abort(esr, &d);
	if (data && d.valid) {
		struct mmio_access a = { .ipa = ipa, .size = d.size, .write = d.write, .insn = esr };

		if (d.write)
			a.value = reg_get(r, d.rt) & (d.size < 8 ? BIT(d.size * 8) - 1 : ~0ULL);
		mmio_trap(v, &a);
		return;
	}
	if (!mmio_claimed(v->partition, ipa) && inject_outside_access(v, r, esr, ipa))
		return;
	abort_fault(v, r, esr, ipa, data ? " (not emulatable: no syndrome)" : " (instruction fetch)");
}

void arm64_guest_sync(struct guest_regs *r)
{
	struct vcpu *v = this_cpu()->vcpu;
	uint64_t esr = read_sysreg(esr_el2);
	uint64_t ec = ESR_EC(esr);

	switch (ec) {
	case EC_HVC64:
		vcpu_count(v, STAT_EXIT_HVC);
		arm64_handle_call(v, r);
		return;
	case EC_SMC64:
		vcpu_count(v, STAT_EXIT_SMC);
		skip_instruction(r, esr); /* a trapped SMC returns to itself */
		arm64_handle_call(v, r);
		return;
	case EC_SYSREG:
		vcpu_count(v, STAT_EXIT_SYSREG);
		handle_sysreg(v, r, esr);
		return;
	case EC_DABT_LOW:
		handle_abort(v, r, esr, true);
		return;
	case EC_IABT_LOW:
		handle_abort(v, r, esr, false);
		return;
	default:
		break;
	}
	/* From the guest's AArch32 EL0: WFI/WFE and coprocessor accesses that trap. */
	if (ec == EC_WFX || ec == EC_CP15_32 || ec == EC_CP15_64 || ec == EC_CP14_32 ||
	    ec == EC_CP14_LS || ec == EC_CP14_64) {
		vcpu_count(v, ec != EC_WFX ? STAT_EXIT_SYSREG : (esr & 1) ? STAT_EXIT_WFE : STAT_EXIT_WFI);
		/* A failed condition does nothing; WFx is a hint: the core is the guest's alone. */
		if (!esr_cond_passed(esr, r->spsr) || ec == EC_WFX)
			skip_instruction(r, esr);
		else
			inject_undef(v, r, esr);
		return;
	}
	vcpu_count(v, STAT_EXIT_OTHER);
	partition_fault(v, "unhandled exception class 0x%llx pc=0x%llx esr=0x%llx",
			(unsigned long long)ec, (unsigned long long)r->elr, (unsigned long long)esr);
}

void arm64_guest_irq(uint32_t intid, struct guest_regs *r)
{
	struct arm64_cpu *c = this_cpu();
	struct vcpu *v = c->vcpu;

	(void)r;
	if (intid >= 1020)
		return; /* spurious */
	vcpu_count(v, STAT_EXIT_IRQ);
	write_sysreg(icc_eoir1_el1, intid);
	/* A VirtIO slot's interrupt takes its device's completions first; none: not the guest's. */
	if (vgic_owned_hw(c, intid) && (!vgic_hyp_first(c, intid) || virtio_irq_taken(v, intid))) {
		vgic_inject(c, intid); /* deactivated later by the guest's EOI */
		return;
	}
	write_sysreg(icc_dir_el1, intid);
	if (intid == PPI_MAINTENANCE)
		vgic_maintenance(c);
}

/*
 * The control path: a kick from another core (stop, restart, SGIs and interrupt state for a
 * trapping guest, console lines to drain), the console's input, or a shared core's
 * scheduling event (arch_sched_timer: only shared cores arm the EL2 timer while a guest runs).
 */
void arm64_guest_fiq(struct guest_regs *r)
{
	struct arm64_cpu *c = this_cpu();
	uint64_t intid = read_sysreg(icc_iar0_el1);

	(void)r;
	if (intid >= 1020)
		return;
	if (intid == platform.uart_irq)
		console_rx(); /* drained before the EOI: the UART's line is level-sensitive */
	write_sysreg(icc_eoir0_el1, intid);
	if (!c->direct)
		write_sysreg(icc_dir_el1, intid); /* EOImode 1 on a trap-and-inject core */
	vcpu_count(c->vcpu, STAT_EXIT_IRQ);
	/* Laid out first: the kick's instructions stay those of a core in no shared pool. */
	if (__builtin_expect(intid == SGI_KICK, 1)) {
		vgic_kicked(c);
		vcpu_check_requests(c->vcpu);
	} else if (intid == PPI_HYP_TIMER) {
		/* Its level would take it again at the eret: off until the core arms it again. */
		write_sysreg(cnthp_ctl_el2, 0);
		isb();
		sched_timer_expired(c->vcpu);
	}
}

void arm64_guest_async_abort(struct guest_regs *r, int kind)
{
	struct vcpu *v = this_cpu()->vcpu;

	partition_fault(v, "%s pc=0x%llx esr=0x%llx", kind == 1 ? "unexpected exception" : "SError",
			(unsigned long long)r->elr, (unsigned long long)read_sysreg(esr_el2));
}
