/* The manager calls on riscv64: Tern's SBI extension in the Firmware Specific range. */
#include "../manager.h"
#include "sbi.h"

#define SBI_EXT_TERN_MANAGER 0x0a54524eu

long manager_call(unsigned fn, uint64_t addr, uint64_t len, uint64_t *value)
{
	struct sbiret r = sbi_call(SBI_EXT_TERN_MANAGER, fn, addr, len, 0);

	*value = r.error ? 0 : (uint64_t)r.value;
	return r.error;
}

const char *manager_error_name(long error)
{
	switch (error) {
	case 0:   return "ok";
	case -2:  return "not_supported";
	case -3:  return "invalid";
	case -4:  return "denied";
	case -5:  return "invalid_address";
	case -7:  return "busy";
	case -10: return "no_command";
	default:  return "?";
	}
}
