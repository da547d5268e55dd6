/*
 * manager: a partition that runs the hypervisor console's commands through its manager calls
 * (manager.h), both ports.
 *
 *   manager.cmds=C1;C2;...  the commands, in order; a '+' in one stands for a space (bootargs
 *                           have none): `list;pause+b;unpause+b`
 *   manager.gap_ms=N        wait N ms after each command's reply (0)
 *   manager.tick_ms=N       then print a tick line every N ms ... (0: none)
 *   manager.seconds=S       ... for S seconds (2)
 *
 * With commands, it first makes one call that must be refused (a buffer just past its RAM)
 * and prints its error: MANAGER-REFUSED {...}.  Each reply line is printed as
 * `MANAGER-REPLY {"i":K} LINE`, then `MANAGER-RESULT {"i":K,...}`.  Without commands, it
 * submits `list` once and prints the answer: MANAGER-CALL {...} (a partition that is not a
 * manager is denied).  Last, `MANAGER-DONE {...}`.
 */
#include "manager.h"

#include "bootargs.h"
#include "console.h"
#include "runtime.h"
#include "timer.h"

const char guest_name[] = "manager";

#define COMMAND_MAX 255u
#define REPLY_MAX   4096u

static char command[COMMAND_MAX + 1u];
static char reply[REPLY_MAX];

static uint64_t ms_ticks(uint64_t ms)
{
	return ms * (timer_freq() / 1000u);
}

/* Counter time passing: a deliberate wait, the ticks' period or a gap the test asked for. */
static void wait_ms(uint64_t ms)
{
	uint64_t end = counter_board() + ms_ticks(ms);

	while (counter_board() < end)
		;
}

/* One reply line as a JSON string's inside: its quotes and backslashes escaped. */
static void print_line(unsigned i, const char *s, uint64_t n)
{
	printf("MANAGER-REPLY {\"i\":%u} ", i);
	for (uint64_t k = 0; k < n; k++)
		console_putc(s[k]);
	console_putc('\n');
}

/* Submit command[0..len), poll its reply, print it; the number of errors (0 or 1). */
static unsigned run(unsigned i, uint64_t len)
{
	uint64_t full = 0;
	unsigned long polls = 0;
	long error = manager_call(MANAGER_SUBMIT, (uint64_t)(uintptr_t)command, len, &full);

	if (error) {
		printf("MANAGER-RESULT {\"i\":%u,\"submit\":\"%s\",\"code\":%ld}\n", i,
		       manager_error_name(error), error);
		return 1;
	}
	do {
		polls++;
		error = manager_call(MANAGER_REPLY, (uint64_t)(uintptr_t)reply, sizeof(reply), &full);
	} while (error && manager_error_name(error)[0] == 'b'); /* "busy": poll again */
	if (error) {
		printf("MANAGER-RESULT {\"i\":%u,\"reply\":\"%s\",\"code\":%ld}\n", i,
		       manager_error_name(error), error);
		return 1;
	}
	uint64_t got = full < sizeof(reply) ? full : sizeof(reply);
	uint64_t start = 0;
	for (uint64_t k = 0; k < got; k++) {
		if (reply[k] == '\n') {
			print_line(i, &reply[start], k - start);
			start = k + 1u;
		}
	}
	if (start < got)
		print_line(i, &reply[start], got - start);
	printf("MANAGER-RESULT {\"i\":%u,\"len\":%lu,\"polls\":%lu,\"t\":%lu}\n", i,
	       (unsigned long)full, polls, (unsigned long)counter_board());
	return 0;
}

/* The item's command into `command`, '+' made a space; its length (0 if too long). */
static uint64_t take(struct strview item)
{
	if (item.len > COMMAND_MAX)
		return 0;
	for (size_t k = 0; k < item.len; k++)
		command[k] = item.p[k] == '+' ? ' ' : item.p[k];
	return item.len;
}

static void refused_call(void)
{
	uint64_t value;
	uint64_t past = ram_base() + ram_size();
	long error = manager_call(MANAGER_SUBMIT, past, 4, &value);

	printf("MANAGER-REFUSED {\"call\":\"submit\",\"address\":%lu,\"error\":\"%s\",\"code\":%ld}\n",
	       (unsigned long)past, manager_error_name(error), error);
}

void guest_main(void)
{
	struct strview cmds;
	unsigned commands = 0, errors = 0;
	unsigned long gap = bootarg_ulong("manager.gap_ms", 0, 0, 100000);
	unsigned long tick = bootarg_ulong("manager.tick_ms", 0, 0, 100000);
	unsigned long seconds = bootarg_ulong("manager.seconds", 2, 0, 10000);

	if (bootarg("manager.cmds", &cmds)) {
		refused_call();
		while (cmds.len) {
			struct strview item = { cmds.p, 0 };
			while (item.len < cmds.len && cmds.p[item.len] != ';')
				item.len++;
			cmds.p += item.len;
			cmds.len -= item.len;
			if (cmds.len) {
				cmds.p++;
				cmds.len--;
			}
			uint64_t len = take(item);
			errors += len ? run(commands, len) : 1u;
			commands++;
			wait_ms(gap);
		}
	} else {
		uint64_t value;
		const char list[] = "list";
		for (unsigned k = 0; k < sizeof(list); k++)
			command[k] = list[k];
		long error = manager_call(MANAGER_SUBMIT, (uint64_t)(uintptr_t)command, 4, &value);
		printf("MANAGER-CALL {\"call\":\"submit\",\"error\":\"%s\",\"code\":%ld}\n",
		       manager_error_name(error), error);
	}
	if (tick) {
		uint64_t end = counter_board() + ms_ticks(seconds * 1000u);
		for (unsigned long n = 0; counter_board() < end; n++) {
			printf("manager-tick {\"n\":%lu,\"t\":%lu}\n", n, (unsigned long)counter_board());
			wait_ms(tick);
		}
	}
	printf("MANAGER-DONE {\"commands\":%u,\"errors\":%u}\n", commands, errors);
}
