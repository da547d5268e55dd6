/* SPDX-License-Identifier: MIT */
/* The board's PL011, polled: the hypervisor prints little and never from the interrupt path. */
#include <tern/console.h>
#include <tern/platform.h>

#define UARTDR  0x000
#define UARTFR  0x018
#define FR_TXFF (1u << 5)

void uart_putc(char c)
{
	volatile uint32_t *base = (volatile uint32_t *)(uintptr_t)platform.uart_base;

	while (base[UARTFR / 4] & FR_TXFF)
		;
	base[UARTDR / 4] = (uint8_t)c;
}
