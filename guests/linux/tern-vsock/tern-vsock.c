/*
 * tern-vsock: a line over a vsock stream from Linux user space, against a VirtIO vsock device
 * another partition serves (docs/configuration.md, "VirtIO devices"). Statically linked, no C
 * library: its own system calls (linux_arch.h) and entry.
 *
 *     tern-vsock echo LINE [--cid C] [--port P] [--timeout-ms MS]
 *         connect to C:P (default 2, the host, port 1234: what vback serves), send LINE and a
 *         newline, read the answer up to its newline, and print
 *         TERN-LINUX: vsock-echo port=P reply=ANSWER
 *         exit 0 if the answer is "echo: LINE", else 1.
 *     tern-vsock refused [--cid C] [--port P] [--timeout-ms MS]
 *         connect to a port that is not served: print
 *         TERN-LINUX: vsock-refused port=P errno=E
 *         exit 0 if the connection was refused (ECONNRESET or ECONNREFUSED), else 1.
 *
 * On any other error: `TERN-LINUX: vsock-echo error=<what> errno=E` (or vsock-refused), exit 1.
 * The timeout (default 10 s) bounds the connect (the socket's connect timeout) and the reads
 * (ppoll), so the program ends whatever the other side does.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linux_user.h"

#define SYS_socket              198
#define SYS_connect             203
#define SYS_setsockopt          208
#define AF_VSOCK                40
#define SOCK_STREAM             1
#define SO_VM_SOCKETS_CONNECT_TIMEOUT 6         /* a 64-bit struct timeval on both ports */
#define ECONNRESET              104
#define ECONNREFUSED            111
#define DEFAULT_CID             2u
#define DEFAULT_PORT            1234u
#define DEFAULT_TIMEOUT_MS      10000u
#define REPLY_MAX               200u

struct sockaddr_vm_ {
	uint16_t svm_family;
	uint16_t svm_reserved1;
	uint32_t svm_port;
	uint32_t svm_cid;
	uint8_t svm_flags;
	uint8_t svm_zero[3];
};

struct timeval_ {
	long tv_sec;
	long tv_usec;
};

struct options {
	const char *mode;
	const char *text;
	uint64_t cid, port, timeout_ms;
};

static const char *parse_args(int argc, char **argv, struct options *opt)
{
	int i = 2;

	opt->mode = argc > 1 ? argv[1] : "";
	opt->text = 0;
	opt->cid = DEFAULT_CID;
	opt->port = DEFAULT_PORT;
	opt->timeout_ms = DEFAULT_TIMEOUT_MS;
	if (str_eq(opt->mode, "echo")) {
		if (argc < 3)
			return "usage: tern-vsock echo LINE [--cid C] [--port P] [--timeout-ms MS]";
		opt->text = argv[2];
		i = 3;
	} else if (!str_eq(opt->mode, "refused")) {
		return "usage: tern-vsock echo LINE|refused [--cid C] [--port P] [--timeout-ms MS]";
	}
	for (; i < argc; i += 2) {
		const char *key = argv[i], *value = i + 1 < argc ? argv[i + 1] : 0;

		if (!value)
			return "an option without its value";
		if (str_eq(key, "--cid") && parse_u64(value, 10, &opt->cid) && opt->cid <= UINT32_MAX)
			;
		else if (str_eq(key, "--port") && parse_u64(value, 10, &opt->port) &&
			 opt->port <= UINT32_MAX)
			;
		else if (str_eq(key, "--timeout-ms") && parse_u64(value, 10, &opt->timeout_ms) &&
			 opt->timeout_ms)
			;
		else
			return "unknown option or bad number";
	}
	return 0;
}

/* A connected socket (>= 0), or the negative errno of the socket or connect. */
static long connect_to(const struct options *opt, const char **what)
{
	struct sockaddr_vm_ addr = { .svm_family = AF_VSOCK, .svm_port = (uint32_t)opt->port,
				     .svm_cid = (uint32_t)opt->cid };
	struct timeval_ tv = { .tv_sec = (long)(opt->timeout_ms / 1000),
			       .tv_usec = (long)(opt->timeout_ms % 1000) * 1000 };
	long fd = linux_syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0, 0, 0, 0);

	*what = "socket";
	if (fd < 0)
		return fd;
	*what = "setsockopt";
	long err = linux_syscall(SYS_setsockopt, fd, AF_VSOCK, SO_VM_SOCKETS_CONNECT_TIMEOUT,
				 (long)&tv, sizeof(tv), 0);
	if (err == 0) {
		*what = "connect";
		do
			err = linux_syscall(SYS_connect, fd, (long)&addr, sizeof(addr), 0, 0, 0);
		while (err == -EINTR);
	}
	if (err < 0) {
		sys(SYS_close, fd, 0, 0);
		return err;
	}
	return fd;
}

