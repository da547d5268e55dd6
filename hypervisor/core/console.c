/* SPDX-License-Identifier: MIT */
/*
 * Console rings and their drain (see tern/console.h).
 *
 * A ring has many producers (the cores of one partition, under the ring's lock, which no
 * other partition takes) and one consumer at a time: whoever holds `uart_lock`.  A producer
 * appends a whole line and publishes it by moving `tail`.  If the UART is free (nobody holds
 * or waits for `uart_lock`) it then writes its own ring's lines out itself, as the bare board
 * would have, and nobody else's; if not, it leaves them to the console core, which empties
 * every ring a line at a time in turn.  Either way a producer never waits.
 *
 * Ordering between a producer's new line and the console core's last look at a ring is kept
 * by `kicked`: the console core clears it before it reads `tail`, a producer sets it after it
 * writes `tail` and kicks the console core if it was clear.
 */
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/lib.h>

#define NO_CORE        (~0u)
#define MAX_RINGS      16u
/* Bytes one drain call emits before it lets its core do something else. */
#define DRAIN_BUDGET   2048u
#define LOG_LINE_MAX   1024u

/* Never read before written: not cleared at boot (boot time), like the partitions' buffers. */
static char hyp_ring_buf[CONSOLE_RING_SIZE] __attribute__((section(".noinit")));
static struct console_ring hyp_ring = { .lock = SPINLOCK_INIT, .buf = hyp_ring_buf };

static struct console_ring *rings[MAX_RINGS] = { &hyp_ring };
static _Atomic uint32_t num_rings = 1;
static uint32_t next_ring;          /* round robin position, the console core's */
static _Atomic unsigned drain_core = NO_CORE;
/* Held while lines go to the UART: by the console core, or by a flush. */
static struct spinlock uart_lock = SPINLOCK_INIT;

static void put_raw(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			uart_putc('\r');
		uart_putc(s[i]);
	}
}

void console_ring_add(struct console_ring *r, char *buf)
{
	uint32_t n = atomic_load(&num_rings);

	spin_lock_init(&r->lock);
	atomic_store(&r->head, 0);
	atomic_store(&r->tail, 0);
	atomic_store(&r->kicked, 0);
	r->dropped = 0;
	r->buf = buf;
	if (n < MAX_RINGS) {
		rings[n] = r;
		atomic_store(&num_rings, n + 1);
	}
}

/* n bytes into the ring at `at`, in at most two pieces (the ring wraps). */
static void ring_copy(struct console_ring *r, uint32_t at, const char *s, size_t n)
{
	uint32_t start = at & (CONSOLE_RING_SIZE - 1);
	size_t first = CONSOLE_RING_SIZE - start < n ? CONSOLE_RING_SIZE - start : n;

	memcpy(r->buf + start, s, first);
	memcpy(r->buf, s + first, n - first);
}

static uint32_t emit_line(struct console_ring *r);

/* After a new line in `r`: out now if the UART is free, else the console core's job. */
static void request_drain(struct console_ring *r)
{
	unsigned core = atomic_load(&drain_core);

	if (core == NO_CORE) {
		while (console_drain()) /* boot: no other core runs yet */
			;
	} else if (spin_trylock(&uart_lock)) {
		while (emit_line(r)) /* its own lines only, and only what it has put */
			;
		spin_unlock(&uart_lock);
	} else if (!atomic_exchange(&r->kicked, 1)) {
		arch_cpu_kick(core);
	}
}

bool console_put(struct console_ring *r, const char *prefix, const char *text, size_t len)
{
	size_t plen = prefix ? strnlen(prefix, 64) : 0;
	bool fits;

	if (plen + len + 1 > CONSOLE_LINE_MAX)
		len = CONSOLE_LINE_MAX - plen - 1;
	spin_lock(&r->lock);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t used = tail - atomic_load_explicit(&r->head, memory_order_acquire);
	fits = CONSOLE_RING_SIZE - used >= plen + len + 1;
	if (fits) {
		if (plen)
			ring_copy(r, tail, prefix, plen); /* no prefix: NULL, not even NULL + 0 */
		ring_copy(r, tail + (uint32_t)plen, text, len);
		ring_copy(r, tail + (uint32_t)(plen + len), "\n", 1);
		atomic_store_explicit(&r->tail, tail + (uint32_t)(plen + len + 1), memory_order_seq_cst);
	} else {
		r->dropped += plen + len + 1;
	}
	spin_unlock(&r->lock);
	if (fits)
		request_drain(r);
	return fits;
}

/* Emit the ring's oldest line; the number of bytes, 0 if it has none. */
static uint32_t emit_line(struct console_ring *r)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t n = 0;
	char c = 0;

	while (c != '\n' && head + n != tail) {
		c = r->buf[(head + n++) & (CONSOLE_RING_SIZE - 1)];
		if (c == '\n')
			uart_putc('\r');
		uart_putc(c);
	}
	atomic_store_explicit(&r->head, head + n, memory_order_release);
	return n;
}

static bool drain(uint32_t budget)
{
	uint32_t count = atomic_load(&num_rings);
	uint32_t emitted = 0, idle = 0;

	if (!count)
		return false;
	for (uint32_t i = 0; i < count; i++)
		atomic_store(&rings[i]->kicked, 0); /* before their tails are read below */
	/* A line from each ring in turn, until every ring is empty or the budget is spent. */
	while (idle < count && emitted < budget) {
		struct console_ring *r = rings[next_ring % count];
		uint32_t n = emit_line(r);
		next_ring = (next_ring + 1) % count;
		emitted += n;
		idle = n ? 0 : idle + 1;
	}
	return idle < count;
}

static bool any_pending(void)
{
	uint32_t count = atomic_load(&num_rings);

	for (uint32_t i = 0; i < count; i++) {
		if (atomic_load(&rings[i]->head) != atomic_load(&rings[i]->tail))
			return true;
	}
	return false;
}

bool console_drain(void)
{
	bool more;

	if (!spin_trylock(&uart_lock)) {
		/* A producer is writing its own lines, or a flush everything: look again soon. */
		arch_cpu_relax();
		return any_pending();
	}
	more = drain(DRAIN_BUDGET);
	spin_unlock(&uart_lock);
	return more;
}

void console_flush(void)
{
	spin_lock(&uart_lock);
	while (drain(~0u))
		;
	spin_unlock(&uart_lock);
}

void console_start(unsigned core)
{
	atomic_store(&drain_core, core);
}

unsigned console_core(void)
{
	return atomic_load(&drain_core);
}

void console_log(struct console_ring *r, const char *fmt, va_list ap)
{
	char buf[LOG_LINE_MAX];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n >= 0)
		console_put(r, "tern: ", buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void tern_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	console_log(&hyp_ring, fmt, ap);
	va_end(ap);
}

void console_printf(const char *fmt, ...)
{
	char buf[LOG_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= 0)
		console_put(&hyp_ring, NULL, buf,
			    (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void console_panic_line(const char *fmt, ...)
{
	char buf[LOG_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	put_raw("tern: ", 6);
	put_raw(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	put_raw("\n", 1);
}
