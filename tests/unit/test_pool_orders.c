/* SPDX-License-Identifier: MIT */
/*
 * tern ctl's orders to shared pools (core/command.c, core/shared_core.c's order functions),
 * carried out by the cores' own loops on the fake: vcpu-pin, pool-migrate, sched-credit,
 * sched-rtds and sched-arinc653, and their refusals.  Kicks are delivered one core at a time
 * where the test looks at a vCPU between its old core and its new one.
 */
#include <stdio.h>
#include <string.h>
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/sched.h>
#include <tern/shared_core.h>
#include "check.h"
#include "system.h"
#include "tests.h"

#define US 1000ull /* ns */

static struct partition *pa, *pc, *pd;
static struct vcpu *a0, *a1, *c0;

/*
 * rt alone on core 1; "a" (vCPUs homed on cores 2 and 3) in credit pool "work" (cores 2 and
 * 3); "c" in RTDS pool "deadline" (core 4, 2 ms every 10 ms); "d" in ARINC 653 pool "frame"
 * (core 5: a 10 ms window in a 20 ms frame); pool "solo" (null, core 6) has no one.  a's
 * vCPU 1 started, each vCPU in its guest on its own core.
 */
static void board(void)
{
	fake_uart_clear();
	fake_config_begin(7);
	add_partition("rt", "1", 0);
	struct tern_config_partition *a = add_partition("a", "2,3", 0);
	struct tern_config_partition *c = add_partition("c", "4", 0);
	struct tern_config_partition *d = add_partition("d", "5", 0);
	a->pool = 0;
	a->weight = 256;
	c->pool = 1;
	c->budget_us = 2000;
	c->period_us = 10000;
	d->pool = 2;
	fake_config_add_pool("work", 1u << 2 | 1u << 3, TERN_SCHED_CREDIT);
	fake_config_add_pool("deadline", 1u << 4, TERN_SCHED_RTDS);
	struct tern_config_pool *f = fake_config_add_pool("frame", 1u << 5, TERN_SCHED_ARINC653);
	f->major_frame_us = 20000;
	f->num_windows = 1;
	f->window[0] = (struct tern_config_window){ 3, 10000 };
	fake_config_add_pool("solo", 1u << 6, TERN_SCHED_NULL);
	CHECK_EQ(boot_board(), FAKE_EXIT_WAIT);
	CHECK(!console_has("error"));
	pa = partition_named("a");
	pc = partition_named("c");
	pd = partition_named("d");
	a0 = &pa->vcpu[0];
	a1 = &pa->vcpu[1];
	c0 = &pc->vcpu[0];
	start_vcpu(pa, 1);
	CHECK(fake_cores[2].running == a0);
	CHECK(fake_cores[3].running == a1);
	CHECK(fake_cores[4].running == c0);
	CHECK(fake_cores[5].running == &pd->vcpu[0]);
	fake_uart_clear();
	atomic_store(&fake_kicks, 0);
}

static void type(const char *s)
{
	fake_uart_type(s);
	console_rx();
}

/* The command's reply: ok, or refused with exactly `reason`. */
static bool replied(const char *verb, const char *reason)
{
	char line[400];

	if (reason == NULL)
		(void)snprintf(line, sizeof(line), "tern-ctl {\"cmd\":\"%s\",\"ok\":true}", verb);
	else
		(void)snprintf(line, sizeof(line), "tern-ctl {\"cmd\":\"%s\",\"ok\":false,\"reason\":\"%s\"}",
			       verb, reason);
	return console_ends_with(line);
}

/* vcpu-list says vCPU k of partition p is on core `cpu`. */
static bool listed_on(const struct partition *p, uint32_t k, unsigned cpu)
{
	char item[160];

	fake_uart_clear();
	type("vcpu-list\r");
	(void)snprintf(item, sizeof(item), "\"partition\":\"%s\",\"id\":%u,\"vcpu\":%u,\"cpu\":%u,",
		       p->name, p->index, k, cpu);
	return console_has(item);
}

/* The time moves on to `ns` past now, and core `cpu` looks at it (its kick). */
static void later(uint64_t ns, unsigned cpu)
{
	fake_now += ns / US;
	FAKE_ON(0, arch_cpu_kick(cpu));
	fake_deliver_all_kicks(16);
}

/*
 * a1 waits for an interrupt on core 3 and is pinned to core 2: it leaves core 3's queue at
 * core 3's look, and an IPI a0 sends it while it is between the cores (its old core the one
 * kicked) is there when it runs on core 2, where it resumes its saved context.
 */
