/* SPDX-License-Identifier: MIT */
/* core/command.c: the hypervisor console's commands, typed on the board UART. */
#include <string.h>
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/platform.h>
#include "check.h"
#include "system.h"
#include "tests.h"

static struct partition *rt, *lx;

static void board(void)
{
	fake_config_begin(3);
	add_partition("rt", "1", 0);
	add_partition("linux", "2", 0);
	boot_board();
	rt = partition_named("rt");
	lx = partition_named("linux");
	fake_uart_clear();
	atomic_store(&fake_kicks, 0);
}

static void type(const char *s)
{
	fake_uart_type(s);
	console_rx();
}

void test_command_help(void)
{
	board();
	type("help\r");
	CHECK(!strcmp(fake_uart_out, "tern: > help\r\ntern: commands: help, list, vcpu-list, pool-list, stats, restart NAME, stop NAME, pause NAME, unpause NAME, vcpu-pin NAME VCPU CPU\r\n"
			  "tern: commands: pool-migrate NAME POOL, sched-rtds NAME --budget US --period US, sched-credit NAME --weight W [--cap P]\r\n"
			  "tern: commands: sched-arinc653 POOL [--major-frame US] --window NAME:US ...\r\n"
			  "tern-ctl {\"cmd\":\"help\",\"ok\":true}\r\n"));
}

void test_command_stats(void)
{
	board();
	unsigned polls = fake_iommu_polls;
	type("stats\n");
	CHECK(console_has("tern: > stats\r\n"));
	CHECK(console_has("tern-stats {\"partition\":\"rt\",\"state\":\"running\",\"restarts\":0,"));
	CHECK(console_has("tern-stats {\"partition\":\"linux\",\"state\":\"running\""));
	/* Every counter, the port's own last (fast_doorbell on both). */
	char text[96];
	snprintf(text, sizeof(text), ",\"%s\":0}\r\n", stat_names[STAT_COUNT - 1]);
	CHECK(console_has(text));
	uint32_t used, total;
	arch_table_pages(&used, &total);
	CHECK(used > 0);
	snprintf(text, sizeof(text), "tern-mem {\"table_pages_used\":%u,\"table_pages\":%u}", used, total);
	CHECK(console_has(text));
	CHECK(console_ends_with("tern-ctl {\"cmd\":\"stats\",\"ok\":true}"));
	CHECK_EQ(fake_iommu_polls, polls + 1);
}

/* restart and stop are requests, carried out on the partition's own core. */
void test_command_restart_and_stop(void)
{
	board();
	type("restart rt\r");
	CHECK(!strcmp(fake_uart_out, "tern: > restart rt\r\ntern-ctl {\"cmd\":\"restart\",\"ok\":true}\r\n"));
	CHECK_EQ(atomic_load(&rt->request), PARTITION_REQ_RESTART);
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 1);
	CHECK_EQ(fake_deliver_kick(1), FAKE_EXIT_RUN);
	CHECK(console_ends_with("tern: partition rt reset"));
	type("  stop   linux\r");
	CHECK(console_has("tern: > stop linux\r\n"));
	CHECK_EQ(atomic_load(&lx->request), PARTITION_REQ_STOP);
	fake_deliver_all_kicks(8);
	CHECK_EQ(atomic_load(&lx->state), PARTITION_OFF);
	CHECK(console_ends_with("tern: partition linux off"));
}

void test_command_errors(void)
{
	board();
	type("restart nope\r");
	CHECK(console_has("tern: console: no partition named \"nope\"\r\n"));
	CHECK(console_ends_with("tern-ctl {\"cmd\":\"restart\",\"ok\":false,"
				"\"reason\":\"no partition named \\\"nope\\\"\"}"));
	type("stop\r");
	CHECK(console_has("tern: console: no partition named \"\"\r\n"));
	type("frob rt\r");
	CHECK(console_has("tern: console: unknown command \"frob\" (try help)\r\n"));
	CHECK(console_ends_with("\"ok\":false,\"reason\":\"unknown command \\\"frob\\\" (try help)\"}"));
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	fake_uart_clear();
	type("\r   \n\r\n"); /* empty lines say nothing */
	CHECK_EQ(fake_uart_len, 0);
}

