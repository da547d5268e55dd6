/* SPDX-License-Identifier: MIT */
/*
 * The hypervisor console's commands (core/command.c): bytes typed on the board UART, mostly
 * whole words of the command language (verbs, the standard partitions' names, numbers, `@N`
 * tags, spaces, line ends, DEL), interleaved with the kicks the commands send being delivered
 * (a pause taken, an unpause, a stop or restart carried out).
 *
 * Oracle: every line the console takes is answered by nothing (an empty line, a bare tag), the
 * too-long line's notice, or output whose last line is one `tern-ctl {...}` with "ok" (and a
 * "reason" when false), the request's seq repeated when it had one; after the kicks, the power
 * invariants, and a vCPU waits at a pause only on its own core, still its core's guest.
 */
#include <string.h>
#include <tern/console.h>
#include "harness.h"

#define STARTED (BIT(0) | BIT(3))

static const char *const words[] = {
	"list", "vcpu-list", "pool-list", "stats", "help", "stop", "restart", "pause", "unpause",
	"vcpu-pin", "pool-migrate", "sched-rtds", "sched-credit", "sched-arinc653", "trap",
	"direct", "nope", "@", "@7", "@4294967295", "@4294967296", "0", "1", "2", "5",
	"99999999999", "--budget", "\"", "\\", " ", " ", " ", "\r", "\r", "\n", "\x7f",
};

static size_t line_start;    /* fake_uart_len when the line being typed began */

ORACLE static void check_reply(void)
{
	const char *out = fake_uart_out + line_start;
	size_t n = fake_uart_len - line_start;

	if (!n || strstr(out, "characters ignored\r\n"))
		return;
	FUZZ_ASSERT(n >= 2 && out[n - 2] == '\r' && out[n - 1] == '\n');
	const char *last = out + n - 2;
	while (last > out && last[-1] != '\n')
		last--;
	FUZZ_ASSERT(!strncmp(last, "tern-ctl {", 10));
	FUZZ_ASSERT(strstr(last, "\"ok\":true") || strstr(last, "\"ok\":false,\"reason\":\""));
}

ORACLE static void check_pauses(void)
{
	for (uint32_t i = 0; i < num_partitions; i++) {
		for (uint32_t k = 0; k < partitions[i].num_vcpus; k++) {
			struct vcpu *v = &partitions[i].vcpu[k];
			if (atomic_load(&v->paused))
				FUZZ_ASSERT(fake_cores[v->pcpu].running == v);
		}
	}
}

static void type(const char *s)
{
	for (; *s; s++) {
		if (*s == '\r' || *s == '\n') {
			fake_uart_clear();
			line_start = 0;
		}
		char one[2] = { *s, '\0' };
		fake_uart_type(one);
		console_rx();
		if (*s == '\r' || *s == '\n') {
			check_reply();
			fake_uart_clear();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };
	char typed[2] = { '\0', '\0' };

	std_boot(STARTED);
	for (uint32_t i = 0; i < num_partitions; i++)
		partition_unpause(&partitions[i]);
	std_repair(STARTED);
	type("\r"); /* whatever the last input left half-typed */
	while (input_left(&in)) {
		uint8_t op = (uint8_t)take(&in, 1);

		if (op < 0xc0) {
			const char *w = words[op % ARRAY_SIZE(words)];
			TRACE("type \"%s\"\n", w);
			type(w);
		} else if (op < 0xe0) {
			TRACE("kicks\n");
			fake_deliver_all_kicks(64);
			check_pauses();
		} else {
			typed[0] = (char)take(&in, 1);
			TRACE("type 0x%02x\n", (uint8_t)typed[0]);
			if (typed[0])
				type(typed);
		}
	}
	type("\r");
	fake_deliver_all_kicks(64);
	check_pauses();
	check_power_invariants();
	return 0;
}
