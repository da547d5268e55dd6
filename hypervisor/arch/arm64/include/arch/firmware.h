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

/* A call of the board's firmware (SMC), from EL2. */
uint64_t firmware_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);
/* A guest's SMCCC call (HVC or trapped SMC), answered in its registers. */
void arm64_handle_call(struct vcpu *v, struct guest_regs *r);
#endif

#endif
