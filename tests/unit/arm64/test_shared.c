/* SPDX-License-Identifier: MIT */
/*
 * arch/arm64's side of a shared core (docs/design.md, "Scheduling"): arch_vcpu_resume and its
 * TLB maintenance, the scheduling timer and its FIQ, a saved vCPU's wake-ups and timer
 * deadline, the fast-path counters folded at a switch, a guest's WFI giving the core up, and
 * SGIs between vCPUs that take turns on one core.  Core 0 is made shared as arch_vcpu_run
 * makes a core in a shared pool (arm64_shared_entry); the scheduler's side is stood in for
 * (fake_sched_guest_waits, fake_sched_timer_expired).
 */
#include <string.h>
#include <arch/entry.h>
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vgicv3.h>
#include <tern/arch.h>
#include <tern/partition.h>
#include "check.h"
#include "system.h"
#include "tests.h"

void arm64_guest_wfi(struct guest_regs *r);
void arm64_guest_fiq(struct guest_regs *r);

#define ISS_SGI1R_WRITE(rt) (ESR_IL | ISS_ICC_SGI1R | ((uint64_t)(rt) << 5))
#define ISTATUS_FIRED (CNT_CTL_ENABLE | CNT_CTL_ISTATUS)

static struct partition *pa, *pb;
static struct vcpu *a0, *a1, *b0;

/* What the port handed the scheduler: its guest's waits, its scheduling events, and for whom. */
static struct {
	unsigned waits, expired;
	struct vcpu *last;
} sched_calls;

/* The core leaves the guest to its loop: here, to the test (the frame stays as the port left it). */
static void record_wait(struct vcpu *v)
{
	sched_calls.waits++;
	sched_calls.last = v;
	fake_exit_to_test(FAKE_EXIT_IDLE);
}

/* The vCPU goes on. */
static void record_event(struct vcpu *v)
{
	sched_calls.expired++;
	sched_calls.last = v;
}

/*
 * "a" with two vCPUs, "b" with one, all homed on core 0, which is shared: a0 runs there
 * (entered as on a shared core, its frame in its context); a1 and b0 ran elsewhere first and
 * are saved (as if they had been switched out of core 0, their frames in their contexts).
 */
static void shared_board(void)
{
	fake_config_begin(3);
	add_partition("a", "0,1", 0);
	add_partition("b", "2", 0);
	boot_board();
	pa = partition_named("a");
	pb = partition_named("b");
	start_vcpu(pa, 1);
	a0 = &pa->vcpu[0];
	a1 = &pa->vcpu[1];
	b0 = &pb->vcpu[0];
	CHECK_EQ(FAKE_ON(0, arm64_shared_entry(&cpus[0], a0)), FAKE_RETURNED);
	cpus[0].context = arm64_vcpu_context(a0);
	cpus[0].frame = &cpus[0].context->frame;
	for (struct vcpu *v = a1; v; v = v == a1 ? b0 : NULL) {
		fake_sysreg_set(v->pcpu, "vttbr_el2", v->partition->arch.vttbr);
		cpus[v->pcpu].context = arm64_vcpu_context(v); /* as its entry there set it */
		CHECK_EQ(FAKE_ON(v->pcpu, arch_vcpu_save(v)), FAKE_RETURNED);
		arm64_vcpu_context(v)->frame.elr = 0x40000000u + 0x1000u * v->pcpu;
		v->pcpu = 0;
	}
	fake_sysreg_set(0, "vttbr_el2", pa->arch.vttbr);
	memset(fake_tlbis, 0, sizeof(fake_tlbis));
	memset(&fake_cores[0], 0, sizeof(fake_cores[0]));
	atomic_store(&fake_kicks, 0);
	memset(&sched_calls, 0, sizeof(sched_calls));
	fake_sched_guest_waits = record_wait;
	fake_sched_timer_expired = record_event;
}

/* The real ones again, for the tests that follow. */
static void shared_board_done(void)
{
	fake_sched_guest_waits = NULL;
	fake_sched_timer_expired = NULL;
}

/* Core 0 switches from its running vCPU to `to` (saved): the exit that resumes it. */
static enum fake_exit switch_to(struct vcpu *from, struct vcpu *to)
{
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(from)), FAKE_RETURNED);
	return FAKE_ON(0, arch_vcpu_resume(to));
}

