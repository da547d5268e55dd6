/* SPDX-License-Identifier: MIT */
/* Fakes of what the core asks of an architecture and a board, for host tests. */
#include <string.h>
#include <tern/arch.h>
#include <tern/console.h>
#include "fake.h"

char fake_uart_out[65536];
size_t fake_uart_len;
unsigned fake_cpu;
uint32_t fake_kicks;

void fake_uart_clear(void)
{
	fake_uart_len = 0;
	fake_uart_out[0] = 0;
}

void uart_putc(char c)
{
	if (fake_uart_len + 1 < sizeof(fake_uart_out))
		fake_uart_out[fake_uart_len++] = c;
	fake_uart_out[fake_uart_len] = 0;
}

/* Single-threaded tests never wait on a lock. */
void arch_cpu_relax(void)
{
}

unsigned arch_cpu_id(void)
{
	return fake_cpu;
}

void arch_cpu_kick(unsigned pcpu)
{
	fake_kicks |= 1u << pcpu;
}
