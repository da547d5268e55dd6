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
#include "linux_user.h"

#define PINGER                  0
#define PONGER                  1
#define DEFAULT_COUNT           1000
#define DEFAULT_TIMEOUT_MS      30000
#define FINISH_WAIT_NS          1000000000L
#define FINISH_POLL_NS          100000L

struct options {
	const char *mode;
	const char *bdf;
	uint64_t count;
	uint64_t size;                  /* 0: BAR2's */
	uint64_t member;                /* UINT64_MAX: IVPosition */
	uint64_t timeout_ms;
};

/* The channel's size from its node (the root has 2 address and 2 size cells); 0 if none. */
static uint64_t dt_channel_size(const char *bdf)
{
	char node[64], path[PATH_LEN];
	uint8_t reg[32];
	uint64_t device;
	long n;

	/* "dddd:bb:DD.f": the device number DD is 1 + the channel's place. */
	if (str_len(bdf) != 12 || !parse_u64((char[3]){ bdf[8], bdf[9], '\0' }, 16, &device) ||
	    device == 0)
		return 0;
	if (!dt_channel_node(device - 1, node, sizeof(node)) ||
	    !join(path, sizeof(path), DT_BASE, node, "/reg"))
		return 0;
	n = read_file(path, (char *)reg, sizeof(reg));
	return n >= 16 ? be(reg + 8, 8) : 0;
}

/* The answers so far and the channel's size taken, an error or 0. */
static const char *pong(const struct options *opt, const struct function *f, uint32_t self,
			uint64_t *answered, uint64_t *size)
{
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
	/* The doorbell on before the peer may ring it, that is before the channel opens. */
	const char *error = open_doorbell(f, &uio, &config);
	if (error)
		return error;
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
		err = open_function(opt.bdf, ANY_DEVICE, &f);
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
