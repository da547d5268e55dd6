/* SPDX-License-Identifier: MIT */
#ifndef ARCH_SYSREG_H
#define ARCH_SYSREG_H

/* ESR_ELx exception classes (also used by vectors.S) */
#define EC_UNKNOWN   0x00
#define EC_WFX       0x01
#define EC_CP15_32   0x03    /* AArch32 MCR/MRC, CP15 */
#define EC_CP15_64   0x04    /* AArch32 MCRR/MRRC, CP15 */
#define EC_CP14_32   0x05
#define EC_CP14_LS   0x06
#define EC_CP14_64   0x0c
#define EC_HVC64     0x16
#define EC_SMC64     0x17
#define EC_SYSREG    0x18
#define EC_IABT_LOW  0x20
#define EC_IABT_CUR  0x21
#define EC_DABT_LOW  0x24
#define EC_DABT_CUR  0x25

/*
 * ESR_EL2.ISS of a trapped system register access (EC_SYSREG): Op0 [21:20], Op2 [19:17],
 * Op1 [16:14], CRn [13:10], Rt [9:5], CRm [4:1], direction [0] (1 = read).
 */
#define SYSREG_ISS(op0, op1, crn, crm, op2) \
	(((op0) << 20) | ((op2) << 17) | ((op1) << 14) | ((crn) << 10) | ((crm) << 1))
#define SYSREG_ISS_MASK   0x3ffc1e    /* the register, without Rt and the direction */
/* The same split in two masks an AND instruction can encode, for vectors.S. */
#define ISS_SYSREG_ID_HI_MASK 0x3ffc00 /* Op0, Op2, Op1, CRn */
#define ISS_SYSREG_ID_LO_MASK 0x1f     /* CRm and the direction */
#define ISS_ICC_SGI1R     SYSREG_ISS(3, 0, 12, 11, 5)
#define ISS_ICC_SGI1R_HI  (ISS_ICC_SGI1R & ISS_SYSREG_ID_HI_MASK)
#define ISS_ICC_SGI1R_LO  (ISS_ICC_SGI1R & ISS_SYSREG_ID_LO_MASK) /* a write */
#define ISS_ICC_ASGI1R    SYSREG_ISS(3, 0, 12, 11, 6)
#define ISS_ICC_SGI0R     SYSREG_ISS(3, 0, 12, 11, 7)

/*
 * ESR_EL2.ISS of a data abort, the bits vectors.S's doorbell path tests: ISV [24] and SAS
 * [23:22] together (a syndrome for a 32-bit access: 0b110), SRT [20:16], FnV [10], CM [8],
 * S1PTW [7], WnR [6].
 */
#define ISS_DABT_ISV_SAS_SHIFT 22
#define ISS_DABT_ISV_WORD  6
#define ISS_DABT_SRT_SHIFT 16
#define ISS_DABT_FNV_BIT   10
#define ISS_DABT_CM_BIT    8
#define ISS_DABT_S1PTW_BIT 7
#define ISS_DABT_WNR_BIT   6

#ifndef __ASSEMBLER__
#include <tern/types.h>

#define ESR_EC(esr)  (((esr) >> 26) & 0x3f)
#define ESR_IL       BIT(25)

#ifdef TERN_HOST
/*
 * Host tests and fuzzers (tests/unit/fake): system registers are named cells of the fake
 * core the test acts as, barriers and WFI are recorded.  Never defined for the hypervisor.
 */
uint64_t fake_read_sysreg(const char *name);
void fake_write_sysreg(const char *name, uint64_t value);
void fake_barrier(const char *what);
#define read_sysreg(reg) fake_read_sysreg(#reg)
#define write_sysreg(reg, v) fake_write_sysreg(#reg, (uint64_t)(v))
#define isb() fake_barrier("isb")
#define dsb(opt) fake_barrier("dsb " #opt)
#define wfi() fake_barrier("wfi")
#define tlbi_vmalle1() fake_barrier("tlbi vmalle1")
#else
/* Through a second macro, so a register named by its encoding (below) is spelt out. */
#define SYSREG_STR(reg) #reg
#define read_sysreg(reg) ({                                        \
	uint64_t __v;                                               \
	__asm__ volatile("mrs %0, " SYSREG_STR(reg) : "=r"(__v));   \
	__v;                                                        \
})

#define write_sysreg(reg, v) do {                                  \
	uint64_t __v = (uint64_t)(v);                               \
	__asm__ volatile("msr " SYSREG_STR(reg) ", %0" : : "r"(__v) : "memory"); \
} while (0)

