/* SPDX-License-Identifier: MIT */
/* The PL011 (Arm PrimeCell UART) model: the arm64 `virt` board's UART. */
#include <tern/vuart.h>

/* Register offsets (PL011 TRM). */
#define UARTDR    0x000
#define UARTFR    0x018
#define UARTIBRD  0x024
#define UARTFBRD  0x028
#define UARTLCR_H 0x02c
#define UARTCR    0x030
#define UARTIFLS  0x034
#define UARTIMSC  0x038
#define UARTRIS   0x03c
#define UARTMIS   0x040
#define UARTICR   0x044
#define UARTDMACR 0x048
#define UARTPERIPHID0 0xfe0

#define FR_RXFE (1u << 4)
#define FR_TXFE (1u << 7)

/* PeriphID0..3, CellID0..3: what AMBA bus probing expects of a PL011 r1p5. */
static const uint8_t pl011_id[8] = { 0x11, 0x10, 0x34, 0x00, 0x0d, 0xf0, 0x05, 0xb1 };

uint32_t vpl011_read(struct vuart *u, uint32_t offset)
{
	switch (offset) {
	case UARTFR:    return FR_TXFE | FR_RXFE; /* transmit never busy, nothing to receive */
	case UARTIBRD:  return u->regs.ibrd;
	case UARTFBRD:  return u->regs.fbrd;
	case UARTLCR_H: return u->regs.lcr_h;
	case UARTCR:    return u->regs.cr;
	case UARTIFLS:  return u->regs.ifls;
	case UARTIMSC:  return u->regs.imsc;
	case UARTDMACR: return u->regs.dmacr;
	default:
		if (offset >= UARTPERIPHID0 && offset < UARTPERIPHID0 + 32 && !(offset & 3))
			return pl011_id[(offset - UARTPERIPHID0) / 4];
		return 0; /* DR (no input), RIS/MIS (no interrupt sources yet), reserved */
	}
}

void vpl011_write(struct vuart *u, uint32_t offset, uint32_t value)
{
	switch (offset) {
	case UARTDR:    vuart_transmit(u, (uint8_t)value); return;
	case UARTIBRD:  u->regs.ibrd = value; return;
	case UARTFBRD:  u->regs.fbrd = value; return;
	case UARTLCR_H: u->regs.lcr_h = value; return;
	case UARTCR:    u->regs.cr = value; return;
	case UARTIFLS:  u->regs.ifls = value; return;
	case UARTIMSC:  u->regs.imsc = value; return;
	case UARTDMACR: u->regs.dmacr = value; return;
	default:        return; /* ICR and read-only registers */
	}
}

/* 32-bit registers, bytes for data; the PL011 decodes words. */
static enum mmio_result vpl011_access(struct vuart *u, uint64_t offset, unsigned size, bool write,
				      uint64_t *value)
{
	if (size > 4)
		return MMIO_ABORT;
	if (offset & 3) {
		*value = 0; /* inside a register */
		return MMIO_DONE;
	}
	if (write)
		vpl011_write(u, (uint32_t)offset, (uint32_t)*value);
	else
		*value = vpl011_read(u, (uint32_t)offset);
	return MMIO_DONE;
}

const struct vuart_model vpl011_model = { 0x1000u, vpl011_access };
