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
void uart_rx_enable(void);
/* The next received character, or -1 when none waits. */
int uart_getc(void);

/* The console's input interrupt (board UART receive): read and act on what was typed. */
void console_rx(void);
/* Route the console's input interrupt to a core (core/command.c), once partitions are set up. */
void console_input_start(unsigned board_cpus);
unsigned console_input_core(void);

#endif
