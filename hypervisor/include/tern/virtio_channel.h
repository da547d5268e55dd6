/* SPDX-License-Identifier: MIT */
/*
 * How a VirtIO device's backend partition sees its device: the format of the channel the
 * hypervisor and the backend share (tern_config_virtio.channel).  The backend never sees the
 * frontend's virtqueues, nor (but in segments mode, below) its memory: on the frontend's core
 * the hypervisor walks a notified queue, checks each chain against the frontend's RAM, copies
 * the chain's driver-readable bytes into the chain's data slot and posts a request; the
 * backend serves it, writes the device-writable bytes into the same slot and posts a
 * completion; the hypervisor copies those into the chain's buffers, on the frontend's core,
 * when the frontend looks (its driver reads InterruptStatus, or notifies).  docs/design.md, "VirtIO devices served by another partition".
 *
 * Standalone (stdint only): the bare-metal backend (guests/) and Linux user-space backends
 * include it as it is.  Little-endian; indices free-running uint32_t, entry i of a ring at
 * entries + (i % VIO_RING_ENTRIES(h)) * 16.  Each index has one writer, on its own cache line.
 *
 *   0x0000  struct vio_header          the hypervisor's, but backend_ready / config_generation
 *   0x0100  config space                the backend's: what the frontend reads at 0x100 of its
 *                                       registers (virtio-blk: capacity, size_max, seg_max ...)
 *   0x1000  request ring                prod: the hypervisor's, cons (at +0x40): the backend's,
 *                                       entries (at +0x80): struct vio_request
 *   0x3000  completion ring             prod: the backend's, cons (at +0x40): the hypervisor's,
 *                                       entries (at +0x80): struct vio_completion
 *   0x5000  data slots                  slot of (queue q, head h): VIO_DATA + (q * queue_size
 *                                       + h) * slot_size bytes from the channel's start
 *
 * The header's data_mode says what a slot holds.  VIO_MODE_COPY (the default, the mediated
 * copy): the chain flattened, its driver-readable bytes at [0, readable), and the backend
 * writes the device-writable ones at [readable, readable + written), written <= writable.
 * VIO_MODE_SEGMENTS (backend_trusted: the backend maps all of the frontend's RAM, at
 * window_ipa in its own map, window_size bytes): the chain's scatter list, which the backend
 * reads and writes through itself, the hypervisor copying nothing:
 *
 *   +0x00  uint32_t count               segments that follow, at most the queue's size
 *   +0x04  reserved (0)
 *   +0x10  struct vio_segment[count]    in the chain's order, the driver-readable ones first:
 *                                       addr (in the backend's map, inside the window), len,
 *                                       flags (VIO_SEG_WRITABLE: device-writable)
 *
 * the readable segments' lengths adding up to `readable`, the writable ones' to `writable`;
 * the backend writes the device-writable bytes from the first writable segment on, in order,
 * and `written` counts them (<= writable).  The hypervisor checks every chain against the
 * frontend's RAM in both modes, so a segment never names anything else.
 * A request is outstanding from its post to the completion naming (queue, head, epoch); the
 * hypervisor refuses and counts a completion naming none, or writing more than `writable`.
 * The frontend's reset of the device (Status 0) bumps `epoch`: completions of requests posted
 * before it are dropped, and the backend should drop what it holds of them.
 *
 * Version 2: data_mode and the window (version 1 had copy mode only).
 */
#ifndef TERN_VIRTIO_CHANNEL_H
#define TERN_VIRTIO_CHANNEL_H

#include <stdint.h>

#define VIO_MAGIC               0x4f495654u     /* "TVIO" */
#define VIO_VERSION             2u
#define VIO_READY               0x59444552u     /* "REDY": backend_ready once it serves */

#define VIO_CONFIG              0x0100u         /* the device's config space, 256 bytes */
#define VIO_CONFIG_SIZE         0x0100u
#define VIO_REQUESTS            0x1000u
#define VIO_COMPLETIONS         0x3000u
#define VIO_RING_PROD           0x00u           /* offsets within a ring */
#define VIO_RING_CONS           0x40u
#define VIO_RING_ENTRIES_AT     0x80u
#define VIO_RING_ENTRY_SIZE     16u
#define VIO_DATA                0x5000u

/* vio_header.data_mode */
#define VIO_MODE_COPY           0u              /* a slot holds the data */
#define VIO_MODE_SEGMENTS       1u              /* a slot holds the scatter list (trusted) */
#define VIO_SEGMENTS_AT         0x10u           /* the first segment, from the slot's start */
#define VIO_SEG_WRITABLE        1u              /* vio_segment.flags: device-writable */

/* Each device type's fixed shape: the hypervisor's and `tern`'s (tools/tern/layout.py) agree. */
#define VIO_BLK_QUEUES          1u
#define VIO_BLK_QUEUE_SIZE      32u
#define VIO_BLK_SLOT_SIZE       0x8000u         /* the backend offers size_max 4096, seg_max 7 */
#define VIO_NET_QUEUES          2u              /* receiveq, transmitq */
#define VIO_NET_QUEUE_SIZE      64u
#define VIO_NET_SLOT_SIZE       0x800u          /* a 1518-byte frame and its 12-byte header */
#define VIO_CONSOLE_QUEUES      2u              /* receiveq, transmitq (port 0 only) */
#define VIO_CONSOLE_QUEUE_SIZE  64u
#define VIO_CONSOLE_SLOT_SIZE   0x1000u
/*
 * vsock: rx, tx, event. A slot holds a 44-byte virtio_vsock_hdr and its payload: Linux's rx
 * buffers are at most 4 KiB and the header (6.1 and 7.x), and a tx packet's payload is bounded
 * by the backend's advertised buf_alloc (4 KiB, the bare-metal backend's), so 8 KiB holds
 * either. 32 rx buffers of 4 KiB are more than one echo stream needs in flight.
 */