void test_shared_entry_fails_the_vector_wfi(void)
{
	shared_board();
	CHECK(cpus[0].shared);
	CHECK_EQ(cpus[0].lrs_idle, CPU_LRS_NEVER);
	/* ICH_ELRSR_EL2 has a bit per list register, at most 16: it never reads the value. */
	CHECK_EQ(CPU_LRS_NEVER >> 16, 0xffffffffffffull);
	/* Cores in no shared pool: today's value, every list register free. */
	CHECK(!cpus[2].shared);
	CHECK_EQ(cpus[2].lrs_idle, BIT(gic_nr_lrs) - 1);
	shared_board_done();
}

/*
 * A shared core takes the vector table that saves a guest's registers in its vCPU's context,
 * and its frame is the running vCPU's there; a core in no shared pool keeps the table and the
 * frame at the top of its stack it booted with.
 */
void test_shared_entry_moves_the_frame_to_the_context(void)
{
	shared_board();
	CHECK_EQ(fake_sysreg(0, "vbar_el2"), (uintptr_t)hyp_vectors_shared);
	CHECK_EQ(fake_sysreg(2, "vbar_el2"), 0);   /* untouched: cpu_early's hyp_vectors on the board */
	CHECK_EQ((uintptr_t)guest_frame(&cpus[2]), cpus[2].stack_top - GUEST_FRAME_SIZE);
	CHECK(guest_frame(&cpus[0]) == &arm64_vcpu_context(a0)->frame);
	CHECK_EQ((uintptr_t)guest_frame(&cpus[0]) % 16u, 0);
	/* A switch leaves each vCPU's registers where they are and points the core at the next's. */
	fake_guest_regs(0)->x[19] = 0xa0;
	CHECK_EQ(switch_to(a0, b0), FAKE_EXIT_RUN);
	CHECK(guest_frame(&cpus[0]) == &arm64_vcpu_context(b0)->frame);
	CHECK_EQ(fake_guest_regs(0)->elr, 0x40002000u);
	CHECK_EQ(arm64_vcpu_context(a0)->frame.x[19], 0xa0);
	CHECK_EQ(fake_sysreg(0, "vbar_el2"), (uintptr_t)hyp_vectors_shared);
	shared_board_done();
}

/* Two vCPUs of one partition (one VMID) on one core: each finds the other's EL1 entries dropped. */
void test_shared_resume_same_partition_drops_its_tlb(void)
{
	shared_board();
	CHECK_EQ(switch_to(a0, a1), FAKE_EXIT_RUN);
	CHECK_EQ(fake_tlbis[0], 1);
	CHECK_EQ(fake_cores[0].resumes, 1);
	CHECK_EQ(fake_cores[0].running, a1);
	CHECK_EQ(cpus[0].vcpu, a1);
	CHECK_EQ(fake_guest_regs(0)->elr, 0x40001000u);   /* where a1 left, on core 1 */
	CHECK_EQ(fake_sysreg(0, "vttbr_el2"), pa->arch.vttbr);
	CHECK_EQ(switch_to(a1, a0), FAKE_EXIT_RUN);
	CHECK_EQ(fake_tlbis[0], 2);
	CHECK_EQ(cpus[0].vcpu, a0);
	/* The same vCPU again, nobody of its partition in between: its entries are its own. */
	CHECK_EQ(switch_to(a0, a0), FAKE_EXIT_RUN);
	CHECK_EQ(fake_tlbis[0], 2);
	/* Another partition in between: its own VMID, no maintenance either way. */
	CHECK_EQ(switch_to(a0, b0), FAKE_EXIT_RUN);
	CHECK_EQ(fake_sysreg(0, "vttbr_el2"), pb->arch.vttbr);
	CHECK_EQ(switch_to(b0, a0), FAKE_EXIT_RUN);
	CHECK_EQ(switch_to(a0, b0), FAKE_EXIT_RUN);
	CHECK_EQ(fake_tlbis[0], 2);
	/* ... but a1 finds a0's, even with b0 in between. */
	CHECK_EQ(switch_to(b0, a1), FAKE_EXIT_RUN);
	CHECK_EQ(fake_tlbis[0], 3);
	CHECK_EQ(fake_cores[0].resumes, 7);
	shared_board_done();
}

