/* SPDX-License-Identifier: MIT */
/*
 * The bare-metal VirtIO backend's device logic (guests/lib/vio_backend.c), run over a buffer
 * that plays the virtio channel: the test posts requests as the hypervisor does and reads the
 * completions and slots back.
 */
#include <stdlib.h>
#include <string.h>

#include "../../guests/lib/vio_backend.h"
#include "check.h"
#include "tests.h"

#define DISK_SECTORS    64u

struct rig {
	struct vio_backend b;
	uint8_t *disk;
	char lines[8][VIO_LINE_MAX + 32];   /* a vsock line has its "vsock PORT: " */
	unsigned nlines;
};

static struct vio_header *hdr(struct rig *r)
{
	return (struct vio_header *)r->b.shm;
}

static uint32_t *ring_word(struct rig *r, uint32_t ring, uint32_t at)
{
	return (uint32_t *)(r->b.shm + ring + at);
}

static uint8_t *slot(struct rig *r, uint32_t queue, uint32_t head)
{
	struct vio_header *h = hdr(r);

	return r->b.shm + VIO_DATA + ((uint64_t)queue * h->queue_size + head) * h->slot_size;
}

static void line_out(struct vio_backend *b, const char *line)
{
	struct rig *r = b->owner;

	if (r->nlines < 8)
		strcpy(r->lines[r->nlines++], line);
}

/* A channel as the hypervisor leaves it at boot, for `device_id` of the given shape. */
static void rig_init(struct rig *r, uint32_t device_id, uint32_t queues, uint32_t queue_size,
		     uint32_t slot_size)
{
	uint64_t size = VIO_DATA + (uint64_t)queues * queue_size * slot_size;

	memset(r, 0, sizeof(*r));
	r->b.shm = calloc(1, size);
	r->b.size = size;
	strcpy(r->b.name, "disk0");
	r->b.owner = r;
	r->b.line_out = line_out;
	struct vio_header *h = hdr(r);
	h->magic = VIO_MAGIC;
	h->version = VIO_VERSION;
	h->device_id = device_id;
	h->num_queues = queues;
	h->queue_size = queue_size;
	h->slot_size = slot_size;
	r->disk = malloc(DISK_SECTORS * VIRTIO_BLK_SECTOR);
	for (uint32_t i = 0; i < DISK_SECTORS * VIRTIO_BLK_SECTOR; i++)
		r->disk[i] = (uint8_t)(i * 7 + i / VIRTIO_BLK_SECTOR);
}

static void rig_blk(struct rig *r)
{
	rig_init(r, VIRTIO_ID_BLK, VIO_BLK_QUEUES, VIO_BLK_QUEUE_SIZE, VIO_BLK_SLOT_SIZE);
	r->b.disk = r->disk;
	r->b.disk_size = DISK_SECTORS * VIRTIO_BLK_SECTOR;
}

static void rig_free(struct rig *r)
{
	free(r->b.shm);
	free(r->disk);
}

/* Post a request as the hypervisor does: its readable bytes into the slot, then the entry. */
static void post(struct rig *r, uint32_t queue, uint32_t head, const void *readable,
		 uint32_t rlen, uint32_t writable, uint32_t epoch)
{
	struct vio_header *h = hdr(r);
	uint32_t entries = h->num_queues * h->queue_size;
	uint32_t *prod = ring_word(r, VIO_REQUESTS, VIO_RING_PROD);

	if (queue < h->num_queues && head < h->queue_size && rlen <= h->slot_size)
		memcpy(slot(r, queue, head), readable, rlen);
	struct vio_request *e = (struct vio_request *)(r->b.shm + VIO_REQUESTS +
		VIO_RING_ENTRIES_AT + (*prod % entries) * VIO_RING_ENTRY_SIZE);
	*e = (struct vio_request){ (uint16_t)queue, (uint16_t)head, rlen, writable, epoch };
	(*prod)++;
}

static void post_blk(struct rig *r, uint32_t head, uint32_t type, uint64_t sector,
		     uint32_t writable)
{
	uint8_t req[VIRTIO_BLK_HEADER] = { 0 };

	for (int i = 0; i < 4; i++)
		req[i] = (uint8_t)(type >> (8 * i));
	for (int i = 0; i < 8; i++)
		req[8 + i] = (uint8_t)(sector >> (8 * i));
	post(r, 0, head, req, sizeof(req), writable, hdr(r)->epoch);
}

/* The hypervisor's side: the next completion, if any, taken. */
static bool take(struct rig *r, struct vio_completion *c)
{
	struct vio_header *h = hdr(r);
	uint32_t entries = h->num_queues * h->queue_size;
	uint32_t *prod = ring_word(r, VIO_COMPLETIONS, VIO_RING_PROD);
	uint32_t *cons = ring_word(r, VIO_COMPLETIONS, VIO_RING_CONS);

	if (*prod == *cons)
		return false;
	memcpy(c, r->b.shm + VIO_COMPLETIONS + VIO_RING_ENTRIES_AT +
	       (*cons % entries) * VIO_RING_ENTRY_SIZE, sizeof(*c));
	(*cons)++;
	return true;
}

void test_vio_backend_start_writes_the_blk_config_and_ready(void)
{
	struct rig r;
	const uint8_t *config;

	rig_blk(&r);
	CHECK(vio_backend_start(&r.b) == NULL);
	config = r.b.shm + VIO_CONFIG;
	/* struct virtio_blk_config, little-endian: capacity 0, size_max 8, seg_max 12. */
	const uint8_t want[16] = { DISK_SECTORS, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x10, 0, 0, 7, 0, 0, 0 };
	CHECK(memcmp(config, want, sizeof(want)) == 0);
	CHECK_EQ(hdr(&r)->config_generation, 1);
	CHECK_EQ(hdr(&r)->backend_ready, VIO_READY);
	CHECK_EQ(r.b.device_id, VIRTIO_ID_BLK);
	rig_free(&r);
}

