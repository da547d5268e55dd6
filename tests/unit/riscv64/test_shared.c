/* SPDX-License-Identifier: MIT */
/*
 * Shared cores, the riscv64 port's side (arch/riscv64/vcpu.c, traps.c, firmware.c): a vCPU
 * switched out and back in (arch_vcpu_save, arch_vcpu_resume) with its local fence, what a
 * saved vCPU has pending (arch_vcpu_wake_pending) and when its timer fires
 * (arch_vcpu_timer_deadline), the core's one stimecmp for two deadlines (arch_sched_timer and a
 * trap-and-emulate guest's SBI timer), the fast paths' counts folded into the vCPU that left,
 * a trapped WFI that blocks (sched_guest_waits), and IPIs to a vCPU that is not running.
 * The core's loop is not here: the tests call what it will call, and see what the port calls
 * back (fake_sched_guest_waits, fake_sched_timer_expired).
 */
#include <string.h>
#include <tern/arch.h>
#include "check.h"
#include "rv.h"
#include "tests.h"

#define CORE  1u /* "trap"'s vCPU 0's core, made shared */
#define OTHER 2u /* another shared core */
#define ENTRY 0x80000000u

static struct vcpu *a0, *a1, *n0; /* "trap"'s two vCPUs and "none"'s, all homed on CORE */

/* What the port called back, and how often. */
static struct vcpu *waited, *expired;
static unsigned waits, expiries;
static uint64_t waited_sepc;
static uint64_t rearm; /* sched_timer_expired re-arms the core's event there (0: not) */

static void record_wait(struct vcpu *v)
{
	waited = v;
	waits++;
	waited_sepc = fake_guest_regs(fake_cpu)->sepc;
	fake_exit_to_test(FAKE_EXIT_WAIT); /* noreturn: the core would run another */
}

static unsigned looks;

/* A kick's look at the core's vCPUs (the loop's, not the port's): counted. */
static void record_look(struct vcpu *v)
{
	(void)v;
	looks++;
}

static void record_expiry(struct vcpu *v)
{
	expired = v;
	expiries++;
	if (rearm)
		arch_sched_timer(rearm);
}

/* The standard board with CORE and OTHER shared, and three vCPUs of two partitions homed on CORE. */
static void shared_boot(void)
{
	rv_boot();
	fake_shared_cores = (1u << CORE) | (1u << OTHER);
	fake_sched_guest_waits = record_wait;
	fake_sched_timer_expired = record_expiry;
	fake_vcpu_check_requests = record_look;
	a0 = &rv_part(RV_TRAP)->vcpu[0];
	a1 = &rv_part(RV_TRAP)->vcpu[1];
	n0 = &rv_part(RV_NONE)->vcpu[0];
	a1->pcpu = n0->pcpu = CORE;
	atomic_store(&a1->power, VCPU_ON);
}

/* v enters CORE for the first time (arch_vcpu_run), with its guest's interrupts enabled. */
static void enter(unsigned cpu, struct vcpu *v)
{
	CHECK_EQ(FAKE_ON(cpu, arch_vcpu_run(v, ENTRY, 0)), FAKE_EXIT_RUN);
	CHECK(fake_cores[cpu].running == v);
	fake_csr_put(cpu, "hie", HIDELEG_GUEST);
}

static void leave(unsigned cpu, struct vcpu *v)
{
	CHECK_EQ(FAKE_ON(cpu, arch_vcpu_save(v)), FAKE_RETURNED);
}

static void resume(unsigned cpu, struct vcpu *v)
{
	CHECK_EQ(FAKE_ON(cpu, arch_vcpu_resume(v)), FAKE_EXIT_RUN);
	CHECK(fake_cores[cpu].running == v);
	CHECK(cpus[cpu].vcpu == v);
}

static unsigned fences(unsigned cpu)
{
	return fake_insn_count(cpu, "hfence.vvma");
}

