/* Thin wrappers around the instructions C cannot express. */
#ifndef GUEST_ARM64_H
#define GUEST_ARM64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"

#define read_sysreg(reg) ({                                             \
	uint64_t val_;                                                  \
	__asm__ volatile("mrs %0, " #reg : "=r"(val_));                 \
	val_;                                                           \
})

#define write_sysreg(reg, val) \
	__asm__ volatile("msr " #reg ", %0" : : "r"((uint64_t)(val)) : "memory")

static inline void isb(void) { __asm__ volatile("isb" : : : "memory"); }
static inline void dsb_sy(void) { __asm__ volatile("dsb sy" : : : "memory"); }
static inline void wfi(void) { __asm__ volatile("wfi" : : : "memory"); }
static inline void cpu_relax(void) { __asm__ volatile("yield" : : : "memory"); }

static inline void irq_enable(void) { __asm__ volatile("msr daifclr, #2" : : : "memory"); }
static inline void irq_disable(void) { __asm__ volatile("msr daifset, #2" : : : "memory"); }

/*
 * MMIO through a plain base register with no writeback, so a trapped access always has a
 * valid syndrome (ESR.ISV) for the hypervisor to emulate.
 */
static inline uint32_t mmio_read32(uintptr_t addr)
{
	uint32_t val;
	__asm__ volatile("ldr %w0, [%1]" : "=r"(val) : "r"(addr) : "memory");
	return val;
}

static inline void mmio_write32(uintptr_t addr, uint32_t val)
{
	__asm__ volatile("str %w0, [%1]" : : "r"(val), "r"(addr) : "memory");
}

/* Byte and halfword accesses, for registers the GIC allows them on (IPRIORITYR). */
static inline uint8_t mmio_read8(uintptr_t addr)
{
	uint32_t val;
	__asm__ volatile("ldrb %w0, [%1]" : "=r"(val) : "r"(addr) : "memory");
	return (uint8_t)val;
}

static inline void mmio_write8(uintptr_t addr, uint8_t val)
{
	__asm__ volatile("strb %w0, [%1]" : : "r"((uint32_t)val), "r"(addr) : "memory");
}

static inline uint16_t mmio_read16(uintptr_t addr)
{
	uint32_t val;
	__asm__ volatile("ldrh %w0, [%1]" : "=r"(val) : "r"(addr) : "memory");
	return (uint16_t)val;
}

static inline void mmio_write16(uintptr_t addr, uint16_t val)
{
	__asm__ volatile("strh %w0, [%1]" : : "r"((uint32_t)val), "r"(addr) : "memory");
}

static inline uint64_t mmio_read64(uintptr_t addr)
{
	uint64_t val;
	__asm__ volatile("ldr %0, [%1]" : "=r"(val) : "r"(addr) : "memory");
	return val;
}

static inline void mmio_write64(uintptr_t addr, uint64_t val)
{
	__asm__ volatile("str %0, [%1]" : : "r"(val), "r"(addr) : "memory");
}

/* Affinity fields only: MPIDR bit 31 is RES1 and U/MT say nothing about identity. */
static inline uint64_t mpidr_affinity(void)
{
	return read_sysreg(mpidr_el1) & 0xff00ffffffUL;
}

/* Both Tern (vCPU i = Aff0 i) and QEMU virt with up to 8 CPUs number CPUs by Aff0. */
static inline unsigned cpu_index(void)
{
	return (unsigned)(read_sysreg(mpidr_el1) & 0xff);
}

#endif
