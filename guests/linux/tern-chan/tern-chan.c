/*
 * tern-chan: a Tern channel from Linux user space, through the channel's ivshmem PCI function
 * (docs/configuration.md, "From Linux user space"). Statically linked, no C library: its own
 * system calls (linux_arch.h) and entry.
 *
 *     tern-chan probe [--bdf B]
 *         find the function (vendor 0x1af4, device 0x1110; the lowest address if several),
 *         bind uio_pci_generic to it, map BAR0 and BAR2 and print
 *         TERN-LINUX: chan-probe bdf=B position=<IVPosition> bar2=<bytes> uio=uioN
 *     tern-chan pong [--bdf B] [--count N] [--size BYTES] [--member K] [--timeout-ms MS]
 *         as member 1 of the channel (the latency guest's "ponger", guests/lat/lat.c): open
 *         the queues of channel.h in BAR2, answer each message from member 0 with the same
 *         message and ring member 0, N times (default 1000), then print
 *         TERN-LINUX: chan answered=N member=1 size=BYTES bdf=B
 *
 * On any error: `TERN-LINUX: chan error=<what>` (or chan-probe) and exit status 1.
 *
 * --size is the channel's size, which the queues' layout depends on. By default it is the
 * `reg` size of the partition's channel node for the function (device 1 + j is the j-th
 * channel, and the nodes' addresses follow the channels' order: the j-th tern-channel@ADDR
 * node by address), else BAR2's, the channel's size rounded up to a power of two.
 * --member is this partition's member index, by default BAR0's IVPosition: given, it stands in
 * for a function whose IVPosition is not the channel's (QEMU's ivshmem-plain, in the tests).
 *
 * Waiting for a ring: uio_pci_generic's handler masks the function's INTx (Command's
 * INTX_DISABLE) and counts the interrupt; a read() of /dev/uioN returns that count. Reading
 * IntrStatus clears the level; clearing INTX_DISABLE again, through the function's config
 * space, unmasks it (Debian's uio_pci_generic has no irqcontrol, so a write to /dev/uioN
 * does not). A ring between the status read and the unmask raises the interrupt again as the
 * mask clears, and the queue is drained after both, so no message waits for a later ring.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "channel_arch.h"
#include "linux_arch.h"

/* The generic system call numbers, arm64's and riscv64's alike. */
#define SYS_openat      56
#define SYS_close       57
#define SYS_getdents64  61
#define SYS_read        63
#define SYS_write       64
#define SYS_pread64     67
#define SYS_pwrite64    68
#define SYS_ppoll       73
#define SYS_readlinkat  78
#define SYS_exit_group  94
#define SYS_nanosleep   101
#define SYS_clock_gettime 113
#define SYS_mmap        222

#define AT_FDCWD        (-100)
#define O_RDONLY        0
#define O_WRONLY        1
#define O_RDWR          2
#define O_CLOEXEC       02000000
#define PROT_READ       1
#define PROT_WRITE      2
#define MAP_SHARED      1
#define POLLIN          1
#define CLOCK_MONOTONIC 1
#define EEXIST          17
#define EINTR           4
#define PAGE_SIZE       4096u

/* ivshmem's BAR0 registers. */
#define IVSHMEM_INTR_MASK       0x00
#define IVSHMEM_INTR_STATUS     0x04
#define IVSHMEM_IV_POSITION     0x08
#define IVSHMEM_DOORBELL        0x0c

#define PCI_VENDOR              "0x1af4"
#define PCI_DEVICE              "0x1110"
#define PCI_NEW_ID              "1af4 1110"
#define PCI_COMMAND             4
#define PCI_COMMAND_INTX_DISABLE 0x400

#define DRIVER                  "uio_pci_generic"
#define DEVICES                 "/sys/bus/pci/devices/"
#define DRIVER_DIR              "/sys/bus/pci/drivers/" DRIVER "/"

