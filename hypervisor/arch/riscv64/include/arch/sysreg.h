/* SPDX-License-Identifier: MIT */
/*
 * Control and status registers.  Clang 14 knows neither the Sstc nor the AIA names, so those
 * go by number.
 */
#ifndef ARCH_SYSREG_H
#define ARCH_SYSREG_H

/* Plain numbers first, for the assembly too. */
#define CSR_STIMECMP  0x14d
#define CSR_VSTIMECMP 0x24d
#define CSR_HENVCFG   0x60a

#define CSR_HTINST    0x64a
#define CSR_HGEIE     0x607
#define CSR_HGEIP     0xe12   /* the guest files with an interrupt pending and enabled */
#define CSR_SISELECT  0x150   /* AIA: the hypervisor's own S-level interrupt file */
#define CSR_SIREG     0x151
#define CSR_STOPEI    0x15c   /* claims its highest pending identity */
#define CSR_VSISELECT 0x250   /* AIA: the guest interrupt file hstatus.VGEIN selects, from HS-mode */
#define CSR_VSIREG    0x251

/* AIA IMSIC registers reached through vsiselect/vsireg (AIA spec 3.8). */
#define IMSIC_EIDELIVERY  0x70
#define IMSIC_EITHRESHOLD 0x72
#define IMSIC_EIP0        0x80
#define IMSIC_EIE0        0xc0
#define IMSIC_EIX_BITS    32    /* identities an eipN/eieN register covers (RV64: N even, two at once) */

#ifndef __ASSEMBLER__
#include <tern/types.h>

#define SSTATUS_SPP   BIT(8)
#define SSTATUS_SIE   BIT(1)
#define SSTATUS_SPIE  BIT(5)
#define HSTATUS_SPV   BIT(7)   /* sret returns to a virtual (VS/VU) mode */
#define HSTATUS_SPVP  BIT(8)   /* ... to VS, the guest's supervisor mode */
#define HSTATUS_VTW   BIT(21)  /* the guest's WFI traps (a virtual instruction exception) */
#define HSTATUS_VGEIN_SHIFT 12 /* the guest interrupt file that is the guest's IMSIC file */
#define HSTATUS_VGEIN_MASK  (0x3fULL << HSTATUS_VGEIN_SHIFT)
#define HVIP_VSSIP    BIT(2)
#define HVIP_VSTIP    BIT(6)
#define HVIP_VSEIP    BIT(10)
#define HCOUNTEREN_CY_TM_IR 0x7u

/*
 * The guest's exceptions it handles itself, as an S-mode kernel on the bare board does:
 * misaligned fetch, illegal instruction (OpenSBI, which takes it first, hands it on to the
 * guest when hedeleg says so: a user program's SIGILL), breakpoint, its user's ecall and
 * page faults.
 */
#define HEDELEG_GUEST (BIT(0) | BIT(2) | BIT(3) | BIT(8) | BIT(12) | BIT(13) | BIT(15))
#define HIDELEG_GUEST (HVIP_VSSIP | HVIP_VSTIP | HVIP_VSEIP)

#define SCAUSE_IRQ        BIT(63)
#define IRQ_S_SOFT        1
#define IRQ_S_EXT         9
#define IRQ_S_TIMER       5
#define IRQ_S_GEXT        12  /* supervisor guest external: a guest file in hgeie has one */
#define EXC_INST_ACCESS        1
#define EXC_ILLEGAL_INSTRUCTION 2
#define EXC_LOAD_MISALIGNED    4
#define EXC_LOAD_ACCESS        5
#define EXC_STORE_MISALIGNED   6
#define EXC_STORE_ACCESS       7
#define EXC_VS_ECALL      10
#define EXC_INST_GUEST_PAGE_FAULT  20
#define EXC_LOAD_GUEST_PAGE_FAULT  21
#define EXC_VIRTUAL_INSTRUCTION    22
#define EXC_STORE_GUEST_PAGE_FAULT 23

#define SIE_SSIE  BIT(1)
#define SIE_SEIE  BIT(9)
#define SIE_STIE  BIT(5)
#define SIE_SGEIE BIT(12)
#define SIP_SSIP  BIT(1)
#define SIP_SEIP  BIT(9)
#define SIP_STIP  BIT(5)
#define INSN_WFI  0x10500073u
#define HENVCFG_STCE BIT(63)  /* the guest's stimecmp writes go to vstimecmp */

#define STR_(x) #x
#define STR(x) STR_(x)

#ifdef TERN_HOST
/*
 * Host tests and fuzzers (tests/unit/fake/riscv64): CSRs are cells of the fake core the test
 * acts as, named as written here ("vsstatus", "0x64a"); the instructions below are recorded.
 * Never defined for the hypervisor.
 */
uint64_t fake_csr_read(const char *csr);
void fake_csr_write(const char *csr, uint64_t value);
void fake_csr_set(const char *csr, uint64_t bits);
void fake_csr_clear(const char *csr, uint64_t bits);
uint64_t fake_csr_swap(const char *csr, uint64_t value);
void fake_insn(const char *what);
#define csr_read(csr) fake_csr_read(STR(csr))
#define csr_write(csr, val) fake_csr_write(STR(csr), (uint64_t)(val))
#define csr_set(csr, bits) fake_csr_set(STR(csr), (uint64_t)(bits))
#define csr_swap(csr, val) fake_csr_swap(STR(csr), (uint64_t)(val))
#define csr_clear(csr, bits) fake_csr_clear(STR(csr), (uint64_t)(bits))
#define hfence_gvma_all() fake_insn("hfence.gvma")
#define hfence_vvma_all() fake_insn("hfence.vvma")
#define fence_rw_rw() fake_insn("fence rw, rw")
#define wfi() fake_insn("wfi")
#else
#define csr_read(csr) ({ uint64_t v_; __asm__ volatile("csrr %0, " STR(csr) : "=r"(v_)); v_; })
#define csr_write(csr, val) __asm__ volatile("csrw " STR(csr) ", %0" : : "rK"((uint64_t)(val)) : "memory")
#define csr_set(csr, bits) __asm__ volatile("csrs " STR(csr) ", %0" : : "rK"((uint64_t)(bits)) : "memory")
#define csr_swap(csr, val) ({ uint64_t v_; __asm__ volatile("csrrw %0, " STR(csr) ", %1" : "=r"(v_) : "rK"((uint64_t)(val)) : "memory"); v_; })
#define csr_clear(csr, bits) __asm__ volatile("csrc " STR(csr) ", %0" : : "rK"((uint64_t)(bits)) : "memory")
/* Every guest translation of this core's VMIDs dropped, then its instruction fetches. */
#define hfence_gvma_all() __asm__ volatile(".word 0x62000073\n\tfence.i" ::: "memory") /* HFENCE.GVMA zero, zero */
/* The current guest's (VS-stage) translations dropped, then its instruction fetches. */
#define hfence_vvma_all() __asm__ volatile(".word 0x22000073\n\tfence.i" ::: "memory") /* HFENCE.VVMA zero, zero */
#define fence_rw_rw() __asm__ volatile("fence rw, rw" ::: "memory")
#define wfi() __asm__ volatile("wfi" ::: "memory")
#endif

#endif /* __ASSEMBLER__ */

#endif
