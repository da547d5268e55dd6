/*
 * The backend's side of a VirtIO channel: see vio_serve.h and tern/virtio_channel.h.
 *
 * Every access to the channel is a volatile load or store of at most 8 aligned bytes: Linux
 * maps BAR2 as device memory (no unaligned accesses), and the hypervisor writes its side
 * concurrently. A fence orders the ring's entries against its index, both ways.
 */
#include "vio_serve.h"

#include <stddef.h>

#define HDR_EPOCH               0x18u
#define HDR_BACKEND_READY       0x40u
#define HDR_CONFIG_GENERATION   0x44u

_Static_assert(offsetof(struct vio_header, epoch) == HDR_EPOCH, "vio: epoch");
_Static_assert(offsetof(struct vio_header, backend_ready) == HDR_BACKEND_READY, "vio: ready");
_Static_assert(offsetof(struct vio_header, config_generation) == HDR_CONFIG_GENERATION,
	       "vio: config_generation");

static void fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static uint32_t ld32(const struct vio_dev *d, uint64_t at)
{
	return *(volatile uint32_t *)(d->shm + at);
}

static void st32(const struct vio_dev *d, uint64_t at, uint32_t v)
{
	*(volatile uint32_t *)(d->shm + at) = v;
}

static void st8(const struct vio_dev *d, uint64_t at, uint8_t v)
{
	*(volatile uint8_t *)(d->shm + at) = v;
}

/* The widest access (8, 4 or 1 bytes) both addresses are aligned to. */
static uint32_t width(uint64_t a, uint64_t b)
{
	return ((a | b) & 7u) == 0 ? 8 : ((a | b) & 3u) == 0 ? 4 : 1;
}

/* n bytes of the channel at `at` into dst: whole words, then the tail byte by byte. */
static void shm_read(const struct vio_dev *d, uint64_t at, uint8_t *dst, uint32_t n)
{
	uint32_t w = width(at, (uintptr_t)dst), i = 0;

	for (; w == 8 && i + 8 <= n; i += 8)
		*(uint64_t *)(dst + i) = *(volatile uint64_t *)(d->shm + at + i);
	for (; w >= 4 && i + 4 <= n; i += 4)
		*(uint32_t *)(dst + i) = *(volatile uint32_t *)(d->shm + at + i);
	for (; i < n; i++)
		dst[i] = *(volatile uint8_t *)(d->shm + at + i);
}

static void shm_write(const struct vio_dev *d, uint64_t at, const uint8_t *src, uint32_t n)
{
	uint32_t w = width(at, (uintptr_t)src), i = 0;

	for (; w == 8 && i + 8 <= n; i += 8)
		*(volatile uint64_t *)(d->shm + at + i) = *(const uint64_t *)(src + i);
	for (; w >= 4 && i + 4 <= n; i += 4)
		*(volatile uint32_t *)(d->shm + at + i) = *(const uint32_t *)(src + i);
	for (; i < n; i++)
		st8(d, at + i, src[i]);
}

static void shm_zero(const struct vio_dev *d, uint64_t at, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		st8(d, at + i, 0);
}

static void config_le(const struct vio_dev *d, uint32_t offset, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		st8(d, VIO_CONFIG + offset + i, (uint8_t)(v >> (8 * i)));
}

static uint64_t slot_at(const struct vio_dev *d, uint32_t queue, uint32_t head)
{
	return VIO_DATA + ((uint64_t)queue * d->queue_size + head) * d->slot_size;
}

