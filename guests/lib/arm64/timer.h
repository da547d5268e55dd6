/* The EL1 generic timers: virtual (CNTV_*, PPI 27) and physical (CNTP_*, PPI 30). */
#ifndef GUEST_TIMER_H
#define GUEST_TIMER_H

#include "arm64.h"

#define CNT_CTL_ENABLE  (1u << 0)
#define CNT_CTL_IMASK   (1u << 1)
#define CNT_CTL_ISTATUS (1u << 2)

static inline uint64_t timer_freq(void)
{
	return read_sysreg(cntfrq_el0);
}

/* The isb keeps the read from being hoisted above earlier instructions. */
static inline uint64_t counter_virt(void)
{
	isb();
	return read_sysreg(cntvct_el0);
}

static inline uint64_t counter_phys(void)
{
	isb();
	return read_sysreg(cntpct_el0);
}

/*
 * The board's physical counter, the same name on every port (guests/noise/slices.c): one
 * time for all the vCPUs of a core, whatever their virtual offsets.
 */
static inline uint64_t counter_board(void)
{
	return counter_phys();
}

static inline void vtimer_arm(uint64_t deadline)
{
	write_sysreg(cntv_cval_el0, deadline);
	write_sysreg(cntv_ctl_el0, CNT_CTL_ENABLE);
	isb();
}

static inline void vtimer_stop(void)
{
	write_sysreg(cntv_ctl_el0, 0);
	isb();
}

static inline void ptimer_arm(uint64_t deadline)
{
	write_sysreg(cntp_cval_el0, deadline);
	write_sysreg(cntp_ctl_el0, CNT_CTL_ENABLE);
	isb();
}

static inline void ptimer_stop(void)
{
	write_sysreg(cntp_ctl_el0, 0);
	isb();
}

static inline uint64_t us_to_ticks(uint64_t us)
{
	return us * timer_freq() / 1000000;
}

/* For bounded waits: a virtual-counter deadline `us` from now. */
static inline uint64_t deadline_after_us(uint64_t us)
{
	return counter_virt() + us_to_ticks(us);
}

static inline bool deadline_passed(uint64_t deadline)
{
	return counter_virt() >= deadline;
}

/*
 * Wait until *counter (bumped by an interrupt handler) reaches target, at most us; false on
 * timeout. Spin, not WFI: a wake-up between the test and the WFI would otherwise be lost.
 */
static inline bool wait_count(volatile uint32_t *counter, uint32_t target, uint64_t us)
{
	uint64_t deadline = deadline_after_us(us);

	while (*counter < target)
		if (deadline_passed(deadline))
			return false;
	return true;
}

/*
 * The same with a YIELD in the loop, for waits on another CPU: under QEMU's icount the cores
 * run in turns, and with no timer armed anywhere a core spinning without it never lets the
 * one it waits for run.
 */
static inline bool wait_count_yield(volatile uint32_t *counter, uint32_t target, uint64_t us)
{
	uint64_t deadline = deadline_after_us(us);

	while (*counter < target) {
		if (deadline_passed(deadline))
			return false;
		cpu_relax();
	}
	return true;
}

/*
 * WFI until the virtual counter reaches `deadline`, woken by a one-shot virtual timer; IRQs are
 * masked on entry and exit and unmasked only between the test and the next WFI, so a wake-up
 * cannot be lost. The caller's IRQ handler must stop or re-arm the timer.
 */
static inline void vtimer_sleep_until(uint64_t deadline)
{
	vtimer_arm(deadline);
	while (counter_virt() < deadline) {
		wfi();
		irq_enable();
		irq_disable();
	}
	vtimer_stop();
}

#endif
