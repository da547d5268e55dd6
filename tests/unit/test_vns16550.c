/* SPDX-License-Identifier: MIT */
/* The ns16550A model (devices/ns16550/): in the riscv64 build, whose board's UART it is. */
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

/* Through its MMIO handler. */
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

/* A line longer than VUART_LINE_MAX goes out in pieces; a restart drops a half-written one. */
void test_vns16550_long_line_and_reset(void)
{
	struct vuart *u = fresh_uart();

	for (unsigned i = 0; i < VUART_LINE_MAX + 10; i++)
		ns_write(u, 0, 'x');
	CHECK_EQ(fake_uart_len, 5 + VUART_LINE_MAX + 2);
	CHECK_EQ(u->line_len, 10);
	ns_write(u, 7, 0x5a);
	vuart_reset(u);
	CHECK_EQ(ns_read(u, 7, 1), 0);
	vuart_flush(u);
	CHECK_EQ(fake_uart_len, 5 + VUART_LINE_MAX + 2);
	ns_write(u, 0, 'k');
	vuart_flush(u);
	CHECK(!strcmp(fake_uart_out + 5 + VUART_LINE_MAX + 2, "[rt] k\r\n"));
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

/* The partition's ns16550A through the MMIO region table (partition.c's uart_access). */
void test_vns16550_partition_uart_region(void)
{
	fake_config_begin(2);
	add_partition("rt", "0", 0);
	boot_board();
	struct vcpu *v = &partition_named("rt")->vcpu[0];
	uint64_t value = 0x5a;

	CHECK_EQ(mmio_emulate(v, platform.uart_base + 7, 1, true, &value), MMIO_DONE);
	value = 0;
	CHECK_EQ(mmio_emulate(v, platform.uart_base + 7, 1, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x5a);                           /* SCR */
	CHECK_EQ(mmio_emulate(v, platform.uart_base + 5, 1, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x60);                           /* LSR: THRE, TEMT */
	for (const char *s = "hi\n"; *s; s++) {
		value = (uint8_t)*s;
		CHECK_EQ(mmio_emulate(v, platform.uart_base, 1, true, &value), MMIO_DONE);
	}
	CHECK(console_ends_with("[rt] hi"));
	CHECK_EQ(mmio_emulate(v, platform.uart_base + vns16550_model.size - 1, 1, false, &value),
		 MMIO_DONE);
	CHECK_EQ(value, 0);                              /* the rest of the window */
	CHECK_EQ(mmio_emulate(v, platform.uart_base + vns16550_model.size, 1, false, &value),
		 MMIO_UNHANDLED);
	CHECK_EQ(mmio_emulate(v, 0x1000, 4, false, &value), MMIO_UNHANDLED);
}
