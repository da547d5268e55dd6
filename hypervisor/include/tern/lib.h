/* SPDX-License-Identifier: MIT */
/* Freestanding replacements for the few libc pieces the hypervisor uses. */
#ifndef TERN_LIB_H
#define TERN_LIB_H

#include <stdarg.h>
#include <tern/types.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);

/* printf subset: %d %i %u %x %lx %llx %ld %lu %lld %llu %s %c %p %%, width and 0-padding. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
int snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
