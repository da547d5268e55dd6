/* SPDX-License-Identifier: MIT */
/*
 * The board's PL011.  Output is polled: the hypervisor prints little and never from the
 * interrupt path.  Input raises the UART's interrupt, which the hypervisor takes as FIQ
 * (Group 0) on one core and drains here.
 */
#include <tern/console.h>
#include <tern/platform.h>

#define UARTDR   0x000
#define UARTFR   0x018
#define UARTIMSC 0x038
#define UARTICR  0x044
#define FR_RXFE  (1u << 4)
#define FR_TXFF  (1u << 5)
#define INT_RX   (1u << 4)  /* receive FIFO reached its level */
#define INT_RT   (1u << 6)  /* receive timeout: characters wait below the level */
#define DR_ERROR 0xf00u     /* framing, parity, break, overrun */

static volatile uint32_t *uart(void)
{
	return (volatile uint32_t *)(uintptr_t)platform.uart_base;
}

size_t uart_write(const char *s, size_t n)
{
	volatile uint32_t *regs = uart();
	size_t done = 0;

	while (done < n && !(regs[UARTFR / 4] & FR_TXFF))
		regs[UARTDR / 4] = (uint8_t)s[done++];
	return done;
}

void uart_putc(char c)
{
	while (!uart_write(&c, 1))
		;
}

void uart_rx_enable(void)
{
	uart()[UARTICR / 4] = INT_RX | INT_RT;
	uart()[UARTIMSC / 4] = INT_RX | INT_RT;
}

int uart_getc(void)
{
	while (!(uart()[UARTFR / 4] & FR_RXFE)) {
		uint32_t dr = uart()[UARTDR / 4];
		if (!(dr & DR_ERROR))
			return (int)(dr & 0xff);
	}
	return -1;
}
