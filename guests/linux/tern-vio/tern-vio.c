/*
 * tern-vio: a VirtIO device's backend in Linux user space, over the device's channel
 * (tern/virtio_channel.h) reached as tern-chan reaches a channel: its ivshmem PCI function
 * through uio_pci_generic (BAR2 the channel, INTA member 0's doorbell). Statically linked, no
 * C library (guests/linux/lib).
 *
 *     tern-vio net [--bdf B] [--name NAME]
 *         serve a virtio-net: the frontend's MAC (locally administered, from the channel's
 *         name) in the config space, a TAP interface vio0 whose frames go to the frontend's
 *         receiveq and from its transmitq
 *     tern-vio blk FILE [--bdf B] [--name NAME]
 *         serve a virtio-blk from FILE: capacity its size / 512, size_max 4096, seg_max 7;
 *         IN, OUT, GET_ID ("tern-NAME"), anything else UNSUPP, beyond the end IOERR
 *     --once: serve only the requests waiting at the start (net: once vio0 is up, and then
 *         the tap's frames for up to ONCE_RX_MS while receive buffers are held), print
 *         `TERN-LINUX: vio NAME served requests=N completions=N garbage=N stale=N malformed=N`
 *         and exit 0 (the tests' channel without a hypervisor has nobody to ring)
 *
 * The channel is the partition's channel node whose `tern,virtio` names the device type (the
 * j-th tern-channel@ADDR node by address is PCI device 1 + j), or the function at --bdf. Once
 * it serves it prints `TERN-LINUX: vio NAME net mac=M bdf=B` (or `blk sectors=N`); on an
 * error `TERN-LINUX: vio error=<what>` and exit status 1. The first garbage request (one the
 * channel's shape cannot hold) is printed once, all are counted.
 *
 * Waiting: ppoll() on /dev/uioN and the tap. After each wake-up it acknowledges the
 * interrupt (IntrStatus, then INTX_DISABLE cleared, as tern-chan does), then re-reads the
 * rings, so a ring in between is not lost. Member 1 (the frontend) is rung once per batch of
 * completions.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linux_user.h"
#include "vio_serve.h"

#define SYS_ioctl       29
#define SYS_lseek       62
#define O_NONBLOCK      04000
#define SEEK_END        2
#define EAGAIN          11
#define POLLERR         8

#define TUNSETIFF       0x400454caul    /* _IOW('T', 202, int) */
#define IFF_TAP         0x0002
#define IFF_NO_PI       0x1000
#define TAP_NAME        "vio0"

#define FRONTEND        1u
#define ONCE_RX_MS      3000
#define LINK_WAIT_MS    10000
#define LINK_POLL_NS    10000000L
#define IFF_UP          0x1
#define NAME_LEN        64
#define MAX_CHANNELS    16

struct ifreq_ {
	char name[16];
	short flags;
	char pad[22];
};

struct options {
	const char *mode;
	const char *file;
	const char *bdf;
	const char *name;
	bool once;
};

struct backend {
	long disk, tap;
	uint64_t disk_bytes;
	char id[32];
};

static struct vio_dev dev;
static _Alignas(8) uint8_t frame[VIO_NET_SLOT_SIZE];

static bool disk_read(void *ctx, uint64_t offset, void *buf, uint32_t n)
{
	const struct backend *b = ctx;

	for (uint32_t done = 0; done < n;) {
		long r = linux_syscall(SYS_pread64, b->disk, (long)((uint8_t *)buf + done),
				       (long)(n - done), (long)(offset + done), 0, 0);

		if (r <= 0)
			return false;
		done += (uint32_t)r;
	}
	return true;
}

static bool disk_write(void *ctx, uint64_t offset, const void *buf, uint32_t n)
{
	const struct backend *b = ctx;

	for (uint32_t done = 0; done < n;) {
		long r = linux_syscall(SYS_pwrite64, b->disk, (long)((const uint8_t *)buf + done),
				       (long)(n - done), (long)(offset + done), 0, 0);

		if (r <= 0)
			return false;
		done += (uint32_t)r;
	}
	return true;
}

/* A frame the frontend sent goes out on the tap; one the tap refuses is lost, as on a wire. */
static void net_tx(void *ctx, const uint8_t *data, uint32_t n)
{
	const struct backend *b = ctx;

	sys(SYS_write, b->tap, (long)data, (long)n);
}

/* A property of a node under DT_BASE as a string ("" if none). */
static void dt_string(const char *node, const char *prop, char *out, size_t cap)
{
	char path[PATH_LEN];

	out[0] = '\0';
	if (join(path, sizeof(path), DT_BASE, node, prop))
		read_file(path, out, cap);
}