void test_rv_shared_entry_sets_the_fast_paths_scauses(void)
{
	shared_boot();
	/* Core 1 ran "trap"'s vCPU 0 at boot, not shared then: the fast paths' own scauses. */
	CHECK(!cpus[CORE].shared);
	CHECK_EQ(cpus[CORE].fast_virtual_insn, EXC_VIRTUAL_INSTRUCTION);
	CHECK_EQ(cpus[CORE].fast_timer_irq, IRQ_S_TIMER << 1);
	enter(CORE, a0);
	CHECK(cpus[CORE].shared);
	CHECK_EQ(cpus[CORE].fast_virtual_insn, FAST_NEVER);
	CHECK_EQ(cpus[CORE].fast_timer_irq, FAST_NEVER);
	/* A resume sets them too; a core that is no longer shared gets its fast paths back. */
	leave(CORE, a0);
	fake_shared_cores = 0;
	resume(CORE, a0);
	CHECK(!cpus[CORE].shared);
	CHECK_EQ(cpus[CORE].fast_virtual_insn, EXC_VIRTUAL_INSTRUCTION);
	CHECK_EQ(cpus[CORE].fast_timer_irq, IRQ_S_TIMER << 1);
}

/*
 * Two vCPUs of one partition take turns: each comes back where it left (its frame and VS
 * CSRs), and its VS-stage translations are dropped on the core only if its sibling ran there
 * since (one VMID for both).
 */
void test_rv_shared_two_vcpus_of_one_partition(void)
{
	shared_boot();
	struct guest_regs *r = fake_guest_regs(CORE);

	enter(CORE, a0);
	r->x[10] = 0xa0;
	r->sepc = ENTRY + 0x100;
	fake_csr_put(CORE, "vsatp", 0xa0a0);
	leave(CORE, a0);
	CHECK(cpus[CORE].vcpu == NULL);
	enter(CORE, a1);
	r->x[10] = 0xa1;
	r->sepc = ENTRY + 0x200;
	fake_csr_put(CORE, "vsatp", 0xa1a1);
	leave(CORE, a1);

	unsigned before = fences(CORE);
	resume(CORE, a0);
	CHECK_EQ(fences(CORE), before + 1); /* a1 ran here since a0 did */
	CHECK_EQ(r->x[10], 0xa0);
	CHECK_EQ(r->sepc, ENTRY + 0x100);
	CHECK_EQ(fake_csr(CORE, "vsatp"), 0xa0a0);
	CHECK_EQ(fake_csr(CORE, "hgatp"), rv_part(RV_TRAP)->arch.hgatp);
	leave(CORE, a0);
	resume(CORE, a0);
	CHECK_EQ(fences(CORE), before + 1); /* nobody ran in between */
	leave(CORE, a0);
	resume(CORE, a1);
	CHECK_EQ(fences(CORE), before + 2);
	CHECK_EQ(r->x[10], 0xa1);
	CHECK_EQ(r->sepc, ENTRY + 0x200);
	CHECK_EQ(fake_csr(CORE, "vsatp"), 0xa1a1);
}

/* Two partitions on one core: a VMID each, so a switch between them fences nothing. */
void test_rv_shared_two_partitions_one_core(void)
{
	shared_boot();
	struct guest_regs *r = fake_guest_regs(CORE);

	enter(CORE, a0);
	r->x[11] = 0xa;
	leave(CORE, a0);
	enter(CORE, n0);
	r->x[11] = 0xb;
	CHECK_EQ(fake_csr(CORE, "hgatp"), rv_part(RV_NONE)->arch.hgatp);
	leave(CORE, n0);

	unsigned before = fences(CORE);
	resume(CORE, a0);
	CHECK_EQ(r->x[11], 0xa);
	CHECK_EQ(fake_csr(CORE, "hgatp"), rv_part(RV_TRAP)->arch.hgatp);
	leave(CORE, a0);
	resume(CORE, n0);
	CHECK_EQ(r->x[11], 0xb);
	CHECK_EQ(fake_csr(CORE, "hgatp"), rv_part(RV_NONE)->arch.hgatp);
	leave(CORE, n0);
	resume(CORE, a0);
	CHECK_EQ(fences(CORE), before);
}

