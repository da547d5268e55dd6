/* SPDX-License-Identifier: MIT */
/*
 * The board's APLIC (its supervisor-level domain, MSI delivery mode) belongs to the
 * hypervisor (aplic.c); each partition that owns wired sources gets a virtual one (vaplic.c),
 * with the same registers.
 */
#ifndef ARCH_APLIC_H
#define ARCH_APLIC_H

#include <arch/io.h>
#include <tern/platform.h>
#include <tern/types.h>

/* A domain's registers up to the last core's interrupt delivery control (32 bytes each from 0x4000). */
#define APLIC_DOMAIN_SIZE(harts) (0x4000u + 32u * (harts))

/* A domain's registers (the AIA specification's APLIC), the board's and the virtual one's. */
#define DOMAINCFG        0x0000u
#define DOMAINCFG_RO1    0x80000000u   /* reads as one */
#define DOMAINCFG_IE     0x100u
#define DOMAINCFG_DM     0x4u          /* MSI delivery mode */
#define SOURCECFG        0x0004u       /* source s at SOURCECFG + 4 (s - 1) */
#define SOURCECFG_D      0x400u        /* delegated to a child domain: no children here */
#define SM_MASK          7u
#define SM_DETACHED      1u
#define SM_EDGE_RISE     4u
#define SM_LEVEL_HIGH    6u
#define SM_LEVEL_LOW     7u
#define SETIP            0x1c00u
#define SETIPNUM         0x1cdcu
#define IN_CLRIP         0x1d00u       /* reads: rectified inputs; writes: clear pending */
#define CLRIPNUM         0x1ddcu
#define SETIE            0x1e00u
#define SETIENUM         0x1edcu
#define CLRIE            0x1f00u
#define CLRIENUM         0x1fdcu
#define SETIPNUM_LE      0x2000u
#define SETIPNUM_BE      0x2004u
#define GENMSI           0x3000u
#define TARGET           0x3004u
#define TARGET_HART_SHIFT 18u
#define TARGET_HART_MASK  0x3fffu
#define TARGET_HART_FIELD 0xfffc0000u  /* TARGET_HART_MASK << TARGET_HART_SHIFT */
#define TARGET_GUEST_SHIFT 12u
#define TARGET_EIID_MASK  0x7ffu
#define TARGET_IPRIO_MASK 0xffu
#define IDC              0x4000u
#define IDC_SIZE         32u
#define IDELIVERY        0x00u
#define IFORCE           0x04u
#define ITHRESHOLD       0x08u
#define TOPI             0x18u
#define CLAIMI           0x1cu
#define APLIC_SIZE       0x8000u

/*
 * The board's registers.  Inline: the virtual APLIC reads the board's inputs on its trapped
 * paths (a level source's pending bit), where a call would cost every interrupt.
 */
static inline void aplic_write(uint32_t off, uint32_t value)
{
	io_write32(platform.arch.aplic_s_base + off, value);
}

static inline uint32_t aplic_read(uint32_t off)
{
	return io_read32(platform.arch.aplic_s_base + off);
}

/* Source s's register in the array at `base` (sourcecfg, target). */
static inline uint32_t aplic_source_reg(uint32_t base, uint32_t s)
{
	return base + 4u * (s - 1u);
}

/* The board's domain on: MSI delivery, every source inactive. */
void aplic_init(void);
/* Source s configured (source mode `sm`) and sent to `target` (aplic_target), enabled or not. */
void aplic_route(uint32_t s, uint32_t sm, uint32_t target, bool enable);
/* A target register's value: identity `eiid` into hart `pcpu`'s file `guest_file` (0: its own). */
uint32_t aplic_target(uint32_t pcpu, uint32_t guest_file, uint32_t eiid);
/* Make source s pending on the board (a level source only while its input is high). */
void aplic_set_pending(uint32_t s, bool level);
/* The console's input source arrived and was drained: send it again if the line is still high. */
void aplic_console_retrigger(void);

#endif
