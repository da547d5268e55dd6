/* SPDX-License-Identifier: MIT */
/*
 * The partitions' PL011: guest accesses through mmio_emulate (which partition, offset, size,
 * read or write, value), interleaved with operator restarts of a partition.
 *
 * Oracle: a model of the PL011 the guest sees (what a register reads back, what is refused)
 * and of the board console: every character a guest writes comes out, in order, as
 * `[name] text` lines of at most VUART_LINE_MAX characters, a half-written line when its
 * partition ends, and nothing else but the hypervisor's own `tern: ` lines — except whole lines
 * beyond the partition's share of the console, which are dropped and counted to the byte.
 */
#include <string.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include <tern/vuart.h>
#include "harness.h"

#define STARTED (BIT(0) | BIT(3))

struct model {
	char line[VUART_LINE_MAX];
	uint32_t len;
	uint64_t dropped;               /* the partition's console_dropped as last seen */
	uint32_t regs[0x50 / 4];        /* IBRD .. DMACR as written */
};

static struct model models[2];
static char expect[sizeof(fake_uart_out)];
static size_t expect_len;

static void expect_text(const char *s, size_t n)
{
	FUZZ_ASSERT(expect_len + n < sizeof(expect));
	memcpy(expect + expect_len, s, n);
	expect_len += n;
}

static void model_emit(uint32_t pi)
{
	struct model *m = &models[pi];
	uint64_t dropped = partitions[pi].console.dropped;

	if (dropped != m->dropped) {
		/* Over its share: the whole line, prefix and "\r\n" included, and nothing else. */
		FUZZ_ASSERT(dropped - m->dropped == strlen(partitions[pi].name) + 3 + m->len + 2);
		m->dropped = dropped;
		m->len = 0;
		return;
	}
	expect_text("[", 1);
	expect_text(partitions[pi].name, strlen(partitions[pi].name));
	expect_text("] ", 2);
	expect_text(m->line, m->len);
	expect_text("\r\n", 2);
	m->len = 0;
}

static bool stored(uint32_t off)
{
	return off == 0x24 || off == 0x28 || off == 0x2c || off == 0x30 || off == 0x34 ||
	       off == 0x38 || off == 0x48;
}

static void model_write(uint32_t pi, uint32_t off, uint32_t value)
{
	struct model *m = &models[pi];

	if (off == 0) {
		char c = (char)(value & 0xff);
		if (c == '\r')
			return;
		if (c != '\n')
			m->line[m->len++] = c;
		if (c == '\n' || m->len == VUART_LINE_MAX)
			model_emit(pi);
	} else if (stored(off)) {
		m->regs[off / 4] = value;
	}
}

static uint32_t model_read(uint32_t pi, uint32_t off)
{
	static const uint8_t id[8] = { 0x11, 0x10, 0x34, 0x00, 0x0d, 0xf0, 0x05, 0xb1 };

	if (off == 0x18)
		return 0x90;
	if (stored(off))
		return models[pi].regs[off / 4];
	if (off >= 0xfe0 && off < 0x1000)
		return id[(off - 0xfe0) / 4];
	return 0;
}

ORACLE static void check_output(void)
{
	FUZZ_ASSERT(fake_uart_len == expect_len);
	FUZZ_ASSERT(same_bytes(fake_uart_out, expect, expect_len));
}

/* An operator's `restart NAME`: the half-written line comes out, the UART is as at power-on. */
static void restart(uint32_t pi)
{
	struct partition *p = &partitions[pi];
	static const char tail[] = " reset\r\n";

	partition_request(p, PARTITION_REQ_RESTART);
	fake_deliver_all_kicks(64);
	FUZZ_ASSERT(atomic_load(&p->state) == PARTITION_RUNNING);
	if (models[pi].len) /* after the real flush, which may have found it over its share */
		model_emit(pi);
	memset(models[pi].regs, 0, sizeof(models[pi].regs));
	expect_text("tern: partition ", 16);
	expect_text(p->name, strlen(p->name));
	expect_text(tail, sizeof(tail) - 1);
	std_repair(STARTED);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };
	unsigned restarted = 0;

	std_boot(STARTED);
	for (uint32_t pi = 0; pi < 2; pi++) {
		vuart_reset(&partitions[pi].uart);
		memset(&models[pi], 0, sizeof(models[pi]));
		models[pi].dropped = partitions[pi].console.dropped;
	}
	fake_uart_clear();
	expect_len = 0;
	while (input_left(&in)) {
		uint8_t how = (uint8_t)take(&in, 1);
		uint32_t pi = how & 1;
		struct vcpu *v = std_vcpu(pi, 0);

		if ((how >> 1) == 0x7f) {
			/* At most one per input: a restart costs a hundred accesses. */
			if (!restarted++)
				restart(pi);
			check_output();
			continue;
		}
		unsigned sz = 1u << ((how >> 1) & 3);
		bool write = how & 0x10;
		uint64_t off = (how & 0x20) ? take(&in, 2) % 0x1800 : (take(&in, 1) & 0x7c);
		uint64_t value = (how & 0x40) ? take(&in, 4) : take(&in, 1);
		uint64_t orig = value;
		enum mmio_result r = MMIO_UNHANDLED;

		if (write && off == 0 && (how & 0x80)) {
			/* A run of characters, as a guest prints */
			uint32_t n = (uint32_t)take(&in, 1);
			for (uint32_t i = 0; i < n && input_left(&in); i++) {
				uint64_t c = take(&in, 1);
				FUZZ_ASSERT(FAKE_ON(v->pcpu, r = mmio_emulate(v, platform.uart_base, 1, true, &c)) ==
					    FAKE_RETURNED && r == MMIO_DONE);
				model_write(pi, 0, (uint32_t)c);
			}
			check_output();
			continue;
		}
		FUZZ_ASSERT(FAKE_ON(v->pcpu, r = mmio_emulate(v, platform.uart_base + off, sz, write, &value)) ==
			    FAKE_RETURNED);
		if (off >= vpl011_model.size) {
			FUZZ_ASSERT(r == MMIO_UNHANDLED);
		} else if (off & (sz - 1)) {
			FUZZ_ASSERT(r == MMIO_MISALIGNED && value == orig);
		} else if (sz > 4) {
			FUZZ_ASSERT(r == MMIO_ABORT && value == orig);
		} else {
			FUZZ_ASSERT(r == MMIO_DONE);
			if (off & 3)
				FUZZ_ASSERT(value == 0); /* inside a register: nothing there */
			else if (write)
				model_write(pi, (uint32_t)off, (uint32_t)orig);
			else
				FUZZ_ASSERT(value == model_read(pi, (uint32_t)off));
		}
		FUZZ_ASSERT(partitions[pi].uart.line_len == models[pi].len);
		check_output();
	}
	return 0;
}
