/*
 * The SBI calls a plain S-mode kernel makes (SBI 0.2+ calling convention): base, TIME, IPI,
 * HSM and SRST. Natively OpenSBI answers them; in a Tern partition, the hypervisor.
 */
#ifndef GUEST_SBI_H
#define GUEST_SBI_H

#include <stdbool.h>
#include <stdint.h>

#define SBI_EXT_BASE            0x10
#define SBI_EXT_TIME            0x54494d45      /* "TIME" */
#define SBI_EXT_IPI             0x735049        /* "sPI" */
#define SBI_EXT_HSM             0x48534d        /* "HSM" */
#define SBI_EXT_SRST            0x53525354      /* "SRST" */
#define SBI_EXT_LEGACY_SHUTDOWN 0x08

#define SBI_SUCCESS             0
#define SBI_ERR_FAILED          (-1)
#define SBI_ERR_NOT_SUPPORTED   (-2)
#define SBI_ERR_INVALID_PARAM   (-3)
#define SBI_ERR_ALREADY_STARTED (-7)

#define SBI_HSM_STARTED         0
#define SBI_HSM_STOPPED         1

struct sbiret {
	long error;
	long value;
};

struct sbiret sbi_call(unsigned long ext, unsigned long fid, unsigned long a0,
		       unsigned long a1, unsigned long a2);

/* Reads the version and probes TIME, IPI, HSM and SRST once; the queries below use that. */
void sbi_init(void);
unsigned long sbi_spec_version(void);           /* major << 24 | minor */
long sbi_impl_id(void);                         /* 1 = OpenSBI */
long sbi_impl_version(void);
bool sbi_has_time(void);
bool sbi_has_ipi(void);
bool sbi_has_hsm(void);

/* TIME: the supervisor timer interrupt when `time` reaches `deadline` (~0: never). */
long sbi_set_timer(uint64_t deadline);
/* IPI: a supervisor software interrupt on hart `hart`. */
long sbi_send_ipi_one(unsigned hart);
/* HSM: start `hart` at `entry` (a0 = hart id, a1 = opaque, satp 0, interrupts off). */
long sbi_hart_start(unsigned hart, uintptr_t entry, unsigned long opaque);
/* HSM status (SBI_HSM_*), or an SBI error (negative). */
long sbi_hart_status(unsigned hart);

/* SRST shutdown (legacy shutdown where SRST is absent); parks the hart if both fail. */
void sbi_shutdown(void) __attribute__((noreturn));

#endif
