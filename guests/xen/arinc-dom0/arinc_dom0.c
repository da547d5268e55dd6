/*
 * A dom0 for Xen 4.17 that does what `xl sched-arinc653` would, and nothing else: Xen's ARINC
 * 653 scheduler names a window's vCPU by domain handle and vCPU id, and a dom0less boot leaves
 * every domU's handle all zero and the schedule at its default (windows for dom0 alone). So:
 * give each domU named on the command line a distinct handle (XEN_DOMCTL_setdomainhandle), put
 * the schedule (XEN_SYSCTL_scheduler_op, putinfo), say on Xen's console whether Xen took it,
 * and wait forever: dom0 is not in its own schedule, so it never runs again.
 *
 * Command line (/chosen/bootargs of the device tree Xen gives dom0), in microseconds:
 *     arinc.pool=0 arinc.frame_us=20000 arinc.windows=1:10000,2:10000
 * windows: domain id:length, in window order.
 *
 * It runs with the MMU off (VA = IPA = PA: hypercall arguments are guest addresses) wherever
 * Xen put it, so it uses PC-relative addressing only and no pointers in data. With the MMU off
 * its accesses are non-cacheable while Xen reads guest memory through its cacheable mapping:
 * every argument buffer is cleaned and invalidated to the point of coherency before the call.
 */
#include <stddef.h>
#include <stdint.h>

/* Xen's public ABI (xen/include/public/{xen,domctl,sysctl}.h of Xen 4.17), arm64. */
enum {
	HYPERCALL_CONSOLE_IO = 18,
	HYPERCALL_SYSCTL = 35,
	HYPERCALL_DOMCTL = 36,
	CONSOLE_IO_WRITE = 0,
	DOMCTL_SET_DOMAIN_HANDLE = 17,
	DOMCTL_VERSION = 0x15,
	SYSCTL_SCHEDULER_OP = 19,
	SYSCTL_VERSION = 0x15,
	SCHEDOP_PUTINFO = 0,
	SCHEDULER_ARINC653 = 7,
	ARINC_MAX_WINDOWS = 64,
};

typedef uint8_t dom_handle[16];

struct domctl {
	uint32_t cmd;
	uint32_t version;
	uint16_t domain;
	uint16_t pad[3];
	union {
		dom_handle handle;              /* setdomainhandle */
		uint64_t size[16];              /* the union's 128 bytes, 8-byte aligned */
	} u;
};

struct sched_op {
	uint32_t pool;
	uint32_t sched_id;
	uint32_t cmd;
	uint32_t pad;
	uint64_t schedule;                      /* guest address of a struct arinc_schedule */
};

struct sysctl {
	uint32_t cmd;
	uint32_t version;
	union {
		struct sched_op sched;
		uint64_t size[16];
	} u;
};

struct arinc_window {
	dom_handle handle;
	uint32_t vcpu;
	uint32_t pad;
	uint64_t runtime_ns;
};

struct arinc_schedule {
	uint64_t major_frame_ns;
	uint8_t count;
	uint8_t pad[7];
	struct arinc_window windows[ARINC_MAX_WINDOWS];
};

/* What Xen copies in (its sizeof), checked against the layout in 4.17's headers. */
_Static_assert(sizeof(struct domctl) == 144, "xen_domctl");
_Static_assert(offsetof(struct domctl, u) == 16, "xen_domctl.u");
_Static_assert(sizeof(struct sysctl) == 136, "xen_sysctl");
_Static_assert(offsetof(struct sysctl, u.sched.schedule) == 24, "scheduler_op.u");
_Static_assert(sizeof(struct arinc_window) == 32, "sched_entries[]");
_Static_assert(offsetof(struct arinc_schedule, windows) == 16, "sched_entries");
_Static_assert(sizeof(struct arinc_schedule) == 16 + 64 * 32, "xen_sysctl_arinc653_schedule");

struct window {
	uint16_t domain;
	uint64_t us;
};

static struct domctl domctl;
static struct sysctl sysctl;
static struct arinc_schedule schedule;
static struct window windows[ARINC_MAX_WINDOWS];
static char line[160];

void *memset(void *dst, int c, size_t n);

void *memset(void *dst, int c, size_t n)
{
	volatile uint8_t *p = dst;      /* not a call to itself, nor a DC ZVA (device memory) */

	while (n-- > 0U)
		*p++ = (uint8_t)c;
	return dst;
}

