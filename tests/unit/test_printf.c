/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <tern/lib.h>
#include "check.h"
#include "tests.h"

static int fmt_is(const char *want, const char *fmt, ...)
{
	char buf[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (strcmp(buf, want)) {
		fprintf(stderr, "  \"%s\" gave \"%s\", wanted \"%s\"\n", fmt, buf, want);
		return 0;
	}
	return 1;
}

void test_printf_formats(void)
{
	CHECK(fmt_is("0 -1 42", "%d %d %u", 0, -1, 42u));
	CHECK(fmt_is("0x0000beef", "0x%08x", 0xbeefu));
	CHECK(fmt_is("ffffffffffffffff", "%llx", ~0ull));
	CHECK(fmt_is("-9223372036854775808", "%lld", (long long)(-9223372036854775807ll - 1)));
	CHECK(fmt_is("[  ab]", "[%4s]", "ab"));
	CHECK(fmt_is("x%y", "%c%%%c", 'x', 'y'));
	CHECK(fmt_is("  -5", "%4d", -5));
	CHECK(fmt_is("-005", "%04d", -5));
	CHECK(fmt_is("(null)", "%s", (char *)NULL));
	CHECK(fmt_is("12", "%zu", (size_t)12));
}

void test_printf_truncates(void)
{
	char buf[6];

	CHECK_EQ(snprintf(buf, sizeof(buf), "%s", "hello world"), 11);
	CHECK(!strcmp(buf, "hello"));
	CHECK_EQ(snprintf(buf, 0, "abc"), 3);
}
