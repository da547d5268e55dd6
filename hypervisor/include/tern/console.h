/* SPDX-License-Identifier: MIT */
/*
 * The board console.  Everything printed goes, as whole lines, into a bounded ring: one per
 * partition (its guest's UART output and the hypervisor's lines about it) and one for the
 * hypervisor.  A producer never waits and never writes the UART: when its ring is full the
 * line is dropped and counted.  One core, the console core, drains the rings to the board
 * UART, a line from each ring in turn, so no partition can keep another's lines out.
 */
#ifndef TERN_CONSOLE_H
#define TERN_CONSOLE_H

#include <stdarg.h>
#include <tern/spinlock.h>
#include <tern/types.h>

#define CONSOLE_RING_SIZE 16384u   /* a power of two; a line is at most CONSOLE_LINE_MAX */
#define CONSOLE_LINE_MAX  1100u    /* prefix + text + newline */
/*
 * A partition's share of the board UART: bursts of up to CONSOLE_BURST bytes, on average no
 * more bytes per second of counter time than the UART carries (platform.uart_rate), so the
 * console core's drain keeps up with a flood instead of spending its core on it.  A line
 * beyond it is dropped and counted: a flood costs its own partition's lines only.
 */
#define CONSOLE_BURST     16384u

struct console_ring {
	struct spinlock lock;       /* producers: the cores of the ring's partition */
	_Atomic uint32_t head;      /* next byte the console core emits */
	_Atomic uint32_t tail;      /* end of the last whole line */
	_Atomic uint32_t kicked;    /* the console core was asked to drain, not yet done */
	uint64_t credit;            /* bytes x counter frequency it may still put (under lock) */
	uint64_t credited_at;       /* counter time of the last refill */
	uint64_t dropped;           /* bytes of lines dropped: ring full or over its rate */
	char *buf;                  /* CONSOLE_RING_SIZE bytes */
};

/* Add a ring (the hypervisor's, a partition's) to those the console core drains. */
void console_ring_add(struct console_ring *r, char *buf);
/*
 * One whole line of guest output, `prefix` + `text` + newline, into `r`; false if it did not
 * fit the ring or the partition's rate (then dropped and counted).  Never waits on another
 * partition.
 */
bool console_put(struct console_ring *r, const char *prefix, const char *text, size_t len);
/* Formatted text as one line into `r`, prefixed `tern: `. */
void console_log(struct console_ring *r, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * From now on the console core drains the rings (until then every line is written at once:
 * only the boot core runs).
 */
void console_start(unsigned core);

/* The console core (console_start; ~0 before), read on every kick: an inline load. */
extern _Atomic unsigned console_drain_core;
static inline unsigned console_core(void)
{
	return atomic_load_explicit(&console_drain_core, memory_order_relaxed);
}
/*
 * The console core's work: emit up to a fixed budget of whole lines, a line from each ring in
 * turn.  True if lines are left for another call.
 */
bool console_drain(void);
/*
 * From start to end, the hypervisor lines this core puts go into `buf` (at most `size` bytes,
 * whole lines, each ending in a newline; "truncated" last if some did not fit) instead of the
 * console: a manager's reply (core/manager.c).  The end returns the bytes in `buf`.
 */
void console_capture_start(char *buf, size_t size);
size_t console_capture_end(void);
/* Emit everything now, from any core (the board is about to go off). */
void console_flush(void);
/* A last line straight to the UART, taking no lock (a hypervisor panic). */
void console_panic_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* `tern: ` + formatted text + newline, into the hypervisor's ring. */
void tern_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Formatted text + newline, no prefix (machine-readable lines), into the hypervisor's ring. */
void console_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Board UART driver (drivers/). */
void uart_putc(char c);               /* waits for room in the FIFO */
/* As many of the `n` bytes as the FIFO takes now, without waiting; how many it took. */
size_t uart_write(const char *s, size_t n);
void uart_rx_enable(void);
/* The next received character, or -1 when none waits. */
int uart_getc(void);

/* The console's input interrupt (board UART receive): read and act on what was typed. */
void console_rx(void);
/* Choose the console core (core/command.c) and route the console's input interrupt there. */
void console_input_start(unsigned board_cpus);

#endif
