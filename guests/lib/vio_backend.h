/*
 * A VirtIO device's backend, as a partition serves it over its virtio channel
 * (tern/virtio_channel.h): the channel's checks, the request and completion rings, and the
 * devices (blk against a disk in memory, console output by lines, vsock's echo: vio_vsock.c),
 * in either data mode: the bytes in the slots (mediated copy) or, for a trusted device, in the
 * frontend's buffers the slots list (segments), reached through the window the hypervisor
 * maps. No hardware here and no
 * printing: the bare-metal backend (vback/) waits for its doorbell and prints, and the host
 * test (tests/unit/test_vio_backend.c) runs the same code over a buffer.
 */
#ifndef GUEST_VIO_BACKEND_H
#define GUEST_VIO_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include <tern/virtio_channel.h>

#include "vio_vsock.h"

/* Device IDs (VirtIO 1.2, 5), as tern_config_virtio.device_id and the header carry them. */
#define VIRTIO_ID_NET           1u
#define VIRTIO_ID_BLK           2u
#define VIRTIO_ID_CONSOLE       3u

/* virtio-blk (VirtIO 1.2, 5.2): request types, status bytes, the header's size. */
#define VIRTIO_BLK_T_IN         0u
#define VIRTIO_BLK_T_OUT        1u
#define VIRTIO_BLK_T_GET_ID     8u
#define VIRTIO_BLK_S_OK         0u
#define VIRTIO_BLK_S_IOERR      1u
#define VIRTIO_BLK_S_UNSUPP     2u
#define VIRTIO_BLK_HEADER       16u
#define VIRTIO_BLK_ID_BYTES     20u
#define VIRTIO_BLK_SECTOR       512u
/* What the backend offers in its config space, and so what a chain's data may span. */
#define VIO_BLK_SIZE_MAX        4096u
#define VIO_BLK_SEG_MAX         7u

#define VIO_CONSOLE_RECEIVEQ    0u
#define VIO_CONSOLE_TRANSMITQ   1u
#define VIO_NAME_LEN            16u     /* with its NUL, as a channel's name */
#define VIO_LINE_MAX            120u    /* a longer console line is cut into pieces */

struct vio_backend;
/* A whole console line (without its newline), or a vsock device's "vsock PORT: LINE", for
 * the backend's owner to print. */
typedef void (*vio_line_fn)(struct vio_backend *b, const char *line);

struct vio_backend {
	uint8_t *shm;                   /* the channel, as the backend maps it */
	uint64_t size;
	char name[VIO_NAME_LEN];
	uint32_t device_id;             /* VIRTIO_ID_* as the header says, once started */
	uint32_t num_queues, queue_size, slot_size;
	/*
	 * VIO_MODE_* as the header says, once started. Segments (a trusted device): the frontend's
	 * RAM is at window_ipa in this partition's map, window_size bytes, and at `window` here:
	 * set by the caller where its map is not the identity (a host test), else by the start.
	 */
	uint32_t data_mode;
	uint64_t window_ipa, window_size;
	uint8_t *window;
	/* blk: the disk it serves (OUT writes it). */
	uint8_t *disk;
	uint64_t disk_size;
	/* console */
	vio_line_fn line_out;
	char line[VIO_LINE_MAX + 1];
	uint32_t line_len;
	/* The receiveq buffers it holds (it has no input), and the epoch they are of. */
	uint32_t held, held_epoch;
	/* vsock */
	struct vio_vsock vsock;
	/* counters */
	uint64_t served;                /* completions posted */
	uint64_t garbage;               /* requests skipped: the slot, queue or segments are not ones */
	uint64_t stale;                 /* requests of an epoch before the current one, dropped */
	void *owner;                    /* the caller's, untouched */
};

/* Expected shape and size of a channel for device `device_id`; false for a type not served. */
bool vio_shape(uint32_t device_id, uint32_t *queues, uint32_t *queue_size, uint32_t *slot_size);

/*
 * Check the channel's header (magic, version, a device type served here, its shape and that
 * the channel holds it) and, with the device's config space written (blk: capacity from
 * disk_size, size_max, seg_max) and config_generation bumped, set backend_ready. The disk
 * (blk) and line_out (console) are set by the caller before. Returns 0, or why not.
 */
const char *vio_backend_start(struct vio_backend *b);

/*
 * Serve every request posted since the last call, in ring order, until the completion ring
 * has no room: returns how many completions it posted (ring the frontend once if any).
 */
uint32_t vio_backend_poll(struct vio_backend *b);

/* Whether requests are waiting (the hypervisor's prod moved past the backend's cons). */
bool vio_backend_pending(const struct vio_backend *b);

#endif
