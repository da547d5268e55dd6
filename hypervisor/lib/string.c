/* SPDX-License-Identifier: MIT */
#include <tern/lib.h>

/*
 * Plain loops, never unaligned: early boot runs with the MMU off, where every
 * access is Device memory and an unaligned one faults.
 */
void *memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (IS_ALIGNED((uintptr_t)d | (uintptr_t)s | n, 8)) {
		uint64_t *d8 = dst;
		const uint64_t *s8 = src;
		for (size_t i = 0; i < n / 8; i++)
			d8[i] = s8[i];
		return dst;
	}
	while (n--)
		*d++ = *s++;
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;

	if (IS_ALIGNED((uintptr_t)d | n, 8)) {
		uint64_t *d8 = dst;
		uint64_t v = 0x0101010101010101ULL * (unsigned char)c;
		for (size_t i = 0; i < n / 8; i++)
			d8[i] = v;
		return dst;
	}
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a;
	const unsigned char *y = b;

	for (size_t i = 0; i < n; i++) {
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	}
	return 0;
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}
