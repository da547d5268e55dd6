/*
 * The hostile guest's VirtIO actions (tests/system/test_virtio_hostile.py), as a frontend at
 * the partition's virtio-mmio slot (lib/vio_driver.c) or as a device's backend on its virtio
 * channel (lib/vio_backend.c, tern/virtio_channel.h). Each prints PROBE-JSON lines
 * "test":"hostile-<action>": "phase":"acting" first, then "phase":"done" with what it saw.
 *
 *  - virtio-busy: hostile.requests virtio-blk reads of one sector (hostile.wait_us each at
 *    most), the data checked against the disk's known content (vio_disk_byte; the test writes
 *    the disk). A request not answered in time is a timeout: the device is reset and the
 *    action ends. Not a misdeed: the well-behaved frontend of the pair.
 *  - virtio-garbage: garbage written to every register, a descriptor outside its RAM, a
 *    looping chain, an available index moved past the queue; after each, what Status says
 *    (DEVICE_NEEDS_RESET expected for the last three), and that a reset and a new setup bring
 *    the device back (a read served).
 *  - virtio-storm: hostile.rounds notifies of its queue and of one it does not have, with
 *    nothing new to take, between two reads that must be served.
 *  - virtio-backend-garbage: the device's backend, answering each request first with garbage
 *    (a completion naming no outstanding head, one of the epoch before, one writing more than
 *    the request has room for; once, a completion ring producer moved past the ring), then
 *    correctly, until hostile.requests are served or hostile.until_us passes.
 *  - virtio-backend-silent: the device's backend, ready but never answering, until
 *    hostile.until_us.
 * Every wait sleeps hostile.poll_us (default 50) between its looks.
 */
#include "actions.h"

#include "channel.h"
#include "channel_arch.h"
#include "console.h"
#include "fdt.h"
#include "initrd.h"
#include "runtime.h"
#include "timer.h"
#include "vio_backend.h"
#include "vio_driver.h"

#define SECTOR          512u
#define DEFAULT_WAIT_US 100000u

/* The disk's byte at offset `at`, as the test writes it (tests/system/test_virtio_hostile.py). */
static uint8_t vio_disk_byte(uint64_t at)
{
	return (uint8_t)((at >> 9) * 131u + (at & 511u) * 7u + 0x5au);
}

static void (*pause_port)(uint64_t us);
static uint64_t poll_us;

static void pause_fn(void)
{
	pause_port(poll_us);
}
static struct vio_rings rings;
static struct vio_drv drv;

static struct {
	uint32_t type, reserved;
	uint64_t sector;
} blk_header __attribute__((aligned(16)));
static uint8_t blk_data[SECTOR] __attribute__((aligned(64)));
static uint8_t blk_status;

static void begin(const char *action, const char *phase)
{
	printf("PROBE-JSON {\"test\":\"hostile-%s\",\"phase\":\"%s\"", action, phase);
}

static void error(const char *action, const char *why)
{
	begin(action, "done");
	printf(",\"error\":\"%s\",\"pass\":false}\n", why);
}

/*
 * How long a frontend waits for the backend to come up (hostile.ready_us, 2 s): the backend
 * partition boots beside it, slower than a request is served on a loaded host.
 */
static uint64_t ready_us(void)
{
	return bootarg_ulong("hostile.ready_us", 2000000, 1, 100000000);
}

/* The device's capacity in sectors, once its backend wrote it (0 if not within wait_us). */
static uint64_t capacity(uint64_t wait_us)
{
	uint64_t deadline = deadline_after_us(wait_us);

	for (;;) {
		uint64_t sectors = vio_drv_read(&drv, VIRTIO_MMIO_CONFIG) |
				   ((uint64_t)vio_drv_read(&drv, VIRTIO_MMIO_CONFIG + 4u) << 32);
		if (sectors || deadline_passed(deadline))
			return sectors;
		pause_fn();
	}
}

enum read_result { READ_OK, READ_BAD, READ_TIMEOUT };

/* One sector read and checked: the used entry, the status byte, every data byte. */
static enum read_result read_sector(uint64_t sector, uint64_t wait_us)
{
	uint32_t id = ~0u, len = 0;

