/*
 * An optional stage-1 MMU for the EL1&0 regime: one identity map through TTBR0_EL1, 4 KiB
 * granule, 39-bit addresses (three levels, starting at level 1).
 *
 *  - RAM (ram_base()/ram_size() from the device tree, in 2 MiB blocks, 1 GiB where a whole one
 *    fits): Normal write-back cacheable, inner shareable, executable;
 *  - 0 .. 1 GiB (the board's devices): Device-nGnRE, execute-never;
 *  - nothing else (an access there is a translation fault at EL1).
 *
 * Guests that never call mmu_init() run with the MMU off, as before. Once CPU 0 has called
 * mmu_enable(), every CPU started with cpu_start() turns its MMU on with the same tables
 * before it runs any C code (start.S), so data in RAM is cacheable and coherent on all of
 * them. Code stays built with -mstrict-align: device accesses must stay aligned anyway.
 */
#ifndef GUEST_MMU_H
#define GUEST_MMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Build the tables (CPU 0, MMU off). False if RAM is unknown or out of the map's reach. */
bool mmu_init(void);

/*
 * Map [base, base + size) (rounded out to 4 KiB pages, inside the 0 .. 1 GiB device range)
 * as Normal Non-cacheable, execute-never: accesses there are no longer checked for alignment
 * by stage 1. Before or after mmu_enable() (after: break-before-make, TLBs of every CPU
 * invalidated). False if the range is outside the device range or the table pool is used up.
 */
bool mmu_map_normal_nc(uintptr_t base, size_t size);

/* This CPU: MMU, data and instruction caches on, with the tables mmu_init() built. */
void mmu_enable(void);

/* Whether this CPU runs with its MMU on. */
bool mmu_is_on(void);

#endif
