/*
 * Polled console output (arm64: the PL011, pl011.c; riscv64: the ns16550, riscv64/uart.c) and a
 * small printf. Lines end in a bare '\n'.
 */
#ifndef GUEST_CONSOLE_H
#define GUEST_CONSOLE_H

#include <stdarg.h>
#include <stdbool.h>

void console_putc(char c);
void console_puts(const char *s);

/* A JSON boolean literal, for the guests' machine-readable lines. */
static inline const char *json_bool(bool b)
{
	return b ? "true" : "false";
}

/* Supports %d %i %u %x %c %s %p %%, the l and ll modifiers, a '0' or '-' flag and a width. */
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