	blk_header.type = VIRTIO_BLK_T_IN;
	blk_header.reserved = 0;
	blk_header.sector = sector;
	blk_status = 0xff;
	for (uint32_t i = 0; i < SECTOR; i++)
		blk_data[i] = 0;
	vio_blk_chain(&drv, &blk_header, blk_data, SECTOR, &blk_status, true);
	vio_drv_submit(&drv, 0);
	if (!vio_drv_wait_used(&drv, wait_us, &id, &len))
		return READ_TIMEOUT;
	if (id != 0 || len != SECTOR + 1u || blk_status != VIRTIO_BLK_S_OK)
		return READ_BAD;
	for (uint32_t i = 0; i < SECTOR; i++)
		if (blk_data[i] != vio_disk_byte(sector * SECTOR + i))
			return READ_BAD;
	return READ_OK;
}

static const char *frontend_up(void)
{
	drv.pause = pause_fn;
	if (!vio_drv_find(&drv))
		return "no virtio-mmio device";
	if (drv.device_id != VIRTIO_ID_BLK)
		return "the device is not a blk";
	return vio_drv_setup(&drv, &rings, 0);
}

static void virtio_busy(void)
{
	const char *action = "virtio-busy";
	unsigned long requests = bootarg_ulong("hostile.requests", 32, 1, 100000);
	uint64_t wait_us = bootarg_ulong("hostile.wait_us", DEFAULT_WAIT_US, 1, 100000000);
	unsigned long completed = 0, bad = 0, timeouts = 0;
	const char *why = frontend_up();
	uint64_t sectors;

	if (why) {
		error(action, why);
		return;
	}
	sectors = capacity(ready_us());
	if (!sectors) {
		error(action, "no capacity in the device's config space");
		return;
	}
	begin(action, "acting");
	printf(",\"sectors\":%lu}\n", (unsigned long)sectors);
	for (unsigned long i = 0; i < requests; i++) {
		enum read_result r = read_sector((i * 7u) % sectors, wait_us);
		if (r == READ_TIMEOUT) {
			/* Its request stays outstanding: only a reset takes it back. */
			timeouts++;
			vio_drv_reset(&drv);
			break;
		}
		if (r == READ_OK)
			completed++;
		else
			bad++;
	}
	begin(action, "done");
	printf(",\"requests\":%lu,\"completed\":%lu,\"bad\":%lu,\"timeouts\":%lu,\"status\":%u,"
	       "\"pass\":%s}\n", requests, completed, bad, timeouts, vio_drv_status(&drv),
	       json_bool(completed == requests));
}

/* ---- virtio-garbage ---- */

static uint32_t lcg = 0x2545f491u;

static uint32_t next_garbage(void)
{
	lcg = lcg * 1664525u + 1013904223u;
	return lcg;
}

static void garbage_registers(void)
{
	for (unsigned round = 0; round < 4; round++)
		for (uint32_t reg = 0; reg < VIRTIO_MMIO_REGS_SIZE; reg += 4)
			vio_drv_write(&drv, reg, next_garbage());
}

static void desc_outside_ram(void)
{
	vio_blk_chain(&drv, &blk_header, blk_data, SECTOR, &blk_status, true);
	drv.rings->desc[1].addr = ram_base() + ram_size();
	vio_drv_submit(&drv, 0);
}

static void looping_chain(void)
{
	vio_blk_chain(&drv, &blk_header, blk_data, SECTOR, &blk_status, true);
	drv.rings->desc[2].flags |= VIRTQ_DESC_F_NEXT;
	drv.rings->desc[2].next = 0;
	vio_drv_submit(&drv, 0);
}

