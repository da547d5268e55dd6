#include "psci.h"

#include "arm64.h"
#include "fdt.h"

static bool use_hvc;

void psci_init(void)
{
	uint32_t len;
	const char *method = fdt_getprop("/psci", "method", &len);

	/* Anything but an explicit "hvc" keeps the firmware default, SMC. */
	use_hvc = method && len >= 4 && method[0] == 'h' && method[1] == 'v' &&
		  method[2] == 'c' && method[3] == '\0';
}

bool psci_uses_hvc(void)
{
	return use_hvc;
}

/* SMCCC lets the callee clobber x4-x17 as well as the argument registers. */
#define SMCCC_CALL(insn, function, arg1, arg2, arg3) ({                             \
	register uint64_t x0 __asm__("x0") = (function);                             \
	register uint64_t x1 __asm__("x1") = (arg1);                                 \
	register uint64_t x2 __asm__("x2") = (arg2);                                 \
	register uint64_t x3 __asm__("x3") = (arg3);                                 \
	__asm__ volatile(insn " #0"                                                  \
			 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)                    \
			 :                                                           \
			 : "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12",  \
			   "x13", "x14", "x15", "x16", "x17", "memory");             \
	x0;                                                                          \
})

uint64_t smccc_hvc(uint32_t function, uint64_t arg1, uint64_t arg2, uint64_t arg3)
{
	return SMCCC_CALL("hvc", function, arg1, arg2, arg3);
}

uint64_t smccc_smc(uint32_t function, uint64_t arg1, uint64_t arg2, uint64_t arg3)
{
	return SMCCC_CALL("smc", function, arg1, arg2, arg3);
}

int32_t psci_call(uint32_t function, uint64_t arg1, uint64_t arg2, uint64_t arg3)
{
	uint64_t x0 = use_hvc ? smccc_hvc(function, arg1, arg2, arg3)
			      : smccc_smc(function, arg1, arg2, arg3);
	return (int32_t)x0;
}

uint32_t psci_version(void)
{
	return (uint32_t)psci_call(PSCI_VERSION, 0, 0, 0);
}

int32_t psci_features(uint32_t function)
{
	return psci_call(PSCI_FEATURES, function, 0, 0);
}

int32_t psci_cpu_on(uint64_t target_mpidr, uintptr_t entry, uint64_t context_id)
{
	return psci_call(PSCI_CPU_ON, target_mpidr, entry, context_id);
}

int32_t psci_cpu_off(void)
{
	return psci_call(PSCI_CPU_OFF, 0, 0, 0);
}

int32_t psci_affinity_info(uint64_t target_mpidr)
{
	/* Lowest affinity level: the CPU itself. */
	return psci_call(PSCI_AFFINITY_INFO, target_mpidr, 0, 0);
}

void psci_system_off(void)
{
	psci_call(PSCI_SYSTEM_OFF, 0, 0, 0);
	/* Only reached if the call failed: stop here quietly. */
	irq_disable();
	for (;;)
		wfi();
}