#define VIO_VSOCK_QUEUES        3u
#define VIO_VSOCK_QUEUE_SIZE    32u
#define VIO_VSOCK_SLOT_SIZE     0x2000u
/* The channel's size: VIO_DATA + queues * queue_size * slot_size, a whole number of pages. */

/*
 * A network device's MAC (virtio_net_config.mac, the config space's first 6 bytes) as the
 * hypervisor writes it at boot, so that a frontend reading it before the backend serves finds
 * a valid one: VIO_NET_MAC_FIRST (locally administered, unicast), then the low 5 bytes, least
 * significant first, of the 64-bit FNV-1a hash of the device's name.  A backend keeps it.
 */
#define VIO_NET_MAC_FIRST       0x02u
#define VIO_NET_MAC_FNV_BASIS   0xcbf29ce484222325ull
#define VIO_NET_MAC_FNV_PRIME   0x100000001b3ull

/*
 * A vsock device's guest_cid (virtio_vsock_config, the config space's first 8 bytes,
 * little-endian) as the hypervisor writes it at boot: VIO_VSOCK_CID_FIRST + the device's index
 * among the description's [[virtio]] devices (its virtio-mmio slot), so unique on the board
 * and clear of the reserved CIDs 0-2. A backend keeps it.
 */
#define VIO_VSOCK_CID_FIRST     3u

struct vio_header {
	uint32_t magic;                 /* VIO_MAGIC */
	uint32_t version;               /* VIO_VERSION */
	uint32_t device_id;             /* the VirtIO device ID (tern_config_virtio.device_id) */
	uint32_t num_queues;
	uint32_t queue_size;            /* a power of two: QueueNumMax, slots per queue */
	uint32_t slot_size;
	uint32_t epoch;                 /* bumped by each reset of the device by the frontend */
	uint32_t status;                /* the frontend's Status register, for information */
	uint64_t device_features;       /* offered to the frontend */
	uint64_t driver_features;       /* accepted by its driver (valid with FEATURES_OK in status) */
	uint8_t  reserved0[0x40 - 0x30];
	/* The backend's, on their own cache line. */
	uint32_t backend_ready;         /* VIO_READY once its config space is written and it serves */
	uint32_t config_generation;     /* bumped after each change of the config space */
	uint8_t  reserved1[0x80 - 0x48];
	/* The hypervisor's, written once at boot, on a line the backend does not write. */
	uint32_t data_mode;             /* VIO_MODE_* */
	uint32_t reserved2;
	uint64_t window_ipa;            /* segments: the frontend's RAM in the backend's map ... */
	uint64_t window_size;           /* ... and its size */
	uint8_t  reserved3[0x100 - 0x98];
};

/* One buffer of a chain, in segments mode. */
struct vio_segment {
	uint64_t addr;                  /* in the backend's map: inside the window */
	uint32_t len;
	uint32_t flags;                 /* VIO_SEG_* */
};

struct vio_request {
	uint16_t queue;
	uint16_t head;                  /* the chain's first descriptor: its slot */
	uint32_t readable;              /* driver-readable bytes, at the slot's start */
	uint32_t writable;              /* device-writable bytes the chain has room for */
	uint32_t epoch;
};

struct vio_completion {
	uint16_t queue;
	uint16_t head;
	uint32_t written;               /* device-writable bytes written, after the readable ones */
	uint32_t epoch;                 /* the request's */
	uint32_t reserved;
};

_Static_assert(sizeof(struct vio_header) == 0x100, "virtio channel: header");
_Static_assert(sizeof(struct vio_request) == VIO_RING_ENTRY_SIZE, "virtio channel: request");
_Static_assert(sizeof(struct vio_completion) == VIO_RING_ENTRY_SIZE, "virtio channel: completion");
_Static_assert(sizeof(struct vio_segment) == 16u, "virtio channel: segment");
/* A chain is at most a queue's descriptors: its scatter list fits in its slot. */
#define VIO_SEGMENTS_FIT(queue_size, slot_size) \
	(VIO_SEGMENTS_AT + (queue_size) * sizeof(struct vio_segment) <= (slot_size))
_Static_assert(VIO_SEGMENTS_FIT(VIO_BLK_QUEUE_SIZE, VIO_BLK_SLOT_SIZE), "virtio channel: blk");
_Static_assert(VIO_SEGMENTS_FIT(VIO_NET_QUEUE_SIZE, VIO_NET_SLOT_SIZE), "virtio channel: net");
_Static_assert(VIO_SEGMENTS_FIT(VIO_CONSOLE_QUEUE_SIZE, VIO_CONSOLE_SLOT_SIZE), "virtio channel: console");

/* Entries in each ring: every slot, so a ring cannot fill while requests are outstanding. */
#define VIO_RING_ENTRIES(h)     ((h)->num_queues * (h)->queue_size)

#endif