const char *vio_open(struct vio_dev *d, volatile void *shm, uint64_t size, uint32_t device_id)
{
	uint32_t queues, queue_size, slot_size;

	switch (device_id) {
	case VIRTIO_ID_NET:
		queues = VIO_NET_QUEUES;
		queue_size = VIO_NET_QUEUE_SIZE;
		slot_size = VIO_NET_SLOT_SIZE;
		break;
	case VIRTIO_ID_BLK:
		queues = VIO_BLK_QUEUES;
		queue_size = VIO_BLK_QUEUE_SIZE;
		slot_size = VIO_BLK_SLOT_SIZE;
		break;
	default:
		return "no such device type";
	}
	d->shm = shm;
	d->size = size;
	if (size < VIO_DATA + (uint64_t)queues * queue_size * slot_size)
		return "the channel is smaller than its device's shape";
	if (ld32(d, offsetof(struct vio_header, magic)) != VIO_MAGIC ||
	    ld32(d, offsetof(struct vio_header, version)) != VIO_VERSION)
		return "no virtio channel header (magic, version)";
	if (ld32(d, offsetof(struct vio_header, device_id)) != device_id)
		return "the channel serves another device type";
	/* A trusted device's data is in the frontend's RAM: the ivshmem function has no map of it. */
	if (ld32(d, offsetof(struct vio_header, data_mode)) != VIO_MODE_COPY)
		return "the device is trusted (backend_trusted): its data is in the frontend's RAM, "
		       "which a Linux user-space backend cannot map (a bare-metal backend, vback, can)";
	if (ld32(d, offsetof(struct vio_header, num_queues)) != queues ||
	    ld32(d, offsetof(struct vio_header, queue_size)) != queue_size ||
	    ld32(d, offsetof(struct vio_header, slot_size)) != slot_size)
		return "the channel's shape is not its device type's";
	d->device_id = device_id;
	d->num_queues = queues;
	d->queue_size = queue_size;
	d->slot_size = slot_size;
	d->entries = queues * queue_size;
	d->req_cons = ld32(d, VIO_REQUESTS + VIO_RING_CONS);
	d->comp_prod = ld32(d, VIO_COMPLETIONS + VIO_RING_PROD);
	d->posted = 0;
	d->epoch = ld32(d, HDR_EPOCH);
	d->first_garbage = 0;
	d->stats = (struct vio_stats){ 0 };
	d->held_first = 0;
	d->held_count = 0;
	return 0;
}

void vio_net_config(struct vio_dev *d, const uint8_t mac[6])
{
	for (unsigned i = 0; i < 6; i++)
		st8(d, VIO_CONFIG + i, mac[i]);
}

/* struct virtio_blk_config: capacity at 0, size_max at 8, seg_max at 12. */
void vio_blk_config(struct vio_dev *d, uint64_t sectors)
{
	config_le(d, 0, sectors, 8);
	config_le(d, 8, VIO_BLK_SIZE_MAX, 4);
	config_le(d, 12, VIO_BLK_SEG_MAX, 4);
}

void vio_ready(struct vio_dev *d)
{
	fence();
	st32(d, HDR_CONFIG_GENERATION, ld32(d, HDR_CONFIG_GENERATION) + 1);
	fence();
	st32(d, HDR_BACKEND_READY, VIO_READY);
}

void vio_mac_from_name(const char *name, uint8_t mac[6])
{
	uint64_t h = VIO_NET_MAC_FNV_BASIS;     /* the hypervisor's default, as it writes it */

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * VIO_NET_MAC_FNV_PRIME;
	mac[0] = VIO_NET_MAC_FIRST;
	for (unsigned i = 1; i < 6; i++)
		mac[i] = (uint8_t)(h >> (8 * (i - 1)));
}

static void post(struct vio_dev *d, const struct vio_request *r, uint32_t written)
{
	uint64_t at;

	if (d->comp_prod - ld32(d, VIO_COMPLETIONS + VIO_RING_CONS) >= d->entries) {
		d->stats.ring_full++;
		return;
	}
	at = VIO_COMPLETIONS + VIO_RING_ENTRIES_AT +
	     (uint64_t)(d->comp_prod % d->entries) * VIO_RING_ENTRY_SIZE;
	st32(d, at, (uint32_t)r->queue | (uint32_t)r->head << 16);
	st32(d, at + 4, written);
	st32(d, at + 8, r->epoch);
	st32(d, at + 12, 0);
	d->comp_prod++;
	/* The entry, and the slot's bytes before it, visible before the index that publishes them. */
	fence();
	st32(d, VIO_COMPLETIONS + VIO_RING_PROD, d->comp_prod);
	d->stats.completions++;
	d->posted++;
}

