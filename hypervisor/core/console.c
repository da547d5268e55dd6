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
#include <tern/manager.h>
#include <tern/platform.h>

#define NO_CORE        (~0u)
#define MAX_RINGS      16u
/* Bytes one drain call emits before it lets its core do something else. */
#define DRAIN_BUDGET   2048u
#define LOG_LINE_MAX   1024u

/* Never read before written: not cleared at boot (boot time), like the partitions' buffers. */
static char hyp_ring_buf[CONSOLE_RING_SIZE] __attribute__((section(".noinit")));
static struct console_ring hyp_ring = { .lock = SPINLOCK_INIT,
					 .buf = hyp_ring_buf };

static struct console_ring *rings[MAX_RINGS] = { [0] = &hyp_ring };
static _Atomic uint32_t num_rings = 1;
static uint32_t next_ring;          /* round robin position, the console core's */
static struct console_ring *partial; /* a line partly on the wire; under uart_lock */
_Atomic unsigned console_drain_core = NO_CORE;
/* Held while lines go to the UART: by the console core, or by a flush. */
static struct spinlock uart_lock = SPINLOCK_INIT;

/*
 * A manager's command being carried out (core/manager.c): the hypervisor lines its core puts
 * meanwhile are its reply, not the console's.  Only that core writes the buffer; every other
 * core's lines go to the rings as ever (they compare the core with their own).
 */
static _Atomic unsigned capture_core = NO_CORE;
static char *capture_buf;
static size_t capture_size;
static size_t capture_len;
static bool capture_cut;
static const char truncated[] = "truncated\n";

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
	r->credit = (uint64_t)CONSOLE_BURST * arch_counter_freq();
	r->credited_at = arch_counter();
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

	(void)memcpy(&r->buf[start], s, first);
	(void)memcpy(r->buf, &s[first], n - first);
}

static uint32_t emit_line(struct console_ring *r);
static bool drain_rings(void);

/*
 * After a new line in `r`: out now, by the producer itself, if the UART is free (its own lines
 * only); else the console core's job.  Lines another ring has waiting keep their place at the
 * console core, which serves every ring in turn: a producer never waits, and none can keep
 * another's lines out.
 */
static void request_drain(struct console_ring *r)
{
	unsigned core = atomic_load(&console_drain_core);

	if (core == NO_CORE) {
		while (drain_rings()) /* boot: no other core runs yet */
			;
		return;
	}
	if (spin_trylock(&uart_lock)) {
		bool mine = !partial || partial == r;
		/* Its own lines only, only what it has put, only what the FIFO takes at once. */
		while (mine && emit_line(r) && !partial)
			;
		bool rest = atomic_load(&r->head) != atomic_load(&r->tail);
		spin_unlock(&uart_lock);
		if (!rest)
			return;
	}
	if (!atomic_exchange(&r->kicked, 1))
		arch_cpu_kick(core);
}

/* May `r` put `bytes` more now (its burst and rate, tern/console.h)?  Under r->lock. */
static bool within_rate(struct console_ring *r, size_t bytes)
{
	uint64_t freq = arch_counter_freq();
	uint64_t cap = (uint64_t)CONSOLE_BURST * freq;
	uint64_t now = arch_counter();
	uint64_t elapsed = now - r->credited_at;
	uint64_t cost = bytes * freq;
	uint64_t rate = platform.uart_rate;

	/* Refill; an interval longer than a full refill takes is as good as one. */
	if (elapsed >= cap / rate)
		r->credit = cap;
	else
		r->credit = r->credit + elapsed * rate < cap ? r->credit + elapsed * rate : cap;
	r->credited_at = now;
	if (r->credit < cost)
		return false;
	r->credit -= cost;
	return true;
}

/* A captured line, whole or not at all: room is kept for saying the reply was cut. */
static bool capture_line(const char *prefix, size_t plen, const char *text, size_t len)
{
	size_t room = capture_size - (sizeof(truncated) - 1u);

	if (capture_cut || capture_len + plen + len + 1u > room) {
		capture_cut = true;
		return false;
	}
	(void)memcpy(&capture_buf[capture_len], prefix ? prefix : "", plen);
	(void)memcpy(&capture_buf[capture_len + plen], text, len);
	capture_len += plen + len;
	capture_buf[capture_len++] = '\n';
	return true;
}

void console_capture_start(char *buf, size_t size)
{
	capture_buf = buf;
	capture_size = size;
	capture_len = 0;
	capture_cut = false;
	atomic_store(&capture_core, arch_cpu_id());
}

size_t console_capture_end(void)
{
	atomic_store(&capture_core, NO_CORE);
	if (capture_cut) {
		(void)memcpy(&capture_buf[capture_len], truncated, sizeof(truncated) - 1u);
		capture_len += sizeof(truncated) - 1u;
	}
	return capture_len;
}

/*
 * One whole line into `r`, or dropped and counted.  A guest's line (`guest`) must also be
 * within its partition's rate, and leaves room for one more line: the hypervisor's lines about
 * a partition (its end, its faults) get through whatever its guest printed.
 */
