#include "channel.h"

#include "bootargs.h"
#include "channel_arch.h"
#include "fdt.h"
#include "mmio.h"

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

enum channel_lookup channel_by_bootarg(const char *key, struct channel *ch)
{
	struct strview name;
	char buf[CHANNEL_NAME_LEN];
	size_t i;

	if (!bootarg(key, &name) || !name.len || name.len >= sizeof(buf))
		return CHANNEL_UNNAMED;
	for (i = 0; i < name.len; i++)
		buf[i] = name.p[i];
	buf[i] = '\0';
	return channel_find(buf, ch) ? CHANNEL_FOUND : CHANNEL_ABSENT;
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
