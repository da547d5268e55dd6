/* SPDX-License-Identifier: MIT */
/*
 * Trap-less vCPUs on a shared core (arch/riscv64: stage2.c's files, vcpu.c, traps.c): each has
 * a guest interrupt file of its own on its core, which its G-stage maps and hstatus.VGEIN
 * selects while it runs; while it is saved its hgeie bit makes an interrupt there an SGEI,
 * which wakes the core's loop, and hgeip says the vCPU has one pending.
 */
#include <string.h>
#include <tern/arch.h>
#include <tern/platform.h>
#include <tern/shared_core.h>
#include <tern/stats.h>
#include "check.h"
#include "rv.h"
#include "system.h"
#include "tests.h"

#define SHARED 2u /* the credit pool's one core */

static unsigned looks;

static void count_look(struct vcpu *v)
{
	(void)v;
	looks++;
}

/*
 * "rt" trap-less on a null core (1); on the shared core 2, "a" (trap-less), "t" (trapped) and
 * "b" (trap-less, two vCPUs): a, then b's two, take the core's files 1, 2, 3.
 */
static struct partition *pa, *pb;

static bool direct_boot(void)
{
	fake_uart_clear();
	fake_config_begin(4);
	add_partition("rt", "1", TERN_PF_IRQ_DIRECT | TERN_PF_WFI_NATIVE);
	struct tern_config_partition *a = add_partition("a", "2", TERN_PF_IRQ_DIRECT);
	struct tern_config_partition *t = add_partition("t", "2", 0);
	struct tern_config_partition *b = add_partition("b", "22", TERN_PF_IRQ_DIRECT);
	a->pool = t->pool = b->pool = 0;
	a->weight = t->weight = b->weight = 256;
	fake_config_add_pool("shared", 1u << SHARED, TERN_SCHED_CREDIT);
	CHECK_EQ(boot_board(), FAKE_EXIT_WAIT);
	if (num_partitions != 4) {
		CHECK(!"booted");
		fprintf(stderr, "%.*s", (int)fake_uart_len, fake_uart_out);
		return false;
	}
	pa = partition_named("a");
	pb = partition_named("b");
	looks = 0;
	fake_vcpu_check_requests = count_look;
	return true;
}

static uint64_t file_page(unsigned core, uint32_t file)
{
	return (uintptr_t)fake_imsic[core] + (uint64_t)file * IMSIC_FILE_SIZE;
}

static uint32_t vgein(unsigned core)
{
	return (uint32_t)((fake_csr(core, "hstatus") & HSTATUS_VGEIN_MASK) >> HSTATUS_VGEIN_SHIFT);
}

/* Each trap-less vCPU's file on its core, in its G-stage where the guest has its IMSIC file. */
void test_rv_shared_direct_files_per_vcpu(void)
{
	if (!direct_boot())
		return;
	CHECK_EQ(riscv_vcpu_file(partition_named("rt"), 0), VCPU_GUEST_FILE);
	CHECK_EQ(riscv_vcpu_file(pa, 0), 1);
	CHECK_EQ(riscv_vcpu_file(pb, 0), 2);
	CHECK_EQ(riscv_vcpu_file(pb, 1), 3);
	CHECK_EQ(riscv_vcpu_file_hpa(pb, 1), file_page(SHARED, 3));
	for (uint32_t i = 0; i < 2; i++) {
		uint64_t hpa = 0;
		bool w = false, x = true;
		CHECK(shared_map_of(pb, platform.arch.imsic_s_base + i * platform.arch.imsic_vcpu_stride,
				    &hpa, &w, &x));
		CHECK_EQ(hpa, file_page(SHARED, 2 + i));
		CHECK(w && !x);
	}
	/* A device's MSI to b's vCPU 1 goes to that file too. */
	uint64_t host = 0;
	CHECK(arch_msi_target(pb, platform.arch.imsic_s_base + platform.arch.imsic_vcpu_stride, &host));
	CHECK_EQ(host, file_page(SHARED, 3));
	/* The core's first pick runs with its own file selected. */
	struct vcpu *first = fake_cores[SHARED].running;
	CHECK(first != NULL);
	if (first != NULL && first->partition != partition_named("t"))
		CHECK_EQ(vgein(SHARED), riscv_vcpu_file(first->partition, first->index));
}

/*
 * Switched out, its file's bit in hgeie is set (an MSI there raises SGEI); resumed, it is
 * clear again (its MSIs are its guest's, no trap), VGEIN is its own, and the core's SGEI and
 * timer are enabled.
 */
void test_rv_shared_direct_hgeie_while_saved(void)
{
	if (!direct_boot())
		return;
	struct vcpu *a0 = &pa->vcpu[0], *b1 = &pb->vcpu[1];

	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_run(a0, 0x80000000u, 0)), FAKE_EXIT_RUN);
	CHECK_EQ(vgein(SHARED), 1);
	CHECK_EQ(fake_csr(SHARED, "0x607") & BIT(1), 0);
	CHECK_EQ(fake_csr(SHARED, "sie") & (SIE_SGEIE | SIE_STIE), SIE_SGEIE | SIE_STIE);
	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_save(a0)), FAKE_RETURNED);
	CHECK_EQ(fake_csr(SHARED, "0x607"), BIT(1));
	atomic_store(&b1->power, VCPU_ON);
	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_run(b1, 0x80000000u, 0)), FAKE_EXIT_RUN);
	CHECK_EQ(vgein(SHARED), 3);
	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_save(b1)), FAKE_RETURNED);
	CHECK_EQ(fake_csr(SHARED, "0x607"), BIT(1) | BIT(3));
	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_resume(a0)), FAKE_EXIT_RUN);
	CHECK_EQ(vgein(SHARED), 1);
	CHECK_EQ(fake_csr(SHARED, "0x607"), BIT(3));
	CHECK_EQ(fake_csr(SHARED, "sie") & (SIE_SGEIE | SIE_STIE), SIE_SGEIE | SIE_STIE);
}