void test_pool_orders_pin_carries_a_waiting_vcpu_and_its_ipi(void)
{
	board();
	guest_enables_ipi(3);
	/* A mark in each guest's registers: a1's comes with its saved context. */
	fake_guest_regs(3)->x[20] = 0xa1;
	fake_guest_regs(2)->x[20] = 0xa0;
	CHECK_EQ(fake_settle(3, guest_wfi(3)), FAKE_EXIT_WAIT);
	CHECK(fake_cores[3].running == NULL);
	CHECK_EQ(strcmp(shared_core_state_name(a1), "blocked"), 0);

	type("vcpu-pin a 1 2\r");
	CHECK(replied("vcpu-pin", NULL));
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 3);  /* its old core's look, first */
	CHECK_EQ(fake_deliver_kick(3), FAKE_EXIT_WAIT);
	CHECK_EQ(a1->pcpu, 3);                          /* not arrived yet */
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 2);

	CHECK_EQ(send_ipi(2, 1), FAKE_RETURNED);
	fake_deliver_all_kicks(16);
	CHECK_EQ(a1->pcpu, 2);
	CHECK(fake_cores[3].running == NULL);
	if (fake_cores[2].running == a0)
		CHECK_EQ(fake_settle(2, guest_wfi(2)), FAKE_EXIT_RUN);
	CHECK(fake_cores[2].running == a1);
	CHECK_EQ(fake_guest_regs(2)->x[20], 0xa1);  /* resumed where it left */
	CHECK(ipi_pending(2));
	CHECK(listed_on(pa, 1, 2));
	CHECK(listed_on(pa, 0, 2));
	/* Its core's queue no longer has it: core 3 stays idle after a look. */
	FAKE_ON(0, arch_cpu_kick(3));
	CHECK_EQ(fake_deliver_kick(3), FAKE_EXIT_WAIT);
	CHECK(fake_cores[3].running == NULL);
}

/* A running vCPU is switched out by the pin and goes on on its new core; and back again. */
void test_pool_orders_pin_moves_a_running_vcpu(void)
{
	board();
	type("vcpu-pin a 1 2\r");
	CHECK(replied("vcpu-pin", NULL));
	fake_deliver_all_kicks(16);
	CHECK_EQ(a1->pcpu, 2);
	CHECK(fake_cores[3].running == NULL);
	CHECK(fake_cores[2].running == a0 || fake_cores[2].running == a1);
	CHECK_EQ(strcmp(shared_core_state_name(fake_cores[2].running == a0 ? a1 : a0), "runnable"), 0);
	type("vcpu-pin a 1 3\r");
	CHECK(replied("vcpu-pin", NULL));
	fake_deliver_all_kicks(16);
	CHECK_EQ(a1->pcpu, 3);
	CHECK(fake_cores[3].running == a1);
	CHECK(fake_cores[2].running == a0);
	CHECK(listed_on(pa, 1, 3));
}

/* A second order to a vCPU before its core carried out the first is `busy`, pinning it back included. */
void test_pool_orders_busy_until_carried_out(void)
{
	static const char busy[] = "busy: its previous change is not carried out yet (retry)";
	char reason[160];

	board();
	type("vcpu-pin a 1 2\r");
	CHECK(replied("vcpu-pin", NULL));
	type("vcpu-pin a 1 3\r"); /* where it still is, but on its way out */
	(void)snprintf(reason, sizeof(reason), "vcpu-pin a 1 3: %s", busy);
	CHECK(replied("vcpu-pin", reason));
	type("vcpu-pin a 1 2\r");
	(void)snprintf(reason, sizeof(reason), "vcpu-pin a 1 2: %s", busy);
	CHECK(replied("vcpu-pin", reason));
	type("sched-credit a --weight 512\r");
	(void)snprintf(reason, sizeof(reason), "sched-credit a: vCPU 1: %s", busy);
	CHECK(replied("sched-credit", reason));
	type("pool-migrate a deadline\r");
	(void)snprintf(reason, sizeof(reason), "pool-migrate a deadline: %s", busy);
	CHECK(replied("pool-migrate", reason));
	fake_deliver_all_kicks(16);
	type("sched-credit a --weight 512\r");
	CHECK(replied("sched-credit", NULL));
	type("sched-credit a --weight 256\r");
	(void)snprintf(reason, sizeof(reason), "sched-credit a: vCPU 0: %s", busy);
	CHECK(replied("sched-credit", reason));
	fake_deliver_all_kicks(16);
	type("sched-arinc653 frame --window d:5000\r");
	CHECK(replied("sched-arinc653", NULL));
	type("sched-arinc653 frame --window d:6000\r");
	(void)snprintf(reason, sizeof(reason), "sched-arinc653 frame: %s", busy);
	CHECK(replied("sched-arinc653", reason));
	fake_deliver_all_kicks(16);
	type("sched-arinc653 frame --window d:6000\r");
	CHECK(replied("sched-arinc653", NULL));
}

