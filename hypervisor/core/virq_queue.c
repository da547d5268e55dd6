/* SPDX-License-Identifier: MIT */
#include <tern/lib.h>
#include <tern/virq_queue.h>

void virq_queue_init(struct virq_queue *q)
{
	(void)memset(q, 0, sizeof(*q));
}

void virq_queue_move(struct virq_queue *dst, struct virq_queue *src)
{
	/*
	 * The common case, both empty: a queue's count is 0 only with no pending bit (push and
	 * remove keep them together), so there is nothing to move or drop.
	 */
	if (src->count == 0u) {
		if (dst->count != 0u) {
			for (uint32_t w = 0; w < VIRQ_MAX / 64; w++)
				dst->pending[w] = 0;
			dst->count = 0;
		}
		return;
	}
	/* prio[] is read only where pending[] has the bit: only those entries travel. */
	for (uint32_t w = 0; w < VIRQ_MAX / 64; w++) {
		uint64_t bits = src->pending[w];
		dst->pending[w] = bits;
		src->pending[w] = 0;
		for (; bits; bits &= bits - 1u) {
			uint32_t id = w * 64u + (uint32_t)__builtin_ctzll(bits);
			dst->prio[id] = src->prio[id];
		}
	}
	dst->count = src->count;
	src->count = 0;
}

bool virq_queue_contains(const struct virq_queue *q, uint32_t irq)
{
	return irq < VIRQ_MAX && (q->pending[irq / 64] & BIT(irq % 64));
}

void virq_queue_push(struct virq_queue *q, uint32_t irq, uint8_t prio)
{
	if (irq >= VIRQ_MAX)
		return;
	if (!virq_queue_contains(q, irq)) {
		q->pending[irq / 64] |= BIT(irq % 64);
		q->count++;
	}
	q->prio[irq] = prio;
}

bool virq_queue_remove(struct virq_queue *q, uint32_t irq)
{
	if (!virq_queue_contains(q, irq))
		return false;
	q->pending[irq / 64] &= ~BIT(irq % 64);
	q->count--;
	return true;
}

/* Linear in the number of queued interrupts: this runs only when list registers overflow. */
bool virq_queue_peek(const struct virq_queue *q, uint32_t *irq, uint8_t *prio)
{
	uint32_t best = VIRQ_MAX;
	uint8_t best_prio = UINT8_MAX;

	if (!q->count)
		return false;
	for (uint32_t w = 0; w < VIRQ_MAX / 64; w++) {
		uint64_t bits = q->pending[w];
		while (bits) {
			uint32_t id = w * 64 + (uint32_t)__builtin_ctzll(bits);
			bits &= bits - 1;
			if (best == VIRQ_MAX || q->prio[id] < best_prio) {
				best = id;
				best_prio = q->prio[id];
			}
		}
	}
	*irq = best;
	*prio = best_prio;
	return true;
}

bool virq_queue_pop(struct virq_queue *q, uint32_t *irq, uint8_t *prio)
{
	if (!virq_queue_peek(q, irq, prio))
		return false;
	(void)virq_queue_remove(q, *irq);
	return true;
}
