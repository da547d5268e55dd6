/* SPDX-License-Identifier: MIT */
/* core/console.c: rings, whole lines, drops, the drain's fairness, who writes the UART. */
#include <string.h>
#include <tern/console.h>
#include "check.h"
#include "fake.h"
#include "tests.h"

#define CONSOLE_CORE 7u

static struct console_ring ring_a, ring_b, ring_c;
static char buf_a[CONSOLE_RING_SIZE], buf_b[CONSOLE_RING_SIZE], buf_c[CONSOLE_RING_SIZE];

/* Rings a, b and c after the hypervisor's; the console core drains from now on. */
static void three_rings(void)
{
	console_ring_add(&ring_a, buf_a);
	console_ring_add(&ring_b, buf_b);
	console_ring_add(&ring_c, buf_c);
	console_start(CONSOLE_CORE);
	fake_uart_clear();
	atomic_store(&fake_kicks, 0);
}

static void put(struct console_ring *r, const char *prefix, const char *text)
{
	CHECK(console_put(r, prefix, text, strlen(text)));
}

/*
 * Run `fn` while the UART is busy: ring c's producer is writing its line "busy" (it holds the
 * UART), so whatever `fn` puts waits in its ring for the console core.
 */
static void (*while_busy)(void);

static void busy_hook(char c)
{
	(void)c;
	fake_uart_hook = NULL;
	while_busy();
}

static void uart_busy(void (*fn)(void))
{
	while_busy = fn;
	fake_uart_hook = busy_hook;
	put(&ring_c, NULL, "busy");
}

/* Where `line` (a whole line) is in the output; -1 if it is not there. */
static long position(const char *line)
{
	char want[256];
	const char *at;

	snprintf(want, sizeof(want), "\n%s\r\n", line);
	at = strstr(fake_uart_out, want);
	if (!at && !strncmp(fake_uart_out, want + 1, strlen(want + 1)))
		return 0;
	return at ? at - fake_uart_out + 1 : -1;
}

/* A line without a prefix (tern-stats, tern-boot) goes out as it is. */
void test_console_line_without_prefix(void)
{
	fake_uart_clear();
	console_printf("tern-stats {\"n\":%d}", 1);
	CHECK(!strcmp(fake_uart_out, "tern-stats {\"n\":1}\r\n"));
}

/* At boot (no console core yet) every line goes out at once; tern_log prefixes `tern: `. */
void test_console_boot_lines(void)
{
	console_ring_add(&ring_a, buf_a);
	fake_uart_clear();
	tern_log("hello %d", 42);
	put(&ring_a, "[a] ", "guest line");
	CHECK(!strcmp(fake_uart_out, "tern: hello 42\r\n[a] guest line\r\n"));
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	CHECK_EQ(console_core(), ~0u);
}

/* A producer that finds the UART free writes its own ring's lines itself, and nobody's else. */
static void fill_b(void)
{
	put(&ring_b, "[b] ", "waits for the console core");
}

void test_console_producer_writes_its_own_lines(void)
{
	three_rings();
	put(&ring_a, "[a] ", "one");
	CHECK(!strcmp(fake_uart_out, "[a] one\r\n"));
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	uart_busy(fill_b);
	CHECK(!strcmp(fake_uart_out, "[a] one\r\nbusy\r\n"));
	CHECK_EQ(atomic_load(&fake_kicks), 1u << CONSOLE_CORE);
	put(&ring_a, "[a] ", "two");
	CHECK(position("[a] two") > 0);
	CHECK_EQ(position("[b] waits for the console core"), -1); /* not a's to write */
	CHECK(!console_drain());
	CHECK(position("[b] waits for the console core") > position("[a] two"));
}

/* The console core is kicked once per ring until it has looked at the ring again. */
static void fill_a_twice_b_once(void)
{
	put(&ring_a, "[a] ", "1");
	put(&ring_a, "[a] ", "2");
	put(&ring_b, "[b] ", "1");
}

