/* SPDX-License-Identifier: MIT */
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/config_abi.h>
#include <tern/vpl011.h>

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

void vpl011_init(struct vpl011 *u, const char *name, struct console_ring *out)
{
	spin_lock_init(&u->lock);
	u->out = out;
	(void)snprintf(u->prefix, sizeof(u->prefix), "[%s] ", name);
	vpl011_reset(u);
}

void vpl011_reset(struct vpl011 *u)
{
	spin_lock(&u->lock);
	u->ibrd = 0;
	u->fbrd = 0;
	u->lcr_h = 0;
	u->cr = 0;
	u->ifls = 0;
	u->imsc = 0;
	u->dmacr = 0;
	u->line_len = 0;
	spin_unlock(&u->lock);
}

static void emit(struct vpl011 *u)
{
	(void)console_put(u->out, u->prefix, u->line, u->line_len); /* a full ring drops it, counted */
	u->line_len = 0;
}

void vpl011_flush(struct vpl011 *u)
{
	spin_lock(&u->lock);
	if (u->line_len)
		emit(u);
	spin_unlock(&u->lock);
}

uint32_t vpl011_read(struct vpl011 *u, uint32_t offset)
{
	switch (offset) {
	case UARTFR:    return FR_TXFE | FR_RXFE; /* transmit never busy, nothing to receive */
	case UARTIBRD:  return u->ibrd;
	case UARTFBRD:  return u->fbrd;
	case UARTLCR_H: return u->lcr_h;
	case UARTCR:    return u->cr;
	case UARTIFLS:  return u->ifls;
	case UARTIMSC:  return u->imsc;
	case UARTDMACR: return u->dmacr;
	default:
		if (offset >= UARTPERIPHID0 && offset < UARTPERIPHID0 + 32 && !(offset & 3))
			return pl011_id[(offset - UARTPERIPHID0) / 4];
		return 0; /* DR (no input), RIS/MIS (no interrupt sources yet), reserved */
	}
}

void vpl011_write(struct vpl011 *u, uint32_t offset, uint32_t value)
{
	switch (offset) {
	case UARTDR: {
		char c = (char)(value & 0xff);
		if (c == '\r')
			return;
		spin_lock(&u->lock);
		if (c != '\n')
			u->line[u->line_len++] = c;
		if (c == '\n' || u->line_len == VPL011_LINE_MAX)
			emit(u);
		spin_unlock(&u->lock);
		return;
	}
	case UARTIBRD:  u->ibrd = value; return;
	case UARTFBRD:  u->fbrd = value; return;
	case UARTLCR_H: u->lcr_h = value; return;
	case UARTCR:    u->cr = value; return;
	case UARTIFLS:  u->ifls = value; return;
	case UARTIMSC:  u->imsc = value; return;
	case UARTDMACR: u->dmacr = value; return;
	default:        return; /* ICR and read-only registers */
	}
}
