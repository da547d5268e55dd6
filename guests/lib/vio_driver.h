/*
 * A minimal virtio-mmio driver (VirtIO 1.2, 4.2, version 2 registers; split virtqueues) for the
 * bare-metal guests: one device, one queue with its rings in the guest's own RAM, no interrupt
 * (the caller's wait polls the used ring, reading InterruptStatus: under Tern that read is what
 * takes the backend's completions). It touches nothing but the transport's registers and the
 * rings and buffers it is given. The hostile guest (guests/hostile/virtio) also uses it to
 * break the rules on purpose, so the rings are open to its caller.
 */
#ifndef GUEST_VIO_DRIVER_H
#define GUEST_VIO_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

/* Registers (4.2.2). */
#define VIRTIO_MMIO_MAGIC               0x000u
#define VIRTIO_MMIO_VERSION             0x004u
#define VIRTIO_MMIO_DEVICE_ID           0x008u
#define VIRTIO_MMIO_DEVICE_FEATURES     0x010u
#define VIRTIO_MMIO_DEVICE_FEATURES_SEL 0x014u
#define VIRTIO_MMIO_DRIVER_FEATURES     0x020u
#define VIRTIO_MMIO_DRIVER_FEATURES_SEL 0x024u
#define VIRTIO_MMIO_QUEUE_SEL           0x030u
#define VIRTIO_MMIO_QUEUE_NUM_MAX       0x034u
#define VIRTIO_MMIO_QUEUE_NUM           0x038u
#define VIRTIO_MMIO_QUEUE_READY         0x044u
#define VIRTIO_MMIO_QUEUE_NOTIFY        0x050u
#define VIRTIO_MMIO_INTERRUPT_STATUS    0x060u
#define VIRTIO_MMIO_INTERRUPT_ACK       0x064u
#define VIRTIO_MMIO_STATUS              0x070u
#define VIRTIO_MMIO_QUEUE_DESC_LOW      0x080u
#define VIRTIO_MMIO_QUEUE_DESC_HIGH     0x084u
#define VIRTIO_MMIO_QUEUE_DRIVER_LOW    0x090u
#define VIRTIO_MMIO_QUEUE_DRIVER_HIGH   0x094u
#define VIRTIO_MMIO_QUEUE_DEVICE_LOW    0x0a0u
#define VIRTIO_MMIO_QUEUE_DEVICE_HIGH   0x0a4u
#define VIRTIO_MMIO_CONFIG              0x100u
#define VIRTIO_MMIO_REGS_SIZE           0x200u

#define VIRTIO_MMIO_MAGIC_VALUE         0x74726976u     /* "virt" */

/* Device status bits (2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE       0x01u
#define VIRTIO_STATUS_DRIVER            0x02u
#define VIRTIO_STATUS_DRIVER_OK         0x04u
#define VIRTIO_STATUS_FEATURES_OK       0x08u
#define VIRTIO_STATUS_NEEDS_RESET       0x40u
#define VIRTIO_STATUS_FAILED            0x80u

#define VIRTIO_F_VERSION_1_HIGH         1u      /* bit 32: bit 0 of feature word 1 */

/* Descriptor flags (2.7.5). */
#define VIRTQ_DESC_F_NEXT               1u
#define VIRTQ_DESC_F_WRITE              2u

#define VIO_DRV_QUEUE_SIZE              8u      /* what this driver asks for */

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct virtq_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[VIO_DRV_QUEUE_SIZE];
	uint16_t used_event;
};

struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
};

struct virtq_used {
	uint16_t flags;
	uint16_t idx;
	struct virtq_used_elem ring[VIO_DRV_QUEUE_SIZE];
	uint16_t avail_event;
};

/* The queue's rings, placed by the caller in its RAM (alignment as 2.7 asks, and more). */
struct vio_rings {
	struct virtq_desc desc[VIO_DRV_QUEUE_SIZE] __attribute__((aligned(64)));
	struct virtq_avail avail __attribute__((aligned(64)));
	struct virtq_used used __attribute__((aligned(64)));
};

struct vio_drv {
	uintptr_t regs;
	uint32_t device_id;
	struct vio_rings *rings;
	uint16_t avail_idx;             /* the driver's next available index */
	uint16_t last_used;             /* used entries taken so far */
	/* Called between looks at the used ring: a bounded sleep (WFI) of the caller's. */
	void (*pause)(void);
};

/* The first `virtio,mmio` node of the device tree with a device behind it (DeviceID not 0). */
bool vio_drv_find(struct vio_drv *d);

/*
 * Reset, ACKNOWLEDGE, DRIVER, the device's features intersected with `want` (VERSION_1 always
 * asked), FEATURES_OK read back, queue 0 of VIO_DRV_QUEUE_SIZE on `rings`, DRIVER_OK.
 * Returns 0, or why not.
 */
const char *vio_drv_setup(struct vio_drv *d, struct vio_rings *rings, uint32_t want_low);

uint32_t vio_drv_read(const struct vio_drv *d, uint32_t reg);
void vio_drv_write(const struct vio_drv *d, uint32_t reg, uint32_t value);
uint32_t vio_drv_status(const struct vio_drv *d);
/* Status 0; the driver's indices restart with the device's. */
void vio_drv_reset(struct vio_drv *d);

/* Make chain `head` available (release order) and notify queue 0. */
void vio_drv_submit(struct vio_drv *d, uint16_t head);

/*
 * Wait at most `us` microseconds for the next used entry: true with its id and length. Each
 * look reads InterruptStatus (and acknowledges what it says) before the used index.
 */
bool vio_drv_wait_used(struct vio_drv *d, uint64_t us, uint32_t *id, uint32_t *len);

/* A virtio-blk request chain at descriptors 0..2: header, `data` (len bytes), status byte. */
void vio_blk_chain(struct vio_drv *d, void *header, void *data, uint32_t len, uint8_t *status,
		   bool device_writes_data);

#endif