/* A partition's pool is the one it migrated to: sched-* right after a migration is `busy`. */
void test_pool_orders_busy_after_a_migration(void)
{
	board();
	type("pool-migrate c work\r");
	CHECK(replied("pool-migrate", NULL));
	type("sched-credit c --weight 100\r");
	CHECK(replied("sched-credit", "sched-credit c: vCPU 0: busy: its previous change is not "
				      "carried out yet (retry)"));
	fake_deliver_all_kicks(16);
	type("sched-credit c --weight 100\r");
	CHECK(replied("sched-credit", NULL));
}

void test_pool_orders_refusals(void)
{
	board();
	type("vcpu-pin rt 0 2\r");
	CHECK(replied("vcpu-pin", "vcpu-pin rt 0 2: it is in a null pool, which keeps each vCPU on "
				  "its own core"));
	type("vcpu-pin a 0 4\r");
	CHECK(replied("vcpu-pin", "vcpu-pin a 0 4: that core is not in its pool (pool-migrate moves "
				  "a partition to another)"));
	type("vcpu-pin a 0 40\r");
	CHECK(replied("vcpu-pin", "vcpu-pin a 0 40: that core is not in its pool (pool-migrate "
				  "moves a partition to another)"));
	type("vcpu-pin a 2 3\r");
	CHECK(replied("vcpu-pin", "partition a has no vCPU 2 (it has 2)"));
	type("vcpu-pin a 0 2\r"); /* where it is */
	CHECK(replied("vcpu-pin", NULL));
	CHECK_EQ(atomic_load(&fake_kicks), 0);

	type("pool-migrate a nowhere\r");
	CHECK(replied("pool-migrate", "no pool named \\\"nowhere\\\""));
	type("pool-migrate nobody work\r");
	CHECK(replied("pool-migrate", "no partition named \\\"nobody\\\""));
	type("pool-migrate a solo\r");
	CHECK(replied("pool-migrate", "pool-migrate a solo: only between shared pools (a null "
				      "pool's cores are its partitions' own)"));
	type("pool-migrate rt work\r");
	CHECK(replied("pool-migrate", "pool-migrate rt work: only between shared pools (a null "
				      "pool's cores are its partitions' own)"));
	type("pool-migrate a work\r"); /* where it is */
	CHECK(replied("pool-migrate", NULL));
	CHECK_EQ(atomic_load(&fake_kicks), 0);

	type("sched-credit c --weight 100\r");
	CHECK(replied("sched-credit", "sched-credit c: vCPU 0: its pool's scheduler is another"));
	type("sched-rtds a --budget 1000 --period 10000\r");
	CHECK(replied("sched-rtds", "sched-rtds a: vCPU 0: its pool's scheduler is another"));
	type("sched-rtds rt --budget 1000 --period 10000\r");
	CHECK(replied("sched-rtds", "sched-rtds rt: vCPU 0: its pool's scheduler (null) takes no "
				    "parameters"));
	type("sched-rtds nobody --budget 1000 --period 10000\r");
	CHECK(replied("sched-rtds", "no partition named \\\"nobody\\\""));
	type("sched-rtds c --budget 20000 --period 10000\r");
	CHECK(console_ends_with("\"ok\":false,\"reason\":\"sched-rtds c: vCPU 0: "
				"budget_us more than period_us\"}") ||
	      console_has("\"cmd\":\"sched-rtds\",\"ok\":false"));
	type("sched-credit a --weight 0\r");
	CHECK(console_has("\"cmd\":\"sched-credit\",\"ok\":false,\"reason\":\"sched-credit a: vCPU 0: "));

	type("sched-arinc653 work --window a:1000\r");
	CHECK(replied("sched-arinc653", "sched-arinc653 work: not an ARINC 653 pool"));
	type("sched-arinc653 frame --window a:1000\r");
	CHECK(replied("sched-arinc653", "sched-arinc653 frame: partition a is not in the pool"));
	type("sched-arinc653 nowhere --window d:1000\r");
	CHECK(replied("sched-arinc653", "no pool named \\\"nowhere\\\""));
	type("sched-arinc653 frame --window nobody:1000\r");
	CHECK(replied("sched-arinc653", "no partition named \\\"nobody\\\""));
	type("sched-arinc653 frame\r");
	CHECK(replied("sched-arinc653", "sched-arinc653 frame: no --window given"));
	type("sched-arinc653 frame --window d:30000\r");
	CHECK(console_has("\"cmd\":\"sched-arinc653\",\"ok\":false,\"reason\":\"sched-arinc653 frame: "));
	CHECK_EQ(atomic_load(&fake_kicks), 0); /* nothing posted */
}

