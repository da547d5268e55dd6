/*
 * Host test of tern-vio's request logic (guests/linux/tern-vio/vio_serve.c): a virtio channel
 * in ordinary memory, written as the hypervisor writes it, and a disk / tap in memory.
 * `vio_serve_test NAME` runs one case; exit status 0 and "ok NAME" if it passed.
 * Built and run by tests/tool/test_tern_vio.py under ASan/UBSan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vio_serve.h"

#define CHECK(cond)                                                                     \
	do {                                                                            \
		if (!(cond)) {                                                          \
			printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);          \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

#define DISK_SECTORS    64u

static uint8_t *shm;
static uint64_t shm_size;
static struct vio_dev dev;
static uint8_t disk[DISK_SECTORS * VIO_SECTOR];
static uint8_t sent[4096];
static uint32_t sent_len, sent_count;

static bool read_at(void *ctx, uint64_t offset, void *buf, uint32_t n)
{
	(void)ctx;
	if (offset + n > sizeof(disk))
		return false;
	memcpy(buf, disk + offset, n);
	return true;
}

static bool write_at(void *ctx, uint64_t offset, const void *buf, uint32_t n)
{
	(void)ctx;
	if (offset + n > sizeof(disk))
		return false;
	memcpy(disk + offset, buf, n);
	return true;
}

static void tx(void *ctx, const uint8_t *frame, uint32_t n)
{
	(void)ctx;
	CHECK(n <= sizeof(sent));
	memcpy(sent, frame, n);
	sent_len = n;
	sent_count++;
}

static const struct vio_ops ops = {
	.ctx = 0, .sectors = DISK_SECTORS, .id = "tern-disk0",
	.read_at = read_at, .write_at = write_at, .tx = tx,
};

static struct vio_header *header(void)
{
	return (struct vio_header *)shm;
}

static uint32_t *index_at(uint32_t ring, uint32_t which)
{
	return (uint32_t *)(shm + ring + which);
}

static uint8_t *slot(uint32_t queue, uint32_t head)
{
	struct vio_header *h = header();

	return shm + VIO_DATA + ((uint64_t)queue * h->queue_size + head) * h->slot_size;
}

/* The channel as the hypervisor leaves it at boot, for device `id`. */
static void channel(uint32_t id)
{
	uint32_t queues = id == VIRTIO_ID_NET ? VIO_NET_QUEUES : VIO_BLK_QUEUES;
	uint32_t size = id == VIRTIO_ID_NET ? VIO_NET_QUEUE_SIZE : VIO_BLK_QUEUE_SIZE;
	uint32_t slot_size = id == VIRTIO_ID_NET ? VIO_NET_SLOT_SIZE : VIO_BLK_SLOT_SIZE;
	struct vio_header *h;

	shm_size = VIO_DATA + (uint64_t)queues * size * slot_size;
	shm = aligned_alloc(4096, shm_size);
	CHECK(shm);
	memset(shm, 0, shm_size);
	h = header();
	h->magic = VIO_MAGIC;
	h->version = VIO_VERSION;
	h->device_id = id;
	h->num_queues = queues;
	h->queue_size = size;
	h->slot_size = slot_size;
	for (uint32_t i = 0; i < sizeof(disk); i++)
		disk[i] = (uint8_t)(i * 7 + i / VIO_SECTOR);
}

/* Post a request as the hypervisor does: the entry, then prod. */
static void request(uint16_t queue, uint16_t head, uint32_t readable, uint32_t writable)
{
	struct vio_header *h = header();
	uint32_t entries = h->num_queues * h->queue_size;
	uint32_t *prod = index_at(VIO_REQUESTS, VIO_RING_PROD);
	struct vio_request *e = (struct vio_request *)(shm + VIO_REQUESTS + VIO_RING_ENTRIES_AT) +
				*prod % entries;

	*e = (struct vio_request){ .queue = queue, .head = head, .readable = readable,
				   .writable = writable, .epoch = h->epoch };
	++*prod;
}

