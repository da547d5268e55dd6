/*
 * The Xen build variant (lat-xen.img): the memory map Xen 4.17 gives an Arm domU, which is
 * not the board's. Pre-included (-include) ahead of every source; it takes lib/arm64/board.h's
 * include guard, so lib/arm64/board.h is skipped and the lib sources build unchanged.
 */
#ifndef GUEST_BOARD_H
#define GUEST_BOARD_H

#define GUEST_XEN       1

#define GICD_BASE       0x03001000UL    /* GUEST_GICV3_GICD_BASE */
#define GICR_BASE       0x03020000UL    /* GUEST_GICV3_GICR0_BASE */
#define GICR_STRIDE     0x20000UL
#define PL011_BASE      0x22000000UL    /* GUEST_PL011_BASE: vpl011, "vpl011" in the domain node */

#define MAX_CPUS        8
#define STACK_SHIFT     14              /* 16 KiB per CPU */

/* Xen's GUEST_TIMER_VIRT_PPI and GUEST_TIMER_PHYS_NS_PPI: the same INTIDs as the board. */
#define INTID_VTIMER    27
#define INTID_PTIMER    30

#endif
