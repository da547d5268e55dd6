/* SPDX-License-Identifier: MIT */
/*
 * core/partition.c on the fake board: boot, power through the firmware calls (PSCI, SBI), faults, the restart policy (limit and
 * back-off), SYSTEM_RESET, operator requests, the board going off, and what the console says.
 */
#include <string.h>
#include <tern/arch.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include <tern/power.h>
#include "check.h"
#include "system.h"
#include "tests.h"

static uint32_t state_of(const struct partition *p)
{
	return atomic_load(&p->state);
}

static uint32_t power_of(const struct partition *p, uint32_t i)
{
	return atomic_load(&p->vcpu[i].power);
}

static void put_line(struct partition *p, const char *s)
{
	while (*s)
		vuart_transmit(&p->uart, (uint8_t)*s++);
}

void test_partition_boot(void)
{
	char line[160];

	fake_config_begin(4);
	struct tern_config_partition *rt = add_partition("rt", "0,1", 0);
	struct tern_config_partition *lx = add_partition("linux", "2", TERN_PF_WFI_NATIVE | TERN_PF_IRQ_DIRECT);
	lx->num_regions = 1;
	lx->region[0] = (struct tern_config_region){ (uintptr_t)fake_ecam, (uintptr_t)fake_ecam,
						     FAKE_ECAM_SIZE, TERN_RF_DEVICE, 0 };
	lx->irqs[1] = BIT(35 - 32);
	fake_now = 5000;
	CHECK_EQ(boot_board(), FAKE_EXIT_RUN);

	CHECK(console_has("tern: Tern hypervisor on fake\r\n"));
	snprintf(line, sizeof(line), "tern: partition rt: 2 vCPU(s) from core 0, 2 MiB at 0x%llx, wfi trap\r\n",
		 (unsigned long long)rt->ram_hpa);
	CHECK(console_has(line));
	snprintf(line, sizeof(line), "tern: partition linux: 1 vCPU(s) from core 2, 2 MiB at 0x%llx, "
		 "wfi native, irq direct, devices passed through\r\n", (unsigned long long)lx->ram_hpa);
	CHECK(console_has(line));

	struct partition *p = partition_named("rt"), *l = partition_named("linux");
	CHECK_EQ(num_partitions, 2);
	CHECK(fake_cores[0].running == &p->vcpu[0]);
	CHECK_EQ(fake_cores[0].entry, rt->entry_ipa);
	CHECK_EQ(fake_cores[0].context, rt->dtb_ipa);
	CHECK(fake_cores[2].running == &l->vcpu[0]);
	CHECK(fake_cores[1].online && !fake_cores[1].running); /* vCPU 1 waits for a CPU_ON */
	CHECK_EQ(fake_cores[1].waits, 1);
	CHECK(fake_cores[3].online && !fake_cores[3].running); /* no vCPU: the console core */
	CHECK(vcpu_of_cpu(1) == &p->vcpu[1]);
	CHECK(vcpu_of_cpu(3) == NULL);
	CHECK(vcpu_of_cpu(1000) == NULL);
	CHECK_EQ(power_of(p, 1), VCPU_OFF);
	CHECK_EQ(state_of(p), PARTITION_RUNNING);
	CHECK_EQ(p->created, 5000);
	CHECK_EQ(p->first_entry, 5000);
	/* The console's input goes to the core nobody uses. */
	CHECK(console_irq_goes_to(3));
	CHECK_EQ(console_core(), 3);
	CHECK(fake_uart_rx_enabled);
}

/* Every core used: the console core is one whose guest traps its interrupts anyway. */
void test_partition_console_core_choice(void)
{
	fake_config_begin(3);
	add_partition("direct", "0", TERN_PF_WFI_NATIVE | TERN_PF_IRQ_DIRECT);
	add_partition("trap", "1,2", 0);
	boot_board();
	CHECK_EQ(console_core(), 1);
}

void test_partition_console_core_all_direct(void)
{
	fake_config_begin(2);
	add_partition("a", "1", TERN_PF_WFI_NATIVE | TERN_PF_IRQ_DIRECT);
	add_partition("b", "0", TERN_PF_WFI_NATIVE | TERN_PF_IRQ_DIRECT);
	boot_board();
	CHECK_EQ(console_core(), 0);
}

void test_partition_boot_errors(void)
{
	struct tern_config *cfg = fake_config_begin(2);
	add_partition("rt", "1", 0);
	cfg->magic = 0;
	CHECK_EQ(fake_boot(0), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("tern: error: system description: no config blob (magic 0x0)\r\n"));

	fake_uart_clear();
	fake_config_begin(2);
	add_partition("rt", "1", 0);
	fake_iommu_error = "SMMUv3 missing";
	CHECK_EQ(fake_boot(0), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("tern: error: SMMUv3 missing\r\n"));
	fake_iommu_error = NULL;

	fake_uart_clear();
	fake_config_begin(2);
	char line[160];
	snprintf(line, sizeof(line), "tern: error: partition rt: %s\r\n",
		 break_partition_init(add_partition("rt", "1", 0)));
	CHECK_EQ(fake_boot(0), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has(line));
	mend_partition_init();
}