/* DEL and backspace edit the line; a line split across interrupts is one line. */
void test_command_editing(void)
{
	board();
	type("\b\x7fhex\x7flp");
	CHECK_EQ(fake_uart_len, 0);
	type("\r");
	CHECK(console_has("tern: > help\r\n"));
	fake_uart_clear();
	type("st");
	type("ats");
	type("\n");
	CHECK(console_has("tern: > stats\r\n"));
}

/* A line longer than the console keeps is refused whole, and the next one works. */
void test_command_line_too_long(void)
{
	char line[400];

	board();
	memset(line, 'a', 300);
	strcpy(line + 300, "\rhelp\r");
	type(line);
	CHECK(console_has("tern: console: line longer than 255 characters ignored\r\n"));
	CHECK(!console_has("> aaa"));
	CHECK(console_has("tern: commands: help, list, vcpu-list, pool-list, stats, restart NAME, stop NAME, pause NAME, unpause NAME, vcpu-pin NAME VCPU CPU\r\n"));
	/* 255 characters are fine */
	fake_uart_clear();
	memset(line, 'b', 255);
	strcpy(line + 255, "\r");
	type(line);
	CHECK(console_has("unknown command \"bbbbbbbbbb"));
}

/* The UART's interrupt arrives on the console core while its guest runs, and is completed. */
void test_command_input_interrupt(void)
{
	fake_config_begin(1);
	add_partition("rt", "0", 0);
	boot_board();
	CHECK_EQ(console_core(), 0);
	fake_uart_clear();
	fake_uart_type("help\r");
	CHECK_EQ(console_input_interrupt(0), FAKE_RETURNED);
	CHECK(console_has("tern: > help\r\n"));
	CHECK(console_input_completed(0));
}

/* A tool's request carries a sequence number, which each reply line repeats. */
void test_command_list_tagged(void)
{
	board();
	type("@7 list\r");
	CHECK(console_has("tern: > list\r\n"));
	CHECK(console_has("tern-ctl {\"seq\":7,\"cmd\":\"list\",\"partition\":\"rt\",\"id\":0,"
			  "\"state\":\"running\",\"vcpus\":1,\"cpus\":[1],"));
	CHECK(console_has("\"partition\":\"linux\",\"id\":1,\"state\":\"running\",\"vcpus\":1,\"cpus\":[2],"));
	CHECK(console_has("\"restarts\":0,\"pool\":null}\r\n"));
	CHECK(console_ends_with("tern-ctl {\"seq\":7,\"cmd\":\"list\",\"ok\":true}"));
	fake_uart_clear();
	type("@4294967295 vcpu-list\r");
	CHECK(console_has("tern-ctl {\"seq\":4294967295,\"cmd\":\"vcpu-list\",\"partition\":\"rt\",\"id\":0,"
			  "\"vcpu\":0,\"cpu\":1,\"power\":\"on\",\"paused\":false,\"affinity\":[1],"
			  "\"sched\":\"pinned\"}\r\n"));
	CHECK(console_has("\"partition\":\"linux\",\"id\":1,\"vcpu\":0,\"cpu\":2,"));
	CHECK(console_ends_with("tern-ctl {\"seq\":4294967295,\"cmd\":\"vcpu-list\",\"ok\":true}"));
	fake_uart_clear();
	type("@1 pool-list\r");
	CHECK(console_has("tern-ctl {\"seq\":1,\"cmd\":\"pool-list\",\"pool\":null,\"scheduler\":\"null\","
			  "\"cpus\":[1],\"partitions\":[\"rt\"]}\r\n"));
	CHECK(console_ends_with("tern-ctl {\"seq\":1,\"cmd\":\"pool-list\",\"ok\":true}"));
}