static void blk_header(uint16_t head, uint32_t type, uint64_t sector)
{
	uint8_t *s = slot(0, head);

	memset(s, 0, VIRTIO_BLK_OUTHDR);
	memcpy(s, &type, 4);
	memcpy(s + 8, &sector, 8);
}

static uint32_t completions(void)
{
	return *index_at(VIO_COMPLETIONS, VIO_RING_PROD) -
	       *index_at(VIO_COMPLETIONS, VIO_RING_CONS);
}

/* Take the oldest completion as the hypervisor does. */
static struct vio_completion take(void)
{
	struct vio_header *h = header();
	uint32_t entries = h->num_queues * h->queue_size;
	uint32_t *cons = index_at(VIO_COMPLETIONS, VIO_RING_CONS);
	struct vio_completion c;

	CHECK(completions() > 0);
	c = ((struct vio_completion *)(shm + VIO_COMPLETIONS + VIO_RING_ENTRIES_AT))[*cons % entries];
	++*cons;
	return c;
}

static void open_dev(uint32_t id)
{
	channel(id);
	CHECK(vio_open(&dev, shm, shm_size, id) == 0);
}

static void test_open_checks_the_header(void)
{
	channel(VIRTIO_ID_BLK);
	CHECK(vio_open(&dev, shm, shm_size, VIRTIO_ID_NET) != 0);       /* another type */
	CHECK(vio_open(&dev, shm, shm_size - 4096, VIRTIO_ID_BLK) != 0); /* too small */
	header()->slot_size = VIO_NET_SLOT_SIZE;
	CHECK(vio_open(&dev, shm, shm_size, VIRTIO_ID_BLK) != 0);       /* another shape */
	header()->slot_size = VIO_BLK_SLOT_SIZE;
	header()->magic = 0;
	CHECK(vio_open(&dev, shm, shm_size, VIRTIO_ID_BLK) != 0);
	header()->magic = VIO_MAGIC;
	CHECK(vio_open(&dev, shm, shm_size, VIRTIO_ID_BLK) == 0);
}

/* A trusted device (segments mode) is not one it can serve: refused, nothing served. */
static void test_open_refuses_a_trusted_device(void)
{
	channel(VIRTIO_ID_BLK);
	header()->data_mode = VIO_MODE_SEGMENTS;
	const char *why = vio_open(&dev, shm, shm_size, VIRTIO_ID_BLK);
	CHECK(why != 0 && strstr(why, "trusted") != 0);
	CHECK(header()->backend_ready == 0);
}

static void test_blk_config_then_ready(void)
{
	const uint8_t want[16] = { 64, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x10, 0, 0, 7, 0, 0, 0 };

	open_dev(VIRTIO_ID_BLK);
	header()->config_generation = 5;
	vio_blk_config(&dev, 64);
	CHECK(header()->backend_ready == 0);
	vio_ready(&dev);
	CHECK(memcmp(shm + VIO_CONFIG, want, sizeof(want)) == 0);
	CHECK(header()->config_generation == 6);
	CHECK(header()->backend_ready == VIO_READY);
}

static void test_net_config_is_the_names_mac(void)
{
	uint8_t a[6], b[6], c[6];

	vio_mac_from_name("net0", a);
	vio_mac_from_name("net0", b);
	vio_mac_from_name("net1", c);
	CHECK(memcmp(a, b, 6) == 0 && memcmp(a, c, 6) != 0);
	CHECK((a[0] & 3) == 2);                 /* locally administered, unicast */
	open_dev(VIRTIO_ID_NET);
	vio_net_config(&dev, a);
	CHECK(memcmp(shm + VIO_CONFIG, a, 6) == 0);
}

