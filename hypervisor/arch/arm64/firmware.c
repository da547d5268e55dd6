/* SPDX-License-Identifier: MIT */
/* The firmware interface a guest calls: PSCI over SMCCC (the board's own: arch/firmware.h). */
#include <arch/cpu.h>
#include <arch/firmware.h>
#include <tern/manager.h>
#include <tern/partition.h>

static bool psci_supported(uint32_t fn)
{
	switch (fn) {
	case PSCI_VERSION: case PSCI_CPU_OFF: case PSCI_CPU_ON_32: case PSCI_CPU_ON_64:
	case PSCI_AFFINITY_INFO_32: case PSCI_AFFINITY_INFO_64: case PSCI_MIGRATE_INFO_TYPE:
	case PSCI_SYSTEM_OFF: case PSCI_SYSTEM_RESET: case PSCI_FEATURES:
		return true;
	default:
		return false;
	}
}

/*
 * The vCPU an MPIDR names: vCPU i is Aff0 = i, higher affinity levels zero.  Anything else is
 * outside the partition: counted, and -1.
 */
static int target_vcpu(struct vcpu *caller, uint64_t mpidr)
{
	uint64_t index = mpidr & 0xff;

	if ((mpidr & 0xff00ffff00ULL) || index >= caller->partition->num_vcpus) {
		vcpu_count(caller, STAT_PSCI_DENIED);
		return -1;
	}
	return (int)index;
}

static int64_t psci_cpu_on(struct vcpu *v, uint64_t mpidr, uint64_t entry, uint64_t context)
{
	int target = target_vcpu(v, mpidr);

	if (target < 0)
		return PSCI_INVALID_PARAMETERS;
	switch (vcpu_cpu_on(v, (uint32_t)target, entry, context)) {
	case POWER_OK:              return PSCI_SUCCESS;
	/* A core still starting is already on for QEMU's firmware and KVM alike: never ON_PENDING. */
	case POWER_ALREADY_ON:
	case POWER_ON_PENDING:      return PSCI_ALREADY_ON;
	case POWER_INVALID_ADDRESS: return PSCI_INVALID_ADDRESS;
	case POWER_DENIED:
	default:                    return PSCI_DENIED;
	}
}

static int64_t psci_affinity_info(struct vcpu *v, uint64_t mpidr, uint64_t level)
{
	int target = target_vcpu(v, mpidr);

	if (target < 0 || level != 0)
		return PSCI_INVALID_PARAMETERS;
	switch (vcpu_power_of(v, (uint32_t)target)) {
	case VCPU_ON:         return AFFINITY_ON;
	case VCPU_ON_PENDING: return AFFINITY_ON_PENDING;
	case VCPU_OFF:
	default:              return AFFINITY_OFF;
	}
}

/* A manager call's result in x0: `ok` (0 or a reply's length) or its error. */
static int64_t manager_result(enum manager_result res, uint64_t ok)
{
	switch (res) {
	case MANAGER_OK:          return (int64_t)ok;
	case MANAGER_DENIED:      return PSCI_DENIED;
	case MANAGER_INVALID:     return PSCI_INVALID_PARAMETERS;
	case MANAGER_BAD_ADDRESS: return PSCI_INVALID_ADDRESS;
	case MANAGER_BUSY:        return TERN_HC_BUSY;
	case MANAGER_NO_COMMAND:
	default:                  return TERN_HC_NO_COMMAND;
	}
}

/* SMCCC call through HVC or SMC: PSCI on the caller's partition; anything else is not supported. */
void arm64_handle_call(struct vcpu *v, struct guest_regs *r)
{
	uint32_t fn = (uint32_t)r->x[0];
	bool smc32 = !(fn & BIT(30));
	uint64_t a1 = smc32 ? (uint32_t)r->x[1] : r->x[1];
	uint64_t a2 = smc32 ? (uint32_t)r->x[2] : r->x[2];
	uint64_t a3 = smc32 ? (uint32_t)r->x[3] : r->x[3];
	int64_t ret;

	switch (fn) {
	case PSCI_VERSION:
		ret = 0x10001; /* 1.1, the board's (QEMU 7.2); what 1.1 adds it does not have either */
		break;
	case PSCI_CPU_ON_32:
	case PSCI_CPU_ON_64:
		ret = psci_cpu_on(v, a1, a2, a3);
		break;
	case PSCI_AFFINITY_INFO_32:
	case PSCI_AFFINITY_INFO_64:
		ret = psci_affinity_info(v, a1, a2);
		break;
	case PSCI_MIGRATE_INFO_TYPE:
		ret = PSCI_MIGRATE_NOT_NEEDED;
		break;
	case PSCI_FEATURES:
		ret = psci_supported((uint32_t)a1) ? 0 : PSCI_NOT_SUPPORTED;
		break;
	case TERN_HC_SUBMIT:
		vcpu_count(v, STAT_MANAGER_CALL);
		ret = manager_result(manager_submit(v, a1, a2), 0);
		break;
	case TERN_HC_REPLY: {
		uint64_t full;
		vcpu_count(v, STAT_MANAGER_CALL);
		enum manager_result res = manager_reply(v, a1, a2, &full);
		ret = manager_result(res, full);
		break;
	}
	case PSCI_CPU_OFF:
		vcpu_cpu_off(v);
	/* cppcheck-suppress misra-c2012-16.3 ; vcpu_cpu_off() does not return */
	case PSCI_SYSTEM_OFF:
		partition_system_off(v);
	/* cppcheck-suppress misra-c2012-16.3 ; partition_system_off() does not return */
	case PSCI_SYSTEM_RESET:
		partition_system_reset(v);
	/* cppcheck-suppress misra-c2012-16.3 ; partition_system_reset() does not return */
	default:
		ret = PSCI_NOT_SUPPORTED;
		break;
	}
	r->x[0] = (uint64_t)ret;
}
