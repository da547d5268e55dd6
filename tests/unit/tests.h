/* SPDX-License-Identifier: MIT */
#ifndef TERN_TESTS_H
#define TERN_TESTS_H

/*
 * The tests: every `void test_name(void)` of the binary's files, as the Makefile lists them
 * (build/ARCH/tests.inc).  Nothing to add here for a new test.
 */
#define TEST(name) void name(void);
#include "tests.inc"
#undef TEST

#endif
