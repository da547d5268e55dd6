/* SPDX-License-Identifier: MIT */
/* core/console.c: rings, a partition's share of the UART, fairness, a UART whose FIFO fills. */
#include <stdarg.h>
#include <string.h>
#include <tern/console.h>
#include <tern/platform.h>
#include "check.h"
#include "fake.h"
#include "tests.h"

#define FREQ fake_freq

static char buf_a[CONSOLE_RING_SIZE], buf_b[CONSOLE_RING_SIZE];

/* Two partitions' rings, registered once; each test starts them empty and with full credit. */
static struct console_ring *ring_a(void)
{
	static struct console_ring a;
	static bool added;

	if (!added) {
		console_ring_add(&a, buf_a);
		added = true;
	}
	return &a;
}

static struct console_ring *ring_b(void)
{
	static struct console_ring b;
	static bool added;

	if (!added) {
		console_ring_add(&b, buf_b);
		added = true;
	}
	return &b;
}

static void fresh(void)
{
	struct console_ring *rings[] = { ring_a(), ring_b() };

	fake_uart_full = false;
	fake_uart_room = (size_t)-1;
	while (console_drain())
		;
	fake_now += 10 * FREQ; /* long enough for any credit to refill */
	for (unsigned i = 0; i < 2; i++) {
		rings[i]->dropped = 0;
		rings[i]->credit = (uint64_t)CONSOLE_BURST * FREQ;
		rings[i]->credited_at = fake_now;
	}
	fake_uart_clear();
	atomic_store(&fake_kicks, 0);
	console_start(0);
	fake_cpu = 1;
}

static bool put(struct console_ring *r, const char *prefix, const char *text)
{
	return console_put(r, prefix, text, strlen(text));
}

void test_console_line_goes_out_at_once_when_the_uart_is_free(void)
{
	fresh();
	CHECK(put(ring_a(), "[a] ", "hello"));
	CHECK(!strcmp(fake_uart_out, "[a] hello\r\n"));
	CHECK_EQ(fake_kicks, 0);
}

void test_console_full_fifo_leaves_lines_to_the_console_core(void)
{
	fresh();
	fake_uart_full = true;
	CHECK(put(ring_a(), "[a] ", "first"));
	CHECK_EQ(fake_uart_len, 0);
	CHECK_EQ(fake_kicks, 1u << 0); /* the console core is told */
	atomic_store(&fake_kicks, 0);
	CHECK(put(ring_a(), "[a] ", "second"));
	CHECK_EQ(fake_kicks, 0);        /* once, until it has drained */
	fake_uart_full = false;
	fake_cpu = 0;
	CHECK(!console_drain());
	CHECK(!strcmp(fake_uart_out, "[a] first\r\n[a] second\r\n"));
}

void test_console_a_full_fifo_between_lines_is_not_an_empty_ring(void)
{
	fresh();
	fake_uart_full = true;
	CHECK(put(ring_a(), "[a] ", "waiting"));
	CHECK_EQ(fake_kicks, 1u << 0);
	/* The console core finds the FIFO still full: the line waits, it must say so. */
	fake_cpu = 0;
	CHECK(console_drain());
	CHECK_EQ(fake_uart_len, 0);
	fake_uart_full = false;
	CHECK(!console_drain());
	CHECK(!strcmp(fake_uart_out, "[a] waiting\r\n"));
}

void test_console_a_line_cut_by_the_fifo_is_finished_first(void)
{
	fresh();
	CHECK(put(ring_b(), "[b] ", "waiting"));
	fake_uart_clear();
	/* A starts its line, the FIFO fills mid-way: B's line must not land inside A's. */
	fake_uart_room = 7;
	CHECK(put(ring_a(), "[a] ", "0123456789"));
	CHECK_EQ(fake_uart_len, 7);
	CHECK(put(ring_b(), "[b] ", "other"));
	CHECK_EQ(fake_uart_len, 7);
	fake_uart_room = (size_t)-1;
	fake_uart_full = false;
	fake_cpu = 0;
	while (console_drain())
		;
	CHECK(strstr(fake_uart_out, "[a] 0123456789\r\n") != NULL);
	CHECK(strstr(fake_uart_out, "[b] other\r\n") != NULL);
	/* Every line whole: no line starts before the previous one ended. */
	for (const char *p = fake_uart_out; (p = strchr(p, '[')) != NULL; p++)
		CHECK(p == fake_uart_out || p[-1] == '\n');
}

