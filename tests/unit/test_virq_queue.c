/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <tern/virq_queue.h>
#include "check.h"
#include "tests.h"

void test_virq_queue_orders_by_priority_then_intid(void)
{
	static struct virq_queue q;
	uint32_t id;
	uint8_t prio;

	virq_queue_init(&q);
	virq_queue_push(&q, 40, 0xa0);
	virq_queue_push(&q, 3, 0x80);
	virq_queue_push(&q, 900, 0x10);
	virq_queue_push(&q, 27, 0x80);
	virq_queue_push(&q, 5, 0xf0);
	CHECK_EQ(q.count, 5);

	static const uint32_t order[] = { 900, 3, 27, 40, 5 };
	for (unsigned i = 0; i < 5; i++) {
		CHECK(virq_queue_pop(&q, &id, &prio));
		CHECK_EQ(id, order[i]);
	}
	CHECK(!virq_queue_pop(&q, &id, &prio));
	CHECK(virq_queue_empty(&q));
}

void test_virq_queue_push_is_idempotent(void)
{
	static struct virq_queue q;
	uint32_t id;
	uint8_t prio;

	virq_queue_init(&q);
	virq_queue_push(&q, 10, 0x80);
	virq_queue_push(&q, 10, 0x20);
	CHECK_EQ(q.count, 1);
	CHECK(virq_queue_peek(&q, &id, &prio));
	CHECK_EQ(id, 10);
	CHECK_EQ(prio, 0x20);
}

void test_virq_queue_remove(void)
{
	static struct virq_queue q;
	uint32_t id;
	uint8_t prio;

	virq_queue_init(&q);
	virq_queue_push(&q, 64, 0x10);
	virq_queue_push(&q, 65, 0x20);
	CHECK(virq_queue_remove(&q, 64));
	CHECK(!virq_queue_remove(&q, 64));
	CHECK(!virq_queue_contains(&q, 64));
	CHECK(virq_queue_pop(&q, &id, &prio));
	CHECK_EQ(id, 65);
}

void test_virq_queue_bounds(void)
{
	static struct virq_queue q;

	virq_queue_init(&q);
	virq_queue_push(&q, VIRQ_MAX, 0);
	virq_queue_push(&q, 0xffffffffu, 0);
	CHECK_EQ(q.count, 0);
	CHECK(!virq_queue_contains(&q, VIRQ_MAX));
	CHECK(!virq_queue_remove(&q, VIRQ_MAX + 5));
	virq_queue_push(&q, VIRQ_MAX - 1, 7);
	CHECK(virq_queue_contains(&q, VIRQ_MAX - 1));
}

void test_virq_queue_move_carries_every_entry_and_empties_the_source(void)
{
	static struct virq_queue src, dst;
	uint32_t id;
	uint8_t prio;

	virq_queue_init(&src);
	/* dst as a context never written: garbage everywhere, a stale count. */
	(void)memset(&dst, 0xa5, sizeof(dst));
	virq_queue_push(&src, 1000, 0x10);
	virq_queue_push(&src, 64, 0x80);
	virq_queue_push(&src, 3, 0x40);
	virq_queue_move(&dst, &src);
	CHECK(virq_queue_empty(&src));
	CHECK(!virq_queue_peek(&src, &id, &prio));
	for (uint32_t w = 0; w < VIRQ_MAX / 64; w++)
		CHECK_EQ(src.pending[w], 0);
	CHECK_EQ(dst.count, 3);
	static const uint32_t order[] = { 1000, 3, 64 };
	static const uint8_t prios[] = { 0x10, 0x40, 0x80 };
	for (unsigned i = 0; i < 3; i++) {
		CHECK(virq_queue_pop(&dst, &id, &prio));
		CHECK_EQ(id, order[i]);
		CHECK_EQ(prio, prios[i]);
	}
	CHECK(virq_queue_empty(&dst));
	/* And back: an empty source empties the destination. */
	virq_queue_push(&dst, 7, 1);
	virq_queue_move(&dst, &src);
	CHECK(virq_queue_empty(&dst) && !virq_queue_contains(&dst, 7));
}
