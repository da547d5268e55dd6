/* SPDX-License-Identifier: MIT */
/*
 * The board's APLIC (its supervisor-level domain, MSI delivery mode) belongs to the
 * hypervisor; each partition that owns wired sources gets a virtual one (aplic.c).
 */
#ifndef ARCH_APLIC_H
#define ARCH_APLIC_H

#include <tern/config_abi.h>
#include <tern/spinlock.h>
#include <tern/types.h>

#define APLIC_MAX_SOURCES 128u   /* sources 1..127; the board has platform.arch.aplic_num_sources */
#define APLIC_WORDS       (APLIC_MAX_SOURCES / 32u)
/* A domain's registers up to the last core's interrupt delivery control (32 bytes each from 0x4000). */
#define APLIC_DOMAIN_SIZE(harts) (0x4000u + 32u * (harts))

/*
 * The identities of the hypervisor's own S-level file on each core: KICK_ID (cpu.c), the
 * console's input, and one per wired source a trap-and-emulate partition owns.
 */
#define EIID_CONSOLE     2u
#define EIID_WIRED_BASE  32u     /* source s arrives as EIID_WIRED_BASE + s */

struct vcpu;
struct partition;

/* One partition's APLIC, as its guest programs it. */
/* A vCPU's interrupt delivery control (direct delivery mode); struct vcpu.arch holds it. */
struct vaplic_idc {
	uint32_t idelivery;
	uint32_t iforce;
	uint32_t ithreshold;
};

struct vaplic {
	struct spinlock lock;                 /* the partition's own vCPUs and cores only */
	uint32_t owned[APLIC_WORDS];          /* its sources: fixed once it is built */
	uint32_t level[APLIC_WORDS];          /* of those, configured level-sensitive */
	uint32_t enabled[APLIC_WORDS];
	_Atomic uint32_t pending[APLIC_WORDS]; /* direct delivery mode: edge sources' pending bits */
	uint32_t sourcecfg[APLIC_MAX_SOURCES];
	uint32_t target[APLIC_MAX_SOURCES];   /* as the guest wrote it */
	uint32_t genmsi;
	bool domain_ie;
};

/* The board's domain on: MSI delivery, every source inactive. */
void aplic_init(void);
/* Claimed identity `eiid` (>= EIID_WIRED_BASE) of this core's file: a trapping partition's source. */
void vaplic_host_interrupt(uint32_t eiid);
/* Raise or drop the vCPU's VSEIP from its partition's virtual APLIC; on the vCPU's own core. */
void vaplic_update(struct vcpu *v);
/* The console's input source arrived and was drained: send it again if the line is still high. */
void aplic_console_retrigger(void);

#endif
