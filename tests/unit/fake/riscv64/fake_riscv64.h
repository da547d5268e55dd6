/* SPDX-License-Identifier: MIT */
/*
 * The riscv64 hardware the vCPU, trap and SBI code (vcpu.c, traps.c, firmware.c), the APLIC
 * (aplic.c, vaplic.c) and the G-stage code (gstage.c) reach, on the host: CSRs (a cell per
 * name and core), the instructions arch/sysreg.h names (counted), the board's APLIC (its
 * per-source registers act as the board's, every write logged) and IMSIC files in host memory,
 * and what cpu.c, imsic.c and the assembly provide.
 */
#ifndef TERN_TEST_FAKE_RISCV64_H
#define TERN_TEST_FAKE_RISCV64_H

#include <stdbool.h>
#include <stdint.h>
#include <arch/cpu.h>
#include "fake.h"

/* A CSR of core `cpu` as csr_read() there sees it: its name as arch/sysreg.h spells it ("hvip", "0x14d"). */
uint64_t fake_csr(unsigned cpu, const char *name);
void fake_csr_put(unsigned cpu, const char *name, uint64_t value);
/* The i-th CSR the fake has (its name as above), NULL past the last: a test's table of them all. */
const char *fake_csr_name(unsigned i);
/* Core `cpu`'s FP registers and fcsr (what fp.S saves and restores). */
extern struct riscv_fp fake_fp[FAKE_CPUS];
/* What fake_insn() recorded on core `cpu`: "wfi", "hfence.gvma", "hfence.vvma", "fence rw, rw". */
unsigned fake_insn_count(unsigned cpu, const char *what);
/* The value last written to each of the guest interrupt file registers (vsiselect 0x70..0xff). */
extern uint64_t fake_vsireg[FAKE_CPUS][256];

/* The board's APLIC (supervisor domain, MSI delivery mode): register memory. */
#define FAKE_APLIC_SOURCES 96u
#define FAKE_APLIC_SIZE    0x8000u
extern uint8_t fake_aplic[FAKE_APLIC_SIZE];
/* Its sources' rectified inputs (what in_clrip reads), bit s of word s / 32. */
extern uint32_t fake_aplic_input[4];
/* A register of the fake APLIC as the board holds it. */
uint32_t fake_aplic_reg(uint32_t offset);
/* Every write, in order (a ring: the last FAKE_APLIC_LOG), and a hook called before each. */
struct fake_aplic_write {
	uint32_t offset, value;
};
#define FAKE_APLIC_LOG 1024u
extern struct fake_aplic_write fake_aplic_log[FAKE_APLIC_LOG];
extern unsigned long fake_aplic_writes;
extern void (*fake_aplic_write_hook)(uint32_t offset, uint32_t value);

/*
 * The IMSIC: each hart's S-level file, then its guest files, FAKE_IMSIC_STRIDE apart.  Host
 * memory mapped where QEMU's virt board has it: below 4 GiB, as a device with 32-bit MSI
 * addresses needs to reach it.
 */
#define FAKE_IMSIC_STRIDE 0x8000u
#define FAKE_IMSIC_BASE   0x28000000u
#define FAKE_IMSIC_SIZE   (FAKE_CPUS * FAKE_IMSIC_STRIDE)
#define fake_imsic        ((uint8_t (*)[FAKE_IMSIC_STRIDE])(uintptr_t)FAKE_IMSIC_BASE)
/* The identity last stored into guest file `file` of core `cpu` (its seteipnum). */
uint32_t fake_imsic_seteipnum(unsigned cpu, unsigned file);

/* riscv_guest_files(): the guest interrupt files every hart has (4 unless a test says). */
extern unsigned fake_guest_files;
/* Identity `eiid` arrives in core `cpu`'s S-level file (a wired source's): riscv_take_kicks claims it. */
void fake_raise_eiid(unsigned cpu, uint32_t eiid);

/*
 * Shared cores, as the port sees them (the link wraps these calls, host.mk): cpu_is_shared()
 * is also true for the cores in fake_shared_cores (bit per core), for the core's callers too;
 * a hook set for the kick's vcpu_check_requests (the loop's look at a shared core's vCPUs) is
 * called instead of the core's.  sched_guest_waits and sched_timer_expired: fake.h's hooks.
 */
extern uint32_t fake_shared_cores;
extern void (*fake_vcpu_check_requests)(struct vcpu *v);

/* A kick arrived at core `cpu` and waits in its file (sip.SEIP), not taken yet. */
void fake_kick_pending(unsigned cpu);

/* The vCPU on `cpu` traps (riscv_guest_trap) with these CSRs; its registers in fake_guest_regs(cpu). */
enum fake_exit fake_rv_trap(unsigned cpu, uint64_t scause, uint64_t stval, uint64_t htval,
			    uint64_t htinst);

#endif
