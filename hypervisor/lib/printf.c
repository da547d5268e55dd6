/* SPDX-License-Identifier: MIT */
#include <tern/lib.h>

struct out {
	char *buf;
	size_t size;
	size_t len; /* would-be length, as C99 snprintf reports it */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_uint(struct out *o, uint64_t v, unsigned base, int width, char pad, bool neg)
{
	static const char digit[] = "0123456789abcdef";
	char digits[24];
	int n = 0;

	do {
		digits[n++] = digit[v % base];
		v /= base;
	} while (v);
	if (neg && pad == '0')
		put(o, '-');
	for (int w = n + (neg ? 1 : 0); w < width; w++)
		put(o, pad);
	if (neg && pad != '0')
		put(o, '-');
	while (n)
		put(o, digits[--n]);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	while (*fmt) {
		if (*fmt != '%') {
			put(&o, *fmt++);
			continue;
		}
		fmt++;
		char pad = ' ';
		int width = 0;
		int longs = 0;
		if (*fmt == '0') {
			pad = '0';
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l') {
			longs++;
			fmt++;
		}
		if (*fmt == 'z') {
			longs = 1;
			fmt++;
		}
		switch (*fmt) {
		case 'd':
		case 'i': {
			int64_t v = longs ? va_arg(ap, int64_t) : va_arg(ap, int);
			uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
			put_uint(&o, mag, 10, width, pad, v < 0);
			break;
		}
		case 'u':
		case 'x': {
			uint64_t v = longs ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
			put_uint(&o, v, *fmt == 'x' ? 16 : 10, width, pad, false);
			break;
		}
		case 'p':
			put(&o, '0');
			put(&o, 'x');
			put_uint(&o, (uintptr_t)va_arg(ap, void *), 16, width, pad, false);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			int len = (int)strnlen(s, 4096);
			for (int w = len; w < width; w++)
				put(&o, ' ');
			while (*s)
				put(&o, *s++);
			break;
		}
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case '%':
			put(&o, '%');
			break;
		case '\0':
			fmt--;
			break;
		default:
			put(&o, '%');
			put(&o, *fmt);
			break;
		}
		fmt++;
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