static void test_blk_in_reads_the_disk(void)
{
	struct vio_completion c;
	uint8_t *s;

	open_dev(VIRTIO_ID_BLK);
	blk_header(3, VIRTIO_BLK_T_IN, 2);
	request(0, 3, VIRTIO_BLK_OUTHDR, 2 * VIO_SECTOR + 1);
	CHECK(vio_serve(&dev, &ops) == 1);
	CHECK(vio_take_posted(&dev) == 1 && vio_take_posted(&dev) == 0);
	CHECK(*index_at(VIO_REQUESTS, VIO_RING_CONS) == 1);
	c = take();
	CHECK(c.queue == 0 && c.head == 3 && c.written == 2 * VIO_SECTOR + 1 && c.epoch == 0);
	s = slot(0, 3);
	CHECK(memcmp(s + VIRTIO_BLK_OUTHDR, disk + 2 * VIO_SECTOR, 2 * VIO_SECTOR) == 0);
	CHECK(s[VIRTIO_BLK_OUTHDR + 2 * VIO_SECTOR] == VIRTIO_BLK_S_OK);
}

static void test_blk_out_writes_the_disk(void)
{
	struct vio_completion c;
	uint8_t *s;

	open_dev(VIRTIO_ID_BLK);
	blk_header(0, VIRTIO_BLK_T_OUT, 63);
	s = slot(0, 0);
	memset(s + VIRTIO_BLK_OUTHDR, 0xa5, VIO_SECTOR);
	s[VIRTIO_BLK_OUTHDR + VIO_SECTOR] = 0xff;
	request(0, 0, VIRTIO_BLK_OUTHDR + VIO_SECTOR, 1);
	CHECK(vio_serve(&dev, &ops) == 1);
	c = take();
	CHECK(c.written == 1);
	CHECK(s[VIRTIO_BLK_OUTHDR + VIO_SECTOR] == VIRTIO_BLK_S_OK);
	for (uint32_t i = 0; i < VIO_SECTOR; i++)
		CHECK(disk[63 * VIO_SECTOR + i] == 0xa5);
}

static void test_blk_beyond_the_end_is_ioerr(void)
{
	uint8_t *s;

	open_dev(VIRTIO_ID_BLK);
	blk_header(1, VIRTIO_BLK_T_IN, 63);     /* two sectors from the last one */
	request(0, 1, VIRTIO_BLK_OUTHDR, 2 * VIO_SECTOR + 1);
	blk_header(2, VIRTIO_BLK_T_OUT, UINT64_MAX / VIO_SECTOR);
	request(0, 2, VIRTIO_BLK_OUTHDR + VIO_SECTOR, 1);
	CHECK(vio_serve(&dev, &ops) == 2);
	CHECK(take().head == 1 && take().head == 2);
	s = slot(0, 1);
	CHECK(s[VIRTIO_BLK_OUTHDR + 2 * VIO_SECTOR] == VIRTIO_BLK_S_IOERR);
	CHECK(s[VIRTIO_BLK_OUTHDR] == 0);       /* nothing of the disk */
	CHECK(slot(0, 2)[VIRTIO_BLK_OUTHDR + VIO_SECTOR] == VIRTIO_BLK_S_IOERR);
}

static void test_blk_get_id_and_unsupported(void)
{
	uint8_t want[VIRTIO_BLK_ID_BYTES] = "tern-disk0";
	uint8_t *s;

	open_dev(VIRTIO_ID_BLK);
	blk_header(4, VIRTIO_BLK_T_GET_ID, 0);
	memset(slot(0, 4) + VIRTIO_BLK_OUTHDR, 0x55, VIRTIO_BLK_ID_BYTES + 1);
	request(0, 4, VIRTIO_BLK_OUTHDR, VIRTIO_BLK_ID_BYTES + 1);
	blk_header(5, 4 /* FLUSH: not offered */, 0);
	request(0, 5, VIRTIO_BLK_OUTHDR, 1);
	CHECK(vio_serve(&dev, &ops) == 2);
	s = slot(0, 4);
	CHECK(memcmp(s + VIRTIO_BLK_OUTHDR, want, sizeof(want)) == 0);
	CHECK(s[VIRTIO_BLK_OUTHDR + VIRTIO_BLK_ID_BYTES] == VIRTIO_BLK_S_OK);
	CHECK(take().written == VIRTIO_BLK_ID_BYTES + 1);
	CHECK(slot(0, 5)[VIRTIO_BLK_OUTHDR] == VIRTIO_BLK_S_UNSUPP);
	CHECK(take().written == 1);
}

