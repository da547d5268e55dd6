/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <tern/console.h>
#include <tern/vpl011.h>
#include "check.h"
#include "tests.h"

/* The board UART, captured. */
static char uart_out[4096];
static size_t uart_len;

void uart_putc(char c)
{
	if (uart_len + 1 < sizeof(uart_out))
		uart_out[uart_len++] = c;
	uart_out[uart_len] = 0;
}

/* Single-threaded tests never wait on a lock. */
void arch_cpu_relax(void)
{
}

static void put(struct vpl011 *u, const char *s)
{
	while (*s)
		vpl011_write(u, "rt", 0, (uint8_t)*s++);
}

void test_vpl011_lines_are_tagged(void)
{
	static struct vpl011 u;

	uart_len = 0;
	put(&u, "hello\r\nworld");
	CHECK(!strcmp(uart_out, "[rt] hello\r\n"));
	vpl011_flush(&u, "rt");
	CHECK(!strcmp(uart_out, "[rt] hello\r\n[rt] world\r\n"));
	vpl011_flush(&u, "rt");
	CHECK_EQ(uart_len, strlen("[rt] hello\r\n[rt] world\r\n"));
}

void test_vpl011_long_line_is_split(void)
{
	static struct vpl011 u;
	char line[VPL011_LINE_MAX + 11];

	uart_len = 0;
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	put(&u, line);
	CHECK_EQ(uart_len, 5 + VPL011_LINE_MAX + 2);
	CHECK_EQ(u.line_len, 10);
}

void test_vpl011_registers(void)
{
	static struct vpl011 u;

	CHECK_EQ(vpl011_read(&u, 0x18) & (1u << 5), 0); /* never TXFF */
	CHECK(vpl011_read(&u, 0x18) & (1u << 4));        /* RXFE */
	vpl011_write(&u, "rt", 0x30, 0x301);
	CHECK_EQ(vpl011_read(&u, 0x30), 0x301);
	CHECK_EQ(vpl011_read(&u, 0xfe0), 0x11);
	CHECK_EQ(vpl011_read(&u, 0xffc), 0xb1);
	CHECK_EQ(vpl011_read(&u, 0x800), 0);
}