/* What arch_vcpu_run builds per core, a resume builds for the vCPU it enters. */
void test_shared_resume_rebuilds_the_core(void)
{
	shared_board();
	b0->arch.redist.enabled = BIT(PPI_VTIMER);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(a0)), FAKE_RETURNED);
	/* Nothing of a0's is the core's any more: posts to it wait in its redistributor. */
	CHECK(cpus[0].vcpu == NULL);
	fake_sysreg_set(0, "icc_igrpen1_el1", 0);   /* as an idle wait leaves it */
	cpus[0].direct = true;
	CHECK_EQ(FAKE_ON(0, arch_vcpu_resume(b0)), FAKE_EXIT_RUN);
	CHECK_EQ(fake_sysreg(0, "icc_igrpen1_el1"), 1);
	CHECK(!cpus[0].direct);
	CHECK_EQ(cpus[0].vcpu, b0);
	CHECK_EQ(cpus[0].vgic.redist, &b0->arch.redist);
	CHECK(cpus[0].lr_template[PPI_VTIMER] != 0);     /* its timer's fast path */
	uint32_t on;
	memcpy(&on, fake_gicr[0] + GICR_SGI_BASE + GICD_ISENABLER, 4);
	CHECK_EQ(on & OWNED_PPIS, BIT(PPI_VTIMER));      /* its PPI enables, in the GIC */
	CHECK_EQ(cpus[0].lrs_idle, CPU_LRS_NEVER);
	CHECK_EQ(fake_sysreg(0, "hcr_el2"), arm64_vcpu_context(b0)->hcr);
	shared_board_done();
}

/* A hardware-linked timer PPI is the core's: inactive while its vCPU is out, active again at its return. */
void test_shared_save_leaves_no_linked_ppi_active(void)
{
	uint32_t active;

	shared_board();
	uint8_t *sgi = fake_gicr[0] + GICR_SGI_BASE;
	uint32_t bit = BIT(PPI_VTIMER);
	memcpy(sgi + GICD_ISACTIVER, &bit, 4);
	memcpy(sgi + GICD_ICACTIVER, &bit, 4);
	fake_lrs[0][1] = ICH_LR_ACTIVE | ICH_LR_HW | ICH_LR_GROUP1 |
			 ((uint64_t)PPI_VTIMER << ICH_LR_PINTID_SHIFT) | PPI_VTIMER;
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(a0)), FAKE_RETURNED);
	memcpy(&active, sgi + GICD_ISACTIVER, 4);
	CHECK_EQ(active & bit, 0);   /* b0's own timer can fire now */
	CHECK_EQ(FAKE_ON(0, arch_vcpu_resume(b0)), FAKE_EXIT_RUN);
	memcpy(&active, sgi + GICD_ISACTIVER, 4);
	CHECK_EQ(active & bit, 0);
	CHECK_EQ(switch_to(b0, a0), FAKE_EXIT_RUN);
	memcpy(&active, sgi + GICD_ISACTIVER, 4);
	CHECK_EQ(active & bit, bit);  /* a0's EOI deactivates it, as before it left */
	CHECK_EQ(fake_lrs[0][1] & (ICH_LR_ACTIVE | ICH_LR_HW), ICH_LR_ACTIVE | ICH_LR_HW);
	shared_board_done();
}

/*
 * A save keeps the list registers in use (ICH_ELRSR_EL2) and only those: an empty one's old
 * bits (an interrupt the guest has since deactivated) are no interrupt, nor taken for one.
 */
void test_shared_save_keeps_only_the_lrs_in_use(void)
{
	shared_board();
	struct arch_vcpu_context *x = arm64_vcpu_context(a0);
	uint64_t pending = ICH_LR_PENDING | ICH_LR_GROUP1 | ((uint64_t)0xa0 << ICH_LR_PRIO_SHIFT) | 27u;

	fake_lrs[0][0] = pending;
	fake_lrs[0][2] = ICH_LR_GROUP1 | 30u;   /* state invalid: its EOI came */
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(a0)), FAKE_RETURNED);
	CHECK_EQ(x->used_lrs, 1u);
	CHECK_EQ(x->lr[0], pending);
	CHECK_EQ(x->lr[2], 0);
	CHECK_EQ(fake_lrs[0][0], 0);               /* b0 finds no interrupt of a0's */
	CHECK(arch_vcpu_wake_pending(a0));
	CHECK_EQ(FAKE_ON(0, arch_vcpu_resume(b0)), FAKE_EXIT_RUN);
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		CHECK_EQ(fake_lrs[0][n] & (ICH_LR_PENDING | ICH_LR_ACTIVE), 0);
	CHECK_EQ(switch_to(b0, a0), FAKE_EXIT_RUN);
	CHECK_EQ(fake_lrs[0][0], pending);
	shared_board_done();
}