static void test_garbage_is_skipped_and_counted(void)
{
	open_dev(VIRTIO_ID_BLK);
	request(1, 0, VIRTIO_BLK_OUTHDR, 1);                    /* no queue 1 */
	request(0, VIO_BLK_QUEUE_SIZE, VIRTIO_BLK_OUTHDR, 1);   /* no such head */
	request(0, 0, VIO_BLK_SLOT_SIZE + 1, 0);                /* beyond the slot */
	request(0, 0, VIO_BLK_SLOT_SIZE, 1);                    /* readable + writable */
	blk_header(6, VIRTIO_BLK_T_IN, 0);
	request(0, 6, VIRTIO_BLK_OUTHDR, VIO_SECTOR + 1);       /* a good one after them */
	CHECK(vio_serve(&dev, &ops) == 1);
	CHECK(dev.stats.garbage == 4 && dev.first_garbage != 0);
	CHECK(take().head == 6 && completions() == 0);
	CHECK(*index_at(VIO_REQUESTS, VIO_RING_CONS) == 5);
	/* A prod beyond the ring's entries: skipped to it, counted. */
	*index_at(VIO_REQUESTS, VIO_RING_PROD) += VIO_BLK_QUEUE_SIZE + 1;
	CHECK(vio_serve(&dev, &ops) == 0);
	CHECK(dev.stats.garbage == 5);
	CHECK(*index_at(VIO_REQUESTS, VIO_RING_CONS) == *index_at(VIO_REQUESTS, VIO_RING_PROD));
}

static void test_short_requests_are_given_back(void)
{
	open_dev(VIRTIO_ID_BLK);
	request(0, 7, VIRTIO_BLK_OUTHDR, 0);                    /* no status byte */
	request(0, 8, 4, 1);                                    /* no whole header */
	CHECK(vio_serve(&dev, &ops) == 2);
	CHECK(take().written == 0);
	CHECK(take().written == 1 && slot(0, 8)[4] == VIRTIO_BLK_S_IOERR);
	CHECK(dev.stats.malformed == 2);
}

static void test_a_requests_old_epoch_is_dropped(void)
{
	open_dev(VIRTIO_ID_BLK);
	blk_header(0, VIRTIO_BLK_T_IN, 0);
	request(0, 0, VIRTIO_BLK_OUTHDR, VIO_SECTOR + 1);
	header()->epoch = 1;                    /* the frontend reset the device since */
	CHECK(vio_serve(&dev, &ops) == 0);
	CHECK(dev.stats.stale == 1 && completions() == 0);
}

static void test_indices_wrap(void)
{
	open_dev(VIRTIO_ID_BLK);
	*index_at(VIO_REQUESTS, VIO_RING_PROD) = UINT32_MAX - 1;
	*index_at(VIO_REQUESTS, VIO_RING_CONS) = UINT32_MAX - 1;
	*index_at(VIO_COMPLETIONS, VIO_RING_PROD) = UINT32_MAX;
	*index_at(VIO_COMPLETIONS, VIO_RING_CONS) = UINT32_MAX;
	CHECK(vio_open(&dev, shm, shm_size, VIRTIO_ID_BLK) == 0);
	for (uint16_t head = 0; head < 4; head++) {
		blk_header(head, VIRTIO_BLK_T_IN, head);
		request(0, head, VIRTIO_BLK_OUTHDR, VIO_SECTOR + 1);
	}
	CHECK(vio_serve(&dev, &ops) == 4);
	for (uint16_t head = 0; head < 4; head++)
		CHECK(take().head == head);
	CHECK(*index_at(VIO_REQUESTS, VIO_RING_CONS) == 2);
	CHECK(*index_at(VIO_COMPLETIONS, VIO_RING_PROD) == 3);
}

