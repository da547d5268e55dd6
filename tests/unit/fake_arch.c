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

bool fake_uart_full;
size_t fake_uart_room = (size_t)-1;

size_t uart_write(const char *s, size_t n)
{
	size_t done = 0;

	while (done < n && !fake_uart_full && fake_uart_room) {
		if (fake_uart_len + 1 < sizeof(fake_uart_out))
			fake_uart_out[fake_uart_len++] = s[done];
		fake_uart_out[fake_uart_len] = 0;
		done++;
		if (fake_uart_room != (size_t)-1 && !--fake_uart_room)
			fake_uart_full = true;
	}
	return done;
}

void uart_putc(char c)
{
	uart_write(&c, 1);
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

uint64_t fake_counter;

uint64_t arch_counter(void)
{
	return fake_counter;
}

uint64_t arch_counter_freq(void)
{
	return 62500000; /* QEMU virt's */
}
