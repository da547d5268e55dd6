/* SPDX-License-Identifier: MIT */
/*
 * The hypervisor console's commands, typed on the board UART:
 *
 *   help             what follows
 *   stats            every partition's counters (tern-stats) and the hypervisor's memory (tern-mem)
 *   restart NAME     reload NAME from its pristine copies and start it again
 *   stop NAME        end NAME, as its own SYSTEM_OFF would
 *
 * Input arrives as an interrupt on the console core, the one that also drains the console's
 * output (tern/console.h).  This file only parses:
 * a restart or stop is a request that the partition's own core carries out, so the work
 * (a reload copies the partition's whole RAM) never runs on another partition's core.
 */
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/platform.h>

#define LINE_MAX 80

static char line[LINE_MAX];
static size_t line_len;
static bool line_too_long;
/*
 * The console core is one no partition uses if there is one, else the first whose partition
 * traps its interrupts anyway; a direct partition's core is the last resort.  Its partition,
 * if any, pays for draining everyone's output (docs/design.md, "Console").
 */
void console_input_start(unsigned board_cpus)
{
	unsigned trapping = board_cpus;
	unsigned input_core = 0;
	unsigned pcpu = board_cpus;

	while (pcpu-- > 0) {
		struct vcpu *v = vcpu_of_cpu(pcpu);
		if (!v)
			input_core = pcpu;
		else if (!(v->partition->cfg->flags & TERN_PF_IRQ_DIRECT))
			trapping = pcpu;
	}
	if (vcpu_of_cpu(input_core) && trapping < board_cpus)
		input_core = trapping;
	console_start(input_core);
	uart_rx_enable();
	arch_hyp_irq_route(platform.uart_irq, input_core);
}

static struct partition *partition_named(const char *name)
{
	for (uint32_t i = 0; i < num_partitions; i++) {
		if (!strcmp(partitions[i].name, name))
			return &partitions[i];
	}
	return NULL;
}

static void command(char *text)
{
	char *verb = text;
	char *arg;

	while (*verb == ' ')
		verb++;
	if (!*verb)
		return;
	for (arg = verb; *arg && *arg != ' '; arg++)
		;
	if (*arg)
		*arg++ = '\0';
	while (*arg == ' ')
		arg++;
	tern_log("> %s%s%s", verb, *arg ? " " : "", arg);

	if (!strcmp(verb, "help")) {
		tern_log("commands: help, stats, restart NAME, stop NAME");
	} else if (!strcmp(verb, "stats")) {
		arch_iommu_poll(); /* dma_faults up to now */
		for (uint32_t i = 0; i < num_partitions; i++)
			partition_print_stats(&partitions[i]);
		print_memory_use();
	} else if (!strcmp(verb, "restart") || !strcmp(verb, "stop")) {
		struct partition *p = partition_named(arg);
		if (!p)
			tern_log("console: no partition named \"%s\"", arg);
		else
			partition_request(p, verb[2] == 's' ? PARTITION_REQ_RESTART : PARTITION_REQ_STOP);
	} else {
		tern_log("console: unknown command \"%s\" (try help)", verb);
	}
}

void console_rx(void)
{
	for (int c = uart_getc(); c >= 0; c = uart_getc()) {
		if (c == '\r' || c == '\n') {
			line[line_len] = '\0';
			if (line_too_long)
				tern_log("console: line longer than %u characters ignored", LINE_MAX - 1);
			else
				command(line);
			line_len = 0;
			line_too_long = false;
		} else if (c == 0x7f || c == '\b') {
			if (line_len)
				line_len--;
		} else if (line_len < LINE_MAX - 1) {
			line[line_len++] = (char)c;
		} else {
			line_too_long = true;
		}
	}
}
