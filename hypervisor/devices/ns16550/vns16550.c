/* SPDX-License-Identifier: MIT */
/*
 * The ns16550A model: the riscv64 `virt` board's UART.  Byte registers one byte apart; an
 * access of any width acts on the register at its offset, as the board's does.  Transmit is
 * never busy and there is nothing to receive: the one interrupt IIR can name is "THR empty",
 * pending whenever IER enables it (a real one clears it on an IIR read until the next THR
 * write; a driver that polls, as Linux's 8250 does on a port with no interrupt line, reads
 * IIR before each burst it writes and sees the same).  No interrupt line is raised yet.
 */
#include <tern/vuart.h>

#define REG_DATA 0u  /* RBR/THR, or DLL with LCR.DLAB */
#define REG_IER  1u  /* or DLM with LCR.DLAB */
#define REG_IIR  2u  /* read; FCR written */
#define REG_LCR  3u
#define REG_MCR  4u
#define REG_LSR  5u
#define REG_MSR  6u
#define REG_SCR  7u

#define LCR_DLAB     0x80u
#define FCR_FIFO_ON  0x01u
#define IIR_NONE     0x01u  /* no interrupt pending */
#define IIR_THRE     0x02u  /* THR empty */
#define IER_ETBEI    0x02u  /* THR empty interrupt enabled */
#define IIR_FIFOS    0xc0u  /* FIFOs enabled */
#define LSR_THRE     0x20u
#define LSR_TEMT     0x40u
#define MCR_LOOP     0x10u
#define MSR_CTS      0x10u
#define MSR_DSR      0x20u
#define MSR_DCD      0x80u

/* Modem status: the lines up; in loopback, MCR's outputs fed back (drivers probe with it). */
static uint8_t modem_status(const struct vuart_regs *r)
{
	uint8_t mcr = r->mcr;

	if (!(mcr & MCR_LOOP))
		return MSR_DCD | MSR_DSR | MSR_CTS;
	/* DTR->DSR, RTS->CTS, OUT1->RI, OUT2->DCD */
	return (uint8_t)(((mcr & 1u) << 5) | ((mcr & 2u) << 3) | ((mcr & 4u) << 4) | ((mcr & 8u) << 4));
}

static uint8_t ns16550_read(const struct vuart_regs *r, uint64_t reg)
{
	bool dlab = r->lcr & LCR_DLAB;

	switch (reg) {
	case REG_DATA: return dlab ? r->dll : 0;
	case REG_IER:  return dlab ? r->dlm : r->ier;
	case REG_IIR:  return (uint8_t)(((r->ier & IER_ETBEI) ? IIR_THRE : IIR_NONE) |
					((r->fcr & FCR_FIFO_ON) ? IIR_FIFOS : 0u));
	case REG_LCR:  return r->lcr;
	case REG_MCR:  return r->mcr;
	case REG_LSR:  return LSR_THRE | LSR_TEMT;
	case REG_MSR:  return modem_status(r);
	case REG_SCR:  return r->scr;
	default:       return 0; /* the rest of the window */
	}
}

static void ns16550_write(struct vuart *u, uint64_t reg, uint8_t value)
{
	struct vuart_regs *r = &u->regs;
	bool dlab = r->lcr & LCR_DLAB;

	switch (reg) {
	case REG_DATA:
		if (dlab)
			r->dll = value;
		else
			vuart_transmit(u, value);
		break;
	case REG_IER:
		if (dlab)
			r->dlm = value;
		else
			r->ier = value & 0x0fu;
		break;
	case REG_IIR: r->fcr = value & 0xc9u; break; /* FIFO enable, DMA mode, trigger level */
	case REG_LCR: r->lcr = value; break;
	case REG_MCR: r->mcr = value & 0x1fu; break;
	case REG_SCR: r->scr = value; break;
	default:      break; /* LSR, MSR: read-only */
	}
}

static enum mmio_result vns16550_access(struct vuart *u, uint64_t offset, unsigned size, bool write,
					uint64_t *value)
{
	(void)size;
	if (write)
		ns16550_write(u, offset, (uint8_t)*value);
	else
		*value = ns16550_read(&u->regs, offset);
	return MMIO_DONE;
}

const struct vuart_model vns16550_model = { 0x100u, vns16550_access };
