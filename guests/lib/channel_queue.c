/*
 * The queues of channel.h, the ring protocol: no device tree and no doorbell, only the shared
 * memory and barriers, so that a member that is not a bare-metal guest (guests/linux/tern-chan,
 * a Linux program) links the same code.
 */
#include "channel.h"

#include "channel_arch.h"

static void queue_at(struct channel_queue *q, uintptr_t base, uint64_t bytes)
{
	uint64_t slots = 1;

	while (CHANNEL_QUEUE_SLOTS + 2 * slots * CHANNEL_MSG_SIZE <= bytes)
		slots *= 2;
	q->head = (volatile uint32_t *)(base + CHANNEL_QUEUE_HEAD);
	q->ready = (volatile uint32_t *)(base + CHANNEL_QUEUE_READY);
	q->tail = (volatile uint32_t *)(base + CHANNEL_QUEUE_TAIL);
	q->slots = (volatile uint64_t *)(base + CHANNEL_QUEUE_SLOTS);
	q->mask = (uint32_t)(slots - 1);
}

bool channel_open(const struct channel *ch, struct channel_queue *tx, struct channel_queue *rx)
{
	uint64_t half = ch->size / 2;

	if (ch->readonly || ch->self > 1 || half < CHANNEL_QUEUE_SLOTS + CHANNEL_MSG_SIZE)
		return false;
	queue_at(tx, ch->shm + ch->self * half, half);
	queue_at(rx, ch->shm + (1 - ch->self) * half, half);
	*tx->head = 0;
	*rx->tail = 0;
	channel_barrier();
	*tx->ready = CHANNEL_READY;
	channel_barrier();
	return true;
}

bool channel_peer_ready(const struct channel_queue *rx)
{
	bool ready = *rx->ready == CHANNEL_READY;

	channel_barrier();
	return ready;
}

bool channel_send(struct channel_queue *q, const struct channel_msg *msg)
{
	uint32_t head = *q->head;

	if (head - *q->tail > q->mask)
		return false;
	/* The tail read must complete before the slot it frees is overwritten. */
	channel_barrier();
	volatile uint64_t *slot = q->slots + (head & q->mask) * (CHANNEL_MSG_SIZE / 8);
	for (unsigned i = 0; i < CHANNEL_MSG_SIZE / 8; i++)
		slot[i] = msg->word[i];
	channel_barrier();
	*q->head = head + 1;
	return true;
}

bool channel_recv(struct channel_queue *q, struct channel_msg *msg)
{
	uint32_t tail = *q->tail;

	if (*q->head == tail)
		return false;
	channel_barrier();
	volatile const uint64_t *slot = q->slots + (tail & q->mask) * (CHANNEL_MSG_SIZE / 8);
	for (unsigned i = 0; i < CHANNEL_MSG_SIZE / 8; i++)
		msg->word[i] = slot[i];
	channel_barrier();
	*q->tail = tail + 1;
	return true;
}

uint32_t channel_queued(const struct channel_queue *q)
{
	uint32_t tail = *q->tail;

	channel_barrier();
	return *q->head - tail;
}