void test_vio_backend_start_refuses_what_it_cannot_serve(void)
{
	struct rig r;

	rig_blk(&r);
	hdr(&r)->magic = 0;
	CHECK(vio_backend_start(&r.b) != NULL);
	hdr(&r)->magic = VIO_MAGIC;
	hdr(&r)->version = VIO_VERSION + 1;
	CHECK(vio_backend_start(&r.b) != NULL);
	hdr(&r)->version = VIO_VERSION;
	hdr(&r)->queue_size = 64;               /* not blk's shape */
	CHECK(vio_backend_start(&r.b) != NULL);
	hdr(&r)->queue_size = VIO_BLK_QUEUE_SIZE;
	r.b.size = VIO_DATA + VIO_BLK_SLOT_SIZE;        /* no room for every slot */
	CHECK(vio_backend_start(&r.b) != NULL);
	r.b.size = VIO_DATA + (uint64_t)VIO_BLK_QUEUE_SIZE * VIO_BLK_SLOT_SIZE;
	r.b.disk_size = 0;
	CHECK(vio_backend_start(&r.b) != NULL);
	r.b.disk_size = DISK_SECTORS * VIRTIO_BLK_SECTOR;
	hdr(&r)->device_id = VIRTIO_ID_NET;
	CHECK(vio_backend_start(&r.b) != NULL);
	/* None of them said it was ready. */
	CHECK_EQ(hdr(&r)->backend_ready, 0);
	CHECK_EQ(hdr(&r)->config_generation, 0);
	hdr(&r)->device_id = VIRTIO_ID_BLK;
	CHECK(vio_backend_start(&r.b) == NULL);
	rig_free(&r);
}

void test_vio_backend_blk_in_reads_the_disk(void)
{
	struct rig r;
	struct vio_completion c;

	rig_blk(&r);
	CHECK(vio_backend_start(&r.b) == NULL);
	CHECK(!vio_backend_pending(&r.b));
	post_blk(&r, 5, VIRTIO_BLK_T_IN, 3, 2 * VIRTIO_BLK_SECTOR + 1);
	CHECK(vio_backend_pending(&r.b));
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK(!vio_backend_pending(&r.b));
	CHECK(take(&r, &c));
	CHECK_EQ(c.queue, 0);
	CHECK_EQ(c.head, 5);
	CHECK_EQ(c.written, 2 * VIRTIO_BLK_SECTOR + 1);
	CHECK_EQ(c.epoch, 0);
	uint8_t *out = slot(&r, 0, 5) + VIRTIO_BLK_HEADER;
	CHECK(memcmp(out, r.disk + 3 * VIRTIO_BLK_SECTOR, 2 * VIRTIO_BLK_SECTOR) == 0);
	CHECK_EQ(out[2 * VIRTIO_BLK_SECTOR], VIRTIO_BLK_S_OK);
	CHECK(!take(&r, &c));
	CHECK_EQ(r.b.served, 1);
	rig_free(&r);
}

void test_vio_backend_blk_out_writes_the_disk(void)
{
	struct rig r;
	struct vio_completion c;
	uint8_t req[VIRTIO_BLK_HEADER + VIRTIO_BLK_SECTOR] = { VIRTIO_BLK_T_OUT };

	rig_blk(&r);
	CHECK(vio_backend_start(&r.b) == NULL);
	req[8] = DISK_SECTORS - 1;              /* the last sector */
	memset(req + VIRTIO_BLK_HEADER, 0xa5, VIRTIO_BLK_SECTOR);
	post(&r, 0, 0, req, sizeof(req), 1, 0);
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK(take(&r, &c));
	CHECK_EQ(c.written, 1);
	CHECK_EQ(slot(&r, 0, 0)[sizeof(req)], VIRTIO_BLK_S_OK);
	for (uint32_t i = 0; i < VIRTIO_BLK_SECTOR; i++)
		CHECK_EQ(r.disk[(DISK_SECTORS - 1) * VIRTIO_BLK_SECTOR + i], 0xa5);
	/* And read back through IN. */
	post_blk(&r, 1, VIRTIO_BLK_T_IN, DISK_SECTORS - 1, VIRTIO_BLK_SECTOR + 1);
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK(take(&r, &c));
	CHECK_EQ(slot(&r, 0, 1)[VIRTIO_BLK_HEADER + 17], 0xa5);
	rig_free(&r);
}

void test_vio_backend_blk_get_id_and_unsupported(void)
{
	struct rig r;
	struct vio_completion c;
	uint8_t *out;

	rig_blk(&r);
	CHECK(vio_backend_start(&r.b) == NULL);
	post_blk(&r, 2, VIRTIO_BLK_T_GET_ID, 0, VIRTIO_BLK_ID_BYTES + 1);
	post_blk(&r, 3, 4 /* FLUSH: not offered */, 0, 1);
	post_blk(&r, 4, 0x7fffffff, 0, 9);
	CHECK_EQ(vio_backend_poll(&r.b), 3);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 2);
	CHECK_EQ(c.written, VIRTIO_BLK_ID_BYTES + 1);
	out = slot(&r, 0, 2) + VIRTIO_BLK_HEADER;
	const char want[VIRTIO_BLK_ID_BYTES] = "tern-disk0";
	CHECK(memcmp(out, want, sizeof(want)) == 0);
	CHECK_EQ(out[VIRTIO_BLK_ID_BYTES], VIRTIO_BLK_S_OK);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 3);
	CHECK_EQ(c.written, 1);
	CHECK_EQ(slot(&r, 0, 3)[VIRTIO_BLK_HEADER], VIRTIO_BLK_S_UNSUPP);
	/* The status byte is the last writable byte, whatever room comes before it. */
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 4);
	CHECK_EQ(c.written, 9);
	CHECK_EQ(slot(&r, 0, 4)[VIRTIO_BLK_HEADER + 8], VIRTIO_BLK_S_UNSUPP);
	rig_free(&r);
}

