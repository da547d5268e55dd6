/*
 * A minimal virtio-mmio driver for the bare-metal guests (vio_driver.h). The rings live in the
 * guest's RAM, which runs with its MMU off (or identity-mapped): the addresses given to the
 * device are the pointers themselves.
 */
#include "vio_driver.h"

#include "channel_arch.h"
#include "fdt.h"
#include "mmio.h"
#include "timer.h"

uint32_t vio_drv_read(const struct vio_drv *d, uint32_t reg)
{
	return mmio_read32(d->regs + reg);
}

void vio_drv_write(const struct vio_drv *d, uint32_t reg, uint32_t value)
{
	mmio_write32(d->regs + reg, value);
}

uint32_t vio_drv_status(const struct vio_drv *d)
{
	return vio_drv_read(d, VIRTIO_MMIO_STATUS);
}

bool vio_drv_find(struct vio_drv *d)
{
	for (int node = fdt_find_compatible(FDT_NONE, "virtio,mmio"); node != FDT_NONE;
	     node = fdt_find_compatible(node, "virtio,mmio")) {
		uint32_t len;
		const uint8_t *reg = fdt_node_prop(node, "reg", &len);

		/* Both boards describe their slots with two address and two size cells. */
		if (!reg || len < 16)
			continue;
		uintptr_t base = (uintptr_t)fdt_read_cells(reg, 2);
		if (mmio_read32(base + VIRTIO_MMIO_MAGIC) != VIRTIO_MMIO_MAGIC_VALUE)
			continue;
		uint32_t id = mmio_read32(base + VIRTIO_MMIO_DEVICE_ID);
		if (id == 0)
			continue;       /* an empty slot */
		d->regs = base;
		d->device_id = id;
		return true;
	}
	return false;
}

static void set_addr(const struct vio_drv *d, uint32_t low, const volatile void *p)
{
	uint64_t a = (uint64_t)(uintptr_t)p;

	vio_drv_write(d, low, (uint32_t)a);
	vio_drv_write(d, low + 4u, (uint32_t)(a >> 32));
}

void vio_drv_reset(struct vio_drv *d)
{
	vio_drv_write(d, VIRTIO_MMIO_STATUS, 0);
	d->avail_idx = 0;
	d->last_used = 0;
}

const char *vio_drv_setup(struct vio_drv *d, struct vio_rings *rings, uint32_t want_low)
{
	uint32_t status = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;

	if (vio_drv_read(d, VIRTIO_MMIO_VERSION) != 2)
		return "not a version 2 transport";
	vio_drv_reset(d);
	vio_drv_write(d, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
	vio_drv_write(d, VIRTIO_MMIO_STATUS, status);
	vio_drv_write(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	uint32_t high = vio_drv_read(d, VIRTIO_MMIO_DEVICE_FEATURES);
	vio_drv_write(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	uint32_t low = vio_drv_read(d, VIRTIO_MMIO_DEVICE_FEATURES);
	if (!(high & VIRTIO_F_VERSION_1_HIGH))
		return "VIRTIO_F_VERSION_1 not offered";
	vio_drv_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vio_drv_write(d, VIRTIO_MMIO_DRIVER_FEATURES, VIRTIO_F_VERSION_1_HIGH);
	vio_drv_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vio_drv_write(d, VIRTIO_MMIO_DRIVER_FEATURES, low & want_low);
	status |= VIRTIO_STATUS_FEATURES_OK;
	vio_drv_write(d, VIRTIO_MMIO_STATUS, status);
	if (!(vio_drv_status(d) & VIRTIO_STATUS_FEATURES_OK))
		return "FEATURES_OK refused";

	vio_drv_write(d, VIRTIO_MMIO_QUEUE_SEL, 0);
	if (vio_drv_read(d, VIRTIO_MMIO_QUEUE_READY) != 0)
		return "queue 0 already ready";
	if (vio_drv_read(d, VIRTIO_MMIO_QUEUE_NUM_MAX) < VIO_DRV_QUEUE_SIZE)
		return "queue 0 too small";
	uint8_t *bytes = (uint8_t *)rings;
	for (uint32_t i = 0; i < sizeof(*rings); i++)
		bytes[i] = 0;
	d->rings = rings;
	vio_drv_write(d, VIRTIO_MMIO_QUEUE_NUM, VIO_DRV_QUEUE_SIZE);
	set_addr(d, VIRTIO_MMIO_QUEUE_DESC_LOW, rings->desc);
	set_addr(d, VIRTIO_MMIO_QUEUE_DRIVER_LOW, &rings->avail);
	set_addr(d, VIRTIO_MMIO_QUEUE_DEVICE_LOW, &rings->used);
	channel_barrier();
	vio_drv_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
	if (vio_drv_read(d, VIRTIO_MMIO_QUEUE_READY) != 1)
		return "queue 0 refused";
	vio_drv_write(d, VIRTIO_MMIO_STATUS, status | VIRTIO_STATUS_DRIVER_OK);
	if (vio_drv_status(d) & VIRTIO_STATUS_NEEDS_RESET)
		return "device needs a reset";
	return 0;
}

void vio_drv_submit(struct vio_drv *d, uint16_t head)
{
	volatile struct virtq_avail *avail = &d->rings->avail;

	avail->ring[d->avail_idx % VIO_DRV_QUEUE_SIZE] = head;
	d->avail_idx++;
	/* The chain and its ring entry before the index; the index before the notify. */
	channel_barrier();
	avail->idx = d->avail_idx;
	channel_barrier();
	vio_drv_write(d, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
}

bool vio_drv_wait_used(struct vio_drv *d, uint64_t us, uint32_t *id, uint32_t *len)
{
	volatile struct virtq_used *used = &d->rings->used;
	uint64_t deadline = deadline_after_us(us);

	for (;;) {
		uint32_t pending = vio_drv_read(d, VIRTIO_MMIO_INTERRUPT_STATUS);

		if (pending)
			vio_drv_write(d, VIRTIO_MMIO_INTERRUPT_ACK, pending);
		if (used->idx != d->last_used) {
			channel_barrier();      /* the entry after the index */
			volatile struct virtq_used_elem *e = &used->ring[d->last_used % VIO_DRV_QUEUE_SIZE];
			*id = e->id;
			*len = e->len;
			d->last_used++;
			return true;
		}
		if (deadline_passed(deadline))
			return false;
		if (d->pause)
			d->pause();
		else
			cpu_relax();
	}
}

void vio_blk_chain(struct vio_drv *d, void *header, void *data, uint32_t len, uint8_t *status,
		   bool device_writes_data)
{
	volatile struct virtq_desc *desc = d->rings->desc;

	desc[0].addr = (uint64_t)(uintptr_t)header;
	desc[0].len = 16;
	desc[0].flags = VIRTQ_DESC_F_NEXT;
	desc[0].next = 1;
	desc[1].addr = (uint64_t)(uintptr_t)data;
	desc[1].len = len;
	desc[1].flags = VIRTQ_DESC_F_NEXT | (device_writes_data ? VIRTQ_DESC_F_WRITE : 0u);
	desc[1].next = 2;
	desc[2].addr = (uint64_t)(uintptr_t)status;
	desc[2].len = 1;
	desc[2].flags = VIRTQ_DESC_F_WRITE;
	desc[2].next = 0;
}