/* The board's size is the firmware's: no tree, a broken one, or less RAM than the blob says. */
void test_partition_boot_needs_the_firmware_tree(void)
{
	uint8_t *fdt = fake_ram + FAKE_HYP_SIZE - 0x2000;

	fake_config_begin(2);
	add_partition("rt", "1", 0);
	CHECK_EQ(fake_boot_with_fdt(0, 0), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("tern: error: the firmware's device tree: none in RAM (0x0)\r\n"));

	fake_uart_clear();
	memset(fdt, 0, 0x2000);
	CHECK_EQ(fake_boot_with_fdt(0, (uintptr_t)fdt), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("tern: error: the firmware's device tree: none (magic 0x0)\r\n"));

	fake_uart_clear();
	(void)fake_fdt_board(fdt, 0x2000, platform.ram_base + 0x1000, FAKE_RAM_SIZE);
	CHECK_EQ(fake_boot_with_fdt(0, (uintptr_t)fdt), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("tern: error: the firmware's device tree: no memory node holds 0x"));

	/* A blob claiming the whole board when the firmware says it has half of it. */
	fake_uart_clear();
	(void)fake_fdt_board(fdt, 0x2000, platform.ram_base, FAKE_RAM_SIZE / 2);
	CHECK_EQ(fake_boot_with_fdt(0, (uintptr_t)fdt), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("tern: error: system description: board RAM size 0x2000000, but the board "
			  "has 0x1000000 (the firmware's device tree)\r\n"));

	fake_uart_clear();
	(void)fake_fdt_board(fdt, 0x2000, platform.ram_base, FAKE_RAM_SIZE);
	CHECK(fake_boot_with_fdt(0, (uintptr_t)fdt) != FAKE_EXIT_BOARD_OFF);
}

void test_partition_boot_core_fails(void)
{
	fake_config_begin(2);
	add_partition("rt", "1", 0);
	fake_cpu_start_fails = 1u << 1;
	CHECK_EQ(fake_boot(0), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("tern: error: core 1 did not come online\r\n"));
}

/* A fault stops the partition: its other vCPUs are stopped, it is taken down, and reported. */
void test_partition_fault_stops(void)
{
	fake_config_begin(4);
	add_partition("rt", "0,1", 0);
	add_partition("linux", "2", 0);
	boot_board();
	struct partition *p = partition_named("rt");
	start_vcpu(p, 1);
	put_line(p, "half a li");
	fake_uart_clear();

	CHECK_EQ(FAKE_ON(1, partition_fault(&p->vcpu[1], "ipa=0x%x", 0x123)), FAKE_EXIT_IDLE);
	CHECK_EQ(state_of(p), PARTITION_STOPPED);
	CHECK_EQ(power_of(p, 0), VCPU_OFF);
	CHECK_EQ(power_of(p, 1), VCPU_OFF);
	CHECK(!fake_cores[0].running && !fake_cores[1].running);
	CHECK_EQ(fake_cores[0].quiesces, 1);
	CHECK_EQ(fake_cores[1].quiesces, 1);
	CHECK_EQ(p->vcpu[1].stats[STAT_FAULT], 1);
	CHECK_EQ(fake_iommu_partition_polls, 1);
	CHECK(!strcmp(fake_uart_out, "tern: fault partition=rt vcpu=1 ipa=0x123\r\n"
				     "[rt] half a li\r\n"
				     "tern: partition rt stopped\r\n"));
	/* The other partition runs on; the board stays on. */
	CHECK_EQ(state_of(partition_named("linux")), PARTITION_RUNNING);
	CHECK_EQ(fake_board_offs, 0);
	/* vCPU 0's core, idle, has nothing to do for a stopped partition. */
	CHECK_EQ(fake_idle(0), FAKE_EXIT_WAIT);
	CHECK_EQ(fake_cores[0].deadline, 0);
}

/* The last partition ending turns the board off, with the boot times and every partition's counters. */
void test_partition_last_end_turns_board_off(void)
{
	fake_config_begin(2);
	add_partition("rt", "0", 0);
	add_partition("linux", "1", 0);
	boot_board();
	set_fast_path_irqs(0, 7);
	partition_named("rt")->vcpu[0].stats[STAT_EXIT_IRQ] = 3;
	CHECK_EQ(fw_system_off(0), FAKE_EXIT_IDLE);
	CHECK(console_ends_with("tern: partition rt off"));
	CHECK_EQ(fake_board_offs, 0);
	fake_uart_clear();
	CHECK_EQ(fw_system_off(1), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("tern: partition linux off\r\n"));
	CHECK(console_has("tern-boot {\"freq_hz\":1000000,"));
	CHECK(console_has("\"partitions\":{\"rt\":{\"created\":1000,\"first_entry\":1000},\"linux\":"));
	CHECK(console_has("tern-stats {\"partition\":\"rt\",\"state\":\"off\",\"restarts\":0,"
			  "\"console_dropped\":0,\"exit_irq\":10,"));
	CHECK(console_has("tern-stats {\"partition\":\"linux\",\"state\":\"off\""));
	char stat[64];
	snprintf(stat, sizeof(stat), "\"%s\":1,", fw.system_off_stat);
	CHECK(console_has(stat));
	CHECK(console_ends_with("tern: all partitions ended, board off"));
	CHECK_EQ(fake_board_offs, 1);
	CHECK(fake_iommu_polls >= 1);
}