void test_vio_backend_blk_out_of_range_is_an_io_error(void)
{
	struct rig r;
	struct vio_completion c;
	uint8_t *out;

	rig_blk(&r);
	CHECK(vio_backend_start(&r.b) == NULL);
	/* One sector inside, the next one past the end. */
	memset(slot(&r, 0, 0), 0xee, VIO_BLK_SLOT_SIZE);
	post_blk(&r, 0, VIRTIO_BLK_T_IN, DISK_SECTORS - 1, 2 * VIRTIO_BLK_SECTOR + 1);
	/* A sector whose byte offset wraps 64 bits. */
	post_blk(&r, 1, VIRTIO_BLK_T_IN, 1ull << 55, VIRTIO_BLK_SECTOR + 1);
	/* A read that is not whole sectors. */
	post_blk(&r, 2, VIRTIO_BLK_T_IN, 0, 100 + 1);
	/* A write past the end. */
	uint8_t req[VIRTIO_BLK_HEADER + VIRTIO_BLK_SECTOR] = { VIRTIO_BLK_T_OUT };
	req[8] = DISK_SECTORS;
	post(&r, 0, 3, req, sizeof(req), 1, 0);
	uint8_t before[DISK_SECTORS * VIRTIO_BLK_SECTOR];
	memcpy(before, r.disk, sizeof(before));
	CHECK_EQ(vio_backend_poll(&r.b), 4);
	CHECK(take(&r, &c));
	out = slot(&r, 0, 0) + VIRTIO_BLK_HEADER;
	CHECK_EQ(c.written, 2 * VIRTIO_BLK_SECTOR + 1);
	CHECK_EQ(out[2 * VIRTIO_BLK_SECTOR], VIRTIO_BLK_S_IOERR);
	CHECK_EQ(out[0], 0);                    /* nothing of the slot's old bytes goes back */
	CHECK(take(&r, &c));
	CHECK_EQ(slot(&r, 0, 1)[VIRTIO_BLK_HEADER + VIRTIO_BLK_SECTOR], VIRTIO_BLK_S_IOERR);
	CHECK(take(&r, &c));
	CHECK_EQ(slot(&r, 0, 2)[VIRTIO_BLK_HEADER + 100], VIRTIO_BLK_S_IOERR);
	CHECK(take(&r, &c));
	CHECK_EQ(slot(&r, 0, 3)[sizeof(req)], VIRTIO_BLK_S_IOERR);
	CHECK(memcmp(before, r.disk, sizeof(before)) == 0);
	CHECK_EQ(r.b.garbage, 0);
	rig_free(&r);
}

void test_vio_backend_blk_short_requests(void)
{
	struct rig r;
	struct vio_completion c;

	rig_blk(&r);
	CHECK(vio_backend_start(&r.b) == NULL);
	/* No writable byte: no status can be written; the buffers go back with nothing. */
	post_blk(&r, 0, VIRTIO_BLK_T_IN, 0, 0);
	/* A header cut short: an I/O error in the status byte. */
	post(&r, 0, 1, "\0\0\0\0", 4, 1, 0);
	CHECK_EQ(vio_backend_poll(&r.b), 2);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 0);
	CHECK_EQ(c.written, 0);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 1);
	CHECK_EQ(c.written, 1);
	CHECK_EQ(slot(&r, 0, 1)[4], VIRTIO_BLK_S_IOERR);
	rig_free(&r);
}

void test_vio_backend_skips_and_counts_garbage_requests(void)
{
	struct rig r;
	struct vio_completion c;
	uint8_t hdr_in[VIRTIO_BLK_HEADER] = { VIRTIO_BLK_T_IN };

	rig_blk(&r);
	CHECK(vio_backend_start(&r.b) == NULL);
	post(&r, 1, 0, hdr_in, sizeof(hdr_in), 1, 0);                   /* no queue 1 */
	post(&r, 0, VIO_BLK_QUEUE_SIZE, hdr_in, sizeof(hdr_in), 1, 0);  /* no such head */
	post(&r, 0, 2, hdr_in, VIO_BLK_SLOT_SIZE + 1, 1, 0);            /* readable past the slot */
	post(&r, 0, 3, hdr_in, sizeof(hdr_in), VIO_BLK_SLOT_SIZE + 1, 0);
	post(&r, 0, 4, hdr_in, sizeof(hdr_in), 0xffffffffu, 0);         /* the sum wraps 32 bits */
	post(&r, 0, 5, hdr_in, sizeof(hdr_in), VIO_BLK_SLOT_SIZE - 8, 0); /* together past it */
	post(&r, 0, 6, hdr_in, sizeof(hdr_in), 1, 7);                   /* an epoch yet to come */
	post_blk(&r, 7, VIRTIO_BLK_T_IN, 0, VIRTIO_BLK_SECTOR + 1);     /* a good one after them */
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK_EQ(r.b.garbage, 7);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 7);
	CHECK_EQ(slot(&r, 0, 7)[VIRTIO_BLK_HEADER + VIRTIO_BLK_SECTOR], VIRTIO_BLK_S_OK);
	CHECK(!take(&r, &c));
	CHECK_EQ(*ring_word(&r, VIO_REQUESTS, VIO_RING_CONS), 8);

	/* A request ring whose prod ran more than the ring holds ahead: nothing of it is taken. */
	*ring_word(&r, VIO_REQUESTS, VIO_RING_PROD) += VIO_BLK_QUEUE_SIZE + 1;
	CHECK_EQ(vio_backend_poll(&r.b), 0);
	CHECK_EQ(r.b.garbage, 8);
	CHECK(!vio_backend_pending(&r.b));
	rig_free(&r);
}

void test_vio_backend_drops_requests_of_an_old_epoch(void)
{
	struct rig r;
	struct vio_completion c;

	rig_blk(&r);
	CHECK(vio_backend_start(&r.b) == NULL);
	post_blk(&r, 0, VIRTIO_BLK_T_IN, 0, VIRTIO_BLK_SECTOR + 1);
	hdr(&r)->epoch = 1;                     /* the frontend reset the device since */
	post_blk(&r, 1, VIRTIO_BLK_T_IN, 0, VIRTIO_BLK_SECTOR + 1);
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 1);
	CHECK_EQ(c.epoch, 1);
	CHECK_EQ(r.b.stale, 1);
	CHECK_EQ(r.b.garbage, 0);
	rig_free(&r);
}

