#include "channel.h"

#include "channel_arch.h"
#include "fdt.h"
#include "mmio.h"

#define QUEUE_HEAD      0x00
#define QUEUE_READY     0x04
#define QUEUE_TAIL      0x40
#define QUEUE_SLOTS     0x80

/* Whether the string in s[0..len) is `name`. */
static bool name_is(const char *s, uint32_t len, const char *name)
{
	uint32_t i;

	for (i = 0; i < len && s[i] && name[i] && s[i] == name[i]; i++)
		;
	return i < len && s[i] == '\0' && name[i] == '\0';
}

/* The node's `reg` as two (address, size) pairs of the parent's cells. */
static bool read_reg(int node, uint64_t *shm, uint64_t *size, uint64_t *doorbell)
{
	int parent = fdt_parent(node);
	uint32_t ac = fdt_node_u32(parent, "#address-cells", 2);
	uint32_t sc = fdt_node_u32(parent, "#size-cells", 1);
	uint32_t len;
	const uint8_t *reg = fdt_node_prop(node, "reg", &len);

	if (!reg || ac < 1 || ac > 2 || sc < 1 || sc > 2 || len < 8 * (ac + sc))
		return false;
	*shm = fdt_read_cells(reg, ac);
	*size = fdt_read_cells(reg + 4 * ac, sc);
	*doorbell = fdt_read_cells(reg + 4 * (ac + sc), ac);
	return true;
}

/* The channel described by `node`, whose tern,name is in name[0..name_len). */
static bool read_channel(int node, const char *name, uint32_t name_len, struct channel *ch)
{
	uint32_t list_len, count = 0, i;
	const char *list = fdt_node_prop(node, "tern,members", &list_len);
	uint64_t shm, size, doorbell;

	if (!list || !read_reg(node, &shm, &size, &doorbell) || !channel_node_irq(node, &ch->irq))
		return false;
	/* tern,members: NUL-terminated names, one per member. */
	for (i = 0; i < list_len; i++)
		if (list[i] == '\0')
			count++;
	ch->self = fdt_node_u32(node, "tern,member", UINT32_MAX);
	ch->members = count;
	if (ch->self >= count)
		return false;
	for (i = 0; i + 1 < CHANNEL_NAME_LEN && i < name_len && name[i]; i++)
		ch->name[i] = name[i];
	ch->name[i] = '\0';
	ch->shm = (uintptr_t)shm;
	ch->size = size;
	ch->doorbell = (uintptr_t)doorbell;
	ch->readonly = fdt_node_prop(node, "tern,readonly", 0) != 0;
	return true;
}

int channel_next(int after, struct channel *ch)
{
	for (int node = fdt_find_compatible(after, "tern,channel"); node != FDT_NONE;
	     node = fdt_find_compatible(node, "tern,channel")) {
		uint32_t len;
		const char *prop = fdt_node_prop(node, "tern,name", &len);

		if (prop && read_channel(node, prop, len, ch))
			return node;
	}
	return FDT_NONE;
}

bool channel_find(const char *name, struct channel *ch)
{
	for (int node = channel_next(FDT_NONE, ch); node != FDT_NONE;
	     node = channel_next(node, ch))
		if (name_is(ch->name, CHANNEL_NAME_LEN, name))
			return true;
	return false;
}

void channel_ring(const struct channel *ch, uint32_t member)
{
	/* What was published before the ring must be visible when the receiver wakes. */
	channel_barrier();
	mmio_write32(ch->doorbell + CHANNEL_DB_RING, member);
}

uint32_t channel_self(const struct channel *ch)
{
	return mmio_read32(ch->doorbell + CHANNEL_DB_SELF);
}

uint32_t channel_members(const struct channel *ch)
{
	return mmio_read32(ch->doorbell + CHANNEL_DB_MEMBERS);
}

static void queue_at(struct channel_queue *q, uintptr_t base, uint64_t bytes)
{
	uint64_t slots = 1;

	while (QUEUE_SLOTS + 2 * slots * CHANNEL_MSG_SIZE <= bytes)
		slots *= 2;
	q->head = (volatile uint32_t *)(base + QUEUE_HEAD);
	q->ready = (volatile uint32_t *)(base + QUEUE_READY);
	q->tail = (volatile uint32_t *)(base + QUEUE_TAIL);
	q->slots = (volatile uint64_t *)(base + QUEUE_SLOTS);
	q->mask = (uint32_t)(slots - 1);
}

bool channel_open(const struct channel *ch, struct channel_queue *tx, struct channel_queue *rx)
{
	uint64_t half = ch->size / 2;

	if (ch->readonly || ch->self > 1 || half < QUEUE_SLOTS + CHANNEL_MSG_SIZE)
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
