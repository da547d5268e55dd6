/* SPDX-License-Identifier: MIT */
/*
 * The UART each partition sees at the board UART's address, with the board's own register
 * model (devices/<model>/, the one platform.mk names in VUART: a PL011 on arm64 `virt`, an
 * ns16550 on riscv64 `virt`), so a guest's own driver works unchanged.  Transmitted bytes are
 * collected per line and put, tagged `[name] `, into the partition's console ring: a write
 * never waits for the board UART or for another partition (tern/console.h).
 */
#ifndef TERN_VUART_H
#define TERN_VUART_H

#include <tern/config_abi.h>
#include <tern/console.h>
#include <tern/mmio.h>
#include <tern/spinlock.h>
#include <tern/types.h>
/* struct vuart_regs: the board's model's (its devices/<model>/ is on the include path). */
#include <vuart_model.h>

#define VUART_LINE_MAX 512u /* LAT-JSON lines are ~350 characters */

struct vuart {
	struct spinlock lock;          /* the line: the partition's vCPUs print concurrently */
	struct console_ring *out;
	char prefix[TERN_NAME_LEN + 4]; /* "[name] " */
	uint32_t line_len;
	char line[VUART_LINE_MAX];
	struct vuart_regs regs;        /* the board's model's own */
};

/* A register model: what a guest's access to the UART's window does. */
struct vuart_model {
	uint64_t size;  /* the window, from platform.uart_base */
	enum mmio_result (*access)(struct vuart *u, uint64_t offset, unsigned size, bool write,
				   uint64_t *value);
};

/* A UART whose lines go to `out` as `[name] text`. */
void vuart_init(struct vuart *u, const char *name, struct console_ring *out);
/* Back to its state at power-on (a restart), a half-written line dropped. */
void vuart_reset(struct vuart *u);
/* One transmitted byte (a data register write, or the firmware's console: riscv64's SBI DBCN). */
void vuart_transmit(struct vuart *u, uint8_t byte);
/* Put a half-written line out (the partition ends). */
void vuart_flush(struct vuart *u);

#endif