void test_vio_backend_waits_for_room_in_the_completion_ring(void)
{
	struct rig r;
	struct vio_completion c;
	uint32_t *done_cons;

	rig_blk(&r);
	CHECK(vio_backend_start(&r.b) == NULL);
	done_cons = ring_word(&r, VIO_COMPLETIONS, VIO_RING_CONS);
	/* The hypervisor has left a whole ring of completions untaken. */
	*ring_word(&r, VIO_COMPLETIONS, VIO_RING_PROD) = VIO_BLK_QUEUE_SIZE;
	post_blk(&r, 0, VIRTIO_BLK_T_IN, 0, VIRTIO_BLK_SECTOR + 1);
	CHECK_EQ(vio_backend_poll(&r.b), 0);
	CHECK(vio_backend_pending(&r.b));
	*done_cons = VIO_BLK_QUEUE_SIZE;
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 0);
	CHECK_EQ(c.written, VIRTIO_BLK_SECTOR + 1);
	rig_free(&r);
}

void test_vio_backend_console_prints_lines_and_holds_receive_buffers(void)
{
	struct rig r;
	struct vio_completion c;
	char longline[VIO_LINE_MAX + 10];

	rig_init(&r, VIRTIO_ID_CONSOLE, VIO_CONSOLE_QUEUES, VIO_CONSOLE_QUEUE_SIZE,
		 VIO_CONSOLE_SLOT_SIZE);
	strcpy(r.b.name, "con0");
	CHECK(vio_backend_start(&r.b) == NULL);
	CHECK_EQ(hdr(&r)->backend_ready, VIO_READY);
	post(&r, VIO_CONSOLE_RECEIVEQ, 0, "", 0, 64, 0);
	post(&r, VIO_CONSOLE_RECEIVEQ, 1, "", 0, 64, 0);
	post(&r, VIO_CONSOLE_TRANSMITQ, 0, "hello ", 6, 0, 0);
	post(&r, VIO_CONSOLE_TRANSMITQ, 1, "world\r\nsecond\x1b[2J\n", 18, 0, 0);
	CHECK_EQ(vio_backend_poll(&r.b), 2);
	CHECK_EQ(r.b.held, 2);
	CHECK_EQ(r.nlines, 2);
	CHECK(strcmp(r.lines[0], "hello world") == 0);
	CHECK(strcmp(r.lines[1], "second?[2J") == 0);
	CHECK(take(&r, &c));
	CHECK_EQ(c.queue, VIO_CONSOLE_TRANSMITQ);
	CHECK_EQ(c.head, 0);
	CHECK_EQ(c.written, 0);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 1);
	CHECK(!take(&r, &c));                   /* the receive buffers are held */

	/* A line longer than the buffer comes out in pieces. */
	memset(longline, 'x', sizeof(longline));
	longline[sizeof(longline) - 1] = '\n';
	post(&r, VIO_CONSOLE_TRANSMITQ, 2, longline, sizeof(longline), 0, 0);
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK_EQ(r.nlines, 4);
	CHECK_EQ(strlen(r.lines[2]), VIO_LINE_MAX);
	CHECK_EQ(strlen(r.lines[3]), sizeof(longline) - 1 - VIO_LINE_MAX);

	/* A reset of the device: what it held is gone. */
	hdr(&r)->epoch = 1;
	CHECK_EQ(vio_backend_poll(&r.b), 0);
	CHECK_EQ(r.b.held, 0);
	rig_free(&r);
}

/* ---- vsock (vio_vsock.c): the backend is the host, CID 2, echoing lines on one port ---- */

#define GUEST_CID       5u
#define PEER_PORT       40000u
#define RX_ROOM         (VSOCK_HDR_SIZE + 4096u)

struct vhdr {
	uint64_t src_cid, dst_cid;
	uint32_t src_port, dst_port, len;
	uint16_t type, op;
	uint32_t flags, buf_alloc, fwd_cnt;
};

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void rig_vsock(struct rig *r)
{
	rig_init(r, VIRTIO_ID_VSOCK, VIO_VSOCK_QUEUES, VIO_VSOCK_QUEUE_SIZE, VIO_VSOCK_SLOT_SIZE);
	strcpy(r->b.name, "sock0");
	put(r->b.shm + VIO_CONFIG, GUEST_CID, 8);        /* as the hypervisor writes it */
	CHECK(vio_backend_start(&r->b) == NULL);
}

/* vsock fills the receive buffers it holds in their slots later: copy mode only. */
void test_vio_backend_vsock_refuses_segments_mode(void)
{
	struct rig r;

	rig_init(&r, VIRTIO_ID_VSOCK, VIO_VSOCK_QUEUES, VIO_VSOCK_QUEUE_SIZE, VIO_VSOCK_SLOT_SIZE);
	put(r.b.shm + VIO_CONFIG, GUEST_CID, 8);
	hdr(&r)->data_mode = VIO_MODE_SEGMENTS;
	hdr(&r)->window_ipa = 0x80000000ull;
	hdr(&r)->window_size = 0x10000;
	const char *why = vio_backend_start(&r.b);
	CHECK(why != NULL && strstr(why, "vsock") != NULL);
	CHECK_EQ(hdr(&r)->backend_ready, 0);
	hdr(&r)->data_mode = VIO_MODE_COPY;
	CHECK(vio_backend_start(&r.b) == NULL);
	rig_free(&r);
}

static uint16_t tx_head;

