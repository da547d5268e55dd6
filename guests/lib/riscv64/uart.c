/* console_putc on riscv64: an ns16550, polled, at the address the device tree gives. */
#include "console.h"
#include "fdt.h"
#include "riscv.h"
#include "runtime.h"

#define UART_THR        0       /* transmit holding register */
#define UART_LSR        5       /* line status */
#define UART_LSR_THRE   (1u << 5)

/* Byte registers one byte apart (no reg-shift), as on the board, until uart_init. */
static uintptr_t uart_base = UART_BASE_DEFAULT;

void uart_init(void)
{
	int node = fdt_find_compatible(FDT_NONE, "ns16550a");
	int parent = fdt_parent(node);
	uint32_t ac = fdt_node_u32(parent, "#address-cells", 2);
	uint32_t sc = fdt_node_u32(parent, "#size-cells", 1);
	uint32_t len;
	const void *reg = fdt_node_prop(node, "reg", &len);

	/* OpenSBI has set the line up already; only the address is needed. */
	if (reg && ac >= 1 && ac <= 2 && len >= 4 * (ac + sc) &&
	    fdt_node_u32(node, "reg-shift", 0) == 0)
		uart_base = (uintptr_t)fdt_read_cells(reg, ac);
}

uintptr_t uart_address(void)
{
	return uart_base;
}

void console_putc(char c)
{
	while (!(mmio_read8(uart_base + UART_LSR) & UART_LSR_THRE))
		;
	mmio_write8(uart_base + UART_THR, (uint8_t)c);
}