static void garbage(struct vio_dev *d, const char *what)
{
	d->stats.garbage++;
	if (!d->first_garbage)
		d->first_garbage = what;
}

/* The request's status byte is the last writable one; all writable bytes are written. */
static void blk_finish(struct vio_dev *d, const struct vio_request *r, uint8_t status)
{
	st8(d, slot_at(d, r->queue, r->head) + r->readable + r->writable - 1, status);
	post(d, r, r->writable);
}

static bool blk_in_range(const struct vio_ops *ops, uint64_t sector, uint32_t bytes)
{
	uint64_t sectors = (bytes + VIO_SECTOR - 1) / VIO_SECTOR;

	return sector <= ops->sectors && sectors <= ops->sectors - sector;
}

static void blk_request(struct vio_dev *d, const struct vio_request *r, const struct vio_ops *ops)
{
	uint64_t slot = slot_at(d, r->queue, r->head), sector;
	uint32_t type, data;
	uint8_t hdr[VIRTIO_BLK_OUTHDR] = { 0 };

	if (r->writable < 1) {
		/* No room for a status: nothing can be said, only the buffer given back. */
		d->stats.malformed++;
		post(d, r, 0);
		return;
	}
	if (r->readable < VIRTIO_BLK_OUTHDR) {
		d->stats.malformed++;
		blk_finish(d, r, VIRTIO_BLK_S_IOERR);
		return;
	}
	shm_read(d, slot, hdr, sizeof(hdr));
	type = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
	       (uint32_t)hdr[3] << 24;
	sector = 0;
	for (unsigned i = 0; i < 8; i++)
		sector |= (uint64_t)hdr[8 + i] << (8 * i);
	switch (type) {
	case VIRTIO_BLK_T_IN:
		data = r->writable - 1;
		if (!blk_in_range(ops, sector, data) ||
		    !ops->read_at(ops->ctx, sector * VIO_SECTOR, d->buf, data)) {
			shm_zero(d, slot + r->readable, data);
			blk_finish(d, r, VIRTIO_BLK_S_IOERR);
			return;
		}
		shm_write(d, slot + r->readable, d->buf, data);
		blk_finish(d, r, VIRTIO_BLK_S_OK);
		return;
	case VIRTIO_BLK_T_OUT:
		data = r->readable - VIRTIO_BLK_OUTHDR;
		if (!blk_in_range(ops, sector, data)) {
			blk_finish(d, r, VIRTIO_BLK_S_IOERR);
			return;
		}
		shm_read(d, slot + VIRTIO_BLK_OUTHDR, d->buf, data);
		blk_finish(d, r, ops->write_at(ops->ctx, sector * VIO_SECTOR, d->buf, data) ?
				 VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR);
		return;
	case VIRTIO_BLK_T_GET_ID:
		data = r->writable - 1;
		for (uint32_t i = 0; i < data; i++)
			d->buf[i] = 0;
		for (uint32_t i = 0; ops->id && ops->id[i] && i < data && i < VIRTIO_BLK_ID_BYTES; i++)
			d->buf[i] = (uint8_t)ops->id[i];
		shm_write(d, slot + r->readable, d->buf, data);
		blk_finish(d, r, VIRTIO_BLK_S_OK);
		return;
	default:
		blk_finish(d, r, VIRTIO_BLK_S_UNSUPP);
		return;
	}
}

/* Held receive buffers of an earlier epoch: the frontend's reset took them back. */
static void net_drop_stale(struct vio_dev *d, uint32_t epoch)
{
	if (epoch == d->epoch)
		return;
	d->epoch = epoch;
	d->held_first = 0;
	d->held_count = 0;
}

