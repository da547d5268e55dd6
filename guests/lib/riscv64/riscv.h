/*
 * Thin wrappers around what C cannot express on RV64 in S-mode: CSRs, MMIO, WFI and the
 * hart's identity. CSRs go by number: clang 14's assembler lacks the names of the Sstc and
 * AIA ones (stimecmp, siselect, sireg, stopei).
 */
#ifndef GUEST_RISCV_H
#define GUEST_RISCV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"

#define CSR_SSTATUS     0x100
#define CSR_SIE         0x104
#define CSR_STVEC       0x105
#define CSR_SSCRATCH    0x140
#define CSR_SEPC        0x141
#define CSR_SCAUSE      0x142
#define CSR_STVAL       0x143
#define CSR_SIP         0x144
#define CSR_STIMECMP    0x14d           /* Sstc */
#define CSR_SISELECT    0x150           /* Ssaia: indirect access to the IMSIC file */
#define CSR_SIREG       0x151
#define CSR_STOPEI      0x15c
#define CSR_CYCLE       0xc00
#define CSR_TIME        0xc01

#define SSTATUS_SIE     (1UL << 1)

/* Interrupt causes (scause with bit 63 set) and their sie/sip bits. */
#define IRQ_S_SOFT      1
#define IRQ_S_TIMER     5
#define IRQ_S_EXT       9
#define SIP_SSIP        (1UL << IRQ_S_SOFT)
#define SIP_STIP        (1UL << IRQ_S_TIMER)
#define SIP_SEIP        (1UL << IRQ_S_EXT)
#define SCAUSE_IRQ      (1UL << 63)

#define CSR_STR_(x)     #x
#define CSR_STR(x)      CSR_STR_(x)

#define csr_read(csr) ({                                                \
	uint64_t val_;                                                  \
	__asm__ volatile("csrr %0, " CSR_STR(csr) : "=r"(val_) : : "memory"); \
	val_;                                                           \
})

#define csr_write(csr, val) \
	__asm__ volatile("csrw " CSR_STR(csr) ", %0" : : "r"((uint64_t)(val)) : "memory")

#define csr_set(csr, bits) \
	__asm__ volatile("csrs " CSR_STR(csr) ", %0" : : "r"((uint64_t)(bits)) : "memory")

#define csr_clear(csr, bits) \
	__asm__ volatile("csrc " CSR_STR(csr) ", %0" : : "r"((uint64_t)(bits)) : "memory")

#define csr_swap(csr, val) ({                                           \
	uint64_t old_;                                                  \
	__asm__ volatile("csrrw %0, " CSR_STR(csr) ", %1"               \
			 : "=r"(old_) : "r"((uint64_t)(val)) : "memory");  \
	old_;                                                           \
})

/* Orders this hart's memory and device accesses before the ones after it. */
static inline void mb(void) { __asm__ volatile("fence iorw, iorw" : : : "memory"); }
static inline void wfi(void) { __asm__ volatile("wfi" : : : "memory"); }

/*
 * PAUSE (Zihintpause), spelt as its FENCE encoding for assemblers that lack the name; a no-op
 * where the extension is absent.
 */
static inline void cpu_relax(void) { __asm__ volatile(".4byte 0x0100000f" : : : "memory"); }

static inline void irq_enable(void) { csr_set(CSR_SSTATUS, SSTATUS_SIE); }
static inline void irq_disable(void) { csr_clear(CSR_SSTATUS, SSTATUS_SIE); }

/*
 * MMIO as plain 32-bit instructions with a zero offset (never compressed), so that a
 * hypervisor emulating the access sees one simple load or store.
 */
static inline uint32_t mmio_read32(uintptr_t addr)
{
	uint32_t val;
	__asm__ volatile(".option push\n\t.option norvc\n\tlw %0, 0(%1)\n\t.option pop"
			 : "=r"(val) : "r"(addr) : "memory");
	return val;
}

static inline void mmio_write32(uintptr_t addr, uint32_t val)
{
	__asm__ volatile(".option push\n\t.option norvc\n\tsw %0, 0(%1)\n\t.option pop"
			 : : "r"(val), "r"(addr) : "memory");
}

static inline uint8_t mmio_read8(uintptr_t addr)
{
	uint32_t val;
	__asm__ volatile(".option push\n\t.option norvc\n\tlbu %0, 0(%1)\n\t.option pop"
			 : "=r"(val) : "r"(addr) : "memory");
	return (uint8_t)val;
}

static inline void mmio_write8(uintptr_t addr, uint8_t val)
{
	__asm__ volatile(".option push\n\t.option norvc\n\tsb %0, 0(%1)\n\t.option pop"
			 : : "r"((uint32_t)val), "r"(addr) : "memory");
}

/* start.S keeps the hart id in tp: S-mode has no CSR that holds it. */
static inline unsigned cpu_index(void)
{
	uint64_t hart;
	__asm__("mv %0, tp" : "=r"(hart));
	return (unsigned)hart;
}

#endif
