/* SPDX-License-Identifier: MIT */
/* What every partition UART shares whatever its registers: the line it is transmitting. */
#include <tern/lib.h>
#include <tern/vuart.h>

void vuart_init(struct vuart *u, const char *name, struct console_ring *out)
{
	spin_lock_init(&u->lock);
	u->out = out;
	(void)snprintf(u->prefix, sizeof(u->prefix), "[%s] ", name);
	vuart_reset(u);
}

void vuart_reset(struct vuart *u)
{
	spin_lock(&u->lock);
	(void)memset(&u->regs, 0, sizeof(u->regs));
	u->line_len = 0;
	spin_unlock(&u->lock);
}

static void emit(struct vuart *u)
{
	(void)console_put(u->out, u->prefix, u->line, u->line_len); /* a full ring drops it, counted */
	u->line_len = 0;
}

void vuart_transmit(struct vuart *u, uint8_t byte)
{
	char c = (char)byte;

	if (c == '\r')
		return;
	spin_lock(&u->lock);
	if (c != '\n')
		u->line[u->line_len++] = c;
	if (c == '\n' || u->line_len == VUART_LINE_MAX)
		emit(u);
	spin_unlock(&u->lock);
}

void vuart_flush(struct vuart *u)
{
	spin_lock(&u->lock);
	if (u->line_len)
		emit(u);
	spin_unlock(&u->lock);
}
