/* SPDX-License-Identifier: MIT */
/*
 * PSCI 1.1 function IDs (SMC32 and SMC64 variants where both exist): what guests call
 * (traps.c), what the hypervisor calls of the firmware (cpu.c), and what the host tests send.
 */
#ifndef ARCH_PSCI_H
#define ARCH_PSCI_H

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

#endif