/* A packet from the frontend on the tx queue, with `op` and payload, from PEER_PORT. */
static void send_pkt(struct rig *r, uint32_t dst_port, uint16_t op, const char *data,
		     uint32_t buf_alloc, uint32_t fwd_cnt, uint32_t flags)
{
	uint8_t p[VSOCK_HDR_SIZE + 256] = { 0 };
	uint32_t len = data ? (uint32_t)strlen(data) : 0;

	put(p + 0, GUEST_CID, 8);
	put(p + 8, VSOCK_CID_HOST, 8);
	put(p + 16, PEER_PORT, 4);
	put(p + 20, dst_port, 4);
	put(p + 24, len, 4);
	put(p + 28, VSOCK_TYPE_STREAM, 2);
	put(p + 30, op, 2);
	put(p + 32, flags, 4);
	put(p + 36, buf_alloc, 4);
	put(p + 40, fwd_cnt, 4);
	if (len)
		memcpy(p + VSOCK_HDR_SIZE, data, len);
	post(r, VIO_VSOCK_TX, tx_head++ % VIO_VSOCK_QUEUE_SIZE, p, VSOCK_HDR_SIZE + len, 0,
	     hdr(r)->epoch);
}

static void post_rx(struct rig *r, uint32_t first, uint32_t count)
{
	for (uint32_t h = first; h < first + count; h++)
		post(r, VIO_VSOCK_RX, h, "", 0, RX_ROOM, hdr(r)->epoch);
}

/* Poll, and the next rx packet's header (and payload into `data`); the tx completions skipped. */
static bool next_rx(struct rig *r, struct vhdr *h, char *data)
{
	struct vio_completion c;

	vio_backend_poll(&r->b);
	while (take(r, &c)) {
		if (c.queue != VIO_VSOCK_RX) {
			CHECK_EQ(c.written, 0);
			continue;
		}
		const uint8_t *p = slot(r, c.queue, c.head);

		h->src_cid = le(p + 0, 8);
		h->dst_cid = le(p + 8, 8);
		h->src_port = (uint32_t)le(p + 16, 4);
		h->dst_port = (uint32_t)le(p + 20, 4);
		h->len = (uint32_t)le(p + 24, 4);
		h->type = (uint16_t)le(p + 28, 2);
		h->op = (uint16_t)le(p + 30, 2);
		h->flags = (uint32_t)le(p + 32, 4);
		h->buf_alloc = (uint32_t)le(p + 36, 4);
		h->fwd_cnt = (uint32_t)le(p + 40, 4);
		CHECK_EQ(c.written, VSOCK_HDR_SIZE + h->len);
		if (data) {
			memcpy(data, p + VSOCK_HDR_SIZE, h->len);
			data[h->len] = '\0';
		}
		return true;
	}
	return false;
}

/* The frontend connects to the echo port: the RESPONSE comes back in an rx buffer. */
static void connect_echo(struct rig *r, uint32_t buf_alloc)
{
	struct vhdr h;

	send_pkt(r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_REQUEST, NULL, buf_alloc, 0, 0);
	CHECK(next_rx(r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RESPONSE);
	CHECK_EQ(h.src_cid, VSOCK_CID_HOST);
	CHECK_EQ(h.dst_cid, GUEST_CID);
	CHECK_EQ(h.src_port, VIO_VSOCK_ECHO_PORT);
	CHECK_EQ(h.dst_port, PEER_PORT);
	CHECK_EQ(h.type, VSOCK_TYPE_STREAM);
	CHECK_EQ(h.buf_alloc, VIO_VSOCK_BUF_ALLOC);
	CHECK_EQ(h.len, 0);
}

void test_vio_backend_vsock_start_keeps_the_guest_cid(void)
{
	struct rig r;

	rig_vsock(&r);
	CHECK_EQ(hdr(&r)->backend_ready, VIO_READY);
	CHECK_EQ(le(r.b.shm + VIO_CONFIG, 8), GUEST_CID);
	CHECK_EQ(r.b.vsock.guest_cid, GUEST_CID);
	/* Reserved CIDs (none, the hypervisor, the host, "any") are not a frontend's. */
	const uint64_t bad[] = { 0, 1, VSOCK_CID_HOST, 0xffffffffu };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(r.b.shm + VIO_CONFIG, bad[i], 8);
		CHECK(vio_backend_start(&r.b) != NULL);
	}
	rig_free(&r);
}

void test_vio_backend_vsock_echoes_lines(void)
{
	struct rig r;
	struct vhdr h;
	char data[4200];

	rig_vsock(&r);
	tx_head = 0;
	post_rx(&r, 0, 4);
	CHECK_EQ(vio_backend_poll(&r.b), 0);    /* rx buffers are held */
	connect_echo(&r, 65536);
	CHECK_EQ(r.b.vsock.connections, 1);

	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, "hello ", 65536, 0, 0);
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, "vsock\nsecond\x1b\n", 65536, 0, 0);
	CHECK(next_rx(&r, &h, data));
	CHECK_EQ(h.op, VSOCK_OP_RW);
	CHECK(strcmp(data, "echo: hello vsock\necho: second\x1b\n") == 0);  /* byte-exact */
	CHECK_EQ(h.fwd_cnt, 6 + 14);                    /* all consumed */
	CHECK_EQ(r.nlines, 2);
	CHECK(strcmp(r.lines[0], "vsock 1234: hello vsock") == 0);
	CHECK(strcmp(r.lines[1], "vsock 1234: second?") == 0);   /* printed as text only */
	CHECK(!next_rx(&r, &h, NULL));

	/* A line longer than VIO_VSOCK_LINE_MAX is echoed in pieces. */
	char longline[VIO_VSOCK_LINE_MAX + 11];
	memset(longline, 'x', sizeof(longline) - 2);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = '\0';
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, longline, 65536, 32, 0);
	CHECK(next_rx(&r, &h, data));
	CHECK_EQ(h.len, 6 + VIO_VSOCK_LINE_MAX + 1 + 6 + 9 + 1);
	CHECK_EQ(r.nlines, 4);
	CHECK_EQ(strlen(r.lines[2]), strlen("vsock 1234: ") + VIO_VSOCK_LINE_MAX);
	CHECK_EQ(r.b.vsock.bad_packets, 0);
	rig_free(&r);
}

