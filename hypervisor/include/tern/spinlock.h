/* SPDX-License-Identifier: MIT */
/*
 * A ticket lock: waiters are served in arrival order, so a core that keeps taking a lock
 * cannot starve another (a test-and-set lock can).  The worst wait for a lock is then one
 * critical section per other core that may take it; docs/design.md lists every lock, who
 * takes it and that bound.  Only slow paths lock; the interrupt path never does.
 */
#ifndef TERN_SPINLOCK_H
#define TERN_SPINLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <tern/arch.h>

struct spinlock {
	_Atomic unsigned next;    /* the ticket the next arrival takes */
	_Atomic unsigned serving; /* the ticket that holds the lock */
};

#define SPINLOCK_INIT { 0, 0 }

static inline void spin_lock_init(struct spinlock *l)
{
	atomic_store_explicit(&l->next, 0, memory_order_relaxed);
	atomic_store_explicit(&l->serving, 0, memory_order_relaxed);
}

static inline void spin_lock(struct spinlock *l)
{
	unsigned ticket = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);

	while (atomic_load_explicit(&l->serving, memory_order_acquire) != ticket)
		arch_cpu_relax();
}

/* Take the lock only if nobody holds or waits for it. */
static inline bool spin_trylock(struct spinlock *l)
{
	unsigned ticket = atomic_load_explicit(&l->serving, memory_order_relaxed);

	return atomic_compare_exchange_strong_explicit(&l->next, &ticket, ticket + 1,
						       memory_order_acquire, memory_order_relaxed);
}

static inline void spin_unlock(struct spinlock *l)
{
	unsigned next = atomic_load_explicit(&l->serving, memory_order_relaxed) + 1;

	atomic_store_explicit(&l->serving, next, memory_order_release);
}

#endif