/* Read up to a newline (not kept) within the timeout: the length, or a negative errno. */
static long read_line(long fd, char *buf, uint32_t cap, uint64_t timeout_ms, const char **what)
{
	uint32_t len = 0;
	int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;

	for (;;) {
		int64_t left = deadline - now_ns();
		struct pollfd_ pfd = { .fd = (int)fd, .events = POLLIN, .revents = 0 };
		struct timespec_ ts = { .tv_sec = (long)(left / 1000000000),
					.tv_nsec = (long)(left % 1000000000) };

		*what = "timeout";
		if (left <= 0)
			return -1;
		long n = linux_syscall(SYS_ppoll, (long)&pfd, 1, (long)&ts, 0, 8, 0);

		if (n == -EINTR)
			continue;
		*what = "ppoll";
		if (n < 0)
			return n;
		if (n == 0)
			continue;       /* the deadline is checked above */
		*what = "read";
		n = sys(SYS_read, fd, (long)(buf + len), 1);
		if (n < 0)
			return n;
		*what = "closed before a whole line";
		if (n == 0)
			return -1;
		if (buf[len] == '\n')
			return len;
		*what = "answer too long";
		if (++len == cap)
			return -1;
	}
}

LINUX_ENTRY;

__attribute__((noreturn, used)) void tern_start(long *sp);

/* " error=WHAT" and, for a system call's failure, " errno=E". */
static void put_error(struct line *l, const char *what, long err)
{
	put(l, "error=");
	put(l, what);
	if (err < -1) {
		put(l, " errno=");
		put_u64(l, (uint64_t)-err);
	}
}

/* Send the line, read the answer: 0 with the answer in reply, or as read_line. */
static long echo(long fd, const struct options *opt, char *reply, const char **what)
{
	char out[REPLY_MAX + 2];
	size_t len = str_len(opt->text);

	*what = "line too long";
	if (len > REPLY_MAX)
		return -1;
	memcpy(out, opt->text, len);
	out[len] = '\n';
	/* The line and its newline in one write: one packet. */
	*what = "write";
	long n = sys(SYS_write, fd, (long)out, (long)len + 1);

	if (n != (long)len + 1)
		return n < 0 ? n : -1;
	n = read_line(fd, reply, REPLY_MAX, opt->timeout_ms, what);
	if (n >= 0)
		reply[n] = '\0';
	return n;
}

__attribute__((noreturn, used)) void tern_start(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	struct options opt;
	struct line l = { .len = 0 };
	const char *usage = parse_args(argc, argv, &opt), *what = 0;
	bool refused = str_eq(opt.mode, "refused");
	char reply[REPLY_MAX + 1];
	long fd = -1;
	int status = 1;

	put(&l, refused ? "TERN-LINUX: vsock-refused " : "TERN-LINUX: vsock-echo ");
	if (usage) {
		put_error(&l, usage, -1);
	} else {
		fd = connect_to(&opt, &what);
		if (refused && (fd == -ECONNRESET || fd == -ECONNREFUSED)) {
			put(&l, "port=");
			put_u64(&l, opt.port);
			put(&l, " errno=");
			put_u64(&l, (uint64_t)-fd);
			status = 0;
		} else if (refused && fd >= 0) {
			put_error(&l, "connected to a port that should refuse", -1);
		} else if (fd < 0) {
			put_error(&l, what, fd);
		} else {
			long n = echo(fd, &opt, reply, &what);

			if (n < 0) {
				put_error(&l, what, n);
			} else {
				put(&l, "port=");
				put_u64(&l, opt.port);
				put(&l, " reply=");
				put(&l, reply);
				status = starts_with(reply, "echo: ") && str_eq(reply + 6, opt.text) ? 0 : 1;
			}
		}
	}
	emit(&l);
	if (fd >= 0)
		sys(SYS_close, fd, 0, 0);
	sys(SYS_exit_group, status, 0, 0);
	for (;;)
		;
}
