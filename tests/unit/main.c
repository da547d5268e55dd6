/* SPDX-License-Identifier: MIT */
#include <string.h>
#include "check.h"
#include "tests.h"

int checks_failed;
int checks_run;

static const struct test_case tests[] = {
#define TEST(name) { #name, name },
	TEST_LIST
#undef TEST
};

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		int before = checks_failed;
		tests[i].fn();
		if (checks_failed == before) {
			passed++;
		} else {
			failed++;
			fprintf(stderr, "FAIL %s\n", tests[i].name);
		}
	}
	printf("unit: %d checks\n", checks_run);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
