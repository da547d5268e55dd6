/* SPDX-License-Identifier: MIT */
/*
 * Virtual interrupts that are pending but have no injection slot yet (arm64: a GIC list
 * register).  Served strictly by priority (lower value first), then by number, so a
 * guest sees the same order as with an unlimited number of slots.
 */
#ifndef TERN_VIRQ_QUEUE_H
#define TERN_VIRQ_QUEUE_H

#include <tern/types.h>

#define VIRQ_MAX 1024u

struct virq_queue {
	uint64_t pending[VIRQ_MAX / 64];
	uint8_t prio[VIRQ_MAX];
	uint32_t count;
};

void virq_queue_init(struct virq_queue *q);
/*
 * dst takes what src holds and src is left empty, in time linear in the queued interrupts
 * rather than the queue's size (a vCPU switch moves the core's queue).  dst's previous
 * contents are dropped; an empty dst must be a queue (virq_queue_init, or emptied by a move
 * or pops), not memory never written: with a count of 0 it is taken as all clear.
 */
void virq_queue_move(struct virq_queue *dst, struct virq_queue *src);
/* Adding an interrupt already queued keeps one entry, at the new priority. */
void virq_queue_push(struct virq_queue *q, uint32_t irq, uint8_t prio);
bool virq_queue_peek(const struct virq_queue *q, uint32_t *irq, uint8_t *prio);
bool virq_queue_pop(struct virq_queue *q, uint32_t *irq, uint8_t *prio);
bool virq_queue_remove(struct virq_queue *q, uint32_t irq);
bool virq_queue_contains(const struct virq_queue *q, uint32_t irq);

static inline bool virq_queue_empty(const struct virq_queue *q)
{
	return q->count == 0;
}

#endif
