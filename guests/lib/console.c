#include "console.h"

#include <stdint.h>

void console_puts(const char *s)
{
	while (*s)
		console_putc(*s++);
}

struct field {
	int width;
	bool left;
	char pad;
};

static int put_field(const struct field *f, const char *s, int len)
{
	int fill = f->width > len ? f->width - len : 0;

	if (!f->left)
		for (int i = 0; i < fill; i++)
			console_putc(f->pad);
	for (int i = 0; i < len; i++)
		console_putc(s[i]);
	if (f->left)
		for (int i = 0; i < fill; i++)
			console_putc(' ');
	return len + fill;
}

static int put_number(const struct field *f, unsigned long long val, unsigned base,
		      bool negative)
{
	char buf[24];
	int pos = sizeof(buf);

	do {
		unsigned digit = (unsigned)(val % base);
		buf[--pos] = (char)(digit < 10 ? '0' + digit : 'a' + digit - 10);
		val /= base;
	} while (val);

	if (!negative)
		return put_field(f, buf + pos, (int)sizeof(buf) - pos);

	/* The sign goes before zero padding but after space padding. */
	if (f->pad == '0') {
		struct field rest = *f;
		console_putc('-');
		rest.width = f->width > 0 ? f->width - 1 : 0;
		return 1 + put_field(&rest, buf + pos, (int)sizeof(buf) - pos);
	}
	buf[--pos] = '-';
	return put_field(f, buf + pos, (int)sizeof(buf) - pos);
}

int vprintf(const char *fmt, va_list ap)
{
	int count = 0;

	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			console_putc(*fmt);
			count++;
			continue;
		}
		fmt++;

		struct field f = { .width = 0, .left = false, .pad = ' ' };
		for (;; fmt++) {
			if (*fmt == '-')
				f.left = true;
			else if (*fmt == '0')
				f.pad = '0';
			else
				break;
		}
		if (f.left)
			f.pad = ' ';
		while (*fmt >= '0' && *fmt <= '9')
			f.width = f.width * 10 + (*fmt++ - '0');

		int longs = 0;
		while (*fmt == 'l') {
			longs++;
			fmt++;
		}

		switch (*fmt) {
		case 'd':
		case 'i': {
			long long val = longs == 0 ? va_arg(ap, int)
				      : longs == 1 ? va_arg(ap, long) : va_arg(ap, long long);
			/* Negate in unsigned arithmetic so LLONG_MIN survives. */
			unsigned long long mag = val < 0 ? 0ULL - (unsigned long long)val
							 : (unsigned long long)val;
			count += put_number(&f, mag, 10, val < 0);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long val = longs == 0 ? va_arg(ap, unsigned int)
					       : longs == 1 ? va_arg(ap, unsigned long)
							    : va_arg(ap, unsigned long long);
			count += put_number(&f, val, *fmt == 'x' ? 16 : 10, false);
			break;
		}
		case 'p':
			console_puts("0x");
			count += 2 + put_number(&f, (uintptr_t)va_arg(ap, void *), 16, false);
			break;
		case 'c': {
			char c = (char)va_arg(ap, int);
			count += put_field(&f, &c, 1);
			break;
		}
		case 's': {
			const char *s = va_arg(ap, const char *);
			int len = 0;
			if (!s)
				s = "(null)";
			while (s[len])
				len++;
			count += put_field(&f, s, len);
			break;
		}
		case '%':
			console_putc('%');
			count++;
			break;
		case '\0':
			return count;
		default:
			/* Show the unsupported conversion rather than silently eating arguments. */
			console_putc('%');
			console_putc(*fmt);
			count += 2;
			break;
		}
	}
	return count;
}

int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int count = vprintf(fmt, ap);
	va_end(ap);
	return count;
}
