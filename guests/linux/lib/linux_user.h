/* What the Linux user-space programs share (linux_user.c). */
#ifndef TERN_LINUX_USER_H
#define TERN_LINUX_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
#define DT_BASE                 "/sys/firmware/devicetree/base/"
#define ANY_DEVICE              UINT64_MAX

/* The output line, assembled and written with one write() so that it stays one line. */
struct line {
	char buf[256];
	size_t len;
};

struct bar {
	volatile uint8_t *base;
	uint64_t size;
};

struct function {
	char bdf[BDF_LEN];
	char uio[16];
	struct bar regs, shm;
};

struct ivshmem_pick {
	uint64_t device;                /* ANY_DEVICE, or the PCI device number wanted */
	char bdf[BDF_LEN];
};

/* clang may emit calls to these for aggregate copies and zeroing. */
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);

long sys(long nr, long a0, long a1, long a2);
size_t str_len(const char *s);
bool str_eq(const char *a, const char *b);
bool starts_with(const char *s, const char *prefix);
bool join(char *dst, size_t cap, const char *a, const char *b, const char *c);
void put(struct line *l, const char *s);
void put_u64(struct line *l, uint64_t v);
void emit(struct line *l);
bool parse_u64(const char *s, int base, uint64_t *out);
long read_file(const char *path, char *buf, size_t cap);
long write_file(const char *path, const char *text);
bool each_entry(const char *path, void (*each)(const char *name, void *ctx), void *ctx);
uint32_t reg_read(const struct bar *regs, uint32_t offset);
void reg_write(const struct bar *regs, uint32_t offset, uint32_t value);
const char *open_function(const char *bdf, uint64_t device, struct function *f);
bool intx_unmask(long config);
/*
 * The function's doorbell to this program: /dev/uioN (`uio`, its interrupts) and the config
 * space (`config`, to unmask its INTx again after each), IntrMask set and the INTx unmasked.
 * 0, or why not.
 */
const char *open_doorbell(const struct function *f, long *uio, long *config);
long wait_ring(long uio, uint64_t timeout_ms);
void sleep_ns(long ns);
int64_t now_ns(void);
void ring(const struct function *f, uint32_t member);
uint64_t be(const uint8_t *p, unsigned bytes);
bool dt_channel_node(uint64_t j, char *name, size_t cap);

#endif