static void clean_to_poc(const void *buf, size_t len)
{
	uintptr_t a = (uintptr_t)buf & ~(uintptr_t)63;
	uintptr_t end = (uintptr_t)buf + len;

	for (; a < end; a += 64U)
		__asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
	__asm__ volatile("dsb sy" : : : "memory");
}

static long hypercall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	register uint64_t x16 __asm__("x16") = nr;
	register uint64_t x0 __asm__("x0") = a0;
	register uint64_t x1 __asm__("x1") = a1;
	register uint64_t x2 __asm__("x2") = a2;

	/* Xen may clobber the argument registers it does not return in. */
	__asm__ volatile("hvc #0xea1"
			 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x16)
			 :
			 : "x3", "x4", "memory");
	return (long)x0;
}

static size_t length(const char *s)
{
	size_t n = 0;

	while (s[n] != '\0')
		n++;
	return n;
}

static void say(const char *s)
{
	size_t n = length(s);

	clean_to_poc(s, n);
	(void)hypercall(HYPERCALL_CONSOLE_IO, CONSOLE_IO_WRITE, n, (uint64_t)(uintptr_t)s);
}

/* Appends to `line` at *at. */
static void put_str(size_t *at, const char *s)
{
	while (*s != '\0' && *at + 1U < sizeof(line))
		line[(*at)++] = *s++;
	line[*at] = '\0';
}

static void put_int(size_t *at, long v)
{
	char digits[24];
	size_t n = 0;
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;

	if (v < 0)
		put_str(at, "-");
	do {
		digits[n++] = (char)('0' + (u % 10U));
		u /= 10U;
	} while (u != 0U);
	while (n > 0U) {
		char one[2] = { digits[--n], '\0' };

		put_str(at, one);
	}
}

/* ---- The command line, from Xen's flattened device tree (big-endian, maybe unaligned). ---- */

