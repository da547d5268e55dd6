#include "vio_backend.h"

/*
 * The channel is shared with the hypervisor on another core: its indices are read and written
 * once each through volatile pointers, and fences order them against the entries and slots
 * they publish (the compiler's own fence: dmb ish on arm64, fence rw,rw on riscv64, as
 * channel_barrier).
 */
static inline void fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static volatile uint32_t *word(const struct vio_backend *b, uint32_t offset)
{
	return (volatile uint32_t *)(b->shm + offset);
}

static volatile struct vio_header *header(const struct vio_backend *b)
{
	return (volatile struct vio_header *)b->shm;
}

/* Byte loops: the slots may be Device memory to the backend (MMU off), where only aligned
 * accesses are allowed. */
static void copy_bytes(uint8_t *dst, const uint8_t *src, uint64_t n)
{
	while (n--)
		*dst++ = *src++;
}

static void zero_bytes(uint8_t *dst, uint64_t n)
{
	while (n--)
		*dst++ = 0;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le(uint8_t *p, uint64_t v, uint32_t bytes)
{
	for (uint32_t i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

bool vio_shape(uint32_t device_id, uint32_t *queues, uint32_t *queue_size, uint32_t *slot_size)
{
	switch (device_id) {
	case VIRTIO_ID_BLK:
		*queues = VIO_BLK_QUEUES;
		*queue_size = VIO_BLK_QUEUE_SIZE;
		*slot_size = VIO_BLK_SLOT_SIZE;
		return true;
	case VIRTIO_ID_CONSOLE:
		*queues = VIO_CONSOLE_QUEUES;
		*queue_size = VIO_CONSOLE_QUEUE_SIZE;
		*slot_size = VIO_CONSOLE_SLOT_SIZE;
		return true;
	case VIRTIO_ID_VSOCK:
		*queues = VIO_VSOCK_QUEUES;
		*queue_size = VIO_VSOCK_QUEUE_SIZE;
		*slot_size = VIO_VSOCK_SLOT_SIZE;
		return true;
	default:
		return false;
	}
}

const char *vio_backend_start(struct vio_backend *b)
{
	volatile struct vio_header *h = header(b);
	uint32_t queues, queue_size, slot_size;

	if (b->size < VIO_DATA)
		return "channel smaller than a virtio channel's header and rings";
	if (h->magic != VIO_MAGIC || h->version != VIO_VERSION)
		return "no virtio channel header (magic or version)";
	b->device_id = h->device_id;
	if (!vio_shape(b->device_id, &queues, &queue_size, &slot_size))
		return "device type not served here (blk, console and vsock are)";
	if (h->num_queues != queues || h->queue_size != queue_size || h->slot_size != slot_size)
		return "header's queues, queue size or slot size is not the device's shape";
	if ((uint64_t)queues * queue_size * slot_size > b->size - VIO_DATA)
		return "channel too small for its data slots";
	b->num_queues = queues;
	b->queue_size = queue_size;
	b->slot_size = slot_size;
	b->data_mode = h->data_mode;
	if (b->data_mode == VIO_MODE_SEGMENTS) {
		b->window_ipa = h->window_ipa;
		b->window_size = h->window_size;
		if (!b->window_size || b->window_ipa + b->window_size < b->window_ipa)
			return "segments mode without a window onto the frontend's RAM";
		if (!VIO_SEGMENTS_FIT(queue_size, slot_size))
			return "slot too small for a chain's scatter list";
		if (!b->window)
			b->window = (uint8_t *)(uintptr_t)b->window_ipa;
	} else if (b->data_mode != VIO_MODE_COPY) {
		return "data mode not served here (copy and segments are)";
	}
	if (b->device_id == VIRTIO_ID_BLK && b->disk_size < VIRTIO_BLK_SECTOR)
		return "no disk to serve (the partition's initrd)";

	if (b->device_id == VIRTIO_ID_VSOCK) {
		/* It fills held receive buffers later, straight in their slots. */
		if (b->data_mode != VIO_MODE_COPY)
			return "vsock is served in copy mode only (not backend_trusted)";
		const char *why = vio_vsock_start(b);

		if (why)
			return why;
	}

	uint8_t *config = b->shm + VIO_CONFIG;

	zero_bytes(config, VIO_CONFIG_SIZE);
	if (b->device_id == VIRTIO_ID_VSOCK)
		put_le(config, b->vsock.guest_cid, 8);   /* struct virtio_vsock_config: kept */
	if (b->device_id == VIRTIO_ID_BLK) {
		/* struct virtio_blk_config: capacity, size_max, seg_max; little-endian. */
		put_le(config + 0, b->disk_size / VIRTIO_BLK_SECTOR, 8);
		put_le(config + 8, VIO_BLK_SIZE_MAX, 4);
		put_le(config + 12, VIO_BLK_SEG_MAX, 4);
	}
	b->line_len = 0;
	b->held = 0;
	b->held_epoch = h->epoch;
	/* The frontend must see the new config space whole once the generation moves. */
	fence();
	h->config_generation = h->config_generation + 1;
	fence();
	h->backend_ready = VIO_READY;
	return 0;
}

bool vio_backend_pending(const struct vio_backend *b)
{
	return *word(b, VIO_REQUESTS + VIO_RING_PROD) != *word(b, VIO_REQUESTS + VIO_RING_CONS);
}

/*
 * A request's bytes, wherever they are: in its slot (copy mode: the readable ones at its start,
 * the writable ones after them) or in the frontend's buffers the slot lists (segments mode,
 * through the window). Offsets count the bytes of one kind, readable or writable, in order.
 */
struct vio_io {
	const struct vio_backend *b;
	uint8_t *slot;
	uint32_t readable, writable;
	uint32_t count;                 /* segments mode: the list's length */
};

static struct vio_segment io_segment(const struct vio_io *io, uint32_t i)
{
	const volatile struct vio_segment *s = (const volatile struct vio_segment *)
		(io->slot + VIO_SEGMENTS_AT) + i;
	struct vio_segment seg = { s->addr, s->len, s->flags };

	return seg;
}

/* Copy n bytes between buf and the request's bytes of one kind from `at`; buf 0 writes zeros. */
static void io_move(const struct vio_io *io, bool writable, uint32_t at, uint8_t *buf,
		    uint32_t n, bool to_request)
{
	if (io->b->data_mode == VIO_MODE_COPY) {
		uint8_t *p = io->slot + (writable ? io->readable : 0) + at;

		if (!buf)
			zero_bytes(p, n);
		else if (to_request)
			copy_bytes(p, buf, n);
		else
			copy_bytes(buf, p, n);
		return;
	}
	for (uint32_t i = 0; i < io->count && n; i++) {
		struct vio_segment seg = io_segment(io, i);

		if (((seg.flags & VIO_SEG_WRITABLE) != 0) != writable)
			continue;
		if (at >= seg.len) {
			at -= seg.len;
			continue;
		}
		uint32_t k = seg.len - at < n ? seg.len - at : n;
		uint8_t *p = io->b->window + (seg.addr - io->b->window_ipa) + at;

		if (!buf) {
			zero_bytes(p, k);
		} else {
			if (to_request)
				copy_bytes(p, buf, k);
			else
				copy_bytes(buf, p, k);
			buf += k;
		}
		n -= k;
		at = 0;
	}
}

static void io_read(const struct vio_io *io, uint32_t at, uint8_t *dst, uint32_t n)
{
	io_move(io, false, at, dst, n, false);
}

static void io_write(const struct vio_io *io, uint32_t at, const uint8_t *src, uint32_t n)
{
	io_move(io, true, at, (uint8_t *)(uintptr_t)src, n, true);
}

static void io_zero(const struct vio_io *io, uint32_t at, uint32_t n)
{
	io_move(io, true, at, 0, n, true);
}

/*
 * Segments mode: the slot's list is one the hypervisor writes (at most a queue's entries, each
 * inside the window, the readable ones first, adding up to the request's counts); anything
 * else is garbage, not served.
 */
static bool segments_fit(const struct vio_backend *b, struct vio_io *io)
{
	const volatile uint32_t *count = (const volatile uint32_t *)io->slot;
	uint64_t readable = 0, writable = 0;

	io->count = *count;
	if (io->count > b->queue_size)
		return false;
	for (uint32_t i = 0; i < io->count; i++) {
		struct vio_segment seg = io_segment(io, i);
		uint64_t off = seg.addr - b->window_ipa;

		if (seg.addr < b->window_ipa || off > b->window_size ||
		    seg.len > b->window_size - off || (seg.flags & ~VIO_SEG_WRITABLE))
			return false;
		if (seg.flags & VIO_SEG_WRITABLE) {
			writable += seg.len;
		} else {
			if (writable)
				return false;
			readable += seg.len;
		}
	}
	return readable == io->readable && writable == io->writable;
}

static void line_flush(struct vio_backend *b)
{
	b->line[b->line_len] = '\0';
	if (b->line_out)
		b->line_out(b, b->line);
	b->line_len = 0;
}

/* Console output: whole lines; a line too long for the buffer goes out in pieces. */
static void console_bytes(struct vio_backend *b, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t c = p[i];

		if (c == '\n') {
			line_flush(b);
			continue;
		}
		if (c == '\r')
			continue;
		/* What reaches the board's console is text: no escape sequences from a frontend. */
		b->line[b->line_len++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
		if (b->line_len == VIO_LINE_MAX)
			line_flush(b);
	}
}

/* Where disk bytes [sector * 512, + len) are, or 0 if the disk does not hold them all. */
static uint8_t *disk_range(const struct vio_backend *b, uint64_t sector, uint64_t len)
{
	if (len % VIRTIO_BLK_SECTOR || sector > b->disk_size / VIRTIO_BLK_SECTOR)
		return 0;
	uint64_t offset = sector * VIRTIO_BLK_SECTOR;

	if (len > b->disk_size - offset)
		return 0;
	return b->disk + offset;
}

/*
 * A blk request: the header (type, ioprio, sector) and OUT's data are the readable bytes, IN's
 * data and the status byte the writable ones, the status last. Every writable byte is written
 * (what a failed request does not fill is zeroed), so written is always `writable`.
 */
static uint32_t serve_blk(struct vio_backend *b, const struct vio_io *io)
{
	uint32_t readable = io->readable;
	uint32_t data = io->writable - 1;
	uint8_t status = VIRTIO_BLK_S_IOERR;

	if (readable < VIRTIO_BLK_HEADER) {
		io_zero(io, 0, data);
	} else {
		uint8_t head[VIRTIO_BLK_HEADER];

		io_read(io, 0, head, VIRTIO_BLK_HEADER);
		uint32_t type = get_le32(head);
		uint64_t sector = get_le64(head + 8);

		switch (type) {
		case VIRTIO_BLK_T_IN: {
			const uint8_t *where = disk_range(b, sector, data);

			if (where) {
				io_write(io, 0, where, data);
				status = VIRTIO_BLK_S_OK;
			} else {
				io_zero(io, 0, data);
			}
			break;
		}
		case VIRTIO_BLK_T_OUT: {
			uint8_t *where = disk_range(b, sector, readable - VIRTIO_BLK_HEADER);

			if (where) {
				io_read(io, VIRTIO_BLK_HEADER, where, readable - VIRTIO_BLK_HEADER);
				status = VIRTIO_BLK_S_OK;
			}
			io_zero(io, 0, data);
			break;
		}
		case VIRTIO_BLK_T_GET_ID: {
			/* "tern-NAME", NUL-padded to 20 bytes: no terminator if it fills them. */
			static const char prefix[] = "tern-";
			uint8_t id[VIRTIO_BLK_ID_BYTES];
			uint32_t i = 0;

			zero_bytes(id, sizeof(id));
			for (; prefix[i]; i++)
				id[i] = (uint8_t)prefix[i];
			for (uint32_t k = 0; b->name[k] && i < sizeof(id); k++, i++)
				id[i] = (uint8_t)b->name[k];
			io_zero(io, 0, data);
			io_write(io, 0, id, data < sizeof(id) ? data : sizeof(id));
			status = VIRTIO_BLK_S_OK;
			break;
		}
		default:
			io_zero(io, 0, data);
			status = VIRTIO_BLK_S_UNSUPP;
			break;
		}
	}
	io_write(io, data, &status, 1);
	return io->writable;
}

/*
 * One valid request. Returns true with *written set if it is complete now, false if it is held
 * (a console's receive buffer: there is no input).
 */
static bool serve(struct vio_backend *b, const struct vio_io *io, const struct vio_request *req,
		  uint32_t *written)
{
	*written = 0;
	if (b->device_id == VIRTIO_ID_VSOCK)
		return vio_vsock_request(b, req, io->slot, written); /* copy mode: vio_backend_start */
	if (b->device_id == VIRTIO_ID_CONSOLE) {
		if (req->queue == VIO_CONSOLE_RECEIVEQ) {
			b->held++;
			return false;
		}
		uint8_t chunk[64];

		for (uint32_t at = 0; at < req->readable; at += sizeof(chunk)) {
			uint32_t n = req->readable - at < sizeof(chunk) ? req->readable - at : sizeof(chunk);

			io_read(io, at, chunk, n);
			console_bytes(b, chunk, n);
		}
		return true;
	}
	/* blk: no room for the status byte is the frontend's error; its buffers go back unwritten. */
	if (req->writable == 0)
		return true;
	*written = serve_blk(b, io);
	return true;
}

static bool request_fits(const struct vio_backend *b, const struct vio_request *req)
{
	return req->queue < b->num_queues && req->head < b->queue_size &&
	       req->readable <= b->slot_size && req->writable <= b->slot_size &&
	       (uint64_t)req->readable + req->writable <= b->slot_size;
}

/* Completion `done` of the ring, not yet published. */
static void complete(struct vio_backend *b, uint32_t done, uint32_t queue, uint32_t head,
		     uint32_t written, uint32_t epoch)
{
	volatile struct vio_completion *c = (volatile struct vio_completion *)
		(b->shm + VIO_COMPLETIONS + VIO_RING_ENTRIES_AT +
		 (done % (b->num_queues * b->queue_size)) * VIO_RING_ENTRY_SIZE);

	c->queue = (uint16_t)queue;
	c->head = (uint16_t)head;
	c->written = written;
	c->epoch = epoch;
	c->reserved = 0;
	b->served++;
}

uint32_t vio_backend_poll(struct vio_backend *b)
{
	const volatile uint32_t *req_prod = word(b, VIO_REQUESTS + VIO_RING_PROD);
	volatile uint32_t *req_cons = word(b, VIO_REQUESTS + VIO_RING_CONS);
	volatile uint32_t *done_prod = word(b, VIO_COMPLETIONS + VIO_RING_PROD);
	const volatile uint32_t *done_cons = word(b, VIO_COMPLETIONS + VIO_RING_CONS);
	uint32_t entries = b->num_queues * b->queue_size;
	uint32_t prod = *req_prod;

	/* The entries and slots up to prod, and the epoch they were posted in, after prod. */
	fence();
	uint32_t epoch = header(b)->epoch;
	uint32_t cons = *req_cons;
	uint32_t done = *done_prod;
	uint32_t posted = 0;

	if (epoch != b->held_epoch) {
		/* The frontend reset the device: what it held belongs to a driver that is gone. */
		b->held = 0;
		b->held_epoch = epoch;
		if (b->device_id == VIRTIO_ID_VSOCK)
			vio_vsock_reset(b);
	}
	if (prod - cons > entries) {
		/* More than the ring holds: not a count to trust; take nothing before it. */
		b->garbage++;
		cons = prod;
	}
	while (cons != prod) {
		if (done - *done_cons >= entries)
			break;  /* the hypervisor has not taken the completions yet */

		const volatile struct vio_request *e = (const volatile struct vio_request *)
			(b->shm + VIO_REQUESTS + VIO_RING_ENTRIES_AT +
			 (cons % entries) * VIO_RING_ENTRY_SIZE);
		struct vio_request req = { e->queue, e->head, e->readable, e->writable, e->epoch };
		uint32_t written;

		cons++;
		if ((int32_t)(req.epoch - epoch) < 0) {
			b->stale++;
			continue;
		}
		if (req.epoch != epoch || !request_fits(b, &req)) {
			b->garbage++;
			continue;
		}
		struct vio_io io = { b, b->shm + VIO_DATA +
				     ((uint64_t)req.queue * b->queue_size + req.head) * b->slot_size,
				     req.readable, req.writable, 0 };
		if (b->data_mode == VIO_MODE_SEGMENTS && !segments_fit(b, &io)) {
			b->garbage++;
			continue;
		}
		if (!serve(b, &io, &req, &written))
			continue;
		complete(b, done++, req.queue, req.head, written, req.epoch);
		posted++;
	}
	/* vsock: the packets the requests made, into the rx buffers it holds (this epoch's). */
	uint16_t head;
	uint32_t written;

	while (b->device_id == VIRTIO_ID_VSOCK && done - *done_cons < entries &&
	       vio_vsock_next(b, &head, &written)) {
		complete(b, done++, VIO_VSOCK_RX, head, written, epoch);
		posted++;
	}
	/* The slots' bytes and the entries before the indices that publish them. */
	fence();
	*done_prod = done;
	*req_cons = cons;
	return posted;
}