void test_vio_backend_vsock_resets_what_it_does_not_serve(void)
{
	struct rig r;
	struct vhdr h;

	rig_vsock(&r);
	tx_head = 0;
	post_rx(&r, 0, 8);
	/* Another port: refused with a reset from that port. */
	send_pkt(&r, 4321, VSOCK_OP_REQUEST, NULL, 65536, 0, 0);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RST);
	CHECK_EQ(h.src_port, 4321);
	CHECK_EQ(h.dst_port, PEER_PORT);
	CHECK_EQ(r.b.vsock.connections, 0);
	CHECK_EQ(r.b.vsock.bad_packets, 0);     /* an ordinary refusal */
	/* Data for no connection: a reset. A reset for none: nothing (never RST for RST). */
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, "x\n", 65536, 0, 0);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RST);
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RST, NULL, 0, 0, 0);
	CHECK(!next_rx(&r, &h, NULL));
	CHECK_EQ(r.nlines, 0);

	/* Garbage on a connection: an unknown op, then a RESPONSE: each a reset and counted. */
	connect_echo(&r, 65536);
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, 99, NULL, 65536, 0, 0);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RST);
	CHECK_EQ(r.b.vsock.bad_packets, 1);
	connect_echo(&r, 65536);
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RESPONSE, NULL, 65536, 0, 0);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RST);
	CHECK_EQ(r.b.vsock.bad_packets, 2);
	/* The connection is gone: its data is answered with a reset, not echoed. */
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, "late\n", 65536, 0, 0);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RST);
	CHECK_EQ(r.nlines, 0);

	/* Too short for a header; a length that is not the packet's; another CID: counted. */
	post(&r, VIO_VSOCK_TX, 30, "short", 5, 0, 0);
	uint8_t p[VSOCK_HDR_SIZE] = { 0 };
	put(p, GUEST_CID, 8);
	put(p + 8, VSOCK_CID_HOST, 8);
	put(p + 20, VIO_VSOCK_ECHO_PORT, 4);
	put(p + 24, 100, 4);
	put(p + 28, VSOCK_TYPE_STREAM, 2);
	put(p + 30, VSOCK_OP_REQUEST, 2);
	post(&r, VIO_VSOCK_TX, 31, p, sizeof(p), 0, 0);
	put(p + 24, 0, 4);
	put(p, GUEST_CID + 1, 8);
	post(&r, VIO_VSOCK_TX, 29, p, sizeof(p), 0, 0);
	CHECK(next_rx(&r, &h, NULL));           /* the bad length's reset */
	CHECK_EQ(h.op, VSOCK_OP_RST);
	CHECK(!next_rx(&r, &h, NULL));
	CHECK_EQ(r.b.vsock.bad_packets, 5);
	CHECK_EQ(r.b.vsock.connections, 2);
	/* An rx buffer with no room for a header goes back empty at once. */
	post(&r, VIO_VSOCK_RX, 20, "", 0, VSOCK_HDR_SIZE - 1, 0);
	struct vio_completion c;
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 20);
	CHECK_EQ(c.written, 0);
	rig_free(&r);
}

void test_vio_backend_vsock_respects_credit_both_ways(void)
{
	struct rig r;
	struct vhdr h;
	char data[4200];

	rig_vsock(&r);
	tx_head = 0;
	post_rx(&r, 0, 16);
	/* The frontend has room for 8 bytes: "echo: hi\n" goes out as 8, then 1 after its update. */
	connect_echo(&r, 8);
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, "hi\n", 8, 0, 0);
	CHECK(next_rx(&r, &h, data));
	CHECK_EQ(h.op, VSOCK_OP_RW);
	CHECK(strcmp(data, "echo: hi") == 0);
	CHECK(!next_rx(&r, &h, NULL));          /* no credit left: nothing more */
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_CREDIT_UPDATE, NULL, 8, 8, 0);
	CHECK(next_rx(&r, &h, data));
	CHECK_EQ(h.op, VSOCK_OP_RW);
	CHECK(strcmp(data, "\n") == 0);
	/* A credit request is answered with this side's credit. */
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_CREDIT_REQUEST, NULL, 8, 9, 0);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_CREDIT_UPDATE);
	CHECK_EQ(h.buf_alloc, VIO_VSOCK_BUF_ALLOC);
	CHECK_EQ(h.fwd_cnt, 3);

	/*
	 * The frontend stops taking (no credit for this side): the echoes fill `out`, then its
	 * bytes fill this side's buffer. It hears of the room freed by the echoes made (a credit
	 * update, which needs no credit), and no data goes out.
	 */
	char chunk[201];
	memset(chunk, 'y', 200);
	chunk[200] = '\0';
	bool updated = false;
	for (uint32_t sent = 0; sent + 200 <= VIO_VSOCK_BUF_ALLOC; sent += 200) {
		send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, chunk, 0, 9, 0);
		while (next_rx(&r, &h, NULL)) {
			CHECK_EQ(h.op, VSOCK_OP_CREDIT_UPDATE);
			CHECK(h.fwd_cnt > 3);
			updated = true;
		}
	}
	CHECK(updated);
	CHECK_EQ(r.b.vsock.bad_packets, 0);
	/* More than the credit it was given: the connection is reset, and counted. */
	memset(data, 'z', 255);
	data[255] = '\0';
	bool reset = false;
	for (uint32_t i = 0; i < 8 && !reset; i++) {
		send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, data, 0, 9, 0);
		while (next_rx(&r, &h, NULL))
			reset |= h.op == VSOCK_OP_RST;
	}
	CHECK(reset);
	CHECK_EQ(r.b.vsock.bad_packets, 1);
	rig_free(&r);
}