enum { FDT_MAGIC = 0xd00dfeedU, FDT_BEGIN_NODE = 1, FDT_END_NODE = 2, FDT_PROP = 3,
       FDT_NOP = 4, FDT_END = 9 };

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int same(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

static size_t align4(size_t n)
{
	return (n + 3U) & ~(size_t)3;
}

/* /chosen/bootargs, or NULL. */
static const char *chosen_bootargs(const uint8_t *fdt)
{
	if (fdt == NULL || be32(fdt) != FDT_MAGIC)
		return NULL;
	const uint8_t *p = fdt + be32(fdt + 8);
	const char *strings = (const char *)fdt + be32(fdt + 12);
	int depth = 0;
	int in_chosen = 0;

	for (;;) {
		uint32_t token = be32(p);

		p += 4;
		if (token == FDT_BEGIN_NODE) {
			const char *name = (const char *)p;

			depth++;
			in_chosen = depth == 2 && same(name, "chosen");
			p += align4(length(name) + 1U);
		} else if (token == FDT_END_NODE) {
			if (in_chosen)
				return NULL;
			depth--;
		} else if (token == FDT_PROP) {
			uint32_t len = be32(p);
			const char *name = strings + be32(p + 4);

			if (in_chosen && same(name, "bootargs") && len > 0U)
				return (const char *)(p + 8);
			p += 8U + align4(len);
		} else if (token != FDT_NOP) {
			return NULL;
		}
	}
}

/* The value after `key` (e.g. "arinc.pool=") in the command line, or NULL. */
static const char *arg(const char *cmdline, const char *key)
{
	size_t n = length(key);

	for (const char *p = cmdline; *p != '\0'; p++) {
		if (p != cmdline && p[-1] != ' ')
			continue;
		size_t i = 0;

		while (i < n && p[i] == key[i])
			i++;
		if (i == n)
			return p + n;
	}
	return NULL;
}

static const char *number(const char *p, uint64_t *out)
{
	uint64_t v = 0;

	if (p == NULL || *p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		v = v * 10U + (uint64_t)(*p++ - '0');
	*out = v;
	return p;
}

/* Windows "dom:us,dom:us,..." into `windows`; their count, or -1 if malformed. */
static int parse_windows(const char *p)
{
	int n = 0;

	while (p != NULL && n < ARINC_MAX_WINDOWS) {
		uint64_t dom;
		uint64_t us;

		p = number(p, &dom);
		if (p == NULL || *p != ':' || dom == 0U || dom > 0x7fefU)
			return -1;
		p = number(p + 1, &us);
		if (p == NULL || us == 0U)
			return -1;
		windows[n].domain = (uint16_t)dom;
		windows[n].us = us;
		n++;
		if (*p != ',')
			return (*p == '\0' || *p == ' ') ? n : -1;
		p++;
	}
	return -1;
}

/* A handle no other domain has: "tern-a653" and the domain id. */
static void handle_of(uint16_t domain, dom_handle h)
{
	static const char tag[] = "tern-a653";

	for (size_t i = 0; i < sizeof(dom_handle); i++)
		h[i] = i < sizeof(tag) - 1U ? (uint8_t)tag[i] : 0U;
	h[14] = (uint8_t)(domain >> 8);
	h[15] = (uint8_t)domain;
}

static long set_handle(uint16_t domain)
{
	memset(&domctl, 0, sizeof(domctl));
	domctl.cmd = DOMCTL_SET_DOMAIN_HANDLE;
	domctl.version = DOMCTL_VERSION;
	domctl.domain = domain;
	handle_of(domain, domctl.u.handle);
	clean_to_poc(&domctl, sizeof(domctl));
	return hypercall(HYPERCALL_DOMCTL, (uint64_t)(uintptr_t)&domctl, 0, 0);
}

static long put_schedule(uint32_t pool, uint64_t frame_us, int count)
{
	memset(&schedule, 0, sizeof(schedule));
	schedule.major_frame_ns = frame_us * 1000U;
	schedule.count = (uint8_t)count;
	for (int i = 0; i < count; i++) {
		handle_of(windows[i].domain, schedule.windows[i].handle);
		schedule.windows[i].vcpu = 0;
		schedule.windows[i].runtime_ns = windows[i].us * 1000U;
	}
	memset(&sysctl, 0, sizeof(sysctl));
	sysctl.cmd = SYSCTL_SCHEDULER_OP;
	sysctl.version = SYSCTL_VERSION;
	sysctl.u.sched.pool = pool;
	sysctl.u.sched.sched_id = SCHEDULER_ARINC653;
	sysctl.u.sched.cmd = SCHEDOP_PUTINFO;
	sysctl.u.sched.schedule = (uint64_t)(uintptr_t)&schedule;
	clean_to_poc(&schedule, sizeof(schedule));
	clean_to_poc(&sysctl, sizeof(sysctl));
	return hypercall(HYPERCALL_SYSCTL, (uint64_t)(uintptr_t)&sysctl, 0, 0);
}

void dom0_main(const uint8_t *fdt);

void dom0_main(const uint8_t *fdt)
{
	const char *cmdline = chosen_bootargs(fdt);
	uint64_t pool = 0;
	uint64_t frame_us = 0;
	int count = cmdline == NULL ? -1 : parse_windows(arg(cmdline, "arinc.windows="));
	size_t at = 0;

	if (count < 1 || number(arg(cmdline, "arinc.frame_us="), &frame_us) == NULL ||
	    number(arg(cmdline, "arinc.pool="), &pool) == NULL) {
		say("ARINC-DOM0: no schedule on the command line (arinc.pool= arinc.frame_us= "
		    "arinc.windows=dom:us,...)\n");
		return;
	}
	for (int i = 0; i < count; i++) {
		long rc = set_handle(windows[i].domain);

		if (rc != 0) {
			put_str(&at, "ARINC-DOM0: setdomainhandle of domain ");
			put_int(&at, windows[i].domain);
			put_str(&at, " failed: ");
			put_int(&at, rc);
			put_str(&at, "\n");
			say(line);
			return;
		}
	}
	long rc = put_schedule((uint32_t)pool, frame_us, count);

	put_str(&at, rc == 0 ? "ARINC-DOM0: schedule accepted: pool " :
			       "ARINC-DOM0: schedule refused: pool ");
	put_int(&at, (long)pool);
	put_str(&at, " frame_us ");
	put_int(&at, (long)frame_us);
	put_str(&at, " windows ");
	put_int(&at, count);
	put_str(&at, " rc ");
	put_int(&at, rc);
	put_str(&at, "\n");
	say(line);
}
