/*
 * The supervisor-level APLIC of the device tree ("riscv,aplic"): wired interrupts, in
 * whichever delivery mode the domain has. In MSI mode (the AIA board's, and a trap-less
 * partition's) a source is sent as an identity into a hart's IMSIC file; in direct mode (a
 * board without an IMSIC, or a trap-and-emulate partition) it raises the hart's supervisor
 * external interrupt through that hart's interrupt delivery control, where it is claimed.
 */
#ifndef GUEST_RISCV_APLIC_H
#define GUEST_RISCV_APLIC_H

#include "riscv.h"

/* From the device tree; false if there is no APLIC that raises supervisor interrupts. */
bool aplic_init(void);

/* Whether the domain delivers by MSI (domaincfg.DM, as aplic_init read it). */
bool aplic_msi_mode(void);

/*
 * Deliver level-high `source` to `hart`: as identity `id` into its IMSIC file (MSI mode), or
 * at priority 1 through its delivery control (direct mode). The domain is turned on.
 */
void aplic_route(unsigned source, unsigned hart, unsigned id);

/* The source inactive again: nothing pending or enabled. */
void aplic_unroute(unsigned source);

/* Direct mode: claim `hart`'s highest-priority pending source (claimi); 0 if none. */
unsigned aplic_claim(unsigned hart);

#endif