/* sched-credit: posted, taken by the core at its look, in force from the next accounting period. */
void test_pool_orders_sched_credit_from_the_next_period(void)
{
	board();
	struct sched_vcpu *s = shared_core_sched_vcpu(a0);
	CHECK(s != NULL);
	CHECK_EQ(s->weight, 256);
	type("sched-credit a --weight 512 --cap 50\r");
	CHECK(replied("sched-credit", NULL));
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 2 | 1u << 3);
	fake_deliver_all_kicks(16);
	CHECK(s->credit_pending);
	CHECK_EQ(s->next_weight, 512);
	CHECK_EQ(s->weight, 256);
	later(SCHED_CREDIT_PERIOD_NS, 2);
	CHECK(!s->credit_pending);
	CHECK_EQ(s->weight, 512);
	CHECK_EQ(s->cap, 50);
	CHECK_EQ(shared_core_sched_vcpu(a1)->next_weight, 512);
}

/* sched-rtds: from the server's next period. */
void test_pool_orders_sched_rtds_from_the_next_period(void)
{
	board();
	struct sched_vcpu *s = shared_core_sched_vcpu(c0);
	CHECK(s != NULL);
	CHECK_EQ(s->budget, 2000 * US);
	type("sched-rtds c --budget 3000 --period 5000\r");
	CHECK(replied("sched-rtds", NULL));
	fake_deliver_all_kicks(16);
	CHECK(s->rtds_pending);
	CHECK_EQ(s->budget, 2000 * US);
	CHECK_EQ(s->next_budget, 3000 * US);
	later(10000 * US, 4);
	CHECK(!s->rtds_pending);
	CHECK_EQ(s->budget, 3000 * US);
	CHECK_EQ(s->period, 5000 * US);
}

/* sched-arinc653: the new timeline from the next major frame. */
void test_pool_orders_sched_arinc653_at_the_next_frame(void)
{
	board();
	type("sched-arinc653 frame --major-frame 30000 --window idle:5000 --window d:20000\r");
	CHECK(replied("sched-arinc653", NULL));
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 5);
	fake_deliver_all_kicks(16);
	CHECK(fake_cores[5].running == &pd->vcpu[0]); /* this frame's window goes on */
	/* Past this frame's end (20 ms, at most, from now): the idle window first. */
	later(20000 * US, 5);
	CHECK(fake_cores[5].running == NULL);
	later(5000 * US, 5);
	CHECK(fake_cores[5].running == &pd->vcpu[0]);
}

/*
 * pool-migrate: c from its RTDS pool to the credit pool (core 2, credit's default weight), where
 * it runs; and back (RTDS's defaults); pool-list says where it is.
 */
void test_pool_orders_pool_migrate_between_shared_pools(void)
{
	board();
	struct sched_vcpu *s = shared_core_sched_vcpu(c0);
	type("pool-migrate c work\r");
	CHECK(replied("pool-migrate", NULL));
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 4);
	CHECK_EQ(fake_deliver_kick(4), FAKE_EXIT_WAIT); /* its old core: no one left */
	fake_deliver_all_kicks(16);
	CHECK_EQ(c0->pcpu, 2);
	CHECK_EQ(s->weight, SCHED_CREDIT_WEIGHT_DEFAULT);
	CHECK(listed_on(pc, 0, 2));
	fake_uart_clear();
	type("pool-list\r");
	CHECK(console_has("\"pool\":\"work\",\"scheduler\":\"credit\",\"cpus\":[2,3],\"partitions\":[\"a\",\"c\"]"));
	CHECK(console_has("\"pool\":\"deadline\",\"scheduler\":\"rtds\",\"cpus\":[4],\"partitions\":[]"));
	/* It runs there once a0 waits. */
	if (fake_cores[2].running == a0)
		CHECK_EQ(fake_settle(2, guest_wfi(2)), FAKE_EXIT_RUN);
	CHECK(fake_cores[2].running == c0);

	type("pool-migrate c deadline\r");
	CHECK(replied("pool-migrate", NULL));
	fake_deliver_all_kicks(16);
	CHECK_EQ(c0->pcpu, 4);
	CHECK_EQ(s->budget, 4000 * US);
	CHECK_EQ(s->period, 10000 * US);
	CHECK(fake_cores[4].running == c0);
}

