/*
 * The QEMU "virt" board as both the bare machine and a Tern partition present it:
 * a partition sees the board's own map, so these constants hold in both places.
 */
#ifndef GUEST_BOARD_H
#define GUEST_BOARD_H

#define GICD_BASE       0x08000000UL
#define GICR_BASE       0x080A0000UL
#define GICR_STRIDE     0x20000UL
#define PL011_BASE      0x09000000UL

#define MAX_CPUS        8
#define STACK_SHIFT     14              /* 16 KiB per CPU */

/* PPIs of the EL1 timers, as the arm,armv8-timer binding and Tern assign them. */
#define INTID_VTIMER    27
#define INTID_PTIMER    30

#endif
