/* SPDX-License-Identifier: MIT */
/*
 * core/manager.c through each port's call (tern/manager.h): a manager partition's command
 * mailbox, served by the console core's drain.
 */
#include <string.h>
#include <tern/console.h>
#include <tern/manager.h>
#include <tern/platform.h>
#include "check.h"
#include "system.h"
#include "tests.h"

#define SUBMIT 0u
#define REPLY  1u
/* Where the tests put a command and a reply in the caller's RAM. */
#define TEXT_AT  0x3000u
#define REPLY_AT 0x8000u

static struct partition *m, *other;

/* The console core is core 0 (no partition uses it); m on core 1 is the manager. */
static void board(unsigned extra)
{
	static const char *const names[] = { "c", "d", "e", "f", "g" };
	char core[2] = { 0 };

	fake_config_begin(3 + extra);
	add_partition("m", "1", TERN_PF_MANAGER);
	add_partition("other", "2", 0);
	for (unsigned i = 0; i < extra; i++) {
		core[0] = (char)('3' + i);
		add_partition(names[i], core, 0);
	}
	boot_board();
	m = partition_named("m");
	other = partition_named("other");
	CHECK_EQ(console_core(), 0);
	fake_uart_clear();
	atomic_store(&fake_kicks, 0);
}

static uint64_t gpa(const struct partition *p, uint64_t off)
{
	return p->cfg->ram_ipa + off;
}

static char *ram(const struct partition *p, uint64_t off)
{
	return (char *)fake_partition_ram(p->cfg) + off;
}

/* `text` into p's RAM and submitted by its vCPU 0; the call's error. */
static int64_t submit(struct partition *p, const char *text)
{
	size_t n = strlen(text);

	memcpy(ram(p, TEXT_AT), text, n);
	manager_call(p->vcpu[0].pcpu, SUBMIT, gpa(p, TEXT_AT), n);
	return manager_error(p->vcpu[0].pcpu);
}

static int64_t reply(struct partition *p, uint64_t len)
{
	manager_call(p->vcpu[0].pcpu, REPLY, gpa(p, REPLY_AT), len);
	return manager_error(p->vcpu[0].pcpu);
}

static uint64_t stat(const struct partition *p, enum stat_id id)
{
	return p->vcpu[0].stats[id];
}

void test_manager_command_is_queued_carried_out_and_read(void)
{
	board(0);
	CHECK_EQ(reply(m, 4096), mgr.no_command);
	CHECK_EQ(submit(m, "list"), 0);
	/* Queued, the console core kicked; nothing carried out on the caller's core. */
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 0);
	CHECK_EQ(fake_uart_out[0], '\0');
	CHECK_EQ(reply(m, 4096), mgr.busy);
	CHECK_EQ(fake_deliver_kick(0), FAKE_EXIT_WAIT);
	/* The operator sees what the manager did; the reply itself is not on the console. */
	CHECK(console_has("tern: > (manager m) list\r\n"));
	CHECK(!console_has("tern-ctl"));
	memset(ram(m, REPLY_AT), '#', 4096);
	CHECK_EQ(reply(m, 4096), 0);
	const char *want =
		"tern-ctl {\"cmd\":\"list\",\"partition\":\"m\",\"id\":0,\"state\":\"running\",\"vcpus\":1,"
		"\"cpus\":[1],\"mem_mib\":%llu,\"restarts\":0,\"pool\":null}\n"
		"tern-ctl {\"cmd\":\"list\",\"partition\":\"other\",\"id\":1,\"state\":\"running\","
		"\"vcpus\":1,\"cpus\":[2],\"mem_mib\":%llu,\"restarts\":0,\"pool\":null}\n"
		"tern-ctl {\"cmd\":\"list\",\"ok\":true}\n";
	char expected[512];
	unsigned long long mib = (unsigned long long)(m->cfg->ram_size >> 20);
	int n = snprintf(expected, sizeof(expected), want, mib, mib);
	CHECK_EQ(manager_value(m->vcpu[0].pcpu), (uint64_t)n);
	CHECK(!memcmp(ram(m, REPLY_AT), expected, (size_t)n));
	CHECK_EQ(ram(m, REPLY_AT)[n], '#');
	/* Consumed: the next reply has no command. */
	CHECK_EQ(reply(m, 4096), mgr.no_command);
	CHECK_EQ(stat(m, STAT_MANAGER_CALL), 5);
	CHECK_EQ(stat(m, STAT_MANAGER_DENIED), 0);
}

/* A command that changes something: carried out as the console would, refusals too. */
void test_manager_pause_and_refusal(void)
{
	board(0);
	CHECK_EQ(submit(m, "pause other"), 0);
	fake_deliver_kick(0);
	CHECK(atomic_load(&other->paused));
	CHECK_EQ(reply(m, 4096), 0);
	CHECK(!strncmp(ram(m, REPLY_AT), "tern-ctl {\"cmd\":\"pause\",\"ok\":true,", 34));
	/* A guest's control characters are not put on the operator's terminal. */
	CHECK_EQ(submit(m, "list\x1b[2J"), 0);
	fake_deliver_kick(0);
	CHECK(console_has("tern: > (manager m) list?[2J\r\n"));
	CHECK_EQ(reply(m, 4096), 0);
	CHECK_EQ(submit(m, "@7 pause nobody"), 0);
	fake_deliver_kick(0);
	CHECK_EQ(reply(m, 4096), 0);
	const char *want = "tern: console: no partition named \"nobody\"\n"
			   "tern-ctl {\"seq\":7,\"cmd\":\"pause\",\"ok\":false,"
			   "\"reason\":\"no partition named \\\"nobody\\\"\"}\n";
	CHECK_EQ(manager_value(m->vcpu[0].pcpu), strlen(want));
	CHECK(!memcmp(ram(m, REPLY_AT), want, strlen(want)));
}

