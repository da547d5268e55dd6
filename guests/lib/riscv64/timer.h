/*
 * Time on riscv64: the `time` CSR at the device tree's timebase-frequency (10 MHz on the
 * board), the supervisor timer through Sstc's stimecmp where the hart has it (else SBI
 * set_timer), and the `cycle` CSR.
 */
#ifndef GUEST_RISCV_TIMER_H
#define GUEST_RISCV_TIMER_H

#include "riscv.h"

/* Reads the timebase and whether this hart has Sstc; stops this hart's timer. */
void timer_init(void);
uint64_t timer_freq(void);
bool timer_has_sstc(void);

static inline uint64_t counter_time(void)
{
	return csr_read(CSR_TIME);
}

/* The board's physical counter, the same name on every port (guests/noise/slices.c). */
static inline uint64_t counter_board(void)
{
	return counter_time();
}

static inline uint64_t counter_cycle(void)
{
	return csr_read(CSR_CYCLE);
}

/* The supervisor timer, by stimecmp (Sstc) or else SBI; ~0 stops it. */
void timer_arm(uint64_t deadline);
void timer_stop(void);

static inline uint64_t us_to_ticks(uint64_t us)
{
	return us * timer_freq() / 1000000;
}

/* For bounded waits: a `time` deadline `us` from now. */
static inline uint64_t deadline_after_us(uint64_t us)
{
	return counter_time() + us_to_ticks(us);
}

static inline bool deadline_passed(uint64_t deadline)
{
	return counter_time() >= deadline;
}

/*
 * WFI until `time` reaches `deadline`, woken by the supervisor timer with interrupts masked
 * (sstatus.SIE stays 0: WFI ends on a pending enabled interrupt without taking it), so no
 * handler is involved and no wake-up can be lost. Only the timer is enabled meanwhile; sie is
 * as it was afterwards.
 */
void timer_sleep_until(uint64_t deadline);

#endif
