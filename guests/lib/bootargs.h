/* Kernel-style command line: whitespace-separated `key=value` words from /chosen/bootargs. */
#ifndef GUEST_BOOTARGS_H
#define GUEST_BOOTARGS_H

#include <stdbool.h>
#include <stddef.h>

/* A slice of the command line; not NUL-terminated. */
struct strview {
	const char *p;
	size_t len;
};

void bootargs_init(void);
struct strview bootargs_all(void);

/* The value of the last `key=value` word for `key`; false if there is none. */
bool bootarg(const char *key, struct strview *value);

/* A decimal (or 0x hex) value clamped to [min, max]; `fallback` if absent or malformed. */
unsigned long bootarg_ulong(const char *key, unsigned long fallback,
			    unsigned long min, unsigned long max);

/* Splits off the next comma-separated item of *list; false when the list is used up. */
bool strview_next_item(struct strview *list, struct strview *item);
bool strview_eq(struct strview s, const char *text);
bool strview_to_ulong(struct strview s, unsigned long *out);
/* Write `s` to the console as it is. */
void print_strview(struct strview s);

#endif