/* A fault with on_fault = restart: reloaded from the pristine copies by vCPU 0's core. */
void test_partition_fault_restarts(void)
{
	fake_config_begin(3);
	struct tern_config_partition *c = add_partition("rt", "0,1", 0);
	add_partition("other", "2", 0);
	c->fault_policy = TERN_FAULT_RESTART;
	boot_board();
	struct partition *p = partition_named("rt");
	uint8_t *ram = fake_partition_ram(c);
	uint64_t image = c->image_ipa - c->ram_ipa, dtb = c->dtb_ipa - c->ram_ipa;

	memset(ram, 0xee, FAKE_PART_RAM); /* what the guest did to its RAM */
	fake_uart_clear();
	enum fake_exit e = FAKE_ON(0, partition_fault(&p->vcpu[0], "boom"));
	CHECK_EQ(e, FAKE_EXIT_IDLE);
	CHECK_EQ(state_of(p), PARTITION_RESTARTING);
	CHECK_EQ(fake_settle(0, e), FAKE_EXIT_RUN);
	CHECK_EQ(state_of(p), PARTITION_RUNNING);
	CHECK(!strcmp(fake_uart_out, "tern: fault partition=rt vcpu=0 boom\r\n"
				     "tern: partition rt restarted\r\n"));
	CHECK_EQ(atomic_load(&p->restarts), 1);
	CHECK_EQ(p->auto_restarts, 1);
	CHECK_EQ(fake_cores[0].entry, c->entry_ipa);
	CHECK_EQ(fake_cores[0].context, c->dtb_ipa);
	bool image_ok = true, zero = true;
	for (uint64_t i = 0; i < c->image_size; i++)
		image_ok &= ram[image + i] == fake_image_byte(0, i);
	CHECK(image_ok);
	CHECK_EQ(ram[dtb], 0xd0);
	CHECK_EQ(ram[dtb + c->dtb_size - 1], 0xd0);
	for (uint64_t i = 0; i < image; i++)
		zero &= ram[i] == 0;
	CHECK(zero);
	CHECK_EQ(ram[FAKE_PART_RAM - 1], 0);
	CHECK_EQ(fake_synced_pa, c->ram_hpa);
	CHECK_EQ(fake_synced_size, c->ram_size);

	/* A fault on vCPU 1: vCPU 0's core is asked to do the reload. */
	start_vcpu(p, 1);
	fake_uart_clear();
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(FAKE_ON(1, partition_fault(&p->vcpu[1], "again")), FAKE_EXIT_IDLE);
	CHECK(atomic_load(&fake_kicks) & 1u);
	fake_deliver_all_kicks(8);
	CHECK_EQ(state_of(p), PARTITION_RUNNING);
	CHECK(fake_cores[0].running == &p->vcpu[0]);
	CHECK(!fake_cores[1].running);
	CHECK(console_ends_with("tern: partition rt restarted"));
	CHECK_EQ(atomic_load(&p->restarts), 2);
}

/* A fault while the partition is already ending: no second report, the core just leaves. */
static struct partition *second_fault_partition;
static int second_fault_done;

static void fault_on_core_1(void)
{
	if (second_fault_done++)
		return;
	CHECK_EQ(FAKE_ON(1, partition_fault(&second_fault_partition->vcpu[1], "second")), FAKE_EXIT_IDLE);
}

void test_partition_fault_while_ending(void)
{
	fake_config_begin(2);
	add_partition("rt", "0,1", 0);
	boot_board();
	struct partition *p = partition_named("rt");
	start_vcpu(p, 1);
	second_fault_partition = p;
	fake_relax_hook = fault_on_core_1;
	fake_uart_clear();
	CHECK_EQ(FAKE_ON(0, partition_fault(&p->vcpu[0], "first")), FAKE_EXIT_BOARD_OFF);
	CHECK(console_has("tern: fault partition=rt vcpu=0 first\r\n"));
	CHECK(!console_has("second"));
	CHECK_EQ(p->vcpu[1].stats[STAT_FAULT], 1); /* counted, not reported */
	CHECK_EQ(state_of(p), PARTITION_STOPPED);
}

