/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share: a standard board booted once through tern_main on the fake
 * architecture (tests/unit/fake), the input as a stream of bytes, and the checks every target
 * makes.  A broken invariant aborts (libFuzzer reports it as a crash, with the input).
 */
#ifndef TERN_FUZZ_HARNESS_H
#define TERN_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <arch/cpu.h>
#include <arch/partition.h>
#include <tern/config_abi.h>
#include <tern/partition.h>
#include "fake.h"

/* Checks are not what the fuzzer should learn from: no coverage feedback from them. */
#define ORACLE __attribute__((no_sanitize("coverage", "address"), noinline))

/*
 * The standard board: 6 cores.  Partition 0 "trap" (trap-and-inject, SPIs 35 and 37) has
 * vCPUs on cores 0, 1, 2; partition 1 "direct" (direct delivery, SPI 36) on cores 3, 4.
 * Core 5 is nobody's: the console core.
 */
#define STD_CPUS 6u
#define STD_TRAP 0u
#define STD_DIRECT 1u
extern const uint8_t std_trap_cpus[3], std_direct_cpus[2];

/* Boot it (once) and start vCPUs per `started` (bit i: vCPU i of trap, bit 3 + i: of direct). */
void std_boot(uint32_t started);
/* Called with the blob before the boot, to change the standard one. */
extern void (*std_config_hook)(struct tern_config *cfg);
/* Bring every partition back to running, with exactly the vCPUs of `started` on. */
void std_repair(uint32_t started);
/* vCPU `index` of partition `p`. */
struct vcpu *std_vcpu(uint32_t p, uint32_t index);

/* The power invariants of tern/power.h, once no core is in the middle of a transition. */
ORACLE void check_power_invariants(void);

#define FUZZ_ASSERT(cond) do {                                                  \
	if (!(cond)) {                                                          \
		fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
		abort();                                                        \
	}                                                                       \
} while (0)

/* With FUZZ_TRACE set in the environment, what each step does (to read a crash's input). */
extern bool fuzz_trace;
#define TRACE(...) do { if (fuzz_trace) fprintf(stderr, __VA_ARGS__); } while (0)

/*
 * The fake GIC's writes, with count_gic_write as fake_gic_write_hook: how many since the
 * target zeroed gic_writes, and the last one's address and value.
 */
extern unsigned long gic_writes;
extern uintptr_t last_gic_write;
extern uint64_t last_gic_value;
void count_gic_write(uintptr_t addr, unsigned size, uint64_t value);

/*
 * Every counter of every vCPU of the standard partitions before a step (stats_snapshot), and after
 * it only the acting vCPU's counter `id` grown, by `by` (stats_check).
 */
ORACLE void stats_snapshot(void);
ORACLE void stats_check(const struct vcpu *acting, int id, uint64_t by);

/* memcmp(a, b, n) == 0, without libFuzzer's memcmp hook learning from it. */
ORACLE bool same_bytes(const void *a, const void *b, size_t n);

/* The input, consumed from the front; zeros once it runs out. */
struct input {
	const uint8_t *data;
	size_t size, pos;
};

static inline bool input_left(const struct input *in)
{
	return in->pos < in->size;
}

static inline uint64_t take(struct input *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)(in->pos < in->size ? in->data[in->pos++] : 0) << (8 * i);
	return v;
}

/*
 * A manager call's buffers (tern/manager.h) in partition p's RAM, which the standard board's
 * "trap" is when the target's config hook says so: manager_text writes a command line there,
 * one of the commands that change nothing (the console's own fuzz target, fuzz_command, has
 * the rest) followed by fuzzed bytes (NUL, CR and LF included), and gives its address in *gpa
 * and its length (at times past the limit); manager_buffer gives a reply buffer's address, in
 * the RAM, across its end or outside it, and its length.  check_manager_reply: a reply of
 * `full` bytes given to [gpa, gpa + len) is at most the mailbox's size, and what was copied
 * ends in a newline when it all fit.
 */
uint64_t manager_text(struct input *in, const struct partition *p, uint64_t *gpa);
uint64_t manager_buffer(struct input *in, const struct partition *p, uint64_t *gpa);
ORACLE void check_manager_reply(const struct partition *p, uint64_t gpa, uint64_t len,
				uint64_t full);

#endif