void test_manager_busy_until_the_reply_is_read(void)
{
	board(0);
	CHECK_EQ(submit(m, "list"), 0);
	CHECK_EQ(submit(m, "help"), mgr.busy);          /* queued, not carried out */
	fake_deliver_kick(0);
	CHECK_EQ(submit(m, "help"), mgr.busy);          /* carried out, reply not read */
	CHECK(console_has("(manager m) list"));
	CHECK(!console_has("(manager m) help"));
	CHECK_EQ(reply(m, 0), 0);                       /* read (cut to nothing): consumed */
	CHECK(manager_value(m->vcpu[0].pcpu) > 0);
	CHECK_EQ(submit(m, "help"), 0);
	fake_deliver_kick(0);
	CHECK(console_has("(manager m) help"));
}

/* A short buffer gets the reply's start and learns its full length; the reply is gone. */
void test_manager_reply_cut_by_the_callers_buffer(void)
{
	board(0);
	CHECK_EQ(submit(m, "list"), 0);
	fake_deliver_kick(0);
	memset(ram(m, REPLY_AT), '#', 64);
	CHECK_EQ(reply(m, 10), 0);
	CHECK(manager_value(m->vcpu[0].pcpu) > 10);
	CHECK(!memcmp(ram(m, REPLY_AT), "tern-ctl {#", 11));
	CHECK_EQ(reply(m, 4096), mgr.no_command);
}

/* Output past the mailbox's 4 KiB: whole lines, then "truncated". */
void test_manager_reply_truncated_in_the_mailbox(void)
{
	board(5); /* seven partitions' tern-stats lines are more than 4 KiB */
	CHECK_EQ(submit(m, "stats"), 0);
	fake_deliver_kick(0);
	CHECK_EQ(reply(m, 8192), 0);
	uint64_t n = manager_value(m->vcpu[0].pcpu);
	const char *r = ram(m, REPLY_AT);
	CHECK(n <= MANAGER_REPLY_MAX && n > MANAGER_REPLY_MAX - CONSOLE_LINE_MAX);
	CHECK(!strncmp(r, "tern-stats {\"partition\":\"m\"", 27));
	CHECK(!memcmp(&r[n - 11], "\ntruncated\n", 11));
	/* The stats lines that did fit are whole: each one ends its JSON. */
	CHECK(!memcmp(&r[n - 12], "}", 1));
	CHECK(!console_has("tern-stats"));
}

void test_manager_non_manager_denied(void)
{
	board(0);
	CHECK_EQ(submit(other, "list"), mgr.denied);
	CHECK_EQ(reply(other, 4096), mgr.denied);
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	CHECK_EQ(stat(other, STAT_MANAGER_CALL), 2);
	CHECK_EQ(stat(other, STAT_MANAGER_DENIED), 2);
	/* The manager's mailbox is its own: untouched by the refused calls. */
	CHECK_EQ(reply(m, 4096), mgr.no_command);
}

void test_manager_bad_buffers(void)
{
	board(0);
	uint64_t pc = m->vcpu[0].pcpu;
	uint64_t end = m->cfg->ram_ipa + m->cfg->ram_size;

	manager_call(pc, SUBMIT, gpa(m, TEXT_AT), 0);
	CHECK_EQ(manager_error(pc), mgr.invalid);
	manager_call(pc, SUBMIT, gpa(m, TEXT_AT), MANAGER_COMMAND_MAX + 1u);
	CHECK_EQ(manager_error(pc), mgr.invalid);
	manager_call(pc, SUBMIT, end - 2, 4);                 /* straddles its RAM's end */
	CHECK_EQ(manager_error(pc), mgr.bad_address);
	manager_call(pc, SUBMIT, m->cfg->ram_ipa - 4, 4);     /* below it */
	CHECK_EQ(manager_error(pc), mgr.bad_address);
	manager_call(pc, SUBMIT, ~0ull - 1, 4);               /* wraps */
	CHECK_EQ(manager_error(pc), mgr.bad_address);
	manager_call(pc, REPLY, end, 16);
	CHECK_EQ(manager_error(pc), mgr.bad_address);
	CHECK_EQ(submit(m, "list\nstop other"), mgr.invalid);
	CHECK_EQ(submit(m, "list\rx"), mgr.invalid);
	memcpy(ram(m, TEXT_AT), "li\0t", 4);
	manager_call(pc, SUBMIT, gpa(m, TEXT_AT), 4);
	CHECK_EQ(manager_error(pc), mgr.invalid);
	/* None of them took the mailbox or woke the console core. */
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	CHECK_EQ(submit(m, "list"), 0);
	/* An unknown function of the interface is not supported. */
	manager_call(pc, 2, gpa(m, TEXT_AT), 4);
	CHECK_EQ(manager_error(pc), mgr.not_supported);
}