/* After max_restarts automatic restarts the partition stays stopped. */
void test_partition_restart_limit(void)
{
	fake_config_begin(2);
	struct tern_config_partition *c = add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	c->fault_policy = TERN_FAULT_RESTART;
	c->max_restarts = 2;
	boot_board();
	struct partition *p = partition_named("rt");

	for (int i = 0; i < 2; i++) {
		CHECK_EQ(fake_settle(0, FAKE_ON(0, partition_fault(&p->vcpu[0], "x"))), FAKE_EXIT_RUN);
		CHECK_EQ(state_of(p), PARTITION_RUNNING);
	}
	fake_uart_clear();
	CHECK_EQ(FAKE_ON(0, partition_fault(&p->vcpu[0], "x")), FAKE_EXIT_IDLE);
	CHECK(!strcmp(fake_uart_out, "tern: fault partition=rt vcpu=0 x\r\n"
				     "tern: partition rt: restart limit 2 reached\r\n"
				     "tern: partition rt stopped\r\n"));
	CHECK_EQ(state_of(p), PARTITION_STOPPED);
	CHECK_EQ(fake_idle(0), FAKE_EXIT_WAIT);
	/* The operator may still restart it: not counted, not limited. */
	partition_request(p, PARTITION_REQ_RESTART);
	fake_deliver_all_kicks(8);
	CHECK_EQ(state_of(p), PARTITION_RUNNING);
	CHECK_EQ(p->auto_restarts, 2);
	CHECK_EQ(atomic_load(&p->restarts), 3);
}

/* The guest's SYSTEM_RESET: a restart (`reset`), within the same limit; past it, off. */
void test_partition_system_reset(void)
{
	fake_config_begin(2);
	struct tern_config_partition *c = add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	c->max_restarts = 1;
	boot_board();
	struct partition *p = partition_named("rt");

	fake_uart_clear();
	CHECK_EQ(fake_settle(0, fw_system_reset(0)), FAKE_EXIT_RUN);
	CHECK(!strcmp(fake_uart_out, "tern: partition rt reset\r\n"));
	CHECK_EQ(p->auto_restarts, 1);
	CHECK_EQ(atomic_load(&p->restarts), 1);
	fake_uart_clear();
	CHECK_EQ(fake_settle(0, fw_system_reset(0)), FAKE_EXIT_WAIT);
	/* Out of restarts: stopped, whatever asked for the restart. */
	CHECK(!strcmp(fake_uart_out, "tern: partition rt: restart limit 1 reached\r\n"
				     "tern: partition rt stopped\r\n"));
	CHECK_EQ(state_of(p), PARTITION_STOPPED);
}

/* SYSTEM_RESET from a vCPU other than 0: the others are stopped, vCPU 0's core reloads. */
void test_partition_system_reset_from_vcpu1(void)
{
	fake_config_begin(3);
	add_partition("rt", "0,1", 0);
	add_partition("other", "2", 0);
	boot_board();
	struct partition *p = partition_named("rt");
	start_vcpu(p, 1);
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(fw_system_reset(1), FAKE_EXIT_IDLE);
	CHECK(atomic_load(&fake_kicks) & 1u);
	fake_deliver_all_kicks(8);
	CHECK_EQ(state_of(p), PARTITION_RUNNING);
	CHECK(fake_cores[0].running == &p->vcpu[0]);
	CHECK_EQ(power_of(p, 1), VCPU_OFF);
	CHECK(console_ends_with("tern: partition rt reset"));
}

/* Without pristine copies there is nothing to restart from. */
void test_partition_restart_needs_pristine(void)
{
	fake_config_begin(2);
	struct tern_config_partition *c = add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	c->fault_policy = TERN_FAULT_RESTART;
	c->pristine_dtb_hpa = 0;
	boot_board();
	struct partition *p = partition_named("rt");

	fake_uart_clear();
	CHECK_EQ(FAKE_ON(0, partition_fault(&p->vcpu[0], "x")), FAKE_EXIT_IDLE);
	CHECK(console_has("tern: partition rt: restart needs a pristine image\r\n"
			  "tern: partition rt stopped\r\n"));
	CHECK_EQ(state_of(p), PARTITION_STOPPED);
}

/* Fault the partition's only vCPU (core 0) at `now`; the back-off its restart waits, in ticks. */
static uint64_t fault_at(struct partition *p, uint64_t now)
{
	fake_now = now;
	CHECK_EQ(fake_settle(0, FAKE_ON(0, partition_fault(&p->vcpu[0], "x"))), FAKE_EXIT_WAIT);
	CHECK_EQ(state_of(p), PARTITION_RESTARTING);
	uint64_t wait = fake_cores[0].deadline - now;
	/* Not a tick early; at the deadline it reloads. */
	fake_now = fake_cores[0].deadline - 1;
	CHECK_EQ(fake_idle(0), FAKE_EXIT_WAIT);
	CHECK_EQ(state_of(p), PARTITION_RESTARTING);
	fake_now++;
	CHECK_EQ(fake_idle(0), FAKE_EXIT_RUN);
	CHECK_EQ(state_of(p), PARTITION_RUNNING);
	CHECK_EQ(p->started, fake_now);
	return wait;
}

