/* SPDX-License-Identifier: MIT */
/* 32-bit device registers: the board's APLIC. */
#ifndef ARCH_IO_H
#define ARCH_IO_H

#include <tern/types.h>

#ifdef TERN_HOST
/* Host tests and fuzzers (tests/unit/fake/riscv64): the fake board's APLIC, which logs every write. */
uint32_t io_read32(paddr_t addr);
void io_write32(paddr_t addr, uint32_t value);
#else
static inline uint32_t io_read32(paddr_t addr)
{
	return *(volatile uint32_t *)(uintptr_t)addr;
}

static inline void io_write32(paddr_t addr, uint32_t value)
{
	*(volatile uint32_t *)(uintptr_t)addr = value;
}
#endif

#endif
