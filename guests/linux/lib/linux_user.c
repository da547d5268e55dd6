/*
 * What the Linux user-space programs (tern-chan, tern-vio) share: their own system calls (no C
 * library, linux_arch.h), strings and one-line output, sysfs, and a channel's ivshmem PCI
 * function through uio_pci_generic (docs/configuration.md, "From Linux user space").
 */
#include "linux_user.h"

#include "channel_arch.h"
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

long sys(long nr, long a0, long a1, long a2)
{
	return linux_syscall(nr, a0, a1, a2, 0, 0, 0);
}

size_t str_len(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

bool starts_with(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

/* dst = the concatenation of up to three strings; false if it does not fit. */
bool join(char *dst, size_t cap, const char *a, const char *b, const char *c)
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

void put(struct line *l, const char *s)
{
	while (*s && l->len + 1 < sizeof(l->buf))
		l->buf[l->len++] = *s++;
}

void put_u64(struct line *l, uint64_t v)
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

void emit(struct line *l)
{
	l->buf[l->len++] = '\n';
	sys(SYS_write, 1, (long)l->buf, (long)l->len);
}

bool parse_u64(const char *s, int base, uint64_t *out)
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
long read_file(const char *path, char *buf, size_t cap)
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
long write_file(const char *path, const char *text)
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
bool each_entry(const char *path, void (*each)(const char *name, void *ctx), void *ctx)
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
	struct ivshmem_pick *pick = ctx;
	char *best = pick->bdf;
	uint64_t device;
	char path[PATH_LEN], id[16];

	if (str_len(name) >= BDF_LEN)
		return;
	if (!join(path, sizeof(path), DEVICES, name, "/vendor") ||
	    read_file(path, id, sizeof(id)) <= 0 || !starts_with(id, PCI_VENDOR "\n"))
		return;
	if (!join(path, sizeof(path), DEVICES, name, "/device") ||
	    read_file(path, id, sizeof(id)) <= 0 || !starts_with(id, PCI_DEVICE "\n"))
		return;
	/* "dddd:bb:DD.f" */
	if (pick->device != ANY_DEVICE &&
	    (str_len(name) != 12 || !parse_u64((char[3]){ name[8], name[9], '\0' }, 16, &device) ||
	     device != pick->device))
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

uint32_t reg_read(const struct bar *regs, uint32_t offset)
{
	return *(volatile uint32_t *)(regs->base + offset);
}

void reg_write(const struct bar *regs, uint32_t offset, uint32_t value)
{
	*(volatile uint32_t *)(regs->base + offset) = value;
}


/*
 * Find (`bdf`, else the lowest-addressed ivshmem function, on PCI device number `device` unless
 * ANY_DEVICE), bind and map the function; an error or 0.
 */
const char *open_function(const char *bdf, uint64_t device, struct function *f)
{
	struct ivshmem_pick pick = { .device = device };
	char path[PATH_LEN];
	const char *err;

	f->bdf[0] = '\0';
	f->uio[0] = '\0';
	pick.bdf[0] = '\0';
	if (bdf) {
		if (str_len(bdf) >= BDF_LEN)
			return "--bdf too long";
		join(f->bdf, BDF_LEN, bdf, 0, 0);
	} else if (!each_entry(DEVICES, match_ivshmem, &pick)) {
		return "cannot read " DEVICES;
	} else {
		join(f->bdf, BDF_LEN, pick.bdf, 0, 0);
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
bool intx_unmask(long config)
{
	uint16_t command;

	if (linux_syscall(SYS_pread64, config, (long)&command, 2, PCI_COMMAND, 0, 0) != 2)
		return false;
	command &= (uint16_t)~PCI_COMMAND_INTX_DISABLE;
	return linux_syscall(SYS_pwrite64, config, (long)&command, 2, PCI_COMMAND, 0, 0) == 2;
}

const char *open_doorbell(const struct function *f, long *uio, long *config)
{
	char path[PATH_LEN];

	if (!join(path, sizeof(path), "/dev/", f->uio, 0) ||
	    (*uio = sys(SYS_openat, AT_FDCWD, (long)path, O_RDWR | O_CLOEXEC)) < 0)
		return "cannot open /dev/uioN";
	if (!join(path, sizeof(path), DEVICES, f->bdf, "/config") ||
	    (*config = sys(SYS_openat, AT_FDCWD, (long)path, O_RDWR | O_CLOEXEC)) < 0)
		return "cannot open the function's config space";
	reg_write(&f->regs, IVSHMEM_INTR_MASK, 1);
	if (!intx_unmask(*config))
		return "cannot write the function's Command register";
	return 0;
}

/* Wait up to timeout_ms for an interrupt: 1 if one came, 0 on time-out, negative errno. */
long wait_ring(long uio, uint64_t timeout_ms)
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

void sleep_ns(long ns)
{
	struct timespec_ ts = { .tv_sec = 0, .tv_nsec = ns };

	sys(SYS_nanosleep, (long)&ts, 0, 0);
}

int64_t now_ns(void)
{
	struct timespec_ ts = { 0, 0 };

	sys(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ring(const struct function *f, uint32_t member)
{
	/* What was published before the ring must be visible when the receiver wakes. */
	channel_barrier();
	reg_write(&f->regs, IVSHMEM_DOORBELL, member << 16);
}
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

uint64_t be(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * The name of the j-th tern-channel@ADDR node by address, which is the partition's j-th
 * channel and PCI device 1 + j; false if there is none.
 */
bool dt_channel_node(uint64_t j, char *name, size_t cap)
{
	struct dt_pick pick = { .want = j };

	pick.name[0] = '\0';
	if (!each_entry(DT_BASE, dt_candidate, &pick) || !pick.name[0])
		return false;
	return join(name, cap, pick.name, 0, 0);
}