#define PINGER                  0
#define PONGER                  1
#define DEFAULT_COUNT           1000
#define DEFAULT_TIMEOUT_MS      30000
#define FINISH_WAIT_NS          1000000000L
#define FINISH_POLL_NS          100000L

#define PATH_LEN                256
#define BDF_LEN                 32

struct timespec_ {
	long tv_sec;
	long tv_nsec;
};

struct pollfd_ {
	int fd;
	short events;
	short revents;
};

struct dirent64_ {
	uint64_t d_ino;
	int64_t d_off;
	uint16_t d_reclen;
	uint8_t d_type;
	char d_name[];
};

/* clang may emit calls to these for aggregate copies and zeroing. */
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);

void *memset(void *dst, int c, size_t n)
{
	volatile unsigned char *d = dst;

	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	volatile unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

static long sys(long nr, long a0, long a1, long a2)
{
	return linux_syscall(nr, a0, a1, a2, 0, 0, 0);
}

static size_t str_len(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

static bool starts_with(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

/* dst = the concatenation of up to three strings; false if it does not fit. */
static bool join(char *dst, size_t cap, const char *a, const char *b, const char *c)
{
	const char *parts[3] = { a, b, c };
	size_t n = 0;

	for (int i = 0; i < 3; i++)
		for (const char *p = parts[i]; p && *p; p++) {
			if (n + 1 >= cap)
				return false;
			dst[n++] = *p;
		}
	dst[n] = '\0';
	return true;
}

/* The output line, assembled and written with one write() so that it stays one line. */
struct line {
	char buf[256];
	size_t len;
};

static void put(struct line *l, const char *s)
{
	while (*s && l->len + 1 < sizeof(l->buf))
		l->buf[l->len++] = *s++;
}

static void put_u64(struct line *l, uint64_t v)
{
	char digits[21];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && l->len + 1 < sizeof(l->buf))
		l->buf[l->len++] = digits[--n];
}

static void emit(struct line *l)
{
	l->buf[l->len++] = '\n';
	sys(SYS_write, 1, (long)l->buf, (long)l->len);
}

static bool parse_u64(const char *s, int base, uint64_t *out)
{
	uint64_t v = 0;
	bool any = false;

	if (base == 16 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (;; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + d;
		any = true;
	}
	*out = v;
	return any && (*s == '\0' || *s == '\n' || *s == ' ');
}

/* A small file's contents as a string (sysfs attributes); its length, or negative errno. */
static long read_file(const char *path, char *buf, size_t cap)
{
	long fd = sys(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC);
	long n;

	if (fd < 0)
		return fd;
	n = sys(SYS_read, fd, (long)buf, (long)cap - 1);
	sys(SYS_close, fd, 0, 0);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* Write `text` to a sysfs attribute in one write(); 0 or negative errno. */
static long write_file(const char *path, const char *text)
{
	long fd = sys(SYS_openat, AT_FDCWD, (long)path, O_WRONLY | O_CLOEXEC);
	long n;

	if (fd < 0)
		return fd;
	n = sys(SYS_write, fd, (long)text, (long)str_len(text));
	sys(SYS_close, fd, 0, 0);
	return n < 0 ? n : 0;
}

/*
 * Calls each(name, ctx) for every entry of directory `path` but . and ..; false if it
 * cannot be read.
 */
static bool each_entry(const char *path, void (*each)(const char *name, void *ctx), void *ctx)
{
	_Alignas(8) char buf[2048];
	long fd = sys(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC);
	long n;

	if (fd < 0)
		return false;
	while ((n = sys(SYS_getdents64, fd, (long)buf, sizeof(buf))) > 0)
		for (long at = 0; at < n;) {
			const struct dirent64_ *d = (const struct dirent64_ *)(buf + at);

			if (!str_eq(d->d_name, ".") && !str_eq(d->d_name, ".."))
				each(d->d_name, ctx);
			at += d->d_reclen;
		}
	sys(SYS_close, fd, 0, 0);
	return n == 0;
}

/* Orders PCI addresses: same-width "dddd:bb:dd.f" names compare as strings. */
static bool name_before(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a < (unsigned char)*b;
}

static void match_ivshmem(const char *name, void *ctx)
{
	char *best = ctx;
	char path[PATH_LEN], id[16];

	if (str_len(name) >= BDF_LEN)
		return;
	if (!join(path, sizeof(path), DEVICES, name, "/vendor") ||
	    read_file(path, id, sizeof(id)) <= 0 || !starts_with(id, PCI_VENDOR "\n"))
		return;
	if (!join(path, sizeof(path), DEVICES, name, "/device") ||
	    read_file(path, id, sizeof(id)) <= 0 || !starts_with(id, PCI_DEVICE "\n"))
		return;
	if (!best[0] || name_before(name, best))
		join(best, BDF_LEN, name, 0, 0);
}

/* The name of the driver bound to the function ("" if none). */
static void bound_driver(const char *bdf, char *name, size_t cap)
{
	char path[PATH_LEN], target[PATH_LEN];
	long n;
	size_t start;

	name[0] = '\0';
	if (!join(path, sizeof(path), DEVICES, bdf, "/driver"))
		return;
	n = linux_syscall(SYS_readlinkat, AT_FDCWD, (long)path, (long)target,
			  sizeof(target) - 1, 0, 0);
	if (n <= 0)
		return;
	target[n] = '\0';
	start = (size_t)n;
	while (start && target[start - 1] != '/')
		start--;
	join(name, cap, target + start, 0, 0);
}

/* uio_pci_generic on the function: new_id (the driver takes no ids of its own), else bind. */
static const char *bind(const char *bdf)
{
	char driver[64];
	long err;

	bound_driver(bdf, driver, sizeof(driver));
	if (!driver[0]) {
		err = write_file(DRIVER_DIR "new_id", PCI_NEW_ID);
		if (err && err != -EEXIST)
			return "cannot add the id to uio_pci_generic (is the module loaded?)";
		bound_driver(bdf, driver, sizeof(driver));
	}
	if (!driver[0]) {
		/* The id was already known (an earlier run) but this function is not bound. */
		write_file(DRIVER_DIR "bind", bdf);
		bound_driver(bdf, driver, sizeof(driver));
	}
	if (!driver[0])
		return "uio_pci_generic did not bind the function";
	if (!str_eq(driver, DRIVER))
		return "the function is bound to another driver";
	return 0;
}

static void match_uio(const char *name, void *ctx)
{
	char *uio = ctx;

	if (starts_with(name, "uio") && str_len(name) < 16)
		join(uio, 16, name, 0, 0);
}

struct bar {
	volatile uint8_t *base;
	uint64_t size;
};

/* Line `index` of the function's resource file: "start end flags", hex. */
static bool resource(const char *bdf, unsigned index, uint64_t *start, uint64_t *size)
{
	char path[PATH_LEN], text[1024];
	const char *p = text;
	uint64_t end;

	if (!join(path, sizeof(path), DEVICES, bdf, "/resource") ||
	    read_file(path, text, sizeof(text)) <= 0)
		return false;
	for (unsigned i = 0; i < index; i++) {
		while (*p && *p != '\n')
			p++;
		if (!*p++)
			return false;
	}
	if (!parse_u64(p, 16, start))
		return false;
	while (*p && *p != ' ')
		p++;
	if (!*p || !parse_u64(p + 1, 16, &end) || end < *start)
		return false;
	*size = end - *start + 1;
	return *start != 0;
}

/* BAR `index` through sysfs resourceN: the mapping starts at the page the BAR is in. */
static bool map_bar(const char *bdf, unsigned index, struct bar *bar)
{
	char path[PATH_LEN], name[16] = "/resource0";
	uint64_t start, size, offset, length;
	long fd, addr;

	if (!resource(bdf, index, &start, &size))
		return false;
	name[9] = (char)('0' + index);
	if (!join(path, sizeof(path), DEVICES, bdf, name))
		return false;
	fd = sys(SYS_openat, AT_FDCWD, (long)path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	offset = start % PAGE_SIZE;
	length = (offset + size + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE;
	addr = linux_syscall(SYS_mmap, 0, (long)length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	sys(SYS_close, fd, 0, 0);
	if (addr < 0 && addr > -4096)
		return false;
	bar->base = (volatile uint8_t *)addr + offset;
	bar->size = size;
	return true;
}

static uint32_t reg_read(const struct bar *regs, uint32_t offset)
{
	return *(volatile uint32_t *)(regs->base + offset);
}

static void reg_write(const struct bar *regs, uint32_t offset, uint32_t value)
{
	*(volatile uint32_t *)(regs->base + offset) = value;
}

struct options {
	const char *mode;
	const char *bdf;
	uint64_t count;
	uint64_t size;                  /* 0: BAR2's */
	uint64_t member;                /* UINT64_MAX: IVPosition */
	uint64_t timeout_ms;
};

struct function {
	char bdf[BDF_LEN];
	char uio[16];
	struct bar regs, shm;
};

/* Find, bind and map the function; an error or 0. */
static const char *open_function(const struct options *opt, struct function *f)
{
	char path[PATH_LEN];
	const char *err;

	f->bdf[0] = '\0';
	f->uio[0] = '\0';
	if (opt->bdf) {
		if (str_len(opt->bdf) >= BDF_LEN)
			return "--bdf too long";
		join(f->bdf, BDF_LEN, opt->bdf, 0, 0);
	} else if (!each_entry(DEVICES, match_ivshmem, f->bdf)) {
		return "cannot read " DEVICES;
	}
	if (!f->bdf[0])
		return "no ivshmem PCI function (1af4:1110)";
	err = bind(f->bdf);
	if (err)
		return err;
	if (!join(path, sizeof(path), DEVICES, f->bdf, "/uio") ||
	    !each_entry(path, match_uio, f->uio) || !f->uio[0])
		return "no uio device for the function";
	if (!map_bar(f->bdf, 0, &f->regs) || f->regs.size < IVSHMEM_DOORBELL + 4)
		return "cannot map BAR0 (resource0)";
	if (!map_bar(f->bdf, 2, &f->shm))
		return "cannot map BAR2 (resource2)";
	return 0;
}

/* Clear Command.INTX_DISABLE, which uio_pci_generic's handler set. */
static bool intx_unmask(long config)
{
	uint16_t command;

	if (linux_syscall(SYS_pread64, config, (long)&command, 2, PCI_COMMAND, 0, 0) != 2)
		return false;
	command &= (uint16_t)~PCI_COMMAND_INTX_DISABLE;
	return linux_syscall(SYS_pwrite64, config, (long)&command, 2, PCI_COMMAND, 0, 0) == 2;
}

/* Wait up to timeout_ms for an interrupt: 1 if one came, 0 on time-out, negative errno. */
static long wait_ring(long uio, uint64_t timeout_ms)
{
	struct pollfd_ pfd = { .fd = (int)uio, .events = POLLIN, .revents = 0 };
	struct timespec_ ts = { .tv_sec = (long)(timeout_ms / 1000),
				.tv_nsec = (long)(timeout_ms % 1000) * 1000000L };
	uint32_t count;
	long n;

	do
		n = linux_syscall(SYS_ppoll, (long)&pfd, 1, (long)&ts, 0, 8, 0);
	while (n == -EINTR);
	if (n <= 0)
		return n;
	n = sys(SYS_read, uio, (long)&count, sizeof(count));
	return n == sizeof(count) ? 1 : (n < 0 ? n : -EINTR);
}

static void sleep_ns(long ns)
{
	struct timespec_ ts = { .tv_sec = 0, .tv_nsec = ns };

	sys(SYS_nanosleep, (long)&ts, 0, 0);
}

static int64_t now_ns(void)
{
	struct timespec_ ts = { 0, 0 };

	sys(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void ring(const struct function *f, uint32_t member)
{
	/* What was published before the ring must be visible when the receiver wakes. */
	channel_barrier();
	reg_write(&f->regs, IVSHMEM_DOORBELL, member << 16);
}

#define DT_BASE                 "/sys/firmware/devicetree/base/"
#define DT_CHANNEL              "tern-channel@"

/* The search for the want-th channel node by address, in `name` once found. */
struct dt_pick {
	uint64_t want;
	char name[64];
};

/* How many channel nodes are at lower addresses than `addr`. */
struct dt_below {
	uint64_t addr;
	uint64_t count;
};

static void dt_count(const char *name, void *ctx)
{
	struct dt_below *b = ctx;
	uint64_t addr;

	if (starts_with(name, DT_CHANNEL) && parse_u64(name + sizeof(DT_CHANNEL) - 1, 16, &addr) &&
	    addr < b->addr)
		b->count++;
}

static void dt_candidate(const char *name, void *ctx)
{
	struct dt_pick *p = ctx;
	struct dt_below below = { .addr = 0, .count = 0 };

	if (!starts_with(name, DT_CHANNEL) || str_len(name) >= sizeof(p->name) ||
	    !parse_u64(name + sizeof(DT_CHANNEL) - 1, 16, &below.addr))
		return;
	if (each_entry(DT_BASE, dt_count, &below) && below.count == p->want)
		join(p->name, sizeof(p->name), name, 0, 0);
}

static uint64_t be(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* The channel's size from its node (the root has 2 address and 2 size cells); 0 if none. */
static uint64_t dt_channel_size(const char *bdf)
{
	struct dt_pick pick = { .want = 0 };
	char path[PATH_LEN];
	uint8_t reg[32];
	uint64_t device;
	long n;

	/* "dddd:bb:DD.f": the device number DD is 1 + the channel's place. */
	if (str_len(bdf) != 12 || !parse_u64((char[3]){ bdf[8], bdf[9], '\0' }, 16, &device) ||
	    device == 0)
		return 0;
	pick.want = device - 1;
	pick.name[0] = '\0';
	if (!each_entry(DT_BASE, dt_candidate, &pick) || !pick.name[0] ||
	    !join(path, sizeof(path), DT_BASE, pick.name, "/reg"))
		return 0;
	n = read_file(path, (char *)reg, sizeof(reg));
	return n >= 16 ? be(reg + 8, 8) : 0;
}

/* The answers so far and the channel's size taken, an error or 0. */
static const char *pong(const struct options *opt, const struct function *f, uint32_t self,
			uint64_t *answered, uint64_t *size)
{
	char path[PATH_LEN];
	struct channel ch = { .shm = (uintptr_t)f->shm.base, .size = opt->size, .self = self,
			      .members = 2, .readonly = false };
	struct channel_queue tx, rx;
	struct channel_msg msg;
	long uio, config, r;

	*answered = 0;
	if (self != PONGER)
		return "this partition is not member 1 of the channel (IVPosition)";
	if (!ch.size)
		ch.size = dt_channel_size(f->bdf);
	if (!ch.size)
		ch.size = f->shm.size;
	*size = ch.size;
	if (ch.size > f->shm.size)
		return "--size is larger than BAR2";
	if (!join(path, sizeof(path), "/dev/", f->uio, 0) ||
	    (uio = sys(SYS_openat, AT_FDCWD, (long)path, O_RDWR | O_CLOEXEC)) < 0)
		return "cannot open /dev/uioN";
	if (!join(path, sizeof(path), DEVICES, f->bdf, "/config") ||
	    (config = sys(SYS_openat, AT_FDCWD, (long)path, O_RDWR | O_CLOEXEC)) < 0)
		return "cannot open the function's config space";
	/* The doorbell on before the peer may ring it, that is before the channel opens. */
	reg_write(&f->regs, IVSHMEM_INTR_MASK, 1);
	if (!intx_unmask(config))
		return "cannot write the function's Command register";
	if (!channel_open(&ch, &tx, &rx))
		return "channel cannot carry queues (too small)";
	for (;;) {
		while (*answered < opt->count && channel_recv(&rx, &msg)) {
			if (!channel_send(&tx, &msg))
				return "queue to member 0 full";
			++*answered;
			ring(f, PINGER);
		}
		if (*answered >= opt->count)
			break;
		r = wait_ring(uio, opt->timeout_ms);
		if (r == 0)
			return "no message from member 0 in time";
		if (r < 0)
			return "cannot wait on /dev/uioN";
		(void)reg_read(&f->regs, IVSHMEM_INTR_STATUS);
		if (!intx_unmask(config))
			return "cannot write the function's Command register";
	}
	/* Like the latency guest's ponger: done once member 0 has taken the last answer. */
	for (int64_t deadline = now_ns() + FINISH_WAIT_NS;
	     channel_queued(&tx) && now_ns() < deadline;)
		sleep_ns(FINISH_POLL_NS);
	return 0;
}

static const char *parse_args(int argc, char **argv, struct options *opt)
{
	opt->mode = argc > 1 ? argv[1] : "";
	opt->bdf = 0;
	opt->count = DEFAULT_COUNT;
	opt->size = 0;
	opt->timeout_ms = DEFAULT_TIMEOUT_MS;
	opt->member = UINT64_MAX;
	if (!str_eq(opt->mode, "pong") && !str_eq(opt->mode, "probe"))
		return "usage: tern-chan pong|probe [--bdf B] [--count N] [--size BYTES] "
		       "[--member K] [--timeout-ms MS]";
	for (int i = 2; i < argc; i += 2) {
		const char *key = argv[i], *value = i + 1 < argc ? argv[i + 1] : 0;

		if (!value)
			return "an option without its value";
		if (str_eq(key, "--bdf"))
			opt->bdf = value;
		else if (str_eq(key, "--count") && parse_u64(value, 10, &opt->count) &&
			 opt->count)
			;
		else if (str_eq(key, "--size") && parse_u64(value, 10, &opt->size))
			;
		else if (str_eq(key, "--member") && parse_u64(value, 10, &opt->member) &&
			 opt->member < CHANNEL_MAX_MEMBERS)
			;
		else if (str_eq(key, "--timeout-ms") && parse_u64(value, 10, &opt->timeout_ms))
			;
		else
			return "unknown option or bad number";
	}
	return 0;
}

LINUX_ENTRY;

__attribute__((noreturn, used)) void tern_start(long *sp);

__attribute__((noreturn, used)) void tern_start(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	struct options opt;
	struct function f;
	struct line l = { .len = 0 };
	uint64_t answered = 0, size = 0;
	uint32_t position = 0;
	const char *err = parse_args(argc, argv, &opt);
	bool probe = str_eq(opt.mode, "probe");

	if (!err)
		err = open_function(&opt, &f);
	if (!err) {
		position = reg_read(&f.regs, IVSHMEM_IV_POSITION);
		if (!probe && opt.member != UINT64_MAX)
			position = (uint32_t)opt.member;
		if (!probe)
			err = pong(&opt, &f, position, &answered, &size);
	}
	put(&l, probe ? "TERN-LINUX: chan-probe " : "TERN-LINUX: chan ");
	if (err) {
		put(&l, "error=");
		put(&l, err);
		if (!probe) {
			put(&l, " (answered ");
			put_u64(&l, answered);
			put(&l, ")");
		}
	} else if (probe) {
		put(&l, "bdf=");
		put(&l, f.bdf);
		put(&l, " position=");
		put_u64(&l, position);
		put(&l, " bar2=");
		put_u64(&l, f.shm.size);
		put(&l, " uio=");
		put(&l, f.uio);
	} else {
		put(&l, "answered=");
		put_u64(&l, answered);
		put(&l, " member=");
		put_u64(&l, position);
		put(&l, " size=");
		put_u64(&l, size);
		put(&l, " bdf=");
		put(&l, f.bdf);
	}
	emit(&l);
	sys(SYS_exit_group, err ? 1 : 0, 0, 0);
	__builtin_unreachable();
}
