/* SPDX-License-Identifier: MIT */
/* A minimal host test harness: CHECK records a failure and goes on. */
#ifndef TERN_TEST_CHECK_H
#define TERN_TEST_CHECK_H

#include <stdio.h>

extern int checks_failed;
extern int checks_run;

#define CHECK(cond) do {                                                        \
	checks_run++;                                                           \
	if (!(cond)) {                                                          \
		checks_failed++;                                                \
		fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
	}                                                                       \
} while (0)

#define CHECK_EQ(a, b) do {                                                     \
	unsigned long long _a = (unsigned long long)(a), _b = (unsigned long long)(b); \
	checks_run++;                                                           \
	if (_a != _b) {                                                         \
		checks_failed++;                                                \
		fprintf(stderr, "%s:%d: %s == %s failed: 0x%llx != 0x%llx\n",   \
			__FILE__, __LINE__, #a, #b, _a, _b);                    \
	}                                                                       \
} while (0)

typedef void (*test_fn)(void);
struct test_case {
	const char *name;
	test_fn fn;
};

#endif