static void test_net_tx_strips_the_header(void)
{
	uint8_t *s;

	open_dev(VIRTIO_ID_NET);
	s = slot(VIO_NET_TXQ, 9);
	memset(s, 0xee, VIO_NET_HDR);
	for (uint32_t i = 0; i < 60; i++)
		s[VIO_NET_HDR + i] = (uint8_t)i;
	request(VIO_NET_TXQ, 9, VIO_NET_HDR + 60, 0);
	CHECK(vio_serve(&dev, &ops) == 1);
	CHECK(sent_count == 1 && sent_len == 60 && sent[0] == 0 && sent[59] == 59);
	CHECK(take().written == 0);
}

static void test_net_rx_fills_held_buffers_in_order(void)
{
	uint8_t frame[100], hdr[VIO_NET_HDR] = { 0 };
	struct vio_completion c;

	hdr[VIO_NET_NUM_BUFFERS_AT] = 1;
	for (uint32_t i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)(0x80 + i);
	open_dev(VIRTIO_ID_NET);
	CHECK(!vio_net_rx(&dev, frame, sizeof(frame)));         /* nothing held: dropped */
	CHECK(dev.stats.rx_dropped == 1);
	request(VIO_NET_RXQ, 5, 0, VIO_NET_HDR + 1518);
	request(VIO_NET_RXQ, 2, 0, VIO_NET_HDR + 1518);
	CHECK(vio_serve(&dev, &ops) == 0 && completions() == 0);        /* held */
	memset(slot(VIO_NET_RXQ, 5), 0xee, VIO_NET_HDR);
	CHECK(vio_net_rx(&dev, frame, sizeof(frame)));
	CHECK(vio_net_rx(&dev, frame, 3));
	CHECK(vio_take_posted(&dev) == 2);
	c = take();
	CHECK(c.queue == VIO_NET_RXQ && c.head == 5 && c.written == VIO_NET_HDR + sizeof(frame));
	CHECK(memcmp(slot(VIO_NET_RXQ, 5), hdr, VIO_NET_HDR) == 0);
	CHECK(memcmp(slot(VIO_NET_RXQ, 5) + VIO_NET_HDR, frame, sizeof(frame)) == 0);
	CHECK(take().head == 2);
	CHECK(!vio_net_rx(&dev, frame, sizeof(frame)) && dev.stats.rx_dropped == 2);
}

static void test_net_rx_too_big_or_after_a_reset_is_dropped(void)
{
	uint8_t frame[64] = { 0 };

	open_dev(VIRTIO_ID_NET);
	request(VIO_NET_RXQ, 0, 0, VIO_NET_HDR + 32);
	vio_serve(&dev, &ops);
	CHECK(!vio_net_rx(&dev, frame, sizeof(frame)));         /* does not fit */
	CHECK(vio_net_rx(&dev, frame, 32));                     /* the buffer is still there */
	CHECK(take().written == VIO_NET_HDR + 32);
	request(VIO_NET_RXQ, 1, 0, VIO_NET_HDR + 1518);
	vio_serve(&dev, &ops);
	header()->epoch++;                      /* the frontend's reset took the buffer back */
	CHECK(!vio_net_rx(&dev, frame, sizeof(frame)) && completions() == 0);
}

static const struct {
	const char *name;
	void (*run)(void);
} tests[] = {
#define T(name) { #name, name }
	T(test_open_checks_the_header),
	T(test_open_refuses_a_trusted_device),
	T(test_blk_config_then_ready),
	T(test_net_config_is_the_names_mac),
	T(test_blk_in_reads_the_disk),
	T(test_blk_out_writes_the_disk),
	T(test_blk_beyond_the_end_is_ioerr),
	T(test_blk_get_id_and_unsupported),
	T(test_garbage_is_skipped_and_counted),
	T(test_short_requests_are_given_back),
	T(test_a_requests_old_epoch_is_dropped),
	T(test_indices_wrap),
	T(test_net_tx_strips_the_header),
	T(test_net_rx_fills_held_buffers_in_order),
	T(test_net_rx_too_big_or_after_a_reset_is_dropped),
#undef T
};

int main(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (argc > 1 && strcmp(argv[1], tests[i].name) != 0)
			continue;
		tests[i].run();
		printf("ok %s\n", tests[i].name);
		free(shm);
		shm = 0;
	}
	return 0;
}
