/* PSCI 0.2+ calls over the conduit named by the device tree's /psci "method". */
#ifndef GUEST_PSCI_H
#define GUEST_PSCI_H

#include <stdbool.h>
#include <stdint.h>

#define PSCI_VERSION            0x84000000u
#define PSCI_CPU_OFF            0x84000002u
#define PSCI_CPU_ON             0xC4000003u
#define PSCI_AFFINITY_INFO      0xC4000004u
#define PSCI_SYSTEM_OFF         0x84000008u
#define PSCI_SYSTEM_RESET       0x84000009u
#define PSCI_FEATURES           0x8400000Au

#define PSCI_SUCCESS            0
#define PSCI_NOT_SUPPORTED      (-1)
#define PSCI_INVALID_PARAMS     (-2)
#define PSCI_DENIED             (-3)
#define PSCI_ALREADY_ON         (-4)

#define PSCI_AFFINITY_ON        0
#define PSCI_AFFINITY_OFF       1
#define PSCI_AFFINITY_PENDING   2

void psci_init(void);
bool psci_uses_hvc(void);

/* An SMCCC call through HVC or SMC regardless of the conduit; the result is all of x0. */
uint64_t smccc_hvc(uint32_t function, uint64_t arg1, uint64_t arg2, uint64_t arg3);
uint64_t smccc_smc(uint32_t function, uint64_t arg1, uint64_t arg2, uint64_t arg3);

/* Any SMCCC call through the conduit; the result is the 32-bit status in w0. */
int32_t psci_call(uint32_t function, uint64_t arg1, uint64_t arg2, uint64_t arg3);

uint32_t psci_version(void);
int32_t psci_features(uint32_t function);
int32_t psci_cpu_on(uint64_t target_mpidr, uintptr_t entry, uint64_t context_id);
int32_t psci_cpu_off(void);
int32_t psci_affinity_info(uint64_t target_mpidr);
void psci_system_off(void) __attribute__((noreturn));

#endif
