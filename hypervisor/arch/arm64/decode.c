/* SPDX-License-Identifier: MIT */
/* ESR_EL2 syndromes (Arm ARM D17.2.37 ESR_EL2, ISS encodings per exception class). */
#include <arch/decode.h>
#include <arch/sysreg.h>

#define ISS(esr)            ESR_ISS(esr)
#define COND_CV             BIT(24)
#define COND(iss)           (((iss) >> 20) & 0xf)
#define PSTATE_T            SPSR_T32
#define PSTATE_NZCV(spsr)   (((spsr) >> 28) & 0xf)
#define N_FLAG 8u
#define Z_FLAG 4u
#define C_FLAG 2u
#define V_FLAG 1u

/* The IT block's condition for the current instruction, or 0xe outside one. */
static uint32_t it_cond(uint64_t spsr)
{
	uint32_t it = (uint32_t)(((spsr >> 8) & 0xfc) | ((spsr >> 25) & 3));

	return (it & 0xf) ? it >> 4 : 0xe;
}

static bool cond_holds(uint32_t cond, uint32_t nzcv)
{
	bool n = (nzcv & N_FLAG) != 0;
	bool z = (nzcv & Z_FLAG) != 0;
	bool c = (nzcv & C_FLAG) != 0;
	bool v = (nzcv & V_FLAG) != 0;
	bool result;

	switch (cond >> 1) {
	case 0: result = z; break;                  /* EQ / NE */
	case 1: result = c; break;                  /* CS / CC */
	case 2: result = n; break;                  /* MI / PL */
	case 3: result = v; break;                  /* VS / VC */
	case 4: result = c && !z; break;            /* HI / LS */
	case 5: result = n == v; break;             /* GE / LT */
	case 6: result = n == v && !z; break;       /* GT / LE */
	default: return true;                       /* AL, and 0b1111 (unconditional) */
	}
	return (cond & 1) ? !result : result;
}

bool esr_cond_passed(uint64_t esr, uint64_t spsr)
{
	uint32_t iss = ISS(esr);
	/* Without CV the syndrome has no condition: for T32 it is the IT block's. */
	uint32_t cond = (iss & COND_CV) ? COND(iss) : (spsr & PSTATE_T) ? it_cond(spsr) : 0xe;

	return cond_holds(cond, (uint32_t)PSTATE_NZCV(spsr));
}

uint64_t esr_advance_it_t32(uint64_t spsr)
{
	uint32_t it = (uint32_t)(((spsr >> 8) & 0xfc) | ((spsr >> 25) & 3));

	if (!(spsr & PSTATE_T) || !(it & 0xf))
		return spsr;
	/* ITAdvance(): the mask shifts; once empty the block is over. */
	it = (it & 7) == 0 ? 0 : (it & 0xe0) | ((it << 1) & 0x1f);
	spsr &= ~((0xfcULL << 8) | (3ULL << 25));
	return spsr | ((uint64_t)(it & 0xfc) << 8) | ((uint64_t)(it & 3) << 25);
}

#define FSC(iss)            ((iss) & 0x3fu)
#define FSC_LEVEL_MASK      0x3cu        /* the status without its level */
#define FSC_ADDRESS_SIZE    0x00u
#define FSC_TRANSLATION     0x04u
#define FSC_EXTERNAL        0x10u
#define ISS_S1PTW           BIT(7)
#define ISS_CM              BIT(8)
#define ISS_WNR             BIT(6)

bool esr_unmapped_access(uint64_t esr)
{
	uint32_t fsc = FSC(ISS(esr)) & FSC_LEVEL_MASK;

	return !(ISS(esr) & ISS_S1PTW) && (fsc == FSC_TRANSLATION || fsc == FSC_ADDRESS_SIZE);
}

uint64_t esr_external_abort(uint64_t esr, bool from_el1)
{
	bool data = ESR_EC(esr) == EC_DABT_LOW;
	uint64_t ec = data ? (from_el1 ? (uint64_t)EC_DABT_CUR : (uint64_t)EC_DABT_LOW) :
			     (from_el1 ? (uint64_t)EC_IABT_CUR : (uint64_t)EC_IABT_LOW);
	/* IL is 1 for an instruction abort and for a data abort without a valid ISS. */
	uint64_t out = (ec << 26) | ESR_IL | FSC_EXTERNAL;

	if (data)
		out |= esr & (ISS_WNR | ISS_CM);
	return out;
}
