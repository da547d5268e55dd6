/* SPDX-License-Identifier: MIT */
/* The fake architecture and board the host tests run the hypervisor's code on (fake_arch.c). */
#ifndef TERN_TEST_FAKE_H
#define TERN_TEST_FAKE_H

#include <stddef.h>
#include <stdint.h>

/* What the hypervisor wrote to the board UART. */
extern char fake_uart_out[65536];
extern size_t fake_uart_len;
void fake_uart_clear(void);

/* The core the code under test runs on, and the kicks it sent (bit per core). */
extern unsigned fake_cpu;
extern uint32_t fake_kicks;

#endif