void test_vio_backend_vsock_shutdown_reset_and_device_reset(void)
{
	struct rig r;
	struct vhdr h;
	char data[4200];

	rig_vsock(&r);
	tx_head = 0;
	/* Packets wait for rx buffers: none posted yet. */
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_REQUEST, NULL, 65536, 0, 0);
	CHECK(!next_rx(&r, &h, NULL));
	post_rx(&r, 0, 8);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RESPONSE);
	/* Its line, then SHUTDOWN (no more sends): the echo goes out, then the reset. */
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, "bye\n", 65536, 0, 0);
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_SHUTDOWN, NULL, 65536, 0, VSOCK_SHUTDOWN_SEND);
	CHECK(next_rx(&r, &h, data));
	CHECK_EQ(h.op, VSOCK_OP_RW);
	CHECK(strcmp(data, "echo: bye\n") == 0);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RST);
	CHECK(!next_rx(&r, &h, NULL));
	/* Both directions shut: the reset at once. */
	connect_echo(&r, 65536);
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_SHUTDOWN, NULL, 65536, 0,
		 VSOCK_SHUTDOWN_SEND | VSOCK_SHUTDOWN_RCV);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RST);

	/* A reset of the device: connections and held rx buffers are gone. */
	connect_echo(&r, 65536);
	CHECK(r.b.vsock.rx_count > 0);
	hdr(&r)->epoch = 1;
	CHECK_EQ(vio_backend_poll(&r.b), 0);
	CHECK_EQ(r.b.vsock.rx_count, 0);
	post_rx(&r, 0, 2);
	send_pkt(&r, VIO_VSOCK_ECHO_PORT, VSOCK_OP_RW, "old\n", 65536, 0, 0);
	CHECK(next_rx(&r, &h, NULL));
	CHECK_EQ(h.op, VSOCK_OP_RST);           /* the connection is not known any more */
	CHECK_EQ(r.b.vsock.bad_packets, 0);
	rig_free(&r);
}

/* ---- Segments mode (a trusted device): the bytes are in the frontend's RAM ---- */

#define FE_RAM          0x10000u
#define WINDOW_IPA      0x80000000ull

static uint8_t *fe_ram;

/* The rig in segments mode: the frontend's RAM at WINDOW_IPA in the backend's map. */
static void rig_segments(struct rig *r, uint32_t device_id, uint32_t queues, uint32_t queue_size,
			 uint32_t slot_size)
{
	rig_init(r, device_id, queues, queue_size, slot_size);
	fe_ram = calloc(1, FE_RAM);
	hdr(r)->data_mode = VIO_MODE_SEGMENTS;
	hdr(r)->window_ipa = WINDOW_IPA;
	hdr(r)->window_size = FE_RAM;
	r->b.window = fe_ram;
}

/* Post a request as the hypervisor does in segments mode: the list into the slot, the entry. */
static void post_segments(struct rig *r, uint32_t queue, uint32_t head,
			  const struct vio_segment *segs, uint32_t count)
{
	struct vio_header *h = hdr(r);
	uint32_t entries = h->num_queues * h->queue_size;
	uint32_t *prod = ring_word(r, VIO_REQUESTS, VIO_RING_PROD);
	uint32_t readable = 0, writable = 0;

	memcpy(slot(r, queue, head), &count, 4);
	memcpy(slot(r, queue, head) + VIO_SEGMENTS_AT, segs, count * sizeof(*segs));
	for (uint32_t i = 0; i < count; i++) {
		if (segs[i].flags & VIO_SEG_WRITABLE)
			writable += segs[i].len;
		else
			readable += segs[i].len;
	}
	struct vio_request *e = (struct vio_request *)(r->b.shm + VIO_REQUESTS +
		VIO_RING_ENTRIES_AT + (*prod % entries) * VIO_RING_ENTRY_SIZE);
	*e = (struct vio_request){ (uint16_t)queue, (uint16_t)head, readable, writable, h->epoch };
	(*prod)++;
}

static bool slot_zero_past(struct rig *r, uint32_t head, uint32_t count)
{
	for (uint32_t i = VIO_SEGMENTS_AT + count * sizeof(struct vio_segment); i < VIO_BLK_SLOT_SIZE; i++) {
		if (slot(r, 0, head)[i])
			return false;
	}
	return true;
}

void test_vio_backend_segments_blk_in_and_out(void)
{
	struct rig r;
	struct vio_completion c;

	rig_segments(&r, VIRTIO_ID_BLK, VIO_BLK_QUEUES, VIO_BLK_QUEUE_SIZE, VIO_BLK_SLOT_SIZE);
	r.b.disk = r.disk;
	r.b.disk_size = DISK_SECTORS * VIRTIO_BLK_SECTOR;
	CHECK(vio_backend_start(&r.b) == NULL);
	CHECK_EQ(r.b.data_mode, VIO_MODE_SEGMENTS);
	/* IN of two sectors from sector 3, into two buffers split mid-sector, then the status. */
	fe_ram[0x100] = VIRTIO_BLK_T_IN;
	fe_ram[0x108] = 3;
	const struct vio_segment in[] = {
		{ WINDOW_IPA + 0x100, VIRTIO_BLK_HEADER, 0 },
		{ WINDOW_IPA + 0x1000, 300, VIO_SEG_WRITABLE },
		{ WINDOW_IPA + 0x2000, 2 * VIRTIO_BLK_SECTOR - 300, VIO_SEG_WRITABLE },
		{ WINDOW_IPA + 0x3000, 1, VIO_SEG_WRITABLE },
	};
	post_segments(&r, 0, 4, in, 4);
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK(take(&r, &c));
	CHECK_EQ(c.head, 4);
	CHECK_EQ(c.written, 2 * VIRTIO_BLK_SECTOR + 1);
	CHECK(memcmp(fe_ram + 0x1000, r.disk + 3 * VIRTIO_BLK_SECTOR, 300) == 0);
	CHECK(memcmp(fe_ram + 0x2000, r.disk + 3 * VIRTIO_BLK_SECTOR + 300,
		     2 * VIRTIO_BLK_SECTOR - 300) == 0);
	CHECK_EQ(fe_ram[0x3000], VIRTIO_BLK_S_OK);
	CHECK(slot_zero_past(&r, 4, 4));        /* nothing of the data in the slot */
	/* OUT of one sector to the last one, its data in two buffers. */
	memset(fe_ram + 0x100, 0, VIRTIO_BLK_HEADER);
	fe_ram[0x100] = VIRTIO_BLK_T_OUT;
	fe_ram[0x108] = DISK_SECTORS - 1;
	memset(fe_ram + 0x4000, 0x5a, 200);
	memset(fe_ram + 0x5000, 0xa5, VIRTIO_BLK_SECTOR - 200);
	const struct vio_segment out[] = {
		{ WINDOW_IPA + 0x100, VIRTIO_BLK_HEADER, 0 },
		{ WINDOW_IPA + 0x4000, 200, 0 },
		{ WINDOW_IPA + 0x5000, VIRTIO_BLK_SECTOR - 200, 0 },
		{ WINDOW_IPA + 0x3000, 1, VIO_SEG_WRITABLE },
	};
	fe_ram[0x3000] = 0xff;
	post_segments(&r, 0, 5, out, 4);
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK(take(&r, &c));
	CHECK_EQ(c.written, 1);
	CHECK_EQ(fe_ram[0x3000], VIRTIO_BLK_S_OK);
	uint8_t *last = r.disk + (DISK_SECTORS - 1) * VIRTIO_BLK_SECTOR;
	CHECK(last[0] == 0x5a && last[199] == 0x5a && last[200] == 0xa5 &&
	      last[VIRTIO_BLK_SECTOR - 1] == 0xa5);
	CHECK_EQ(r.b.garbage, 0);
	free(fe_ram);
	rig_free(&r);
}

