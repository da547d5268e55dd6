/*
 * The vsock device's side of the bare-metal VirtIO backend (VirtIO 1.2, 5.10 "Socket Device"):
 * the backend is the host, CID 2, with stream sockets only. It accepts connections to one port
 * (VIO_VSOCK_ECHO_PORT) and answers each line a connection sends with "echo: LINE\n", handing
 * the line to the backend's owner to print; a request to any other port is reset. No hardware
 * and no printing here (vio_backend.c calls it; tests/unit/test_vio_backend.c runs it).
 *
 * Credit (5.10.6.3): every packet sent carries buf_alloc (VIO_VSOCK_BUF_ALLOC) and fwd_cnt (the
 * bytes of the connection consumed); the frontend sends no more than that leaves room for, and
 * this side sends no more than the frontend's own buf_alloc and fwd_cnt leave room for. Because
 * buf_alloc is 4 KiB, a packet of the frontend's never exceeds the slot (VIO_VSOCK_SLOT_SIZE),
 * whatever the size of the write its driver is given.
 */
#ifndef GUEST_VIO_VSOCK_H
#define GUEST_VIO_VSOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <tern/virtio_channel.h>

#define VIRTIO_ID_VSOCK         19u

/* struct virtio_vsock_hdr (VirtIO 1.2, 5.10.6), little-endian, packed: 44 bytes. */
#define VSOCK_HDR_SIZE          44u
#define VSOCK_TYPE_STREAM       1u
#define VSOCK_OP_INVALID        0u
#define VSOCK_OP_REQUEST        1u
#define VSOCK_OP_RESPONSE       2u
#define VSOCK_OP_RST            3u
#define VSOCK_OP_SHUTDOWN       4u
#define VSOCK_OP_RW             5u
#define VSOCK_OP_CREDIT_UPDATE  6u
#define VSOCK_OP_CREDIT_REQUEST 7u
#define VSOCK_SHUTDOWN_RCV      1u
#define VSOCK_SHUTDOWN_SEND     2u
#define VSOCK_CID_HOST          2u

#define VIO_VSOCK_RX            0u      /* the device's packets to the driver */
#define VIO_VSOCK_TX            1u      /* the driver's packets */
#define VIO_VSOCK_EVENT         2u      /* transport events: none are sent, the buffers held */

#define VIO_VSOCK_ECHO_PORT     1234u   /* the one port served */
#define VIO_VSOCK_BUF_ALLOC     4096u   /* each connection's receive buffer, as advertised */
#define VIO_VSOCK_OUT_SIZE      1024u   /* echoes waiting for the frontend's credit */
#define VIO_VSOCK_CONNS         4u
#define VIO_VSOCK_CONTROL       16u     /* resets of packets that name no connection */
#define VIO_VSOCK_LINE_MAX      120u    /* a longer line is echoed and printed in pieces */

struct vio_vsock_conn {
	bool used;
	bool responded;                 /* RESPONSE sent: the connection is established */
	bool closing;                   /* the frontend shut it down: RST once out is sent */
	bool credit_due;                /* a CREDIT_UPDATE is owed (CREDIT_REQUEST, or room freed) */
	uint32_t peer_port;             /* the frontend's port; the local one is the echo port */
	uint32_t peer_buf_alloc, peer_fwd_cnt;
	uint32_t tx_cnt;                /* payload bytes sent to the frontend */
	uint32_t rx_cnt;                /* payload bytes received from it */
	uint32_t fwd_cnt;               /* ... of which consumed (echoed) */
	uint32_t fwd_sent;              /* fwd_cnt as last sent in a packet */
	uint8_t in[VIO_VSOCK_BUF_ALLOC];        /* received, not yet a whole line */
	uint32_t in_len;
	uint8_t out[VIO_VSOCK_OUT_SIZE];        /* echoes not yet sent */
	uint32_t out_len;
};

struct vio_vsock_control {
	uint32_t src_port, dst_port;    /* as sent: this side's port, then the frontend's */
};

struct vio_vsock {
	uint64_t guest_cid;             /* the frontend's, from the config space */
	/* The rx buffers the frontend posted, in order, until a packet fills them. */
	uint16_t rx_head[VIO_VSOCK_QUEUE_SIZE];
	uint32_t rx_room[VIO_VSOCK_QUEUE_SIZE];
	uint32_t rx_first, rx_count;
	struct vio_vsock_control control[VIO_VSOCK_CONTROL];
	uint32_t control_first, control_count;
	struct vio_vsock_conn conn[VIO_VSOCK_CONNS];
	/* counters */
	uint64_t connections;           /* accepted */
	uint64_t resets;                /* RSTs sent */
	uint64_t bad_packets;           /* malformed, misaddressed or against the protocol */
	uint64_t dropped;               /* resets not sent: the control queue was full */
};

struct vio_backend;
struct vio_request;

/* Check the frontend's CID the hypervisor wrote in the config space, and start afresh. */
const char *vio_vsock_start(struct vio_backend *b);
/* The frontend reset the device: its connections and the buffers held are gone. */
void vio_vsock_reset(struct vio_backend *b);
/*
 * A valid request of the device's: true with *written if it is complete now (a tx packet,
 * taken), false if it is held (an rx buffer, until a packet fills it; an event buffer).
 */
bool vio_vsock_request(struct vio_backend *b, const struct vio_request *req, uint8_t *slot,
		       uint32_t *written);
/* The next packet to send into the oldest rx buffer held: false if none or no buffer. */
bool vio_vsock_next(struct vio_backend *b, uint16_t *head, uint32_t *written);

#endif
