/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <tern/console.h>
#include <tern/vuart.h>
#include "check.h"
#include "fake.h"
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

/* ---- the ns16550A model (riscv64 `virt`), through its MMIO handler ---- */

static uint64_t ns_read(struct vuart *u, uint64_t offset, unsigned size)
{
	uint64_t value = 0xdead;

	CHECK_EQ(vns16550_model.access(u, offset, size, false, &value), MMIO_DONE);
	return value;
}

static void ns_write(struct vuart *u, uint64_t offset, uint64_t value)
{
	CHECK_EQ(vns16550_model.access(u, offset, 1, true, &value), MMIO_DONE);
}

void test_vns16550_transmits_lines(void)
{
	struct vuart *u = fresh_uart();

	CHECK_EQ(vns16550_model.size, 0x100);
	for (const char *s = "hi\r\n"; *s; s++) {
		CHECK_EQ(ns_read(u, 5, 1) & 0x60, 0x60); /* LSR: THRE, TEMT: never busy */
		ns_write(u, 0, (uint8_t)*s);
	}
	CHECK(!strcmp(fake_uart_out, "[rt] hi\r\n"));
	ns_write(u, 3, 0x80);                            /* LCR.DLAB: data is the divisor */
	ns_write(u, 0, 'x');
	CHECK_EQ(ns_read(u, 0, 1), 'x');
	ns_write(u, 3, 0x03);
	vuart_flush(u);
	CHECK_EQ(fake_uart_len, strlen("[rt] hi\r\n"));  /* the divisor was not transmitted */
}

void test_vns16550_registers(void)
{
	struct vuart *u = fresh_uart();

	CHECK_EQ(ns_read(u, 2, 1), 0x01);                /* IIR: nothing pending */
	ns_write(u, 2, 0x07);                            /* FCR: FIFOs on, both reset */
	CHECK_EQ(ns_read(u, 2, 1), 0xc1);
	ns_write(u, 1, 0xff);
	CHECK_EQ(ns_read(u, 1, 1), 0x0f);                /* IER: four sources */
	ns_write(u, 3, 0x83);
	ns_write(u, 1, 0x12);                            /* DLM */
	CHECK_EQ(ns_read(u, 1, 1), 0x12);
	ns_write(u, 3, 0x03);
	CHECK_EQ(ns_read(u, 1, 1), 0x0f);
	CHECK_EQ(ns_read(u, 3, 4), 0x03);                /* any width: the register at the offset */
	ns_write(u, 7, 0x5a);
	CHECK_EQ(ns_read(u, 7, 8), 0x5a);                /* SCR */
	CHECK_EQ(ns_read(u, 6, 1), 0xb0);                /* MSR: DCD, DSR, CTS */
	ns_write(u, 4, 0x1a);                            /* MCR: loopback, RTS, OUT2 */
	CHECK_EQ(ns_read(u, 6, 1), 0x90);                /* ... fed back as CTS, DCD */
	ns_write(u, 4, 0x15);                            /* loopback, DTR, OUT1 */
	CHECK_EQ(ns_read(u, 6, 1), 0x60);                /* ... DSR, RI */
	ns_write(u, 5, 0);                               /* LSR, MSR: read-only */
	CHECK_EQ(ns_read(u, 5, 1), 0x60);
	CHECK_EQ(ns_read(u, 0, 1), 0);                   /* RBR: no input */
	CHECK_EQ(ns_read(u, 0x80, 1), 0);                /* the rest of the window */
	ns_write(u, 0x80, 0xff);
	vuart_reset(u);
	CHECK_EQ(ns_read(u, 7, 1), 0);
	CHECK_EQ(ns_read(u, 4, 1), 0);
	CHECK_EQ(ns_read(u, 2, 1), 0x01);
}

/* Linux's 8250 on a port with no interrupt line polls IIR: THR empty must show when enabled. */
void test_vns16550_iir_names_thr_empty(void)
{
	struct vuart *u = fresh_uart();

	ns_write(u, 1, 0x02);                            /* IER: THR empty */
	CHECK_EQ(ns_read(u, 2, 1), 0x02);                /* IIR: THR empty pending */
	CHECK_EQ(ns_read(u, 2, 1), 0x02);                /* ... still: THR is never busy */
	ns_write(u, 2, 0x01);                            /* FCR: FIFOs on */
	CHECK_EQ(ns_read(u, 2, 1), 0xc2);
	ns_write(u, 1, 0x0d);                            /* every other source: none pending */
	CHECK_EQ(ns_read(u, 2, 1), 0xc1);
	ns_write(u, 3, 0x80);                            /* with LCR.DLAB, offset 1 is DLM */
	ns_write(u, 1, 0x02);
	CHECK_EQ(ns_read(u, 2, 1), 0xc1);
}
