/* SPDX-License-Identifier: MIT */
#ifndef TERN_CONSOLE_H
#define TERN_CONSOLE_H

#include <stdarg.h>
#include <tern/types.h>

/* One whole line to the board UART, never interleaved with another core's. */
void console_line(const char *prefix, const char *text, size_t len);
/* `tern: ` + formatted text + newline. */
void tern_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Formatted text + newline, no prefix (machine-readable lines). */
void console_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Board UART driver (drivers/). */
void uart_putc(char c);

#endif
