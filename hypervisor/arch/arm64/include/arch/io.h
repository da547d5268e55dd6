/* SPDX-License-Identifier: MIT */
/* Device registers: one access of exactly the given width each (the GIC's frames). */
#ifndef ARCH_IO_H
#define ARCH_IO_H

#include <tern/types.h>

#ifdef TERN_HOST
/*
 * Host tests (tests/unit/fake/arm64): the fake GIC behind these acts on its registers as
 * the hardware would (set/clear pairs) and logs every access.
 */
void mmio_write8(uintptr_t a, uint8_t v);
uint32_t mmio_read32(uintptr_t a);
void mmio_write32(uintptr_t a, uint32_t v);
uint64_t mmio_read64(uintptr_t a);
void mmio_write64(uintptr_t a, uint64_t v);
#else
static inline void mmio_write8(uintptr_t a, uint8_t v)
{
	*(volatile uint8_t *)a = v;
}

static inline uint32_t mmio_read32(uintptr_t a)
{
	return *(volatile uint32_t *)a;
}

static inline void mmio_write32(uintptr_t a, uint32_t v)
{
	*(volatile uint32_t *)a = v;
}

static inline uint64_t mmio_read64(uintptr_t a)
{
	return *(volatile uint64_t *)a;
}

static inline void mmio_write64(uintptr_t a, uint64_t v)
{
	*(volatile uint64_t *)a = v;
}
#endif

#endif