/* The channel whose node says `tern,virtio = mode`: its PCI device number, name and size. */
static bool dt_find(const char *mode, uint64_t *device, char *name, uint64_t *size)
{
	char node[NAME_LEN], text[NAME_LEN], path[PATH_LEN];
	uint8_t reg[32];

	for (uint64_t j = 0; j < MAX_CHANNELS && dt_channel_node(j, node, sizeof(node)); j++) {
		dt_string(node, "/tern,virtio", text, sizeof(text));
		if (!str_eq(text, mode))
			continue;
		*device = 1 + j;
		dt_string(node, "/tern,name", name, NAME_LEN);
		*size = 0;
		if (join(path, sizeof(path), DT_BASE, node, "/reg") &&
		    read_file(path, (char *)reg, sizeof(reg)) >= 16)
			*size = be(reg + 8, 8);
		return true;
	}
	return false;
}

static const char *open_tap(struct backend *b)
{
	struct ifreq_ req = { .flags = IFF_TAP | IFF_NO_PI };

	join(req.name, sizeof(req.name), TAP_NAME, 0, 0);
	b->tap = sys(SYS_openat, AT_FDCWD, (long)"/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (b->tap < 0)
		return "cannot open /dev/net/tun (is the tun module loaded?)";
	if (sys(SYS_ioctl, b->tap, (long)TUNSETIFF, (long)&req) < 0)
		return "cannot create the TAP interface " TAP_NAME;
	return 0;
}

static const char *open_disk(const char *file, struct backend *b)
{
	long end;

	b->disk = sys(SYS_openat, AT_FDCWD, (long)file, O_RDWR | O_CLOEXEC);
	if (b->disk < 0)
		return "cannot open the disk file";
	end = sys(SYS_lseek, b->disk, 0, SEEK_END);
	if (end < 0)
		return "cannot find the disk file's size";
	b->disk_bytes = (uint64_t)end;
	return 0;
}

static void report_garbage(void)
{
	static bool reported;
	struct line l = { .len = 0 };

	if (reported || !dev.first_garbage)
		return;
	reported = true;
	put(&l, "TERN-LINUX: vio garbage: ");
	put(&l, dev.first_garbage);
	put(&l, " (skipped; counted from now on)");
	emit(&l);
}

/* Take the tap's frames while it has any: each to a held receive buffer, or dropped. */
static void drain_tap(const struct backend *b)
{
	long n;

	while ((n = sys(SYS_read, b->tap, (long)frame, sizeof(frame))) > 0)
		vio_net_rx(&dev, frame, (uint32_t)n);
}

/* Wait until vio0 is up (/init configures it once it exists); false after LINK_WAIT_MS. */
static bool link_up(void)
{
	char text[32];
	uint64_t flags;

	for (int64_t deadline = now_ns() + LINK_WAIT_MS * 1000000L; now_ns() < deadline;
	     sleep_ns(LINK_POLL_NS))
		if (read_file("/sys/class/net/" TAP_NAME "/flags", text, sizeof(text)) > 0 &&
		    parse_u64(text, 16, &flags) && (flags & IFF_UP))
			return true;
	return false;
}

/* --once: the tap's frames for up to `ms`, while a receive buffer is held. */
static void drain_tap_for(const struct backend *b, uint64_t ms)
{
	int64_t deadline = now_ns() + (int64_t)ms * 1000000;
	struct pollfd_ pfd;
	struct timespec_ ts;
	int64_t left;

	while (dev.held_count && (left = deadline - now_ns()) > 0) {
		pfd = (struct pollfd_){ .fd = (int)b->tap, .events = POLLIN, .revents = 0 };
		ts = (struct timespec_){ .tv_sec = (long)(left / 1000000000),
					 .tv_nsec = (long)(left % 1000000000) };
		if (linux_syscall(SYS_ppoll, (long)&pfd, 1, (long)&ts, 0, 8, 0) > 0)
			drain_tap(b);
	}
}

static const char *serve(const struct function *f, struct backend *b, const struct vio_ops *ops,
			 bool once)
{
	struct pollfd_ pfd[2];
	uint32_t count;
	long uio, config, n;
	bool net = dev.device_id == VIRTIO_ID_NET;

	const char *error = open_doorbell(f, &uio, &config);
	if (error)
		return error;
	if (once && net && !link_up())
		return TAP_NAME " did not come up";
	for (;;) {
		vio_serve(&dev, ops);
		if (net && once)
			drain_tap_for(b, ONCE_RX_MS);
		else if (net)
			drain_tap(b);
		report_garbage();
		if (vio_take_posted(&dev))
			ring(f, FRONTEND);
		if (once)
			return 0;
		pfd[0] = (struct pollfd_){ .fd = (int)uio, .events = POLLIN, .revents = 0 };
		pfd[1] = (struct pollfd_){ .fd = (int)b->tap, .events = POLLIN, .revents = 0 };
		do
			n = linux_syscall(SYS_ppoll, (long)pfd, net ? 2 : 1, 0, 0, 8, 0);
		while (n == -EINTR);
		if (n < 0)
			return "cannot wait (ppoll)";
		if (pfd[0].revents & POLLIN) {
			if (sys(SYS_read, uio, (long)&count, sizeof(count)) != sizeof(count))
				return "cannot read /dev/uioN";
			(void)reg_read(&f->regs, IVSHMEM_INTR_STATUS);
			if (!intx_unmask(config))
				return "cannot write the function's Command register";
		} else if (pfd[0].revents & POLLERR) {
			return "/dev/uioN failed";
		}
	}
}

static const char *parse_args(int argc, char **argv, struct options *opt)
{
	int i = 2;

	opt->mode = argc > 1 ? argv[1] : "";
	opt->file = 0;
	opt->bdf = 0;
	opt->name = 0;
	opt->once = false;
	if (str_eq(opt->mode, "blk") && argc > 2)
		opt->file = argv[i++];
	else if (!str_eq(opt->mode, "net"))
		return "usage: tern-vio net|blk FILE [--bdf B] [--name NAME] [--once]";
	for (; i < argc; i += 2) {
		const char *key = argv[i], *value = i + 1 < argc ? argv[i + 1] : 0;

		if (str_eq(key, "--once")) {
			opt->once = true;
			i--;
			continue;
		}
		if (!value)
			return "an option without its value";
		if (str_eq(key, "--bdf"))
			opt->bdf = value;
		else if (str_eq(key, "--name") && str_len(value) < NAME_LEN)
			opt->name = value;
		else
			return "unknown option";
	}
	return 0;
}

static void put_hex2(struct line *l, uint8_t v)
{
	const char *digits = "0123456789abcdef";
	char s[3] = { digits[v >> 4], digits[v & 15], '\0' };

	put(l, s);
}

LINUX_ENTRY;

__attribute__((noreturn, used)) void tern_start(long *sp);

__attribute__((noreturn, used)) void tern_start(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	struct options opt;
	struct function f;
	struct backend b = { .disk = -1, .tap = -1 };
	struct vio_ops ops = { .ctx = &b };
	struct line l = { .len = 0 };
	char name[NAME_LEN] = "vio";
	uint64_t device = ANY_DEVICE, size = 0;
	uint8_t mac[6];
	const char *err = parse_args(argc, argv, &opt);
	bool net = str_eq(opt.mode, "net");

	if (!err && !dt_find(opt.mode, &device, name, &size) && !opt.bdf)
		err = "no channel node with tern,virtio for this device type";
	if (!err && opt.name)
		join(name, sizeof(name), opt.name, 0, 0);
	if (!err)
		err = open_function(opt.bdf, opt.bdf ? ANY_DEVICE : device, &f);
	if (!err && (!size || size > f.shm.size))
		size = f.shm.size;
	if (!err)
		err = vio_open(&dev, f.shm.base, size, net ? VIRTIO_ID_NET : VIRTIO_ID_BLK);
	if (!err)
		err = net ? open_tap(&b) : open_disk(opt.file, &b);
	if (!err) {
		put(&l, "TERN-LINUX: vio ");
		put(&l, name);
		if (net) {
			vio_mac_from_name(name, mac);
			vio_net_config(&dev, mac);
			ops.tx = net_tx;
			put(&l, " net mac=");
			for (int i = 0; i < 6; i++) {
				put_hex2(&l, mac[i]);
				if (i < 5)
					put(&l, ":");
			}
		} else {
			ops.sectors = b.disk_bytes / VIO_SECTOR;
			ops.read_at = disk_read;
			ops.write_at = disk_write;
			join(b.id, sizeof(b.id), "tern-", name, 0);
			ops.id = b.id;
			vio_blk_config(&dev, ops.sectors);
			put(&l, " blk sectors=");
			put_u64(&l, ops.sectors);
		}
		put(&l, " bdf=");
		put(&l, f.bdf);
		vio_ready(&dev);
		emit(&l);
		err = serve(&f, &b, &ops, opt.once);
	}
	if (!err) {
		l.len = 0;
		put(&l, "TERN-LINUX: vio ");
		put(&l, name);
		put(&l, " served requests=");
		put_u64(&l, dev.stats.requests);
		put(&l, " completions=");
		put_u64(&l, dev.stats.completions);
		put(&l, " garbage=");
		put_u64(&l, dev.stats.garbage);
		put(&l, " stale=");
		put_u64(&l, dev.stats.stale);
		put(&l, " malformed=");
		put_u64(&l, dev.stats.malformed);
		emit(&l);
		sys(SYS_exit_group, 0, 0, 0);
		__builtin_unreachable();
	}
	l.len = 0;
	put(&l, "TERN-LINUX: vio error=");
	put(&l, err);
	emit(&l);
	sys(SYS_exit_group, 1, 0, 0);
	__builtin_unreachable();
}
