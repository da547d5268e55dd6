/* SPDX-License-Identifier: MIT */
/* tern/arch.h on the host (fake.h says what the fake is and why it lives under tests/). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tern/arch.h>
#include <tern/config.h>
#include <tern/spinlock.h>
#include <tern/lib.h>
#include "fake.h"

_Thread_local unsigned fake_cpu;
_Atomic uint32_t fake_kicks;
_Atomic uint32_t fake_kick_count[FAKE_CPUS];
uint64_t fake_now = 1000;
uint64_t fake_freq = 1000000; /* 1 MHz: a tick is a microsecond */
struct fake_core fake_cores[FAKE_CPUS];
uint32_t fake_cpu_start_fails;
const char *fake_iommu_error;
const char *fake_partition_init_error;
unsigned fake_iommu_polls, fake_iommu_partition_polls, fake_board_offs;
uint64_t fake_synced_pa, fake_synced_size;
unsigned fake_syncs;
uint32_t fake_hyp_irq = ~0u, fake_hyp_irq_cpu = ~0u;
uint32_t fake_raised[FAKE_RAISED_LOG];
unsigned long fake_raises;
_Thread_local void (*fake_relax_hook)(void);
unsigned long fake_spin_limit = 100000;
bool fake_threaded;

static _Thread_local struct fake_frame *top;
static _Thread_local unsigned long spins;

/* ---- leaving the hypervisor's code: back to the test ---- */

void fake_frame_push(struct fake_frame *f, unsigned cpu)
{
	f->exit = FAKE_RETURNED;
	f->saved_cpu = fake_cpu;
	f->saved_spins = spins;
	f->prev = top;
	top = f;
	fake_cpu = cpu;
	spins = 0;
}

enum fake_exit fake_frame_pop(struct fake_frame *f, bool returned)
{
	top = f->prev;
	fake_cpu = f->saved_cpu;
	spins = f->saved_spins;
	return returned ? FAKE_RETURNED : f->exit;
}

void fake_exit_to_test(enum fake_exit why)
{
	if (!top) {
		fprintf(stderr, "fake: %s outside FAKE_ON\n", fake_exit_name(why));
		abort();
	}
	top->exit = why;
	longjmp(top->jmp, 1);
}

const char *fake_exit_name(enum fake_exit e)
{
	static const char *const names[] = {
		[FAKE_RETURNED] = "returned", [FAKE_EXIT_IDLE] = "idle", [FAKE_EXIT_RUN] = "run",
		[FAKE_EXIT_WAIT] = "wait", [FAKE_EXIT_BOARD_OFF] = "board off",
		[FAKE_EXIT_HANG] = "hang",
	};
	return e < sizeof(names) / sizeof(names[0]) ? names[e] : "?";
}

/* ---- cores ---- */

unsigned arch_cpu_id(void)
{
	return fake_cpu;
}

bool arch_cpu_start(unsigned pcpu)
{
	if (pcpu >= FAKE_CPUS || (fake_cpu_start_fails & (1u << pcpu)))
		return false;
	fake_cpu_init(pcpu);
	return true;
}

void arch_cpu_return_to_idle(void)
{
	fake_cores[fake_cpu].running = NULL;
	fake_cores[fake_cpu].leaves++;
	fake_exit_to_test(FAKE_EXIT_IDLE);
}

void arch_cpu_kick(unsigned pcpu)
{
	if (pcpu >= FAKE_CPUS)
		abort();
	atomic_fetch_or(&fake_kicks, 1u << pcpu);
	atomic_fetch_add(&fake_kick_count[pcpu], 1);
}

void arch_cpu_idle_wait(uint64_t deadline)
{
	fake_cores[fake_cpu].deadline = deadline;
	fake_cores[fake_cpu].waits++;
	fake_exit_to_test(FAKE_EXIT_WAIT);
}

/*
 * The core's stack cannot stay asleep under a test: it leaves to the test, as if the wait went
 * on.  The next kick enters the guest's kick path afresh (fake_kick_running), which on the
 * board is where the wait's loop would look again.
 */
void arch_vcpu_wait(struct vcpu *v)
{
	(void)v;
	fake_cores[fake_cpu].vcpu_waits++;
	fake_exit_to_test(FAKE_EXIT_WAIT);
}

void arch_cpu_relax(void)
{
	if (fake_relax_hook)
		fake_relax_hook();
	if (fake_threaded) {
		sched_yield();
		return;
	}
	if (++spins > fake_spin_limit)
		fake_exit_to_test(FAKE_EXIT_HANG);
}

void arch_board_off(void)
{
	fake_cores[fake_cpu].running = NULL; /* whatever it ran, it left for good */
	fake_board_offs++;
	fake_exit_to_test(FAKE_EXIT_BOARD_OFF);
}

uint64_t arch_counter(void)
{
	return fake_now;
}

uint64_t arch_counter_freq(void)
{
	return fake_freq;
}

void fake_raised_record(uint32_t irq)
{
	fake_raised[fake_raises++ % FAKE_RAISED_LOG] = irq;
}

/* ---- IOMMU ---- */

bool arch_iommu_init(const struct tern_config *cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (fake_iommu_error) {
		snprintf(err, errlen, "%s", fake_iommu_error);
		return false;
	}
	return true;
}

bool arch_iommu_present(void)
{
	return true;
}

void arch_iommu_poll(void)
{
	fake_iommu_polls++;
}

void arch_iommu_poll_partition(struct partition *p)
{
	(void)p;
	fake_iommu_partition_polls++;
}

/* ---- memory ---- */

uint64_t arch_ipa_limit(void)
{
	return 1ull << 48; /* the fake board's RAM is host memory, wherever the host put it */
}

void arch_sync_guest_memory(paddr_t pa, uint64_t size)
{
	fake_synced_pa = pa;
	fake_synced_size = size;
	fake_syncs++;
}