void test_console_kicks_once_until_drained(void)
{
	three_rings();
	uart_busy(fill_a_twice_b_once);
	CHECK_EQ(atomic_load(&fake_kick_count[CONSOLE_CORE]), 2);
	CHECK(!console_drain());
	uart_busy(fill_a_twice_b_once);
	CHECK_EQ(atomic_load(&fake_kick_count[CONSOLE_CORE]), 4);
}

/* A line that does not fit is dropped whole and counted; a shorter one may still fit. */
static char big[997];
static int dropped_lines;

static void fill_a_full(void)
{
	memset(big, 'x', sizeof(big) - 1);
	for (int i = 0; i < 18; i++) {
		big[0] = (char)('A' + i);
		if (!console_put(&ring_a, "[a] ", big, strlen(big)))
			dropped_lines++;
	}
	put(&ring_a, "[a] ", "short");
}

void test_console_full_ring_drops_whole_lines(void)
{
	three_rings();
	uart_busy(fill_a_full);
	/*
	 * Lines of 4 + 996 + 2 bytes: a guest's lines leave a line's worth (CONSOLE_LINE_MAX) of the
	 * 16 KiB ring to the hypervisor, so 15 fit and the next three do not.
	 */
	CHECK_EQ(dropped_lines, 3);
	CHECK_EQ(ring_a.dropped, 3 * (4 + 996 + 2));
	console_flush();
	CHECK(strchr(fake_uart_out, 'O') && !strchr(fake_uart_out, 'P') && !strchr(fake_uart_out, 'R'));
	CHECK(position("[a] short") > 0);
	/* Every line came out whole: 16 of ring a's, one of c's. */
	size_t lines = 0;
	for (const char *s = fake_uart_out; (s = strstr(s, "\r\n")); s += 2)
		lines++;
	CHECK_EQ(lines, 17);
	CHECK_EQ(fake_uart_len, strlen("busy\r\n") + 15 * (4 + 996 + 2) + strlen("[a] short\r\n"));
}

/* A flooding ring cannot keep another ring's lines out: the drain takes a line from each in turn. */
static void flood_a_trickle_b(void)
{
	char line[32];

	for (int i = 0; i < 20; i++) {
		snprintf(line, sizeof(line), "a%02d", i);
		put(&ring_a, NULL, line);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(line, sizeof(line), "b%d", i);
		put(&ring_b, NULL, line);
	}
	tern_log("hyp");
}

void test_console_drain_is_fair(void)
{
	three_rings();
	uart_busy(flood_a_trickle_b);
	while (console_drain())
		;
	CHECK(position("tern: hyp") >= 0);
	for (int i = 0; i < 3; i++) {
		char a[8], b[8], next[8];
		snprintf(a, sizeof(a), "a%02d", i);
		snprintf(b, sizeof(b), "b%d", i);
		snprintf(next, sizeof(next), "a%02d", i + 1);
		CHECK(position(a) < position(b));
		CHECK(position(b) < position(next));
	}
	for (int i = 0; i < 19; i++) {
		char a[8], next[8];
		snprintf(a, sizeof(a), "a%02d", i);
		snprintf(next, sizeof(next), "a%02d", i + 1);
		CHECK(position(a) >= 0 && position(a) < position(next));
	}
}