/* A vCPU that ran on another core since it last ran here has stale translations here too. */
void test_rv_shared_a_vcpu_that_moved_is_fenced(void)
{
	shared_boot();

	enter(CORE, a0);
	leave(CORE, a0);
	unsigned here = fences(CORE), there = fences(OTHER);
	resume(OTHER, a0);
	CHECK_EQ(fences(OTHER), there + 1);
	leave(OTHER, a0);
	resume(CORE, a0);
	CHECK_EQ(fences(CORE), here + 1);
}

/*
 * A sibling's SBI IPI and RFENCE to a vCPU of the same core that is not running: a kick to the
 * caller's own core, nothing in the running vCPU's interrupts, the fence's call returns (the
 * target cannot take it until it runs), and both are the target's when it resumes.
 */
void test_rv_shared_ipi_and_fence_to_a_vcpu_switched_out(void)
{
	shared_boot();

	enter(CORE, a1);
	leave(CORE, a1);
	enter(CORE, a0);
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(sbi(CORE, SBI_IPI, 0, 2, 0, 0), FAKE_RETURNED);
	CHECK_EQ(a0_of(CORE), 0);
	CHECK_EQ(atomic_load(&fake_kicks), 1u << CORE);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSSIP, 0);
	CHECK_EQ(atomic_load(&a1->arch.posted), POSTED_VSSIP);
	CHECK_EQ(sbi(CORE, SBI_RFENCE, 1, 2, 0, 0), FAKE_RETURNED);
	CHECK_EQ(a0_of(CORE), 0);
	CHECK_EQ(atomic_load(&a1->arch.posted), POSTED_VSSIP | POSTED_FENCE);
	/* The kick to itself, taken: a0's posted state is empty, a1's stays. */
	CHECK_EQ(fake_kick_running(CORE), FAKE_RETURNED);
	CHECK_EQ(looks, 1);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSSIP, 0);
	CHECK_EQ(atomic_load(&a1->arch.posted), POSTED_VSSIP | POSTED_FENCE);
	leave(CORE, a0);

	unsigned before = fences(CORE);
	resume(CORE, a1);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSSIP, HVIP_VSSIP);
	CHECK_EQ(atomic_load(&a1->arch.posted), 0);
	CHECK_EQ(fences(CORE), before + 2); /* its sibling ran here since, and its fence */
}

/* Each thing that ends a saved vCPU's WFI, and none while its enables (vsie) are off. */
void test_rv_shared_wake_pending(void)
{
	shared_boot();
	struct arch_vcpu_context *x = riscv_vcpu_context(a1);
	struct vaplic *va = &rv_part(RV_TRAP)->arch.vaplic;

	enter(CORE, a1);
	leave(CORE, a1);
	CHECK_EQ(x->hie, HIDELEG_GUEST);
	CHECK(!arch_vcpu_wake_pending(a1));
	/* Its saved hvip: an interrupt pending when it left. */
	x->hvip = HVIP_VSEIP;
	CHECK(arch_vcpu_wake_pending(a1));
	x->hvip = 0;
	/* Posted by a sibling: an IPI. */
	atomic_store(&a1->arch.posted, POSTED_VSSIP);
	CHECK(arch_vcpu_wake_pending(a1));
	/* ... a fence alone is no interrupt. */
	atomic_store(&a1->arch.posted, POSTED_FENCE);
	CHECK(!arch_vcpu_wake_pending(a1));
	/* Its APLIC changed: evaluated now, as vaplic_update would on its core. */
	atomic_store(&a1->arch.posted, POSTED_VAPLIC);
	CHECK(!arch_vcpu_wake_pending(a1));
	va->domain_ie = true;
	a1->arch.idc.idelivery = 1;
	a1->arch.idc.iforce = 1;
	CHECK(arch_vcpu_wake_pending(a1));
	x->hvip = HVIP_VSEIP; /* and one no longer raised is no longer pending */
	a1->arch.idc.iforce = 0;
	CHECK(!arch_vcpu_wake_pending(a1));
	x->hvip = 0;
	atomic_store(&a1->arch.posted, 0);
	/* Its SBI timer, once due. */
	x->stimecmp = fake_now + 10;
	CHECK(!arch_vcpu_wake_pending(a1));
	fake_now += 10;
	CHECK(arch_vcpu_wake_pending(a1));
	/* Nothing wakes a WFI the guest's enables leave out, whatever vsstatus.SIE says. */
	x->hie = HVIP_VSSIP | HVIP_VSEIP;
	CHECK(!arch_vcpu_wake_pending(a1));
	x->hie = HVIP_VSTIP;
	x->vsstatus = 0;
	CHECK(arch_vcpu_wake_pending(a1));
}