void test_console_a_flood_cannot_keep_another_ring_out(void)
{
	fresh();
	fake_uart_full = true; /* everything waits for the console core */
	for (int i = 0; i < 50; i++)
		put(ring_a(), "[a] ", "x");
	CHECK(put(ring_b(), "[b] ", "rt line"));
	fake_uart_full = false;
	fake_cpu = 0;
	console_drain();
	/* A line from each ring in turn: B's comes before A's second, not after all fifty. */
	const char *b = strstr(fake_uart_out, "[b] rt line");
	const char *a2 = strstr(fake_uart_out, "[a] x\r\n[a] x");
	CHECK(b != NULL);
	CHECK(b != NULL && (a2 == NULL || b < a2 + strlen("[a] x\r\n")));
}

void test_console_a_waiting_ring_keeps_its_lines(void)
{
	fresh();
	fake_uart_full = true;
	CHECK(put(ring_b(), "[b] ", "queued"));
	fake_uart_full = false;
	/* A's own line goes out at once; B's waits for the console core, and is not lost. */
	CHECK(put(ring_a(), "[a] ", "now"));
	CHECK(!strcmp(fake_uart_out, "[a] now\r\n"));
	fake_cpu = 0;
	while (console_drain())
		;
	CHECK(!strcmp(fake_uart_out, "[a] now\r\n[b] queued\r\n"));
}

void test_console_guest_output_beyond_its_share_is_dropped_and_counted(void)
{
	char line[100];
	unsigned accepted = 0, lines = 0;

	fresh();
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	/* All at one instant: the burst goes through, the rest is dropped, bytes counted. */
	for (lines = 0; lines < 400; lines++)
		accepted += put(ring_a(), "[a] ", line);
	unsigned per_line = (unsigned)strlen("[a] ") + 99 + 2;
	CHECK_EQ(accepted, CONSOLE_BURST / per_line);
	CHECK_EQ(ring_a()->dropped, (uint64_t)(lines - accepted) * per_line);
	/* Credit comes back at the UART's rate, bytes a second of counter time. */
	fake_now += FREQ * per_line / platform.uart_rate + 1;
	CHECK(put(ring_a(), "[a] ", line));
	CHECK(!put(ring_a(), "[a] ", line));
	/* Another partition's share is its own. */
	CHECK(put(ring_b(), "[b] ", line));
}

void test_console_a_flood_gets_no_more_than_the_uart_carries(void)
{
	char line[100];
	const uint64_t uart = 115200 / 10; /* bytes a second at the board's 115200 baud */
	uint64_t put_bytes = 0;

	fresh();
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	size_t per_line = strlen("[a] ") + sizeof(line) - 1 + 2;
	while (put(ring_a(), "[a] ", line)) /* its burst */
		;
	/* Then a second of flooding, a try every millisecond. */
	for (unsigned ms = 0; ms < 1000; ms++) {
		fake_now += FREQ / 1000;
		while (put(ring_a(), "[a] ", line))
			put_bytes += per_line;
		while (console_drain()) /* keep the ring from filling: only the rate may refuse */
			;
	}
	CHECK(put_bytes <= uart);
	CHECK(put_bytes + per_line > uart);
}

static void hyp_line(struct console_ring *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	console_log(r, fmt, ap);
	va_end(ap);
}

void test_console_the_hypervisors_lines_get_through_a_flood(void)
{
	fresh();
	fake_uart_full = true; /* nothing drains: the ring fills with guest lines */
	while (put(ring_a(), "[a] ", "flood flood flood flood flood flood flood flood"))
		fake_now += FREQ; /* never short of credit: only the ring's space limits */
	uint64_t dropped = ring_a()->dropped;
	CHECK(dropped > 0);
	/* The guest may not fill the last line's worth: its end is still reported. */
	hyp_line(ring_a(), "partition %s off", "a");
	CHECK_EQ(ring_a()->dropped, dropped);
	fake_uart_full = false;
	fake_cpu = 0;
	while (console_drain())
		;
	CHECK(strstr(fake_uart_out, "tern: partition a off\r\n") != NULL);
}
