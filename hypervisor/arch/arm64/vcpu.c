/* SPDX-License-Identifier: MIT */
/* The vCPU on its core: entering it (a cold EL1), its fast-path counters, stopping it. */
#include <arch/entry.h>
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vgicv3.h>
#include <tern/arch.h>
#include <tern/channel.h>
#include <tern/config.h>
#include <tern/ivshmem.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/platform.h>

#ifndef TERN_HOST
/*
 * Per partition: a member of no channel (its channels are the description's, for good), as
 * its first entry on a shared core found; a switch into it then skips channel_fast_doorbell's
 * scan of every channel, so that every switch costs the same, the first one too.
 */
static bool no_doorbell[TERN_MAX_PARTITIONS];

/* Host tests stand in for entering (tests/unit/fake/arm64/platform.c): these are the core's own. */
#define SPSR_EL1H_MASKED    0x3c5u    /* EL1h, D A I F masked: the boot protocol's entry state */

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
 * A vCPU of a channel member rings its first channel's doorbells in the vector (vectors.S,
 * guest_doorbell): the page it traps on, and per member the distributor write the ring is.
 */
static void doorbell_fast_path_setup(struct arm64_cpu *c, const struct partition *p)
{
	_Static_assert(DOORBELL_MEMBERS == TERN_MAX_PARTITIONS, "a channel's members, all");
	_Static_assert(DOORBELL_GATE_BIT == IVSHMEM_RING_GATE_BIT, "vectors.S tests the gate's bit");
	ipaddr_t page = 0;
	struct channel_fast_ring ring[TERN_MAX_PARTITIONS];

	c->doorbell_page = DOORBELL_NO_PAGE;
	if (!channel_fast_doorbell(p, &page, ring))
		return;
	for (uint32_t k = 0; k < DOORBELL_MEMBERS; k++) {
		uint32_t irq = ring[k].irq;
		bool spi = irq >= GIC_FIRST_SPI && irq < NR_INTIDS;
		c->doorbell_reg[k] = spi ? gic_spi_pend_register(irq) : 0u;
		c->doorbell_bit[k] = spi ? (uint32_t)BIT(irq % 32u) : 0u;
		c->doorbell_gate[k] = ring[k].gate;
	}
	c->doorbell_page = page >> 12; /* as HPFAR_EL2.FIPA gives it: the page number */
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

void arch_vcpu_run(struct vcpu *v, uint64_t entry, uint64_t context)
{
	struct arm64_cpu *c = this_cpu();
	const struct partition *p = v->partition;
	struct guest_regs *frame;
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
	doorbell_fast_path_setup(c, p);
	write_sysreg(icc_igrpen1_el1, 1); /* off while the core idled */
	if (cpu_is_shared((unsigned)c->id)) {
		arm64_shared_entry(c, v);
		no_doorbell[p->index] = c->doorbell_page == DOORBELL_NO_PAGE;
		c->context = arm64_vcpu_context(v);
		c->frame = &c->context->frame; /* the vCPU's registers live in its context */
	}
	frame = guest_frame(c);
	vgic_vcpu_reset(c, v);
	arm64_reset_el1(c);
	reset_fp(c);
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
	/* arch_counter() as cpu.c inlined it: a call more would move every later instruction count. */
	if (!v->partition->first_entry)
		v->partition->first_entry = read_sysreg(cntpct_el0);
	frame->x[0] = context;
	frame->elr = entry;
	frame->spsr = SPSR_EL1H_MASKED;
	guest_enter(frame);
}

void arch_vcpu_resume(struct vcpu *v)
{
	struct arm64_cpu *c = this_cpu();
	const struct partition *p = v->partition;

	arm64_vcpu_resume_here(c, v);
	/* sgi_fast_path_setup's result for a trap-and-inject vCPU (c->direct is false here). */
	c->sgi_vcpus = 0;
	c->sgi_shift = p->vcpu[0].pcpu;
	if (no_doorbell[p->index])
		c->doorbell_page = DOORBELL_NO_PAGE;
	else
		doorbell_fast_path_setup(c, p);
	shared_core_entering(v);
	guest_enter(guest_frame(c));
}
#endif

/*
 * Everything of EL1 the guest may have changed but FP/SIMD (reset_fp), back to a cold core's
 * state.  The registers are partition.h's lists, which a vCPU switch carries too: add one
 * there, not here.  Built for the host tests too (reset_fp's vectors are not the fake's).
 */
void arm64_reset_el1(const struct arm64_cpu *c)
{
#define RESET_EL1(reg, reset) write_sysreg(reg, reset);
	ARM64_EL1_REGS(RESET_EL1)
	if (c->sve)
		write_sysreg(zcr_el1, 0);
	if (c->sme) {
		write_sysreg(smcr_el1, 0);
		write_sysreg(smpri_el1, 0);
		write_sysreg(tpidr2_el0, 0);
	}
	if (c->pauth) {
		ARM64_PAUTH_REGS(RESET_EL1)
	}
}

/*
 * The fast paths (vectors.S) count in struct arm64_cpu, five counters (no call on the interrupt
 * path); each is reported as every stat it stands for.
 */
static uint64_t fast_count(const struct arm64_fast_counts *f, enum stat_id id)
{
	switch (id) {
	case STAT_EXIT_IRQ:
	case STAT_IRQ_INJECTED:
		return f->irqs;
	case STAT_EXIT_WFI:
		return f->wfi_exits;
	case STAT_EXIT_WFE:
		return f->wfe_exits;
	case STAT_EXIT_SYSREG:
	case STAT_SGI_SENT:
		return f->sgi;
	case STAT_EXIT_MMIO:
	case STAT_DOORBELL_RING:
	case STAT_FAST_DOORBELL:
		return f->doorbell;
	default:
		return 0;
	}
}

/*
 * A shared core's counters are its running vCPU's since it entered: what the vCPUs that ran
 * there before counted is in their contexts (fold_fast_counters).
 */
uint64_t arch_vcpu_stat(const struct vcpu *v, enum stat_id id)
{
	const struct arm64_cpu *c = &cpus[v->pcpu];
	uint64_t earlier = fast_count(&arm64_vcpu_context(v)->folded, id); /* 0 unless it shares a core */
	struct arm64_fast_counts now = { c->fast_irqs, c->fast_wfi, c->fast_wfe, c->fast_sgi,
					 c->fast_doorbell };

	if (c->shared && c->vcpu != v)
		return earlier;
	return earlier + fast_count(&now, id);
}

/*
 * The core's fast-path counts so far are v's: added to its context's five (arch_vcpu_stat
 * reports them; into its stats, where each counts as two or three, a switch took nine
 * additions), and the core's start again.
 */
static void fold_fast_counters(struct arm64_cpu *c, struct arch_vcpu_context *x)
{
	struct arm64_fast_counts *f = &x->folded;

	f->irqs += c->fast_irqs;
	f->wfi_exits += c->fast_wfi;
	f->wfe_exits += c->fast_wfe;
	f->sgi += c->fast_sgi;
	f->doorbell += c->fast_doorbell;
	c->fast_irqs = 0;
	c->fast_wfi = 0;
	c->fast_wfe = 0;
	c->fast_sgi = 0;
	c->fast_doorbell = 0;
}

/*
 * Any entry on a shared core (arch_vcpu_run, arch_vcpu_resume).  The fast counters a vCPU
 * left here without a save (it stopped) are its own; vectors.S's WFI test is made to fail
 * (lrs_idle), so that a guest's WFI comes to arm64_guest_wfi and may let another vCPU run.
 * From the first entry on, the core's exits take the shared vector table, which saves the
 * guest's registers in its vCPU's context (the entry's eret synchronises VBAR_EL2; until then
 * only the EL2 entries, the same in both tables, can be taken).
 */
void arm64_shared_entry(struct arm64_cpu *c, const struct vcpu *v)
{
	if (c->vcpu)
		fold_fast_counters(c, arm64_vcpu_context(c->vcpu));
	if (!c->shared) {
		write_sysreg(vbar_el2, (uintptr_t)hyp_vectors_shared);
		c->shared = true;
	}
	c->lrs_idle = CPU_LRS_NEVER;
	c->last_ran[v->partition->index] = v;
}

/*
 * arch_vcpu_resume up to the fast paths' caches and the eret (what the host tests run).  Only
 * shared cores resume, and their partitions are trap-and-inject (config.c).  With v's VTTBR
 * back, a local TLBI VMALLE1 drops what another vCPU of its partition left here: the same
 * VMID, other EL1 tables; a guest's non-broadcast TLB maintenance only reached its own vCPU's.
 * No vCPU of the partition here yet: none of its entries either (a partition's (re)start
 * drops all EL1 entries on the core it enters, arch_vcpu_run).
 */
void arm64_vcpu_resume_here(struct arm64_cpu *c, struct vcpu *v)
{
	const struct vcpu *last = c->last_ran[v->partition->index];
	bool other = last && last != v;

	c->direct = false;
	arm64_shared_entry(c, v);
	write_sysreg(icc_igrpen1_el1, 1); /* off while the core idled */
	arch_vcpu_restore(v);
	if (other)
		tlbi_vmalle1();
	isb();
}

/*
 * The core's scheduling event while a guest runs: the EL2 physical timer, a Group 0 PPI taken
 * as FIQ (arm64_guest_fiq).  arch_cpu_idle_wait uses the same timer and leaves it off: the
 * shared core arms it again before every entry.
 */
void arch_sched_timer(uint64_t deadline)
{
	if (deadline) {
		write_sysreg(cnthp_cval_el2, deadline);
		write_sysreg(cnthp_ctl_el2, CNTHP_CTL_ENABLE);
	} else {
		write_sysreg(cnthp_ctl_el2, 0);
	}
	isb();
}

/*
 * When a saved guest timer raises its interrupt, in the physical count (UINT64_MAX: never):
 * enabled, not masked, its PPI enabled at the vCPU's redistributor (else it wakes nothing).
 * The virtual timer compares CNTPCT - CNTVOFF with its CVAL.
 */
static uint64_t timer_fires_at(uint64_t ctl, uint64_t cval, uint64_t offset, bool ppi_enabled)
{
	if ((ctl & (CNT_CTL_ENABLE | CNT_CTL_IMASK)) != CNT_CTL_ENABLE || !ppi_enabled)
		return UINT64_MAX;
	return cval > UINT64_MAX - offset ? UINT64_MAX : cval + offset;
}

uint64_t arch_vcpu_timer_deadline(const struct vcpu *v)
{
	const struct arch_vcpu_context *x = arm64_vcpu_context(v);
	uint32_t enabled = atomic_load(&v->arch.redist.enabled);
	uint64_t virt = timer_fires_at(x->el1[ARM64_CTX_cntv_ctl_el0], x->el1[ARM64_CTX_cntv_cval_el0],
				       x->cntvoff, (enabled & BIT(PPI_VTIMER)) != 0u);
	uint64_t phys = timer_fires_at(x->el1[ARM64_CTX_cntp_ctl_el0], x->el1[ARM64_CTX_cntp_cval_el0],
				       0, (enabled & BIT(PPI_PTIMER)) != 0u);

	return virt < phys ? virt : phys;
}

/* What its restore would hand the guest at once, or a timer already due: a WFI would end. */
bool arch_vcpu_wake_pending(const struct vcpu *v)
{
	return vgic_saved_pending(v) || arch_vcpu_timer_deadline(v) <= arch_counter();
}

/*
 * Not cleared at boot (.noinit: 160 KiB the boot would zero): a save writes it before a restore
 * reads it, and a shared core's first entry of a vCPU (arch_vcpu_run) builds its frame.  Each
 * frame is where SP_EL2 points while its vCPU runs on a shared core (vectors.S): 16-byte aligned.
 */
static struct arch_vcpu_context contexts[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS]
	__attribute__((aligned(16), section(".noinit")));
_Static_assert(__builtin_offsetof(struct arch_vcpu_context, frame) == 0u, "the frame first");
_Static_assert(sizeof(struct arch_vcpu_context) % 16u == 0u, "every frame 16-byte aligned");

struct arch_vcpu_context *arm64_vcpu_context(const struct vcpu *v)
{
	return &contexts[v->partition->index][v->index];
}

/*
 * Each vCPU's switch context: its fast counts at 0.  A partition in a shared pool: its contexts' queues
 * empty (a save moves the core's queue into one, virq_queue_move); its cores switch vCPUs
 * (arch_vcpu_save/restore), which do not carry SVE or SME state, so cores that offer them to
 * guests (the board's "max" model) are refused rather than lose a guest's vector state.  The
 * board's cores are alike: the boot core's features are theirs.
 */
bool arm64_partition_vcpus(struct partition *p, char *err, size_t errlen)
{
	const struct tern_config *cfg = (const struct tern_config *)(uintptr_t)platform.config_hpa;
	uint32_t pool = p->cfg->pool;
	bool shared = pool < cfg->num_pools && config_pools(cfg)[pool].scheduler != TERN_SCHED_NULL;

	for (uint32_t j = 0; j < p->num_vcpus; j++) {
		struct arch_vcpu_context *x = &contexts[p->index][j];
		(void)memset(&x->folded, 0, sizeof(x->folded));
		if (shared)
			virq_queue_init(&x->vgic.queue);
	}
	if (!shared || arm64_vcpu_switchable(this_cpu()))
		return true;
	(void)snprintf(err, errlen, "pool %s: these cores offer SVE or SME to guests, which a shared "
		       "core does not switch (a core model without them shares: cortex-a53, cortex-a57)",
		       config_pools(cfg)[pool].name);
	return false;
}

#ifdef TERN_HOST
/* The fake core's Q registers (tests/unit/fake/arm64). */
void fake_fp_save(uint64_t q[32][2]);
void fake_fp_restore(const uint64_t q[32][2]);
#endif

#ifndef TERN_HOST
/* Q0-Q31 by pairs (LDP/STP): half the instructions of one register at a time. */
/* cppcheck-suppress misra-c2012-20.10 ; the instruction's text is made from its operands */
#define FP_PAIR(op, a, b) #op " q" #a ", q" #b ", [%0, #(16 * " #a ")]\n\t"
#define FP_PAIRS(op) \
	FP_PAIR(op, 0, 1) \
	FP_PAIR(op, 2, 3) \
	FP_PAIR(op, 4, 5) \
	FP_PAIR(op, 6, 7) \
	FP_PAIR(op, 8, 9) \
	FP_PAIR(op, 10, 11) \
	FP_PAIR(op, 12, 13) \
	FP_PAIR(op, 14, 15) \
	FP_PAIR(op, 16, 17) \
	FP_PAIR(op, 18, 19) \
	FP_PAIR(op, 20, 21) \
	FP_PAIR(op, 22, 23) \
	FP_PAIR(op, 24, 25) \
	FP_PAIR(op, 26, 27) \
	FP_PAIR(op, 28, 29) \
	FP_PAIR(op, 30, 31)
#endif

/* The hypervisor is built without FP/SIMD (-mgeneral-regs-only): the guest's Q registers are its. */
static void fp_save(struct arch_vcpu_context *x)
{
#ifdef TERN_HOST
	fake_fp_save(x->q);
#else
	__asm__ volatile(".arch_extension simd\n\t" FP_PAIRS(stp) : : "r"(x->q) : "memory");
#endif
	x->fpcr = read_sysreg(fpcr);
	x->fpsr = read_sysreg(fpsr);
}

static void fp_restore(const struct arch_vcpu_context *x)
{
#ifdef TERN_HOST
	fake_fp_restore(x->q);
#else
	__asm__ volatile(".arch_extension simd\n\t" FP_PAIRS(ldp) : : "r"(x->q) : "memory");
#endif
	write_sysreg(fpcr, x->fpcr);
	write_sysreg(fpsr, x->fpsr);
}

/*
 * After the save, the core keeps nothing of v that another vCPU could see or be hit by: its
 * timers are off (they would fire into the next vCPU), its list registers, active priorities,
 * templates and queue are empty (vgic_save), and stage 2 is off (HCR_EL2 as arch_vcpu_quiesce
 * leaves it).  Its EL1 and FP registers stay: the next vCPU's restore or reset overwrites every
 * one of them before it runs.  The core's fast-path counts go with v, and no vCPU runs here
 * until the next entry.  Its x0-x30, ELR and SPSR are in its context already: a shared core's
 * exits save them there (vectors.S, guest_frame).
 */
/*
 * el1[] by pairs of registers (LDP/STP): half the loads and stores of one at a time.  Each list
 * starts a pair (partition.h), and el1[] is 16-byte aligned.
 */
static void el1_pair_put(uint64_t *slot, uint64_t even, uint64_t odd)
{
	*(unsigned __int128 *)(void *)slot = (unsigned __int128)odd << 64 | even;
}

static unsigned __int128 el1_pair_get(const uint64_t *slot)
{
	return *(const unsigned __int128 *)(const void *)slot;
}

void arch_vcpu_save(struct vcpu *v)
{
	struct arm64_cpu *c = this_cpu();
	struct arch_vcpu_context *x = c->context; /* v's: every entry on a shared core sets it */

	(void)v;
	fold_fast_counters(c, x);
	uint64_t even = 0;
/* cppcheck-suppress misra-c2012-20.12 ; `reg` names the index unexpanded and the register expanded (sysreg.h spells some by encoding) */
#define SAVE_EL1_AT(i, reg) \
	if (((i) & 1) == 0) \
		even = read_sysreg(reg); \
	else \
		el1_pair_put(&x->el1[(i) & ~1], even, read_sysreg(reg));
/* cppcheck-suppress misra-c2012-20.12 ; `reg` names the index unexpanded and the register expanded (sysreg.h spells some by encoding) */
#define SAVE_EL1(reg) SAVE_EL1_AT(ARM64_CTX_##reg, reg)
/* cppcheck-suppress misra-c2012-20.12 ; `reg` names the index unexpanded and the register expanded (sysreg.h spells some by encoding) */
#define SAVE_EL1_RESET(reg, reset) SAVE_EL1_AT(ARM64_CTX_##reg, reg)
	ARM64_EL1_REGS(SAVE_EL1_RESET)
	if (c->pauth) {
		ARM64_PAUTH_REGS(SAVE_EL1_RESET)
	}
	ARM64_EL1_CARRIED_REGS(SAVE_EL1)
	fp_save(x);
	x->cntvoff = read_sysreg(cntvoff_el2);
	x->hcr = read_sysreg(hcr_el2);
	x->vmpidr = read_sysreg(vmpidr_el2);
	x->vttbr = read_sysreg(vttbr_el2);
	write_sysreg(cntv_ctl_el0, 0);
	write_sysreg(cntp_ctl_el0, 0);
	vgic_save(c, x);
	write_sysreg(hcr_el2, HCR_RW);
	isb();
	c->vcpu = NULL; /* a post to v (vgic_post, deliver_sgi) now waits in its redistributor */
}

/*
 * The compare values go back before the controls, so that a timer is never enabled on the
 * previous vCPU's deadline.  An armed timer whose deadline passed while v was out fires as
 * soon as v runs.  The core's frame becomes v's, in its context: its registers never left.
 * The core's per-vCPU caches (struct arm64_cpu's sgi_*, doorbell_*, direct) are the entry
 * path's to rebuild.
 */
void arch_vcpu_restore(struct vcpu *v)
{
	struct arm64_cpu *c = this_cpu();
	struct arch_vcpu_context *x = arm64_vcpu_context(v);

	c->context = x;
	write_sysreg(vmpidr_el2, x->vmpidr);
	write_sysreg(vttbr_el2, x->vttbr);
	write_sysreg(hcr_el2, x->hcr);
	write_sysreg(cntvoff_el2, x->cntvoff);
	unsigned __int128 pair = 0;
/* cppcheck-suppress misra-c2012-20.12 ; `reg` names the index unexpanded and the register expanded (sysreg.h spells some by encoding) */
#define RESTORE_EL1_AT(i, reg) \
	if (((i) & 1) == 0) \
		pair = el1_pair_get(&x->el1[i]); \
	write_sysreg(reg, (uint64_t)(pair >> (64 * ((i) & 1))));
/* cppcheck-suppress misra-c2012-20.12 ; `reg` names the index unexpanded and the register expanded (sysreg.h spells some by encoding) */
#define RESTORE_EL1(reg) RESTORE_EL1_AT(ARM64_CTX_##reg, reg)
/* cppcheck-suppress misra-c2012-20.12 ; `reg` names the index unexpanded and the register expanded (sysreg.h spells some by encoding) */
#define RESTORE_EL1_RESET(reg, reset) RESTORE_EL1_AT(ARM64_CTX_##reg, reg)
	ARM64_EL1_CARRIED_REGS(RESTORE_EL1)
	ARM64_EL1_REGS(RESTORE_EL1_RESET)
	if (c->pauth) {
		ARM64_PAUTH_REGS(RESTORE_EL1_RESET)
	}
	fp_restore(x);
	isb();
	vgic_restore(c, v, x);
	c->frame = &x->frame;
}

void arch_vcpu_quiesce(struct vcpu *v)
{
	struct arm64_cpu *c = &cpus[v->pcpu];

	/*
	 * A vCPU switched out of its shared core (arch_vcpu_save) that leaves from there: the core
	 * holds nothing of it, and what runs there (or the next one) is not to be touched.
	 */
	if (c->vcpu != v)
		return;
	write_sysreg(cntv_ctl_el0, 0);
	write_sysreg(cntp_ctl_el0, 0);
	vgic_quiesce(c);
	write_sysreg(hcr_el2, HCR_RW);
	isb();
}