void test_rv_shared_timer_deadline(void)
{
	shared_boot();
	struct arch_vcpu_context *x = riscv_vcpu_context(a1);
	struct vcpu *d = &rv_part(RV_DIRECT)->vcpu[0];
	struct arch_vcpu_context *xd = riscv_vcpu_context(d);

	enter(CORE, a1);
	CHECK_EQ(sbi(CORE, SBI_TIME, 0, 123456, 0, 0), FAKE_RETURNED);
	leave(CORE, a1);
	CHECK_EQ(arch_vcpu_timer_deadline(a1), 123456);
	x->hie = HVIP_VSSIP | HVIP_VSEIP; /* its timer not enabled: it never wakes it */
	CHECK_EQ(arch_vcpu_timer_deadline(a1), UINT64_MAX);
	x->hie = HVIP_VSTIP;
	x->stimecmp = ~0ULL; /* none set */
	CHECK_EQ(arch_vcpu_timer_deadline(a1), UINT64_MAX);
	/* A trap-less vCPU's timer is its vstimecmp (the counter's time: htimedelta is 0). */
	xd->hie = HVIP_VSTIP;
	xd->vstimecmp = 777;
	xd->stimecmp = 999; /* its QEMU nudge, no guest timer */
	CHECK_EQ(arch_vcpu_timer_deadline(d), 777);
	fake_now = 776;
	CHECK(!arch_vcpu_wake_pending(d));
	fake_now = 777;
	CHECK(arch_vcpu_wake_pending(d));
}

/*
 * The core's stimecmp holds the earlier of its scheduling event and the running vCPU's SBI
 * timer; the interrupt is told apart by time, either way and both at once, and what the vCPU
 * takes with it when it leaves is its own deadline.
 */
