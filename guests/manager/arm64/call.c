/* The manager calls on arm64: SMCCC fast calls (SMC64) of the Vendor Specific Hypervisor range. */
#include "../manager.h"
#include "psci.h"

#define TERN_HC_SUBMIT 0xc6000000u

long manager_call(unsigned fn, uint64_t addr, uint64_t len, uint64_t *value)
{
	/* The conduit PSCI uses: the device tree's, as for every other SMCCC call. */
	uint64_t x0 = psci_uses_hvc() ? smccc_hvc(TERN_HC_SUBMIT + fn, addr, len, 0)
				      : smccc_smc(TERN_HC_SUBMIT + fn, addr, len, 0);
	long ret = (long)x0;

	*value = ret >= 0 ? x0 : 0;
	return ret >= 0 ? 0 : ret;
}

const char *manager_error_name(long error)
{
	switch (error) {
	case 0:  return "ok";
	case -1: return "not_supported";
	case -2: return "invalid";
	case -3: return "denied";
	case -4: return "busy";
	case -8: return "no_command";
	case -9: return "invalid_address";
	default: return "?";
	}
}
