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

static inline void spin_lock(struct spinlock *l)
{
	while (atomic_flag_test_and_set_explicit(&l->held, memory_order_acquire))
		;
}

static inline void spin_unlock(struct spinlock *l)
{
	atomic_flag_clear_explicit(&l->held, memory_order_release);
}

#endif