/* A saved vCPU's wake-ups, each source alone. */
void test_shared_wake_pending_each_source(void)
{
	shared_board();
	struct arch_vcpu_context *x = arm64_vcpu_context(a1);
	struct vgic_redist *r = &a1->arch.redist;

	memset(x->lr, 0, sizeof(x->lr));
	x->used_lrs = 0;
	virq_queue_init(&x->vgic.queue);
	x->vgic.sgi_held = 0;
	x->el1[ARM64_CTX_cntv_ctl_el0] = 0;
	x->el1[ARM64_CTX_cntp_ctl_el0] = 0;
	r->enabled = 0;
	r->pending = 0;
	CHECK(!arch_vcpu_wake_pending(a1));
	/* A pending list register; one the guest cleared since (GICR_ICPENDR0, posted) is not. */
	x->lr[2] = ICH_LR_PENDING | ICH_LR_GROUP1 | 5u;
	CHECK(!arch_vcpu_wake_pending(a1)); /* not in use: the save left it as an old one's */
	x->used_lrs = BIT(2);
	CHECK(arch_vcpu_wake_pending(a1));
	r->unpend = BIT(5);
	CHECK(!arch_vcpu_wake_pending(a1));
	r->unpend = 0;
	x->lr[2] = ICH_LR_ACTIVE | ICH_LR_GROUP1 | 5u;   /* active alone: being handled */
	CHECK(!arch_vcpu_wake_pending(a1));
	x->lr[2] = 0;
	x->used_lrs = 0;
	/* Its queue. */
	virq_queue_push(&x->vgic.queue, 30, 0xa0);
	CHECK(arch_vcpu_wake_pending(a1));
	virq_queue_init(&x->vgic.queue);
	/* An SGI posted by another vCPU: only once enabled (else it is held, as on the board). */
	r->pending = BIT(3);
	CHECK(!arch_vcpu_wake_pending(a1));
	r->enabled = BIT(3);
	CHECK(arch_vcpu_wake_pending(a1));
	r->pending = 0;
	/* One held while disabled, enabled since. */
	x->vgic.sgi_held = BIT(3);
	CHECK(arch_vcpu_wake_pending(a1));
	x->vgic.sgi_held = 0;
	CHECK(!arch_vcpu_wake_pending(a1));
	/* Its virtual timer, due: enabled, unmasked, its PPI enabled, CNTVOFF applied. */
	x->cntvoff = 400;
	x->el1[ARM64_CTX_cntv_cval_el0] = fake_now - 400;
	x->el1[ARM64_CTX_cntv_ctl_el0] = CNT_CTL_ENABLE;
	CHECK(!arch_vcpu_wake_pending(a1));   /* its PPI disabled: nothing would wake */
	r->enabled = BIT(PPI_VTIMER);
	CHECK(arch_vcpu_wake_pending(a1));
	x->el1[ARM64_CTX_cntv_cval_el0] = fake_now - 399;
	CHECK(!arch_vcpu_wake_pending(a1));   /* one tick early */
	x->el1[ARM64_CTX_cntv_cval_el0] = 0;
	x->el1[ARM64_CTX_cntv_ctl_el0] = CNT_CTL_ENABLE | CNT_CTL_IMASK;
	CHECK(!arch_vcpu_wake_pending(a1));   /* masked */
	x->el1[ARM64_CTX_cntv_ctl_el0] = 0;
	/* Its EL1 physical timer: no offset. */
	r->enabled = BIT(PPI_PTIMER);
	x->el1[ARM64_CTX_cntp_cval_el0] = fake_now;
	x->el1[ARM64_CTX_cntp_ctl_el0] = CNT_CTL_ENABLE;
	CHECK(arch_vcpu_wake_pending(a1));
	x->el1[ARM64_CTX_cntp_cval_el0] = fake_now + 1;
	CHECK(!arch_vcpu_wake_pending(a1));
	shared_board_done();
}

