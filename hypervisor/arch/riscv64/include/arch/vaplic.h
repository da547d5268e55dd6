/* SPDX-License-Identifier: MIT */
/* Each partition's virtual APLIC (vaplic.c): its state, embedded in struct arch_partition and struct arch_vcpu. */
#ifndef ARCH_VAPLIC_H
#define ARCH_VAPLIC_H

#include <tern/spinlock.h>
#include <tern/types.h>

#define APLIC_MAX_SOURCES 128u   /* sources 1..127; the board has platform.arch.aplic_num_sources */
#define APLIC_WORDS       (APLIC_MAX_SOURCES / 32u)

struct vcpu;

/* A vCPU's interrupt delivery control (direct delivery mode); struct vcpu.arch holds it. */
struct vaplic_idc {
	uint32_t idelivery;
	uint32_t iforce;
	uint32_t ithreshold;
};

/* One partition's APLIC, as its guest programs it. */
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

/* Claimed identity `eiid` (>= EIID_WIRED_BASE) of this core's file: a trapping partition's source. */
void vaplic_host_interrupt(uint32_t eiid);
/* Raise or drop the vCPU's VSEIP from its partition's virtual APLIC; on the vCPU's own core. */
void vaplic_update(struct vcpu *v);
/* Whether its virtual APLIC raises the vCPU's VSEIP now (what vaplic_update would set), from anywhere. */
bool vaplic_raised(const struct vcpu *v);

#endif