void test_vio_backend_segments_console(void)
{
	struct rig r;
	struct vio_completion c;

	rig_segments(&r, VIRTIO_ID_CONSOLE, VIO_CONSOLE_QUEUES, VIO_CONSOLE_QUEUE_SIZE,
		     VIO_CONSOLE_SLOT_SIZE);
	CHECK(vio_backend_start(&r.b) == NULL);
	memcpy(fe_ram + 0x800, "trusted ", 8);
	memcpy(fe_ram + 0x900, "line\n", 5);
	const struct vio_segment tx[] = {
		{ WINDOW_IPA + 0x800, 8, 0 },
		{ WINDOW_IPA + 0x900, 5, 0 },
	};
	post_segments(&r, VIO_CONSOLE_TRANSMITQ, 0, tx, 2);
	CHECK_EQ(vio_backend_poll(&r.b), 1);
	CHECK(take(&r, &c));
	CHECK_EQ(c.written, 0);
	CHECK_EQ(r.nlines, 1);
	CHECK(strcmp(r.lines[0], "trusted line") == 0);
	free(fe_ram);
	rig_free(&r);
}

/* A list that is not one the hypervisor writes is skipped and counted; nothing is touched. */
void test_vio_backend_segments_garbage(void)
{
	struct rig r;
	struct vio_completion c;
	static const struct vio_segment bad[][2] = {
		{ { WINDOW_IPA - 0x1000, 16, 0 }, { WINDOW_IPA, 1, VIO_SEG_WRITABLE } },
		{ { WINDOW_IPA + FE_RAM - 8, 16, 0 }, { WINDOW_IPA, 1, VIO_SEG_WRITABLE } },
		{ { WINDOW_IPA, 1, VIO_SEG_WRITABLE }, { WINDOW_IPA + 0x100, 16, 0 } },
		{ { WINDOW_IPA + 0x100, 16, 0 }, { WINDOW_IPA, 1, VIO_SEG_WRITABLE | 2 } },
	};

	rig_segments(&r, VIRTIO_ID_BLK, VIO_BLK_QUEUES, VIO_BLK_QUEUE_SIZE, VIO_BLK_SLOT_SIZE);
	r.b.disk = r.disk;
	r.b.disk_size = DISK_SECTORS * VIRTIO_BLK_SECTOR;
	CHECK(vio_backend_start(&r.b) == NULL);
	for (uint32_t i = 0; i < 4; i++)
		post_segments(&r, 0, i, bad[i], 2);
	/* Counts that do not add up to the request's. */
	post_segments(&r, 0, 4, bad[0] + 1, 1);
	struct vio_request *e = (struct vio_request *)(r.b.shm + VIO_REQUESTS + VIO_RING_ENTRIES_AT +
						       4 * VIO_RING_ENTRY_SIZE);
	e->writable = 2;
	/* More segments than a queue has entries. */
	post_segments(&r, 0, 5, bad[0] + 1, 1);
	uint32_t many = VIO_BLK_QUEUE_SIZE + 1;
	memcpy(slot(&r, 0, 5), &many, 4);
	CHECK_EQ(vio_backend_poll(&r.b), 0);
	CHECK(!take(&r, &c));
	CHECK_EQ(r.b.garbage, 6);
	for (uint32_t i = 0; i < FE_RAM; i++)
		CHECK_EQ(fe_ram[i], 0);
	free(fe_ram);
	rig_free(&r);
}

void test_vio_backend_segments_start_checks_the_window(void)
{
	struct rig r;

	rig_segments(&r, VIRTIO_ID_CONSOLE, VIO_CONSOLE_QUEUES, VIO_CONSOLE_QUEUE_SIZE,
		     VIO_CONSOLE_SLOT_SIZE);
	hdr(&r)->window_size = 0;
	CHECK(vio_backend_start(&r.b) != NULL);
	hdr(&r)->window_size = FE_RAM;
	hdr(&r)->data_mode = 7;
	CHECK(vio_backend_start(&r.b) != NULL);
	CHECK_EQ(hdr(&r)->backend_ready, 0);
	hdr(&r)->data_mode = VIO_MODE_SEGMENTS;
	CHECK(vio_backend_start(&r.b) == NULL);
	free(fe_ram);
	rig_free(&r);
}
