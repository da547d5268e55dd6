/* SPDX-License-Identifier: MIT */
/*
 * The UART each partition sees at the board UART's address, with the board's own register
 * model (platform.uart_model: a PL011 on arm64 `virt`, an ns16550 on riscv64 `virt`), so a
 * guest's own driver works unchanged.  Transmitted bytes are collected per line and put,
 * tagged `[name] `, into the partition's console ring: a write never waits for the board
 * UART or for another partition (tern/console.h).
 */
#ifndef TERN_VUART_H
#define TERN_VUART_H

#include <tern/config_abi.h>
#include <tern/console.h>
#include <tern/mmio.h>
#include <tern/spinlock.h>
#include <tern/types.h>

#define VUART_LINE_MAX 512u /* LAT-JSON lines are ~350 characters */

/* Registers the guest sets up and reads back (no baud rate or line setting has an effect). */
struct vpl011_regs {
	uint32_t ibrd;
	uint32_t fbrd;
	uint32_t lcr_h;
	uint32_t cr;
	uint32_t ifls;
	uint32_t imsc;
	uint32_t dmacr;
};

struct vns16550_regs {
	uint8_t ier;
	uint8_t fcr;
	uint8_t lcr;
	uint8_t mcr;
	uint8_t scr;
	uint8_t dll;
	uint8_t dlm;
};

struct vuart {
	struct spinlock lock;          /* the line: the partition's vCPUs print concurrently */
	struct console_ring *out;
	char prefix[TERN_NAME_LEN + 4]; /* "[name] " */
	uint32_t line_len;
	char line[VUART_LINE_MAX];
	struct {                       /* the board's model uses its own */
		struct vpl011_regs pl011;
		struct vns16550_regs ns16550;
	} regs;
};

/* A register model: what a guest's access to the UART's window does. */
struct vuart_model {
	uint64_t size;  /* the window, from platform.uart_base */
	enum mmio_result (*access)(struct vuart *u, uint64_t offset, unsigned size, bool write,
				   uint64_t *value);
};

extern const struct vuart_model vpl011_model;
extern const struct vuart_model vns16550_model;

/* A UART whose lines go to `out` as `[name] text`. */
void vuart_init(struct vuart *u, const char *name, struct console_ring *out);
/* Back to its state at power-on (a restart), a half-written line dropped. */
void vuart_reset(struct vuart *u);
/* One transmitted byte (a data register write, or the SBI debug console). */
void vuart_transmit(struct vuart *u, uint8_t byte);
/* Put a half-written line out (the partition ends). */
void vuart_flush(struct vuart *u);

/* The PL011's 32-bit registers (PL011 TRM offsets), for its model and its tests. */
uint32_t vpl011_read(struct vuart *u, uint32_t offset);
void vpl011_write(struct vuart *u, uint32_t offset, uint32_t value);

#endif
