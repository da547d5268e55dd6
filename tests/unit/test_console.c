/* SPDX-License-Identifier: MIT */
/* core/console.c: rings, whole lines, drops, the drain's fairness, who writes the UART. */
#include <string.h>
#include <tern/console.h>
#include "check.h"
#include "fake.h"
#include "tests.h"

/* A line without a prefix (tern-stats, tern-boot) goes out as it is. */
void test_console_line_without_prefix(void)
{
	fake_uart_clear();
	console_printf("tern-stats {\"n\":%d}", 1);
	CHECK(!strcmp(fake_uart_out, "tern-stats {\"n\":1}\r\n"));
}