void test_shared_timer_deadline(void)
{
	shared_board();
	struct arch_vcpu_context *x = arm64_vcpu_context(a1);

	a1->arch.redist.enabled = BIT(PPI_VTIMER) | BIT(PPI_PTIMER);
	x->el1[ARM64_CTX_cntv_ctl_el0] = 0;
	x->el1[ARM64_CTX_cntp_ctl_el0] = 0;
	CHECK_EQ(arch_vcpu_timer_deadline(a1), UINT64_MAX);
	/* The virtual timer compares CNTPCT - CNTVOFF: it fires at CVAL + CNTVOFF. */
	x->cntvoff = 1000;
	x->el1[ARM64_CTX_cntv_cval_el0] = 5000;
	x->el1[ARM64_CTX_cntv_ctl_el0] = CNT_CTL_ENABLE;
	CHECK_EQ(arch_vcpu_timer_deadline(a1), 6000);
	/* The earlier of the two. */
	x->el1[ARM64_CTX_cntp_cval_el0] = 5500;
	x->el1[ARM64_CTX_cntp_ctl_el0] = CNT_CTL_ENABLE;
	CHECK_EQ(arch_vcpu_timer_deadline(a1), 5500);
	x->el1[ARM64_CTX_cntp_cval_el0] = 7000;
	CHECK_EQ(arch_vcpu_timer_deadline(a1), 6000);
	/* A masked timer, or one whose PPI is disabled, wakes nothing. */
	x->el1[ARM64_CTX_cntv_ctl_el0] = CNT_CTL_ENABLE | CNT_CTL_IMASK;
	CHECK_EQ(arch_vcpu_timer_deadline(a1), 7000);
	a1->arch.redist.enabled = BIT(PPI_VTIMER);
	x->el1[ARM64_CTX_cntv_ctl_el0] = CNT_CTL_ENABLE;
	CHECK_EQ(arch_vcpu_timer_deadline(a1), 6000);
	/* A compare value past the counter's range with the offset: never. */
	x->el1[ARM64_CTX_cntv_cval_el0] = UINT64_MAX - 10;
	CHECK_EQ(arch_vcpu_timer_deadline(a1), UINT64_MAX);
	/* What the save leaves: a0's armed timer, its deadline from the registers it ran with. */
	fake_sysreg_set(0, "cntvoff_el2", 0);
	fake_sysreg_set(0, "cntv_cval_el0", 4242);
	fake_sysreg_set(0, "cntv_ctl_el0", CNT_CTL_ENABLE);
	a0->arch.redist.enabled = BIT(PPI_VTIMER);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(a0)), FAKE_RETURNED);
	CHECK_EQ(arch_vcpu_timer_deadline(a0), 4242);
	CHECK_EQ(fake_sysreg(0, "cntv_ctl_el0"), 0);   /* off on the core meanwhile */
	shared_board_done();
}