/*
 * RTDS meets its deadlines while no core is asked for more than all of its time: tern check
 * holds the description to that, and each order is held to it too (a pin, new parameters, a
 * migration's defaults), counting a server on its way to the core.  x's vCPUs (5 ms every 10)
 * on cores 2 and 3, y's (3 ms every 10) on core 3; w in a credit pool on core 4.
 */
void test_pool_orders_rtds_orders_keep_each_core_within_its_time(void)
{
	static const char overload[] = "its core would be asked for more than all of its time "
				       "(RTDS meets its deadlines up to 100 %)";
	char reason[200];

	fake_uart_clear();
	fake_config_begin(5);
	add_partition("rt", "1", 0);
	struct tern_config_partition *x = add_partition("x", "2,3", 0);
	struct tern_config_partition *y = add_partition("y", "3", 0);
	struct tern_config_partition *w = add_partition("w", "4", 0);
	x->pool = y->pool = 0;
	x->budget_us = 5000;
	y->budget_us = 3000;
	x->period_us = y->period_us = 10000;
	w->pool = 1;
	w->weight = 256;
	fake_config_add_pool("deadline", 1u << 2 | 1u << 3, TERN_SCHED_RTDS);
	fake_config_add_pool("work", 1u << 4, TERN_SCHED_CREDIT);
	CHECK_EQ(boot_board(), FAKE_EXIT_WAIT);
	CHECK(!console_has("error"));
	fake_uart_clear();
	atomic_store(&fake_kicks, 0);

	/* 75 % fits core 2 (x0 alone) but not core 3 (x1 and y): neither vCPU gets it. */
	type("sched-rtds x --budget 7500 --period 10000\r");
	(void)snprintf(reason, sizeof(reason), "sched-rtds x: vCPU 1: %s", overload);
	CHECK(replied("sched-rtds", reason));
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	type("sched-rtds x --budget 6000 --period 10000\r"); /* 60 %, and 60 % + 30 % */
	CHECK(replied("sched-rtds", NULL));
	fake_deliver_all_kicks(16);
	CHECK(shared_core_sched_vcpu(&partition_named("x")->vcpu[0])->rtds_pending);
	type("sched-rtds x --budget 5000 --period 10000\r");
	CHECK(replied("sched-rtds", NULL));
	fake_deliver_all_kicks(16);

	type("vcpu-pin x 0 3\r"); /* 50 % + 50 % + 30 % */
	CHECK(replied("vcpu-pin", "vcpu-pin x 0 3: that core would be asked for more than all of "
				  "its time (RTDS meets its deadlines up to 100 %)"));
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	type("vcpu-pin y 0 2\r"); /* 50 % + 30 % */
	CHECK(replied("vcpu-pin", NULL));
	/* On its way: core 2 counts it already. */
	type("vcpu-pin x 1 2\r");
	CHECK(replied("vcpu-pin", "vcpu-pin x 1 2: that core would be asked for more than all of "
				  "its time (RTDS meets its deadlines up to 100 %)"));
	fake_deliver_all_kicks(16);
	CHECK_EQ(partition_named("y")->vcpu[0].pcpu, 2);
	type("sched-rtds y --budget 6000 --period 10000\r");
	(void)snprintf(reason, sizeof(reason), "sched-rtds y: vCPU 0: %s", overload);
	CHECK(replied("sched-rtds", reason));
	type("sched-rtds y --budget 5000 --period 10000\r"); /* all of it, exactly */
	CHECK(replied("sched-rtds", NULL));
	fake_deliver_all_kicks(16);
	/* w would come to core 2 with RTDS's default 4 ms every 10. */
	type("pool-migrate w deadline\r");
	CHECK(replied("pool-migrate", "pool-migrate w deadline: a core of that pool would be asked "
				      "for more than all of its time (RTDS's defaults: 4000 us every "
				      "10000 us per vCPU)"));
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	type("sched-rtds y --budget 1000 --period 10000\r");
	CHECK(replied("sched-rtds", NULL));
	fake_deliver_all_kicks(16);
	/* y's change is due from its next period, but counted already: 50 % + 10 % + 40 %. */
	type("pool-migrate w deadline\r");
	CHECK(replied("pool-migrate", NULL));
	fake_deliver_all_kicks(16);
	CHECK_EQ(partition_named("w")->vcpu[0].pcpu, 2);
}
