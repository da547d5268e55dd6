/* SPDX-License-Identifier: MIT */
/* The riscv64 tests' board (fake/riscv64) and how its guests trap: SBI calls, MMIO. */
#ifndef TERN_TEST_RV_H
#define TERN_TEST_RV_H

#include <arch/cpu.h>
#include <arch/imsic.h>
#include <arch/sysreg.h>
#include <arch/partition.h>
#include <tern/config_abi.h>
#include <tern/partition.h>
#include "fake_riscv64.h"

/*
 * The standard board: 6 harts.  "trap" (trap-and-emulate, APLIC sources 35 and 37) has its
 * vCPUs on harts 1 and 2, "direct" (trap-less, source 36) on harts 3 and 4, "none" (no
 * source) on hart 5.  Hart 0 is nobody's: the console core.
 */
#define RV_TRAP   0u
#define RV_DIRECT 1u
#define RV_NONE   2u
enum fake_exit rv_boot(void);
struct partition *rv_part(uint32_t index);

/* The SBI's extension IDs and errors. */
#define SBI_BASE   0x10u
#define SBI_TIME   0x54494d45u
#define SBI_IPI    0x735049u
#define SBI_RFENCE 0x52464e43u
#define SBI_HSM    0x48534du
#define SBI_SRST   0x53525354u
#define SBI_DBCN   0x4442434eu
#define SBI_ERR_NOT_SUPPORTED     ((uint64_t)-2)
#define SBI_ERR_INVALID_PARAM     ((uint64_t)-3)
#define SBI_ERR_INVALID_ADDRESS   ((uint64_t)-5)
#define SBI_ERR_ALREADY_AVAILABLE ((uint64_t)-6)

/* The vCPU on `cpu` calls the SBI (ecall): a0..a2, a6 = fn, a7 = ext; its a0 and a1 after. */
enum fake_exit sbi(unsigned cpu, uint64_t ext, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2);
uint64_t a0_of(unsigned cpu);
uint64_t a1_of(unsigned cpu);

/* The vCPU on `cpu` loads (lw a0) or stores (sw a0) a word at `gpa`, as htinst reports it. */
enum fake_exit rv_load(unsigned cpu, uint64_t gpa);
enum fake_exit rv_store(unsigned cpu, uint64_t gpa, uint32_t value);
/* Its APLIC's register at `offset`: what the load gave (a0). */
uint32_t vaplic_read(unsigned cpu, uint32_t offset);
void vaplic_write(unsigned cpu, uint32_t offset, uint32_t value);
/* A counter of the vCPU on `cpu`. */
uint64_t stat_of(unsigned cpu, enum stat_id id);
/* The board UART shows `text`. */
bool rv_console_has(const char *text);

#endif