static bool listed_as(const char *name, const char *state)
{
	char text[96];

	fake_uart_clear();
	type("list\r");
	snprintf(text, sizeof(text), "\"partition\":\"%s\",", name);
	const char *item = strstr(fake_uart_out, text);
	snprintf(text, sizeof(text), "\"state\":\"%s\",", state);
	const char *end = item ? strstr(item, "\r\n") : NULL;
	const char *found = item ? strstr(item, text) : NULL;
	return found && found < end;
}

/*
 * pause: the vCPU waits on its own core at the kick, its guest kept (it never leaves); list
 * says "pausing" until it does, "paused" after; unpause lets the same guest go on.
 */
void test_command_pause_and_unpause(void)
{
	board();
	struct vcpu *v = &rt->vcpu[0];
	unsigned leaves = fake_cores[1].leaves, runs = fake_cores[1].runs;
	type("@3 pause rt\r");
	CHECK(console_ends_with("tern-ctl {\"seq\":3,\"cmd\":\"pause\",\"ok\":true,\"state\":\"pausing\"}"));
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 1); /* the console core only posted and kicked */
	CHECK(listed_as("rt", "pausing"));
	CHECK_EQ(fake_deliver_kick(1), FAKE_EXIT_WAIT);
	CHECK_EQ(fake_cores[1].vcpu_waits, 1);
	CHECK(atomic_load(&v->paused));
	CHECK(fake_cores[1].running == v);
	CHECK(listed_as("rt", "paused"));
	CHECK(listed_as("linux", "running"));
	CHECK(console_has("\"vcpu\":0,\"cpu\":1,\"power\":\"on\",\"paused\":true") ||
	      (type("vcpu-list\r"), console_has("\"vcpu\":0,\"cpu\":1,\"power\":\"on\",\"paused\":true")));
	/* Another kick (an interrupt's, the console's) finds it still paused: it waits again. */
	CHECK_EQ(fake_deliver_kick(1), FAKE_EXIT_WAIT);
	CHECK_EQ(fake_cores[1].vcpu_waits, 2);
	fake_uart_clear();
	type("unpause rt\r");
	CHECK(console_ends_with("tern-ctl {\"cmd\":\"unpause\",\"ok\":true}"));
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 1);
	CHECK_EQ(fake_deliver_kick(1), FAKE_RETURNED); /* back into the guest where it was */
	CHECK(!atomic_load(&v->paused));
	CHECK(fake_cores[1].running == v);
	CHECK_EQ(fake_cores[1].leaves, leaves);
	CHECK_EQ(fake_cores[1].runs, runs); /* not entered afresh */
	CHECK(listed_as("rt", "running"));
	CHECK_EQ(atomic_load(&rt->state), PARTITION_RUNNING);
}

/* A paused partition can still be stopped or restarted; the restarted guest is not paused. */
void test_command_stop_and_restart_while_paused(void)
{
	board();
	type("pause rt\r");
	type("pause linux\r");
	fake_deliver_all_kicks(4);
	CHECK(listed_as("rt", "paused"));
	CHECK(listed_as("linux", "paused"));
	type("restart rt\r");
	CHECK_EQ(fake_deliver_kick(1), FAKE_EXIT_RUN);
	CHECK(console_has("tern: partition rt reset"));
	CHECK(!atomic_load(&rt->paused));
	CHECK(listed_as("rt", "running"));
	type("stop linux\r");
	fake_deliver_all_kicks(8);
	CHECK_EQ(atomic_load(&lx->state), PARTITION_OFF);
	CHECK(!atomic_load(&lx->vcpu[0].paused));
	CHECK(listed_as("linux", "off"));
	fake_uart_clear();
	type("pause linux\r");
	CHECK(console_ends_with("\"ok\":false,\"reason\":\"partition linux is off: only a running "
				"partition can be paused\"}"));
	type("unpause rt\r");
	CHECK(console_ends_with("\"ok\":false,\"reason\":\"partition rt is not paused\"}"));
}

