/*
 * The supervisor-level interrupt files of the AIA's IMSIC: one per hart, found through the
 * device tree's "riscv,imsics" node whose interrupts-extended name the harts' supervisor
 * external interrupt (9). A hart's file is written by anyone (a store of an identity to
 * seteipnum_le, at offset 0: an IPI, a device's MSI) and read only by its hart, through
 * siselect/sireg and stopei.
 */
#ifndef GUEST_RISCV_IMSIC_H
#define GUEST_RISCV_IMSIC_H

#include "riscv.h"

/*
 * The identity the library wakes an idle hart with (runtime.c's cpu_start), kept apart from
 * a guest's own: the last of the 63 every file has.
 */
#define IMSIC_ID_WAKE   63

/* From the device tree; false if there is no supervisor-level IMSIC. */
bool imsic_init(void);

/* Identities 1..imsic_num_ids() exist. */
unsigned imsic_num_ids(void);

/* The guest-physical address of `hart`'s file (its seteipnum_le), 0 if unknown. */
uintptr_t imsic_file(unsigned hart);

/* This hart's file: delivery on, no threshold, every identity disabled and not pending. */
void imsic_local_init(void);

/* Nothing without a file for this hart. */
void imsic_enable(unsigned id);
void imsic_disable(unsigned id);

/* Claim the highest-priority pending and enabled identity (stopei); 0 if there is none. */
static inline uint32_t imsic_claim(void)
{
	return (uint32_t)(csr_swap(CSR_STOPEI, 0) >> 16);
}

/* Make identity `id` pending in the file at `file`: what an IPI or an MSI is. */
static inline void imsic_send(uintptr_t file, uint32_t id)
{
	mmio_write32(file, id);
}

#endif
