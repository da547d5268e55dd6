/* SPDX-License-Identifier: MIT */
/* The PL011 model (devices/pl011/): in the arm64 build, whose board's UART it is. */
#include <string.h>
#include <tern/console.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include <tern/vuart.h>
#include "check.h"
#include "fake.h"
#include "system.h"
#include "tests.h"

static struct console_ring ring;
static char ring_buf[CONSOLE_RING_SIZE];

static struct vuart *fresh_uart(void)
{
	static struct vuart u;
	static bool added;

	if (!added) {
		console_ring_add(&ring, ring_buf);
		added = true;
	}
	fake_uart_clear();
	memset(&u, 0, sizeof(u));
	vuart_init(&u, "rt", &ring);
	return &u;
}

static void put(struct vuart *u, const char *s)
{
	while (*s)
		vpl011_write(u, 0, (uint8_t)*s++);
}

void test_vpl011_lines_are_tagged(void)
{
	struct vuart *u = fresh_uart();

	put(u, "hello\r\nworld");
	CHECK(!strcmp(fake_uart_out, "[rt] hello\r\n"));
	vuart_flush(u);
	CHECK(!strcmp(fake_uart_out, "[rt] hello\r\n[rt] world\r\n"));
	vuart_flush(u);
	CHECK_EQ(fake_uart_len, strlen("[rt] hello\r\n[rt] world\r\n"));
}

void test_vpl011_long_line_is_split(void)
{
	struct vuart *u = fresh_uart();
	char line[VUART_LINE_MAX + 11];

	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	put(u, line);
	CHECK_EQ(fake_uart_len, 5 + VUART_LINE_MAX + 2);
	CHECK_EQ(u->line_len, 10);
}

void test_vpl011_registers(void)
{
	struct vuart *u = fresh_uart();

	CHECK_EQ(vpl011_read(u, 0x18) & (1u << 5), 0); /* never TXFF */
	CHECK(vpl011_read(u, 0x18) & (1u << 4));        /* RXFE */
	vpl011_write(u, 0x30, 0x301);
	CHECK_EQ(vpl011_read(u, 0x30), 0x301);
	CHECK_EQ(vpl011_read(u, 0xfe0), 0x11);
	CHECK_EQ(vpl011_read(u, 0xffc), 0xb1);
	CHECK_EQ(vpl011_read(u, 0x800), 0);
	vuart_reset(u);
	CHECK_EQ(vpl011_read(u, 0x30), 0);
	/* Every register the guest can set reads back; the others read as zero. */
	static const uint32_t regs[] = { 0x24, 0x28, 0x2c, 0x30, 0x34, 0x38, 0x48 };
	for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		vpl011_write(u, regs[i], 0x100 + i);
	for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		CHECK_EQ(vpl011_read(u, regs[i]), 0x100 + i);
	vpl011_write(u, 0x44, 0x7ff);              /* ICR: nothing to clear */
	vpl011_write(u, 0x18, 0);                  /* FR: read-only */
	CHECK_EQ(vpl011_read(u, 0x18), 0x90);
	CHECK_EQ(vpl011_read(u, 0x44), 0);
	CHECK_EQ(vpl011_read(u, 0x3c), 0);         /* RIS, MIS: no interrupt sources */
	CHECK_EQ(vpl011_read(u, 0x40), 0);
	CHECK_EQ(vpl011_read(u, 0x00), 0);         /* DR: no input */
	CHECK_EQ(vpl011_read(u, 0xfe1), 0);        /* inside an ID register */
	CHECK_EQ(vpl011_read(u, 0x1000), 0);
	vuart_reset(u);
	for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		CHECK_EQ(vpl011_read(u, regs[i]), 0);
}

/* A restart drops a half-written line; the partition's end puts it out. */
void test_vpl011_reset_and_flush(void)
{
	struct vuart *u = fresh_uart();

	put(u, "lost");
	vuart_reset(u);
	vuart_flush(u);
	CHECK_EQ(fake_uart_len, 0);
	put(u, "kept");
	vuart_flush(u);
	CHECK(!strcmp(fake_uart_out, "[rt] kept\r\n"));
}

/* The partition's PL011 through the MMIO region table (partition.c's uart_access). */
void test_vpl011_partition_uart_region(void)
{
	fake_config_begin(2);
	add_partition("rt", "0", 0);
	boot_board();
	struct vcpu *v = &partition_named("rt")->vcpu[0];
	uint64_t value = 0x5a;

	CHECK_EQ(mmio_emulate(v, platform.uart_base + 0x30, 8, true, &value), MMIO_ABORT);
	value = 0x5a;
	CHECK_EQ(mmio_emulate(v, platform.uart_base + 0x31, 1, true, &value), MMIO_DONE);
	CHECK_EQ(value, 0);
	CHECK_EQ(mmio_emulate(v, platform.uart_base + 0x18, 4, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x90);
	value = 0x301;
	CHECK_EQ(mmio_emulate(v, platform.uart_base + 0x30, 4, true, &value), MMIO_DONE);
	CHECK_EQ(mmio_emulate(v, platform.uart_base + 0x30, 2, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x301);
	for (const char *s = "hi\n"; *s; s++) {
		value = (uint8_t)*s;
		CHECK_EQ(mmio_emulate(v, platform.uart_base, 1, true, &value), MMIO_DONE);
	}
	CHECK(console_ends_with("[rt] hi"));
	CHECK_EQ(mmio_emulate(v, platform.uart_base + vpl011_model.size, 4, false, &value), MMIO_UNHANDLED);
	CHECK_EQ(mmio_emulate(v, 0x1000, 4, false, &value), MMIO_UNHANDLED);
}
