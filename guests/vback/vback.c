/*
 * vback: a bare-metal backend partition for VirtIO devices that another partition's driver
 * sees at a virtio-mmio slot (tern/virtio_channel.h, docs/design.md "VirtIO devices served by
 * another partition"). Each "tern,channel" node of its device tree with `tern,virtio` is one
 * device it serves as member 0: blk from the disk image the hypervisor loaded as its initrd,
 * console by printing what the frontend writes, vsock as the host (CID 2) echoing each line a
 * connection to port 1234 sends (lib/vio_vsock.c). The device logic is lib/vio_backend.c; here
 * are the device tree, the console and the wait for the doorbells.
 *
 *     TERN-VBACK: ready NAME blk sectors=N        (or: ready NAME console; then " segments"
 *                                                 for a trusted device: the frontend's RAM
 *                                                 through the window the header names, its
 *                                                 IPA as this partition's address: no MMU)
 *     TERN-VBACK: ready NAME vsock cid=C port=P   the frontend's CID, the port served
 *     TERN-VBACK: NAME: LINE                      a console device's output
 *     TERN-VBACK: NAME: vsock P: LINE             a line a vsock connection sent (echoed)
 *     TERN-VBACK: NAME: bad vsock packet          the first one only; all are counted
 *     TERN-VBACK: NAME: garbage request skipped   the first one only; all are counted
 *     TERN-VBACK: error [NAME: ]REASON            a device it does not serve
 *     TERN-VBACK: served N, done                  with vback.requests=N, after the Nth
 *
 * It serves until it is stopped, or with vback.requests=N until it has answered N requests
 * (all devices together), then it ends: a pair whose end a test can wait for under icount,
 * where a command typed on the console lands at no fixed point of the emulated time.
 */
#include "bootargs.h"
#include "channel.h"
#include "console.h"
#include "doorbell.h"
#include "fdt.h"
#include "initrd.h"
#include "runtime.h"
#include "vio_backend.h"

const char guest_name[] = "vback";

#define MAX_DEVICES     8u

struct device {
	struct channel ch;
	struct vio_backend b;
	bool garbage_reported;
	bool bad_reported;
};

static struct device devices[MAX_DEVICES];

static void print_line(struct vio_backend *b, const char *line)
{
	printf("TERN-VBACK: %s: %s\n", b->name, line);
}

/* Whether the property value p[0..len) is the string `s`. */
static bool prop_is(const char *p, uint32_t len, const char *s)
{
	uint32_t i;

	for (i = 0; i < len && s[i] && p[i] == s[i]; i++)
		;
	return i < len && p[i] == '\0' && s[i] == '\0';
}

struct disk {
	uint64_t start, end;
	bool present, taken;
};

/* The device of channel `ch` (its node `node`): set up, started, announced. 0, or why not. */
static const char *add_device(struct device *d, int node, unsigned index, struct disk *disk)
{
	uint32_t len;
	const char *type = fdt_node_prop(node, "tern,virtio", &len);
	uint32_t want;
	const char *why;

	if (d->ch.self != 0 || d->ch.readonly)
		return "this partition is not the device's backend (member 0)";
	if (prop_is(type, len, "blk")) {
		want = VIRTIO_ID_BLK;
		if (!disk->present)
			return "blk without a disk (the partition's initrd)";
		if (disk->taken)
			return "a second blk: the one disk is another device's";
		d->b.disk = (uint8_t *)(uintptr_t)disk->start;
		d->b.disk_size = disk->end - disk->start;
	} else if (prop_is(type, len, "console")) {
		want = VIRTIO_ID_CONSOLE;
	} else if (prop_is(type, len, "vsock")) {
		want = VIRTIO_ID_VSOCK;
	} else {
		return "device type not served by this backend (blk, console and vsock are)";
	}
	d->b.shm = (uint8_t *)d->ch.shm;
	d->b.size = d->ch.size;
	for (uint32_t i = 0; i < VIO_NAME_LEN; i++)
		d->b.name[i] = d->ch.name[i];
	d->b.line_out = print_line;
	/* The doorbell first: the loop looks at the ring once before it first sleeps. */
	why = doorbell_setup(d->ch.irq, index);
	if (why)
		return why;
	/* The header says what the hypervisor serves to the frontend: it must be what we serve. */
	volatile const struct vio_header *h = (volatile const struct vio_header *)d->b.shm;
	if (d->ch.size >= sizeof(*h) && h->magic == VIO_MAGIC && h->device_id != want)
		return "tern,virtio disagrees with the channel header's device";
	why = vio_backend_start(&d->b);
	if (why)
		return why;
	const char *mode = d->b.data_mode == VIO_MODE_SEGMENTS ? " segments" : "";
	if (want == VIRTIO_ID_BLK) {
		disk->taken = true;
		printf("TERN-VBACK: ready %s blk sectors=%lu%s\n", d->b.name,
		       (unsigned long)(d->b.disk_size / VIRTIO_BLK_SECTOR), mode);
	} else if (want == VIRTIO_ID_VSOCK) {
		printf("TERN-VBACK: ready %s vsock cid=%lu port=%u%s\n", d->b.name,
		       (unsigned long)d->b.vsock.guest_cid, VIO_VSOCK_ECHO_PORT, mode);
	} else {
		printf("TERN-VBACK: ready %s console%s\n", d->b.name, mode);
	}
	return 0;
}

static void serve(unsigned count)
{
	unsigned long limit = bootarg_ulong("vback.requests", 0, 0, 1000000000);

	for (;;) {
		uint64_t served = 0;

		for (unsigned i = 0; i < count; i++) {
			struct device *d = &devices[i];

			/* One ring per batch: the frontend takes every completion when it looks. */
			if (vio_backend_poll(&d->b))
				channel_ring(&d->ch, 1);
			if (d->b.garbage && !d->garbage_reported) {
				printf("TERN-VBACK: %s: garbage request skipped (the rest are counted, "
				       "not printed)\n", d->b.name);
				d->garbage_reported = true;
			}
			if (d->b.vsock.bad_packets && !d->bad_reported) {
				printf("TERN-VBACK: %s: bad vsock packet (reset; the rest are counted, "
				       "not printed)\n", d->b.name);
				d->bad_reported = true;
			}
			served += d->b.served;
		}
		if (limit && served >= limit) {
			printf("TERN-VBACK: served %lu, done\n", (unsigned long)served);
			return;
		}
		/*
		 * Acknowledged before the next look at the rings: a ring after that look leaves the
		 * interrupt pending, and WFI returns at once.
		 */
		doorbell_wait();
		doorbell_ack();
	}
}

void guest_main(void)
{
	struct disk disk = { 0, 0, false, false };
	struct channel ch;
	unsigned count = 0;

	disk.present = chosen_initrd(&disk.start, &disk.end);
	for (int node = channel_next(FDT_NONE, &ch); node != FDT_NONE;
	     node = channel_next(node, &ch)) {
		if (!fdt_node_prop(node, "tern,virtio", 0))
			continue;
		if (count == MAX_DEVICES) {
			printf("TERN-VBACK: error %s: more than %u devices\n", ch.name, MAX_DEVICES);
			continue;
		}
		struct device *d = &devices[count];

		d->ch = ch;
		const char *why = add_device(d, node, count, &disk);
		if (why) {
			printf("TERN-VBACK: error %s: %s\n", ch.name, why);
			continue;
		}
		count++;
	}
	if (!count) {
		printf("TERN-VBACK: error no virtio device to serve\n");
		return;
	}
	serve(count);
}