static bool put_line(struct console_ring *r, const char *prefix, const char *text, size_t len,
		     bool guest)
{
	size_t plen = prefix ? strnlen(prefix, 64) : 0;
	size_t reserve = guest ? (size_t)CONSOLE_LINE_MAX : 0;
	bool fits;

	if (plen + len + 2 > CONSOLE_LINE_MAX)
		len = CONSOLE_LINE_MAX - plen - 2;
	if (r == &hyp_ring && atomic_load_explicit(&capture_core, memory_order_relaxed) != NO_CORE &&
	    atomic_load_explicit(&capture_core, memory_order_relaxed) == arch_cpu_id())
		return capture_line(prefix, plen, text, len);
	spin_lock(&r->lock);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t used = tail - atomic_load_explicit(&r->head, memory_order_acquire);
	/* The line as it goes on the wire, "\r\n" included: it can go out byte by byte. */
	size_t bytes = plen + len + 2;
	fits = CONSOLE_RING_SIZE - used >= bytes + reserve && (!guest || within_rate(r, bytes));
	if (fits) {
		if (plen)
			ring_copy(r, tail, prefix, plen); /* no prefix: NULL, not even NULL + 0 */
		ring_copy(r, tail + (uint32_t)plen, text, len);
		ring_copy(r, tail + (uint32_t)(plen + len), "\r\n", 2);
		atomic_store_explicit(&r->tail, tail + (uint32_t)bytes, memory_order_seq_cst);
	} else {
		r->dropped += bytes;
	}
	spin_unlock(&r->lock);
	if (fits)
		request_drain(r);
	return fits;
}

bool console_put(struct console_ring *r, const char *prefix, const char *text, size_t len)
{
	return put_line(r, prefix, text, len, true);
}

/*
 * Emit `r`'s oldest line, or what is left of it, as long as the UART takes bytes without
 * waiting.  Returns the bytes emitted; a line the UART's FIFO cut off is `partial`, and goes on
 * before any other ring's line, so lines never mix on the wire.  Under uart_lock.
 */
static uint32_t emit_line(struct console_ring *r)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t end = head;

	while (end != tail) {
		char c = r->buf[end & (CONSOLE_RING_SIZE - 1)];
		end++;
		if (c == '\n')
			break;
	}
	/* [head, end): the rest of the line, in at most two pieces where the ring wraps. */
	uint32_t at = head & (CONSOLE_RING_SIZE - 1);
	size_t first = (size_t)(end - head < CONSOLE_RING_SIZE - at ? end - head : CONSOLE_RING_SIZE - at);
	size_t n = uart_write(&r->buf[at], first);
	if (n == first && n < end - head)
		n += uart_write(r->buf, end - head - first);
	atomic_store_explicit(&r->head, head + (uint32_t)n, memory_order_release);
	if (head + n == end && partial == r)
		partial = NULL;         /* finished */
	else if (n && head + n != end)
		partial = r;            /* cut off by a full FIFO */
	return (uint32_t)n;
}

/* The rest of a line the FIFO cut off; false while the FIFO stays full. */
static bool finish_partial(void)
{
	if (partial)
		(void)emit_line(partial);
	return !partial;
}

/* A line from each ring in turn, up to `budget` bytes; true if lines remain. */
static bool drain(uint32_t budget)
{
	uint32_t count = atomic_load(&num_rings);
	uint32_t emitted = 0;
	uint32_t idle = 0;

	if (!count)
		return false;
	for (uint32_t i = 0; i < count; i++)
		atomic_store(&rings[i]->kicked, 0); /* before their tails are read below */
	if (!finish_partial())
		return true;
	while (idle < count && emitted < budget) {
		struct console_ring *r = rings[next_ring % count];
		uint32_t n = emit_line(r);
		/*
		 * The FIFO is full, mid-line or before a line's first byte (nothing emitted
		 * from a ring that has one): the rest when it has room, never "no more".
		 */
		if (partial || (!n && atomic_load(&r->head) != atomic_load(&r->tail)))
			return true;
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

/* console_drain's lines, and all of the boot's (which has no manager's commands to serve). */
static bool drain_rings(void)
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

bool console_drain(void)
{
	manager_serve(); /* its lines are drained with the rest */
	return drain_rings();
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
	atomic_store(&console_drain_core, core);
}


void console_log(struct console_ring *r, const char *fmt, va_list ap)
{
	char buf[LOG_LINE_MAX];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n >= 0)
		(void)put_line(r, "tern: ", buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1,
			       false);
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
		(void)put_line(&hyp_ring, NULL, buf,
			       (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, false);
}

void console_panic_line(const char *fmt, ...)
{
	static _Atomic bool flushed;
	char buf[LOG_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* What was said before the panic first, if nobody holds the UART. */
	if (!atomic_exchange(&flushed, true) && spin_trylock(&uart_lock)) {
		while (drain(~0u))
			;
		spin_unlock(&uart_lock);
	}
	put_raw("tern: ", 6);
	put_raw(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	put_raw("\n", 1);
}
