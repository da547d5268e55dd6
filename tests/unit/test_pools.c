/* SPDX-License-Identifier: MIT */
/*
 * Pools at boot: an explicit null pool boots as the system without it; a shared pool's core
 * runs its scheduler's first pick.
 */
#include <string.h>
#include <tern/config_abi.h>
#include "check.h"
#include "system.h"
#include "tests.h"

void test_pools_null_pool_boots_as_without(void)
{
	fake_config_begin(4);
	add_partition("rt", "0", 0);
	struct tern_config_partition *a = add_partition("a", "2,3", 0);
	a->pool = 0;
	fake_config_add_pool("solo", 1u << 2 | 1u << 3, TERN_SCHED_NULL);
	CHECK_EQ(boot_board(), FAKE_EXIT_RUN);

	CHECK(!console_has("error"));
	struct partition *p = partition_named("a");
	CHECK(p != NULL);
	CHECK(fake_cores[2].running == &p->vcpu[0]);
	CHECK(vcpu_of_cpu(3) == &p->vcpu[1]);
	CHECK(fake_cores[0].running == &partition_named("rt")->vcpu[0]);
}

/* Two partitions on one core of a shared pool, each scheduler's parameters as the blob gives them. */
static struct tern_config_pool *two_on_core_2(uint32_t scheduler)
{
	fake_uart_clear();
	fake_config_begin(4);
	add_partition("rt", "1", 0);
	struct tern_config_partition *a = add_partition("a", "2", 0);
	struct tern_config_partition *b = add_partition("b", "2", 0);
	a->pool = b->pool = 0;
	struct tern_config_pool *pl = fake_config_add_pool("frame", 1u << 2, scheduler);
	if (scheduler == TERN_SCHED_ARINC653) {
		pl->major_frame_us = 20000;
		pl->num_windows = 2;
		pl->window[0] = (struct tern_config_window){ 2, 10000 };
		pl->window[1] = (struct tern_config_window){ 1, 10000 };
	}
	if (scheduler == TERN_SCHED_RTDS) {
		a->budget_us = b->budget_us = 4000;
		a->period_us = b->period_us = 10000;
	}
	if (scheduler == TERN_SCHED_CREDIT)
		a->weight = b->weight = 256;
	return pl;
}

/*
 * Every scheduler boots: its core is shared and runs the first vCPU its scheduler picks (ARINC
 * 653: the first window's, here b's), the other cores as before.
 */
void test_pools_shared_core_runs_its_schedulers_first_pick(void)
{
	static const struct {
		uint32_t scheduler;
		const char *first;
	} cases[] = {
		{ TERN_SCHED_ARINC653, "b" },
		{ TERN_SCHED_RTDS, NULL },   /* equal servers, equal deadlines: either */
		{ TERN_SCHED_CREDIT, NULL },
	};

	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		two_on_core_2(cases[k].scheduler);
		CHECK_EQ(boot_board(), FAKE_EXIT_WAIT); /* core 0: the console's, no partition's */
		CHECK(!console_has("error"));
		CHECK(cpu_is_shared(2));
		CHECK(!cpu_is_shared(1));
		struct vcpu *first = fake_cores[2].running;
		CHECK(first == &partition_named("a")->vcpu[0] || first == &partition_named("b")->vcpu[0]);
		if (cases[k].first != NULL)
			CHECK(first == &partition_named(cases[k].first)->vcpu[0]);
		CHECK(fake_cores[1].running == &partition_named("rt")->vcpu[0]);
	}
}

/*
 * A direct-delivery partition in a shared pool: arm64 refuses it for good (its guest would own
 * the core's CPU interface); riscv64 boots it (each vCPU keeps a guest interrupt file of its
 * own on the core: tests/unit/riscv64/test_shared.c).
 */
void test_pools_direct_partition_in_a_shared_pool(void)
{
	fake_uart_clear();
	fake_config_begin(4);
	add_partition("rt", "1", 0);
	struct tern_config_partition *a = add_partition("a", "2", TERN_PF_IRQ_DIRECT);
	struct tern_config_partition *b = add_partition("b", "2", 0);
	a->pool = b->pool = 0;
	a->weight = b->weight = 256;
	fake_config_add_pool("shared", 1u << 2, TERN_SCHED_CREDIT);
	if (arch_shared_direct_vcpus() == 0) {
		CHECK_EQ(fake_boot(0), FAKE_EXIT_BOARD_OFF);
		CHECK(console_has("direct interrupts"));
		return;
	}
	CHECK_EQ(boot_board(), FAKE_EXIT_WAIT);
	if (console_has("error"))
		fprintf(stderr, "%.*s\n", (int)fake_uart_len, fake_uart_out);
	CHECK(!console_has("error"));
	CHECK(cpu_is_shared(2));
}

/*
 * At its own event a shared core looks only at its blocked vCPUs (time only wakes); a change
 * from another core reaches it with its kick, which looks at every vCPU there.  ARINC 653, b's
 * window then a's: a pause of a's set without a kick is not seen at the window's boundary, and
 * is at the kick partition_pause sends.
 */
void test_pools_core_event_looks_at_the_blocked_a_kick_at_all(void)
{
	two_on_core_2(TERN_SCHED_ARINC653);
	CHECK_EQ(boot_board(), FAKE_EXIT_WAIT);
	struct partition *pa = partition_named("a");
	struct vcpu *b0 = &partition_named("b")->vcpu[0];
	CHECK(fake_cores[2].running == b0);

	atomic_store(&pa->paused, true); /* not partition_pause: no kick */
	fake_now += 10000;               /* us: a's window */
	CHECK_EQ(fake_settle(2, FAKE_ON(2, sched_timer_expired(b0))), FAKE_EXIT_RUN);
	CHECK(fake_cores[2].running == &pa->vcpu[0]);
	partition_pause(pa);
	fake_deliver_all_kicks(16);
	CHECK(fake_cores[2].running == NULL);
	CHECK(partition_pause_complete(pa));
	partition_unpause(pa);
	fake_deliver_all_kicks(16);
	CHECK(fake_cores[2].running == &pa->vcpu[0]);
}