/* Back-off: the base, doubled while restarts follow within 32 x the base, capped there. */
void test_partition_backoff(void)
{
	fake_config_begin(2);
	struct tern_config_partition *c = add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	c->fault_policy = TERN_FAULT_RESTART;
	c->restart_backoff_us = 100;  /* 100 ticks at the fake's 1 MHz */
	boot_board();
	struct partition *p = partition_named("rt");
	static const uint64_t want[] = { 100, 200, 400, 800, 1600, 3200, 3200 };

	for (unsigned i = 0; i < ARRAY_SIZE(want); i++)
		CHECK_EQ(fault_at(p, p->started + 50), want[i]);
	/* A run as long as the span: back to the base. */
	CHECK_EQ(fault_at(p, p->started + 3200), 100);
	CHECK_EQ(fault_at(p, p->started + 3199), 200);
	CHECK_EQ(p->auto_restarts, ARRAY_SIZE(want) + 2);
}

/* The back-off in counter ticks at the board's own frequency (QEMU: 62.5 MHz). */
void test_partition_backoff_ticks(void)
{
	fake_config_begin(2);
	struct tern_config_partition *c = add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	c->fault_policy = TERN_FAULT_RESTART;
	c->restart_backoff_us = TERN_MAX_BACKOFF_US;
	fake_freq = 62500000;
	boot_board();
	struct partition *p = partition_named("rt");
	CHECK_EQ(fault_at(p, p->started + 10), 60ull * 62500000);
}

/* The operator: stop and restart a running partition, restart an ended one. */
void test_partition_operator_requests(void)
{
	fake_config_begin(2);
	add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	boot_board();
	struct partition *p = partition_named("rt");

	fake_uart_clear();
	partition_request(p, PARTITION_REQ_STOP);
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 0); /* the core running it */
	CHECK_EQ(fake_deliver_kick(0), FAKE_EXIT_WAIT);
	CHECK_EQ(state_of(p), PARTITION_OFF);
	CHECK(!strcmp(fake_uart_out, "tern: partition rt off\r\n"));
	CHECK_EQ(p->vcpu[0].stats[STAT_FAULT], 0);

	fake_uart_clear();
	partition_request(p, PARTITION_REQ_RESTART);
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 0); /* vCPU 0's core, idle */
	CHECK_EQ(fake_deliver_kick(0), FAKE_EXIT_RUN);
	CHECK(!strcmp(fake_uart_out, "tern: partition rt restarted\r\n"));

	fake_uart_clear();
	partition_request(p, PARTITION_REQ_RESTART);
	CHECK_EQ(fake_deliver_kick(0), FAKE_EXIT_RUN);
	CHECK(!strcmp(fake_uart_out, "tern: partition rt reset\r\n"));
	CHECK_EQ(atomic_load(&p->restarts), 2);
	CHECK_EQ(p->auto_restarts, 0); /* the operator's restarts are not counted */
	/* It was ended and restarted: the board counts it running again. */
	CHECK_EQ(fw_system_off(1), FAKE_EXIT_IDLE);
	CHECK_EQ(fw_system_off(0), FAKE_EXIT_BOARD_OFF);
}

/* A stop during a restart's back-off keeps it down; a restart during it reloads at once. */
void test_partition_requests_during_backoff(void)
{
	fake_config_begin(2);
	struct tern_config_partition *c = add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	c->fault_policy = TERN_FAULT_RESTART;
	c->restart_backoff_us = 1000;
	boot_board();
	struct partition *p = partition_named("rt");

	CHECK_EQ(fake_settle(0, FAKE_ON(0, partition_fault(&p->vcpu[0], "x"))), FAKE_EXIT_WAIT);
	CHECK_EQ(state_of(p), PARTITION_RESTARTING);
	fake_uart_clear();
	partition_request(p, PARTITION_REQ_RESTART);
	CHECK_EQ(fake_deliver_kick(0), FAKE_EXIT_RUN);
	CHECK(!strcmp(fake_uart_out, "tern: partition rt restarted\r\n"));

	CHECK_EQ(fake_settle(0, FAKE_ON(0, partition_fault(&p->vcpu[0], "x"))), FAKE_EXIT_WAIT);
	fake_uart_clear();
	partition_request(p, PARTITION_REQ_STOP);
	CHECK_EQ(fake_deliver_kick(0), FAKE_EXIT_WAIT);
	CHECK_EQ(state_of(p), PARTITION_OFF);
	CHECK(!strcmp(fake_uart_out, "tern: partition rt off\r\n"));
	CHECK_EQ(fake_cores[0].deadline, 0);
	fake_now += 5000; /* its back-off would be over: it stays off */
	CHECK_EQ(fake_idle(0), FAKE_EXIT_WAIT);
	CHECK_EQ(state_of(p), PARTITION_OFF);
	/* It counted as ended: the other partition's end turns the board off. */
	CHECK_EQ(fw_system_off(1), FAKE_EXIT_BOARD_OFF);
}

/* A request that arrives while the partition ends is carried out once it has ended. */
static struct partition *request_partition;
static int request_sent;

