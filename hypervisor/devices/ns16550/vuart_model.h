/* SPDX-License-Identifier: MIT */
/*
 * The partition UART's register model on a board whose UART is an ns16550A (riscv64 `virt`):
 * what tern/vuart.h embeds in every partition's UART.  On the include path only in a build
 * whose platform.mk says VUART := ns16550.
 */
#ifndef TERN_DEVICES_NS16550_VUART_MODEL_H
#define TERN_DEVICES_NS16550_VUART_MODEL_H

#include <tern/types.h>

struct vuart_model;

/* Registers the guest sets up and reads back (no baud rate or line setting has an effect). */
struct vuart_regs {
	uint8_t ier;
	uint8_t fcr;
	uint8_t lcr;
	uint8_t mcr;
	uint8_t scr;
	uint8_t dll;
	uint8_t dlm;
};

extern const struct vuart_model vns16550_model;

#endif
