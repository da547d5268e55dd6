/* SPDX-License-Identifier: MIT */
/*
 * Only slow paths take locks (console output, partition power changes);
 * the interrupt path never does.
 */
#ifndef TERN_SPINLOCK_H
#define TERN_SPINLOCK_H

#include <stdatomic.h>

struct spinlock {
	atomic_flag held;
};

#define SPINLOCK_INIT { ATOMIC_FLAG_INIT }

/*
 * A hint inside a wait loop (arm64: YIELD).  Under QEMU's icount every core runs in turn on
 * one thread, and a core that waits for another without it can keep that core from running.
 */
void arch_cpu_relax(void);

static inline void spin_lock(struct spinlock *l)
{
	while (atomic_flag_test_and_set_explicit(&l->held, memory_order_acquire))
		arch_cpu_relax();
}

static inline void spin_unlock(struct spinlock *l)
{
	atomic_flag_clear_explicit(&l->held, memory_order_release);
}

#endif