static void request_during_end(void)
{
	if (!request_sent++)
		partition_request(request_partition, PARTITION_REQ_RESTART);
	fake_deliver_kicks_while_waiting();
}

void test_partition_request_while_ending(void)
{
	fake_config_begin(3);
	add_partition("rt", "0,1", 0);
	add_partition("other", "2", 0);
	boot_board();
	struct partition *p = partition_named("rt");
	start_vcpu(p, 1);
	request_partition = p;
	fake_relax_hook = request_during_end;
	atomic_store(&fake_kicks, 0);
	fake_uart_clear();
	CHECK_EQ(FAKE_ON(1, partition_fault(&p->vcpu[1], "x")), FAKE_EXIT_IDLE);
	CHECK_EQ(state_of(p), PARTITION_STOPPED);
	CHECK(atomic_load(&fake_kicks) & 1u); /* vCPU 0's core: the request waits there */
	fake_deliver_all_kicks(8);
	CHECK_EQ(state_of(p), PARTITION_RUNNING);
	CHECK(console_ends_with("tern: partition rt restarted"));
}

void test_partition_cpu_on_off(void)
{
	fake_config_begin(4);
	struct tern_config_partition *c = add_partition("rt", "0,1,2", 0);
	add_partition("other", "3", 0);
	boot_board();
	struct partition *p = partition_named("rt");

	CHECK_EQ(fw_cpu_on(0, 1, c->ram_ipa + c->ram_size, 0), FAKE_RETURNED);
	CHECK_EQ(fw_error(0), fw.invalid_address);
	CHECK_EQ(fw_cpu_on(0, 1, c->ram_ipa - 4, 0), FAKE_RETURNED);
	CHECK_EQ(fw_error(0), fw.invalid_address);
	CHECK_EQ(power_of(p, 1), VCPU_OFF);
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(fw_cpu_on(0, 1, c->ram_ipa + 0x2000, 0x42), FAKE_RETURNED);
	CHECK_EQ(fw_error(0), fw.success);
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 1);
	CHECK_EQ(fw_cpu_status(0, 1), FAKE_RETURNED);
	CHECK_EQ(fw_status(0), 2); /* ON_PENDING */
	/* Still starting: arm64 answers ALREADY_ON, as QEMU's firmware and KVM do (never ON_PENDING). */
	CHECK_EQ(fw_cpu_on(0, 1, c->ram_ipa + 0x2000, 0x42), FAKE_RETURNED);
	CHECK_EQ(fw_error(0), fw.on_pending);
	CHECK_EQ(fake_deliver_kick(1), FAKE_EXIT_RUN);
	CHECK_EQ(fake_cores[1].entry, c->ram_ipa + 0x2000);
	CHECK_EQ(fake_cores[1].context, 0x42);
	CHECK_EQ(guest_context(1), 0x42);
	CHECK_EQ(fw_cpu_status(1, 0), FAKE_RETURNED);
	CHECK_EQ(fw_status(1), 0);
	CHECK_EQ(fw_cpu_status(1, 2), FAKE_RETURNED);
	CHECK_EQ(fw_status(1), 1);
	CHECK_EQ(fw_cpu_on(1, 0, c->ram_ipa, 0), FAKE_RETURNED);
	CHECK_EQ(fw_error(1), fw.already_on);
	CHECK_EQ(vcpu_power_of(&p->vcpu[1], 0), VCPU_ON);

	/* CPU_OFF of one: it leaves, the partition runs on. */
	CHECK_EQ(fw_cpu_off(1), FAKE_EXIT_IDLE);
	CHECK_EQ(power_of(p, 1), VCPU_OFF);
	CHECK(!fake_cores[1].running);
	CHECK_EQ(fake_cores[1].quiesces, 1);
	CHECK_EQ(state_of(p), PARTITION_RUNNING);
	CHECK_EQ(fake_idle(1), FAKE_EXIT_WAIT);
	/* ... and of the last: the partition is off. */
	fake_uart_clear();
	CHECK_EQ(fw_cpu_off(0), FAKE_EXIT_IDLE);
	CHECK_EQ(state_of(p), PARTITION_OFF);
	CHECK(!strcmp(fake_uart_out, "tern: partition rt off\r\n"));
}

/* Race (a) through the firmware: both running vCPUs call CPU_OFF; the partition ends, once. */
static void two_cpu_offs(unsigned first)
{
	fake_config_begin(3);
	add_partition("rt", "0,1", 0);
	add_partition("other", "2", 0);
	boot_board();
	struct partition *p = partition_named("rt");
	start_vcpu(p, 1);
	fake_uart_clear();
	CHECK_EQ(fw_cpu_off(first), FAKE_EXIT_IDLE);
	CHECK_EQ(state_of(p), PARTITION_RUNNING);
	CHECK_EQ(fw_cpu_off(!first), FAKE_EXIT_IDLE);
	CHECK_EQ(state_of(p), PARTITION_OFF);
	CHECK(!strcmp(fake_uart_out, "tern: partition rt off\r\n"));
}

void test_partition_two_cpu_offs_0_first(void)
{
	two_cpu_offs(0);
}

