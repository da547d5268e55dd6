/* SPDX-License-Identifier: MIT */
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/spinlock.h>

static struct spinlock console_lock = SPINLOCK_INIT;

static void put_raw(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			uart_putc('\r');
		uart_putc(s[i]);
	}
}

void console_line(const char *prefix, const char *text, size_t len)
{
	spin_lock(&console_lock);
	if (prefix)
		put_raw(prefix, strnlen(prefix, 64));
	put_raw(text, len);
	put_raw("\n", 1);
	spin_unlock(&console_lock);
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n < 0)
		return;
	console_line(prefix, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void tern_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("tern: ", fmt, ap);
	va_end(ap);
}

void console_printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(NULL, fmt, ap);
	va_end(ap);
}
