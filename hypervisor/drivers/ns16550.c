/* SPDX-License-Identifier: MIT */
/*
 * The board's 16550-compatible UART (byte-wide registers).  Output is polled, as with the
 * PL011: the hypervisor prints little and never from the interrupt path.
 */
#include <tern/console.h>
#include <tern/platform.h>

#define RBR 0           /* receive buffer (read) */
#define THR 0           /* transmit holding (write) */
#define IER 1
#define LSR 5
#define IER_RX    (1u << 0)
#define LSR_DR    (1u << 0)   /* a received character waits */
#define LSR_ERROR 0x1eu       /* overrun, parity, framing, break */
#define LSR_THRE  (1u << 5)   /* room to transmit */

static volatile uint8_t *uart(void)
{
	return (volatile uint8_t *)(uintptr_t)platform.uart_base;
}

size_t uart_write(const char *s, size_t n)
{
	volatile uint8_t *regs = uart();
	size_t done = 0;

	/* QEMU's model has no FIFO depth to speak of: one character each time THR is empty. */
	while (done < n && (regs[LSR] & LSR_THRE))
		regs[THR] = (uint8_t)s[done++];
	return done;
}

void uart_putc(char c)
{
	while (!uart_write(&c, 1))
		;
}

void uart_rx_enable(void)
{
	uart()[IER] = IER_RX;
}

int uart_getc(void)
{
	const volatile uint8_t *regs = uart();

	for (uint8_t lsr = regs[LSR]; lsr & LSR_DR; lsr = regs[LSR]) {
		uint8_t c = regs[RBR];
		if (!(lsr & LSR_ERROR))
			return c;
	}
	return -1;
}