void test_partition_two_cpu_offs_1_first(void)
{
	two_cpu_offs(1);
}

/*
 * Race (b) through the firmware: vCPU 2 faults and ends the partition; vCPU 0, which has not
 * taken its kick yet, calls CPU_ON for vCPU 1.  It is refused, and the ending core's wait
 * ends as soon as vCPU 0 has left.
 */
static struct partition *race_partition;
static int race_step;

static void cpu_on_before_the_kick(void)
{
	if (!race_step++) {
		CHECK_EQ(fw_cpu_on(0, 1, race_partition->cfg->entry_ipa, 0), FAKE_RETURNED);
		CHECK_EQ(fw_error(0), fw.denied);
		CHECK_EQ(atomic_load(&race_partition->vcpu[1].power), VCPU_OFF);
	}
	fake_deliver_kicks_while_waiting();
}

void test_partition_cpu_on_races_end(void)
{
	fake_config_begin(4);
	add_partition("rt", "0,1,2", 0);
	add_partition("other", "3", 0);
	boot_board();
	struct partition *p = partition_named("rt");
	start_vcpu(p, 2);
	race_partition = p;
	fake_relax_hook = cpu_on_before_the_kick;
	CHECK_EQ(FAKE_ON(2, partition_fault(&p->vcpu[2], "x")), FAKE_EXIT_IDLE);
	CHECK_EQ(race_step >= 1, 1);
	CHECK_EQ(state_of(p), PARTITION_STOPPED);
	for (uint32_t i = 0; i < 3; i++)
		CHECK_EQ(power_of(p, i), VCPU_OFF);
	CHECK_EQ(fake_idle(1), FAKE_EXIT_WAIT); /* nothing was left pending for vCPU 1 */
}

/* The console core drains the rings when a kick brings it in, and after its guest had a turn. */
void test_partition_console_core_drains(void)
{
	fake_config_begin(1);
	add_partition("rt", "0", 0);
	boot_board();
	CHECK_EQ(console_core(), 0);
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(fake_deliver_kick(0), FAKE_RETURNED);
	CHECK_EQ(atomic_load(&fake_kicks), 0); /* nothing was left to drain */
}

/* Lines another core could not write (the UART was busy) wait for the console core. */
static struct partition *busy_partition;

static void line_while_busy(char c)
{
	(void)c;
	fake_uart_hook = NULL;
	partition_log(busy_partition, "from a core that found the UART busy");
}

/*
 * The console core is a core no partition uses: it must be running for anyone to drain the
 * rings and take the console's input.  Here core 3, with partitions on cores 0-2.
 */
void test_partition_console_core_is_started(void)
{
	fake_config_begin(4);
	add_partition("rt", "0,1", 0);
	add_partition("linux", "2", 0);
	boot_board();
	CHECK_EQ(console_core(), 3);
	CHECK(console_irq_goes_to(3));
	CHECK(fake_cores[3].online);
	CHECK_EQ(fake_cores[3].waits, 1);   /* it idles in cpu_idle */

	busy_partition = partition_named("linux");
	fake_uart_hook = line_while_busy;
	atomic_store(&fake_kicks, 0);
	fake_uart_clear();
	tern_log("a line of the hypervisor's");
	CHECK(!console_has("busy"));
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 3);
	CHECK_EQ(fake_deliver_kick(3), FAKE_EXIT_WAIT);
	CHECK(console_ends_with("tern: from a core that found the UART busy"));
}

/* ---- the console core running a vCPU: it drains between its guest's turns ---- */

static void flood_while_busy(char c)
{
	(void)c;
	fake_uart_hook = NULL;
	for (int i = 0; i < 40; i++)
		partition_log(busy_partition, "line %02d of a partition that floods its console ............"
			      "..................................", i);
}

void test_partition_console_core_takes_turns(void)
{
	fake_config_begin(2);
	add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	boot_board();
	CHECK_EQ(console_core(), 0);
	busy_partition = partition_named("other");
	fake_uart_clear();
	fake_uart_hook = flood_while_busy;
	tern_log("busy");
	CHECK(atomic_load(&fake_kicks) & 1u);
	/* A kick while its guest runs: a budget's worth of lines, then the guest; then the rest. */
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(fake_deliver_kick(0), FAKE_RETURNED);
	CHECK(console_has("line 10") && !console_has("line 39"));
	CHECK_EQ(atomic_load(&fake_kicks), 1u);
	fake_deliver_all_kicks(8);
	CHECK(console_has("tern: line 39 "));
	CHECK(!fake_kicks);

	/* Idle, with its vCPU about to enter: the rest at the guest's first exit. */
	CHECK_EQ(fw_system_off(0), FAKE_EXIT_IDLE);
	CHECK_EQ(fake_idle(0), FAKE_EXIT_WAIT);
	fake_uart_clear();
	fake_uart_hook = flood_while_busy;
	tern_log("busy");
	partition_request(partition_named("rt"), PARTITION_REQ_RESTART);
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(fake_idle(0), FAKE_EXIT_RUN);
	CHECK_EQ(atomic_load(&fake_kicks), 1u);
	CHECK(console_has("line 10") && !console_has("line 39"));
	fake_deliver_all_kicks(8);   /* at its first exit */
	CHECK(console_has("line 39"));
}

