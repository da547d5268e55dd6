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
	CHECK(!strcmp(fake_uart_out, "tern: > help\r\ntern: commands: help, stats, restart NAME, stop NAME\r\n"));
}

void test_command_stats(void)
{
	board();
	unsigned polls = fake_iommu_polls;
	type("stats\n");
	CHECK(console_has("tern: > stats\r\n"));
	CHECK(console_has("tern-stats {\"partition\":\"rt\",\"state\":\"running\",\"restarts\":0,"));
	CHECK(console_has("tern-stats {\"partition\":\"linux\",\"state\":\"running\""));
	/* Every counter, the port's own last (arm64 setway_ops, riscv64 fast_doorbell). */
	char text[96];
	snprintf(text, sizeof(text), ",\"%s\":0}\r\n", stat_names[STAT_COUNT - 1]);
	CHECK(console_has(text));
	uint32_t used, total;
	arch_table_pages(&used, &total);
	CHECK(used > 0);
	snprintf(text, sizeof(text), "tern-mem {\"table_pages_used\":%u,\"table_pages\":%u}", used, total);
	CHECK(console_ends_with(text));
	CHECK_EQ(fake_iommu_polls, polls + 1);
}

/* restart and stop are requests, carried out on the partition's own core. */
void test_command_restart_and_stop(void)
{
	board();
	type("restart rt\r");
	CHECK(!strcmp(fake_uart_out, "tern: > restart rt\r\n"));
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
	CHECK(console_ends_with("tern: console: no partition named \"nope\""));
	type("stop\r");
	CHECK(console_ends_with("tern: console: no partition named \"\""));
	type("frob rt\r");
	CHECK(console_ends_with("tern: console: unknown command \"frob\" (try help)"));
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
	char line[200];

	board();
	memset(line, 'a', 100);
	strcpy(line + 100, "\rhelp\r");
	type(line);
	CHECK(console_has("tern: console: line longer than 79 characters ignored\r\n"));
	CHECK(!console_has("> aaa"));
	CHECK(console_ends_with("tern: commands: help, stats, restart NAME, stop NAME"));
	/* 79 characters are fine */
	fake_uart_clear();
	memset(line, 'b', 79);
	strcpy(line + 79, "\r");
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
