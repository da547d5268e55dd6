/* SPDX-License-Identifier: MIT */
/*
 * Decoding what a trap's syndrome (ESR_EL2) says, with no hardware access: pure functions the
 * host tests and fuzzers call as they are.
 */
#ifndef ARCH_DECODE_H
#define ARCH_DECODE_H

#include <arch/sysreg.h>
#include <tern/types.h>

/* A data abort on an unmapped IPA, as the syndrome describes the access. */
struct esr_data_access {
	bool valid;                 /* ISV: the syndrome holds the access (not for pairs etc.) */
	bool write;
	unsigned size;              /* bytes: 1, 2, 4, 8 */
	unsigned rt;                /* register; 31 = XZR */
	bool sign_extend;           /* SSE: a narrower signed load */
	bool wide;                  /* SF: the register is 64 bits (else a W register) */
};

/* A trapped MSR/MRS (EC 0x18). */
struct esr_sysreg {
	uint32_t id;                /* Op0, Op2, Op1, CRn, CRm as SYSREG_ISS() packs them */
	unsigned rt;
	bool read;
};

#define ESR_ISS(esr)         ((uint32_t)(esr) & 0x1ffffffu)
#define ESR_IL_BIT           (1ULL << 25)
#define SPSR_T32             (1ULL << 5)

/* Every emulated access decodes its syndrome: inline, it is on the MMIO trap's path. */
static inline void esr_data_abort(uint64_t esr, struct esr_data_access *a)
{
	uint32_t iss = ESR_ISS(esr);

	a->valid = (iss >> 24) & 1;       /* ISV */
	a->write = (iss >> 6) & 1;        /* WnR */
	a->size = 1u << ((iss >> 22) & 3); /* SAS */
	a->rt = (iss >> 16) & 0x1f;       /* SRT */
	a->sign_extend = (iss >> 21) & 1; /* SSE */
	a->wide = (iss >> 15) & 1;        /* SF */
}

/* Bytes to step over the trapped instruction: 4 for A64 and A32, 2 for a 16-bit T32 one. */
static inline unsigned esr_insn_len(uint64_t esr)
{
	return (esr & ESR_IL_BIT) ? 4 : 2;
}

/* PSTATE after stepping over one T32 instruction inside an IT block (ITSTATE advances). */
uint64_t esr_advance_it_t32(uint64_t spsr);

static inline uint64_t esr_advance_it(uint64_t spsr)
{
	return (spsr & SPSR_T32) ? esr_advance_it_t32(spsr) : spsr;
}

/* The register value a load of `a` leaves in its register, from what the device returned. */
static inline uint64_t esr_load_value(const struct esr_data_access *a, uint64_t value)
{
	if (a->size < 8) {
		uint64_t mask = (1ULL << (a->size * 8)) - 1;
		value &= mask;
		if (a->sign_extend && (value >> (a->size * 8 - 1)) & 1)
			value |= ~mask;
	}
	return a->wide ? value : value & 0xffffffffULL;
}

static inline void esr_sysreg(uint64_t esr, struct esr_sysreg *s)
{
	uint32_t iss = ESR_ISS(esr);

	s->id = iss & SYSREG_ISS_MASK;
	s->rt = (iss >> 5) & 0x1f;
	s->read = iss & 1;
}
/*
 * A stage-2 abort (EC_DABT_LOW or EC_IABT_LOW) of an access to an IPA nothing is mapped at: a
 * translation or address size fault on the access itself. Not one on the guest's own table
 * walk (S1PTW) nor a permission fault: those are not a bus error on the board.
 */
bool esr_unmapped_access(uint64_t esr);

/*
 * The syndrome for the guest's EL1 of the synchronous external abort the board raises for
 * such an access (`esr`): its class from the exception level the guest was at (`from_el1`),
 * fault status 0x10, FAR valid, EA 0 (QEMU's virt reports a decode error so), and for data its
 * WnR and CM.
 */
uint64_t esr_external_abort(uint64_t esr, bool from_el1);

/*
 * A trapped AArch32 instruction whose condition failed must be stepped over, not carried
 * out: true if it passes (or is unconditional).  `spsr` is the interrupted PSTATE.
 */
bool esr_cond_passed(uint64_t esr, uint64_t spsr);

#endif