/* Each vCPU's fast-path exits, counted on the core it shares, are its own. */
void test_shared_stats_fold_per_vcpu(void)
{
	shared_board();
	uint64_t irq0 = a0->stats[STAT_EXIT_IRQ] + arch_vcpu_stat(a0, STAT_EXIT_IRQ);
	uint64_t wfi0 = a0->stats[STAT_EXIT_WFI] + arch_vcpu_stat(a0, STAT_EXIT_WFI);
	uint64_t irq1 = a1->stats[STAT_EXIT_IRQ] + arch_vcpu_stat(a1, STAT_EXIT_IRQ);

	uint64_t before[STAT_COUNT];

	cpus[0].fast_irqs = 5;
	cpus[0].fast_wfi = 3;
	cpus[0].fast_wfe = 13;
	cpus[0].fast_sgi = 17;
	cpus[0].fast_doorbell = 2;
	for (unsigned id = 0; id < STAT_COUNT; id++)
		before[id] = a0->stats[id] + arch_vcpu_stat(a0, (enum stat_id)id);
	CHECK_EQ(arch_vcpu_stat(a0, STAT_EXIT_IRQ), 5);
	CHECK_EQ(arch_vcpu_stat(a1, STAT_EXIT_IRQ), 0);   /* homed here too, not running */
	CHECK_EQ(switch_to(a0, a1), FAKE_EXIT_RUN);
	CHECK_EQ(cpus[0].fast_irqs, 0);
	/* Every counter arch_vcpu_stat reports reads the same after the fold. */
	for (unsigned id = 0; id < STAT_COUNT; id++)
		CHECK_EQ(a0->stats[id] + arch_vcpu_stat(a0, (enum stat_id)id), before[id]);
	CHECK_EQ(a0->stats[STAT_EXIT_IRQ] + arch_vcpu_stat(a0, STAT_EXIT_IRQ), irq0 + 5);
	CHECK_EQ(a0->stats[STAT_IRQ_INJECTED] + arch_vcpu_stat(a0, STAT_IRQ_INJECTED), irq0 + 5);
	CHECK_EQ(a0->stats[STAT_EXIT_WFI] + arch_vcpu_stat(a0, STAT_EXIT_WFI), wfi0 + 3);
	CHECK_EQ(a0->stats[STAT_FAST_DOORBELL] + arch_vcpu_stat(a0, STAT_FAST_DOORBELL), 2);
	cpus[0].fast_irqs = 7;
	CHECK_EQ(a1->stats[STAT_EXIT_IRQ] + arch_vcpu_stat(a1, STAT_EXIT_IRQ), irq1 + 7);
	CHECK_EQ(a0->stats[STAT_EXIT_IRQ] + arch_vcpu_stat(a0, STAT_EXIT_IRQ), irq0 + 5);
	/* A vCPU that stops (no save) leaves its counts on the core: the next entry gives them to it. */
	CHECK_EQ(FAKE_ON(0, arch_vcpu_quiesce(a1)), FAKE_RETURNED);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_resume(a0)), FAKE_EXIT_RUN);
	CHECK_EQ(a1->stats[STAT_EXIT_IRQ] + arch_vcpu_stat(a1, STAT_EXIT_IRQ), irq1 + 7);
	CHECK_EQ(cpus[0].fast_irqs, 0);
	CHECK_EQ(a0->stats[STAT_EXIT_IRQ] + arch_vcpu_stat(a0, STAT_EXIT_IRQ), irq0 + 5);
	/* A core in no shared pool reads its counters as before, after what the vCPU folded. */
	cpus[1].fast_irqs = 11;
	pa->vcpu[1].pcpu = 1;
	CHECK(!cpus[1].shared);
	CHECK_EQ(arch_vcpu_stat(a1, STAT_EXIT_IRQ), 7 + 11);
	shared_board_done();
}

/* A guest's WFI on a shared core with nothing on its way gives the core to the scheduler. */
void test_shared_wfi_gives_up_the_core(void)
{
	shared_board();
	struct guest_regs *r = fake_guest_regs(0);
	unsigned wfis = fake_wfis[0];

	r->elr = 0x40080004u;   /* vectors.S stepped past the WFI */
	a0->arch.redist.enabled = BIT(PPI_VTIMER) | BIT(PPI_PTIMER) | BIT(4);
	fake_sysreg_set(0, "cntv_ctl_el0", CNT_CTL_ENABLE);
	fake_sysreg_set(0, "cntp_ctl_el0", 0);
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(r)), FAKE_EXIT_IDLE);
	CHECK_EQ(sched_calls.waits, 1);
	CHECK_EQ(sched_calls.last, a0);
	CHECK_EQ(r->elr, 0x40080004u);   /* stepped once, by the vector */
	CHECK_EQ(fake_wfis[0], wfis);    /* the core did not sleep under it */
	/* Its virtual timer fired (its interrupt not taken yet): the WFI ends at once. */
	fake_sysreg_set(0, "cntv_ctl_el0", ISTATUS_FIRED);
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(r)), FAKE_RETURNED);
	fake_sysreg_set(0, "cntv_ctl_el0", ISTATUS_FIRED | CNT_CTL_IMASK);
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(r)), FAKE_EXIT_IDLE);   /* masked: nothing comes */
	fake_sysreg_set(0, "cntv_ctl_el0", 0);
	fake_sysreg_set(0, "cntp_ctl_el0", ISTATUS_FIRED);
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(r)), FAKE_RETURNED);
	a0->arch.redist.enabled = BIT(4);
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(r)), FAKE_EXIT_IDLE);   /* its PPI disabled */
	fake_sysreg_set(0, "cntp_ctl_el0", 0);
	/* An SGI another vCPU posted (its kick on the way), a pending list register. */
	a0->arch.redist.pending = BIT(4);
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(r)), FAKE_RETURNED);
	a0->arch.redist.pending = 0;
	fake_lrs[0][3] = ICH_LR_PENDING | ICH_LR_GROUP1 | 4u;
	CHECK_EQ(FAKE_ON(0, arm64_guest_wfi(r)), FAKE_RETURNED);
	fake_lrs[0][3] = 0;
	CHECK_EQ(sched_calls.waits, 3);
	CHECK_EQ(fake_wfis[0], wfis);
	CHECK_EQ(a0->stats[STAT_EXIT_WFI], 7);
	shared_board_done();
}

