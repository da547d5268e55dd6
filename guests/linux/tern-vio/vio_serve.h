/*
 * The backend's side of a VirtIO channel (tern/virtio_channel.h), with no system calls: the
 * rings, the config space, and the virtio-blk and virtio-net requests. tern-vio.c gives it
 * the channel's memory and its file or tap through `struct vio_ops`; the host test
 * (tests/tool/test_tern_vio.py) gives it a channel in ordinary memory.
 */
#ifndef TERN_VIO_SERVE_H
#define TERN_VIO_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "tern/virtio_channel.h"

#define VIRTIO_ID_NET           1u
#define VIRTIO_ID_BLK           2u

/* virtio-blk's request types and status byte (VirtIO 1.2, 5.2.6). */
#define VIRTIO_BLK_T_IN         0u
#define VIRTIO_BLK_T_OUT        1u
#define VIRTIO_BLK_T_GET_ID     8u
#define VIRTIO_BLK_S_OK         0u
#define VIRTIO_BLK_S_IOERR      1u
#define VIRTIO_BLK_S_UNSUPP     2u
#define VIRTIO_BLK_OUTHDR       16u     /* type, reserved, sector */
#define VIRTIO_BLK_ID_BYTES     20u
#define VIO_BLK_SIZE_MAX        4096u
#define VIO_BLK_SEG_MAX         7u
#define VIO_SECTOR              512u

/* virtio-net: the receiveq and transmitq, and the header without offloads (VERSION_1). */
#define VIO_NET_RXQ             0u
#define VIO_NET_TXQ             1u
#define VIO_NET_HDR             12u
#define VIO_NET_NUM_BUFFERS_AT  10u

struct vio_ops {
	void *ctx;
	/* blk: the disk, `sectors` of 512 bytes; false on an I/O error. */
	uint64_t sectors;
	const char *id;                         /* GET_ID's answer */
	bool (*read_at)(void *ctx, uint64_t offset, void *buf, uint32_t n);
	bool (*write_at)(void *ctx, uint64_t offset, const void *buf, uint32_t n);
	/* net: a frame the frontend sent. */
	void (*tx)(void *ctx, const uint8_t *frame, uint32_t n);
};

struct vio_stats {
	uint64_t requests;              /* taken from the request ring */
	uint64_t completions;           /* posted */
	uint64_t garbage;               /* requests outside the channel's shape: skipped */
	uint64_t stale;                 /* requests of an earlier epoch: skipped */
	uint64_t malformed;             /* the frontend's requests too short for their type */
	uint64_t rx_dropped;            /* frames that found no held receive buffer, or too big */
	uint64_t ring_full;             /* completions with no room (a broken hypervisor) */
};

struct vio_dev {
	volatile uint8_t *shm;
	uint64_t size;
	uint32_t device_id, num_queues, queue_size, slot_size, entries;
	uint32_t req_cons;              /* the next request to take */
	uint32_t comp_prod;             /* the next completion's index */
	uint32_t posted;                /* completions since vio_take_posted */
	uint32_t epoch;                 /* the epoch the held buffers belong to */
	const char *first_garbage;      /* what the first garbage request was, for one report */
	struct vio_stats stats;
	/* net: receiveq requests waiting for a frame, oldest first. */
	struct vio_request held[VIO_NET_QUEUE_SIZE];
	uint32_t held_first, held_count;
	/* A slot's bytes, copied out of the channel and back: Linux maps BAR2 as device memory,
	 * which system calls must not be handed (unaligned accesses fault there). */
	_Alignas(8) uint8_t buf[VIO_BLK_SLOT_SIZE];
};

/* Check the channel's header against its type's fixed shape; an error or 0. */
const char *vio_open(struct vio_dev *d, volatile void *shm, uint64_t size, uint32_t device_id);
void vio_net_config(struct vio_dev *d, const uint8_t mac[6]);
void vio_blk_config(struct vio_dev *d, uint64_t sectors);
/* After the config space: bump config_generation, then set backend_ready. */
void vio_ready(struct vio_dev *d);
/* A locally administered unicast MAC, the same for the same name. */
void vio_mac_from_name(const char *name, uint8_t mac[6]);
/* Take every request posted so far and serve it (net rx: hold it); completions posted. */
uint32_t vio_serve(struct vio_dev *d, const struct vio_ops *ops);
/* A frame for the frontend into the oldest held receive buffer; false if dropped. */
bool vio_net_rx(struct vio_dev *d, const uint8_t *frame, uint32_t n);
/* Completions posted since the last call: the caller rings the frontend once if any. */
uint32_t vio_take_posted(struct vio_dev *d);

#endif