void test_rv_shared_stimecmp_for_two_deadlines(void)
{
	shared_boot();

	fake_now = 1000;
	FAKE_ON(CORE, arch_sched_timer(5000));
	enter(CORE, a0);
	CHECK_EQ(fake_csr(CORE, "0x14d"), 5000); /* armed before the entry, kept by it */
	CHECK_EQ(sbi(CORE, SBI_TIME, 0, 3000, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(CORE, "0x14d"), 3000);
	CHECK_EQ(sbi(CORE, SBI_TIME, 0, 8000, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(CORE, "0x14d"), 5000);

	/* The core's event: the scheduler's, the guest's timer left armed. */
	fake_now = 5000;
	CHECK_EQ(fake_rv_trap(CORE, SCAUSE_IRQ | IRQ_S_TIMER, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(expiries, 1);
	CHECK(expired == a0);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSTIP, 0);
	CHECK_EQ(fake_csr(CORE, "0x14d"), 8000);
	/* The guest's: its VSTIP, the scheduler not told. */
	fake_now = 8000;
	CHECK_EQ(fake_rv_trap(CORE, SCAUSE_IRQ | IRQ_S_TIMER, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(expiries, 1);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSTIP, HVIP_VSTIP);
	CHECK_EQ(fake_csr(CORE, "0x14d"), ~0ULL);
	CHECK_EQ(stat_of(CORE, STAT_IRQ_INJECTED), 1);
	CHECK_EQ(stat_of(CORE, STAT_EXIT_IRQ), 2);

	/* Both at once; the scheduler re-arms while the vCPU goes on. */
	CHECK_EQ(sbi(CORE, SBI_TIME, 0, 9000, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSTIP, 0);
	FAKE_ON(CORE, arch_sched_timer(9000));
	rearm = 12000;
	fake_now = 9500;
	CHECK_EQ(fake_rv_trap(CORE, SCAUSE_IRQ | IRQ_S_TIMER, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(expiries, 2);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSTIP, HVIP_VSTIP);
	CHECK_EQ(fake_csr(CORE, "0x14d"), 12000);

	/* What leaves with the vCPU is its own deadline, not the core's event. */
	CHECK_EQ(sbi(CORE, SBI_TIME, 0, 20000, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(CORE, "0x14d"), 12000);
	leave(CORE, a0);
	CHECK_EQ(riscv_vcpu_context(a0)->stimecmp, 20000);
	CHECK_EQ(fake_csr(CORE, "0x14d"), ~0ULL);
	/* Idle, the core's event alone; resumed, the earlier again. */
	FAKE_ON(CORE, arch_sched_timer(15000));
	CHECK_EQ(fake_csr(CORE, "0x14d"), 15000);
	resume(CORE, a0);
	CHECK_EQ(fake_csr(CORE, "0x14d"), 15000);
	FAKE_ON(CORE, arch_sched_timer(0));
	CHECK_EQ(fake_csr(CORE, "0x14d"), 20000);
}

/* On a core that is not shared the SBI timer is the core's stimecmp alone, as before. */
void test_rv_shared_timer_untouched_on_a_core_not_shared(void)
{
	shared_boot();
	fake_shared_cores = 0;
	enter(CORE, a0);
	CHECK_EQ(sbi(CORE, SBI_TIME, 0, 3000, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(CORE, "0x14d"), 3000);
	fake_now = 3000;
	CHECK_EQ(fake_rv_trap(CORE, SCAUSE_IRQ | IRQ_S_TIMER, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(expiries, 0);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSTIP, HVIP_VSTIP);
	CHECK_EQ(fake_csr(CORE, "0x14d"), ~0ULL);
}

/*
 * The fast paths' counts (vectors.S counts in the core) belong to the vCPU running: folded
 * into it when it leaves a shared core, and no other vCPU homed there reads them.  A core
 * that is not shared keeps them as before.
 */
void test_rv_shared_fast_path_counts_follow_the_vcpu(void)
{
	shared_boot();

	enter(CORE, a0);
	cpus[CORE].fast_wfi = 3;
	cpus[CORE].fast_timer = 2;
	cpus[CORE].fast_doorbell = 1;
	CHECK_EQ(arch_vcpu_stat(a0, STAT_EXIT_WFI), 3);
	CHECK_EQ(arch_vcpu_stat(a1, STAT_EXIT_WFI), 0);
	leave(CORE, a0);
	CHECK_EQ(cpus[CORE].fast_wfi, 0);
	CHECK_EQ(a0->stats[STAT_EXIT_WFI] + arch_vcpu_stat(a0, STAT_EXIT_WFI), 3);
	CHECK_EQ(a0->stats[STAT_EXIT_IRQ] + arch_vcpu_stat(a0, STAT_EXIT_IRQ), 2);
	CHECK_EQ(a0->stats[STAT_IRQ_INJECTED] + arch_vcpu_stat(a0, STAT_IRQ_INJECTED), 2);
	CHECK_EQ(a0->stats[STAT_FAST_DOORBELL] + arch_vcpu_stat(a0, STAT_FAST_DOORBELL), 1);
	CHECK_EQ(a0->stats[STAT_EXIT_MMIO] + arch_vcpu_stat(a0, STAT_EXIT_MMIO), 1);
	CHECK_EQ(a0->stats[STAT_DOORBELL_RING], 1);
	enter(CORE, a1);
	cpus[CORE].fast_wfi = 5;
	CHECK_EQ(a1->stats[STAT_EXIT_WFI] + arch_vcpu_stat(a1, STAT_EXIT_WFI), 5);
	CHECK_EQ(a0->stats[STAT_EXIT_WFI] + arch_vcpu_stat(a0, STAT_EXIT_WFI), 3);

	/* Core 3 ("direct"'s vCPU 0) is not shared: its counters stay the core's. */
	struct vcpu *d = &rv_part(RV_DIRECT)->vcpu[0];
	cpus[3].fast_wfi = 4;
	leave(3, d);
	CHECK_EQ(cpus[3].fast_wfi, 4);
	CHECK_EQ(d->stats[STAT_EXIT_WFI], 0);
	CHECK_EQ(arch_vcpu_stat(d, STAT_EXIT_WFI), 4);
}

/*
 * A trapped WFI on a shared core: past the WFI, then blocked (sched_guest_waits) if nothing
 * of the vCPU's is pending, without waiting on the core; else the guest goes on.
 */
void test_rv_shared_wfi_blocks_the_vcpu(void)
{
	shared_boot();
	struct guest_regs *r = fake_guest_regs(CORE);

	enter(CORE, a0);
	unsigned wfis = fake_insn_count(CORE, "wfi");
	r->sepc = ENTRY + 0x40;
	CHECK_EQ(fake_rv_trap(CORE, EXC_VIRTUAL_INSTRUCTION, INSN_WFI, 0, 0), FAKE_EXIT_WAIT);
	CHECK_EQ(waits, 1);
	CHECK(waited == a0);
	CHECK_EQ(waited_sepc, ENTRY + 0x44);
	CHECK_EQ(fake_insn_count(CORE, "wfi"), wfis);
	CHECK_EQ(stat_of(CORE, STAT_EXIT_WFI), 1);

	/* Its own interrupt pending and enabled: it goes on. */
	fake_csr_put(CORE, "hvip", HVIP_VSSIP);
	CHECK_EQ(fake_rv_trap(CORE, EXC_VIRTUAL_INSTRUCTION, INSN_WFI, 0, 0), FAKE_RETURNED);
	CHECK_EQ(waits, 1);
	CHECK_EQ(r->sepc, ENTRY + 0x48);
	/* ... but not one it has not enabled. */
	fake_csr_put(CORE, "hie", HVIP_VSTIP);
	CHECK_EQ(fake_rv_trap(CORE, EXC_VIRTUAL_INSTRUCTION, INSN_WFI, 0, 0), FAKE_EXIT_WAIT);
	CHECK_EQ(waits, 2);
	fake_csr_put(CORE, "hvip", 0);
	fake_csr_put(CORE, "hie", HIDELEG_GUEST);

	/* A kick that brings it an IPI, pending in the core: taken, and it goes on. */
	atomic_store(&a0->arch.posted, POSTED_VSSIP);
	fake_kick_pending(CORE);
	CHECK_EQ(fake_rv_trap(CORE, EXC_VIRTUAL_INSTRUCTION, INSN_WFI, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSSIP, HVIP_VSSIP);
	CHECK_EQ(looks, 1);
	CHECK_EQ(waits, 2);
	fake_csr_put(CORE, "hvip", 0);

	/* Its SBI timer due, pending in the core: its VSTIP, and it goes on. */
	CHECK_EQ(sbi(CORE, SBI_TIME, 0, fake_now, 0, 0), FAKE_RETURNED);
	fake_csr_put(CORE, "sip", SIP_STIP);
	CHECK_EQ(fake_rv_trap(CORE, EXC_VIRTUAL_INSTRUCTION, INSN_WFI, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(CORE, "hvip") & HVIP_VSTIP, HVIP_VSTIP);
	CHECK_EQ(waits, 2);
	fake_csr_put(CORE, "hvip", 0);

	/* The core's event due: the scheduler decides first, then the vCPU waits. */
	FAKE_ON(CORE, arch_sched_timer(fake_now));
	fake_csr_put(CORE, "sip", SIP_STIP);
	CHECK_EQ(fake_rv_trap(CORE, EXC_VIRTUAL_INSTRUCTION, INSN_WFI, 0, 0), FAKE_EXIT_WAIT);
	CHECK_EQ(expiries, 1);
	CHECK_EQ(waits, 3);
	CHECK_EQ(fake_insn_count(CORE, "wfi"), wfis);
}

/* The same WFI on a core that is not shared waits on the core, as before. */
void test_rv_shared_wfi_on_a_core_not_shared_waits_there(void)
{
	shared_boot();
	fake_shared_cores = 0;
	enter(CORE, a0);
	unsigned wfis = fake_insn_count(CORE, "wfi");
	CHECK_EQ(fake_rv_trap(CORE, EXC_VIRTUAL_INSTRUCTION, INSN_WFI, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_insn_count(CORE, "wfi"), wfis + 1);
	CHECK_EQ(waits, 0);
}

/*
 * SBI HSM hart_suspend on a shared core: blocked like a WFI, the call's return already in its
 * frame (retentive: past the ecall; non-retentive: at resume_addr with hart id and opaque),
 * SUSPENDED to its sibling until it resumes; with one of its interrupts pending it returns.
 */
void test_rv_shared_hsm_suspend_blocks_the_vcpu(void)
{
	shared_boot();
	struct guest_regs *r = fake_guest_regs(CORE);
	uint64_t ram = rv_part(RV_TRAP)->cfg->ram_ipa;

	enter(CORE, a0);
	r->sepc = ENTRY + 0x80;
	CHECK_EQ(sbi(CORE, SBI_HSM, 3, 0, 0, 0), FAKE_EXIT_WAIT);
	CHECK(waited == a0);
	CHECK_EQ(r->sepc, ENTRY + 0x84);
	CHECK_EQ(a0_of(CORE), 0);
	CHECK_EQ(fake_insn_count(CORE, "wfi"), 0);
	CHECK(atomic_load(&a0->arch.suspended));
	leave(CORE, a0);
	resume(CORE, a0);
	CHECK(!atomic_load(&a0->arch.suspended));
	CHECK_EQ(r->sepc, ENTRY + 0x84);

	/* Non-retentive: it resumes at resume_addr, a0 = hart id, a1 = opaque, vsatp 0. */
	fake_csr_put(CORE, "vsatp", 0x1234);
	fake_csr_put(CORE, "vsstatus", SSTATUS_SIE);
	CHECK_EQ(sbi(CORE, SBI_HSM, 3, 0x80000000u, ram + 0x100, 0x77), FAKE_EXIT_WAIT);
	CHECK_EQ(waits, 2);
	CHECK_EQ(r->sepc, ram + 0x100);
	CHECK_EQ(a0_of(CORE), 0);
	CHECK_EQ(a1_of(CORE), 0x77);
	CHECK_EQ(fake_csr(CORE, "vsatp"), 0);
	CHECK_EQ(fake_csr(CORE, "vsstatus") & SSTATUS_SIE, 0);

	/* An interrupt of its own already pending: the call returns, nothing blocked. */
	fake_csr_put(CORE, "hvip", HVIP_VSTIP);
	r->sepc = ENTRY + 0x90;
	CHECK_EQ(sbi(CORE, SBI_HSM, 3, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(waits, 2);
	CHECK_EQ(a0_of(CORE), 0);
	CHECK_EQ(r->sepc, ENTRY + 0x94);
	CHECK(!atomic_load(&a0->arch.suspended));
}