static void net_request(struct vio_dev *d, const struct vio_request *r, const struct vio_ops *ops)
{
	uint32_t n;

	if (r->queue == VIO_NET_RXQ) {
		if (r->readable != 0 || r->writable < VIO_NET_HDR ||
		    d->held_count == VIO_NET_QUEUE_SIZE) {
			d->stats.malformed++;
			post(d, r, 0);
			return;
		}
		d->held[(d->held_first + d->held_count) % VIO_NET_QUEUE_SIZE] = *r;
		d->held_count++;
		return;
	}
	if (r->readable < VIO_NET_HDR) {
		d->stats.malformed++;
		post(d, r, 0);
		return;
	}
	/* The header carries nothing without offloads: the frame follows it. */
	n = r->readable - VIO_NET_HDR;
	shm_read(d, slot_at(d, r->queue, r->head), d->buf, r->readable);
	if (ops->tx)
		ops->tx(ops->ctx, d->buf + VIO_NET_HDR, n);
	post(d, r, 0);
}

uint32_t vio_serve(struct vio_dev *d, const struct vio_ops *ops)
{
	uint64_t before = d->stats.completions;
	uint32_t prod, epoch;
	uint64_t at;
	struct vio_request r;

	prod = ld32(d, VIO_REQUESTS + VIO_RING_PROD);
	/* The entries up to prod are read after prod. */
	fence();
	epoch = ld32(d, HDR_EPOCH);
	if (d->device_id == VIRTIO_ID_NET)
		net_drop_stale(d, epoch);
	if (prod - d->req_cons > d->entries) {
		garbage(d, "request ring index beyond its entries");
		d->req_cons = prod;
	}
	for (; d->req_cons != prod; d->req_cons++) {
		at = VIO_REQUESTS + VIO_RING_ENTRIES_AT +
		     (uint64_t)(d->req_cons % d->entries) * VIO_RING_ENTRY_SIZE;
		r.queue = (uint16_t)ld32(d, at);
		r.head = (uint16_t)(ld32(d, at) >> 16);
		r.readable = ld32(d, at + 4);
		r.writable = ld32(d, at + 8);
		r.epoch = ld32(d, at + 12);
		d->stats.requests++;
		if (r.queue >= d->num_queues || r.head >= d->queue_size) {
			garbage(d, "request naming no queue or slot");
			continue;
		}
		if (r.readable > d->slot_size || r.writable > d->slot_size - r.readable) {
			garbage(d, "request larger than its slot");
			continue;
		}
		if (r.epoch != epoch) {
			d->stats.stale++;
			continue;
		}
		if (d->device_id == VIRTIO_ID_BLK)
			blk_request(d, &r, ops);
		else
			net_request(d, &r, ops);
	}
	/* Done with the entries before the hypervisor may reuse them. */
	fence();
	st32(d, VIO_REQUESTS + VIO_RING_CONS, d->req_cons);
	return (uint32_t)(d->stats.completions - before);
}

bool vio_net_rx(struct vio_dev *d, const uint8_t *frame, uint32_t n)
{
	struct vio_request r;
	uint8_t hdr[VIO_NET_HDR] = { 0 };
	uint64_t slot;

	net_drop_stale(d, ld32(d, HDR_EPOCH));
	if (!d->held_count || n > d->held[d->held_first].writable - VIO_NET_HDR) {
		d->stats.rx_dropped++;
		return false;
	}
	r = d->held[d->held_first];
	d->held_first = (d->held_first + 1) % VIO_NET_QUEUE_SIZE;
	d->held_count--;
	hdr[VIO_NET_NUM_BUFFERS_AT] = 1;
	slot = slot_at(d, r.queue, r.head) + r.readable;
	shm_write(d, slot, hdr, VIO_NET_HDR);
	shm_write(d, slot + VIO_NET_HDR, frame, n);
	post(d, &r, VIO_NET_HDR + n);
	return true;
}

uint32_t vio_take_posted(struct vio_dev *d)
{
	uint32_t n = d->posted;

	d->posted = 0;
	return n;
}
