/*
 * The noise guest on riscv64: only its slices mode so far (../slices.c, shared with arm64),
 * the measurement of the times a vCPU of a shared core does not run. The load modes (burst,
 * spin, idle) are arm64's (../noise.c): asked for here, they are refused with an error line.
 */
#include "bootargs.h"
#include "console.h"
#include "riscv.h"
#include "runtime.h"
#include "timer.h"

#include "../slices.h"

const char guest_name[] = "noise";

#define NO_END UINT64_MAX

/* us * freq / 1e6 without overflowing for long runs. */
static uint64_t ticks_from_us(uint64_t us)
{
	uint64_t freq = timer_freq();
	return us / 1000000 * freq + us % 1000000 * freq / 1000000;
}

/* The end as arm64's noise takes it: noise.seconds from the start, noise.until_us absolute. */
static uint64_t read_end(void)
{
	uint64_t start = counter_time();
	uint64_t end = NO_END;
	unsigned long seconds = bootarg_ulong("noise.seconds", 0, 0, 10000000);
	unsigned long until_us = bootarg_ulong("noise.until_us", 0, 0, 1000000000000UL);

	if (seconds)
		end = start + seconds * timer_freq();
	if (until_us && ticks_from_us(until_us) < end)
		end = ticks_from_us(until_us);
	return end;
}

void guest_main(void)
{
	struct strview mode = { "burst", 5 };

	(void)bootarg("noise.mode", &mode);
	if (!strview_eq(mode, "slices")) {
		printf("NOISE-JSON {\"mode\":\"");
		print_strview(mode);
		printf("\",\"error\":\"riscv64's noise has only noise.mode=slices\"}\n");
		printf("NOISE-DONE\n");
		return;
	}
	irq_disable();
	slices_start(read_end(), "time");
	printf("NOISE-DONE\n");
}
