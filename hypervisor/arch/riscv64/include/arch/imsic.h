/* SPDX-License-Identifier: MIT */
/* The board's IMSIC (imsic.c): each core's own S-level file and its guest files. */
#ifndef ARCH_IMSIC_H
#define ARCH_IMSIC_H

#include <tern/types.h>

/*
 * The identities of the hypervisor's own S-level file on each core: KICK_ID (imsic.c), the
 * console's input, and one per wired source a trap-and-emulate partition owns.
 */
#define EIID_CONSOLE     2u
#define EIID_WIRED_BASE  32u     /* source s arrives as EIID_WIRED_BASE + s */

/*
 * This core's S-level file: interrupts delivered; the kick's, the console's and the wired
 * sources' identities enabled.
 */
void riscv_imsic_init(void);
/* Claim this core's pending kicks (its S-level IMSIC file); whether there was one. */
bool riscv_take_kicks(void);
/* The guest interrupt files each hart has (0 without the AIA's IMSIC). */
unsigned riscv_guest_files(void);
/*
 * Hart 0's S-level IMSIC file on the board, and the stride from one hart's to the next (its
 * guest files between), written once by the boot core before any other core starts.
 */
struct riscv_imsic_harts {
	paddr_t base;
	uint64_t stride;
};
extern struct riscv_imsic_harts riscv_imsic_harts;
/* riscv_imsic_harts, for harts with `guest_files` guest files each. */
void riscv_imsic_harts_init(unsigned guest_files);
/* Hart `hart`'s S-level IMSIC file on the board; its guest files follow it. */
paddr_t riscv_imsic_hart_file(unsigned hart);

#endif
