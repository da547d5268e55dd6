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

/* The APLIC's registers (RISC-V AIA specification, chapter 4), from its base. */
#define APLIC_DOMAINCFG         0x0000
#define APLIC_DOMAINCFG_IE      (1u << 8)
#define APLIC_DOMAINCFG_DM      (1u << 2)       /* MSI delivery mode */
#define APLIC_SOURCECFG(s)      (0x0004 + 4 * ((s) - 1))
#define APLIC_SM_EDGE_RISE      4
#define APLIC_SM_LEVEL_HIGH     6
#define APLIC_SETIPNUM          0x1cdc
#define APLIC_SETIENUM          0x1edc
#define APLIC_CLRIENUM          0x1fdc
#define APLIC_GENMSI            0x3000
#define APLIC_TARGET(s)         (0x3004 + 4 * ((s) - 1))
#define APLIC_TARGET_HART_SHIFT 18
#define APLIC_IDC(hart)         (0x4000 + 32 * (hart))
#define APLIC_IDELIVERY         0x00
#define APLIC_ITHRESHOLD        0x08
#define APLIC_CLAIMI            0x1c

/* From the device tree; false if there is no APLIC that raises supervisor interrupts. */
bool aplic_init(void);

/* Whether the domain delivers by MSI (domaincfg.DM, as aplic_init read it). */
bool aplic_msi_mode(void);

/*
 * Deliver level-high `source` to `hart`: as identity `id` into its IMSIC file (MSI mode), or
 * at priority 1 through its delivery control (direct mode). The domain is turned on.
 */
void aplic_route(unsigned source, unsigned hart, unsigned id);

/* The same for a rising-edge source (one whose pending bit a write of setipnum sets). */
void aplic_route_edge(unsigned source, unsigned hart, unsigned id);

/* The source inactive again: nothing pending or enabled. */
void aplic_unroute(unsigned source);

/* Direct mode: claim `hart`'s highest-priority pending source (claimi); 0 if none. */
unsigned aplic_claim(unsigned hart);

#endif