/* The scheduling timer: armed for while a guest runs, its FIQ handed to the scheduler once. */
void test_shared_sched_timer(void)
{
	shared_board();
	CHECK_EQ(FAKE_ON(0, arch_sched_timer(123456)), FAKE_RETURNED);
	CHECK_EQ(fake_sysreg(0, "cnthp_cval_el2"), 123456);
	CHECK_EQ(fake_sysreg(0, "cnthp_ctl_el2"), CNTHP_CTL_ENABLE);
	fake_raise_group0(0, PPI_HYP_TIMER);
	CHECK_EQ(FAKE_ON(0, arm64_guest_fiq(fake_guest_regs(0))), FAKE_RETURNED);
	CHECK_EQ(sched_calls.expired, 1);
	CHECK_EQ(sched_calls.last, a0);
	/* Off before the return: its level would take it again at once. */
	CHECK_EQ(fake_sysreg(0, "cnthp_ctl_el2"), 0);
	CHECK_EQ(fake_sysreg(0, "icc_eoir0_el1"), PPI_HYP_TIMER);
	CHECK_EQ(fake_sysreg(0, "icc_dir_el1"), PPI_HYP_TIMER);
	CHECK_EQ(FAKE_ON(0, arch_sched_timer(99)), FAKE_RETURNED);
	CHECK_EQ(FAKE_ON(0, arch_sched_timer(0)), FAKE_RETURNED);
	CHECK_EQ(fake_sysreg(0, "cnthp_ctl_el2"), 0);
	/* A kick is still a kick. */
	fake_raise_group0(0, SGI_KICK);
	CHECK_EQ(FAKE_ON(0, arm64_guest_fiq(fake_guest_regs(0))), FAKE_RETURNED);
	CHECK_EQ(sched_calls.expired, 1);
	shared_board_done();
}

/*
 * a0 raises an SGI for a1, descheduled on the same core: it waits in a1's redistributor, the
 * core kicks itself, the kick applies a0's state only, and a1 finds its SGI when it resumes.
 */
void test_shared_sgi_to_a_sibling_on_the_same_core(void)
{
	shared_board();
	struct guest_regs *r = fake_guest_regs(0);

	a1->arch.redist.enabled = BIT(6);
	a1->arch.redist.group = BIT(6);
	a1->arch.redist.prio[6] = 0x80;
	memset(fake_lrs[0], 0, sizeof(fake_lrs[0]));
	r->x[5] = (6ull << 24) | BIT(1);
	CHECK_EQ(fake_trap(0, ((uint64_t)EC_SYSREG << 26) | ISS_SGI1R_WRITE(5), 0, 0), FAKE_RETURNED);
	CHECK_EQ(atomic_load(&a1->arch.redist.pending), BIT(6));
	CHECK_EQ(atomic_load(&fake_kicks) & 1u, 1u);   /* its home core: this one */
	CHECK(arch_vcpu_wake_pending(a1));
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		CHECK_EQ(fake_lrs[0][n], 0);              /* nothing in a0's list registers */
	CHECK_EQ(fake_kick_running(0), FAKE_RETURNED);
	CHECK_EQ(atomic_load(&a1->arch.redist.pending), BIT(6));
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		CHECK_EQ(fake_lrs[0][n], 0);
	CHECK_EQ(switch_to(a0, a1), FAKE_EXIT_RUN);
	CHECK_EQ(atomic_load(&a1->arch.redist.pending), 0);
	r = fake_guest_regs(0);   /* a1's frame now */
	bool found = false;
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		found |= (fake_lrs[0][n] & (ICH_LR_PENDING | ICH_LR_VINTID_MASK)) == (ICH_LR_PENDING | 6u);
	CHECK(found);
	/* And back: a1's SGI to a0 (saved) waits for a0 in turn. */
	a0->arch.redist.enabled = BIT(7);
	r->x[5] = (7ull << 24) | BIT(0);
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(fake_trap(0, ((uint64_t)EC_SYSREG << 26) | ISS_SGI1R_WRITE(5), 0, 0), FAKE_RETURNED);
	CHECK_EQ(atomic_load(&a0->arch.redist.pending), BIT(7));
	CHECK_EQ(atomic_load(&fake_kicks) & 1u, 1u);
	shared_board_done();
}

