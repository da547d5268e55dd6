/* SPDX-License-Identifier: MIT */
#ifndef TERN_CONFIG_H
#define TERN_CONFIG_H

#include <tern/config_abi.h>

/* A range of board addresses. */
struct config_range {
	uint64_t base;
	uint64_t size;
};

#define CONFIG_MAX_EMULATED 4u

struct config_limits {
	uint32_t max_cpus;      /* cores the hypervisor supports on this board */
	paddr_t reserved_lo;    /* hypervisor-owned RAM no partition may use */
	paddr_t reserved_hi;
	ipaddr_t ram_ipa;       /* the board RAM base every partition sees */
	uint64_t ipa_limit;     /* stage-2 input range */
	/* Pass-through device regions must lie inside this (the board's device window, never RAM) ... */
	struct config_range device_window;
	/* ... and outside what the hypervisor emulates or keeps (GIC, its console UART, SMMU). */
	struct config_range emulated[CONFIG_MAX_EMULATED];
	uint32_t max_intid;     /* pass-through SPIs are INTIDs 32..max_intid */
	uint32_t hyp_intid;     /* an SPI the hypervisor keeps (its console UART's) */
};

/*
 * Check a config blob of `avail` bytes.  Returns 0, or -1 with a one-line
 * reason (naming the partition and field) in `err`.
 */
int config_validate(const struct tern_config *cfg, size_t avail,
		    const struct config_limits *lim, char *err, size_t errlen);

#endif
