/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <tern/console.h>
#include <tern/vpl011.h>
#include "check.h"
#include "fake.h"
#include "tests.h"

static struct console_ring ring;
static char ring_buf[CONSOLE_RING_SIZE];

static struct vpl011 *fresh_uart(void)
{
	static struct vpl011 u;
	static bool added;

	if (!added) {
		console_ring_add(&ring, ring_buf);
		added = true;
	}
	fake_uart_clear();
	memset(&u, 0, sizeof(u));
	vpl011_init(&u, "rt", &ring);
	return &u;
}

static void put(struct vpl011 *u, const char *s)
{
	while (*s)
		vpl011_write(u, 0, (uint8_t)*s++);
}

void test_vpl011_lines_are_tagged(void)
{
	struct vpl011 *u = fresh_uart();

	put(u, "hello\r\nworld");
	CHECK(!strcmp(fake_uart_out, "[rt] hello\r\n"));
	vpl011_flush(u);
	CHECK(!strcmp(fake_uart_out, "[rt] hello\r\n[rt] world\r\n"));
	vpl011_flush(u);
	CHECK_EQ(fake_uart_len, strlen("[rt] hello\r\n[rt] world\r\n"));
}

void test_vpl011_long_line_is_split(void)
{
	struct vpl011 *u = fresh_uart();
	char line[VPL011_LINE_MAX + 11];

	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	put(u, line);
	CHECK_EQ(fake_uart_len, 5 + VPL011_LINE_MAX + 2);
	CHECK_EQ(u->line_len, 10);
}

void test_vpl011_registers(void)
{
	struct vpl011 *u = fresh_uart();

	CHECK_EQ(vpl011_read(u, 0x18) & (1u << 5), 0); /* never TXFF */
	CHECK(vpl011_read(u, 0x18) & (1u << 4));        /* RXFE */
	vpl011_write(u, 0x30, 0x301);
	CHECK_EQ(vpl011_read(u, 0x30), 0x301);
	CHECK_EQ(vpl011_read(u, 0xfe0), 0x11);
	CHECK_EQ(vpl011_read(u, 0xffc), 0xb1);
	CHECK_EQ(vpl011_read(u, 0x800), 0);
	vpl011_reset(u);
	CHECK_EQ(vpl011_read(u, 0x30), 0);
}
