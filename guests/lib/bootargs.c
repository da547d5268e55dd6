#include "bootargs.h"
#include "console.h"
#include "fdt.h"

static struct strview cmdline;

void bootargs_init(void)
{
	uint32_t len;
	const char *args = fdt_getprop("/chosen", "bootargs", &len);

	cmdline.p = args;
	cmdline.len = 0;
	/* The property length includes the terminator; trust the NUL, bounded by it. */
	while (args && cmdline.len < len && args[cmdline.len])
		cmdline.len++;
}

struct strview bootargs_all(void)
{
	return cmdline;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool bootarg(const char *key, struct strview *value)
{
	bool found = false;
	size_t i = 0;

	while (i < cmdline.len) {
		while (i < cmdline.len && is_space(cmdline.p[i]))
			i++;
		size_t start = i;
		while (i < cmdline.len && !is_space(cmdline.p[i]))
			i++;

		size_t k = 0;
		while (key[k] && start + k < i && cmdline.p[start + k] == key[k])
			k++;
		if (!key[k] && start + k < i && cmdline.p[start + k] == '=') {
			value->p = cmdline.p + start + k + 1;
			value->len = i - (start + k + 1);
			found = true;   /* keep going: a later word overrides */
		}
	}
	return found;
}

bool strview_to_ulong(struct strview s, unsigned long *out)
{
	unsigned long val = 0, base = 10;
	size_t i = 0;

	if (s.len > 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == s.len)
		return false;
	for (; i < s.len; i++) {
		char c = s.p[i];
		unsigned long digit;
		if (c >= '0' && c <= '9')
			digit = (unsigned long)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			digit = (unsigned long)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			digit = (unsigned long)(c - 'A' + 10);
		else
			return false;
		if (val > (~0UL - digit) / base)
			return false;
		val = val * base + digit;
	}
	*out = val;
	return true;
}

unsigned long bootarg_ulong(const char *key, unsigned long fallback,
			    unsigned long min, unsigned long max)
{
	struct strview s;
	unsigned long val;

	if (!bootarg(key, &s) || !strview_to_ulong(s, &val))
		return fallback;
	return val < min ? min : val > max ? max : val;
}

bool strview_next_item(struct strview *list, struct strview *item)
{
	while (list->len && list->p[0] == ',') {
		list->p++;
		list->len--;
	}
	if (!list->len)
		return false;
	item->p = list->p;
	item->len = 0;
	while (item->len < list->len && list->p[item->len] != ',')
		item->len++;
	list->p += item->len;
	list->len -= item->len;
	return true;
}

bool strview_eq(struct strview s, const char *text)
{
	size_t i = 0;

	for (; i < s.len; i++)
		if (text[i] != s.p[i])
			return false;
	return text[i] == '\0';
}

void print_strview(struct strview s)
{
	for (size_t i = 0; i < s.len; i++)
		console_putc(s.p[i]);
}