#define isb() __asm__ volatile("isb" : : : "memory")
#define dsb(opt) __asm__ volatile("dsb " #opt : : : "memory")
#define wfi() __asm__ volatile("wfi" : : : "memory")
/* This core's EL1&0 stage-1 entries of the VMID in VTTBR_EL2, completed here before it goes on. */
#define tlbi_vmalle1() __asm__ volatile("tlbi vmalle1\n\tdsb nsh" : : : "memory")
#endif

/* HCR_EL2 */
#define HCR_VM   BIT(0)
#define HCR_SWIO BIT(1)
#define HCR_FMO  BIT(3)
#define HCR_IMO  BIT(4)
#define HCR_AMO  BIT(5)
#define HCR_TWI  BIT(13)
#define HCR_TWE  BIT(14)
#define HCR_TSC  BIT(19)
#define HCR_TSW  BIT(22)
#define HCR_TIDCP BIT(20)
#define HCR_RW   BIT(31)
#define HCR_APK  BIT(40)
#define HCR_API  BIT(41)

/*
 * CPTR_EL2 (HCR_EL2.E2H = 0): RES1 bits, and the traps a core without the feature has as
 * RES1 too: TZ (SVE), TSM (SME).  FP/SIMD (TFP) is never trapped.
 */
#define CPTR_EL2_RES1 0x22ffu
#define CPTR_EL2_TZ   BIT(8)
#define CPTR_EL2_TSM  BIT(12)

/* ID register fields (4 bits each) that say what a guest may use beyond FP/SIMD. */
#define ID_FIELD(reg, shift)   (((reg) >> (shift)) & 0xfu)
#define ID_AA64PFR0_SVE        32
#define ID_AA64PFR1_SME        24
#define ID_AA64ISAR1_APA       4
#define ID_AA64ISAR1_API       8
#define ID_AA64ISAR1_GPA       24
#define ID_AA64ISAR1_GPI       28
#define ID_AA64ISAR2_GPA3      8
#define ID_AA64ISAR2_APA3      12
#define ID_AA64SMFR0_SMEVER    56
#define ID_AA64SMFR0_FA64      BIT(63)

/* ZCR_EL2/SMCR_EL2: LEN all ones asks for the longest vector the core has. */
#define ZCR_LEN_MAX   0xfu
#define SMCR_EZT0     BIT(30)
#define SMCR_FA64     BIT(31)

/*
 * Registers the assembler knows only with SVE, SME or pointer authentication enabled, by
 * their encodings (the hypervisor is built for the base architecture).
 */
#define id_aa64isar2_el1 S3_0_C0_C6_2
#define id_aa64smfr0_el1 S3_0_C0_C4_5
#define zcr_el1       S3_0_C1_C2_0
#define zcr_el2       S3_4_C1_C2_0
#define smcr_el1      S3_0_C1_C2_6
#define smcr_el2      S3_4_C1_C2_6
#define smpri_el1     S3_0_C1_C2_4
#define svcr          S3_3_C4_C2_2
#define tpidr2_el0    S3_3_C13_C0_5
#define apiakeylo_el1 S3_0_C2_C1_0
#define apiakeyhi_el1 S3_0_C2_C1_1
#define apibkeylo_el1 S3_0_C2_C1_2
#define apibkeyhi_el1 S3_0_C2_C1_3
#define apdakeylo_el1 S3_0_C2_C2_0
#define apdakeyhi_el1 S3_0_C2_C2_1
#define apdbkeylo_el1 S3_0_C2_C2_2
#define apdbkeyhi_el1 S3_0_C2_C2_3
#define apgakeylo_el1 S3_0_C2_C3_0
#define apgakeyhi_el1 S3_0_C2_C3_1


#define CNTHP_CTL_ENABLE BIT(0)
/* CNTV_CTL_EL0, CNTP_CTL_EL0: the guest's timers. */
#define CNT_CTL_ENABLE   BIT(0)
#define CNT_CTL_IMASK    BIT(1)
#define CNT_CTL_ISTATUS  BIT(2)

/* GICv3 CPU interface and hypervisor control */
#define ICC_SRE_SRE    BIT(0)
#define ICC_SRE_ENABLE BIT(3)
#define ICC_CTLR_EOIMODE BIT(1)
#define ICH_HCR_EN     BIT(0)
#define ICH_HCR_UIE    BIT(1)
#define ICH_HCR_NPIE   BIT(3)

#define ICH_LR_STATE_SHIFT 62
#define ICH_LR_PENDING BIT(62)
#define ICH_LR_ACTIVE  BIT(63)
#define ICH_LR_HW      BIT(61)
#define ICH_LR_GROUP1  BIT(60)
#define ICH_LR_PRIO_SHIFT 48
#define ICH_LR_PINTID_SHIFT 32
#define ICH_LR_VINTID_MASK 0xffffffffull

#endif /* __ASSEMBLER__ */

#endif