/* A kick for a vCPU whose partition is not running (and that was not asked to stop) does nothing. */
void test_partition_requests_wait_while_not_running(void)
{
	fake_config_begin(2);
	add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	boot_board();
	struct partition *p = partition_named("rt");
	atomic_store(&p->request, PARTITION_REQ_STOP);
	atomic_store(&p->state, PARTITION_RESTARTING); /* as if caught between two states */
	CHECK_EQ(FAKE_ON(0, vcpu_check_requests(&p->vcpu[0])), FAKE_RETURNED);
	CHECK_EQ(atomic_load(&p->request), PARTITION_REQ_STOP); /* kept for vCPU 0's core */
	atomic_store(&p->state, PARTITION_RUNNING);
	CHECK_EQ(FAKE_ON(0, vcpu_check_requests(&p->vcpu[0])), FAKE_EXIT_IDLE);
	CHECK_EQ(atomic_load(&p->state), PARTITION_OFF);
}

/* A restart reloads the initrd from its pristine copy too. */
void test_partition_restart_reloads_initrd(void)
{
	fake_config_begin(2);
	struct tern_config_partition *c = add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	c->initrd_ipa = c->ram_ipa + 0x80000;
	c->initrd_size = 0x2000;
	c->pristine_initrd_hpa = c->pristine_dtb_hpa + 0x1000;
	memset(fake_ram + (c->pristine_initrd_hpa - platform.ram_base), 0x1d, c->initrd_size);
	boot_board();
	uint8_t *ram = fake_partition_ram(c);
	memset(ram, 0, FAKE_PART_RAM);
	partition_request(partition_named("rt"), PARTITION_REQ_RESTART);
	CHECK_EQ(fake_deliver_kick(0), FAKE_EXIT_RUN);
	CHECK_EQ(ram[0x80000], 0x1d);
	CHECK_EQ(ram[0x80000 + 0x1fff], 0x1d);
	CHECK_EQ(ram[0x80000 + 0x2000], 0);
}

/* A partition's emulated devices: at most MMIO_MAX_DEVICES, none overlapping, its own only. */
static enum mmio_result region_handler(struct vcpu *v, uint64_t offset, unsigned size, bool write,
				       uint64_t *value, const void *ctx)
{
	(void)v;
	(void)size;
	(void)write;
	/* Each region's own context comes back: region i was added with &regions[i]. */
	*value = offset | (uint64_t)(uintptr_t)ctx << 16;
	return MMIO_DONE;
}

void test_partition_mmio_regions(void)
{
	static struct partition p, other;
	static const char regions[MMIO_MAX_DEVICES + 1];
	struct vcpu v = { .partition = &p }, w = { .partition = &other };
	const uint64_t past = 0x1000 * (MMIO_MAX_DEVICES + 1); /* right after the last region */
	uint64_t value = 0;
	char err[96], want[96];

	for (uint64_t i = 0; i < MMIO_MAX_DEVICES; i++)
		CHECK(mmio_add(&p, 0x1000 * (i + 1), 0x1000, region_handler, &regions[i], err, sizeof(err)));
	CHECK(!mmio_add(&p, past, 0x1000, region_handler, NULL, err, sizeof(err)));
	snprintf(want, sizeof(want), "more than %u emulated devices (at 0x%llx)", MMIO_MAX_DEVICES,
		 (unsigned long long)past);
	CHECK(strstr(err, want));
	CHECK(mmio_add(&other, 0x5000, 0x1000, region_handler, NULL, err, sizeof(err)));
	CHECK(!mmio_add(&other, 0x5800, 0x1000, region_handler, NULL, err, sizeof(err)));
	CHECK(strstr(err, "emulated device at 0x5800 overlaps the one at 0x5000"));
	CHECK_EQ(mmio_emulate(&v, 0x8010, 4, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x10 | (uint64_t)(uintptr_t)&regions[7] << 16);
	CHECK(mmio_claimed(&p, past - 1));
	CHECK(!mmio_claimed(&p, past));
	CHECK_EQ(mmio_emulate(&v, past + 0x10, 4, false, &value), MMIO_UNHANDLED); /* not added */
	CHECK_EQ(mmio_emulate(&v, 0x0ff0, 4, false, &value), MMIO_UNHANDLED);
	CHECK_EQ(mmio_emulate(&v, 0x1ffc, 8, false, &value), MMIO_MISALIGNED);
	/* The other partition has its one device only. */
	CHECK_EQ(mmio_emulate(&w, 0x5010, 4, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x10);
	CHECK_EQ(mmio_emulate(&w, 0x8010, 4, false, &value), MMIO_UNHANDLED);
	CHECK(!mmio_claimed(&other, 0x8010));
}