static void avail_past_queue(void)
{
	volatile struct virtq_avail *avail = &drv.rings->avail;

	vio_blk_chain(&drv, &blk_header, blk_data, SECTOR, &blk_status, true);
	drv.avail_idx = (uint16_t)(drv.avail_idx + VIO_DRV_QUEUE_SIZE + 1u);
	channel_barrier();
	avail->idx = drv.avail_idx;
	channel_barrier();
	vio_drv_write(&drv, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
}

static const struct {
	const char *name;
	void (*run)(void);
	bool needs_reset;       /* what the device must say after it */
} misdeeds[] = {
	{ "registers", garbage_registers, false },
	{ "desc-outside-ram", desc_outside_ram, true },
	{ "looping-chain", looping_chain, true },
	{ "avail-past-queue", avail_past_queue, true },
};

static void virtio_garbage(void)
{
	const char *action = "virtio-garbage";
	uint64_t wait_us = bootarg_ulong("hostile.wait_us", DEFAULT_WAIT_US, 1, 100000000);
	const char *why = frontend_up();
	bool ok = true;

	if (why) {
		error(action, why);
		return;
	}
	if (!capacity(ready_us())) {
		error(action, "no capacity in the device's config space");
		return;
	}
	bool served = read_sector(0, wait_us) == READ_OK;
	begin(action, "acting");
	printf(",\"served_before\":%s}\n", json_bool(served));
	ok &= served;
	begin(action, "done");
	printf(",\"misdeeds\":[");
	for (unsigned i = 0; i < sizeof(misdeeds) / sizeof(misdeeds[0]); i++) {
		misdeeds[i].run();
		uint32_t status = vio_drv_status(&drv);
		uint32_t pending = vio_drv_read(&drv, VIRTIO_MMIO_INTERRUPT_STATUS);
		bool needs_reset = (status & VIRTIO_STATUS_NEEDS_RESET) != 0;
		vio_drv_reset(&drv);
		uint32_t after = vio_drv_status(&drv);
		why = vio_drv_setup(&drv, &rings, 0);
		served = !why && read_sector(1, wait_us) == READ_OK;
		ok &= served && after == 0 && (!misdeeds[i].needs_reset || needs_reset);
		printf("%s{\"name\":\"%s\",\"status\":%u,\"interrupt_status\":%u,\"needs_reset\":%s,"
		       "\"status_after_reset\":%u,\"served_after\":%s}", i ? "," : "", misdeeds[i].name,
		       status, pending, json_bool(needs_reset), after, json_bool(served));
	}
	printf("],\"pass\":%s}\n", json_bool(ok));
}

static void virtio_storm(void)
{
	const char *action = "virtio-storm";
	unsigned long rounds = bootarg_ulong("hostile.rounds", 2000, 1, 10000000);
	uint64_t wait_us = bootarg_ulong("hostile.wait_us", DEFAULT_WAIT_US, 1, 100000000);
	const char *why = frontend_up();

	if (why) {
		error(action, why);
		return;
	}
	if (!capacity(ready_us())) {
		error(action, "no capacity in the device's config space");
		return;
	}
	bool before = read_sector(2, wait_us) == READ_OK;
	begin(action, "acting");
	printf(",\"served_before\":%s}\n", json_bool(before));
	for (unsigned long i = 0; i < rounds; i++) {
		vio_drv_write(&drv, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
		vio_drv_write(&drv, VIRTIO_MMIO_QUEUE_NOTIFY, 7);       /* no such queue */
	}
	bool after = read_sector(3, wait_us) == READ_OK;
	begin(action, "done");
	printf(",\"notifies\":%lu,\"served_after\":%s,\"status\":%u,\"pass\":%s}\n", 2 * rounds,
	       json_bool(after), vio_drv_status(&drv), json_bool(before && after));
}

/* ---- the backend's side ---- */

static struct channel back_ch;
static struct vio_backend back;

static const char *backend_up(void)
{
	uint64_t start, end;
	int node;

	for (node = channel_next(FDT_NONE, &back_ch); node != FDT_NONE;
	     node = channel_next(node, &back_ch))
		if (fdt_node_prop(node, "tern,virtio", 0))
			break;
	if (node == FDT_NONE)
		return "no virtio channel";
	if (back_ch.self != 0 || back_ch.readonly)
		return "not the device's backend";
	if (!chosen_initrd(&start, &end))
		return "no disk (the partition's initrd)";
	back.shm = (uint8_t *)back_ch.shm;
	back.size = back_ch.size;
	for (uint32_t i = 0; i < VIO_NAME_LEN; i++)
		back.name[i] = back_ch.name[i];
	back.disk = (uint8_t *)(uintptr_t)start;
	back.disk_size = end - start;
	return vio_backend_start(&back);
}

static volatile uint32_t *ring_word(uint32_t ring, uint32_t index)
{
	return (volatile uint32_t *)(back.shm + ring + index);
}

/* Wait (bounded) until the hypervisor took every completion posted: it does when the frontend looks. */
static bool completions_taken(uint64_t wait_us)
{
	uint64_t deadline = deadline_after_us(wait_us);

	while (*ring_word(VIO_COMPLETIONS, VIO_RING_CONS) != *ring_word(VIO_COMPLETIONS, VIO_RING_PROD)) {
		if (deadline_passed(deadline))
			return false;
		pause_fn();
	}
	return true;
}

static void post_completion(uint32_t *prod, uint16_t queue, uint16_t head, uint32_t written,
			    uint32_t epoch)
{
	uint32_t entries = back.num_queues * back.queue_size;
	volatile struct vio_completion *c = (volatile struct vio_completion *)
		(back.shm + VIO_COMPLETIONS + VIO_RING_ENTRIES_AT +
		 (*prod % entries) * VIO_RING_ENTRY_SIZE);

	c->queue = queue;
	c->head = head;
	c->written = written;
	c->epoch = epoch;
	c->reserved = 0;
	(*prod)++;
}

static void virtio_backend_garbage(void)
{
	const char *action = "virtio-backend-garbage";
	unsigned long requests = bootarg_ulong("hostile.requests", 32, 1, 100000);
	uint64_t until = us_to_ticks(bootarg_ulong("hostile.until_us", 2000000, 0, 100000000));
	uint64_t wait_us = bootarg_ulong("hostile.wait_us", DEFAULT_WAIT_US, 1, 100000000);
	unsigned long garbage = 0, jumps = 0, untaken = 0;
	const char *why = backend_up();

	if (why) {
		error(action, why);
		return;
	}
	uint32_t entries = back.num_queues * back.queue_size;
	begin(action, "acting");
	printf(",\"device\":\"%s\"}\n", back.name);
	while (back.served < requests && !deadline_passed(until)) {
		if (!vio_backend_pending(&back)) {
			pause_fn();
			continue;
		}
		uint32_t cons = *ring_word(VIO_REQUESTS, VIO_RING_CONS);
		channel_barrier();
		struct vio_request r = *(volatile struct vio_request *)
			(back.shm + VIO_REQUESTS + VIO_RING_ENTRIES_AT +
			 (cons % entries) * VIO_RING_ENTRY_SIZE);
		uint32_t prod = *ring_word(VIO_COMPLETIONS, VIO_RING_PROD);

		post_completion(&prod, r.queue, (uint16_t)back.queue_size, 1, r.epoch);
		post_completion(&prod, r.queue, r.head, 1, r.epoch - 1u);
		post_completion(&prod, r.queue, r.head, r.writable + 1u, r.epoch);
		channel_barrier();
		*ring_word(VIO_COMPLETIONS, VIO_RING_PROD) = prod;
		garbage += 3;
		channel_ring(&back_ch, 1);
		untaken += !completions_taken(wait_us);
		if (!jumps) {
			*ring_word(VIO_COMPLETIONS, VIO_RING_PROD) = prod + entries + 1u;
			jumps++;
			channel_ring(&back_ch, 1);
			untaken += !completions_taken(wait_us);
		}
		if (vio_backend_poll(&back))
			channel_ring(&back_ch, 1);
	}
	begin(action, "done");
	printf(",\"served\":%lu,\"garbage\":%lu,\"jumps\":%lu,\"untaken\":%lu,\"pass\":true}\n",
	       (unsigned long)back.served, garbage, jumps, untaken);
}

static void virtio_backend_silent(void)
{
	const char *action = "virtio-backend-silent";
	uint64_t until = us_to_ticks(bootarg_ulong("hostile.until_us", 300000, 0, 100000000));
	const char *why = backend_up();

	if (why) {
		error(action, why);
		return;
	}
	begin(action, "acting");
	printf(",\"device\":\"%s\"}\n", back.name);
	while (!deadline_passed(until))
		pause_fn();
	begin(action, "done");
	printf(",\"posted\":%u,\"taken\":%u,\"pass\":true}\n",
	       *ring_word(VIO_REQUESTS, VIO_RING_PROD), *ring_word(VIO_REQUESTS, VIO_RING_CONS));
}

bool vio_hostile_action(struct strview name, void (*pause)(uint64_t us))
{
	static const struct {
		const char *name;
		void (*run)(void);
	} actions[] = {
		{ "virtio-busy", virtio_busy },
		{ "virtio-garbage", virtio_garbage },
		{ "virtio-storm", virtio_storm },
		{ "virtio-backend-garbage", virtio_backend_garbage },
		{ "virtio-backend-silent", virtio_backend_silent },
	};

	for (unsigned i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		if (strview_eq(name, actions[i].name)) {
			pause_port = pause;
			poll_us = bootarg_ulong("hostile.poll_us", 50, 1, 1000000);
			actions[i].run();
			return true;
		}
	}
	return false;
}
