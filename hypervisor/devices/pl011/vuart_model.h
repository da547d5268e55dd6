/* SPDX-License-Identifier: MIT */
/*
 * The partition UART's register model on a board whose UART is a PL011 (arm64 `virt`): what
 * tern/vuart.h embeds in every partition's UART.  On the include path only in a build whose
 * platform.mk says VUART := pl011.
 */
#ifndef TERN_DEVICES_PL011_VUART_MODEL_H
#define TERN_DEVICES_PL011_VUART_MODEL_H

#include <tern/types.h>

struct vuart;
struct vuart_model;

/* Registers the guest sets up and reads back (no baud rate or line setting has an effect). */
struct vuart_regs {
	uint32_t ibrd;
	uint32_t fbrd;
	uint32_t lcr_h;
	uint32_t cr;
	uint32_t ifls;
	uint32_t imsc;
	uint32_t dmacr;
};

extern const struct vuart_model vpl011_model;

/* The PL011's 32-bit registers (PL011 TRM offsets), for its model and its tests. */
uint32_t vpl011_read(struct vuart *u, uint32_t offset);
void vpl011_write(struct vuart *u, uint32_t offset, uint32_t value);

#endif