static bool wake_pending(struct vcpu *v)
{
	bool pending = false;

	CHECK_EQ(FAKE_ON(SHARED, pending = arch_vcpu_wake_pending(v)), FAKE_RETURNED);
	return pending;
}

/* A saved trap-less vCPU has an interrupt pending when its own file says so (hgeip), if enabled. */
void test_rv_shared_direct_wake_via_hgeip(void)
{
	if (!direct_boot())
		return;
	struct vcpu *b1 = &pb->vcpu[1];
	struct arch_vcpu_context *x = riscv_vcpu_context(b1);

	atomic_store(&b1->power, VCPU_ON);
	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_run(b1, 0x80000000u, 0)), FAKE_EXIT_RUN);
	fake_csr_put(SHARED, "hie", HIDELEG_GUEST);
	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_save(b1)), FAKE_RETURNED);
	x->vstimecmp = ~0ULL;
	CHECK(!wake_pending(b1));
	fake_csr_put(SHARED, "0xe12", BIT(2)); /* b's vCPU 0's file: not b1's */
	CHECK(!wake_pending(b1));
	fake_csr_put(SHARED, "0xe12", BIT(3));
	CHECK(wake_pending(b1));
	x->hie = HVIP_VSSIP | HVIP_VSTIP; /* its guest left external interrupts off */
	CHECK(!wake_pending(b1));
}

/*
 * An SGEI while another vCPU runs: the raising files stop raising it (their hgeie bits off,
 * the loop reads hgeip), and the core's loop looks, as at a kick; no fault.
 */
void test_rv_shared_direct_sgei_wakes_the_loop(void)
{
	if (!direct_boot())
		return;
	struct vcpu *a0 = &pa->vcpu[0], *b1 = &pb->vcpu[1];

	atomic_store(&b1->power, VCPU_ON);
	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_run(b1, 0x80000000u, 0)), FAKE_EXIT_RUN);
	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_save(b1)), FAKE_RETURNED);
	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_run(a0, 0x80000000u, 0)), FAKE_EXIT_RUN);
	CHECK_EQ(fake_csr(SHARED, "0x607"), BIT(3));
	fake_csr_put(SHARED, "0xe12", BIT(3));
	uint64_t irqs = a0->stats[STAT_EXIT_IRQ];
	CHECK_EQ(fake_rv_trap(SHARED, SCAUSE_IRQ | IRQ_S_GEXT, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(looks, 1);
	CHECK_EQ(fake_csr(SHARED, "0x607"), 0);
	CHECK_EQ(atomic_load(&pa->state), PARTITION_RUNNING);
	CHECK_EQ(a0->stats[STAT_EXIT_IRQ], irqs + 1);
	/* Still pending for b1 through hgeip, which the loop reads. */
	fake_csr_put(SHARED, "hie", 0);
	riscv_vcpu_context(b1)->hie = HVIP_VSEIP;
	CHECK(wake_pending(b1));
}

/* A trap-less guest's SBI timer on a shared core is its vstimecmp; the core's event stays. */
void test_rv_shared_direct_sbi_timer_keeps_the_core_event(void)
{
	if (!direct_boot())
		return;
	struct vcpu *a0 = &pa->vcpu[0];

	CHECK_EQ(FAKE_ON(SHARED, arch_vcpu_run(a0, 0x80000000u, 0)), FAKE_EXIT_RUN);
	CHECK_EQ(FAKE_ON(SHARED, arch_sched_timer(5000)), FAKE_RETURNED);
	CHECK_EQ(fake_csr(SHARED, "0x14d"), 5000);
	CHECK_EQ(sbi(SHARED, SBI_TIME, 0, 1234, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(SHARED, "0x24d"), 1234);
	CHECK_EQ(fake_csr(SHARED, "0x14d"), 5000);
}

/* A trap-less vCPU's file stays on its core: vcpu-pin and pool-migrate refuse to move it. */
void test_rv_shared_direct_vcpu_does_not_move(void)
{
	if (!direct_boot())
		return;
	struct partition *t = partition_named("t");
	CHECK(arch_vcpu_can_move(&pa->vcpu[0]) != NULL);
	CHECK(arch_vcpu_can_move(&t->vcpu[0]) == NULL);
	/* Within the one-core pool a pin has nowhere to go: the pool's check comes first. */
	CHECK(!strcmp(shared_core_pin(&pb->vcpu[1], 3),
		      "that core is not in its pool (pool-migrate moves a partition to another)"));
	CHECK(!strcmp(shared_core_migrate(pa, 0) ? "moved" : "same pool", "same pool"));
	fake_vcpu_check_requests = NULL;
}
