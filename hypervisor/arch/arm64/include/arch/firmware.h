/* SPDX-License-Identifier: MIT */
/*
 * The firmware interface, PSCI 1.1 over SMCCC: what guests call (firmware.c), what the
 * hypervisor calls of the board's firmware (cpu.c), and what the host tests send.
 */
#ifndef ARCH_FIRMWARE_H
#define ARCH_FIRMWARE_H

#define PSCI_VERSION            0x84000000u
#define PSCI_CPU_OFF            0x84000002u
#define PSCI_CPU_ON_32          0x84000003u
#define PSCI_CPU_ON_64          0xc4000003u
#define PSCI_AFFINITY_INFO_32   0x84000004u
#define PSCI_AFFINITY_INFO_64   0xc4000004u
#define PSCI_MIGRATE_INFO_TYPE  0x84000006u
#define PSCI_SYSTEM_OFF         0x84000008u
#define PSCI_SYSTEM_RESET       0x84000009u
#define PSCI_FEATURES           0x8400000au

/* Results */
/*
 * A manager partition's calls (tern/manager.h): SMCCC fast calls, SMC64, of the Vendor
 * Specific Hypervisor Service range (owning entity 6).  Results in x0, PSCI's numbers where
 * one fits: a reply's length or 0, else NOT_SUPPORTED (-1), INVALID_PARAMETERS (-2), DENIED
 * (-3), BUSY (-4), NO_COMMAND (-8), INVALID_ADDRESS (-9).
 */
#define TERN_HC_SUBMIT          0xc6000000u
#define TERN_HC_REPLY           0xc6000001u
#define TERN_HC_BUSY            (-4)
#define TERN_HC_NO_COMMAND      (-8)

#define PSCI_SUCCESS            0
#define PSCI_NOT_SUPPORTED      (-1)
#define PSCI_INVALID_PARAMETERS (-2)
#define PSCI_DENIED             (-3)
#define PSCI_ALREADY_ON         (-4)
#define PSCI_INVALID_ADDRESS    (-9)
#define PSCI_MIGRATE_NOT_NEEDED 2          /* no Trusted OS to migrate */
#define AFFINITY_ON             0
#define AFFINITY_OFF            1
#define AFFINITY_ON_PENDING     2

#ifndef __ASSEMBLER__
#include <tern/types.h>

struct guest_regs;
struct vcpu;

/* A guest's SMCCC call (HVC or trapped SMC), answered in its registers (firmware.c). */
void arm64_handle_call(struct vcpu *v, struct guest_regs *r);

#ifndef TERN_HOST
/*
 * A call of the board's firmware (SMC), from EL2.  Inline, as it was in cpu.c: a call more
 * at each core's start would move every later instruction count (docs/benchmarks.md).  Host
 * tests stand in for the board's firmware (tests/unit/fake/arch.c).
 */
static inline uint64_t firmware_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	register uint64_t x0 __asm__("x0") = fn;
	register uint64_t x1 __asm__("x1") = a1;
	register uint64_t x2 __asm__("x2") = a2;
	register uint64_t x3 __asm__("x3") = a3;

	__asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
	return x0;
}
#endif
#endif

#endif
