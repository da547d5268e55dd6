/* SPDX-License-Identifier: MIT */
/* The fake architecture and board the host tests run the hypervisor's code on (fake_arch.c). */
#ifndef TERN_TEST_FAKE_H
#define TERN_TEST_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the hypervisor wrote to the board UART. */
extern char fake_uart_out[65536];
extern size_t fake_uart_len;
void fake_uart_clear(void);
/* The UART's FIFO is full: it takes nothing until cleared. */
extern bool fake_uart_full;
/* Bytes the FIFO takes before it is full ((size_t)-1: no limit). */
extern size_t fake_uart_room;

/* The core the code under test runs on, and the kicks it sent (bit per core). */
extern unsigned fake_cpu;
extern uint32_t fake_kicks;
/* The counter the code under test reads (arch_counter), at 62.5 MHz. */
extern uint64_t fake_counter;

#endif