/* What the hypervisor cannot do yet is refused with the reason; malformed input too. */
void test_command_refusals(void)
{
	board();
	type("@9 vcpu-pin rt 0 2\r");
	CHECK(console_has("tern: console: vcpu-pin rt 0 2: it is in a null pool, which keeps each "
			  "vCPU on its own core\r\n"));
	CHECK(console_ends_with("tern-ctl {\"seq\":9,\"cmd\":\"vcpu-pin\",\"ok\":false,\"reason\":"
				"\"vcpu-pin rt 0 2: it is in a null pool, which keeps each vCPU on its own "
				"core\"}"));
	type("vcpu-pin rt 0 1\r"); /* where it already is */
	CHECK(console_ends_with("tern-ctl {\"cmd\":\"vcpu-pin\",\"ok\":true}"));
	type("vcpu-pin rt 1 1\r");
	CHECK(console_ends_with("\"reason\":\"partition rt has no vCPU 1 (it has 1)\"}"));
	type("vcpu-pin rt x 1\r");
	CHECK(console_ends_with("\"reason\":\"partition rt has no vCPU x (it has 1)\"}"));
	type("vcpu-pin rt 0 99999999999\r");
	CHECK(console_ends_with("\"reason\":\"not a core number: 99999999999\"}"));
	type("vcpu-pin rt 0\r");
	CHECK(console_ends_with("\"reason\":\"usage: vcpu-pin PARTITION VCPU CPU\"}"));
	type("vcpu-pin nope 0 1\r");
	CHECK(console_ends_with("\"reason\":\"no partition named \\\"nope\\\"\"}"));
	type("sched-rtds rt --budget 1 --period 2\r");
	CHECK(console_ends_with("\"reason\":\"sched-rtds rt: vCPU 0: its pool's scheduler (null) takes "
				"no parameters\"}"));
	type("sched-rtds rt --budget 1\r");
	CHECK(console_ends_with("\"reason\":\"sched-rtds: --budget and --period take microseconds\"}"));
	type("sched-credit\r");
	CHECK(console_ends_with("\"reason\":\"usage: sched-credit PARTITION --weight W [--cap PERCENT]\"}"));
	type("sched-credit rt --weight 5 --colour red\r");
	CHECK(console_ends_with("\"reason\":\"usage: sched-credit PARTITION --weight W [--cap PERCENT]\"}"));
	type("pool-migrate nope frame\r");
	CHECK(console_ends_with("\"reason\":\"no partition named \\\"nope\\\"\"}"));
	type("pool-migrate rt frame\r");
	CHECK(console_ends_with("\"reason\":\"no pool named \\\"frame\\\"\"}"));
	type("sched-arinc653 frame\r");
	CHECK(console_ends_with("\"cmd\":\"sched-arinc653\",\"ok\":false,\"reason\":\"no pool named "
				"\\\"frame\\\"\"}"));
	type("list rt\r");
	CHECK(console_ends_with("\"reason\":\"list takes no arguments\"}"));
	type("pause rt linux\r");
	CHECK(console_ends_with("\"reason\":\"pause takes one partition name\"}"));
	type("@x list\r");
	CHECK(console_ends_with("tern-ctl {\"cmd\":\"?\",\"ok\":false,\"reason\":\"bad sequence number \\\"@x\\\"\"}"));
	type("a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n o\r");
	CHECK(console_ends_with("\"ok\":false,\"reason\":\"more than 40 words\"}"));
	/* Quotes, backslashes and control characters stay inside the JSON string. */
	type("\"\\\x01\r");
	CHECK(console_ends_with("tern-ctl {\"cmd\":\"\\\"\\\\\\u0001\",\"ok\":false,\"reason\":"
				"\"unknown command \\\"\\\"\\\\\\u0001\\\" (try help)\"}"));
	type("@5\r"); /* a number and nothing to do: nothing said */
	CHECK(console_ends_with("(try help)\"}"));
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	CHECK_EQ(atomic_load(&rt->request), 0);
}
