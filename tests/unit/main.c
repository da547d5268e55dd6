/* SPDX-License-Identifier: MIT */
/*
 * Runs the host tests, each in a child process of its own: every test starts from the
 * hypervisor's state at power-on (its globals as the image has them), a crash or a hang
 * fails that test only.  TERN_TEST_NOFORK=1 runs them in this process (for a debugger).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "tests.h"

#define TEST_TIMEOUT_S 60

int checks_failed;
int checks_run;

static const struct test_case tests[] = {
#define TEST(name) { #name, name },
#include "tests.inc"
#undef TEST
};

struct counts {
	int run, failed;
};

static bool run_forked(const struct test_case *t, struct counts *shared)
{
	int status;
	pid_t pid;

	shared->run = 0;
	shared->failed = 1; /* what a child that dies before reporting counts as */
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		alarm(TEST_TIMEOUT_S);
		checks_run = checks_failed = 0;
		t->fn();
		shared->run = checks_run;
		shared->failed = checks_failed;
		exit(0); /* through atexit: coverage builds write their profile there */
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		exit(2);
	}
	if (WIFSIGNALED(status))
		fprintf(stderr, "%s: killed by signal %d%s\n", t->name, WTERMSIG(status),
			WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	else if (WEXITSTATUS(status))
		fprintf(stderr, "%s: exit status %d\n", t->name, WEXITSTATUS(status));
	checks_run += shared->run;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		checks_failed++;
		return false;
	}
	checks_failed += shared->failed;
	return shared->failed == 0;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	bool nofork = getenv("TERN_TEST_NOFORK") != NULL;
	struct counts *shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (shared == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool ok;
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		if (nofork) {
			int before = checks_failed;
			tests[i].fn();
			ok = checks_failed == before;
		} else {
			ok = run_forked(&tests[i], shared);
		}
		if (ok) {
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