/*
 * A saved vCPU whose partition ends leaves from its core's loop (vcpu_act_descheduled, with the
 * core empty or running another vCPU): its quiesce touches nothing of the core's.
 */
void test_shared_quiesce_of_a_saved_vcpu(void)
{
	shared_board();
	fake_lrs[0][1] = ICH_LR_PENDING | ICH_LR_GROUP1 | 3u;
	fake_sysreg_set(0, "cntv_ctl_el0", CNT_CTL_ENABLE);
	fake_sysreg_set(0, "hcr_el2", 0x80000000u);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_quiesce(a1)), FAKE_RETURNED);   /* a0 runs */
	CHECK_EQ(fake_lrs[0][1], ICH_LR_PENDING | ICH_LR_GROUP1 | 3u);
	CHECK_EQ(fake_sysreg(0, "cntv_ctl_el0"), CNT_CTL_ENABLE);
	CHECK_EQ(fake_sysreg(0, "hcr_el2"), 0x80000000u);
	CHECK_EQ(cpus[0].vcpu, a0);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_save(a0)), FAKE_RETURNED);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_quiesce(a1)), FAKE_RETURNED);   /* nobody runs */
	CHECK(cpus[0].vcpu == NULL);
	/* The running vCPU's own quiesce is today's. */
	CHECK_EQ(FAKE_ON(0, arch_vcpu_resume(a1)), FAKE_EXIT_RUN);
	fake_sysreg_set(0, "cntv_ctl_el0", CNT_CTL_ENABLE);
	CHECK_EQ(FAKE_ON(0, arch_vcpu_quiesce(a1)), FAKE_RETURNED);
	CHECK_EQ(fake_sysreg(0, "cntv_ctl_el0"), 0);
	CHECK_EQ(fake_sysreg(0, "hcr_el2"), HCR_RW);
	shared_board_done();
}

/* A shared pool on cores that offer SVE or SME to guests is refused at boot, by name. */
void test_shared_pool_refused_on_cores_with_sve(void)
{
	for (int sme = 0; sme < 2; sme++) {
		fake_uart_clear();
		fake_config_begin(3);
		struct tern_config_partition *a = add_partition("a", "2", 0);
		struct tern_config_partition *b = add_partition("b", "2", 0);
		a->pool = b->pool = 0;
		a->weight = b->weight = 256;
		fake_config_add_pool("shared", 1u << 2, TERN_SCHED_CREDIT);
		cpus[0].sve = !sme;
		cpus[0].sme = sme;
		CHECK_EQ(fake_boot(0), FAKE_EXIT_BOARD_OFF);
		CHECK(console_has("tern: error: partition a: pool shared: these cores offer SVE or SME "
				  "to guests, which a shared core does not switch"));
		cpus[0].sve = cpus[0].sme = false;
	}
	/* The same cores in a null pool: the vCPU never leaves its core, nothing to switch. */
	fake_uart_clear();
	fake_config_begin(3);
	add_partition("a", "2", 0)->pool = 0;
	fake_config_add_pool("solo", 1u << 2, TERN_SCHED_NULL);
	cpus[0].sve = true;
	CHECK(fake_boot(0) != FAKE_EXIT_BOARD_OFF);
	CHECK(!console_has("SVE"));
	cpus[0].sve = false;
}