/* One drain emits about DRAIN_BUDGET (2048) bytes, whole lines, and says whether more wait. */
static void fill_a_4000(void)
{
	char line[100];

	memset(line, 'y', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	for (int i = 0; i < 40; i++)
		put(&ring_a, NULL, line);
}

void test_console_drain_budget(void)
{
	three_rings();
	uart_busy(fill_a_4000);
	size_t before = fake_uart_len;
	CHECK(console_drain());
	size_t first = fake_uart_len - before;
	CHECK_EQ(first, 21 * 101); /* whole lines (99 + "\r\n") until 2048 bytes of the ring are out */
	CHECK(!console_drain());   /* the other 19, and nothing is left */
	CHECK_EQ(fake_uart_len - before, 40 * 101);
}

/* The console core finding the UART busy (a producer writes its own lines) looks again later. */
static bool drained_while_busy;

static void drain_while_busy(void)
{
	put(&ring_a, NULL, "pending");
	drained_while_busy = console_drain();
}

void test_console_drain_while_uart_busy(void)
{
	three_rings();
	uart_busy(drain_while_busy);
	CHECK(drained_while_busy);     /* something waits: it will look again */
	CHECK_EQ(position("pending"), -1);
	CHECK(!console_drain());
	CHECK(position("pending") > 0);
}

/* A ring wraps around its end: lines across it come out intact. */
void test_console_ring_wraps(void)
{
	char line[300], want[300];

	three_rings();
	for (int i = 0; i < 200; i++) {
		memset(line, 'a' + i % 26, 250);
		snprintf(line + 250, 20, "%03d", i);
		fake_now += fake_freq / 64; /* within the partition's rate: 256 bytes every 16 ms */
		put(&ring_a, "[a] ", line);
		snprintf(want, sizeof(want), "[a] %s\r\n", line);
		CHECK(!strcmp(fake_uart_out + fake_uart_len - strlen(want), want));
	}
	CHECK(atomic_load(&ring_a.tail) > CONSOLE_RING_SIZE);
	CHECK_EQ(ring_a.dropped, 0);
}

/* A line longer than CONSOLE_LINE_MAX is cut there; a formatted one at LOG_LINE_MAX. */
void test_console_long_lines(void)
{
	static char text[4000];

	three_rings();
	memset(text, 'z', sizeof(text) - 1);
	put(&ring_a, "[a] ", text);
	CHECK_EQ(fake_uart_len, CONSOLE_LINE_MAX); /* "[a] " + text + "\r\n" */
	fake_uart_clear();
	tern_log("%s", text);
	CHECK_EQ(fake_uart_len, strlen("tern: ") + 1023 + 2);
	fake_uart_clear();
	console_printf("%s", text);
	CHECK_EQ(fake_uart_len, 1023 + 2);
}

void test_console_flush(void)
{
	three_rings();
	uart_busy(fill_a_4000);
	uart_busy(fill_b);
	console_flush();
	CHECK_EQ(fake_uart_len, strlen("busy\r\n") * 2 + 40 * 101 + strlen("[b] waits for the console core\r\n"));
	CHECK(!console_drain());
}

/* A panic's line goes straight to the UART: no ring, no lock. */
static void panic_while_busy(void)
{
	console_panic_line("PANIC cpu=%u", 3);
}

void test_console_panic_line(void)
{
	three_rings();
	uart_busy(panic_while_busy);
	CHECK(!strcmp(fake_uart_out, "tern: PANIC cpu=3\r\nbusy\r\n"));
}

/*
 * With the UART free, what waited in the rings goes out before the panic's line, so the report
 * ends the output; only at the first panic line (the lines after it follow at once).
 */
void test_console_panic_line_flushes_first(void)
{
	three_rings();
	uart_busy(fill_b);
	fake_uart_clear();
	console_panic_line("PANIC cpu=%u", 1);
	CHECK(!strcmp(fake_uart_out, "[b] waits for the console core\r\ntern: PANIC cpu=1\r\n"));
	uart_busy(fill_b);
	fake_uart_clear();
	console_panic_line("x0=%u", 0);
	CHECK(!strcmp(fake_uart_out, "tern: x0=0\r\n"));
	while (console_drain())
		;
	CHECK(!strcmp(fake_uart_out, "tern: x0=0\r\n[b] waits for the console core\r\n"));
}

/* Rings past the console's table are still written by their producers, never drained by it. */
void test_console_too_many_rings(void)
{
	static struct console_ring extra[16];
	static char bufs[16][CONSOLE_RING_SIZE];

	for (int i = 0; i < 16; i++)
		console_ring_add(&extra[i], bufs[i]);
	console_start(CONSOLE_CORE);
	fake_uart_clear();
	put(&extra[15], NULL, "still written");
	CHECK(!strcmp(fake_uart_out, "still written\r\n"));
}

