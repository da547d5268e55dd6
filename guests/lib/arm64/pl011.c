/* console_putc on arm64: the board's PL011, polled. */
#include "console.h"

#include "arm64.h"

#define UARTDR          0x00
#define UARTFR          0x18
#define UARTFR_TXFF     (1u << 5)

void console_putc(char c)
{
	while (mmio_read32(PL011_BASE + UARTFR) & UARTFR_TXFF)
		;
	mmio_write32(PL011_BASE + UARTDR, (uint8_t)c);
}
